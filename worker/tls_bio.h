/* tls_bio.h — engine thread: the BIO under each TLS connection's SSL. OpenSSL reads the
 * ciphertext of the current uv read in place and writes ciphertext straight to the socket
 * (uv_try_write; only what the socket cannot take at once is copied, into one uv_write), so
 * an idle connection holds no buffer of its own: no BIO pair. */
#ifndef WORKER_TLS_BIO_H
#define WORKER_TLS_BIO_H

#include <stdbool.h>
#include <stddef.h>

#include <openssl/bio.h>

#include "http_conn.h"
#include "tls_record.h"

/* Ciphertext a read may leave unread (its SSL waited for a write to finish): at most this
 * much is kept, and a peer that sends more before then is a TLS error. */
#define WORKER_TLS_IO_KEEP_MAX (64u * 1024u)

/* One connection's ciphertext in and out: the first member of the connection's TLS state,
 * so that c->transport_state points at it. */
typedef struct worker_tls_io_s {
    worker_conn_t *c;
    void (*drained)(worker_conn_t *c); /* the write in flight completed (status 0) */
    const char *in;   /* ciphertext OpenSSL has not read: the read's bytes, or kept */
    size_t in_len;
    char *kept;       /* what a stalled read left, copied (heap), or NULL */
    size_t kept_len;
    int write_error;  /* the uv error a socket write met; 0: none */
    bool writing;     /* a uv_write of ours is in flight: OpenSSL's writes wait */
    bool last_words;  /* closing: writes go out as far as the socket takes them at once */
    worker_tls_seen_t *seen; /* what OpenSSL reads and writes is tallied here, or NULL */
} worker_tls_io_t;

/* The method every connection's BIO uses; one per run's context. NULL: out of memory. */
BIO_METHOD *worker_tls_bio_method_new(void);
/* A BIO of method m over io (which must outlive it); NULL: out of memory. */
BIO *worker_tls_bio_new(BIO_METHOD *m, worker_tls_io_t *io);

/* Sends ciphertext: to the socket now, and what it cannot take at once in one uv_write of a
 * copy (io->writing until it completes; then io->drained). No write may be in flight.
 * Returns 0 or the uv error (also kept in io->write_error). */
int worker_tls_io_send(worker_tls_io_t *io, const void *data, size_t len);

/* Offers buf[0..len) (valid during this read only) to OpenSSL, after what an earlier read
 * left. Returns 0, LC_ENOMEM, or LC_ETOOBIG (too much kept). */
int worker_tls_io_begin(worker_tls_io_t *io, const char *buf, size_t len);
/* After OpenSSL read what it would: keeps the rest (copied) for worker_tls_io_begin, or
 * drops it when !keep (the connection is closing). Returns 0 or LC_ENOMEM. */
int worker_tls_io_end(worker_tls_io_t *io, bool keep);
/* Frees what io holds; a write in flight belongs to its request. */
void worker_tls_io_free(worker_tls_io_t *io);

#endif
