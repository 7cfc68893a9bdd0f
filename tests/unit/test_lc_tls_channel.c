/* test_lc_tls_channel.c — unit tests of common/lc_tls_channel.c: a server and
 * a client channel wired back to back in memory (each one's io.send fills a
 * queue the test feeds to the other), with certificates made by the openssl
 * CLI in a temporary directory: a CA, a rogue CA, a server certificate for
 * IP:127.0.0.1 and DNS:master.test, a client certificate, and a client
 * certificate signed by the rogue CA. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "lc_err.h"
#include "lc_tls_channel.h"
#include "test_certs.h"

#define MIB (1024u * 1024u)

/* ---- Certificates, made once for the whole group (test_certs.h) ---- */

static int group_setup(void **state)
{
    (void)state;
    if (test_certs_setup() != 0)
        return -1;
    FILE *f = fopen(file_in_dir("garbage.pem"), "w");
    if (f == NULL)
        return -1;
    fputs("-----BEGIN CERTIFICATE-----\nnot base64 at all!\n-----END CERTIFICATE-----\n", f);
    fclose(f);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    return test_certs_teardown();
}

/* ---- Byte buffers and the two ends ---- */

typedef struct {
    uint8_t *data;
    size_t len, cap;
} buf_t;

static void buf_append(buf_t *b, const uint8_t *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        b->data = realloc(b->data, cap);
        assert_non_null(b->data);
        b->cap = cap;
    }
    if (n > 0)
        memcpy(b->data + b->len, p, n);
    b->len += n;
}

static void buf_free(buf_t *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

typedef struct {
    lc_tls_channel_t *ch;
    buf_t wire;  /* ciphertext sent and not yet fed to the other end */
    buf_t plain; /* plaintext received */
    int sends, receives;
    int send_rv; /* what io.send returns */
    int stop_rv; /* what io.receive returns */
} side_t;

static int on_send(void *arg, uint8_t *buf, size_t len)
{
    side_t *s = arg;
    s->sends++;
    if (s->send_rv == 0)
        buf_append(&s->wire, buf, len);
    free(buf); /* ours even when we fail */
    return s->send_rv;
}

static int on_receive(void *arg, const uint8_t *data, size_t len)
{
    side_t *s = arg;
    s->receives++;
    buf_append(&s->plain, data, len);
    return s->stop_rv;
}

static void side_free(side_t *s)
{
    lc_tls_channel_free(s->ch);
    buf_free(&s->wire);
    buf_free(&s->plain);
    memset(s, 0, sizeof *s);
}

/* Feeds what from sent to to, chunk bytes per call (0: all in one call).
 * Stops at the first non-zero return, which it returns. */
static int deliver(side_t *from, side_t *to, size_t chunk)
{
    buf_t w = from->wire;
    memset(&from->wire, 0, sizeof from->wire); /* sends during the feed go to a new queue */
    int rv = 0;
    for (size_t off = 0; off < w.len && rv == 0;) {
        size_t n = chunk == 0 || w.len - off < chunk ? w.len - off : chunk;
        rv = lc_tls_channel_feed(to->ch, w.data + off, n);
        off += n;
    }
    buf_free(&w);
    return rv;
}

/* Shuttles ciphertext both ways until both queues are empty or a feed fails;
 * *failed then names the end whose feed failed. */
static int pump(side_t *srv, side_t *cli, size_t chunk, side_t **failed)
{
    *failed = NULL;
    for (int round = 0; srv->wire.len > 0 || cli->wire.len > 0; round++) {
        assert_true(round < 1000);
        int rv = deliver(cli, srv, chunk);
        if (rv != 0) {
            *failed = srv;
            return rv;
        }
        rv = deliver(srv, cli, chunk);
        if (rv != 0) {
            *failed = cli;
            return rv;
        }
    }
    return 0;
}

typedef struct {
    side_t srv, cli;
} pair_t;

/* A server channel on sctx and a client one on cctx dialing host. */
static void pair_open(pair_t *p, SSL_CTX *sctx, SSL_CTX *cctx, const char *host)
{
    memset(p, 0, sizeof *p);
    lc_tls_io_t sio = {.arg = &p->srv, .send = on_send, .receive = on_receive};
    assert_int_equal(lc_tls_channel_new(&p->srv.ch, sctx, NULL, &sio), 0);
    assert_int_equal(p->srv.sends, 0); /* a server waits for the ClientHello */
    lc_tls_io_t cio = {.arg = &p->cli, .send = on_send, .receive = on_receive};
    assert_int_equal(lc_tls_channel_new(&p->cli.ch, cctx, host, &cio), 0);
    assert_int_equal(p->cli.sends, 1); /* the ClientHello goes out at once */
    assert_true(p->cli.wire.len > 0);
}

static void pair_free(pair_t *p)
{
    side_free(&p->srv);
    side_free(&p->cli);
}

static void assert_established(pair_t *p)
{
    assert_true(lc_tls_channel_established(p->srv.ch));
    assert_true(lc_tls_channel_established(p->cli.ch));
    assert_string_equal(lc_tls_channel_error(p->srv.ch), "");
    assert_string_equal(lc_tls_channel_error(p->cli.ch), "");
}

/* A connected pair on fresh contexts (freed here: the channels hold them). */
static void pair_connect(pair_t *p, const char *host)
{
    SSL_CTX *sctx = server_ctx(), *cctx = client_ctx();
    pair_open(p, sctx, cctx, host);
    SSL_CTX_free(sctx);
    SSL_CTX_free(cctx);
    side_t *failed;
    assert_int_equal(pump(&p->srv, &p->cli, 0, &failed), 0);
    assert_established(p);
}

static uint8_t *random_bytes(size_t n, uint64_t seed)
{
    uint8_t *p = malloc(n);
    assert_non_null(p);
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (uint8_t)(x >> 24);
    }
    return p;
}

static void assert_plain(const side_t *s, const uint8_t *want, size_t len)
{
    assert_int_equal(s->plain.len, len);
    assert_memory_equal(s->plain.data, want, len);
}

/* ---- 1. Handshake ---- */

static void test_handshake(void **state)
{
    SSL_CTX *sctx = server_ctx(), *cctx = client_ctx();
    pair_t p;
    pair_open(&p, sctx, cctx, "127.0.0.1");
    assert_false(lc_tls_channel_established(p.srv.ch));
    assert_false(lc_tls_channel_established(p.cli.ch));
    assert_string_equal(lc_tls_channel_peer(p.srv.ch), "");
    assert_string_equal(lc_tls_channel_peer(p.cli.ch), "");
    assert_string_equal(lc_tls_channel_error(p.srv.ch), "");
    side_t *failed;
    assert_int_equal(pump(&p.srv, &p.cli, 0, &failed), 0);
    assert_null(failed);
    assert_established(&p);
    assert_non_null(strstr(lc_tls_channel_peer(p.srv.ch), "CN=worker-1"));
    assert_non_null(strstr(lc_tls_channel_peer(p.cli.ch), "CN=master.test"));
    /* The handshake carried no plaintext. */
    assert_int_equal(p.srv.receives, 0);
    assert_int_equal(p.cli.receives, 0);
    pair_free(&p);
    SSL_CTX_free(sctx);
    SSL_CTX_free(cctx);
}

/* Ciphertext cut anywhere: every record arrives a byte at a time. */
static void test_handshake_byte_by_byte(void **state)
{
    SSL_CTX *sctx = server_ctx(), *cctx = client_ctx();
    pair_t p;
    pair_open(&p, sctx, cctx, "master.test");
    SSL_CTX_free(sctx);
    SSL_CTX_free(cctx);
    static const char msg[] = "challenge across one-byte feeds";
    assert_int_equal(lc_tls_channel_write(p.srv.ch, (const uint8_t *)msg, sizeof msg), 0);
    side_t *failed;
    assert_int_equal(pump(&p.srv, &p.cli, 1, &failed), 0);
    assert_established(&p);
    assert_plain(&p.cli, (const uint8_t *)msg, sizeof msg);
    pair_free(&p);
}

/* TLS 1.2 (the contexts' floor) works as well. */
static void test_handshake_tls12(void **state)
{
    SSL_CTX *sctx = server_ctx(), *cctx = client_ctx();
    assert_int_equal(SSL_CTX_set_max_proto_version(sctx, TLS1_2_VERSION), 1);
    pair_t p;
    pair_open(&p, sctx, cctx, "127.0.0.1");
    SSL_CTX_free(sctx);
    SSL_CTX_free(cctx);
    static const char ask[] = "challenge", answer[] = "hello";
    assert_int_equal(lc_tls_channel_write(p.srv.ch, (const uint8_t *)ask, sizeof ask), 0);
    assert_int_equal(lc_tls_channel_write(p.cli.ch, (const uint8_t *)answer, sizeof answer), 0);
    side_t *failed;
    assert_int_equal(pump(&p.srv, &p.cli, 0, &failed), 0);
    assert_established(&p);
    assert_non_null(strstr(lc_tls_channel_peer(p.srv.ch), "CN=worker-1"));
    assert_non_null(strstr(lc_tls_channel_peer(p.cli.ch), "CN=master.test"));
    assert_plain(&p.cli, (const uint8_t *)ask, sizeof ask);
    assert_plain(&p.srv, (const uint8_t *)answer, sizeof answer);
    pair_free(&p);
}

/* ---- 2. Data ---- */

static void test_queued_before_handshake(void **state)
{
    SSL_CTX *sctx = server_ctx(), *cctx = client_ctx();
    pair_t p;
    pair_open(&p, sctx, cctx, "127.0.0.1");
    SSL_CTX_free(sctx);
    SSL_CTX_free(cctx);
    static const char ask[] = "Challenge: nonce 0123456789abcdef";
    static const char answer[] = "Hello from worker-1";
    /* Nothing is encrypted before the handshake: the writes are queued. */
    int cli_sends = p.cli.sends;
    assert_int_equal(lc_tls_channel_write(p.srv.ch, (const uint8_t *)ask, 10), 0);
    assert_int_equal(lc_tls_channel_write(p.srv.ch, (const uint8_t *)ask + 10, sizeof ask - 10),
                     0);
    assert_int_equal(lc_tls_channel_write(p.cli.ch, (const uint8_t *)answer, sizeof answer), 0);
    assert_int_equal(p.srv.sends, 0);
    assert_int_equal(p.cli.sends, cli_sends);
    side_t *failed;
    assert_int_equal(pump(&p.srv, &p.cli, 0, &failed), 0);
    assert_established(&p);
    assert_plain(&p.cli, (const uint8_t *)ask, sizeof ask);
    assert_plain(&p.srv, (const uint8_t *)answer, sizeof answer);
    pair_free(&p);
}

/* A megabyte queued in small writes before the handshake (the queue grows). */
static void test_large_queued_before_handshake(void **state)
{
    SSL_CTX *sctx = server_ctx(), *cctx = client_ctx();
    pair_t p;
    pair_open(&p, sctx, cctx, "127.0.0.1");
    SSL_CTX_free(sctx);
    SSL_CTX_free(cctx);
    uint8_t *data = random_bytes(MIB, 7);
    for (size_t off = 0, n = 1; off < MIB; off += n, n = n % 5000 + 777) {
        if (n > MIB - off)
            n = MIB - off;
        assert_int_equal(lc_tls_channel_write(p.srv.ch, data + off, n), 0);
    }
    assert_int_equal(p.srv.sends, 0);
    side_t *failed;
    assert_int_equal(pump(&p.srv, &p.cli, 0, &failed), 0);
    assert_established(&p);
    assert_plain(&p.cli, data, MIB);
    assert_int_equal(p.srv.plain.len, 0);
    free(data);
    pair_free(&p);
}

static void test_large_one_call(void **state)
{
    pair_t p;
    pair_connect(&p, "127.0.0.1");
    uint8_t *down = random_bytes(MIB, 1), *up = random_bytes(MIB, 2);
    assert_int_equal(lc_tls_channel_write(p.srv.ch, down, MIB), 0);
    assert_int_equal(lc_tls_channel_write(p.cli.ch, up, MIB), 0);
    side_t *failed;
    assert_int_equal(pump(&p.srv, &p.cli, 0, &failed), 0);
    assert_plain(&p.cli, down, MIB);
    assert_plain(&p.srv, up, MIB);
    assert_true(p.cli.receives > 1); /* more than one record's worth */
    free(down);
    free(up);
    pair_free(&p);
}

static void test_large_many_calls(void **state)
{
    pair_t p;
    pair_connect(&p, "master.test");
    uint8_t *down = random_bytes(MIB, 3), *up = random_bytes(MIB, 4);
    size_t n = 1;
    for (size_t off = 0; off < MIB; off += n, n = n * 3 % 4099 + 1) {
        if (n > MIB - off)
            n = MIB - off;
        assert_int_equal(lc_tls_channel_write(p.srv.ch, down + off, n), 0);
        assert_int_equal(lc_tls_channel_write(p.cli.ch, up + off, n), 0);
        /* Deliver now and then, so reads and writes interleave. */
        if (off % 7 == 0) {
            side_t *failed;
            assert_int_equal(pump(&p.srv, &p.cli, 0, &failed), 0);
        }
    }
    side_t *failed;
    /* The last deliveries in odd-sized pieces: records split across feeds. */
    assert_int_equal(pump(&p.srv, &p.cli, 1000, &failed), 0);
    assert_plain(&p.cli, down, MIB);
    assert_plain(&p.srv, up, MIB);
    /* A zero-length write is a no-op. */
    assert_int_equal(lc_tls_channel_write(p.srv.ch, down, 0), 0);
    assert_int_equal(pump(&p.srv, &p.cli, 0, &failed), 0);
    assert_int_equal(p.cli.plain.len, MIB);
    free(down);
    free(up);
    pair_free(&p);
}

/* ---- 3. The server's name ---- */

/* Connects a client dialing host; returns the client's first failing feed
 * (0 when the handshake completed) and copies its error. */
static int dial(const char *host, char *err, size_t errlen, int *server_rv)
{
    SSL_CTX *sctx = server_ctx(), *cctx = client_ctx();
    pair_t p;
    pair_open(&p, sctx, cctx, host);
    SSL_CTX_free(sctx);
    SSL_CTX_free(cctx);
    side_t *failed;
    int rv = pump(&p.srv, &p.cli, 0, &failed);
    *server_rv = 0;
    snprintf(err, errlen, "%s", lc_tls_channel_error(p.cli.ch));
    if (rv == 0) {
        assert_established(&p);
    } else {
        assert_ptr_equal(failed, &p.cli);
        assert_false(lc_tls_channel_established(p.cli.ch));
        assert_string_equal(lc_tls_channel_peer(p.cli.ch), "");
        /* The client's alert makes the server give up too. */
        assert_true(p.cli.wire.len > 0);
        *server_rv = deliver(&p.cli, &p.srv, 0);
        assert_false(lc_tls_channel_established(p.srv.ch));
        if (*server_rv != 0)
            assert_non_null(strstr(lc_tls_channel_error(p.srv.ch), "alert"));
    }
    pair_free(&p);
    return rv;
}

static void test_verify_host(void **state)
{
    char err[256];
    int srv_rv;
    assert_int_equal(dial("127.0.0.1", err, sizeof err, &srv_rv), 0);
    assert_int_equal(dial("master.test", err, sizeof err, &srv_rv), 0);

    assert_int_equal(dial("other.test", err, sizeof err, &srv_rv), LC_EPROTO);
    assert_non_null(strstr(err, "certificate verify failed"));
    assert_non_null(strstr(err, "hostname mismatch"));
    assert_int_equal(srv_rv, LC_EPROTO);

    /* An address the certificate does not name. */
    assert_int_equal(dial("127.0.0.2", err, sizeof err, &srv_rv), LC_EPROTO);
    assert_non_null(strstr(err, "certificate verify failed"));
    assert_non_null(strstr(err, "IP address mismatch"));
    assert_int_equal(srv_rv, LC_EPROTO);
}

/* The names a verified peer's certificate holds: DNS and IP subjectAltNames
 * (an IP literal matches only an IP one), the CN when there is no SAN. */
static void test_peer_is(void **state)
{
    (void)state;
    pair_t p;
    pair_connect(&p, "127.0.0.1");
    assert_true(lc_tls_channel_peer_is(p.cli.ch, "127.0.0.1"));
    assert_true(lc_tls_channel_peer_is(p.cli.ch, "master.test"));
    assert_false(lc_tls_channel_peer_is(p.cli.ch, "127.0.0.2"));
    assert_false(lc_tls_channel_peer_is(p.cli.ch, "other.test"));
    assert_false(lc_tls_channel_peer_is(p.cli.ch, "::1"));
    assert_true(lc_tls_channel_peer_is(p.srv.ch, "worker-1")); /* the CN: no SAN */
    assert_false(lc_tls_channel_peer_is(p.srv.ch, "127.0.0.1"));
    pair_free(&p);
}

/* A connection handed to a new owner: plaintext and ciphertext go to the
 * new callbacks, none to the old. */
static void test_set_io(void **state)
{
    (void)state;
    pair_t p;
    pair_connect(&p, "127.0.0.1");
    side_t heir = {.ch = p.srv.ch};
    lc_tls_channel_set_io(p.srv.ch, &(lc_tls_io_t){.arg = &heir, .send = on_send,
                                                   .receive = on_receive});
    assert_int_equal(lc_tls_channel_write(p.cli.ch, (const uint8_t *)"ping", 4), 0);
    assert_int_equal(deliver(&p.cli, &heir, 0), 0);
    assert_plain(&heir, (const uint8_t *)"ping", 4);
    assert_int_equal(p.srv.plain.len, 0);
    assert_int_equal(lc_tls_channel_write(p.srv.ch, (const uint8_t *)"pong", 4), 0);
    assert_true(heir.wire.len > 0);
    assert_int_equal(p.srv.wire.len, 0);
    assert_int_equal(deliver(&heir, &p.cli, 0), 0);
    assert_plain(&p.cli, (const uint8_t *)"pong", 4);
    buf_free(&heir.wire);
    buf_free(&heir.plain);
    pair_free(&p);
}

/* ---- 4. Certificates from another CA ---- */

static void test_rogue_client_cert(void **state)
{
    for (int tls12 = 0; tls12 <= 1; tls12++) {
        SSL_CTX *sctx = server_ctx();
        SSL_CTX *cctx = ctx_from(false, "rogue-client.pem", "rogue-client.key", "ca.pem");
        if (tls12)
            assert_int_equal(SSL_CTX_set_max_proto_version(sctx, TLS1_2_VERSION), 1);
        pair_t p;
        pair_open(&p, sctx, cctx, "127.0.0.1");
        SSL_CTX_free(sctx);
        SSL_CTX_free(cctx);
        static const char ask[] = "challenge";
        assert_int_equal(lc_tls_channel_write(p.srv.ch, (const uint8_t *)ask, sizeof ask), 0);
        side_t *failed;
        assert_int_equal(pump(&p.srv, &p.cli, 0, &failed), LC_EPROTO);
        assert_ptr_equal(failed, &p.srv);
        const char *err = lc_tls_channel_error(p.srv.ch);
        assert_non_null(strstr(err, "certificate verify failed"));
        assert_false(lc_tls_channel_established(p.srv.ch));
        assert_string_equal(lc_tls_channel_peer(p.srv.ch), "");
        assert_int_equal(p.cli.plain.len, 0); /* the queued challenge never left */
        /* The server's alert fails the client. */
        assert_true(p.srv.wire.len > 0);
        assert_int_equal(deliver(&p.srv, &p.cli, 0), LC_EPROTO);
        assert_non_null(strstr(lc_tls_channel_error(p.cli.ch), "alert"));
        /* Failed channels stay failed. */
        assert_int_equal(lc_tls_channel_feed(p.srv.ch, (const uint8_t *)"x", 1), LC_EPROTO);
        assert_int_equal(lc_tls_channel_write(p.cli.ch, (const uint8_t *)"x", 1), LC_EPROTO);
        pair_free(&p);
    }
}

/* The other way round: a server whose certificate the client's CA did not sign. */
static void test_rogue_server_cert(void **state)
{
    SSL_CTX *sctx = ctx_from(true, "rogue-client.pem", "rogue-client.key", "ca.pem");
    SSL_CTX *cctx = client_ctx();
    pair_t p;
    pair_open(&p, sctx, cctx, "127.0.0.1");
    SSL_CTX_free(sctx);
    SSL_CTX_free(cctx);
    side_t *failed;
    assert_int_equal(pump(&p.srv, &p.cli, 0, &failed), LC_EPROTO);
    assert_ptr_equal(failed, &p.cli);
    assert_non_null(strstr(lc_tls_channel_error(p.cli.ch), "certificate verify failed"));
    assert_false(lc_tls_channel_established(p.cli.ch));
    assert_int_equal(deliver(&p.cli, &p.srv, 0), LC_EPROTO);
    assert_non_null(strstr(lc_tls_channel_error(p.srv.ch), "alert"));
    pair_free(&p);
}

/* ---- 5. A client with no certificate ---- */

static void test_client_without_cert(void **state)
{
    SSL_CTX *sctx = server_ctx();
    SSL_CTX *cctx = SSL_CTX_new(TLS_client_method());
    assert_non_null(cctx);
    assert_int_equal(SSL_CTX_load_verify_locations(cctx, file_in_dir("ca.pem"), NULL), 1);
    SSL_CTX_set_verify(cctx, SSL_VERIFY_PEER, NULL);
    pair_t p;
    pair_open(&p, sctx, cctx, "master.test");
    SSL_CTX_free(sctx);
    SSL_CTX_free(cctx);
    side_t *failed;
    assert_int_equal(pump(&p.srv, &p.cli, 0, &failed), LC_EPROTO);
    assert_ptr_equal(failed, &p.srv);
    const char *err = lc_tls_channel_error(p.srv.ch);
    assert_true(err[0] != '\0');
    assert_non_null(strstr(err, "certificate"));
    assert_false(lc_tls_channel_established(p.srv.ch));
    assert_int_equal(deliver(&p.srv, &p.cli, 0), LC_EPROTO);
    assert_non_null(strstr(lc_tls_channel_error(p.cli.ch), "alert"));
    pair_free(&p);
}

/* ---- 6. Garbage ---- */

static void assert_garbage_refused(const uint8_t *junk, size_t len)
{
    SSL_CTX *sctx = server_ctx();
    side_t s;
    memset(&s, 0, sizeof s);
    lc_tls_io_t io = {.arg = &s, .send = on_send, .receive = on_receive};
    assert_int_equal(lc_tls_channel_new(&s.ch, sctx, NULL, &io), 0);
    SSL_CTX_free(sctx);
    assert_int_equal(lc_tls_channel_feed(s.ch, junk, len), LC_EPROTO);
    char first[256];
    snprintf(first, sizeof first, "%s", lc_tls_channel_error(s.ch));
    assert_true(first[0] != '\0');
    assert_non_null(strstr(first, "TLS"));
    assert_false(lc_tls_channel_established(s.ch));
    assert_int_equal(s.receives, 0);
    /* Once failed, always failed, and the first reason stays. */
    assert_int_equal(lc_tls_channel_feed(s.ch, junk, len), LC_EPROTO);
    assert_int_equal(lc_tls_channel_feed(s.ch, NULL, 0), LC_EPROTO);
    assert_int_equal(lc_tls_channel_write(s.ch, (const uint8_t *)"hi", 2), LC_EPROTO);
    assert_string_equal(lc_tls_channel_error(s.ch), first);
    side_free(&s);
}

static void test_garbage(void **state)
{
    uint8_t *junk = random_bytes(4096, 99);
    junk[0] = 0x16; /* a handshake record... */
    junk[1] = 0x03;
    junk[2] = 0x01;
    junk[3] = 0x00; /* ...of 200 bytes of noise */
    junk[4] = 200;
    assert_garbage_refused(junk, 4096);
    assert_garbage_refused(junk + 1, 4095);
    free(junk);
    static const char http[] = "GET / HTTP/1.1\r\nHost: master.test\r\n\r\n";
    assert_garbage_refused((const uint8_t *)http, sizeof http - 1);
}

/* ---- 7. Flags ---- */

static void test_files_check(void **state)
{
    char err[256] = "";
    lc_tls_files_t none = {0};
    assert_int_equal(lc_tls_files_check(&none, err, sizeof err), LC_ENOTFOUND);
    lc_tls_files_t all = {.cert = "c.pem", .key = "k.pem", .ca = "ca.pem"};
    assert_int_equal(lc_tls_files_check(&all, err, sizeof err), 0);

    lc_tls_files_t cert_only = {.cert = "c.pem"};
    assert_int_equal(lc_tls_files_check(&cert_only, err, sizeof err), LC_EINVAL);
    assert_non_null(strstr(err, "missing: --tls-key --tls-ca"));

    lc_tls_files_t no_ca = {.cert = "c.pem", .key = "k.pem"};
    assert_int_equal(lc_tls_files_check(&no_ca, err, sizeof err), LC_EINVAL);
    assert_non_null(strstr(err, "missing: --tls-ca"));
    assert_null(strstr(err, "missing: --tls-cert"));
    assert_null(strstr(err, " --tls-key --"));

    lc_tls_files_t ca_only = {.ca = "ca.pem"};
    assert_int_equal(lc_tls_files_check(&ca_only, err, sizeof err), LC_EINVAL);
    assert_non_null(strstr(err, "missing: --tls-cert --tls-key"));
    assert_null(strstr(err, "--tls-key --tls-ca"));
}

/* ---- 8. Files OpenSSL cannot use ---- */

static int context_error(bool server, const char *cert, const char *key, const char *ca, char *err,
                         size_t errlen)
{
    lc_tls_files_t files = {.cert = file_in_dir(cert), .key = file_in_dir(key),
                            .ca = file_in_dir(ca)};
    SSL_CTX *ctx = NULL;
    err[0] = '\0';
    int rv = lc_tls_context_new(&ctx, server, &files, err, errlen);
    assert_null(ctx);
    return rv;
}

static void test_context_errors(void **state)
{
    char err[256];
    for (int server = 0; server <= 1; server++) {
        assert_int_equal(
            context_error(server, "missing.pem", "server.key", "ca.pem", err, sizeof err),
            LC_EINVAL);
        assert_non_null(strstr(err, "--tls-cert"));
        assert_non_null(strstr(err, "missing.pem"));
        assert_non_null(strstr(err, "No such file"));

        assert_int_equal(
            context_error(server, "server.pem", "missing.key", "ca.pem", err, sizeof err),
            LC_EINVAL);
        assert_non_null(strstr(err, "--tls-key"));
        assert_non_null(strstr(err, "No such file"));

        assert_int_equal(
            context_error(server, "server.pem", "server.key", "missing-ca.pem", err, sizeof err),
            LC_EINVAL);
        assert_non_null(strstr(err, "--tls-ca"));
        assert_non_null(strstr(err, "No such file"));

        /* A key that is not the certificate's. */
        assert_int_equal(
            context_error(server, "server.pem", "client.key", "ca.pem", err, sizeof err),
            LC_EINVAL);
        assert_non_null(strstr(err, "--tls-key"));
        assert_non_null(strstr(err, "client.key"));

        /* Files that are there but are no PEM certificates. */
        assert_int_equal(
            context_error(server, "garbage.pem", "server.key", "ca.pem", err, sizeof err),
            LC_EINVAL);
        assert_non_null(strstr(err, "--tls-cert"));
        assert_int_equal(
            context_error(server, "server.pem", "server.key", "garbage.pem", err, sizeof err),
            LC_EINVAL);
        assert_non_null(strstr(err, "--tls-ca"));
        assert_int_equal(
            context_error(server, "server.pem", "garbage.pem", "ca.pem", err, sizeof err),
            LC_EINVAL);
        assert_non_null(strstr(err, "--tls-key"));
    }
    /* The errors left nothing in OpenSSL's queue to confuse the next call. */
    assert_int_equal(ERR_peek_error(), 0);
}

/* ---- 9. receive stops the feed ---- */

static void test_receive_stops_feed(void **state)
{
    pair_t p;
    pair_connect(&p, "127.0.0.1");
    size_t len = 100 * 1024; /* several records */
    uint8_t *data = random_bytes(len, 5);
    assert_int_equal(lc_tls_channel_write(p.srv.ch, data, len), 0);
    p.cli.stop_rv = 42;
    assert_int_equal(deliver(&p.srv, &p.cli, 0), 42);
    assert_int_equal(p.cli.receives, 1); /* nothing after the stop */
    assert_true(p.cli.plain.len > 0 && p.cli.plain.len < len);
    assert_string_equal(lc_tls_channel_error(p.cli.ch), ""); /* a stop is no failure */
    /* The rest is still there for the next feed. */
    p.cli.stop_rv = 0;
    assert_int_equal(lc_tls_channel_feed(p.cli.ch, NULL, 0), 0);
    assert_plain(&p.cli, data, len);
    /* Another value, on the server's side. */
    p.srv.stop_rv = LC_ECLOSED;
    assert_int_equal(lc_tls_channel_write(p.cli.ch, (const uint8_t *)"bye", 3), 0);
    assert_int_equal(deliver(&p.cli, &p.srv, 0), LC_ECLOSED);
    assert_plain(&p.srv, (const uint8_t *)"bye", 3);
    free(data);
    pair_free(&p);
}

/* ---- io.send failing ---- */

static int send_fails(void *arg, uint8_t *buf, size_t len)
{
    int *calls = arg;
    (*calls)++;
    free(buf);
    return LC_EIO;
}

/* The header: lc_tls_channel_new returns "LC_EIO when io->send failed" (a
 * client sends its ClientHello from there); a write's failed send fails the
 * write. */
static void test_send_failure(void **state)
{
    SSL_CTX *cctx = client_ctx();
    int calls = 0;
    lc_tls_io_t io = {.arg = &calls, .send = send_fails, .receive = on_receive};
    lc_tls_channel_t *ch = NULL;
    int rv = lc_tls_channel_new(&ch, cctx, "127.0.0.1", &io);
    lc_tls_channel_free(ch);
    SSL_CTX_free(cctx);
    assert_int_equal(calls, 1);
    assert_int_equal(rv, LC_EIO);

    pair_t p;
    pair_connect(&p, "127.0.0.1");
    p.srv.send_rv = LC_ECLOSED;
    int sends = p.srv.sends;
    rv = lc_tls_channel_write(p.srv.ch, (const uint8_t *)"lost", 4);
    assert_int_equal(p.srv.sends, sends + 1);
    assert_int_not_equal(rv, 0);
    pair_free(&p);
}

/* A failed channel leaves OpenSSL's per-thread error queue empty, as
 * lc_tls_error_reason does: a stale entry makes SSL_get_error report
 * SSL_ERROR_SSL for the next SSL call of anyone on the thread that does not
 * clear the queue first (worker/tls.c relies on an empty queue). */
static void test_error_queue_left_clean(void **state)
{
    /* The server refuses a client certificate from another CA. */
    SSL_CTX *sctx = server_ctx();
    SSL_CTX *cctx = ctx_from(false, "rogue-client.pem", "rogue-client.key", "ca.pem");
    pair_t p;
    pair_open(&p, sctx, cctx, "127.0.0.1");
    SSL_CTX_free(sctx);
    SSL_CTX_free(cctx);
    side_t *failed;
    int rv = pump(&p.srv, &p.cli, 0, &failed);
    unsigned long left = ERR_peek_error();
    ERR_clear_error();
    pair_free(&p);
    assert_int_equal(rv, LC_EPROTO);
    assert_int_equal(left, 0);

    /* The client refuses a server certificate for another name. */
    sctx = server_ctx();
    cctx = client_ctx();
    pair_open(&p, sctx, cctx, "other.test");
    SSL_CTX_free(sctx);
    SSL_CTX_free(cctx);
    rv = pump(&p.srv, &p.cli, 0, &failed);
    left = ERR_peek_error();
    ERR_clear_error();
    pair_free(&p);
    assert_int_equal(rv, LC_EPROTO);
    assert_int_equal(left, 0);
}

/* The last queued reason is given, the queue emptied; the fallback when none is queued. */
static void test_error_reason(void **state)
{
    char buf[128];
    ERR_clear_error();
    assert_string_equal(lc_tls_error_reason(buf, sizeof buf, "nothing queued"), "nothing queued");

    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    assert_non_null(ctx);
    assert_int_not_equal(SSL_CTX_use_PrivateKey_file(ctx, "/nonexistent/key.pem",
                                                     SSL_FILETYPE_PEM), 1);
    SSL_CTX_free(ctx);
    unsigned long last = ERR_peek_last_error();
    assert_int_not_equal(last, 0);
    const char *want = ERR_reason_error_string(last);
    assert_non_null(want);
    assert_ptr_equal(lc_tls_error_reason(buf, sizeof buf, "unknown"), buf);
    assert_string_equal(buf, want);
    assert_int_equal(ERR_peek_error(), 0);

    assert_string_equal(lc_tls_error_reason(buf, 4, "fallback"), "fal");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_handshake),
        cmocka_unit_test(test_handshake_byte_by_byte),
        cmocka_unit_test(test_handshake_tls12),
        cmocka_unit_test(test_queued_before_handshake),
        cmocka_unit_test(test_large_queued_before_handshake),
        cmocka_unit_test(test_large_one_call),
        cmocka_unit_test(test_large_many_calls),
        cmocka_unit_test(test_verify_host),
        cmocka_unit_test(test_peer_is),
        cmocka_unit_test(test_set_io),
        cmocka_unit_test(test_rogue_client_cert),
        cmocka_unit_test(test_rogue_server_cert),
        cmocka_unit_test(test_client_without_cert),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_files_check),
        cmocka_unit_test(test_context_errors),
        cmocka_unit_test(test_receive_stops_feed),
        cmocka_unit_test(test_send_failure),
        cmocka_unit_test(test_error_queue_left_clean),
        cmocka_unit_test(test_error_reason),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
