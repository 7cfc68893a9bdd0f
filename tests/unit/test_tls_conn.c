/* test_tls_conn.c — worker/tls_conn.c, the TLS transport, against a real TLS server on
 * 127.0.0.1 (tls_server.h): what an idle connection holds in OpenSSL allocations, counted by
 * an allocator of our own (CRYPTO_set_mem_functions), after a full handshake and after a
 * resumed one; and big bodies both ways, through a server that reads slowly from a small
 * receive buffer, arriving whole and in order on one keep-alive connection. */
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
#include <openssl/crypto.h>
#include <uv.h>

#include "http_conn.h"
#include "lc_scenario.h"
#include "stats.h"
#include "test_certs.h"
#include "tls.h"
#include "tls_internal.h"
#include "openssl_count.h"
#include "tls_server.h"

/* Issue 16's goal per idle TLS user is 8 KiB. OpenSSL 3.0's SSL object alone takes 7.6 KiB,
 * and what an idle SSL keeps besides (its session, two AEAD contexts, the handshake hash,
 * locks) about 7 more: so once the handshake is done the transport takes the records over
 * (tls_record.h) and frees the SSL. What is left of OpenSSL's is the engine slot's session:
 * after a full handshake each connection here has a slot, and so a session (~6.3 KiB, the
 * peer's certificate in it), of its own; resumed ones share one. With the records left to
 * OpenSSL (LOADWORKER_TLS_OPENSSL_RECORDS=1) the SSL stays: the old bound. */
#define IDLE_TLS_BYTES_GOAL 8192
#define IDLE_TLS_TAKEN_OPENSSL_MAX 256
#define IDLE_TLS_BYTES_MAX (20 * 1024)
/* common/lc_scenario_summary.c's estimate of an idle TLS connection. */
_Static_assert(sizeof(tls_conn_t) <= 368, "TLS_IDLE_CONN_BYTES in lc_scenario_summary.c");
#define IDLE_CONNS 16
#define BIG_BODY (600u * 1024u)


/* A client connection and what it heard. */
typedef struct client_s {
    worker_conn_t conn;
    const char *req;
    size_t req_len;
    bool capture;
    const char *expect_body; /* the body the answer must carry (captured), or NULL */
    size_t expect_len;
    int done, ok, closed;
    bool body_matches, destroyed;
    bool idle_on_answer; /* tells its connection it is idle from the answer's callback */
} client_t;

static void on_ready(worker_conn_t *c)
{
    client_t *cl = c->data;
    worker_conn_send(c, cl->req, cl->req_len, false, cl->capture, 10000);
}

static void on_done(worker_conn_t *c, const worker_conn_result_t *r)
{
    client_t *cl = c->data;
    cl->done++;
    if (r->kind == WORKER_KIND_OK && r->status == 200)
        cl->ok++;
    else
        fprintf(stderr, "request ended with kind %d status %d\n", r->kind, r->status);
    cl->body_matches = cl->expect_body == NULL ||
                       (r->body_len == cl->expect_len &&
                        memcmp(r->body, cl->expect_body, r->body_len) == 0);
    worker_conn_release(c);
    if (cl->idle_on_answer)
        worker_conn_idle(c); /* as a user about to think does (worker/user.c) */
}

static void on_closed(worker_conn_t *c) { ((client_t *)c->data)->closed++; }
static void on_destroyed(worker_conn_t *c) { ((client_t *)c->data)->destroyed = true; }

static const worker_conn_cbs_t client_cbs = {
    .ready = on_ready, .done = on_done, .closed = on_closed, .destroyed = on_destroyed,
};

typedef struct fixture_s {
    tls_server_t srv;
    worker_tls_t *tls;
    uv_loop_t loop;
    uv_timer_t tick; /* keeps uv_run(ONCE) returning while a test waits */
    worker_stats_t stats;
    worker_stats_t *statsp;
    char rbuf[64 * 1024];
    client_t clients[2 * IDLE_CONNS + 1];
} fixture_t;

static void on_tick(uv_timer_t *t) { (void)t; }

/* Runs the loop until *counter reaches want or 10 s pass; returns whether it did. */
static bool run_until(fixture_t *f, const int *counter, int want)
{
    uint64_t deadline = uv_hrtime() + 10ull * 1000000000ull;
    while (*counter < want && uv_hrtime() < deadline)
        uv_run(&f->loop, UV_RUN_ONCE);
    return *counter >= want;
}

/* Runs the loop for ms milliseconds. */
static void run_for(fixture_t *f, unsigned ms)
{
    uint64_t until = uv_hrtime() + (uint64_t)ms * 1000000ull;
    while (uv_hrtime() < until)
        uv_run(&f->loop, UV_RUN_ONCE);
}

static int fixture_setup(void **state)
{
    static fixture_t f;
    memset(&f, 0, sizeof f);
    if (test_certs_setup() != 0)
        return -1;
    char err[256];
    assert_int_equal(worker_tls_ca_dir_set(g_dir, err, sizeof err), 0);
    *state = &f;
    return 0;
}

static int fixture_teardown(void **state)
{
    (void)state;
    worker_tls_ca_dir_set(NULL, NULL, 0);
    return test_certs_teardown();
}

/* Starts the server (rcvbuf and delay: see tls_server_t) and the client's loop and TLS. */
static void start(fixture_t *f, int rcvbuf, int read_delay_ms)
{
    assert_int_equal(tls_server_start(&f->srv, file_in_dir("server.pem"),
                                      file_in_dir("server.key")), 0);
    f->srv.rcvbuf = rcvbuf;
    f->srv.read_delay_ms = read_delay_ms;
    char json[512], err[256];
    snprintf(json, sizeof json,
             "{\"name\": \"t\", \"target\": \"https://127.0.0.1:%u\", \"duration\": \"1s\","
             " \"tls\": {\"ca_file\": \"ca.pem\"}, \"tasks\": [{\"path\": \"/\"}]}",
             (unsigned)f->srv.port);
    lc_scenario_t sc;
    assert_int_equal(lc_scenario_parse(json, strlen(json), &sc, err, sizeof err), 0);
    assert_int_equal(worker_tls_new(&f->tls, &sc, "127.0.0.1", err, sizeof err), 0);
    lc_scenario_free(&sc);
    assert_int_equal(uv_loop_init(&f->loop), 0);
    assert_int_equal(uv_timer_init(&f->loop, &f->tick), 0);
    uv_timer_start(&f->tick, on_tick, 5, 5);
    f->statsp = &f->stats;
}

/* Connects client i from engine slot `engine`; it sends req once connected. */
static void connect_client(fixture_t *f, int i, unsigned engine, const char *req)
{
    client_t *cl = &f->clients[i];
    memset(cl, 0, sizeof *cl);
    cl->req = req;
    cl->req_len = strlen(req);
    assert_int_equal(worker_conn_init(&cl->conn, &f->loop, f->rbuf, sizeof f->rbuf,
                                      &client_cbs, cl), 0);
    worker_tls_attach(&cl->conn, f->tls, engine, &f->statsp);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(f->srv.port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    worker_conn_connect(&cl->conn, (const struct sockaddr *)&a, 5000);
}

static void stop(fixture_t *f, int clients)
{
    for (int i = 0; i < clients; i++)
        worker_conn_destroy(&f->clients[i].conn);
    uv_close((uv_handle_t *)&f->tick, NULL);
    uv_run(&f->loop, UV_RUN_DEFAULT); /* every close callback */
    for (int i = 0; i < clients; i++)
        assert_true(f->clients[i].destroyed);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    worker_tls_free(f->tls);
    tls_server_stop(&f->srv);
}

static const char GET[] = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

/* Opens n connections one after the other from engine slots first.. (each its own: a full
 * handshake) or all from slot `first` (resumed), each answering one request and then idle;
 * returns the OpenSSL bytes they hold, per connection. A user about to think tells its
 * connection so from the answer's callback (worker/user.c), inside the read that brought the
 * answer, while OpenSSL still holds its record; the record buffers, kept while a connection
 * is busy, go at the end of that read (and of any read after, such as session tickets). */
static long idle_bytes(fixture_t *f, int from, int n, unsigned first, bool own_slots)
{
    long before = openssl_count_live;
    for (int i = from; i < from + n; i++) {
        connect_client(f, i, own_slots ? first + (unsigned)(i - from) : first, GET);
        f->clients[i].idle_on_answer = true;
        assert_true(run_until(f, &f->clients[i].done, 1));
        assert_int_equal(f->clients[i].ok, 1);
    }
    run_for(f, 100); /* session tickets and anything else after the answers */
    for (int i = from; i < from + n; i++)
        assert_int_equal(f->clients[i].closed, 0);
    return (openssl_count_live - before) / n;
}

/* Idle bytes per connection: after full handshakes (a slot and session each), resumed. */
static void measure_idle(fixture_t *f, long *full, long *resumed)
{
    start(f, 0, 0);
    /* A first connection: OpenSSL's lazily built tables, and slot 0's session. */
    connect_client(f, 0, 0, GET);
    assert_true(run_until(f, &f->clients[0].done, 1));
    assert_int_equal(f->clients[0].ok, 1);
    *full = idle_bytes(f, 1, IDLE_CONNS, 1, true);
    *resumed = idle_bytes(f, 1 + IDLE_CONNS, IDLE_CONNS, 0, false);
    fprintf(stderr, "OpenSSL bytes per idle TLS connection: %ld after a full handshake, %ld "
                    "resumed (our tls_conn_t: %zu; issue 16's goal %d); handshakes %llu full, "
                    "%llu resumed\n",
            *full, *resumed, sizeof(tls_conn_t), IDLE_TLS_BYTES_GOAL,
            (unsigned long long)f->stats.tls_handshakes,
            (unsigned long long)f->stats.tls_resumed);
    assert_true(f->stats.tls_resumed >= IDLE_CONNS);
    stop(f, 2 * IDLE_CONNS + 1);
}

static void test_idle_connection_memory(void **state)
{
    long full, resumed;
    measure_idle(*state, &full, &resumed);
    assert_true(resumed <= IDLE_TLS_TAKEN_OPENSSL_MAX);
    assert_true(full + (long)sizeof(tls_conn_t) <= IDLE_TLS_BYTES_GOAL);
}

static void test_idle_connection_memory_openssl_records(void **state)
{
    long full, resumed;
    assert_int_equal(setenv("LOADWORKER_TLS_OPENSSL_RECORDS", "1", 1), 0);
    measure_idle(*state, &full, &resumed);
    unsetenv("LOADWORKER_TLS_OPENSSL_RECORDS");
    assert_true(resumed > IDLE_TLS_BYTES_GOAL); /* the SSL object stayed */
    assert_true(resumed <= IDLE_TLS_BYTES_MAX);
    assert_true(full <= IDLE_TLS_BYTES_MAX);
}

static void fill(char *b, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++)
        b[i] = (char)('a' + (i * 7 + seed + i / 4096) % 26);
}

/* After a GET, 600 KB up and the same back, three times on one connection, from a 16 KB send
 * buffer to a server that reads its 32 KB receive buffer after a pause: the request cannot
 * go at once, and the caller's request bytes are overwritten right after each send, as the
 * next user's render would. */
static void test_big_bodies_both_ways(void **state)
{
    fixture_t *f = *state;
    start(f, 32768, 100);
    size_t head_cap = 128, cap = head_cap + BIG_BODY;
    char *req = malloc(cap), *want = malloc(BIG_BODY);
    assert_non_null(req);
    assert_non_null(want);
    client_t *cl = &f->clients[0];
    connect_client(f, 0, 0, GET);
    assert_true(run_until(f, &cl->done, 1));
    int sndbuf = 16384;
    assert_int_equal(uv_send_buffer_size((uv_handle_t *)&cl->conn.tcp, &sndbuf), 0);
    for (int round = 1; round <= 3; round++) {
        fill(want, BIG_BODY, (unsigned)round);
        int n = snprintf(req, head_cap, "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                        "Content-Length: %u\r\n\r\n", BIG_BODY);
        memcpy(req + n, want, BIG_BODY);
        worker_conn_send(&cl->conn, req, (size_t)n + BIG_BODY, false, true, 10000);
        cl->expect_body = want;
        cl->expect_len = BIG_BODY;
        memset(req, 'X', cap); /* the caller's bytes are gone after the send */
        assert_true(run_until(f, &cl->done, round + 1));
        assert_int_equal(cl->ok, round + 1);
        assert_true(cl->body_matches);
        assert_int_equal(cl->closed, 0);
    }
    assert_int_equal(tls_server_served(&f->srv), 4);
    assert_int_equal(f->stats.tls_handshakes, 1);
    stop(f, 1);
    free(req);
    free(want);
}

int main(void)
{
    /* Before OpenSSL allocates anything. */
    if (openssl_count_start() != 0) {
        fprintf(stderr, "CRYPTO_set_mem_functions failed: OpenSSL allocated already\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_idle_connection_memory_openssl_records,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_idle_connection_memory, fixture_setup,
                                        fixture_teardown),
        cmocka_unit_test_setup_teardown(test_big_bodies_both_ways, fixture_setup,
                                        fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
