/* tls_internal.h — what tls.c (a run's TLS client) and tls_conn.c (the transport over it)
 * share: the context and each engine's slot of it. */
#ifndef WORKER_TLS_INTERNAL_H
#define WORKER_TLS_INTERNAL_H

#include <stdbool.h>

#include <openssl/ssl.h>

#include "lc_addr.h"
#include "stats.h"
#include "tls.h"

/* One engine's share of a run's TLS, written only by that engine's thread. */
typedef struct worker_tls_slot_s {
    worker_tls_t *tls;
    SSL_SESSION *session;         /* the last session a server gave this engine */
    worker_stats_t *const *stats; /* the engine's counters of the run */
} worker_tls_slot_t;

struct worker_tls_s {
    SSL_CTX *ctx;
    BIO_METHOD *bio;        /* every connection's BIO (tls_bio.h) */
    bool h2_only;           /* "http2": true: a server that does not pick h2 fails the handshake */
    char host[LC_HOST_MAX]; /* SNI; empty for IP literals */
    worker_tls_slot_t slots[WORKER_TLS_MAX_ENGINES];
};

#endif
