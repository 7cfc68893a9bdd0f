/* journey_http.h — engine thread: a journey user's requests: rendering (templates, cookies,
 * bodies), redirects, the response's cookies, checks and extracted values; a script's
 * requests; and the helpers the op machine lends it (its env, session, failures). */
#ifndef WORKER_JOURNEY_HTTP_H
#define WORKER_JOURNEY_HTTP_H

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"
#include "feed_stock.h"
#include "lc_json_scan.h"
#include "lc_tpl.h"
#include "lc_value.h"
#include "user.h"

/* Starts request index req of the program (connecting first when needed). */
void worker_journey_request(worker_user_t *u, uint32_t req);

/* A request a script builds (journey_lua_api.c), sent through the user's connection, cookie
 * jar and counters like a step's. */
typedef struct worker_script_req_s {
    const char *method;     /* static text */
    uint8_t origin;         /* of the scenario's origins (0: target) */
    const char *target;     /* the request target, base path included ("/api/me?x=1") */
    size_t target_len;
    const char *headers;    /* "Name: value\r\n"..., each checked by the caller */
    size_t headers_len;
    bool sets_user_agent;   /* headers has a User-Agent */
    const char *body;       /* NULL: none (nor a Content-Length) */
    size_t body_len;
    bool cookies;           /* send the user's cookies, and store those the answer sets */
} worker_script_req_t;

/* Renders sr into the engine's scratch buffer and sends it (connecting first when needed);
 * worker_journey_out and journey_lua.h's worker_lua_done take over from there. Returns 0, or
 * LC_EINVAL (a space or a control byte in the target), LC_ETOOBIG (over the 8 MiB a request
 * may take) or LC_ENOMEM: then nothing was sent. */
int worker_journey_send_script(worker_user_t *u, const worker_script_req_t *sr);
/* A script's response is in: the cookies it sets go into the user's jar, with the default
 * path of target (the request's, kept by the caller: sr->target may be gone by then), unless
 * target is NULL (the request did not take cookies). */
void worker_journey_script_answered(worker_user_t *u, const worker_conn_result_t *res,
                                    const char *target, size_t target_len);
/* A script's absolute URL of one of the scenario's origins (target or targets) as a request
 * target in *out (malloc'd) and that origin in *origin; false: another origin, or not a path. */
bool worker_journey_listed_url(worker_user_t *u, const char *url, size_t len, char **out,
                               uint8_t *origin);
/* The same for the Location of a script's redirect, which may also be relative to base (the
 * target of the request it answers, on origin *origin, which becomes the next hop's). */
bool worker_journey_script_location(worker_user_t *u, const char *base, const char *loc,
                                    size_t len, char **out, uint8_t *origin);
/* The latency to record for res (the open model's first request counts from when its
 * iteration was due). */
uint64_t worker_journey_latency(worker_user_t *u, const worker_conn_result_t *res);

#define WORKER_COOKIE_PATH_MAX 1024 /* of a request path, for cookies; longer ones are cut */

/* The path of a request target (up to '?', ' ' or its end, at most WORKER_COOKIE_PATH_MAX - 1
 * bytes) into p, NUL-terminated. */
void worker_journey_target_path(const char *target, size_t len, char p[WORKER_COOKIE_PATH_MAX]);
/* Whether u's jar would send cookie name[0..len) with a request to the URL a response
 * answered: path (NUL-terminated, '/'...) on the scenario's origin, which gives the host and
 * whether it is https; and OUT: *out its value, pointing into the jar until its next change. */
bool worker_journey_cookie(const worker_user_t *u, uint8_t origin, const char *path,
                           const char *name, size_t len, lc_value_t *out);

/* journey.c, for this module: */
void worker_journey_env(worker_user_t *u, lc_tpl_env_t *env, const char **missing);
worker_session_t *worker_journey_session(worker_user_t *u);
bool worker_journey_fail(worker_user_t *u, uint8_t on_error);
/* Takes feeder f's next row for this user (a feed step, or a script's feed()):
 * WORKER_TAKE_EXHAUSTED when the feeder is exhausted and its policy stops the user (the run
 * too, for stop_run); WORKER_TAKE_WAIT while a leased feeder waits for the leader's rows. */
enum worker_take worker_journey_take_row(worker_user_t *u, uint32_t f);

#endif
