/* response_body.h — engine thread: a response's body as a step reads it: decoded as its
 * Content-Encoding says, on first use only, into a buffer lent by the engine's pool until
 * the step is done with it. The decoded body is bounded by WORKER_BODY_CAPTURE_MAX. */
#ifndef WORKER_RESPONSE_BODY_H
#define WORKER_RESPONSE_BODY_H

#include <stdbool.h>
#include <stddef.h>

#include "body_decode.h"
#include "bufpool.h"
#include "http_conn.h"

typedef struct worker_body_s {
    /* private */
    const worker_conn_result_t *res;
    worker_bufpool_t *pool;
    lc_buf_t *decoded; /* from pool, once a coded body was decoded */
    const char *why;   /* static text, when rv != 0 */
    int rv;
    bool ready;        /* decoded (or refused) already */
} worker_body_t;

/* Starts reading res's body (res must outlive b): nothing is decoded yet. The Content-Encoding
 * is found only when the request kept that header (worker_conn_want_headers). */
void worker_body_open(worker_body_t *b, const worker_conn_result_t *res, worker_bufpool_t *pool);

/* The body, decoded: 0 with *data (NUL-terminated) and *len, valid until worker_body_close.
 * Else the body cannot be read, which is error kind parse: LC_EPROTO (an unknown or stacked
 * coding, a truncated or corrupt stream), LC_ETOOBIG (decoded, or still encoded, longer than
 * WORKER_BODY_CAPTURE_MAX: a decompression bomb is one) or LC_ENOMEM; *why says which (static
 * text). The first call decodes; later calls answer the same. Lua's r.body may call it too. */
int worker_body_decoded(worker_body_t *b, const char **data, size_t *len, const char **why);

/* The coding res's Content-Encoding names (identity when it has none). */
enum worker_coding worker_body_coding(const worker_conn_result_t *res);

/* Gives the decoded buffer back to the pool. */
void worker_body_close(worker_body_t *b);

#endif
