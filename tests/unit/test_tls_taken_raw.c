/* test_tls_taken_raw.c — worker/tls_taken.c against a server that takes its own records over
 * too (worker_tls_record_take on the server's SSL, with the directions swapped) and can then
 * send what OpenSSL never would, well authenticated: a ticket cut across records, its header
 * too; two tickets in one record; a KeyUpdate not ending its record; an unknown inner content
 * type; a fatal alert, a Finished after the handshake; TLS 1.2's HelloRequest and warning
 * alerts; answers cut into records of 1 byte, empty records, TLS 1.3 padding. The first
 * answer of a connection is plain (TLS 1.3: OpenSSL reads the first record after the
 * handshake); the second carries the case. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <cmocka.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "http_conn.h"
#include "lc_scenario.h"
#include "stats.h"
#include "test_certs.h"
#include "tls.h"
#include "tls_internal.h"
#include "tls_record.h"

#define DEADLINE_S 8ull
#define REQUEST_TIMEOUT_MS 3000

/* ---- The raw server: one connection ---- */

typedef struct raw_s raw_t;
typedef void (*raw_case_t)(raw_t *r);

struct raw_s {
    SSL_CTX *ctx;
    int listen_fd, fd;
    uint16_t port;
    pthread_t thread;
    int max_version;
    raw_case_t second; /* what answers the second request */
    worker_tls_seen_t seen; /* the server's: in is what it read */
    worker_tls_record_t sv; /* the server's keys: w its own, r the client's */
    EVP_CIPHER_CTX *wctx, *rctx; /* its directions' keyed contexts */
    uint8_t *in;       /* ciphertext read, not yet opened */
    size_t in_len;
    char plain[65536]; /* request bytes opened, not yet answered */
    size_t plain_len;
    int requests;      /* requests read */
    int client_updates; /* the client's KeyUpdates read */
    bool client_closed; /* the client's close_notify read */
    bool failed;        /* the server's own error (printed) */
};

static int raw_bio_read(BIO *b, char *out, int size)
{
    raw_t *r = BIO_get_data(b);
    BIO_clear_retry_flags(b);
    ssize_t n = recv(r->fd, out, (size_t)size, 0);
    if (n <= 0)
        return -1;
    worker_tls_tally(&r->seen.in, out, (size_t)n);
    return (int)n;
}

static int raw_bio_write(BIO *b, const char *data, int len)
{
    raw_t *r = BIO_get_data(b);
    BIO_clear_retry_flags(b);
    ssize_t n = send(r->fd, data, (size_t)len, MSG_NOSIGNAL);
    if (n != len)
        return -1;
    worker_tls_tally(&r->seen.out, data, (size_t)len);
    return len;
}

static long raw_bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)b, (void)num, (void)ptr;
    return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static int raw_bio_create(BIO *b)
{
    BIO_set_init(b, 1);
    return 1;
}

static void raw_keylog(const SSL *ssl, const char *line)
{
    raw_t *r = SSL_get_app_data(ssl);
    worker_tls_seen_keylog(&r->seen, line);
}

static void raw_fail(raw_t *r, const char *what)
{
    fprintf(stderr, "raw server: %s\n", what);
    r->failed = true;
}

/* Seals plain as records of content type `type`, at most `chunk` bytes each, and sends
 * them in one write. */
static void raw_send(raw_t *r, uint8_t type, const void *plain, size_t len, size_t chunk)
{
    size_t cap = len + (len / chunk + 1) * WORKER_TLS_RECORD_OVERHEAD;
    uint8_t *out = malloc(cap), *at = out;
    const uint8_t *p = plain;
    if (out == NULL) {
        raw_fail(r, "out of memory");
        return;
    }
    size_t off = 0;
    do {
        size_t n = len - off < chunk ? len - off : chunk;
        size_t sealed = worker_tls_record_seal(&r->sv, &r->wctx, type, p + off, n, at);
        if (sealed == 0) {
            free(out);
            raw_fail(r, "seal failed");
            return;
        }
        at += sealed;
        off += n;
    } while (off < len);
    /* may fail: a client that failed the connection closed it */
    (void)!send(r->fd, out, (size_t)(at - out), MSG_NOSIGNAL);
    free(out);
}

static const char ANSWER[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
#define ANSWER_LEN (sizeof ANSWER - 1)

static void raw_answer(raw_t *r)
{
    raw_send(r, WORKER_TLS_CT_DATA, ANSWER, ANSWER_LEN, WORKER_TLS_RECORD_MAX_PLAIN);
}

/* Our KeyUpdate: sealed under the old keys, then ours move on. */
static void raw_key_update(raw_t *r, uint8_t requested)
{
    const uint8_t msg[] = {24, 0, 0, 1, requested};
    raw_send(r, WORKER_TLS_CT_HANDSHAKE, msg, sizeof msg, 16);
    worker_tls_keyed_drop(&r->wctx);
    if (worker_tls_record_update(&r->sv, &r->sv.w) != 0)
        raw_fail(r, "key update");
}

/* Opens whole records of r->in; false at the end of the connection or on an error. */
static bool raw_open_all(raw_t *r)
{
    static uint8_t plain[WORKER_TLS_RECORD_MAX_BODY];
    size_t off = 0;
    while (r->in_len - off >= WORKER_TLS_RECORD_HEADER) {
        const uint8_t *rec = r->in + off;
        size_t body = (size_t)rec[3] << 8 | rec[4];
        if (body > WORKER_TLS_RECORD_MAX_BODY) {
            raw_fail(r, "a record too long from the client");
            return false;
        }
        if (r->in_len - off < WORKER_TLS_RECORD_HEADER + body)
            break;
        uint8_t type;
        size_t n;
        const char *why;
        if (worker_tls_record_open(&r->sv, &r->rctx, rec, WORKER_TLS_RECORD_HEADER + body, plain,
                                   &type, &n, &why) != 0) {
            raw_fail(r, why);
            return false;
        }
        off += WORKER_TLS_RECORD_HEADER + body;
        if (type == WORKER_TLS_CT_ALERT && n == 2 && plain[1] == 0) {
            r->client_closed = true;
            return false;
        }
        if (type == WORKER_TLS_CT_HANDSHAKE && n == 5 && plain[0] == 24) {
            r->client_updates++;
            worker_tls_keyed_drop(&r->rctx);
            if (worker_tls_record_update(&r->sv, &r->sv.r) != 0)
                raw_fail(r, "key update");
            continue;
        }
        if (type != WORKER_TLS_CT_DATA || r->plain_len + n > sizeof r->plain) {
            raw_fail(r, "an unexpected record from the client");
            return false;
        }
        memcpy(r->plain + r->plain_len, plain, n);
        r->plain_len += n;
    }
    memmove(r->in, r->in + off, r->in_len - off);
    r->in_len -= off;
    return true;
}

/* Answers each request (a GET: its head only) until the connection ends. */
static void raw_serve(raw_t *r)
{
    r->in = malloc(2 * (WORKER_TLS_RECORD_HEADER + WORKER_TLS_RECORD_MAX_BODY));
    if (r->in == NULL)
        return;
    for (;;) {
        char *end;
        r->plain[r->plain_len] = '\0';
        while ((end = strstr(r->plain, "\r\n\r\n")) != NULL) {
            size_t used = (size_t)(end + 4 - r->plain);
            memmove(r->plain, r->plain + used, r->plain_len - used);
            r->plain_len -= used;
            r->plain[r->plain_len] = '\0';
            r->requests++;
            if (r->requests == 2 && r->second != NULL)
                r->second(r);
            else
                raw_answer(r);
        }
        ssize_t n = recv(r->fd, r->in + r->in_len,
                         WORKER_TLS_RECORD_HEADER + WORKER_TLS_RECORD_MAX_BODY, 0);
        if (n <= 0)
            return;
        r->in_len += (size_t)n;
        if (!raw_open_all(r))
            return;
        if (r->plain_len + 1 >= sizeof r->plain)
            return;
    }
}

static void *raw_main(void *arg)
{
    raw_t *r = arg;
    r->fd = accept(r->listen_fd, NULL, NULL);
    if (r->fd < 0)
        return NULL;
    int one = 1;
    setsockopt(r->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    BIO_METHOD *m = BIO_meth_new(BIO_TYPE_SOURCE_SINK, "raw");
    BIO_meth_set_read(m, raw_bio_read);
    BIO_meth_set_write(m, raw_bio_write);
    BIO_meth_set_ctrl(m, raw_bio_ctrl);
    BIO_meth_set_create(m, raw_bio_create);
    BIO *b = BIO_new(m);
    SSL *ssl = SSL_new(r->ctx);
    BIO_set_data(b, r);
    SSL_set_bio(ssl, b, b);
    SSL_set_app_data(ssl, r);
    SSL_set_num_tickets(ssl, 0); /* the server's records end with its Finished */
    if (r->max_version != 0)
        SSL_set_max_proto_version(ssl, r->max_version);
    if (SSL_accept(ssl) != 1) {
        raw_fail(r, "handshake");
    } else {
        /* Taken as the client's (w: the client's keys), its directions swapped: what this
         * server wrote counts as "in" for the keys of the server's direction. */
        worker_tls_seen_t swapped = r->seen;
        swapped.in = r->seen.out;
        swapped.out = r->seen.in;
        swapped.in_at_ready = r->seen.out.records;
        swapped.out_at_ready = r->seen.in.records;
        worker_tls_record_t rec;
        if (worker_tls_record_take(&rec, ssl, &swapped) != 0) {
            raw_fail(r, "take");
        } else {
            r->sv = rec;
            r->sv.w = rec.r;
            r->sv.r = rec.w;
            SSL_set_shutdown(ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
            SSL_free(ssl);
            ssl = NULL;
            raw_serve(r);
        }
    }
    SSL_free(ssl);
    BIO_meth_free(m);
    ERR_clear_error();
    return NULL;
}

static void raw_start(raw_t *r, int max_version, raw_case_t second)
{
    memset(r, 0, sizeof *r);
    r->fd = -1;
    r->max_version = max_version;
    r->second = second;
    r->ctx = SSL_CTX_new(TLS_server_method());
    assert_non_null(r->ctx);
    assert_int_equal(SSL_CTX_use_certificate_chain_file(r->ctx, file_in_dir("server.pem")), 1);
    assert_int_equal(SSL_CTX_use_PrivateKey_file(r->ctx, file_in_dir("server.key"),
                                                 SSL_FILETYPE_PEM), 1);
    SSL_CTX_set_keylog_callback(r->ctx, raw_keylog);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    r->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(r->listen_fd >= 0);
    assert_int_equal(bind(r->listen_fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(r->listen_fd, 4), 0);
    assert_int_equal(getsockname(r->listen_fd, (struct sockaddr *)&a, &alen), 0);
    r->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&r->thread, NULL, raw_main, r), 0);
}

static void raw_stop(raw_t *r)
{
    shutdown(r->listen_fd, SHUT_RDWR);
    if (r->fd >= 0)
        shutdown(r->fd, SHUT_RDWR);
    pthread_join(r->thread, NULL);
    close(r->listen_fd);
    if (r->fd >= 0)
        close(r->fd);
    free(r->in);
    worker_tls_keyed_drop(&r->wctx);
    worker_tls_keyed_drop(&r->rctx);
    SSL_CTX_free(r->ctx);
}

/* ---- The client ---- */

typedef struct client_s {
    worker_conn_t conn;
    int done, ok, closed, destroyed, last_kind;
} client_t;

static const char GET[] = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

static void on_ready(worker_conn_t *c)
{
    worker_conn_send(c, GET, strlen(GET), false, true, REQUEST_TIMEOUT_MS);
}

static void on_done(worker_conn_t *c, const worker_conn_result_t *r)
{
    client_t *cl = c->data;
    cl->done++;
    cl->last_kind = r->kind;
    if (r->kind == WORKER_KIND_OK && r->status == 200 && r->body_len == 2 &&
        memcmp(r->body, "ok", 2) == 0)
        cl->ok++;
    worker_conn_release(c);
}

static void on_closed(worker_conn_t *c) { ((client_t *)c->data)->closed++; }
static void on_destroyed(worker_conn_t *c) { ((client_t *)c->data)->destroyed = 1; }

static const worker_conn_cbs_t client_cbs = {
    .ready = on_ready, .done = on_done, .closed = on_closed, .destroyed = on_destroyed,
};

typedef struct fixture_s {
    raw_t srv;
    worker_tls_t *tls;
    uv_loop_t loop;
    uv_timer_t tick;
    worker_stats_t stats;
    worker_stats_t *statsp;
    char rbuf[64 * 1024];
    client_t cl;
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

/* How the second request must end. */
enum expect { ANSWERED, FAILS_TLS };

/* One connection to a raw server whose second answer is `second`; returns the client. */
static client_t *run_case(fixture_t *f, int version, raw_case_t second, enum expect expect,
                          const char *name)
{
    memset(f, 0, sizeof *f);
    raw_start(&f->srv, version, second);
    char json[512], err[256];
    snprintf(json, sizeof json,
             "{\"name\": \"t\", \"target\": \"https://127.0.0.1:%u\", \"duration\": \"1s\","
             " \"tls\": {\"ca_file\": \"ca.pem\"}, \"tasks\": [{\"path\": \"/\"}]}",
             (unsigned)f->srv.port);
    lc_scenario_t sc;
    assert_int_equal(lc_scenario_parse(json, strlen(json), &sc, err, sizeof err), 0);
    unsetenv("LOADWORKER_TLS_OPENSSL_RECORDS");
    assert_int_equal(worker_tls_new(&f->tls, &sc, "127.0.0.1", err, sizeof err), 0);
    lc_scenario_free(&sc);
    assert_int_equal(uv_loop_init(&f->loop), 0);
    assert_int_equal(uv_timer_init(&f->loop, &f->tick), 0);
    uv_timer_start(&f->tick, on_tick, 5, 5);
    f->statsp = &f->stats;
    client_t *cl = &f->cl;
    assert_int_equal(worker_conn_init(&cl->conn, &f->loop, f->rbuf, sizeof f->rbuf,
                                      &client_cbs, cl), 0);
    worker_tls_attach(&cl->conn, f->tls, 0, &f->statsp);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(f->srv.port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    worker_conn_connect(&cl->conn, (const struct sockaddr *)&a, 5000);
    assert_true(run_until(f, &cl->done, 1));
    assert_int_equal(cl->ok, 1);
    run_for(f, 20);
    const tls_conn_t *t = cl->conn.transport_state;
    assert_true(t != NULL && t->taken);
    worker_conn_send(&cl->conn, GET, strlen(GET), false, true, REQUEST_TIMEOUT_MS);
    assert_true(run_until(f, &cl->done, 2));
    bool as_expected = expect == ANSWERED ? cl->ok == 2 : cl->last_kind == WORKER_ERR_TLS;
    if (!as_expected)
        fprintf(stderr, "%s (%s): the second request ended with kind %d, %d good answers\n",
                name, version == TLS1_2_VERSION ? "TLS 1.2" : "TLS 1.3", cl->last_kind,
                cl->ok);
    if (expect == ANSWERED && as_expected) {
        /* and the connection goes on */
        run_for(f, 20);
        if (cl->conn.state != WORKER_CONN_IDLE)
            fprintf(stderr, "%s: not idle after the second answer (state %d, closed %d)\n",
                    name, cl->conn.state, cl->closed);
        assert_int_equal(cl->conn.state, WORKER_CONN_IDLE);
        worker_conn_send(&cl->conn, GET, strlen(GET), false, true, REQUEST_TIMEOUT_MS);
        if (!run_until(f, &cl->done, 3))
            fprintf(stderr, "%s: no third answer\n", name);
        assert_true(cl->done == 3);
        as_expected = cl->ok == 3;
        if (!as_expected)
            fprintf(stderr, "%s: the third request ended with kind %d\n", name, cl->last_kind);
    }
    worker_conn_destroy(&cl->conn);
    uv_close((uv_handle_t *)&f->tick, NULL);
    uv_run(&f->loop, UV_RUN_DEFAULT);
    assert_true(cl->destroyed);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    worker_tls_free(f->tls);
    raw_stop(&f->srv);
    assert_false(f->srv.failed);
    assert_true(as_expected);
    return cl;
}

/* ---- The cases ---- */

/* A NewSessionTicket of 4 + len bytes (its body meaningless: the client skips it). */
static size_t ticket(uint8_t *out, size_t len)
{
    out[0] = 4, out[1] = (uint8_t)(len >> 16), out[2] = (uint8_t)(len >> 8), out[3] = (uint8_t)len;
    for (size_t i = 0; i < len; i++)
        out[4 + i] = (uint8_t)(i * 13 + 5);
    return 4 + len;
}

static void ticket_across_records(raw_t *r)
{
    uint8_t t[4 + 300];
    size_t n = ticket(t, 300);
    raw_send(r, WORKER_TLS_CT_HANDSHAKE, t, n, 100); /* 4 records: 100, 100, 100, 4 */
    raw_answer(r);
}

static void ticket_header_across_records(raw_t *r)
{
    uint8_t t[4 + 40];
    size_t n = ticket(t, 40);
    raw_send(r, WORKER_TLS_CT_HANDSHAKE, t, 2, 2);         /* 04 00 */
    raw_send(r, WORKER_TLS_CT_HANDSHAKE, t + 2, n - 2, 64); /* 00 28, the body */
    raw_answer(r);
}

static void two_tickets_one_record(raw_t *r)
{
    uint8_t t[2 * (4 + 60)];
    size_t n = ticket(t, 60);
    n += ticket(t + n, 60);
    raw_send(r, WORKER_TLS_CT_HANDSHAKE, t, n, sizeof t);
    raw_answer(r);
}

static void ticket_then_key_update_one_record(raw_t *r)
{
    uint8_t t[4 + 60 + 5];
    size_t n = ticket(t, 60);
    memcpy(t + n, (const uint8_t[]){24, 0, 0, 1, 0}, 5);
    raw_send(r, WORKER_TLS_CT_HANDSHAKE, t, n + 5, sizeof t);
    worker_tls_keyed_drop(&r->wctx);
    if (worker_tls_record_update(&r->sv, &r->sv.w) != 0)
        raw_fail(r, "key update");
    raw_answer(r);
}

static void key_update_then_answer(raw_t *r)
{
    raw_key_update(r, 0);
    raw_answer(r);
}

static void key_update_requested_then_answer(raw_t *r)
{
    raw_key_update(r, 1);
    raw_answer(r);
}

static void key_update_with_data_in_its_record(raw_t *r)
{
    uint8_t m[5 + 4];
    memcpy(m, (const uint8_t[]){24, 0, 0, 1, 0}, 5);
    ticket(m + 5, 0); /* another handshake message after it, in the same record */
    raw_send(r, WORKER_TLS_CT_HANDSHAKE, m, sizeof m, sizeof m);
    raw_answer(r);
}

static void unknown_inner_type(raw_t *r)
{
    raw_send(r, 24, "\x01\x00\x00", 3, 16); /* heartbeat */
    raw_answer(r);
}

static void answer_in_one_byte_records(raw_t *r)
{
    raw_send(r, WORKER_TLS_CT_DATA, ANSWER, ANSWER_LEN, 1);
}

static void empty_and_padded_records(raw_t *r)
{
    raw_send(r, WORKER_TLS_CT_DATA, "", 0, 16);
    if (r->sv.tls13) {
        /* "HTTP/1.1 " as application data, then 100 bytes of padding */
        uint8_t padded[9 + 1 + 100] = {0};
        memcpy(padded, "HTTP/1.1 ", 9);
        padded[9] = WORKER_TLS_CT_DATA;
        raw_send(r, 0, padded, sizeof padded, sizeof padded);
        raw_send(r, WORKER_TLS_CT_DATA, ANSWER + 9, ANSWER_LEN - 9, 16384);
    } else {
        raw_answer(r);
    }
    raw_send(r, WORKER_TLS_CT_DATA, "", 0, 16);
}

static void hello_request(raw_t *r)
{
    raw_send(r, WORKER_TLS_CT_HANDSHAKE, "\x00\x00\x00\x00", 4, 16);
    raw_answer(r);
}

static void warning_alert(raw_t *r)
{
    raw_send(r, WORKER_TLS_CT_ALERT, "\x01\x64", 2, 16); /* warning, no_renegotiation */
    raw_answer(r);
}

static void fatal_alert(raw_t *r)
{
    raw_send(r, WORKER_TLS_CT_ALERT, "\x02\x28", 2, 16); /* fatal, handshake_failure */
}

static void finished_after_takeover(raw_t *r)
{
    uint8_t m[4 + 12] = {20, 0, 0, 12};
    raw_send(r, WORKER_TLS_CT_HANDSHAKE, m, sizeof m, sizeof m);
    raw_answer(r);
}

static void test_tickets(void **state)
{
    fixture_t *f = *state;
    run_case(f, TLS1_3_VERSION, ticket_across_records, ANSWERED, "a ticket across records");
    run_case(f, TLS1_3_VERSION, two_tickets_one_record, ANSWERED, "two tickets in a record");
}

/* RFC 8446 5.1: a handshake message may be cut anywhere across records, its header too
 * (tls_taken.c's on_handshake once wanted a message's 4-byte header whole in one record). */
static void test_ticket_header_across_records(void **state)
{
    run_case(*state, TLS1_3_VERSION, ticket_header_across_records, ANSWERED,
             "a ticket's header across records");
}

static void test_key_updates(void **state)
{
    fixture_t *f = *state;
    run_case(f, TLS1_3_VERSION, key_update_then_answer, ANSWERED, "a KeyUpdate");
    client_t *cl = run_case(f, TLS1_3_VERSION, key_update_requested_then_answer, ANSWERED,
                            "a KeyUpdate asking for ours");
    (void)cl;
    assert_true(f->srv.client_updates >= 1); /* ours came, and the third request after it */
    run_case(f, TLS1_3_VERSION, ticket_then_key_update_one_record, ANSWERED,
             "a ticket then a KeyUpdate in one record");
    /* RFC 8446 5.1: a KeyUpdate must end its record. */
    run_case(f, TLS1_3_VERSION, key_update_with_data_in_its_record, FAILS_TLS,
             "a KeyUpdate with a message after it in its record");
}

/* Zero-length application data records (RFC 8446 5.1, RFC 5246 6.2.1: allowed), one after
 * the answer, while the connection is idle; and TLS 1.3 padding. */
static void test_empty_and_padded_records(void **state)
{
    fixture_t *f = *state;
    run_case(f, TLS1_3_VERSION, empty_and_padded_records, ANSWERED, "empty and padded records");
    run_case(f, TLS1_2_VERSION, empty_and_padded_records, ANSWERED, "empty records");
}

static void test_odd_records(void **state)
{
    fixture_t *f = *state;
    static const int versions[] = {TLS1_3_VERSION, TLS1_2_VERSION};
    for (int v = 0; v < 2; v++) {
        run_case(f, versions[v], answer_in_one_byte_records, ANSWERED, "1-byte records");
        run_case(f, versions[v], fatal_alert, FAILS_TLS, "a fatal alert");
        run_case(f, versions[v], finished_after_takeover, FAILS_TLS, "a Finished");
    }
    run_case(f, TLS1_3_VERSION, unknown_inner_type, FAILS_TLS, "an unknown inner type");
    run_case(f, TLS1_2_VERSION, hello_request, ANSWERED, "a HelloRequest");
    run_case(f, TLS1_2_VERSION, warning_alert, ANSWERED, "a warning alert");
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN); /* as worker/main.c */
#define T(fn) cmocka_unit_test_setup_teardown(fn, fixture_setup, fixture_teardown)
    const struct CMUnitTest tests[] = {
        T(test_tickets),
        T(test_ticket_header_across_records),
        T(test_key_updates),
        T(test_empty_and_padded_records),
        T(test_odd_records),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
