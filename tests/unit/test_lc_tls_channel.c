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
#include "tls_pair_fixture.h"

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
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
