/* tls_internal.h — what tls.c (a run's TLS client) and tls_conn.c (the transport over it)
 * share: the context and each engine's slot of it. */
#ifndef WORKER_TLS_INTERNAL_H
#define WORKER_TLS_INTERNAL_H

#include <stdbool.h>

#include <openssl/ssl.h>

#include "lc_addr.h"
#include "stats.h"
#include "tls.h"
#include "tls_bio.h"
#include "slab.h"
#include "tls_record.h"

/* A connection's TLS state comes from blocks of this many (~24 KiB). */
#define WORKER_TLS_CONNS_PER_BLOCK 64u

/* One engine's share of a run's TLS, written only by that engine's thread. */
typedef struct worker_tls_slot_s {
    worker_tls_t *tls;
    SSL_SESSION *session;         /* the last session a server gave this engine */
    worker_stats_t *const *stats; /* the engine's counters of the run */
    uint8_t *seal_buf;            /* a record being sealed: WORKER_TLS_RECORD_MAX_PLAIN + overhead */
    worker_slab_t conns;          /* the engine's tls_conn_t */
} worker_tls_slot_t;

struct worker_tls_s {
    SSL_CTX *ctx;
    BIO_METHOD *bio;        /* every connection's BIO (tls_bio.h) */
    bool h2_only;           /* "http2": true: a server that does not pick h2 fails the handshake */
    bool keep_openssl;      /* records stay with OpenSSL (LOADWORKER_TLS_OPENSSL_RECORDS=1) */
    char host[LC_HOST_MAX]; /* SNI; empty for IP literals */
    worker_tls_slot_t slots[WORKER_TLS_MAX_ENGINES];
};

/* One TCP connection's TLS state, from start to reset: OpenSSL's SSL until the records are
 * taken over (tls_taken.c), then the records' keys. */
typedef struct tls_conn_s {
    worker_tls_io_t io;  /* first: c->transport_state points at it (tls_bio.h) */
    SSL *ssl;            /* NULL once the records are taken over */
    worker_tls_slot_t *slot;
    const char *out;     /* the plaintext being written: the caller's bytes during tls_write,
                          * then out_rest */
    char *out_rest;      /* what tls_write could not encrypt at once, copied */
    size_t out_len, out_off;
    union {
        worker_tls_seen_t seen;  /* while OpenSSL runs: its records counted, TLS 1.3's secrets */
        worker_tls_record_t rec; /* once taken over: the records' keys */
    } keys;
    EVP_CIPHER_CTX *wctx, *rctx; /* taken over: keyed while busy, freed when idle */
    uint32_t skip;       /* taken over: bytes of a handshake message (a ticket) still to skip */
    uint8_t hs_hdr[4];   /* taken over: a handshake message's header, cut across records */
    uint8_t hs_have;
    bool ready;          /* handshake done */
    bool idle;           /* the owner waits long (tls_idle) and has written nothing since */
    bool failed;         /* a fatal TLS error: no close_notify */
    bool keep_openssl;   /* the records cannot be taken over: stay with OpenSSL */
    bool taken;          /* the records are taken over: keys.rec */
    bool peer_closed;    /* taken over: the server's close_notify came */
    bool key_update_owed; /* taken over: the server asked for our KeyUpdate; a write is in flight */
} tls_conn_t;

/* The records taken over from OpenSSL (tls_taken.c). */
/* Takes the records over when OpenSSL holds nothing of them (between whole records, no write
 * pending) and the suite is one of tls_record.h's; frees the SSL. */
void worker_tls_take_over(worker_conn_t *c, tls_conn_t *t);
/* Encrypts and sends the rest of the plaintext; 0 or an error kind. */
int worker_tls_taken_write(worker_conn_t *c, tls_conn_t *t);
/* Opens the records of a read and hands their data to HTTP; 0 or an error kind. */
int worker_tls_taken_read(worker_conn_t *c, tls_conn_t *t, const char *buf, size_t len);
/* The write in flight completed: a KeyUpdate owed goes first. 0 or an error kind. */
int worker_tls_taken_drained(worker_conn_t *c, tls_conn_t *t);
/* close_notify, as far as the socket takes it at once. */
void worker_tls_taken_close(worker_conn_t *c, tls_conn_t *t);

/* The engine slot of the connection ssl belongs to (tls_conn.c), or NULL. */
worker_tls_slot_t *worker_tls_conn_slot(const SSL *ssl);
/* OpenSSL's keylog callback: notes TLS 1.3's traffic secrets for tls_record.h. */
void worker_tls_conn_keylog(const SSL *ssl, const char *line);
/* OpenSSL's message callback: notes a KeyUpdate that makes those secrets stale. */
void worker_tls_conn_msg(int write_p, int version, int content_type, const void *buf,
                         size_t len, SSL *ssl, void *arg);

#endif
