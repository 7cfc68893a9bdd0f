/* tls.c — the TLS transport: OpenSSL over a BIO pair on each connection's uv stream. */
#include "tls.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "lc_addr.h"
#include "lc_err.h"
#include "lc_file.h"
#include "lc_log.h"
#include "lc_pem.h"
#include "lc_tls_channel.h"

/* Each direction of a connection's BIO pair; allocated on first use, freed
 * with the connection. Longer messages go through in several rounds. */
#define TLS_BIO_SIZE (4u * 1024u)
/* Users thinking this long hold idle connections: OpenSSL may then free their
 * record buffers between requests (an allocation per request is cheap next to
 * a second of thinking; ~34 KiB per idle connection is not). */
#define TLS_RELEASE_BUFFERS_THINK_MS 1000u
#define UNKNOWN_SSL_ERROR "unknown OpenSSL error"
/* A CA bundle in --tls-ca-dir (ca-certificates.crt is about 200 KiB). */
#define CA_FILE_MAX (1024u * 1024u)
/* What a tenant hears whenever a tls.ca_file cannot be used, so that it
 * learns nothing about which files a worker has; the worker's log says why. */
#define CA_FILE_UNAVAILABLE                                                                       \
    "tls.ca_file: not available on this worker (CA files come from its --tls-ca-dir; "        \
    "tls.ca_pem takes them inline)"

/* The operator's directory of CA files (--tls-ca-dir), opened at start; -1:
 * none. Read-only once runs are assigned. */
static int ca_dir_fd = -1;

/* One engine's share of a run's TLS, written only by that engine's thread. */
typedef struct tls_slot_s {
    worker_tls_t *tls;
    SSL_SESSION *session;         /* the last session a server gave this engine */
    worker_stats_t *const *stats; /* the engine's counters of the run */
} tls_slot_t;

struct worker_tls_s {
    SSL_CTX *ctx;
    bool h2_only;           /* "http2": true: a server that does not pick h2 fails the handshake */
    char host[LC_HOST_MAX]; /* SNI; empty for IP literals */
    tls_slot_t slots[WORKER_TLS_MAX_ENGINES];
};

/* One TCP connection's TLS state, from start to reset. */
typedef struct tls_conn_s {
    SSL *ssl;
    BIO *net;            /* our end of the pair: ciphertext in and out */
    tls_slot_t *slot;
    const char *out;     /* the request being written: the caller's bytes during tls_write,
                          * then out_rest */
    char *out_rest;      /* what tls_write could not encrypt at once, copied */
    size_t out_len, out_off;
    size_t inflight;     /* ciphertext bytes of the uv_write in flight */
    bool writing;        /* a uv_write is in flight */
    bool ready;          /* handshake done */
    bool failed;         /* a fatal TLS error: no close_notify */
} tls_conn_t;

/* ALPN offers by "http2": false, true, "auto" (the server picks by its own preference). */
static const unsigned char alpn_http11[] = "\x08http/1.1";
static const unsigned char alpn_h2[] = "\x02h2";
static const unsigned char alpn_auto[] = "\x02h2\x08http/1.1";

static bool conn_open(const worker_conn_t *c)
{
    return c->state != WORKER_CONN_CLOSING && c->state != WORKER_CONN_CLOSED;
}

/* Context */

/* A server handed out a session (TLS 1.3: a ticket, after the handshake):
 * keep it as the engine's next offer. */
static int on_new_session(SSL *ssl, SSL_SESSION *session)
{
    tls_conn_t *t = SSL_get_app_data(ssl);
    if (t == NULL)
        return 0;
    if (t->slot->session != NULL)
        SSL_SESSION_free(t->slot->session);
    t->slot->session = session;
    return 1; /* the reference is ours */
}

int worker_tls_ca_dir_set(const char *dir, char *errmsg, size_t errlen)
{
    int fd = -1;
    if (dir != NULL && (fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return lc_errf(errmsg, errlen, LC_EIO, "--tls-ca-dir %s: %s", dir, strerror(errno));
    if (ca_dir_fd >= 0)
        close(ca_dir_fd);
    ca_dir_fd = fd;
    return 0;
}

/* The file is read here, on the control thread, only because it is a regular
 * file of at most CA_FILE_MAX bytes in the operator's directory: a tenant's
 * path (a FIFO, /proc/self/fd/N) could block the loop for good. */
static int load_ca_file(X509_STORE *store, const char *name, char *errmsg, size_t errlen)
{
    char why[300], sub[160];
    char *pem = NULL;
    size_t len = 0;
    int rv = ca_dir_fd < 0 ? lc_errf(why, sizeof why, LC_EINVAL, "no --tls-ca-dir given")
                           : lc_file_read_at(ca_dir_fd, name, CA_FILE_MAX, &pem, &len, why,
                                             sizeof why);
    if (rv == 0 && (rv = lc_pem_load_certs(pem, len, store, sub, sizeof sub)) != 0)
        lc_errf(why, sizeof why, rv, "%s: %s", name, sub);
    free(pem);
    if (rv == 0)
        return 0;
    lc_warn("tls", "msg=\"tls.ca_file refused\" file=\"%s\" reason=\"%s\"", name, why);
    if (rv == LC_ENOMEM)
        return lc_errf(errmsg, errlen, rv, "tls: out of memory");
    return lc_errf(errmsg, errlen, LC_EINVAL, "%s", CA_FILE_UNAVAILABLE);
}

/* Inline certificates (checked by the master already), a file from the
 * operator's directory, or the system's. */
static int load_cas(SSL_CTX *ctx, const lc_scenario_t *sc, char *errmsg, size_t errlen)
{
    char why[160];
    if (sc->tls.ca_pem != NULL) {
        int rv = lc_pem_load_certs(sc->tls.ca_pem, strlen(sc->tls.ca_pem),
                                   SSL_CTX_get_cert_store(ctx), why, sizeof why);
        return rv == 0 ? 0 : lc_errf(errmsg, errlen, rv, "tls.ca_pem: %s", why);
    }
    if (sc->tls.ca_file != NULL)
        return load_ca_file(SSL_CTX_get_cert_store(ctx), sc->tls.ca_file, errmsg, errlen);
    if (SSL_CTX_set_default_verify_paths(ctx) == 1)
        return 0;
    return lc_errf(errmsg, errlen, LC_EINVAL, "tls: cannot load the system CA certificates: %s",
                   lc_tls_error_reason(why, sizeof why, UNKNOWN_SSL_ERROR));
}

/* Verification of the chain and of the target's name or address; every SSL
 * made from ctx inherits its parameters. */
static int setup_verify(SSL_CTX *ctx, const char *host, bool ip, bool insecure)
{
    if (insecure) {
        SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
        return 0;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    X509_VERIFY_PARAM *vp = SSL_CTX_get0_param(ctx);
    X509_VERIFY_PARAM_set_hostflags(vp, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    int ok = ip ? X509_VERIFY_PARAM_set1_ip_asc(vp, host)
                : X509_VERIFY_PARAM_set1_host(vp, host, 0);
    return ok == 1 ? 0 : LC_EINVAL;
}

static void configure(worker_tls_t *t, const lc_scenario_t *sc)
{
    /* A write OpenSSL could not finish is retried from keep_rest's copy, not the caller's
     * buffer: the same bytes at another address. */
    long mode = SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER;
    if (sc->think_min_ms >= TLS_RELEASE_BUFFERS_THINK_MS)
        mode |= SSL_MODE_RELEASE_BUFFERS;
    SSL_CTX_set_min_proto_version(t->ctx, TLS1_2_VERSION);
    SSL_CTX_set_mode(t->ctx, mode);
    /* Clients look sessions up themselves: each engine keeps its last one. */
    SSL_CTX_set_session_cache_mode(t->ctx,
                                   SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(t->ctx, on_new_session);
    for (size_t i = 0; i < WORKER_TLS_MAX_ENGINES; i++)
        t->slots[i].tls = t;
}

int worker_tls_new(worker_tls_t **out, const lc_scenario_t *sc, const char *host, char *errmsg,
                   size_t errlen)
{
    bool ip = lc_addr_is_ip_literal(host);
    worker_tls_t *t = calloc(1, sizeof *t);
    if (t == NULL || (t->ctx = SSL_CTX_new(TLS_client_method())) == NULL) {
        free(t);
        ERR_clear_error();
        return lc_errf(errmsg, errlen, LC_ENOMEM, "tls: out of memory");
    }
    if (!ip)
        snprintf(t->host, sizeof t->host, "%s", host);
    configure(t, sc);
    int rv = 0;
    const unsigned char *alpn = sc->http2 == LC_HTTP2_ON     ? alpn_h2
                                : sc->http2 == LC_HTTP2_AUTO ? alpn_auto
                                                             : alpn_http11;
    size_t alpn_len = sc->http2 == LC_HTTP2_ON     ? sizeof alpn_h2 - 1
                      : sc->http2 == LC_HTTP2_AUTO ? sizeof alpn_auto - 1
                                                   : sizeof alpn_http11 - 1;
    t->h2_only = sc->http2 == LC_HTTP2_ON;
    if (SSL_CTX_set_alpn_protos(t->ctx, alpn, (unsigned)alpn_len) != 0)
        rv = lc_errf(errmsg, errlen, LC_ENOMEM, "tls: out of memory");
    if (rv == 0)
        rv = load_cas(t->ctx, sc, errmsg, errlen);
    if (rv == 0 && setup_verify(t->ctx, host, ip, sc->tls.insecure) != 0)
        rv = lc_errf(errmsg, errlen, LC_EINVAL, "tls: cannot verify the name %s", host);
    if (rv != 0) {
        ERR_clear_error();
        worker_tls_free(t);
        return rv;
    }
    *out = t;
    return 0;
}

void worker_tls_free(worker_tls_t *t)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < WORKER_TLS_MAX_ENGINES; i++)
        SSL_SESSION_free(t->slots[i].session);
    SSL_CTX_free(t->ctx);
    free(t);
}

void worker_tls_attach(worker_conn_t *c, worker_tls_t *t, unsigned engine,
                       worker_stats_t *const *stats)
{
    c->transport = &worker_transport_tls;
    c->rbuf_len /= 2;
    if (engine < WORKER_TLS_MAX_ENGINES) {
        t->slots[engine].stats = stats;
        c->transport_conf = &t->slots[engine];
    }
}

/* Ciphertext out */

static void pump(worker_conn_t *c, tls_conn_t *t);

static void on_write(uv_write_t *req, int status)
{
    worker_conn_t *c = req->data;
    free(req);
    tls_conn_t *t = c->transport_state;
    if (t == NULL || status == UV_ECANCELED || !conn_open(c))
        return; /* closing: reset follows */
    t->writing = false;
    if (status < 0) {
        worker_conn_fail(c, WORKER_ERR_RESET);
        return;
    }
    char *p;
    BIO_nread(t->net, &p, (int)t->inflight);
    t->inflight = 0;
    pump(c, t); /* what waited for the socket: more request, or a stalled read */
}

/* Sends what OpenSSL wrote into the pair until the socket would block; the
 * rest goes by uv_write straight from the pair's buffer, which keeps those
 * bytes until on_write consumes them. Returns 0 or a worker_err_kind. */
static int flush(worker_conn_t *c, tls_conn_t *t)
{
    char *p;
    int n;
    while (!t->writing && (n = BIO_nread0(t->net, &p)) > 0) {
        uv_buf_t b = uv_buf_init(p, (unsigned)n);
        int w = uv_try_write((uv_stream_t *)&c->tcp, &b, 1);
        if (w < 0 && w != UV_EAGAIN)
            return WORKER_ERR_RESET;
        if (w > 0)
            BIO_nread(t->net, &p, w);
        if (w == n)
            continue;
        n = BIO_nread0(t->net, &p);
        if (worker_conn_write_async(c, p, (size_t)n, false, on_write) != 0)
            return WORKER_ERR_RESET;
        t->writing = true;
        t->inflight = (size_t)n;
    }
    return 0;
}

/* Encrypts the rest of the request and sends it. Returns 0 or a kind. */
static int pump_out(worker_conn_t *c, tls_conn_t *t)
{
    int kind;
    while ((kind = flush(c, t)) == 0 && !t->writing && t->out_off < t->out_len) {
        size_t left = t->out_len - t->out_off;
        int n = SSL_write(t->ssl, t->out + t->out_off, left > INT_MAX ? INT_MAX : (int)left);
        if (n > 0) {
            t->out_off += (size_t)n;
            continue;
        }
        int e = SSL_get_error(t->ssl, n);
        if (e == SSL_ERROR_WANT_READ)
            break; /* the peer must speak first: the next read resumes */
        if (e != SSL_ERROR_WANT_WRITE)
            return WORKER_ERR_TLS;
    }
    c->write_pending = t->writing || t->out_off < t->out_len;
    return kind;
}

/* Ciphertext in */

/* Advances the handshake. Returns 0 (done or waiting) or a kind. */
static int handshake(worker_conn_t *c, tls_conn_t *t)
{
    int n = SSL_do_handshake(t->ssl);
    if (n != 1) {
        int e = SSL_get_error(t->ssl, n);
        return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ? 0 : WORKER_ERR_TLS;
    }
    t->ready = true;
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
    worker_conn_ready(c); /* the owner may write at once: the pair keeps the order */
    return 0;
}

/* Decrypts what the pair holds into the second half of the engine's read
 * buffer and hands it to HTTP. Returns 0 or a kind. */
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
        case SSL_ERROR_WANT_WRITE: { /* its reply (a key update) waits for the socket */
            int kind = flush(c, t);
            if (kind != 0 || t->writing)
                return kind; /* on_write resumes */
            break;
        }
        default:
            return WORKER_ERR_TLS;
        }
    }
    return 0;
}

static int pump_in(worker_conn_t *c, tls_conn_t *t)
{
    if (!t->ready) {
        int kind = handshake(c, t);
        if (kind != 0 || !t->ready)
            return kind;
    }
    return read_plain(c, t);
}

static void tls_fail(worker_conn_t *c, tls_conn_t *t, int kind)
{
    if (kind == WORKER_ERR_TLS)
        t->failed = true;
    ERR_clear_error(); /* the thread's queue must be empty for the next SSL call */
    worker_conn_fail(c, kind);
}

static void pump(worker_conn_t *c, tls_conn_t *t)
{
    int kind = pump_in(c, t);
    if (kind == 0 && conn_open(c))
        kind = pump_out(c, t);
    if (kind != 0)
        tls_fail(c, t, kind);
}

/* The transport */

static int open_ssl(tls_conn_t *t)
{
    const worker_tls_t *tls = t->slot->tls;
    BIO *inner = NULL;
    if ((t->ssl = SSL_new(tls->ctx)) == NULL ||
        BIO_new_bio_pair(&inner, TLS_BIO_SIZE, &t->net, TLS_BIO_SIZE) != 1)
        return -1;
    SSL_set_bio(t->ssl, inner, inner);
    SSL_set_connect_state(t->ssl);
    SSL_set_app_data(t->ssl, t);
    if (tls->host[0] != '\0' && SSL_set_tlsext_host_name(t->ssl, tls->host) != 1)
        return -1;
    if (t->slot->session != NULL && SSL_set_session(t->ssl, t->slot->session) != 1)
        return -1;
    return 0;
}

static void tls_start(worker_conn_t *c)
{
    tls_slot_t *slot = c->transport_conf;
    tls_conn_t *t = slot != NULL ? calloc(1, sizeof *t) : NULL;
    if (t == NULL) {
        worker_conn_fail(c, WORKER_ERR_TLS);
        return;
    }
    c->transport_state = t;
    t->slot = slot;
    if (open_ssl(t) != 0) {
        tls_fail(c, t, WORKER_ERR_TLS);
        return;
    }
    pump(c, t); /* ClientHello */
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
    int kind = 0;
    while (t != NULL && kind == 0 && len > 0 && conn_open(c)) {
        int n = BIO_write(t->net, buf, len > INT_MAX ? INT_MAX : (int)len);
        if (n <= 0) {
            /* OpenSSL reads no more: after close_notify, ignore; else a stall. */
            if (!(SSL_get_shutdown(t->ssl) & SSL_RECEIVED_SHUTDOWN))
                kind = WORKER_ERR_TLS;
            break;
        }
        buf += n;
        len -= (size_t)n;
        kind = pump_in(c, t);
    }
    if (t != NULL && kind == 0 && conn_open(c))
        kind = pump_out(c, t);
    if (kind != 0)
        tls_fail(c, t, kind);
}

/* Best effort, never blocking: close_notify (or the alert of a failed
 * handshake) goes out with a plain non-blocking send, and MSG_NOSIGNAL keeps
 * a peer that already left from raising SIGPIPE. */
static void tls_close(worker_conn_t *c)
{
    tls_conn_t *t = c->transport_state;
    uv_os_fd_t fd;
    char *p;
    if (t == NULL || t->writing)
        return; /* a write in flight: appending would interleave */
    if (t->ready && !t->failed)
        (void)SSL_shutdown(t->ssl);
    ERR_clear_error();
    int n = BIO_nread0(t->net, &p);
    if (n > 0 && uv_fileno((uv_handle_t *)&c->tcp, &fd) == 0)
        (void)send(fd, p, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void tls_reset(worker_conn_t *c)
{
    tls_conn_t *t = c->transport_state;
    if (t == NULL)
        return;
    SSL_free(t->ssl); /* and the pair's inner end */
    BIO_free(t->net);
    free(t->out_rest);
    free(t);
    c->transport_state = NULL;
}

const worker_transport_ops_t worker_transport_tls = {
    .name = "tls",
    .start = tls_start,
    .write = tls_write,
    .read = tls_read,
    .reset = tls_reset,
    .close = tls_close,
};
