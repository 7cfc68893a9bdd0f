/* http_server_fixture.h — what test_http_server and test_http_server_limits share: one
 * lc_http_server in the test thread's loop (echo, file and deferred answers, the headers
 * hook) and one blocking client in a second thread that plays a scenario, with its
 * socket helpers; SCENARIO_TEST makes a test of a scenario. */
#ifndef TESTS_UNIT_HTTP_SERVER_FIXTURE_H
#define TESTS_UNIT_HTTP_SERVER_FIXTURE_H

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
    atomic_int handled, deferred_answered, signalled, hooked, parts_released;
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

#define PARTS_MIDDLE_LEN 100000

static char parts_middle_byte(size_t i)
{
    return (char)('a' + (i * 7) % 26);
}

static void count_part_release(void *arg)
{
    fixture_t *f = arg;
    atomic_fetch_add(&f->parts_released, 1);
}

/* Answers "alpha-", PARTS_MIDDLE_LEN pattern bytes and "-omega" as three parts. */
static void answer_parts(fixture_t *f, lc_http_exchange_t *ex)
{
    static char middle[PARTS_MIDDLE_LEN];
    for (size_t i = 0; i < sizeof middle; i++)
        middle[i] = parts_middle_byte(i);
    lc_http_part_t parts[3] = {
        {.data = "alpha-", .len = 6, .release = count_part_release, .arg = f},
        {.data = middle, .len = sizeof middle, .release = count_part_release, .arg = f},
        {.data = "-omega", .len = 6, .release = count_part_release, .arg = f},
    };
    lc_http_exchange_respond_parts(ex, 200, "text/plain", parts, 3, NULL);
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
    } else if (strcmp(req->path, "/parts") == 0) {
        answer_parts(f, ex);
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

/* test_<name>: runs sc_<name> against a server with limits (NULL: the defaults), and the
 * headers hook when hook is true. */
#define SCENARIO_TEST_WITH(name, limits, hook)                                          \
    static void test_##name(void **state)                                               \
    {                                                                                   \
        (void)state;                                                                    \
        run_scenario_with(sc_##name, limits, hook);                                     \
    }
#define SCENARIO_TEST(name) SCENARIO_TEST_WITH(name, NULL, false)

#endif
