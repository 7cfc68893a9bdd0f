/* tls_conn.c — the TLS transport: OpenSSL on each connection's uv stream through tls_bio.c. */
#include <assert.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "lc_err.h"
#include "tls.h"
#include "tls_bio.h"
#include "tls_internal.h"

static bool conn_open(const worker_conn_t *c)
{
    return c->state != WORKER_CONN_CLOSING && c->state != WORKER_CONN_CLOSED;
}

/* What a failed OpenSSL call means: the socket's error when a write met one. */
static int ssl_kind(const tls_conn_t *t)
{
    return t->io.write_error != 0 ? WORKER_ERR_RESET : WORKER_ERR_TLS;
}

/* Plaintext out */

/* Encrypts the rest of the request; the BIO sends it. Returns 0 or a kind. */
static int pump_out(worker_conn_t *c, tls_conn_t *t)
{
    if (t->taken)
        return worker_tls_taken_write(c, t);
    int kind = 0;
    while (t->out_off < t->out_len && !t->io.writing) {
        size_t left = t->out_len - t->out_off;
        int n = SSL_write(t->ssl, t->out + t->out_off, left > INT_MAX ? INT_MAX : (int)left);
        if (n > 0) {
            t->out_off += (size_t)n;
            continue;
        }
        int e = SSL_get_error(t->ssl, n);
        if (e == SSL_ERROR_WANT_READ)
            break; /* the peer must speak first: the next read resumes */
        if (e != SSL_ERROR_WANT_WRITE || t->io.write_error != 0)
            kind = ssl_kind(t);
        break; /* WANT_WRITE: the BIO's write in flight, whose completion resumes */
    }
    c->write_pending = t->io.writing || t->out_off < t->out_len;
    return kind;
}

/* Ciphertext in */

/* Advances the handshake. Returns 0 (done or waiting) or a kind. */
static int handshake(worker_conn_t *c, tls_conn_t *t)
{
    int n = SSL_do_handshake(t->ssl);
    if (n != 1) {
        int e = SSL_get_error(t->ssl, n);
        if (t->io.write_error != 0)
            return WORKER_ERR_RESET;
        return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ? 0 : WORKER_ERR_TLS;
    }
    t->ready = true;
    t->keys.seen.in_at_ready = t->keys.seen.in.records;
    t->keys.seen.out_at_ready = t->keys.seen.out.records;
    const unsigned char *proto;
    unsigned proto_len;
    SSL_get0_alpn_selected(t->ssl, &proto, &proto_len);
    if (proto_len == 2 && memcmp(proto, "h2", 2) == 0)
        worker_conn_use_h2(c);
    else if (t->slot->tls->h2_only)
        return WORKER_ERR_TLS; /* the server ignored ALPN: it speaks no h2 */
    worker_stats_t *s = *t->slot->stats;
    if (s != NULL) {
        if (SSL_session_reused(t->ssl))
            s->tls_resumed++;
        else
            s->tls_handshakes++;
    }
    worker_conn_ready(c); /* the owner may write at once: the BIO keeps the order */
    return 0;
}

/* Decrypts what the read brought into the second half of the engine's read buffer and
 * hands it to HTTP. Returns 0 or a kind. */
static int read_plain(worker_conn_t *c, tls_conn_t *t)
{
    char *plain = c->rbuf + c->rbuf_len;
    int cap = c->rbuf_len > INT_MAX ? INT_MAX : (int)c->rbuf_len;
    while (worker_conn_connected(c)) {
        int n = SSL_read(t->ssl, plain, cap);
        if (n > 0) {
            worker_conn_feed(c, plain, (size_t)n);
            continue;
        }
        switch (SSL_get_error(t->ssl, n)) {
        case SSL_ERROR_WANT_READ:
        case SSL_ERROR_ZERO_RETURN: /* close_notify: the TCP EOF follows */
            return 0;
        case SSL_ERROR_WANT_WRITE: /* its reply (a key update) waits for the write in flight */
            return t->io.write_error != 0 ? WORKER_ERR_RESET : 0;
        default:
            return ssl_kind(t);
        }
    }
    return 0;
}

/* OpenSSL keeps its read and write buffers (16.5 + 16.7 KiB) between records: what a busy
 * connection wants (freeing them after each read cost ~10 % more CPU per HTTPS request).
 * While it waits long (the server's handshake flight, a user's think time: tls_idle),
 * SSL_free_buffers frees them unless part of a record waits there. */
static void release_buffers(tls_conn_t *t)
{
    if (t->ssl != NULL && t->io.kept == NULL && !t->io.writing)
        (void)SSL_free_buffers(t->ssl);
}

/* Runs OpenSSL over the ciphertext on offer (tls_bio.h), keeping what it left. */
static int pump_in(worker_conn_t *c, tls_conn_t *t, const char *buf, size_t len)
{
    if (t->taken)
        return worker_tls_taken_read(c, t, buf, len);
    int rv = worker_tls_io_begin(&t->io, buf, len);
    if (rv != 0)
        return rv == LC_ETOOBIG ? WORKER_ERR_TLS : WORKER_ERR_ABORTED;
    int kind = 0;
    if (!t->ready)
        kind = handshake(c, t);
    if (kind == 0 && t->ready)
        kind = read_plain(c, t);
    /* Bytes left unread: a handshake or read waiting for our write; after close_notify,
     * or on a closing connection, nobody wants them. */
    bool keep = kind == 0 && conn_open(c) && !(SSL_get_shutdown(t->ssl) & SSL_RECEIVED_SHUTDOWN);
    if (worker_tls_io_end(&t->io, keep) != 0 && kind == 0)
        kind = WORKER_ERR_ABORTED;
    /* Still waiting for the server's handshake flight; or idle, which the owner said from
     * inside this read (the answer's callback), when OpenSSL still held the record. */
    if (kind == 0 && (!t->ready || t->idle))
        release_buffers(t);
    return kind;
}

static void tls_fail(worker_conn_t *c, tls_conn_t *t, int kind)
{
    if (kind == WORKER_ERR_TLS)
        t->failed = true;
    ERR_clear_error(); /* the thread's queue must be empty for the next SSL call */
    worker_conn_fail(c, kind);
}

/* The BIO's write in flight completed: what waited for it, a read, then the request. */
static void on_drained(worker_conn_t *c)
{
    tls_conn_t *t = c->transport_state;
    if (!conn_open(c))
        return;
    int kind = t->io.write_error != 0 ? WORKER_ERR_RESET
               : t->taken     ? worker_tls_taken_drained(c, t)
                                      : pump_in(c, t, NULL, 0);
    if (kind == 0 && conn_open(c))
        kind = pump_out(c, t);
    if (kind != 0)
        tls_fail(c, t, kind);
    else if (conn_open(c))
        worker_tls_take_over(c, t);
}

/* The transport */

static int open_ssl(tls_conn_t *t)
{
    const worker_tls_t *tls = t->slot->tls;
    BIO *bio = NULL;
    if ((t->ssl = SSL_new(tls->ctx)) == NULL || (bio = worker_tls_bio_new(tls->bio, &t->io)) == NULL)
        return -1;
    SSL_set_bio(t->ssl, bio, bio);
    SSL_set_connect_state(t->ssl);
    SSL_set_app_data(t->ssl, t);
    t->io.seen = &t->keys.seen;
    t->keep_openssl = tls->keep_openssl;
    if (!t->keep_openssl) /* a key update before the takeover keeps the records with OpenSSL */
        SSL_set_msg_callback(t->ssl, worker_tls_conn_msg);
    if (tls->host[0] != '\0' && SSL_set_tlsext_host_name(t->ssl, tls->host) != 1)
        return -1;
    if (t->slot->session != NULL && SSL_set_session(t->ssl, t->slot->session) != 1)
        return -1;
    return 0;
}

static void tls_start(worker_conn_t *c)
{
    worker_tls_slot_t *slot = c->transport_conf;
    tls_conn_t *t = slot != NULL ? worker_slab_take(&slot->conns) : NULL;
    if (t == NULL) {
        worker_conn_fail(c, WORKER_ERR_TLS);
        return;
    }
    c->transport_state = t;
    t->slot = slot;
    t->io.c = c;
    t->io.drained = on_drained;
    if (open_ssl(t) != 0) {
        tls_fail(c, t, WORKER_ERR_TLS);
        return;
    }
    int kind = handshake(c, t); /* ClientHello */
    if (kind != 0)
        tls_fail(c, t, kind);
    else
        release_buffers(t); /* while the server answers: many connect at once */
}

/* The caller's bytes are valid only during tls_write: the rest pump_out still has to
 * encrypt moves to a copy of our own. */
static int keep_rest(tls_conn_t *t)
{
    size_t rest = t->out_len - t->out_off;
    if ((t->out_rest = malloc(rest)) == NULL)
        return LC_ENOMEM;
    memcpy(t->out_rest, t->out + t->out_off, rest);
    t->out = t->out_rest;
    t->out_len = rest;
    t->out_off = 0;
    return 0;
}

/* HTTP/2 writes again before the socket took the last write: the bytes queue behind it. */
static int queue_behind(tls_conn_t *t, const char *buf, size_t len)
{
    size_t rest = t->out_len - t->out_off;
    if (t->out_off > 0)
        memmove(t->out_rest, t->out_rest + t->out_off, rest);
    t->out_len = rest;
    t->out_off = 0;
    char *more = realloc(t->out_rest, rest + len);
    if (more == NULL)
        return LC_ENOMEM;
    memcpy(more + rest, buf, len);
    t->out = t->out_rest = more;
    t->out_len = rest + len;
    t->out_off = 0;
    return 0;
}

static int tls_write(worker_conn_t *c, const char *buf, size_t len)
{
    tls_conn_t *t = c->transport_state;
    if (t == NULL || !t->ready)
        return UV_ENOTCONN;
    t->idle = false;
    if (t->out_off < t->out_len) {
        /* out is out_rest here: only keep_rest leaves bytes unsent past tls_write. */
        assert(t->out == t->out_rest);
        if (queue_behind(t, buf, len) != 0)
            tls_fail(c, t, WORKER_ERR_ABORTED);
        return 0;
    }
    free(t->out_rest); /* the previous write's, sent */
    t->out_rest = NULL;
    t->out = buf;
    t->out_len = len;
    t->out_off = 0;
    int kind = pump_out(c, t);
    if (kind == 0 && t->out_off < t->out_len && keep_rest(t) != 0)
        kind = WORKER_ERR_ABORTED;
    if (kind != 0)
        tls_fail(c, t, kind);
    return 0;
}

static void tls_read(worker_conn_t *c, const char *buf, size_t len)
{
    tls_conn_t *t = c->transport_state;
    if (t == NULL || !conn_open(c))
        return;
    int kind = pump_in(c, t, buf, len);
    if (kind == 0 && conn_open(c))
        kind = pump_out(c, t);
    if (kind != 0)
        tls_fail(c, t, kind);
    else if (conn_open(c))
        worker_tls_take_over(c, t);
}

/* Best effort, never blocking: close_notify (or the alert of a failed handshake) goes out
 * as far as the socket takes it at once (the BIO's last words). */
static void tls_close(worker_conn_t *c)
{
    tls_conn_t *t = c->transport_state;
    if (t == NULL || t->io.writing)
        return; /* a write in flight: appending would interleave */
    t->io.last_words = true;
    if (t->taken && !t->failed)
        worker_tls_taken_close(c, t);
    else if (t->ready && !t->failed)
        (void)SSL_shutdown(t->ssl);
    ERR_clear_error();
}

static void tls_reset(worker_conn_t *c)
{
    tls_conn_t *t = c->transport_state;
    if (t == NULL)
        return;
    SSL_free(t->ssl); /* and its BIO */
    worker_tls_keyed_drop(&t->wctx);
    worker_tls_keyed_drop(&t->rctx);
    OPENSSL_cleanse(&t->keys, sizeof t->keys);
    worker_tls_io_free(&t->io);
    free(t->out_rest);
    worker_slab_give(&t->slot->conns, t);
    c->transport_state = NULL;
}

static void tls_idle(worker_conn_t *c)
{
    tls_conn_t *t = c->transport_state;
    if (t != NULL && t->taken) { /* the keys stay; their contexts (~1 KiB each) go */
        worker_tls_keyed_drop(&t->wctx);
        worker_tls_keyed_drop(&t->rctx);
        return;
    }
    if (t == NULL || t->ssl == NULL)
        return;
    t->idle = true; /* also for the end of a read this comes from (pump_in) */
    release_buffers(t);
}

worker_tls_slot_t *worker_tls_conn_slot(const SSL *ssl)
{
    const tls_conn_t *t = SSL_get_app_data(ssl);
    return t != NULL ? t->slot : NULL;
}

void worker_tls_conn_keylog(const SSL *ssl, const char *line)
{
    tls_conn_t *t = SSL_get_app_data(ssl);
    if (t != NULL)
        worker_tls_seen_keylog(&t->keys.seen, line);
}

void worker_tls_conn_msg(int write_p, int version, int content_type, const void *buf,
                         size_t len, SSL *ssl, void *arg)
{
    (void)write_p, (void)version, (void)arg;
    tls_conn_t *t = SSL_get_app_data(ssl);
    if (t != NULL)
        worker_tls_seen_msg(&t->keys.seen, content_type, buf, len);
}

const worker_transport_ops_t worker_transport_tls = {
    .name = "tls",
    .start = tls_start,
    .write = tls_write,
    .read = tls_read,
    .reset = tls_reset,
    .close = tls_close,
    .idle = tls_idle,
};
