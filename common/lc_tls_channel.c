/* lc_tls_channel.c — OpenSSL over memory BIOs for the worker port. */
#include "lc_tls_channel.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include "lc_addr.h"
#include "lc_buf.h"
#include "lc_err.h"

#define CHANNEL_READ_CHUNK (16u * 1024u)

struct lc_tls_channel_s {
    SSL *ssl;
    BIO *in;  /* ciphertext from the peer, read by OpenSSL */
    BIO *out; /* ciphertext for the peer, drained to io.send */
    lc_tls_io_t io;
    lc_buf_t pending; /* plaintext written before the handshake ended */
    bool established, failed;
    char error[256];
    char peer[256];
};

int lc_tls_files_check(const lc_tls_files_t *files, char *errmsg, size_t errlen)
{
    int given = (files->cert != NULL) + (files->key != NULL) + (files->ca != NULL);
    if (given == 0)
        return LC_ENOTFOUND;
    if (given == 3)
        return 0;
    return lc_errf(errmsg, errlen, LC_EINVAL,
                   "--tls-cert, --tls-key and --tls-ca go together (mutual TLS); missing:%s%s%s",
                   files->cert ? "" : " --tls-cert", files->key ? "" : " --tls-key",
                   files->ca ? "" : " --tls-ca");
}

const char *lc_tls_error_reason(char *buf, size_t len, const char *fallback)
{
    unsigned long e = ERR_peek_last_error();
    const char *reason = e != 0 ? ERR_reason_error_string(e) : NULL;
    snprintf(buf, len, "%s", reason != NULL ? reason : fallback);
    ERR_clear_error();
    return buf;
}

static int context_fail(SSL_CTX *ctx, char *errmsg, size_t errlen, const char *what,
                        const char *path)
{
    char reason[160];
    lc_tls_error_reason(reason, sizeof reason, "unknown error");
    snprintf(errmsg, errlen, "%s %s: %s", what, path, reason);
    SSL_CTX_free(ctx);
    return LC_EINVAL;
}

/* OpenSSL says only "system lib" for a file it cannot open: say why first. */
static int check_readable(const char *flag, const char *path, char *errmsg, size_t errlen)
{
    if (access(path, R_OK) == 0)
        return 0;
    return lc_errf(errmsg, errlen, LC_EINVAL, "%s %s: %s", flag, path, strerror(errno));
}

int lc_tls_context_new(SSL_CTX **out, bool server, const lc_tls_files_t *files, char *errmsg,
                       size_t errlen)
{
    if (check_readable("--tls-cert", files->cert, errmsg, errlen) != 0 ||
        check_readable("--tls-key", files->key, errmsg, errlen) != 0 ||
        check_readable("--tls-ca", files->ca, errmsg, errlen) != 0)
        return LC_EINVAL;
    ERR_clear_error();
    SSL_CTX *ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
    if (ctx == NULL)
        return lc_errf(errmsg, errlen, LC_ENOMEM, "TLS: cannot create an OpenSSL context");
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    if (SSL_CTX_use_certificate_chain_file(ctx, files->cert) != 1)
        return context_fail(ctx, errmsg, errlen, "--tls-cert", files->cert);
    if (SSL_CTX_use_PrivateKey_file(ctx, files->key, SSL_FILETYPE_PEM) != 1)
        return context_fail(ctx, errmsg, errlen, "--tls-key", files->key);
    if (SSL_CTX_check_private_key(ctx) != 1)
        return context_fail(ctx, errmsg, errlen, "--tls-key does not match --tls-cert:",
                            files->key);
    if (SSL_CTX_load_verify_locations(ctx, files->ca, NULL) != 1)
        return context_fail(ctx, errmsg, errlen, "--tls-ca", files->ca);
    int mode = SSL_VERIFY_PEER | (server ? SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0);
    SSL_CTX_set_verify(ctx, mode, NULL);
    if (server) {
        STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(files->ca);
        if (names != NULL)
            SSL_CTX_set_client_CA_list(ctx, names);
        /* Workers reconnect often; no server-side session cache to grow. */
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    }
    *out = ctx;
    return 0;
}

/* Sends whatever OpenSSL wrote to the out BIO. */
static int drain_output(lc_tls_channel_t *ch)
{
    size_t n = (size_t)BIO_ctrl_pending(ch->out);
    if (n == 0)
        return 0;
    uint8_t *buf = malloc(n);
    if (buf == NULL)
        return LC_ENOMEM;
    int got = BIO_read(ch->out, buf, (int)n);
    if (got <= 0) {
        free(buf);
        return 0;
    }
    int rv = ch->io.send(ch->io.arg, buf, (size_t)got);
    if (rv != 0 && !ch->failed) {
        /* A lost record breaks the stream: nothing more may follow it. */
        snprintf(ch->error, sizeof ch->error, "TLS: sending to the peer failed (%s)",
                 lc_strerror(rv));
        ch->failed = true;
    }
    return rv != 0 ? LC_EIO : 0;
}

/* Records why the channel failed from OpenSSL's state after a call. */
static int channel_fail(lc_tls_channel_t *ch, const char *stage)
{
    char reason[160];
    long verify = SSL_get_verify_result(ch->ssl);
    if (verify != X509_V_OK)
        snprintf(reason, sizeof reason, "certificate verify failed: %s",
                 X509_verify_cert_error_string(verify));
    else
        lc_tls_error_reason(reason, sizeof reason, "connection broken");
    snprintf(ch->error, sizeof ch->error, "TLS %s: %s", stage, reason);
    ch->failed = true;
    ERR_clear_error(); /* the thread's next SSL call must find the queue empty */
    drain_output(ch); /* the alert tells the peer why */
    return LC_EPROTO;
}

static bool needs_more(const lc_tls_channel_t *ch, int ret)
{
    int e = SSL_get_error(ch->ssl, ret);
    return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE;
}

static void note_peer(lc_tls_channel_t *ch)
{
    X509 *cert = SSL_get0_peer_certificate(ch->ssl);
    if (cert != NULL)
        X509_NAME_oneline(X509_get_subject_name(cert), ch->peer, sizeof ch->peer);
}

bool lc_tls_channel_peer_is(const lc_tls_channel_t *ch, const char *name)
{
    X509 *cert = lc_tls_channel_established(ch) ? SSL_get0_peer_certificate(ch->ssl) : NULL;
    if (cert == NULL)
        return false;
    if (lc_addr_is_ip_literal(name))
        return X509_check_ip_asc(cert, name, 0) == 1;
    return X509_check_host(cert, name, strlen(name), X509_CHECK_FLAG_NO_WILDCARDS, NULL) == 1;
}

static int write_now(lc_tls_channel_t *ch, const uint8_t *data, size_t len)
{
    /* Memory BIOs grow, so SSL_write takes everything in one call. */
    while (len > 0) {
        int chunk = len > INT32_MAX ? INT32_MAX : (int)len;
        int ret = SSL_write(ch->ssl, data, chunk);
        if (ret <= 0)
            return channel_fail(ch, "write");
        data += ret;
        len -= (size_t)ret;
    }
    return drain_output(ch);
}

static int handshake_step(lc_tls_channel_t *ch)
{
    int ret = SSL_do_handshake(ch->ssl);
    if (ret != 1) {
        if (!needs_more(ch, ret))
            return channel_fail(ch, "handshake");
        return drain_output(ch);
    }
    ch->established = true;
    note_peer(ch);
    int rv = drain_output(ch);
    if (rv == 0 && ch->pending.len > 0)
        rv = write_now(ch, (const uint8_t *)ch->pending.data, ch->pending.len);
    lc_buf_free(&ch->pending);
    return rv;
}

int lc_tls_channel_new(lc_tls_channel_t **out, SSL_CTX *ctx, const char *peer_host,
                       const lc_tls_io_t *io)
{
    lc_tls_channel_t *ch = calloc(1, sizeof *ch);
    if (ch == NULL)
        return LC_ENOMEM;
    ch->io = *io;
    ch->ssl = SSL_new(ctx);
    ch->in = BIO_new(BIO_s_mem());
    ch->out = BIO_new(BIO_s_mem());
    if (ch->ssl == NULL || ch->in == NULL || ch->out == NULL) {
        BIO_free(ch->in);
        BIO_free(ch->out);
        SSL_free(ch->ssl);
        free(ch);
        return LC_ENOMEM;
    }
    BIO_set_mem_eof_return(ch->in, -1); /* empty means "wait", not EOF */
    SSL_set_bio(ch->ssl, ch->in, ch->out);
    *out = ch;
    if (peer_host == NULL) {
        SSL_set_accept_state(ch->ssl);
        return 0;
    }
    SSL_set_connect_state(ch->ssl);
    if (lc_addr_is_ip_literal(peer_host)) {
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ch->ssl), peer_host);
    } else {
        SSL_set_tlsext_host_name(ch->ssl, peer_host);
        SSL_set1_host(ch->ssl, peer_host);
    }
    ERR_clear_error();
    return handshake_step(ch);
}

void lc_tls_channel_free(lc_tls_channel_t *ch)
{
    if (ch == NULL)
        return;
    SSL_free(ch->ssl); /* frees both BIOs */
    lc_buf_free(&ch->pending);
    free(ch);
}

/* Hands every decrypted byte to io.receive. */
static int read_plaintext(lc_tls_channel_t *ch)
{
    uint8_t buf[CHANNEL_READ_CHUNK];
    for (;;) {
        int ret = SSL_read(ch->ssl, buf, sizeof buf);
        if (ret <= 0) {
            if (SSL_get_error(ch->ssl, ret) == SSL_ERROR_ZERO_RETURN) {
                snprintf(ch->error, sizeof ch->error, "TLS: peer closed the session");
                ch->failed = true;
                return LC_EPROTO;
            }
            if (!needs_more(ch, ret))
                return channel_fail(ch, "read");
            return drain_output(ch); /* e.g. a key update to answer */
        }
        int rv = ch->io.receive(ch->io.arg, buf, (size_t)ret);
        if (rv != 0)
            return rv;
    }
}

int lc_tls_channel_feed(lc_tls_channel_t *ch, const uint8_t *data, size_t len)
{
    if (ch->failed)
        return LC_EPROTO;
    ERR_clear_error();
    if (len > 0 && BIO_write(ch->in, data, (int)len) != (int)len) {
        snprintf(ch->error, sizeof ch->error, "TLS: out of memory buffering input");
        ch->failed = true;
        return LC_ENOMEM;
    }
    if (!ch->established) {
        int rv = handshake_step(ch);
        if (rv != 0 || !ch->established)
            return rv;
    }
    return read_plaintext(ch);
}

int lc_tls_channel_write(lc_tls_channel_t *ch, const uint8_t *data, size_t len)
{
    if (ch->failed)
        return LC_EPROTO;
    if (!ch->established)
        return lc_buf_append(&ch->pending, data, len);
    ERR_clear_error();
    return write_now(ch, data, len);
}

bool lc_tls_channel_established(const lc_tls_channel_t *ch)
{
    return ch->established;
}

const char *lc_tls_channel_error(const lc_tls_channel_t *ch)
{
    return ch->error;
}

void lc_tls_channel_set_io(lc_tls_channel_t *ch, const lc_tls_io_t *io)
{
    ch->io = *io;
}

const char *lc_tls_channel_peer(const lc_tls_channel_t *ch)
{
    return ch->peer;
}
