/* test_tls_taken.c — worker/tls_taken.c, the TLS transport once the records are taken over
 * from OpenSSL, end to end against a real OpenSSL server on 127.0.0.1 (tls_server.h): that
 * the takeover happens (the SSL object freed, what OpenSSL holds for the connection gone) and
 * that LOADWORKER_TLS_OPENSSL_RECORDS=1 prevents it; every AEAD suite of TLS 1.2 and 1.3 and
 * a CBC one (kept by OpenSSL); a server's TLS 1.3 KeyUpdate asking for ours, between answers,
 * right after the handshake (OpenSSL may follow it before the takeover) and while our request
 * is still being written; answers written 1 byte per TCP write; answers of several MB; the
 * server's close_notify then its TCP close while idle, and ours read by the server; bytes
 * outside TLS and a tampered record. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>

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

#define DEADLINE_S 8ull
#define REQUEST_TIMEOUT_MS 3000


/* A client connection and what it heard. */
typedef struct client_s {
    worker_conn_t conn;
    const char *req;
    size_t req_len;
    int done, ok, closed;
    int last_kind;
    uint64_t last_bytes;
    char *body;           /* the last answer's captured body (a copy) */
    size_t body_len;
    int destroyed;
} client_t;

static void on_ready(worker_conn_t *c)
{
    client_t *cl = c->data;
    worker_conn_send(c, cl->req, cl->req_len, false, true, REQUEST_TIMEOUT_MS);
}

static void on_done(worker_conn_t *c, const worker_conn_result_t *r)
{
    client_t *cl = c->data;
    cl->done++;
    cl->last_kind = r->kind;
    cl->last_bytes = r->bytes;
    if (r->kind == WORKER_KIND_OK && r->status == 200)
        cl->ok++;
    free(cl->body);
    cl->body = NULL;
    cl->body_len = 0;
    if (r->body_len > 0 && (cl->body = malloc(r->body_len)) != NULL) {
        memcpy(cl->body, r->body, r->body_len);
        cl->body_len = r->body_len;
    }
    worker_conn_release(c);
    worker_conn_idle(c); /* as a user about to think does */
}

static void on_closed(worker_conn_t *c) { ((client_t *)c->data)->closed++; }
static void on_destroyed(worker_conn_t *c) { ((client_t *)c->data)->destroyed = 1; }

static const worker_conn_cbs_t client_cbs = {
    .ready = on_ready, .done = on_done, .closed = on_closed, .destroyed = on_destroyed,
};

#define CLIENTS 4

typedef struct fixture_s {
    tls_server_t srv;
    worker_tls_t *tls;
    uv_loop_t loop;
    uv_timer_t tick;
    worker_stats_t stats;
    worker_stats_t *statsp;
    char rbuf[64 * 1024];
    client_t clients[CLIENTS];
    int used; /* clients connected */
} fixture_t;

static void on_tick(uv_timer_t *t) { (void)t; }

static bool run_until(fixture_t *f, const int *counter, int want)
{
    uint64_t deadline = uv_hrtime() + DEADLINE_S * 1000000000ull;
    while (*counter < want && uv_hrtime() < deadline)
        uv_run(&f->loop, UV_RUN_ONCE);
    return *counter >= want;
}

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

/* Starts the server (its options are set by the test right after) without the client. */
static void start_server(fixture_t *f)
{
    memset(f, 0, sizeof *f);
    assert_int_equal(tls_server_start(&f->srv, file_in_dir("server.pem"),
                                      file_in_dir("server.key")), 0);
}

/* The client's loop and TLS; openssl_records: with LOADWORKER_TLS_OPENSSL_RECORDS=1. */
static void start_client(fixture_t *f, bool openssl_records)
{
    char json[512], err[256];
    snprintf(json, sizeof json,
             "{\"name\": \"t\", \"target\": \"https://127.0.0.1:%u\", \"duration\": \"1s\","
             " \"tls\": {\"ca_file\": \"ca.pem\"}, \"tasks\": [{\"path\": \"/\"}]}",
             (unsigned)f->srv.port);
    lc_scenario_t sc;
    assert_int_equal(lc_scenario_parse(json, strlen(json), &sc, err, sizeof err), 0);
    if (openssl_records)
        setenv("LOADWORKER_TLS_OPENSSL_RECORDS", "1", 1);
    else
        unsetenv("LOADWORKER_TLS_OPENSSL_RECORDS");
    assert_int_equal(worker_tls_new(&f->tls, &sc, "127.0.0.1", err, sizeof err), 0);
    unsetenv("LOADWORKER_TLS_OPENSSL_RECORDS");
    lc_scenario_free(&sc);
    assert_int_equal(uv_loop_init(&f->loop), 0);
    assert_int_equal(uv_timer_init(&f->loop, &f->tick), 0);
    uv_timer_start(&f->tick, on_tick, 5, 5);
    f->statsp = &f->stats;
}

static const char GET[] = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

/* Connects client i from engine slot `engine`; it sends GET once connected. */
static client_t *connect_client(fixture_t *f, int i, unsigned engine)
{
    client_t *cl = &f->clients[i];
    memset(cl, 0, sizeof *cl);
    cl->req = GET;
    cl->req_len = strlen(GET);
    assert_int_equal(worker_conn_init(&cl->conn, &f->loop, f->rbuf, sizeof f->rbuf,
                                      &client_cbs, cl), 0);
    worker_tls_attach(&cl->conn, f->tls, engine, &f->statsp);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(f->srv.port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    worker_conn_connect(&cl->conn, (const struct sockaddr *)&a, 5000);
    if (i + 1 > f->used)
        f->used = i + 1;
    return cl;
}

/* Sends GET again on cl's open connection and waits for the answer. */
static void again(fixture_t *f, client_t *cl)
{
    int want = cl->done + 1;
    if (cl->conn.state != WORKER_CONN_IDLE)
        fprintf(stderr, "not idle (state %d) after %d answers, %d good, last kind %d\n",
                cl->conn.state, cl->done, cl->ok, cl->last_kind);
    assert_int_equal(cl->conn.state, WORKER_CONN_IDLE);
    worker_conn_send(&cl->conn, GET, strlen(GET), false, true, REQUEST_TIMEOUT_MS);
    assert_true(run_until(f, &cl->done, want));
}

static void stop(fixture_t *f)
{
    for (int i = 0; i < f->used; i++)
        if (!f->clients[i].destroyed)
            worker_conn_destroy(&f->clients[i].conn);
    uv_close((uv_handle_t *)&f->tick, NULL);
    uv_run(&f->loop, UV_RUN_DEFAULT);
    for (int i = 0; i < f->used; i++) {
        assert_true(f->clients[i].destroyed);
        free(f->clients[i].body);
    }
    assert_int_equal(uv_loop_close(&f->loop), 0);
    worker_tls_free(f->tls);
    tls_server_stop(&f->srv);
}

static const tls_conn_t *tls_of(const client_t *cl)
{
    return cl->conn.transport_state;
}

/* Whether cl's records were taken over from OpenSSL. */
static bool taken(const client_t *cl)
{
    const tls_conn_t *t = tls_of(cl);
    return t != NULL && t->taken && t->ssl == NULL;
}

static bool answer_is(const client_t *cl, const char *body)
{
    return cl->body != NULL && cl->body_len == strlen(body) &&
           memcmp(cl->body, body, cl->body_len) == 0;
}

/* ---- Takeover, and the environment that prevents it ---- */

/* Connects a warm-up client (OpenSSL's tables, the slot's cipher contexts), then another one
 * from a slot of its own; returns the OpenSSL bytes the second one holds once idle. */
static long idle_bytes(fixture_t *f, bool openssl_records, int max_version)
{
    start_server(f);
    f->srv.max_version = max_version;
    start_client(f, openssl_records);
    client_t *warm = connect_client(f, 0, 0);
    assert_true(run_until(f, &warm->done, 1));
    run_for(f, 50);
    again(f, warm);
    long before = openssl_count_live;
    client_t *cl = connect_client(f, 1, 0); /* the same slot: a resumed handshake */
    assert_true(run_until(f, &cl->done, 1));
    run_for(f, 100); /* the tickets */
    assert_int_equal(cl->ok, 1);
    assert_true(answer_is(cl, "ok"));
    again(f, cl);
    assert_int_equal(cl->ok, 2);
    long held = openssl_count_live - before;
    assert_true(taken(cl) == !openssl_records);
    assert_true(taken(warm) == !openssl_records);
    assert_true(f->stats.tls_resumed >= 1);
    assert_int_equal(cl->closed, 0);
    stop(f);
    return held;
}

static void test_takeover_frees_openssl(void **state)
{
    fixture_t *f = *state;
    static const int versions[] = {TLS1_3_VERSION, TLS1_2_VERSION};
    for (int v = 0; v < 2; v++) {
        long mine = idle_bytes(f, false, versions[v]);
        long openssl = idle_bytes(f, true, versions[v]);
        fprintf(stderr, "%s: OpenSSL bytes of an idle connection: %ld taken over, %ld with "
                        "LOADWORKER_TLS_OPENSSL_RECORDS=1\n",
                versions[v] == TLS1_3_VERSION ? "TLS 1.3" : "TLS 1.2", mine, openssl);
        assert_true(mine <= 2048);
        assert_true(openssl >= 6000);
    }
}

/* ---- Every suite ---- */

static void suite_round(fixture_t *f, int version, const char *name, bool ours)
{
    start_server(f);
    f->srv.max_version = version;
    if (version == TLS1_3_VERSION)
        f->srv.suites = name;
    else
        f->srv.ciphers = name;
    start_client(f, false);
    client_t *cl = connect_client(f, 0, 0);
    assert_true(run_until(f, &cl->done, 1));
    for (int i = 0; i < 3; i++) {
        run_for(f, 20);
        again(f, cl);
    }
    if (cl->ok != 4 || taken(cl) != ours)
        fprintf(stderr, "%s: %d of 4 answers, taken %d\n", name, cl->ok, taken(cl));
    assert_int_equal(cl->ok, 4);
    assert_true(answer_is(cl, "ok"));
    assert_true(taken(cl) == ours);
    assert_int_equal(cl->closed, 0);
    stop(f);
}

static void test_every_suite(void **state)
{
    fixture_t *f = *state;
    suite_round(f, TLS1_2_VERSION, "ECDHE-ECDSA-AES128-GCM-SHA256", true);
    suite_round(f, TLS1_2_VERSION, "ECDHE-ECDSA-AES256-GCM-SHA384", true);
    suite_round(f, TLS1_2_VERSION, "ECDHE-ECDSA-CHACHA20-POLY1305", true);
    suite_round(f, TLS1_3_VERSION, "TLS_AES_128_GCM_SHA256", true);
    suite_round(f, TLS1_3_VERSION, "TLS_AES_256_GCM_SHA384", true);
    suite_round(f, TLS1_3_VERSION, "TLS_CHACHA20_POLY1305_SHA256", true);
    suite_round(f, TLS1_2_VERSION, "ECDHE-ECDSA-AES128-SHA256", false); /* CBC: OpenSSL's */
}

/* ---- Key updates ---- */

/* The server sends a KeyUpdate asking for ours after each answer: the client follows it,
 * answers with its own, and the server reads the next request under the client's new keys. */
static void test_key_update_between_answers(void **state)
{
    fixture_t *f = *state;
    start_server(f);
    f->srv.key_update = true;
    start_client(f, false);
    client_t *cl = connect_client(f, 0, 0);
    assert_true(run_until(f, &cl->done, 1));
    for (int i = 0; i < 5; i++) {
        run_for(f, 30); /* the KeyUpdate comes in before the next request */
        assert_true(taken(cl));
        again(f, cl);
    }
    assert_int_equal(cl->ok, 6);
    assert_true(answer_is(cl, "ok"));
    assert_int_equal(tls_server_served(&f->srv), 6);
    pthread_mutex_lock(&f->srv.lock);
    int sent = f->srv.key_updates_sent, received = f->srv.key_updates_received;
    pthread_mutex_unlock(&f->srv.lock);
    fprintf(stderr, "KeyUpdates: %d sent by the server, %d answered\n", sent, received);
    assert_true(sent >= 5);
    assert_true(received >= 5); /* each request after one followed the client's own */
    assert_int_equal(cl->closed, 0);
    stop(f);
}

/* The server's KeyUpdate comes right after the handshake, after its tickets or (no_tickets)
 * as the first record after the handshake, which OpenSSL then reads and follows before the
 * records are taken over (TLS 1.3 waits for one record after the handshake). */
static void key_update_right_after_handshake(fixture_t *f, bool no_tickets)
{
    start_server(f);
    f->srv.key_update_early = true;
    f->srv.no_tickets = no_tickets;
    start_client(f, false);
    client_t *cl = connect_client(f, 0, 0);
    assert_true(run_until(f, &cl->done, 1));
    run_for(f, 30);
    again(f, cl);
    run_for(f, 30);
    again(f, cl);
    if (cl->ok != 3)
        fprintf(stderr, "after an early KeyUpdate: %d of 3 answers, last kind %d, taken %d\n",
                cl->ok, cl->last_kind, taken(cl));
    assert_int_equal(cl->ok, 3);
    /* Followed by OpenSSL, the records stay with it (the keylog's secrets are stale); after
     * the takeover (after the tickets, when they came in a read of their own) ours follow. */
    if (no_tickets)
        assert_true(!taken(cl) && tls_of(cl)->keep_openssl);
    assert_int_equal(cl->closed, 0);
    stop(f);
}

static void test_key_update_right_after_handshake(void **state)
{
    key_update_right_after_handshake(*state, false);
}

static void test_key_update_first_record_after_handshake(void **state)
{
    key_update_right_after_handshake(*state, true);
}

/* ---- Records cut anywhere ---- */

static void test_one_byte_writes(void **state)
{
    fixture_t *f = *state;
    static const int versions[] = {TLS1_3_VERSION, TLS1_2_VERSION};
    char *want = malloc(40000);
    assert_non_null(want);
    tls_server_pattern(want, 40000);
    for (int v = 0; v < 2; v++) {
        start_server(f);
        f->srv.max_version = versions[v];
        f->srv.byte_writes = true;
        f->srv.byte_pause_us = 50; /* each byte a read of its own, mostly */
        start_client(f, false);
        client_t *cl = connect_client(f, 0, 0);
        assert_true(run_until(f, &cl->done, 1));
        assert_true(answer_is(cl, "ok"));
        for (int i = 0; i < 3; i++) {
            run_for(f, 20);
            again(f, cl);
            assert_true(answer_is(cl, "ok"));
        }
        assert_true(taken(cl));
        /* Then 40,000 bytes (three records) as fast as the server sends them. */
        f->srv.byte_pause_us = 0;
        f->srv.answer_bytes = 40000;
        again(f, cl);
        assert_int_equal(cl->ok, 5);
        assert_true(cl->body_len == 40000 && memcmp(cl->body, want, 40000) == 0);
        assert_int_equal(cl->closed, 0);
        stop(f);
    }
    free(want);
}

/* ---- Big answers ---- */

static void test_answer_of_several_mb(void **state)
{
    fixture_t *f = *state;
    static const int versions[] = {TLS1_3_VERSION, TLS1_2_VERSION};
    const size_t big = 5u << 20;
    char *want = malloc(WORKER_BODY_CAPTURE_MAX);
    assert_non_null(want);
    tls_server_pattern(want, WORKER_BODY_CAPTURE_MAX);
    for (int v = 0; v < 2; v++) {
        start_server(f);
        f->srv.max_version = versions[v];
        start_client(f, false);
        client_t *cl = connect_client(f, 0, 0);
        assert_true(run_until(f, &cl->done, 1));
        run_for(f, 20);
        assert_true(taken(cl));
        f->srv.answer_bytes = big;
        for (int i = 0; i < 2; i++) {
            again(f, cl);
            assert_int_equal(cl->last_kind, WORKER_KIND_OK);
            assert_true(cl->last_bytes >= big);
            assert_true(cl->body_len == WORKER_BODY_CAPTURE_MAX &&
                        memcmp(cl->body, want, WORKER_BODY_CAPTURE_MAX) == 0);
        }
        assert_int_equal(cl->ok, 3);
        assert_true(taken(cl));
        assert_int_equal(cl->closed, 0);
        stop(f);
    }
    free(want);
}

/* ---- The server's close ---- */

static void test_close_notify_while_idle(void **state)
{
    fixture_t *f = *state;
    static const int versions[] = {TLS1_3_VERSION, TLS1_2_VERSION};
    for (int v = 0; v < 2; v++) {
        start_server(f);
        f->srv.max_version = versions[v];
        f->srv.close_after = 2;
        f->srv.close_pause_ms = 300;
        start_client(f, false);
        client_t *cl = connect_client(f, 0, 0);
        assert_true(run_until(f, &cl->done, 1));
        run_for(f, 20);
        again(f, cl);
        assert_int_equal(cl->ok, 2);
        run_for(f, 100); /* close_notify came; the TCP close has not */
        assert_true(taken(cl));
        assert_true(tls_of(cl)->peer_closed);
        assert_false(tls_of(cl)->failed);
        assert_int_equal(cl->closed, 0);
        assert_true(run_until(f, &cl->closed, 1));
        assert_int_equal(cl->done, 2); /* no request failed: none was in flight */
        assert_int_equal(cl->ok, 2);
        stop(f);
    }
}

/* Our close_notify, when the connection is destroyed, is one the server reads as such. */
static void test_close_notify_from_us(void **state)
{
    fixture_t *f = *state;
    static const int versions[] = {TLS1_3_VERSION, TLS1_2_VERSION};
    for (int v = 0; v < 2; v++) {
        start_server(f);
        f->srv.max_version = versions[v];
        start_client(f, false);
        client_t *cl = connect_client(f, 0, 0);
        assert_true(run_until(f, &cl->done, 1));
        run_for(f, 20);
        again(f, cl);
        assert_true(taken(cl));
        worker_conn_destroy(&cl->conn);
        assert_true(run_until(f, &cl->destroyed, 1));
        uint64_t deadline = uv_hrtime() + 2000000000ull;
        int notified = 0;
        while (notified == 0 && uv_hrtime() < deadline) {
            tls_server_sleep_ms(5);
            pthread_mutex_lock(&f->srv.lock);
            notified = f->srv.close_notifies;
            pthread_mutex_unlock(&f->srv.lock);
        }
        assert_int_equal(notified, 1);
        stop(f);
    }
}

/* The server's KeyUpdate asking for ours comes while our request's body is still being
 * written (a slow reader, small buffers): ours must follow the write in flight, and the rest
 * of the body go under the new keys. */
static void test_key_update_while_we_write(void **state)
{
    fixture_t *f = *state;
    const size_t big = 600u * 1024u;
    start_server(f);
    f->srv.rcvbuf = 32768;
    f->srv.read_delay_ms = 100;
    f->srv.key_update_before_body = true;
    start_client(f, false);
    char *req = malloc(128 + big), *want = malloc(big);
    assert_non_null(req);
    assert_non_null(want);
    client_t *cl = connect_client(f, 0, 0);
    assert_true(run_until(f, &cl->done, 1));
    run_for(f, 20);
    assert_true(taken(cl));
    int sndbuf = 16384;
    assert_int_equal(uv_send_buffer_size((uv_handle_t *)&cl->conn.tcp, &sndbuf), 0);
    for (int round = 1; round <= 3; round++) {
        for (size_t i = 0; i < big; i++)
            want[i] = (char)('a' + (i * 7 + (size_t)round + i / 4096) % 26);
        int n = snprintf(req, 128, "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                   "Content-Length: %zu\r\n\r\n", big);
        memcpy(req + n, want, big);
        worker_conn_send(&cl->conn, req, (size_t)n + big, false, true, REQUEST_TIMEOUT_MS);
        memset(req, 'X', 128 + big);
        assert_true(run_until(f, &cl->done, round + 1));
        if (cl->ok != round + 1)
            fprintf(stderr, "round %d: kind %d\n", round, cl->last_kind);
        assert_int_equal(cl->ok, round + 1);
        assert_true(cl->body_len == big && memcmp(cl->body, want, big) == 0);
    }
    pthread_mutex_lock(&f->srv.lock);
    int received = f->srv.key_updates_received, sent = f->srv.key_updates_sent;
    pthread_mutex_unlock(&f->srv.lock);
    fprintf(stderr, "KeyUpdates while writing: %d sent by the server, %d answered\n", sent,
            received);
    assert_true(sent >= 4 && received >= 3);
    assert_true(taken(cl));
    assert_int_equal(cl->closed, 0);
    stop(f);
    free(req);
    free(want);
}

/* Bytes outside TLS after an answer, while the connection is idle: the connection fails
 * (closed, no answer counted as good) at once. */
static void injected(fixture_t *f, int version, const void *bytes, size_t len, const char *what)
{
    start_server(f);
    f->srv.max_version = version;
    f->srv.inject_after = 2;
    f->srv.inject = bytes;
    f->srv.inject_len = len;
    start_client(f, false);
    client_t *cl = connect_client(f, 0, 0);
    assert_true(run_until(f, &cl->done, 1));
    run_for(f, 20);
    assert_true(taken(cl));
    again(f, cl);
    assert_int_equal(cl->ok, 2);
    if (!run_until(f, &cl->closed, 1))
        fprintf(stderr, "%s: the connection stayed open\n", what);
    assert_int_equal(cl->closed, 1);
    assert_int_equal(cl->done, 2);
    stop(f);
}

static void test_injected_records(void **state)
{
    fixture_t *f = *state;
    static const int versions[] = {TLS1_3_VERSION, TLS1_2_VERSION};
    /* a header whose body is longer than any record may be (16,896 > 16,640) */
    static const uint8_t too_long[] = {23, 3, 3, 0x42, 0x00};
    /* a record of the right shape whose tag cannot match */
    static uint8_t forged[5 + 64];
    forged[0] = 23, forged[1] = 3, forged[2] = 3, forged[3] = 0, forged[4] = 64;
    for (size_t i = 5; i < sizeof forged; i++)
        forged[i] = (uint8_t)(i * 37);
    /* a record too short for any AEAD */
    static const uint8_t tiny[] = {23, 3, 3, 0, 3, 1, 2, 3};
    for (int v = 0; v < 2; v++) {
        injected(f, versions[v], too_long, sizeof too_long, "too long");
        injected(f, versions[v], forged, sizeof forged, "forged");
        injected(f, versions[v], tiny, sizeof tiny, "too short");
    }
}

/* ---- A tampered record ---- */

static void test_tampered_record(void **state)
{
    fixture_t *f = *state;
    static const int versions[] = {TLS1_3_VERSION, TLS1_2_VERSION};
    for (int v = 0; v < 2; v++) {
        start_server(f);
        f->srv.max_version = versions[v];
        f->srv.tamper_answer = 2;
        start_client(f, false);
        client_t *cl = connect_client(f, 0, 0);
        assert_true(run_until(f, &cl->done, 1));
        assert_int_equal(cl->ok, 1);
        run_for(f, 20);
        assert_true(taken(cl));
        uint64_t t0 = uv_hrtime();
        worker_conn_send(&cl->conn, GET, strlen(GET), false, true, REQUEST_TIMEOUT_MS);
        assert_true(run_until(f, &cl->done, 2));
        assert_int_equal(cl->last_kind, WORKER_ERR_TLS);
        assert_true(uv_hrtime() - t0 < 2000000000ull); /* at once, not at the timeout */
        assert_int_equal(cl->ok, 1);
        assert_null(cl->conn.transport_state); /* closed and reset */
        /* The loop goes on: another connection is answered. */
        f->srv.tamper_answer = 0;
        client_t *other = connect_client(f, 1, 0);
        assert_true(run_until(f, &other->done, 1));
        assert_int_equal(other->ok, 1);
        stop(f);
    }
}

int main(void)
{
    /* As worker/main.c; the server's threads write with write(2) to clients that may have
     * closed (a failed connection). */
    signal(SIGPIPE, SIG_IGN);
    if (openssl_count_start() != 0) {
        fprintf(stderr, "CRYPTO_set_mem_functions failed: OpenSSL allocated already\n");
        return 1;
    }
#define T(fn) cmocka_unit_test_setup_teardown(fn, fixture_setup, fixture_teardown)
    const struct CMUnitTest tests[] = {
        T(test_takeover_frees_openssl),
        T(test_every_suite),
        T(test_key_update_between_answers),
        T(test_key_update_right_after_handshake),
        T(test_key_update_first_record_after_handshake),
        T(test_one_byte_writes),
        T(test_answer_of_several_mb),
        T(test_close_notify_while_idle),
        T(test_close_notify_from_us),
        T(test_key_update_while_we_write),
        T(test_injected_records),
        T(test_tampered_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
