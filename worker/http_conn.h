/* http_conn.h — engine thread: one HTTP client connection; connect, write a request,
 * parse the response (HTTP/1.1 with llhttp, or HTTP/2 through h2_session.h), time it
 * out, classify what went wrong. Bytes go through a small transport interface so TLS
 * can slot in. One request at a time over either protocol: the owner sees no difference. */
#ifndef WORKER_HTTP_CONN_H
#define WORKER_HTTP_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <llhttp.h>
#include <uv.h>

#include "bufpool.h"
#include "lc_buf.h"

#define WORKER_BODY_CAPTURE_MAX (1u << 20) /* 1 MiB */
#define WORKER_HEADERS_CAPTURE_MAX (64u * 1024u)

/* Which protocol a connection speaks once its transport is up. */
enum worker_conn_proto {
    WORKER_PROTO_H1,    /* HTTP/1.1 */
    WORKER_PROTO_H2C,   /* prior-knowledge HTTP/2 over plain TCP */
    WORKER_PROTO_H2TLS, /* HTTP/2 that TLS's ALPN agreed on (for this TCP connection) */
};

typedef struct worker_conn_s worker_conn_t;

/* How a request ended. */
typedef struct worker_conn_result_s {
    int kind;            /* WORKER_KIND_OK: a complete response; else a worker_err_kind */
    int status;          /* HTTP status when complete */
    uint64_t latency_us; /* write → response complete; WORKER_NO_LATENCY otherwise */
    uint64_t sent_ns;    /* uv_hrtime of the write (through a pool: of the ask) it counts from */
    uint64_t bytes;      /* response bytes received */
    const char *body;    /* captured body (capture requests only), may be NULL */
    size_t body_len;
    const char *headers; /* captured headers: "name\0value\0"..., names in lowercase */
    size_t headers_len;
} worker_conn_result_t;

/* The response headers a request keeps (journeys), by lowercase name. */
typedef struct worker_hdr_want_s {
    const char *const *names;
    const size_t *lens; /* of each name */
    size_t n;
    bool all;           /* every header (a script's response), names ignored */
} worker_hdr_want_t;

/* want, or NULL when it wants nothing (no names, not all): headers are then not even
 * looked at. */
static inline const worker_hdr_want_t *worker_hdr_want_some(const worker_hdr_want_t *want)
{
    return want != NULL && (want->n > 0 || want->all) ? want : NULL;
}

/* A request ready to go, as worker_conn_send (or a stream of the HTTP/2 pool) takes it. */
typedef struct worker_req_out_s {
    const char *data;              /* the request rendered in HTTP/1.1 form */
    size_t len;
    bool head;                     /* the response has no body */
    bool capture;                  /* keep up to 1 MiB of the body */
    uint32_t timeout_ms;
    const worker_hdr_want_t *want; /* the response headers to keep; NULL: none */
} worker_req_out_t;

/* Keeps header name: value in *hdrs ("name\0value\0", a buffer of pool taken on first use)
 * when want names it, within WORKER_HEADERS_CAPTURE_MAX (what does not fit is dropped). */
void worker_hdrs_keep(lc_buf_t **hdrs, worker_bufpool_t *pool, const worker_hdr_want_t *want,
                      const char *name, size_t nlen, const char *value, size_t vlen);

/* What the owner (a user) hears. Every callback runs on the engine's loop,
 * never from inside a call the owner made. */
typedef struct worker_conn_cbs_s {
    void (*ready)(worker_conn_t *c);  /* connected: send a request */
    /* The request (or the connect before it) ended; the connection is then
     * idle (keep-alive) or closed. */
    void (*done)(worker_conn_t *c, const worker_conn_result_t *r);
    void (*closed)(worker_conn_t *c); /* closed with no request pending */
    void (*destroyed)(worker_conn_t *c);
    /* Optional: an owner that multiplexes HTTP/2 itself (h2_shared.c): ready() comes without
     * a session of c's, every byte read goes here, and c never sends a request of its own. */
    void (*bytes)(worker_conn_t *c, const char *data, size_t len);
} worker_conn_cbs_t;

/* Bytes between the socket and HTTP. Plain TCP passes them through; the TLS
 * transport (tls.h) runs OpenSSL here, through a BIO of its own (tls_bio.h). */
typedef struct worker_transport_ops_s {
    const char *name;
    /* TCP is up; call worker_conn_ready() once HTTP can flow. */
    void (*start)(worker_conn_t *c);
    /* Sends request bytes, which need only be valid during the call: what the transport
     * cannot hand to the socket at once it copies. 0 or a uv error. */
    int (*write)(worker_conn_t *c, const char *buf, size_t len);
    /* Bytes from the socket; hands plaintext to worker_conn_feed(). */
    void (*read)(worker_conn_t *c, const char *buf, size_t len);
    /* The TCP connection closed: drop per-connection state. */
    void (*reset)(worker_conn_t *c);
    /* Optional: the connection is about to close; last words (TLS close_notify),
     * best effort, without blocking or waiting. */
    void (*close)(worker_conn_t *c);
    /* Optional: the owner will not use the connection for a while (a think time): drop
     * what an idle connection need not hold (TLS: its record buffers). */
    void (*idle)(worker_conn_t *c);
} worker_transport_ops_t;

extern const worker_transport_ops_t worker_transport_plain;

enum worker_conn_state {
    WORKER_CONN_CLOSED,
    WORKER_CONN_CONNECTING,
    WORKER_CONN_IDLE,
    WORKER_CONN_BUSY,
    WORKER_CONN_CLOSING,
};

struct worker_conn_s {
    uv_tcp_t tcp;
    uv_timer_t timer;          /* connect, request and idle timeouts */
    llhttp_t parser;
    const worker_transport_ops_t *transport;
    void *transport_state;     /* per TCP connection, the transport's */
    void *transport_conf;      /* per owner, set with the transport (TLS: its run slot) */
    const worker_conn_cbs_t *cbs;
    void *data;                /* the owner's */
    char *rbuf;                /* the engine's read buffer */
    size_t rbuf_len;
    lc_buf_t *body;        /* captured body, allocated on first use */
    const worker_hdr_want_t *want; /* headers the request in flight keeps, or NULL */
    lc_buf_t *hdrs;        /* the kept headers (worker_conn_result_t.headers) */
    worker_bufpool_t *pool;/* where body and hdrs come from and go back to; NULL: malloc */
    size_t hdr_entry;      /* where the header being parsed starts in hdrs */
    worker_conn_result_t result; /* result delivered once the close completes */
    struct worker_h2_s *h2;    /* the HTTP/2 session of this TCP connection, or NULL */
    uint64_t start_ns;
    uint64_t bytes;
    uint32_t request_timeout_ms;
    uint32_t idle_timeout_ms;  /* an idle connection closes after this long; 0: never */
    uint8_t state;
    uint8_t handles;           /* open uv handles */
    uint8_t proto;             /* enum worker_conn_proto; H2TLS lasts one TCP connection */
    bool h2c;                  /* prior-knowledge HTTP/2 on every plain TCP connection */
    bool tcp_open, pending, destroying, write_pending, head, capture, msg_done, hdr_skip;
};

/* Closes c once it has been idle (connected, no request) for ms; 0 (the default): never. */
void worker_conn_set_idle_timeout(worker_conn_t *c, uint32_t ms);
/* Initializes c (its timer handle) on loop; rbuf is the engine's read buffer. */
int worker_conn_init(worker_conn_t *c, uv_loop_t *loop, char *rbuf, size_t rbuf_len,
                     const worker_conn_cbs_t *cbs, void *data);
/* Connects (state CLOSED); ready() or done() with a connect failure follows. */
void worker_conn_connect(worker_conn_t *c, const struct sockaddr *addr, uint32_t timeout_ms);
/* Sends one request (state IDLE); done() follows. head: the response has no
 * body; capture: keep up to 1 MiB of the body for done(). */
void worker_conn_send(worker_conn_t *c, const char *req, size_t len, bool head, bool capture,
                      uint32_t timeout_ms);
/* For the next worker_conn_send only: keep the response headers want names (want must
 * outlive the request). */
void worker_conn_want_headers(worker_conn_t *c, const worker_hdr_want_t *want);
/* worker_conn_want_headers(c, out->want), then worker_conn_send of out. */
void worker_conn_send_out(worker_conn_t *c, const worker_req_out_t *out);
/* For transports: a uv_write of buf[0..len) on c's socket, its request allocated for it (a
 * connection holds none: most writes finish at once) and, when copy, buf copied after it.
 * cb's request has data == c and is freed by cb (also when cancelled by a close). Returns 0
 * or a uv error (nothing allocated then). */
int worker_conn_write_async(worker_conn_t *c, const char *buf, size_t len, bool copy,
                            uv_write_cb cb);

/* Captured bodies and headers come from pool (the engine's) from now on. */
void worker_conn_set_pool(worker_conn_t *c, worker_bufpool_t *pool);
/* Gives the captured body and headers back (after done() has used them). */
void worker_conn_release(worker_conn_t *c);
/* The next captured header from *pos (start at 0): false at the end. */
bool worker_conn_header_next(const worker_conn_result_t *r, size_t *pos, const char **name,
                             const char **value, size_t *value_len);
/* Ends the request in flight as failed with kind, or the connect in progress. */
void worker_conn_abort(worker_conn_t *c, int kind);
/* Closes every handle without reporting anything pending; destroyed() follows. */
void worker_conn_destroy(worker_conn_t *c);
/* The owner will not use c for a while: its transport may drop idle state. */
void worker_conn_idle(worker_conn_t *c);
/* Whether the TCP connection is up (idle or busy). */
bool worker_conn_connected(const worker_conn_t *c);

/* For transports: the connection can carry HTTP now. */
void worker_conn_ready(worker_conn_t *c);
/* For transports: response bytes. */
void worker_conn_feed(worker_conn_t *c, const char *data, size_t len);
/* For transports: a failure of kind (e.g. WORKER_ERR_TLS) closes the connection. */
void worker_conn_fail(worker_conn_t *c, int kind);
/* For transports, before worker_conn_ready(): ALPN chose h2 for this TCP connection. */
void worker_conn_use_h2(worker_conn_t *c);
/* Speak prior-knowledge HTTP/2 (h2c) on c's plain TCP connections from now on. */
void worker_conn_set_h2c(worker_conn_t *c);

/* For protocol layers (h2_session.c): keep len bytes of the response body (capture
 * requests only, up to WORKER_BODY_CAPTURE_MAX). */
void worker_conn_capture_body(worker_conn_t *c, const char *at, size_t len);
/* The same for one complete header, its name already lowercase: kept when wanted. */
void worker_conn_capture_header(worker_conn_t *c, const char *name, size_t nlen,
                                const char *value, size_t vlen);

#endif
