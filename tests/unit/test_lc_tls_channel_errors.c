/* test_lc_tls_channel_errors.c — common/lc_tls_channel.c's errors: certificate files checked,
 * contexts that cannot be made, a receive callback that stops the feed, a send that fails, the
 * OpenSSL error queue left clean, and the reasons it gives. */
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
        cmocka_unit_test(test_files_check),
        cmocka_unit_test(test_context_errors),
        cmocka_unit_test(test_receive_stops_feed),
        cmocka_unit_test(test_send_failure),
        cmocka_unit_test(test_error_queue_left_clean),
        cmocka_unit_test(test_error_reason),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
