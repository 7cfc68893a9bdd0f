/* test_h2_request.c — our HTTP/1.1 rendering of a request as HTTP/2 header pairs
 * (worker/h2_request.c): pseudo-headers first, :authority from Host, lowercase names,
 * connection-specific headers dropped, the body found, the caller's bytes not needed
 * afterwards, and anything that is not our rendering refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "h2_request.h"
#include "lc_err.h"

static void expect_nv(const worker_h2_req_t *r, size_t i, const char *name, const char *value)
{
    assert_true(i < r->n_nv);
    const nghttp2_nv *nv = &r->nv[i];
    if (nv->namelen != strlen(name) || memcmp(nv->name, name, nv->namelen) != 0)
        fail_msg("pair %zu: name %.*s, expected %s", i, (int)nv->namelen, nv->name, name);
    if (nv->valuelen != strlen(value) || memcmp(nv->value, value, nv->valuelen) != 0)
        fail_msg("pair %zu: value %.*s, expected %s", i, (int)nv->valuelen, nv->value, value);
}

static void test_get(void **state)
{
    (void)state;
    char req[] = "GET /a/b?c=1 HTTP/1.1\r\nHost: example.org:8443\r\n"
                 "User-Agent: loadcluster/1\r\nX-Custom-ID:  v 1 \r\nCookie: a=1; b=2\r\n\r\n";
    lc_buf_t copy = {0};
    worker_h2_req_t r;
    assert_int_equal(worker_h2_req_translate(req, strlen(req), true, &copy, &r), 0);
    memset(req, 'z', sizeof req - 1); /* the pairs point into the copy, not here */
    assert_int_equal(r.n_nv, 7);
    expect_nv(&r, 0, ":method", "GET");
    expect_nv(&r, 1, ":scheme", "https");
    expect_nv(&r, 2, ":authority", "example.org:8443");
    expect_nv(&r, 3, ":path", "/a/b?c=1");
    expect_nv(&r, 4, "user-agent", "loadcluster/1");
    expect_nv(&r, 5, "x-custom-id", "v 1"); /* optional whitespace trimmed */
    expect_nv(&r, 6, "cookie", "a=1; b=2");
    assert_null(r.body);
    assert_int_equal(r.body_len, 0);
    /* Translating again reuses the copy. */
    const char again[] = "HEAD / HTTP/1.1\r\nhost: h\r\n\r\n";
    assert_int_equal(worker_h2_req_translate(again, strlen(again), false, &copy, &r), 0);
    assert_int_equal(r.n_nv, 4);
    expect_nv(&r, 0, ":method", "HEAD");
    expect_nv(&r, 1, ":scheme", "http");
    expect_nv(&r, 2, ":authority", "h");
    lc_buf_free(&copy);
}

static void test_body_and_connection_headers(void **state)
{
    (void)state;
    const char req[] = "POST /api HTTP/1.1\r\nHost: h\r\nConnection: keep-alive\r\n"
                       "Keep-Alive: 5\r\nProxy-Connection: x\r\nTransfer-Encoding: chunked\r\n"
                       "Upgrade: h2c\r\nTE: gzip\r\nContent-Type: application/json\r\n"
                       "Content-Length: 9\r\n\r\n{\"a\":\r\n1}";
    lc_buf_t copy = {0};
    worker_h2_req_t r;
    assert_int_equal(worker_h2_req_translate(req, strlen(req), false, &copy, &r), 0);
    assert_int_equal(r.n_nv, 6);
    expect_nv(&r, 0, ":method", "POST");
    expect_nv(&r, 3, ":path", "/api");
    expect_nv(&r, 4, "content-type", "application/json");
    expect_nv(&r, 5, "content-length", "9");
    assert_int_equal(r.body_len, 9);
    assert_memory_equal(r.body, "{\"a\":\r\n1}", 9); /* a CRLF in the body is the body's */
    const char te[] = "GET / HTTP/1.1\r\nHost: h\r\nTE: trailers\r\n\r\n";
    assert_int_equal(worker_h2_req_translate(te, strlen(te), false, &copy, &r), 0);
    assert_int_equal(r.n_nv, 5);
    expect_nv(&r, 4, "te", "trailers");
    lc_buf_free(&copy);
}

static void test_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "GET / HTTP/1.1\r\nUser-Agent: x\r\n\r\n",        /* no Host */
        "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",   /* two */
        "GET / HTTP/1.1\r\nHost:\r\n\r\n",                /* empty */
        "GET / HTTP/1.1\r\nHost: h\r\n",                  /* no blank line */
        "GET / HTTP/1.1\nHost: h\r\n\r\n",                /* a bare LF */
        "GET / HTTP/1.1\r\nHost: h\rX: y\r\n\r\n",        /* a bare CR */
        "GET /\r\nHost: h\r\n\r\n",                       /* no version */
        " / HTTP/1.1\r\nHost: h\r\n\r\n",                 /* no method */
        "GET  HTTP/1.1\r\nHost: h\r\n\r\n",               /* no target */
        "GET / HTTP/1.1\r\nHost: h\r\nNoColon\r\n\r\n",   /* not a header */
        "GET / HTTP/1.1\r\nHost: h\r\n: v\r\n\r\n",       /* no name */
        "",
    };
    lc_buf_t copy = {0};
    worker_h2_req_t r;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (worker_h2_req_translate(bad[i], strlen(bad[i]), false, &copy, &r) != LC_EINVAL)
            fail_msg("accepted: %s", bad[i]);
    /* More headers than pairs. */
    char many[8192];
    size_t len = (size_t)snprintf(many, sizeof many, "GET / HTTP/1.1\r\nHost: h\r\n");
    for (unsigned i = 0; i < WORKER_H2_NV_MAX; i++)
        len += (size_t)snprintf(many + len, sizeof many - len, "X-%u: v\r\n", i);
    len += (size_t)snprintf(many + len, sizeof many - len, "\r\n");
    assert_int_equal(worker_h2_req_translate(many, len, false, &copy, &r), LC_EINVAL);
    lc_buf_free(&copy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_get),
        cmocka_unit_test(test_body_and_connection_headers),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
