/* test_http_server.c — lc_http_server over loopback: keep-alive, pipelining, limits, deferred
 * answers, deadlines against slow clients, the connection cap with probe slots, the headers hook. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lc_http_server.h"

#define MAX_BODY 1024
#define DEFER_MS 50

typedef struct fixture_s fixture_t;
typedef int (*scenario_fn)(fixture_t *f);

/* One server in the test thread's loop, one blocking client in a second thread. */
struct fixture_s {
    uv_loop_t loop;
    lc_http_server_t *srv;
    uv_async_t done;   /* client thread -> loop: the scenario is over */
    uv_timer_t defer;  /* answers `deferred` DEFER_MS after it arrived */
    lc_http_exchange_t *deferred;
    lc_http_exchange_t *held; /* answered only after the server closed */
    atomic_int handled, deferred_answered, signalled, hooked;
    const lc_http_limits_t *limits; /* NULL: the defaults */
    bool hook;                      /* refuse /private without "Bearer ok" before its body */
    uint16_t port;
    scenario_fn scenario;
    char err[512]; /* first failed client-side check */
};

typedef struct client_s {
    int fd;
    size_t len;
    char buf[1 << 17];
} client_t;

typedef struct response_s {
    int status;
    char head[8192];
    char *body; /* NUL-terminated, owned */
    size_t body_len;
} response_t;

/* Records a failed check from the client thread (cmocka asserts must stay in the main thread). */
#define CHECK(f, cond)                                                                 \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            snprintf((f)->err, sizeof (f)->err, "line %d: %s", __LINE__, #cond);       \
            return -1;                                                                 \
        }                                                                              \
    } while (0)

/* ---- server side (loop thread) ---- */

static void answer_echo(lc_http_exchange_t *ex)
{
    const lc_http_request_t *r = lc_http_exchange_request(ex);
    json_t *j = json_pack("{s:s, s:s, s:s, s:s%, s:s?, s:s?, s:s?}", "method", r->method,
                          "path", r->path, "query", r->query, "body", r->body, r->body_len,
                          "authorization", r->authorization, "content_type",
                          r->content_type, "host", r->host);
    char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
    if (!text)
        lc_http_exchange_respond(ex, 500, NULL, NULL, 0, NULL);
    else
        lc_http_exchange_respond(ex, 200, "application/json", text, strlen(text), NULL);
    free(text);
    json_decref(j);
}

static void on_defer_timer(uv_timer_t *t)
{
    fixture_t *f = t->data;
    lc_http_exchange_t *ex = f->deferred;
    f->deferred = NULL;
    answer_echo(ex);
    atomic_fetch_add(&f->deferred_answered, 1);
}

#define FILE_BODY_LEN (100u * 1024u + 7u) /* two of the server's chunks, the second short */

static char file_byte(size_t i)
{
    return (char)('a' + (i * 7 + i / 1000) % 26);
}

/* Answers with FILE_BODY_LEN bytes from an unlinked temporary file. */
static void answer_file(lc_http_exchange_t *ex)
{
    char path[] = "/tmp/lc-test-http-file.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        lc_http_exchange_respond(ex, 500, NULL, NULL, 0, NULL);
        return;
    }
    unlink(path);
    char *data = malloc(FILE_BODY_LEN);
    for (size_t i = 0; data != NULL && i < FILE_BODY_LEN; i++)
        data[i] = file_byte(i);
    ssize_t n = data ? write(fd, data, FILE_BODY_LEN) : -1;
    free(data);
    if (n != (ssize_t)FILE_BODY_LEN) {
        close(fd);
        lc_http_exchange_respond(ex, 500, NULL, NULL, 0, NULL);
        return;
    }
    lc_http_exchange_respond_fd(ex, 200, "text/csv", fd, FILE_BODY_LEN,
                                "Content-Disposition: attachment\r\n");
}

static void handler(void *arg, lc_http_exchange_t *ex, const lc_http_request_t *req)
{
    fixture_t *f = arg;
    atomic_fetch_add(&f->handled, 1);
    if (strcmp(req->path, "/defer") == 0) {
        f->deferred = ex;
        uv_timer_start(&f->defer, on_defer_timer, DEFER_MS, 0);
    } else if (strcmp(req->path, "/hold") == 0) {
        f->held = ex;
    } else if (strcmp(req->path, "/file") == 0) {
        answer_file(ex);
    } else if (strcmp(req->path, "/created") == 0) {
        lc_http_exchange_respond(ex, 201, "text/plain", "made", 4, "Location: /runs/7\r\n");
    } else {
        answer_echo(ex);
    }
}

/* The headers hook: /private needs "Authorization: Bearer ok". */
static bool refuse_private(void *arg, lc_http_exchange_t *ex, const lc_http_request_t *req)
{
    fixture_t *f = arg;
    atomic_fetch_add(&f->hooked, 1);
    if (strcmp(req->path, "/private") != 0 || (req->authorization != NULL &&
                                                strcmp(req->authorization, "Bearer ok") == 0))
        return false;
    static const char body[] = "{\"error\":\"missing or unknown token\"}";
    lc_http_exchange_respond(ex, 401, "application/json", body, sizeof body - 1, NULL);
    return true;
}

static void on_done(uv_async_t *a)
{
    fixture_t *f = a->data;
    lc_http_server_close(f->srv);
    /* Exchanges still open after close must be answerable (which only frees them). */
    if (f->held)
        lc_http_exchange_respond(f->held, 200, NULL, NULL, 0, NULL);
    f->held = NULL;
    if (f->deferred) {
        uv_timer_stop(&f->defer);
        lc_http_exchange_respond(f->deferred, 200, NULL, NULL, 0, NULL);
        f->deferred = NULL;
    }
    uv_close((uv_handle_t *)&f->defer, NULL);
    uv_close((uv_handle_t *)&f->done, NULL);
}

/* ---- client side (second thread, blocking sockets) ---- */

static void signal_done(fixture_t *f)
{
    if (atomic_exchange(&f->signalled, 1) == 0)
        uv_async_send(&f->done);
}

static int cli_open(client_t *c, uint16_t port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    c->len = 0;
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (c->fd < 0)
        return -1;
    struct timeval tv = {.tv_sec = 5};
    int one = 1;
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return connect(c->fd, (struct sockaddr *)&sa, sizeof sa);
}

static int cli_send(client_t *c, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = send(c->fd, data, len, MSG_NOSIGNAL);
        if (n <= 0)
            return -1;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

static int cli_sends(client_t *c, const char *s)
{
    return cli_send(c, s, strlen(s));
}

/* Reads more bytes into the buffer; 0 on EOF, -1 on error or timeout. */
static ssize_t cli_fill(client_t *c)
{
    if (c->len >= sizeof c->buf - 1)
        return -1;
    ssize_t n = recv(c->fd, c->buf + c->len, sizeof c->buf - 1 - c->len, 0);
    if (n > 0) {
        c->len += (size_t)n;
        c->buf[c->len] = '\0';
    }
    return n;
}

/* Reads one response (Content-Length framed, no body after HEAD). Returns 0, or -1 on
 * EOF/timeout. */
static int cli_response_ex(client_t *c, response_t *r, int head_only)
{
    char *end;
    c->buf[c->len] = '\0';
    while (!(end = strstr(c->buf, "\r\n\r\n")))
        if (cli_fill(c) <= 0)
            return -1;
    size_t head_len = (size_t)(end - c->buf) + 4;
    if (head_len >= sizeof r->head)
        return -1;
    memcpy(r->head, c->buf, head_len);
    r->head[head_len] = '\0';
    r->status = atoi(r->head + 9);
    const char *cl = strcasestr(r->head, "\r\nContent-Length:");
    r->body_len = cl && !head_only ? strtoul(cl + 17, NULL, 10) : 0;
    while (c->len < head_len + r->body_len)
        if (cli_fill(c) <= 0)
            return -1;
    r->body = malloc(r->body_len + 1);
    memcpy(r->body, c->buf + head_len, r->body_len);
    r->body[r->body_len] = '\0';
    c->len -= head_len + r->body_len;
    memmove(c->buf, c->buf + head_len + r->body_len, c->len);
    return 0;
}

static int cli_response(client_t *c, response_t *r)
{
    return cli_response_ex(c, r, 0);
}

/* True when the server closed the connection (EOF or reset) with nothing more to read. */
static int cli_closed(client_t *c)
{
    if (c->len > 0)
        return 0;
    char b;
    ssize_t n = recv(c->fd, &b, 1, 0);
    return n == 0 || (n < 0 && errno == ECONNRESET);
}

/* A string member of a JSON body, or "(none)"; the result lives in a static buffer. */
static const char *jfield(const response_t *r, const char *key)
{
    static char out[4096];
    json_t *j = json_loads(r->body, 0, NULL);
    json_t *v = j ? json_object_get(j, key) : NULL;
    snprintf(out, sizeof out, "%s", json_is_string(v) ? json_string_value(v)
                                    : json_is_null(v) ? "(null)" : "(none)");
    json_decref(j);
    return out;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int wait_for(atomic_int *v, int want)
{
    for (int i = 0; i < 300 && atomic_load(v) < want; i++)
        sleep_ms(10);
    return atomic_load(v) >= want;
}

static void *client_main(void *arg)
{
    fixture_t *f = arg;
    if (f->scenario(f) != 0 && !f->err[0])
        snprintf(f->err, sizeof f->err, "scenario failed");
    signal_done(f);
    return NULL;
}

static void run_scenario_with(scenario_fn fn, const lc_http_limits_t *limits, bool hook)
{
    fixture_t *f = calloc(1, sizeof *f);
    char errmsg[256] = "";
    assert_non_null(f);
    assert_int_equal(uv_loop_init(&f->loop), 0);
    int rv = lc_http_server_init(&f->srv, &f->loop, "127.0.0.1", 0, MAX_BODY, handler, f,
                                 errmsg, sizeof errmsg);
    assert_int_equal(rv, 0);
    f->limits = limits;
    f->hook = hook;
    if (limits)
        lc_http_server_set_limits(f->srv, limits);
    if (hook)
        lc_http_server_on_headers(f->srv, refuse_private);
    f->port = lc_http_server_port(f->srv);
    assert_true(f->port > 0);
    f->scenario = fn;
    uv_async_init(&f->loop, &f->done, on_done);
    f->done.data = f;
    uv_timer_init(&f->loop, &f->defer);
    f->defer.data = f;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, client_main, f), 0);
    uv_run(&f->loop, UV_RUN_DEFAULT);
    pthread_join(th, NULL);
    if (f->err[0])
        fail_msg("client: %s", f->err);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    free(f);
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

/* Sends a request expected to be refused with `status`, then checks the server closed. */
static int expect_refusal(fixture_t *f, const char *req, size_t len, int status, const char *err)
{
    client_t *c = calloc(1, sizeof *c);
    response_t r;
    CHECK(f, cli_open(c, f->port) == 0);
    CHECK(f, cli_send(c, req, len) == 0);
    CHECK(f, cli_response(c, &r) == 0);
    int ok = r.status == status && strstr(r.head, "\r\nConnection: close\r\n")
             && strncmp(jfield(&r, "error"), err, strlen(err)) == 0;
    free(r.body);
    CHECK(f, ok);
    CHECK(f, cli_closed(c));
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

/* ---- slow and numerous clients, the headers hook ---- */

#define SLOW_HEADER_MS 300
#define SLOW_BODY_MS 400
static const lc_http_limits_t short_deadlines = {.header_timeout_ms = SLOW_HEADER_MS,
                                                 .body_timeout_ms = SLOW_BODY_MS};

static long ms_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Sends one byte of s every 20 ms until the server answers or s runs out;
 * returns the milliseconds until the answer began, -1 when none came. */
static long trickle(client_t *c, const char *s)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (size_t i = 0; s[i] != '\0'; i++) {
        char b;
        if (recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 1)
            return ms_since(&t0);
        if (cli_send(c, &s[i], 1) != 0)
            break;
        sleep_ms(20);
    }
    char b;
    return recv(c->fd, &b, 1, MSG_PEEK) == 1 ? ms_since(&t0) : -1;
}

/* 2,000 header bytes at 50 bytes a second would take 40 s: the deadline
 * counts from accept, so the trickle cannot extend it. */
static char *long_header(const char *start)
{
    char *s = malloc(4096);
    size_t n = (size_t)snprintf(s, 4096, "%sX-Slow: ", start);
    memset(s + n, 'a', 2000);
    s[n + 2000] = '\0';
    return s;
}

static int expect_408_after(fixture_t *f, client_t *c, long ms, long deadline, const char *err)
{
    response_t r;
    CHECK(f, ms >= deadline - 50 && ms < deadline + 700);
    CHECK(f, cli_response(c, &r) == 0);
    int ok = r.status == 408 && strstr(r.head, "\r\nConnection: close\r\n")
             && strstr(jfield(&r, "error"), err) != NULL;
    free(r.body);
    CHECK(f, ok);
    CHECK(f, cli_closed(c));
    return 0;
}

static int sc_slow_headers(fixture_t *f)
{
    client_t *c = calloc(1, sizeof *c);
    char *req = long_header("GET /slow HTTP/1.1\r\nHost: h\r\n");
    CHECK(f, cli_open(c, f->port) == 0);
    long ms = trickle(c, req);
    free(req);
    CHECK(f, expect_408_after(f, c, ms, SLOW_HEADER_MS, "request headers not complete") == 0);
    CHECK(f, atomic_load(&f->handled) == 0);
    close(c->fd);
    free(c);
    return 0;
}

static int sc_slow_body(fixture_t *f)
{
    client_t *c = calloc(1, sizeof *c);
    char body[1001];
    memset(body, 'b', 1000);
    body[1000] = '\0';
    CHECK(f, cli_open(c, f->port) == 0);
    CHECK(f, cli_sends(c, "POST /slow HTTP/1.1\r\nHost: h\r\nContent-Length: 1000\r\n\r\n") == 0);
    long ms = trickle(c, body);
    CHECK(f, expect_408_after(f, c, ms, SLOW_BODY_MS, "request body not complete") == 0);
    CHECK(f, atomic_load(&f->handled) == 0);
    close(c->fd);
    free(c);
    return 0;
}

/* A keep-alive connection that sends nothing more is closed, without an answer,
 * once the next request's headers are overdue. */
static int sc_idle_keepalive(fixture_t *f)
{
    client_t *c = calloc(1, sizeof *c);
    response_t r;
    struct timespec t0;
    CHECK(f, cli_open(c, f->port) == 0);
    CHECK(f, cli_sends(c, "GET /a HTTP/1.1\r\nHost: h\r\n\r\n") == 0);
    CHECK(f, cli_response(c, &r) == 0);
    free(r.body);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK(f, cli_closed(c));
    long ms = ms_since(&t0);
    CHECK(f, ms >= SLOW_HEADER_MS - 50 && ms < SLOW_HEADER_MS + 700);
    close(c->fd);
    free(c);
    return 0;
}

#define CAP_CONNS 3
static const char *const probe_paths[] = {"/healthz", NULL};
static const lc_http_limits_t capped = {.header_timeout_ms = 1500, .max_conns = CAP_CONNS,
                                        .probe_conns = 1, .probe_paths = probe_paths};

/* One request on a fresh connection: its status, and whether the server closed after it. */
static int one_request(client_t *c, uint16_t port, const char *req, int *status, int *closed)
{
    response_t r;
    if (cli_open(c, port) != 0 || cli_sends(c, req) != 0 || cli_response(c, &r) != 0)
        return -1;
    *status = r.status;
    free(r.body);
    *closed = cli_closed(c);
    close(c->fd);
    return 0;
}

/* CAP_CONNS slow clients fill the server: the probe slot still answers
 * /healthz (and closes), refuses other paths with 503, and a connection
 * beyond it is closed at once. Once the slow ones are past their deadline,
 * everyone is served again. */
static int sc_cap_and_probe(fixture_t *f)
{
    client_t *hold = calloc(CAP_CONNS + 1, sizeof *hold), *c = calloc(1, sizeof *c);
    int status = 0, closed = 0;
    for (int i = 0; i < CAP_CONNS; i++) {
        CHECK(f, cli_open(&hold[i], f->port) == 0);
        CHECK(f, cli_sends(&hold[i], "GET /x HTTP/1.1\r\n") == 0);
    }
    sleep_ms(100); /* accepted by the server's loop */
    CHECK(f, one_request(c, f->port, "GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n", &status,
                         &closed) == 0);
    CHECK(f, status == 200 && closed);
    sleep_ms(50); /* the probe slot is closed and free again */
    CHECK(f, one_request(c, f->port, "POST /other HTTP/1.1\r\nHost: h\r\nContent-Length: 3"
                         "\r\n\r\n", &status, &closed) == 0);
    CHECK(f, status == 503 && closed);
    CHECK(f, atomic_load(&f->handled) == 1);
    sleep_ms(50);
    /* The probe slot held too: one more is closed without an answer. */
    CHECK(f, cli_open(&hold[CAP_CONNS], f->port) == 0);
    CHECK(f, cli_sends(&hold[CAP_CONNS], "GET /healthz HTTP/1.1\r\n") == 0);
    sleep_ms(50);
    CHECK(f, cli_open(c, f->port) == 0);
    CHECK(f, cli_closed(c));
    close(c->fd);
    /* The slow ones get their 408 and the server is open to all again. */
    for (int i = 0; i <= CAP_CONNS; i++) {
        response_t r;
        CHECK(f, cli_response(&hold[i], &r) == 0);
        int st = r.status;
        free(r.body);
        CHECK(f, st == 408);
        close(hold[i].fd);
    }
    sleep_ms(50);
    CHECK(f, one_request(c, f->port, "GET /after HTTP/1.1\r\nHost: h\r\nConnection: close"
                         "\r\n\r\n", &status, &closed) == 0);
    CHECK(f, status == 200);
    free(hold);
    free(c);
    return 0;
}

/* The hook refuses before the body: the 401 comes though no body byte was
 * sent (and neither 100 Continue nor 413 comes first); the handler never runs. */
static int sc_headers_hook(fixture_t *f)
{
    static const char expecting[] = "POST /private HTTP/1.1\r\nHost: h\r\nExpect: 100-continue"
                                    "\r\nContent-Length: 1000\r\n\r\n";
    CHECK(f, expect_refusal(f, expecting, sizeof expecting - 1, 401, "missing or unknown token")
                 == 0);
    client_t *c = calloc(1, sizeof *c);
    response_t r;
    char req[256];
    snprintf(req, sizeof req, "POST /private HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n",
             MAX_BODY * 100);
    CHECK(f, expect_refusal(f, req, strlen(req), 401, "missing or unknown token") == 0);
    CHECK(f, atomic_load(&f->handled) == 0 && atomic_load(&f->hooked) == 2);
    /* Accepted by the hook: the body is read and the handler answers. */
    CHECK(f, cli_open(c, f->port) == 0);
    CHECK(f, cli_sends(c, "POST /private HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer ok\r\n"
                          "Content-Length: 3\r\n\r\nabc") == 0);
    CHECK(f, cli_response(c, &r) == 0);
    int ok = r.status == 200 && strcmp(jfield(&r, "body"), "abc") == 0;
    free(r.body);
    CHECK(f, ok);
    close(c->fd);
    free(c);
    return 0;
}

#define SCENARIO_TEST_WITH(name, limits, hook)                                          \
    static void test_##name(void **state)                                               \
    {                                                                                   \
        (void)state;                                                                    \
        run_scenario_with(sc_##name, limits, hook);                                     \
    }
SCENARIO_TEST_WITH(slow_headers, &short_deadlines, false)
SCENARIO_TEST_WITH(slow_body, &short_deadlines, false)
SCENARIO_TEST_WITH(idle_keepalive, &short_deadlines, false)
SCENARIO_TEST_WITH(cap_and_probe, &capped, false)
SCENARIO_TEST_WITH(headers_hook, NULL, true)

#define SCENARIO_TEST(name) SCENARIO_TEST_WITH(name, NULL, false)
SCENARIO_TEST(get)
SCENARIO_TEST(post)
SCENARIO_TEST(file_body)
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
        cmocka_unit_test(test_slow_headers),
        cmocka_unit_test(test_slow_body),
        cmocka_unit_test(test_idle_keepalive),
        cmocka_unit_test(test_cap_and_probe),
        cmocka_unit_test(test_headers_hook),
        cmocka_unit_test(test_bind_error),
        cmocka_unit_test(test_localhost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
