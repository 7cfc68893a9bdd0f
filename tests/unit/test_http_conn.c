/* test_http_conn.c — a connection's response handling (worker/http_conn.c) without a socket:
 * the headers a request wants are kept whole, in lowercase, however the response is cut
 * into reads; the others are dropped; the request bytes need only live during the send. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <cmocka.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "conn_fixture.h"
#include "http_conn.h"
#include "stats.h"

typedef struct harness_s {
    conn_seen_t seen; /* first: a connection's data */
    worker_conn_t conn;
    uv_loop_t loop;
    char rbuf[4096];
    char sent[256]; /* what the transport was given */
    size_t sent_len;
} harness_t;

static int fake_write(worker_conn_t *c, const char *buf, size_t len)
{
    harness_t *h = c->data;
    assert_true(len < sizeof h->sent);
    memcpy(h->sent, buf, len);
    h->sent_len = len;
    return 0;
}

static const worker_transport_ops_t fake_transport = {
    .name = "test", .start = fake_start, .write = fake_write, .read = fake_read,
};

/* A connection that is "connected" (what worker_conn_connect's callback does). */
static harness_t *harness_new(void)
{
    harness_t *h = calloc(1, sizeof *h);
    assert_non_null(h);
    assert_int_equal(uv_loop_init(&h->loop), 0);
    assert_int_equal(worker_conn_init(&h->conn, &h->loop, h->rbuf, sizeof h->rbuf, &seen_cbs, h), 0);
    worker_conn_t *c = &h->conn;
    c->transport = &fake_transport;
    assert_int_equal(uv_tcp_init(&h->loop, &c->tcp), 0);
    c->tcp.data = c;
    c->handles++;
    c->tcp_open = true;
    c->state = WORKER_CONN_CONNECTING;
    c->transport->start(c);
    assert_int_equal(c->state, WORKER_CONN_IDLE);
    return h;
}

static void harness_free(harness_t *h)
{
    worker_conn_destroy(&h->conn);
    while (!h->seen.destroyed)
        uv_run(&h->loop, UV_RUN_ONCE);
    assert_int_equal(uv_loop_close(&h->loop), 0);
    free(h);
}

/* Sends a request from a buffer overwritten right after the call. */
static void send_transient(harness_t *h)
{
    char req[] = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n";
    worker_conn_want_headers(&h->conn, &want);
    worker_conn_send(&h->conn, req, strlen(req), false, false, 30000);
    memset(req, 'z', sizeof req - 1);
    assert_int_equal(h->sent_len, strlen("GET /a HTTP/1.1\r\nHost: x\r\n\r\n"));
    assert_memory_equal(h->sent, "GET /a HTTP/1.1\r\n", 17);
}

static const char response[] = "HTTP/1.1 302 Found\r\n"
                               "Server: t\r\n"
                               "SET-Cookie: a=1; Path=/\r\n"
                               "Set-Cookie2: no=1\r\n"
                               "Set: no\r\n"
                               "Content-Length: 0\r\n"
                               "LOCATION: /b\r\n"
                               "set-cookie: b=2\r\n"
                               "\r\n";

static const char expected[] = "set-cookie\0a=1; Path=/\0location\0/b\0set-cookie\0b=2";

/* The response cut in two at every offset, then in single bytes: always the same headers. */
static void test_wanted_headers_whatever_the_cuts(void **state)
{
    (void)state;
    harness_t *h = harness_new();
    size_t n = sizeof response - 1;
    for (size_t cut = 0; cut <= n + 1; cut++) {
        send_transient(h);
        if (cut <= n) {
            if (cut > 0) /* libuv never hands over an empty read */
                h->conn.transport->read(&h->conn, response, cut);
            if (cut < n)
                h->conn.transport->read(&h->conn, response + cut, n - cut);
        } else {
            for (size_t i = 0; i < n; i++)
                h->conn.transport->read(&h->conn, response + i, 1);
        }
        assert_int_equal(h->seen.done, (int)cut + 1);
        assert_int_equal(h->seen.result.kind, WORKER_KIND_OK);
        assert_int_equal(h->seen.result.status, 302);
        assert_int_equal(h->seen.result.headers_len, sizeof expected);
        assert_memory_equal(h->seen.headers, expected, sizeof expected);
        if (h->conn.state != WORKER_CONN_IDLE)
            fail_msg("cut %zu: the connection is in state %d", cut, h->conn.state);
    }
    harness_free(h);
}

/* Without wanted names nothing is kept. */
static void test_no_headers_unless_wanted(void **state)
{
    (void)state;
    harness_t *h = harness_new();
    worker_conn_want_headers(&h->conn, NULL);
    worker_conn_send(&h->conn, "GET / HTTP/1.1\r\n\r\n", 18, false, false, 30000);
    h->conn.transport->read(&h->conn, response, sizeof response - 1);
    assert_int_equal(h->seen.done, 1);
    assert_int_equal(h->seen.result.headers_len, 0);
    harness_free(h);
}

/* A connected pair of loopback TCP sockets: fds[0] the client's, fds[1] the server's. */
static void tcp_pair(int fds[2])
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    int l = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(l >= 0);
    assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(l, 1), 0);
    assert_int_equal(getsockname(l, (struct sockaddr *)&a, &alen), 0);
    fds[0] = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(connect(fds[0], (struct sockaddr *)&a, sizeof a), 0);
    fds[1] = accept(l, NULL, NULL);
    assert_true(fds[1] >= 0);
    close(l);
}

/* Plain TCP: a request far bigger than the socket takes at once goes out whole, from a copy,
 * though the caller's buffer is gone right after the send. */
static void test_plain_partial_write_keeps_a_copy(void **state)
{
    (void)state;
    enum { BIG = 8 << 20 };
    harness_t *h = calloc(1, sizeof *h);
    assert_non_null(h);
    assert_int_equal(uv_loop_init(&h->loop), 0);
    worker_conn_t *c = &h->conn;
    assert_int_equal(worker_conn_init(c, &h->loop, h->rbuf, sizeof h->rbuf, &seen_cbs, h), 0);
    int fds[2];
    tcp_pair(fds);
    assert_int_equal(uv_tcp_init(&h->loop, &c->tcp), 0);
    assert_int_equal(uv_tcp_open(&c->tcp, fds[0]), 0);
    c->tcp.data = c;
    c->handles++;
    c->tcp_open = true;
    c->state = WORKER_CONN_IDLE;
    char *req = malloc(BIG);
    assert_non_null(req);
    for (size_t i = 0; i < BIG; i++)
        req[i] = (char)('a' + i % 26);
    worker_conn_send(c, req, BIG, false, false, 30000);
    assert_true(c->write_pending); /* the socket took only part of it */
    memset(req, 0, BIG);           /* the caller's bytes are gone */
    size_t got = 0;
    char buf[65536];
    bool ok = true;
    while (got < BIG) {
        uv_run(&h->loop, UV_RUN_NOWAIT);
        ssize_t n = recv(fds[1], buf, sizeof buf, MSG_DONTWAIT);
        if (n < 0)
            continue;
        assert_true(n > 0);
        for (ssize_t i = 0; i < n; i++)
            ok = ok && buf[i] == (char)('a' + (got + (size_t)i) % 26);
        got += (size_t)n;
    }
    assert_true(ok);
    while (c->write_pending)
        uv_run(&h->loop, UV_RUN_ONCE);
    free(req);
    close(fds[1]);
    harness_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wanted_headers_whatever_the_cuts),
        cmocka_unit_test(test_no_headers_unless_wanted),
        cmocka_unit_test(test_plain_partial_write_keeps_a_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
