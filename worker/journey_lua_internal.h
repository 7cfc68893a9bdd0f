/* journey_lua_internal.h — engine thread: what journey_lua.c (the coroutines and the op) and
 * journey_lua_api.c (the functions a script calls, u.vars) share. */
#ifndef WORKER_JOURNEY_LUA_INTERNAL_H
#define WORKER_JOURNEY_LUA_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <lua.h>

#include "engine.h"
#include "http_conn.h"
#include "lc_buf.h"
#include "lc_extract.h"
#include "lc_lua_sandbox.h"
#include "user.h"

#define WORKER_LUA_SLEEP_MAX_MS 3600000u
/* feed() waits for a leased row this long at most, asking again every POLL ms (plain
 * numbers: the Lua prelude spells them). */
#define WORKER_LUA_FEED_WAIT_MS 10000
#define WORKER_LUA_FEED_POLL_MS 20

/* What a user's coroutine is waiting for. */
enum worker_lua_wait { WORKER_LUA_IDLE, WORKER_LUA_HTTP, WORKER_LUA_SLEEP };

/* How a step's function ends when the sandbox unwinds it on purpose (lc_lua_abort). */
enum worker_lua_exit {
    WORKER_LUA_EXIT_NONE,
    WORKER_LUA_EXIT_FAIL, /* fail(msg): kind script, and the iteration ends */
    WORKER_LUA_EXIT_USER, /* feed(name) found its feeder exhausted (stop_user, stop_run) */
};

/* A compiled r:json path or r:regex pattern, kept for the run on one engine. */
#define WORKER_LUA_XCACHE_MAX 64u /* more are compiled at each call and freed after it */
typedef struct worker_lua_xcache_s {
    char *src;
    size_t len;
    char kind;    /* 'j' json, 'r' regex */
    uint8_t pick; /* enum lc_pick */
    lc_extractor_t *x;
} worker_lua_xcache_t;

/* The run's sandbox on one engine (engine_run_t.lua): made by worker_lua_run_load on any
 * thread, then used by the engine thread alone once attached. */
typedef struct worker_lua_run_s {
    lc_lua_t *lua;          /* NULL: the sandbox could not be made (logged) */
    const worker_plan_t *plan; /* the run's, read-only */
    uint64_t run_id;
    worker_user_t *current; /* the user whose coroutine runs now, or NULL (between runs) */
    uint32_t errors_logged; /* script errors logged; past WORKER_LUA_ERRORS_LOGGED, counted */
    bool ran_since_collect; /* a coroutine ran since the last full collection */
    uint64_t last_run_ms;   /* loop time a coroutine last started or resumed */
    uint32_t n_cache;
    worker_lua_xcache_t cache[WORKER_LUA_XCACHE_MAX];
} worker_lua_run_t;

#define WORKER_LUA_ERRORS_LOGGED 10u

/* A scripted user (worker_journey_state_t.lua), allocated when it first reaches a lua step. */
struct worker_lua_user_s {
    lua_State *co;        /* NULL: none now (not made yet, or it died of an error) */
    int co_ref;           /* the sandbox's anchor of co */
    int u_ref;            /* registry: the user's u table, kept for its life (u.vars' own) */
    uint32_t step;        /* the lua step running */
    uint32_t endpoint;    /* the request in flight is counted here */
    uint32_t timeout_ms;  /* of the request in flight */
    uint8_t wait;         /* enum worker_lua_wait */
    uint8_t exit;         /* enum worker_lua_exit: set just before lc_lua_abort */
    bool head;            /* the request in flight is a HEAD */
    uint8_t hops;         /* redirects followed by the request in flight */
    uint8_t follow;       /* and how many it may follow */
    uint8_t origin;       /* the origin of the request in flight (of the scenario's) */
    bool hold_body;       /* it had a body (and a Content-Length), maybe empty */
    uint64_t rng;         /* math.random's state for this user (lc_lua_rng_swap) */
    /* While a request is in flight, what its answer needs from it: in hold (a buffer of the
     * engine's pool, NULL when none is held) its target, for the default path of the cookies
     * the answer sets, and when it may follow a redirect its headers and body too, to send
     * again to the Location with method (static text). */
    const char *method;
    lc_buf_t *hold;
    uint32_t hold_target, hold_headers; /* lengths; the body is the rest (see hold_body) */
};

/* journey_lua_http.c: gives u's hold buffer back to the engine's pool (none held: nothing). */
void worker_lua_unhold(worker_user_t *u);

/* journey_lua_api.c: the functions a script calls besides http.* (sleep, check, fail, feed,
 * group's private half); journey_lua_http.c: http.*. */
extern const lc_lua_host_fn_t worker_lua_host_fns[];
extern const size_t worker_lua_n_host_fns;
extern const lc_lua_host_fn_t worker_lua_http_fns[];
extern const size_t worker_lua_n_http_fns;

/* Pushes the user's (ud's) u table onto co (id, iteration and vars through its metatable),
 * made on the first call; an lc_lua_push_cb: it runs inside the coroutine's protected start,
 * so it may raise. */
int worker_lua_push_user(lua_State *co, void *ud);

/* Pushes the metatable the registry keeps under key's address, made on the first call with
 * index and newindex (NULL: none) and shown as getmetatable's answer (which also makes
 * setmetatable refuse to replace it). Inside a protected call: it may raise. */
void worker_lua_push_meta(lua_State *L, const void *key, lua_CFunction index,
                          lua_CFunction newindex, const char *shown);

/* journey_lua_response.c: */
/* A response for the script: res as worker_lua_done got it; kind its outcome. */
typedef struct worker_lua_answer_s {
    worker_user_t *u;
    const worker_conn_result_t *res;
    int kind;         /* WORKER_KIND_OK, or the error kind it was counted with */
    const char *path; /* of the URL answered (the last hop's), for r:cookie: "/..." */
    uint8_t origin;   /* and its origin */
} worker_lua_answer_t;

/* Pushes the response ({status, ok, error, latency_ms, headers}, and on demand body,
 * header(n), cookie(n), json(path), regex(re)) for ud (a worker_lua_answer_t), then gives the
 * connection's capture buffers back. */
int worker_lua_push_response(lua_State *co, void *ud);
/* The compiled paths and patterns of the run's responses. */
void worker_lua_cache_free(worker_lua_run_t *lr);

/* journey_lua_api.c: the group() of scripts, Lua so that it yields through (a private host
 * function records the group's time). */
extern const char worker_lua_prelude[];
/* Sends the next hop of u's request in flight to target (a redirect); 0, or an LC_ error
 * (nothing sent then). */
int worker_lua_send_hop(worker_user_t *u, int status, const char *target);

/* Raises "script:12: <message>" (printf's formats; the line is the script's caller's). */
int worker_lua_error(lua_State *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* journey_lua.c: the user a host function runs for (raises outside a step's function). */
worker_user_t *worker_lua_current(lua_State *L, const char *fn);
/* The sleep timer fired (its data is the user). */
void worker_lua_on_sleep(uv_timer_t *t);

#endif
