/* link.h — control thread: the worker's connection to the master: connect
 * (trying every master and address, following Redirect, backing off), frames
 * in and out, and the outbox (outbox.h) of StatsBatches kept until acknowledged.
 *
 * Messages to the master are built in link_send.h. Messages from it (Challenge,
 * JoinRefused, Welcome, Redirect, Assign, Stop, StatsAck) are validated in one
 * place, link.c's dispatch() (right after on_frame() decoded them), before any
 * callback sees them; anything else closes the connection. */
#ifndef WORKER_LINK_H
#define WORKER_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "cluster.pb-c.h"
#include "lc_addr.h"
#include "lc_frame.h"
#include "lc_tls_channel.h"
#include "outbox.h"

#define WORKER_LINK_BACKOFF_MIN_MS 100u
#define WORKER_LINK_BACKOFF_MAX_MS 1000u /* between rounds of the master list */
#define WORKER_LINK_NEXT_MASTER_MS 20u   /* between masters within a round */
#define WORKER_LINK_TCP_TIMEOUT_MS 4000u /* TCP_USER_TIMEOUT: dead master or SYN unanswered */
#define WORKER_LINK_DEFAULT_INTERVAL_MS 1000u /* Welcome's heartbeat and stats intervals when 0 */

typedef struct worker_link_s worker_link_t;

/* Messages from the master, already validated (see dispatch() in link.c);
 * each pointer is valid only during the call. connected, assign, stop and
 * acked are required; the others may be NULL. */
typedef struct worker_link_cbs_s {
    /* The master's challenge arrived: send Hello now (worker_link_send_hello),
     * answering the nonce when a join secret is configured. */
    void (*connected)(void *arg, const uint8_t *nonce, size_t nonce_len);
    void (*welcome)(void *arg, const Lc__Welcome *w); /* its intervals are never 0 */
    void (*assign)(void *arg, const Lc__Assign *a);
    void (*stop)(void *arg, const Lc__Stop *s);
    void (*acked)(void *arg, uint64_t run, uint64_t seq); /* after the outbox dropped it */
    void (*disconnected)(void *arg);  /* a welcomed connection ended */
    /* A StatsBatch is lost for good (outbox overflow): its run reports it. */
    void (*lost)(void *arg, const worker_outbox_batch_t *b);
    /* The leader's rows for a FeedRequest (worker_control_feed_lease judges them). */
    void (*feed_lease)(void *arg, const Lc__FeedLease *l);
} worker_link_cbs_t;

enum worker_link_state {
    WORKER_LINK_IDLE,       /* waiting to (re)connect */
    WORKER_LINK_RESOLVING,
    WORKER_LINK_CONNECTING,
    WORKER_LINK_HELLO,      /* connected; Challenge then Welcome expected */
    WORKER_LINK_READY,      /* welcomed */
    WORKER_LINK_CLOSING,
};

struct worker_link_s {
    uv_loop_t *loop;
    char **masters;          /* host:port of every master known */
    size_t n_masters;
    size_t cur;              /* the one tried next */
    char redirect[300];      /* set by Redirect: tried next, before the list */
    unsigned redirects;      /* consecutive redirects, to stop ping-pong */
    char target[300];        /* address being connected to, for logs */
    char target_host[LC_HOST_MAX]; /* its host, which the master's certificate must name */
    SSL_CTX *tls_ctx;        /* mutual TLS with the masters; NULL: plaintext */
    lc_tls_channel_t *tls;   /* the live connection's TLS, when tls_ctx is set */
    enum worker_link_state state;
    uv_tcp_t tcp;
    uv_connect_t connect_req;
    uv_getaddrinfo_t gai;
    uv_timer_t retry_timer;
    struct addrinfo *addrs;
    struct addrinfo *next_addr;
    lc_frame_reader_t reader;
    uint32_t backoff_ms;
    uint64_t rng;
    worker_outbox_t outbox;
    uint64_t conn_seq;       /* welcomed connections so far; the live one when READY */
    const worker_link_cbs_t *cbs;
    void *arg;
    uint8_t handles;
    bool tcp_open, gai_pending, shutting_down;
    bool challenged;         /* the live connection's Challenge arrived */
    void (*closed_cb)(worker_link_t *l);
    char rbuf[64 * 1024];
};

/* Starts connecting to the comma-separated list join ("h:p,h:p"); the outbox
 * holds up to outbox_max bytes of frames; with tls_ctx (kept, not owned)
 * every connection runs mutual TLS. Returns 0 or LC_EINVAL with errmsg when
 * the list is malformed. */
int worker_link_start(worker_link_t *l, uv_loop_t *loop, const char *join, size_t outbox_max,
                      SSL_CTX *tls_ctx, const worker_link_cbs_t *cbs, void *arg, char *errmsg,
                      size_t errlen);
/* Sends one encoded frame now (connected only); the messages themselves are
 * built in link_send.h. Returns 0, LC_ECLOSED or an LC_ error. */
int worker_link_send_frame(worker_link_t *l, const uint8_t *frame, size_t len);
bool worker_link_ready(const worker_link_t *l);
/* Queues a StatsBatch frame (ownership passes); sent at once when welcomed.
 * May drop the oldest batches (cbs->lost) to stay within the bound. */
void worker_link_queue(worker_link_t *l, const worker_batch_meta_t *meta, uint8_t *frame,
                       size_t len);
size_t worker_link_outbox_len(const worker_link_t *l);
/* Closes the connection and every handle; closed_cb runs at the end. */
void worker_link_close(worker_link_t *l, void (*closed_cb)(worker_link_t *l));

#endif
