/* target_h2_stream.h — one HTTP/2 request stream of lc_target: its pseudo-headers, headers
 * and body captured within the same limits as HTTP/1.1, and its answer as an nghttp2
 * response (lowercase header names, the body pulled by nghttp2 as flow control allows). */
#ifndef LC_TARGET_H2_STREAM_H
#define LC_TARGET_H2_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nghttp2/nghttp2.h>

#include "target.h"
#include "target_app.h"

enum h2_stream_state {
    ST_READ, /* the request is arriving */
    ST_WAIT, /* planned; due at due_ns */
    ST_SENT, /* its response is submitted */
    ST_DONE, /* reset or refused: nothing more to do but wait for nghttp2 to close it */
};

typedef struct h2_stream_s {
    /* private to target_h2.c */
    struct h2_stream_s *prev, *next;
    uint64_t due_ns;
    bool tallied;    /* counted in /__stats */
    bool stop_after; /* reset (NO_ERROR) once the answer is out: the client must stop sending */
    /* read-only outside this module: what the request brought */
    int32_t id;
    uint8_t state, route;
    int method;   /* llhttp's code; -1 until :method, or unknown to llhttp */
    int reject;   /* a refusal decided while reading (400, 413, 414, 431, 503); 0 = none */
    size_t header_bytes, nheaders, url_len;
    uint64_t body_bytes;
    char *url;    /* :path, NUL-terminated */
    app_req_t *app; /* app routes only */
    resp_t r;     /* the plan (target_plan.c) */
    /* private: the answer */
    app_resp_t a; /* RESP_APP */
    bool has_a;
    char *owned;  /* a body we allocated (the stats JSON) */
    const char *body; /* NULL with body_len > 0: that many 'x' */
    size_t body_len, body_off;
} h2_stream_t;

/* One decoded request header (pseudo-headers first, nghttp2 checked their order). */
void h2_stream_header(h2_stream_t *st, const char *name, size_t nlen, const char *value,
                      size_t vlen);
/* A piece of the request body: kept for app routes, counted for the others; past the limit
 * st->reject becomes 413. */
void h2_stream_body(h2_stream_t *st, const char *data, size_t len);
/* Plans a refusal with status (an uncounted RESP_REJECT, empty body). */
void h2_stream_plan_reject(h2_stream_t *st, int status);
/* Serves a RESP_APP plan through the app into st (kept until the stream is freed).
 * Returns 0 or LC_ENOMEM. */
int h2_stream_serve_app(engine_t *e, h2_stream_t *st);
/* Submits st's planned response to s. Returns 0 or an nghttp2 / LC_ENOMEM error. */
int h2_stream_submit(engine_t *e, nghttp2_session *s, h2_stream_t *st);
/* Frees st and everything it holds. */
void h2_stream_free(h2_stream_t *st);

#endif
