/* h2_request.h — engine thread: one of our rendered HTTP/1.1 requests (request line, headers,
 * body) as HTTP/2 header pairs for nghttp2: :method, :scheme, :authority (from Host), :path,
 * then the other headers with lowercase names, connection-specific ones dropped. */
#ifndef WORKER_H2_REQUEST_H
#define WORKER_H2_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <nghttp2/nghttp2.h>

#include "lc_buf.h"
#include "lc_scenario.h"

/* Four pseudo-headers and every header a request may carry (scenario, cookies, agent). */
#define WORKER_H2_NV_MAX (LC_SCENARIO_MAX_HEADERS + 16u)

typedef struct worker_h2_req_s {
    nghttp2_nv nv[WORKER_H2_NV_MAX]; /* names and values point into the copy */
    size_t n_nv;
    const char *body;                /* into the copy; body_len 0: no body */
    size_t body_len;
} worker_h2_req_t;

/* Translates req[0..len) ("METHOD target HTTP/1.1\r\n" headers "\r\n" body, as plan.c and
 * journey_http.c render it) into *out; copy (emptied first) receives the bytes out points
 * into, names lowercased, and must outlive out. tls picks :scheme. Returns 0, LC_ENOMEM, or
 * LC_EINVAL for bytes that are not such a request (no Host, a bare LF, too many headers). */
int worker_h2_req_translate(const char *req, size_t len, bool tls, lc_buf_t *copy,
                            worker_h2_req_t *out);

#endif
