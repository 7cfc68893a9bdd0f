/* test_http_server.c — lc_http_server over loopback (http_server_fixture.h): keep-alive,
 * pipelining, limits on sizes, deferred answers, chunked and piecewise requests, closes, and
 * binding; deadlines, the connection cap and the headers hook are in test_http_server_limits.c. */
#include "http_server_fixture.h"

static int wait_for(atomic_int *v, int want)
{
    for (int i = 0; i < 300 && atomic_load(v) < want; i++)
        sleep_ms(10);
    return atomic_load(v) >= want;
}

/* ---- scenarios ---- */

static int sc_get(fixture_t *f)
{
    client_t *c = calloc(1, sizeof *c);
    response_t r;
    CHECK(f, cli_open(c, f->port) == 0);
    CHECK(f, cli_sends(c, "GET /api/v1/runs?limit=5&x=1 HTTP/1.1\r\nhost: h:1\r\n"
                          "AUTHORIZATION: Bearer tok\r\n\r\n") == 0);
    CHECK(f, cli_response(c, &r) == 0);
    int ok = r.status == 200 && strstr(r.head, "HTTP/1.1 200 OK\r\n")
             && strstr(r.head, "Content-Type: application/json\r\n")
             && !strstr(r.head, "Connection: close") && strcmp(jfield(&r, "method"), "GET") == 0
             && strcmp(jfield(&r, "path"), "/api/v1/runs") == 0
             && strcmp(jfield(&r, "query"), "limit=5&x=1") == 0
             && strcmp(jfield(&r, "authorization"), "Bearer tok") == 0
             && strcmp(jfield(&r, "host"), "h:1") == 0
             && strcmp(jfield(&r, "content_type"), "(null)") == 0
             && strcmp(jfield(&r, "body"), "") == 0;
    free(r.body);
    CHECK(f, ok);
    /* keep-alive: the same connection serves a second request with extra headers */
    CHECK(f, cli_sends(c, "GET /created HTTP/1.1\r\nHost: h\r\n\r\n") == 0);
    CHECK(f, cli_response(c, &r) == 0);
    ok = r.status == 201 && strstr(r.head, "HTTP/1.1 201 Created\r\n")
         && strstr(r.head, "\r\nLocation: /runs/7\r\n") && strcmp(r.body, "made") == 0;
    free(r.body);
    CHECK(f, ok);
    close(c->fd);
    free(c);
    return 0;
}

/* A body of parts arrives whole and in order, HEAD gets only its length, and
 * every part is released once each time: 3 after GET, 3 after HEAD. */
static int sc_parts_body(fixture_t *f)
{
    client_t *c = calloc(1, sizeof *c);
    response_t r;
    CHECK(f, cli_open(c, f->port) == 0);
    CHECK(f, cli_sends(c, "GET /parts HTTP/1.1\r\nHost: h\r\n\r\n") == 0);
    CHECK(f, cli_response(c, &r) == 0);
    size_t want = 6 + PARTS_MIDDLE_LEN + 6;
    int ok = r.status == 200 && r.body_len == want && memcmp(r.body, "alpha-", 6) == 0 &&
             memcmp(r.body + want - 6, "-omega", 6) == 0;
    for (size_t i = 0; ok && i < PARTS_MIDDLE_LEN; i++)
        ok = r.body[6 + i] == parts_middle_byte(i);
    free(r.body);
    CHECK(f, ok);
    CHECK(f, cli_sends(c, "HEAD /parts HTTP/1.1\r\nHost: h\r\n\r\n") == 0);
    CHECK(f, cli_response_ex(c, &r, 1) == 0);
    ok = r.status == 200 && strstr(r.head, "Content-Length: 100012\r\n") && c->len == 0;
    free(r.body);
    CHECK(f, ok);
    for (int i = 0; i < 100 && atomic_load(&f->parts_released) < 6; i++)
        usleep(10000);
    CHECK(f, atomic_load(&f->parts_released) == 6);
    close(c->fd);
    free(c);
    return 0;
}

/* A body from a file arrives whole and exact, HEAD gets none, and the
 * connection goes on serving requests after both. */
static int sc_file_body(fixture_t *f)
{
    client_t *c = calloc(1, sizeof *c);
    response_t r;
    CHECK(f, cli_open(c, f->port) == 0);
    CHECK(f, cli_sends(c, "GET /file HTTP/1.1\r\nHost: h\r\n\r\n") == 0);
    CHECK(f, cli_response(c, &r) == 0);
    int ok = r.status == 200 && r.body_len == FILE_BODY_LEN &&
             strstr(r.head, "Content-Type: text/csv\r\n") &&
             strstr(r.head, "Content-Disposition: attachment\r\n");
    for (size_t i = 0; ok && i < r.body_len; i++)
        ok = r.body[i] == file_byte(i);
    free(r.body);
    CHECK(f, ok);
    CHECK(f, cli_sends(c, "HEAD /file HTTP/1.1\r\nHost: h\r\n\r\n") == 0);
    CHECK(f, cli_response_ex(c, &r, 1) == 0);
    ok = r.status == 200 && strstr(r.head, "Content-Length: 102407\r\n") && c->len == 0;
    free(r.body);
    CHECK(f, ok);
    CHECK(f, cli_sends(c, "GET /after HTTP/1.1\r\nHost: h\r\n\r\n") == 0);
    CHECK(f, cli_response(c, &r) == 0);
    ok = r.status == 200 && strcmp(jfield(&r, "path"), "/after") == 0;
    free(r.body);
    CHECK(f, ok);
    close(c->fd);
    free(c);
    return 0;
}

static int sc_post(fixture_t *f)
{
    client_t *c = calloc(1, sizeof *c);
    response_t r;
    CHECK(f, cli_open(c, f->port) == 0);
    CHECK(f, cli_sends(c, "POST /api/v1/runs HTTP/1.1\r\nHost: h\r\nContent-Type: "
                          "application/json\r\nContent-Length: 13\r\n\r\n{\"users\": 10}") == 0);
    CHECK(f, cli_response(c, &r) == 0);
    int ok = r.status == 200 && strcmp(jfield(&r, "method"), "POST") == 0
             && strcmp(jfield(&r, "body"), "{\"users\": 10}") == 0
             && strcmp(jfield(&r, "content_type"), "application/json") == 0
             && strcmp(jfield(&r, "authorization"), "(null)") == 0;
    free(r.body);
    CHECK(f, ok);
    close(c->fd);
    free(c);
    return 0;
}

static int sc_pipelined(fixture_t *f)
{
    client_t *c = calloc(1, sizeof *c);
    response_t r1, r2, r3;
    CHECK(f, cli_open(c, f->port) == 0);
    /* The first is answered 50 ms later, yet the answers must come in request order. */
    CHECK(f, cli_sends(c, "GET /defer HTTP/1.1\r\nHost: h\r\n\r\n"
                          "GET /one HTTP/1.1\r\nHost: h\r\n\r\n"
                          "POST /two HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc") == 0);
    CHECK(f, cli_response(c, &r1) == 0);
    CHECK(f, cli_response(c, &r2) == 0);
    CHECK(f, cli_response(c, &r3) == 0);
    int ok = strcmp(jfield(&r1, "path"), "/defer") == 0 && strcmp(jfield(&r2, "path"), "/one") == 0
             && strcmp(jfield(&r3, "path"), "/two") == 0 && strcmp(jfield(&r3, "body"), "abc") == 0
             && atomic_load(&f->deferred_answered) == 1;
    free(r1.body);
    free(r2.body);
    free(r3.body);
    CHECK(f, ok);
    close(c->fd);
    free(c);
    return 0;
}

typedef struct burst_s {
    client_t *c;
    char *data;
    size_t len;
    int rv;
} burst_t;

static void *burst_send(void *arg)
{
    burst_t *b = arg;
    b->rv = cli_send(b->c, b->data, b->len);
    return NULL;
}

/* Far more pipelined bytes than the server buffers while busy: it must stop reading and
 * resume, answering every request in order. */
static int sc_many_pipelined(fixture_t *f)
{
    enum { N = 4000 };
    client_t *c = calloc(1, sizeof *c);
    burst_t b = {.c = c, .data = malloc(N * 48)};
    for (int i = 0; i < N; i++)
        b.len += (size_t)sprintf(b.data + b.len, "GET /n?i=%d HTTP/1.1\r\nHost: h\r\n\r\n", i);
    CHECK(f, cli_open(c, f->port) == 0);
    pthread_t th;
    CHECK(f, pthread_create(&th, NULL, burst_send, &b) == 0);
    int bad = -1;
    for (int i = 0; i < N && bad < 0; i++) {
        response_t r;
        char want[16];
        snprintf(want, sizeof want, "i=%d", i);
        if (cli_response(c, &r) != 0) {
            bad = i;
            break;
        }
        if (strcmp(jfield(&r, "query"), want) != 0)
            bad = i;
        free(r.body);
    }
    pthread_join(th, NULL);
    free(b.data);
    CHECK(f, bad < 0 && b.rv == 0);
    close(c->fd);
    free(c);
    return 0;
}

static int sc_deferred(fixture_t *f)
{
    client_t *c = calloc(1, sizeof *c);
    response_t r;
    struct timespec t0, t1;
    CHECK(f, cli_open(c, f->port) == 0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK(f, cli_sends(c, "PUT /defer?x=y HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nhi") == 0);
    CHECK(f, cli_response(c, &r) == 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    int ok = r.status == 200 && strcmp(jfield(&r, "method"), "PUT") == 0
             && strcmp(jfield(&r, "query"), "x=y") == 0 && strcmp(jfield(&r, "body"), "hi") == 0
             && ms >= DEFER_MS - 5;
    free(r.body);
    CHECK(f, ok);
    close(c->fd);
    free(c);
    return 0;
}

static int sc_chunked(fixture_t *f)
{
    client_t *c = calloc(1, sizeof *c);
    response_t r;
    CHECK(f, cli_open(c, f->port) == 0);
    CHECK(f, cli_sends(c, "POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                          "5\r\nhello\r\n") == 0);
    sleep_ms(20);
    CHECK(f, cli_sends(c, "6\r\n worl") == 0);
    sleep_ms(20);
    CHECK(f, cli_sends(c, "d\r\n0\r\n\r\n") == 0);
    CHECK(f, cli_response(c, &r) == 0);
    int ok = r.status == 200 && strcmp(jfield(&r, "body"), "hello world") == 0;
    free(r.body);
    CHECK(f, ok);
    close(c->fd);
    free(c);
    return 0;
}

/* Header values split over several TCP segments are reassembled. */
static int sc_pieces(fixture_t *f)
{
    static const char *parts[] = {"GET /p HTTP/1.1\r\nX-A-Header-Name-Longer-Than-", "Thirty-",
                                  "Two-Bytes: 1\r\nAuthori", "zation: Bea", "rer a",
                                  "bc\r\nHo", "st: exa", "mple\r\n", "\r\n"};
    client_t *c = calloc(1, sizeof *c);
    response_t r;
    CHECK(f, cli_open(c, f->port) == 0);
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        CHECK(f, cli_sends(c, parts[i]) == 0);
        sleep_ms(10);
    }
    CHECK(f, cli_response(c, &r) == 0);
    int ok = strcmp(jfield(&r, "authorization"), "Bearer abc") == 0
             && strcmp(jfield(&r, "host"), "example") == 0;
    free(r.body);
    CHECK(f, ok);
    close(c->fd);
    free(c);
    return 0;
}

static int sc_expect_continue(fixture_t *f)
{
    client_t *c = calloc(1, sizeof *c);
    response_t r;
    CHECK(f, cli_open(c, f->port) == 0);
    CHECK(f, cli_sends(c, "POST /e HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n"
                          "Content-Length: 4\r\n\r\n") == 0);
    CHECK(f, cli_response(c, &r) == 0);
    int st = r.status;
    free(r.body);
    CHECK(f, st == 100);
    CHECK(f, cli_sends(c, "data") == 0);
    CHECK(f, cli_response(c, &r) == 0);
    int ok = r.status == 200 && strcmp(jfield(&r, "body"), "data") == 0;
    free(r.body);
    CHECK(f, ok);
    close(c->fd);
    free(c);
    return 0;
}

static int sc_too_large(fixture_t *f)
{
    char req[4096];
    int n = snprintf(req, sizeof req, "POST /big HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n",
                     MAX_BODY + 1);
    CHECK(f, expect_refusal(f, req, (size_t)n, 413, "request body too large") == 0);
    /* A chunked body is refused once its bytes exceed the limit. */
    n = snprintf(req, sizeof req, "POST /big HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked"
                                  "\r\n\r\n300\r\n%0768d\r\n300\r\n%0768d\r\n0\r\n\r\n", 0, 0);
    CHECK(f, expect_refusal(f, req, (size_t)n, 413, "request body too large") == 0);
    /* Exactly max_body is fine. */
    client_t *c = calloc(1, sizeof *c);
    response_t r;
    n = snprintf(req, sizeof req, "POST /ok HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n%0*d",
                 MAX_BODY, MAX_BODY, 0);
    CHECK(f, cli_open(c, f->port) == 0);
    CHECK(f, cli_send(c, req, (size_t)n) == 0);
    CHECK(f, cli_response(c, &r) == 0);
    int ok = r.status == 200 && strlen(jfield(&r, "body")) == MAX_BODY;
    free(r.body);
    CHECK(f, ok);
    close(c->fd);
    free(c);
    return 0;
}

static int sc_huge_headers(fixture_t *f)
{
    size_t cap = 64 << 10, n = 0;
    char *req = malloc(cap);
    n += (size_t)snprintf(req, cap, "GET / HTTP/1.1\r\nHost: h\r\nX-Big: ");
    memset(req + n, 'a', 20000);
    n += 20000;
    n += (size_t)snprintf(req + n, cap - n, "\r\n\r\n");
    int rv = expect_refusal(f, req, n, 431, "request header fields too large");
    /* Small headers, but more of them than allowed. */
    n = (size_t)snprintf(req, cap, "GET / HTTP/1.1\r\n");
    for (int i = 0; i <= LC_HTTP_MAX_HEADERS; i++)
        n += (size_t)snprintf(req + n, cap - n, "X-H%d: v\r\n", i);
    n += (size_t)snprintf(req + n, cap - n, "\r\n");
    if (rv == 0)
        rv = expect_refusal(f, req, n, 431, "request header fields too large");
    free(req);
    return rv;
}

static int sc_garbage(fixture_t *f)
{
    static const char junk[] = "\x01\x02 NOT HTTP AT ALL\r\n\r\n";
    CHECK(f, expect_refusal(f, junk, sizeof junk - 1, 400, "bad request: ") == 0);
    static const char badver[] = "GET / HTTP/9.9x\r\n\r\n";
    return expect_refusal(f, badver, sizeof badver - 1, 400, "bad request: ");
}

/* Connection: close and HTTP/1.0 without keep-alive end the connection after the answer. */
static int sc_connection_close(fixture_t *f)
{
    static const char *reqs[] = {"GET /a HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
                                 "GET /b HTTP/1.0\r\n\r\n"};
    for (int i = 0; i < 2; i++) {
        client_t *c = calloc(1, sizeof *c);
        response_t r;
        CHECK(f, cli_open(c, f->port) == 0);
        CHECK(f, cli_sends(c, reqs[i]) == 0);
        CHECK(f, cli_response(c, &r) == 0);
        int ok = r.status == 200 && strstr(r.head, "\r\nConnection: close\r\n");
        free(r.body);
        CHECK(f, ok);
        CHECK(f, cli_closed(c));
        close(c->fd);
        free(c);
    }
    return 0;
}

/* HEAD announces the length but sends no body; HTTP/1.0 keep-alive is confirmed. */
static int sc_head_and_http10(fixture_t *f)
{
    client_t *c = calloc(1, sizeof *c);
    response_t r;
    CHECK(f, cli_open(c, f->port) == 0);
    CHECK(f, cli_sends(c, "HEAD /h HTTP/1.0\r\nConnection: keep-alive\r\n\r\n") == 0);
    CHECK(f, cli_response_ex(c, &r, 1) == 0);
    int ok = r.status == 200 && strstr(r.head, "\r\nContent-Length: ")
             && !strstr(r.head, "Content-Length: 0") && strstr(r.head, "\r\nConnection: keep-alive");
    free(r.body);
    CHECK(f, ok);
    CHECK(f, cli_sends(c, "GET /next HTTP/1.1\r\nHost: h\r\n\r\n") == 0);
    CHECK(f, cli_response(c, &r) == 0);
    ok = r.status == 200 && strcmp(jfield(&r, "path"), "/next") == 0;
    free(r.body);
    CHECK(f, ok);
    close(c->fd);
    free(c);
    return 0;
}

/* The client leaves before its deferred answer: answering must only free the exchange. */
static int sc_disconnect_before_answer(fixture_t *f)
{
    client_t *c = calloc(1, sizeof *c);
    response_t r;
    CHECK(f, cli_open(c, f->port) == 0);
    CHECK(f, cli_sends(c, "GET /defer HTTP/1.1\r\nHost: h\r\n\r\n") == 0);
    CHECK(f, wait_for(&f->handled, 1));
    close(c->fd);
    CHECK(f, wait_for(&f->deferred_answered, 1));
    /* The server still serves others. */
    CHECK(f, cli_open(c, f->port) == 0);
    CHECK(f, cli_sends(c, "GET /after HTTP/1.1\r\nHost: h\r\n\r\n") == 0);
    CHECK(f, cli_response(c, &r) == 0);
    int ok = r.status == 200 && strcmp(jfield(&r, "path"), "/after") == 0;
    free(r.body);
    CHECK(f, ok);
    close(c->fd);
    free(c);
    return 0;
}

/* The server closes while an exchange is unanswered; the client sees the close. */
static int sc_close_with_pending(fixture_t *f)
{
    client_t *c = calloc(1, sizeof *c);
    CHECK(f, cli_open(c, f->port) == 0);
    CHECK(f, cli_sends(c, "GET /hold HTTP/1.1\r\nHost: h\r\n\r\n") == 0);
    CHECK(f, wait_for(&f->handled, 1));
    signal_done(f);
    CHECK(f, cli_closed(c));
    close(c->fd);
    free(c);
    return 0;
}


SCENARIO_TEST(get)
SCENARIO_TEST(post)
SCENARIO_TEST(file_body)
SCENARIO_TEST(parts_body)
SCENARIO_TEST(pipelined)
SCENARIO_TEST(many_pipelined)
SCENARIO_TEST(deferred)
SCENARIO_TEST(chunked)
SCENARIO_TEST(pieces)
SCENARIO_TEST(expect_continue)
SCENARIO_TEST(too_large)
SCENARIO_TEST(huge_headers)
SCENARIO_TEST(garbage)
SCENARIO_TEST(connection_close)
SCENARIO_TEST(head_and_http10)
SCENARIO_TEST(disconnect_before_answer)
SCENARIO_TEST(close_with_pending)

static void test_bind_error(void **state)
{
    (void)state;
    uv_loop_t loop;
    lc_http_server_t *s = NULL;
    char errmsg[256] = "";
    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_not_equal(lc_http_server_init(&s, &loop, "203.0.113.1", 0, MAX_BODY, handler,
                                             NULL, errmsg, sizeof errmsg),
                         0);
    assert_null(s);
    assert_non_null(strstr(errmsg, "http:"));
    uv_run(&loop, UV_RUN_DEFAULT); /* runs the close callback that frees the server */
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* A name is resolved; the server binds, reports its port and closes without a leak. */
static void test_localhost(void **state)
{
    (void)state;
    uv_loop_t loop;
    lc_http_server_t *s = NULL;
    char errmsg[256] = "";
    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(lc_http_server_init(&s, &loop, "localhost", 0, MAX_BODY, handler, NULL,
                                         errmsg, sizeof errmsg),
                     0);
    assert_true(lc_http_server_port(s) > 0);
    lc_http_server_close(s);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    alarm(30);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_get),
        cmocka_unit_test(test_post),
        cmocka_unit_test(test_file_body),
        cmocka_unit_test(test_parts_body),
        cmocka_unit_test(test_pipelined),
        cmocka_unit_test(test_many_pipelined),
        cmocka_unit_test(test_deferred),
        cmocka_unit_test(test_chunked),
        cmocka_unit_test(test_pieces),
        cmocka_unit_test(test_expect_continue),
        cmocka_unit_test(test_too_large),
        cmocka_unit_test(test_huge_headers),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_connection_close),
        cmocka_unit_test(test_head_and_http10),
        cmocka_unit_test(test_disconnect_before_answer),
        cmocka_unit_test(test_close_with_pending),
        cmocka_unit_test(test_bind_error),
        cmocka_unit_test(test_localhost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

