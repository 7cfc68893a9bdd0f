/* test_http_server_limits.c — lc_http_server against slow and numerous clients
 * (http_server_fixture.h): header, body and keep-alive deadlines, the connection cap with
 * its probe slots, and the headers hook that refuses a request before its body. */
#include "http_server_fixture.h"

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

SCENARIO_TEST_WITH(slow_headers, &short_deadlines, false)
SCENARIO_TEST_WITH(slow_body, &short_deadlines, false)
SCENARIO_TEST_WITH(idle_keepalive, &short_deadlines, false)
SCENARIO_TEST_WITH(cap_and_probe, &capped, false)
SCENARIO_TEST_WITH(headers_hook, NULL, true)

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    alarm(30);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slow_headers),
        cmocka_unit_test(test_slow_body),
        cmocka_unit_test(test_idle_keepalive),
        cmocka_unit_test(test_cap_and_probe),
        cmocka_unit_test(test_headers_hook),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

