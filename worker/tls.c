/* tls.c — a run's TLS client: the SSL_CTX (CAs, verification, ALPN, modes), its BIO method
 * and each engine's slot; the transport over it is tls_conn.c. */
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
#include "tls_bio.h"
#include "tls_internal.h"

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

/* ALPN offers by "http2": false, true, "auto" (the server picks by its own preference). */
static const unsigned char alpn_http11[] = "\x08http/1.1";
static const unsigned char alpn_h2[] = "\x02h2";
static const unsigned char alpn_auto[] = "\x02h2\x08http/1.1";

/* Context */

/* A server handed out a session (TLS 1.3: a ticket, after the handshake):
 * keep it as the engine's next offer. */
static int on_new_session(SSL *ssl, SSL_SESSION *session)
{
    worker_tls_slot_t *slot = worker_tls_conn_slot(ssl);
    if (slot == NULL)
        return 0;
    if (slot->session != NULL)
        SSL_SESSION_free(slot->session);
    slot->session = session;
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

static void configure(worker_tls_t *t)
{
    /* A write OpenSSL could not finish is retried from tls_conn.c's copy, not the caller's
     * buffer: the same bytes at another address. Record buffers (~34 KiB) are kept while a
     * connection is busy and freed when it waits (tls_conn.c's tls_idle). */
    long mode = SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER;
    SSL_CTX_set_min_proto_version(t->ctx, TLS1_2_VERSION);
    SSL_CTX_set_mode(t->ctx, mode);
    /* Clients look sessions up themselves: each engine keeps its last one. */
    SSL_CTX_set_session_cache_mode(t->ctx,
                                   SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(t->ctx, on_new_session);
    /* TLS 1.3's traffic secrets, for taking the records over after the handshake. */
    SSL_CTX_set_keylog_callback(t->ctx, worker_tls_conn_keylog);
    const char *keep = getenv("LOADWORKER_TLS_OPENSSL_RECORDS");
    t->keep_openssl = keep != NULL && strcmp(keep, "1") == 0;
    for (size_t i = 0; i < WORKER_TLS_MAX_ENGINES; i++) {
        t->slots[i].tls = t;
        worker_slab_init(&t->slots[i].conns, sizeof(tls_conn_t), WORKER_TLS_CONNS_PER_BLOCK);
    }
}

int worker_tls_new(worker_tls_t **out, const lc_scenario_t *sc, const char *host, char *errmsg,
                   size_t errlen)
{
    bool ip = lc_addr_is_ip_literal(host);
    worker_tls_t *t = calloc(1, sizeof *t);
    if (t == NULL || (t->ctx = SSL_CTX_new(TLS_client_method())) == NULL ||
        (t->bio = worker_tls_bio_method_new()) == NULL) {
        if (t != NULL)
            SSL_CTX_free(t->ctx);
        free(t);
        ERR_clear_error();
        return lc_errf(errmsg, errlen, LC_ENOMEM, "tls: out of memory");
    }
    if (!ip)
        snprintf(t->host, sizeof t->host, "%s", host);
    configure(t);
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
    for (size_t i = 0; i < WORKER_TLS_MAX_ENGINES; i++) {
        SSL_SESSION_free(t->slots[i].session);
        free(t->slots[i].seal_buf);
        worker_slab_free(&t->slots[i].conns);
    }
    SSL_CTX_free(t->ctx);
    BIO_meth_free(t->bio);
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

