/* test_h2_session.c — a connection speaking HTTP/2 (worker/h2_session.c through
 * worker/http_conn.c) to an nghttp2 server session in memory: what the server receives,
 * status, kept headers and body of the answers, several requests on one session, an
 * interim 1xx, a body bigger than the default window, RST_STREAM, GOAWAY and garbage
 * classified, and an idle connection's frame buffer given back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <nghttp2/nghttp2.h>
#include <uv.h>

#include "h2_session.h"
#include "conn_fixture.h"
#include "http_conn.h"
#include "lc_buf.h"
#include "stats.h"

enum server_mode {
    SERVE,        /* 201, headers, "hello" */
    SERVE_BIG,    /* 200 and BIG_BODY bytes */
    SERVE_EARLY,  /* 103 with a Set-Cookie of its own, then SERVE */
    RESET,        /* RST_STREAM INTERNAL_ERROR */
    REFUSE,       /* GOAWAY below the stream: never processed */
    SERVE_LAST,   /* SERVE, then GOAWAY at the stream: no more on this connection */
    SERVE_DATED,  /* 200 with a Date and an ETag of their own in each answer, as nginx's */
};

#define BIG_BODY (3u << 20)

typedef struct harness_s {
    conn_seen_t seen; /* first: a connection's data */
    worker_conn_t conn;
    uv_loop_t loop;
    char rbuf[4096];
    lc_buf_t to_server;
    nghttp2_session *server;
    enum server_mode mode;
    char srv_seen[512];    /* the request's pairs as the server saw them, "name=value;" */
    size_t srv_body;
    size_t big_sent;
    int requests;
} harness_t;

/* The client's side */

static int fake_write(worker_conn_t *c, const char *buf, size_t len)
{
    harness_t *h = c->data;
    assert_int_equal(lc_buf_append(&h->to_server, buf, len), 0);
    return 0;
}

static const worker_transport_ops_t fake_transport = {
    .name = "test", .start = fake_start, .write = fake_write, .read = fake_read,
};

/* The server's side */

static ssize_t read_small(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len,
                          uint32_t *flags, nghttp2_data_source *src, void *data)
{
    (void)s, (void)id, (void)len, (void)src, (void)data;
    memcpy(buf, "hello", 5);
    *flags |= NGHTTP2_DATA_FLAG_EOF;
    return 5;
}

static ssize_t read_big(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len,
                        uint32_t *flags, nghttp2_data_source *src, void *data)
{
    (void)s, (void)id, (void)src;
    harness_t *h = data;
    size_t n = BIG_BODY - h->big_sent < len ? BIG_BODY - h->big_sent : len;
    memset(buf, 'b', n);
    h->big_sent += n;
    if (h->big_sent == BIG_BODY)
        *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

#define NV(n, v) {(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, sizeof(v) - 1, 0}

static void respond(harness_t *h, int32_t id)
{
    static const nghttp2_nv early[] = {NV(":status", "103"), NV("set-cookie", "early=1")};
    static const nghttp2_nv ok[] = {NV(":status", "201"), NV("set-cookie", "a=1; Path=/"),
                                    NV("x-other", "no"), NV("location", "/b"),
                                    NV("set-cookie", "b=2")};
    static const nghttp2_nv big[] = {NV(":status", "200")};
    nghttp2_data_provider small = {.read_callback = read_small};
    nghttp2_data_provider large = {.read_callback = read_big};
    switch (h->mode) {
    case SERVE_DATED: {
        char date[64], etag[32];
        snprintf(date, sizeof date, "Sat, 05 Dec 2026 08:%02d:%02d GMT", h->requests / 60,
                 h->requests % 60);
        snprintf(etag, sizeof etag, "\"%08x\"", (unsigned)h->requests * 2654435761u);
        nghttp2_nv dated[] = {NV(":status", "200"), NV("server", "nginx/1.22.1"),
                              {(uint8_t *)"date", (uint8_t *)date, 4, strlen(date), 0},
                              {(uint8_t *)"etag", (uint8_t *)etag, 4, strlen(etag), 0}};
        assert_int_equal(nghttp2_submit_response(h->server, id, dated, 4, NULL), 0);
        break;
    }
    case SERVE_EARLY:
        assert_int_equal(nghttp2_submit_headers(h->server, NGHTTP2_FLAG_NONE, id, NULL, early, 2,
                                                NULL), 0);
        /* fall through */
    case SERVE:
    case SERVE_LAST:
        assert_int_equal(nghttp2_submit_response(h->server, id, ok, 5, &small), 0);
        if (h->mode == SERVE_LAST)
            assert_int_equal(nghttp2_submit_goaway(h->server, NGHTTP2_FLAG_NONE, id,
                                                   NGHTTP2_NO_ERROR, NULL, 0), 0);
        break;
    case SERVE_BIG:
        assert_int_equal(nghttp2_submit_response(h->server, id, big, 1, &large), 0);
        break;
    case RESET:
        assert_int_equal(nghttp2_submit_rst_stream(h->server, NGHTTP2_FLAG_NONE, id,
                                                   NGHTTP2_INTERNAL_ERROR), 0);
        break;
    case REFUSE:
        assert_int_equal(nghttp2_submit_goaway(h->server, NGHTTP2_FLAG_NONE, 0, NGHTTP2_NO_ERROR,
                                               NULL, 0), 0);
        break;
    }
}

static int srv_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name,
                      size_t nlen, const uint8_t *value, size_t vlen, uint8_t flags, void *data)
{
    (void)s, (void)f, (void)flags;
    harness_t *h = data;
    size_t used = strlen(h->srv_seen);
    snprintf(h->srv_seen + used, sizeof h->srv_seen - used, "%.*s=%.*s;", (int)nlen, name, (int)vlen,
             value);
    return 0;
}

static int srv_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *d, size_t len,
                    void *data)
{
    (void)s, (void)flags, (void)id, (void)d;
    ((harness_t *)data)->srv_body += len;
    return 0;
}

static int srv_frame(nghttp2_session *s, const nghttp2_frame *f, void *data)
{
    (void)s;
    harness_t *h = data;
    bool request = f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA;
    if (request && (f->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
        h->requests++;
        respond(h, f->hd.stream_id);
    }
    return 0;
}

static void server_new(harness_t *h)
{
    nghttp2_session_callbacks *cb;
    assert_int_equal(nghttp2_session_callbacks_new(&cb), 0);
    nghttp2_session_callbacks_set_on_header_callback(cb, srv_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, srv_data);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, srv_frame);
    assert_int_equal(nghttp2_session_server_new(&h->server, cb, h), 0);
    nghttp2_session_callbacks_del(cb);
    assert_int_equal(nghttp2_submit_settings(h->server, NGHTTP2_FLAG_NONE, NULL, 0), 0);
}

/* Carries bytes both ways until neither side has more. */
static void pump(harness_t *h)
{
    for (int round = 0; round < 10000; round++) {
        bool moved = false;
        if (h->to_server.len > 0) {
            lc_buf_t in = h->to_server;
            h->to_server = (lc_buf_t){0};
            assert_int_equal(nghttp2_session_mem_recv(h->server, (uint8_t *)in.data, in.len),
                             (ssize_t)in.len);
            lc_buf_free(&in);
            moved = true;
        }
        const uint8_t *out;
        ssize_t n;
        while ((n = nghttp2_session_mem_send(h->server, &out)) > 0) {
            if (worker_conn_connected(&h->conn))
                h->conn.transport->read(&h->conn, (const char *)out, (size_t)n);
            moved = true;
        }
        assert_true(n == 0);
        if (!moved)
            return;
    }
    fail_msg("the two sessions never went quiet");
}

/* A connection that has spoken its preface and SETTINGS with the server. */
static harness_t *harness_new(enum server_mode mode)
{
    harness_t *h = calloc(1, sizeof *h);
    assert_non_null(h);
    h->mode = mode;
    server_new(h);
    assert_int_equal(uv_loop_init(&h->loop), 0);
    worker_conn_t *c = &h->conn;
    assert_int_equal(worker_conn_init(c, &h->loop, h->rbuf, sizeof h->rbuf, &seen_cbs, h), 0);
    worker_conn_set_h2c(c);
    c->transport = &fake_transport;
    assert_int_equal(uv_tcp_init(&h->loop, &c->tcp), 0);
    c->tcp.data = c;
    c->handles++;
    c->tcp_open = true;
    c->state = WORKER_CONN_CONNECTING;
    c->proto = WORKER_PROTO_H2C; /* what worker_conn_connect sets */
    c->transport->start(c);
    assert_int_equal(c->state, WORKER_CONN_IDLE);
    assert_non_null(c->h2);
    pump(h);
    return h;
}

static void harness_free(harness_t *h)
{
    worker_conn_destroy(&h->conn);
    while (!h->seen.destroyed)
        uv_run(&h->loop, UV_RUN_ONCE);
    assert_int_equal(uv_loop_close(&h->loop), 0);
    nghttp2_session_del(h->server);
    lc_buf_free(&h->to_server);
    free(h);
}

static void send_request(harness_t *h, const char *req)
{
    h->srv_seen[0] = '\0';
    worker_conn_want_headers(&h->conn, &want);
    worker_conn_send(&h->conn, req, strlen(req), false, true, 30000);
    pump(h);
}

/* Runs the loop until the result arrives (a closing connection delivers it on close). */
static void await_done(harness_t *h, int n)
{
    for (int i = 0; i < 100 && h->seen.done < n; i++)
        uv_run(&h->loop, UV_RUN_NOWAIT);
    assert_int_equal(h->seen.done, n);
}

static const char get_req[] = "GET /a?b=1 HTTP/1.1\r\nHost: t.example:8080\r\n"
                              "User-Agent: lc\r\nCookie: s=1\r\n\r\n";
static const char kept[] = "set-cookie\0a=1; Path=/\0location\0/b\0set-cookie\0b=2";

/* Three requests on one session (HPACK state carried across): each answered whole. */
static void test_requests_and_answers(void **state)
{
    (void)state;
    harness_t *h = harness_new(SERVE);
    for (int i = 1; i <= 3; i++) {
        send_request(h, get_req);
        await_done(h, i);
        assert_string_equal(h->srv_seen, ":method=GET;:scheme=http;:authority=t.example:8080;"
                                     ":path=/a?b=1;user-agent=lc;cookie=s=1;");
        assert_int_equal(h->seen.result.kind, WORKER_KIND_OK);
        assert_int_equal(h->seen.result.status, 201);
        assert_true(h->seen.result.latency_us != WORKER_NO_LATENCY);
        assert_true(h->seen.result.bytes > 5);
        assert_int_equal(h->seen.result.headers_len, sizeof kept);
        assert_memory_equal(h->seen.headers, kept, sizeof kept);
        assert_int_equal(h->seen.body_len, 5);
        assert_memory_equal(h->seen.body, "hello", 5);
        assert_int_equal(h->conn.state, WORKER_CONN_IDLE);
    }
    assert_int_equal(h->requests, 3);
    assert_true(worker_h2_reusable(&h->conn));
    /* A POST's body reaches the server. */
    send_request(h, "POST /p HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\n\r\nabcd");
    await_done(h, 4);
    assert_int_equal(h->srv_body, 4);
    assert_non_null(strstr(h->srv_seen, "content-length=4;"));
    assert_int_equal(h->seen.closed, 0);
    harness_free(h);
}

/* A connection told it idles gives its frame buffer's pages back (not while a request is in
 * flight), and its next requests reach the server as before. */
static void test_idle_releases_frame_buffer(void **state)
{
    (void)state;
    harness_t *h = harness_new(SERVE);
    send_request(h, get_req);
    await_done(h, 1);
    assert_true(worker_h2_idle(&h->conn) >= 16 * 1024);
    for (int i = 2; i <= 4; i++) {
        h->srv_seen[0] = '\0';
        worker_conn_want_headers(&h->conn, &want);
        worker_conn_send(&h->conn, get_req, strlen(get_req), false, true, 30000);
        assert_int_equal(h->conn.state, WORKER_CONN_BUSY);
        assert_int_equal(worker_h2_idle(&h->conn), 0); /* busy: kept */
        pump(h);
        await_done(h, i);
        assert_string_equal(h->srv_seen, ":method=GET;:scheme=http;:authority=t.example:8080;"
                                     ":path=/a?b=1;user-agent=lc;cookie=s=1;");
        assert_int_equal(h->seen.result.kind, WORKER_KIND_OK);
        assert_int_equal(h->seen.result.status, 201);
        worker_conn_idle(&h->conn); /* as a user's long think does */
    }
    assert_int_equal(h->requests, 4);
    assert_int_equal(h->seen.closed, 0);
    harness_free(h);
}

/* The connection asks for no table of response headers (SETTINGS_HEADER_TABLE_SIZE 0): the
 * server's encoder then indexes nothing, and what the session holds stays the same over 200
 * answers that each carry a new Date and ETag (at the default 4,096 it would grow). */
static void test_no_response_header_table(void **state)
{
    (void)state;
    harness_t *h = harness_new(SERVE_DATED);
    assert_int_equal(nghttp2_session_get_remote_settings(h->server,
                                                         NGHTTP2_SETTINGS_HEADER_TABLE_SIZE),
                     WORKER_H2_HEADER_TABLE);
    send_request(h, get_req);
    await_done(h, 1);
    size_t held = worker_h2_held_bytes(&h->conn);
    for (int i = 2; i <= 200; i++) {
        send_request(h, get_req);
        await_done(h, i);
        assert_int_equal(h->seen.result.kind, WORKER_KIND_OK);
        assert_int_equal(h->seen.result.status, 200);
    }
    assert_int_equal(worker_h2_held_bytes(&h->conn), held);
    harness_free(h);
}

/* An interim 103's headers are not the answer's. */
static void test_interim_response(void **state)
{
    (void)state;
    harness_t *h = harness_new(SERVE_EARLY);
    send_request(h, get_req);
    await_done(h, 1);
    assert_int_equal(h->seen.result.kind, WORKER_KIND_OK);
    assert_int_equal(h->seen.result.status, 201);
    assert_int_equal(h->seen.result.headers_len, sizeof kept);
    assert_memory_equal(h->seen.headers, kept, sizeof kept);
    harness_free(h);
}

/* 3 MiB in one answer: our window lets the server send it without waiting for us, and the
 * capture stops at its bound. */
static void test_big_body_and_window(void **state)
{
    (void)state;
    harness_t *h = harness_new(SERVE_BIG);
    assert_true(nghttp2_session_get_remote_settings(h->server,
                                                    NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE) ==
                WORKER_H2_WINDOW);
    assert_true(nghttp2_session_get_remote_window_size(h->server) >= (int32_t)BIG_BODY);
    send_request(h, get_req);
    await_done(h, 1);
    assert_int_equal(h->big_sent, BIG_BODY);
    assert_int_equal(h->seen.result.kind, WORKER_KIND_OK);
    assert_int_equal(h->seen.result.status, 200);
    assert_true(h->seen.result.bytes > BIG_BODY);
    assert_int_equal(h->seen.body_len, WORKER_BODY_CAPTURE_MAX);
    harness_free(h);
}

/* RST_STREAM: kind h2_reset; the connection carries the next request. */
static void test_reset_stream(void **state)
{
    (void)state;
    harness_t *h = harness_new(RESET);
    send_request(h, get_req);
    await_done(h, 1);
    assert_int_equal(h->seen.result.kind, WORKER_ERR_H2_RESET);
    assert_true(h->seen.result.latency_us == WORKER_NO_LATENCY);
    assert_int_equal(h->conn.state, WORKER_CONN_IDLE);
    h->mode = SERVE;
    send_request(h, get_req);
    await_done(h, 2);
    assert_int_equal(h->seen.result.kind, WORKER_KIND_OK);
    harness_free(h);
}

/* GOAWAY below the stream: not processed, kind h2_refused, and the connection closes. */
static void test_goaway_refuses(void **state)
{
    (void)state;
    harness_t *h = harness_new(REFUSE);
    send_request(h, get_req);
    await_done(h, 1);
    assert_int_equal(h->seen.result.kind, WORKER_ERR_H2_REFUSED);
    assert_int_equal(h->conn.state, WORKER_CONN_CLOSED);
    harness_free(h);
}

/* GOAWAY at the stream: its answer counts, then the connection closes (the next request opens
 * a new one); a GOAWAY while idle closes it too. */
static void test_goaway_after_answer(void **state)
{
    (void)state;
    harness_t *h = harness_new(SERVE_LAST);
    send_request(h, get_req);
    await_done(h, 1);
    assert_int_equal(h->seen.result.kind, WORKER_KIND_OK);
    assert_int_equal(h->seen.result.status, 201);
    assert_int_equal(h->conn.state, WORKER_CONN_CLOSED);
    harness_free(h);

    h = harness_new(SERVE);
    send_request(h, get_req);
    await_done(h, 1);
    assert_int_equal(nghttp2_submit_goaway(h->server, NGHTTP2_FLAG_NONE, 1, NGHTTP2_NO_ERROR,
                                           NULL, 0), 0);
    pump(h);
    for (int i = 0; i < 100 && h->seen.closed == 0; i++)
        uv_run(&h->loop, UV_RUN_NOWAIT);
    assert_int_equal(h->seen.closed, 1);
    assert_int_equal(h->seen.done, 1);
    harness_free(h);
}

/* An HTTP/1.1 answer to h2c: kind parse, at once (not at the timeout). */
static void test_garbage(void **state)
{
    (void)state;
    harness_t *h = harness_new(SERVE);
    worker_conn_send(&h->conn, get_req, strlen(get_req), false, false, 30000);
    static const char h1[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
    h->conn.transport->read(&h->conn, h1, sizeof h1 - 1);
    await_done(h, 1);
    assert_int_equal(h->seen.result.kind, WORKER_ERR_PARSE);
    harness_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_requests_and_answers), cmocka_unit_test(test_interim_response),
        cmocka_unit_test(test_big_body_and_window),  cmocka_unit_test(test_reset_stream),
        cmocka_unit_test(test_goaway_refuses),       cmocka_unit_test(test_goaway_after_answer),
        cmocka_unit_test(test_garbage),               cmocka_unit_test(test_idle_releases_frame_buffer),
        cmocka_unit_test(test_no_response_header_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
