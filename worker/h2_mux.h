/* h2_mux.h — engine thread: one nghttp2 client session carrying many concurrent streams over a
 * worker_conn_t whose owner (h2_shared.c) reads its bytes: a stream per request with its own
 * status, captured body and wanted headers; how each ends (answered, refused, reset, cut by
 * the connection) is told once, through a callback. */
#ifndef WORKER_H2_MUX_H
#define WORKER_H2_MUX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http_conn.h"
#include "lc_buf.h"

typedef struct worker_h2_mux_s worker_h2_mux_t;

/* One request's stream; the caller's, linked to its session from submit to its end. */
typedef struct worker_h2_stream_s {
    struct worker_h2_stream_s *prev, *next; /* the session's streams */
    void *owner;
    lc_buf_t req;          /* the request translated (h2_request.h); its body is sent from here */
    const char *body;
    size_t body_off, body_len;
    lc_buf_t *captured;    /* the body, when capture (from the engine's pool) */
    const worker_hdr_want_t *want; /* the response headers to keep in hdrs; NULL: none */
    lc_buf_t *hdrs;        /* "name\0value\0"... of those (from the engine's pool) */
    uint64_t bytes;        /* header and DATA bytes of the answer */
    uint64_t deadline_ns;  /* uv_hrtime past which it is cancelled as a timeout */
    int32_t id;
    int status;
    int cancel_kind;       /* why we reset it (timeout, aborted), when cancelled */
    int end_kind;          /* how it ended, until that is told */
    bool capture, final_headers, peer_reset, sent, cancelled;
} worker_h2_stream_t;

typedef struct worker_h2_mux_cbs_s {
    /* The server's SETTINGS arrived (the first and any later): its concurrent-stream limit. */
    void (*settings)(worker_h2_mux_t *m, uint32_t max_streams);
    /* st ended with kind (WORKER_KIND_OK: a complete answer); it is unlinked. */
    void (*stream_end)(worker_h2_mux_t *m, worker_h2_stream_t *st, int kind);
    /* Optional: m has frames to write; the owner calls worker_h2_mux_flush before the loop
     * waits again, so that the requests submitted in one turn leave in one write. Without
     * it every submit and read writes at once. */
    void (*flush_due)(worker_h2_mux_t *m);
} worker_h2_mux_cbs_t;

/* A session on c (connected, HTTP/2 agreed); the preface and SETTINGS are written. tls: the
 * :scheme is https. *out is NULL on failure; returns 0 or a worker_err_kind. */
int worker_h2_mux_open(worker_conn_t *c, bool tls, const worker_h2_mux_cbs_t *cbs, void *data,
                       worker_bufpool_t *pool, worker_h2_mux_t **out);
/* Ends every stream still linked (sent and unanswered: kind reset; never sent: h2_refused;
 * ours cancelled: why) and frees m; nothing is written. The owner takes no new stream to m
 * from its stream_end meanwhile. */
void worker_h2_mux_close(worker_h2_mux_t *m);
void *worker_h2_mux_data(const worker_h2_mux_t *m);
/* Starts req[0..len) (our HTTP/1.1 rendering, copied) on st. Returns 0 or a worker_err_kind
 * (st is then not linked). */
int worker_h2_mux_submit(worker_h2_mux_t *m, worker_h2_stream_t *st, const char *req,
                         size_t len);
/* Writes what submits and reads left to send, in one write, and tells the ends that
 * sending made (ours reset, refusals). Returns 0 or a worker_err_kind (the owner closes). */
int worker_h2_mux_flush(worker_h2_mux_t *m);
/* Bytes from the transport. Returns 0, or a worker_err_kind when the session is unusable. */
int worker_h2_mux_feed(worker_h2_mux_t *m, const char *data, size_t len);
/* Resets st (linked) with kind as its end's kind, or timeout when st is past its deadline at
 * now_ns (worker_h2_mux_expire would have said so at its next call); it ends through
 * stream_end (at the latest when the connection closes). Returns 0, or a worker_err_kind when
 * the connection is unusable (the owner closes it). */
int worker_h2_mux_cancel(worker_h2_mux_t *m, worker_h2_stream_t *st, int kind, uint64_t now_ns);
/* Cancels as timeouts the streams whose deadline is before now_ns; returns as cancel. */
int worker_h2_mux_expire(worker_h2_mux_t *m, uint64_t now_ns);
/* Whether new streams may start: no GOAWAY either way, stream ids left. */
bool worker_h2_mux_open_for_streams(const worker_h2_mux_t *m);
/* Whether any stream is linked. */
bool worker_h2_mux_busy(const worker_h2_mux_t *m);

#endif
