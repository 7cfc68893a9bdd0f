/* fuzz_response.c — the worker's HTTP response parsing (worker/http_conn.c:
 * llhttp with the engine's settings and callbacks) on arbitrary server
 * bytes. The connection's TCP handle is initialised but never connected,
 * and a transport that writes nothing stands in for plain TCP, so bytes go
 * straight to worker_conn_feed; a closed connection is "reconnected" the
 * same way (a few times per input), and requests follow each other on a
 * kept-alive one as the engine sends them.
 *
 * Input: a flags byte (HEAD request, body capture, chunk sizes, kept headers),
 * then the bytes the server sends. Property: a complete response has a status
 * from 100 to 999 and counts no more bytes than were fed; its kept headers are
 * name/value pairs, each NUL-terminated, whose names are wanted ones. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "fuzz_util.h"
#include "http_conn.h"
#include "stats.h"

#define MAX_CONNECTS 8

typedef struct harness_s {
    worker_conn_t conn;
    bool head, capture, want;
    bool destroyed;
    size_t fed;          /* bytes fed since the request was sent */
    size_t responses, failures;
} harness_t;

static uv_loop_t loop;
static char rbuf[64 << 10];

static void fake_start(worker_conn_t *c) { worker_conn_ready(c); }
static int fake_write(worker_conn_t *c, const char *buf, size_t len) { return 0; }
static void fake_read(worker_conn_t *c, const char *buf, size_t len) { worker_conn_feed(c, buf, len); }

static const worker_transport_ops_t fake_transport = {
    .name = "fuzz", .start = fake_start, .write = fake_write, .read = fake_read,
};

static const char *const want_names[] = {"set-cookie", "location"};
static const size_t want_lens[] = {10, 8};
static const worker_hdr_want_t want = {.names = want_names, .lens = want_lens, .n = 2};

static void send_request(harness_t *h)
{
    static const char get[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    static const char head[] = "HEAD / HTTP/1.1\r\nHost: x\r\n\r\n";
    h->fed = 0;
    worker_conn_want_headers(&h->conn, h->want ? &want : NULL);
    worker_conn_send(&h->conn, h->head ? head : get, h->head ? sizeof head - 1 : sizeof get - 1,
                     h->head, h->capture, 30000);
}

static void on_ready(worker_conn_t *c)
{
    send_request(c->data);
}

/* Kept headers: "name\0value\0" pairs, the names wanted ones (none kept unless asked). */
static void check_headers(const harness_t *h, const worker_conn_result_t *r)
{
    FUZZ_CHECK(h->want || r->headers_len == 0, "%zu bytes of headers kept unasked", r->headers_len);
    size_t pos = 0;
    while (pos < r->headers_len) {
        const char *name = r->headers + pos;
        const char *nul = memchr(name, '\0', r->headers_len - pos);
        FUZZ_CHECK(nul != NULL, "a kept name without its NUL");
        FUZZ_CHECK(strcmp(name, "set-cookie") == 0 || strcmp(name, "location") == 0,
                   "kept a header named '%s'", name);
        const char *value = nul + 1;
        size_t left = r->headers_len - (size_t)(value - r->headers);
        FUZZ_CHECK(left > 0 && memchr(value, '\0', left) != NULL, "a kept value without its NUL");
        pos = (size_t)(value + strlen(value) + 1 - r->headers);
    }
}

static void on_done(worker_conn_t *c, const worker_conn_result_t *r)
{
    harness_t *h = c->data;
    if (r->kind == WORKER_KIND_OK) {
        h->responses++;
        FUZZ_CHECK((r->status >= 100 && r->status <= 999) || fuzz_ignored("status-zero"),
                   "status %d", r->status);
        FUZZ_CHECK(r->bytes <= h->fed, "%llu bytes counted, %zu fed",
                   (unsigned long long)r->bytes, h->fed);
        FUZZ_CHECK(r->body_len <= WORKER_BODY_CAPTURE_MAX, "captured %zu", r->body_len);
        if (r->body_len > 0)
            FUZZ_CHECK(r->body != NULL, "a body length without a body");
        check_headers(h, r);
    } else {
        h->failures++;
    }
}

static void on_closed(worker_conn_t *c) {}

static void on_destroyed(worker_conn_t *c)
{
    harness_t *h = c->data;
    h->destroyed = true;
}

static const worker_conn_cbs_t cbs = {
    .ready = on_ready, .done = on_done, .closed = on_closed, .destroyed = on_destroyed,
};

/* What worker_conn_connect and its connect callback do, without a socket. */
static void fake_connect(harness_t *h)
{
    worker_conn_t *c = &h->conn;
    if (uv_tcp_init(&loop, &c->tcp) != 0)
        abort();
    c->tcp.data = c;
    c->handles++;
    c->tcp_open = true;
    c->bytes = 0;
    c->state = WORKER_CONN_CONNECTING;
    c->transport->start(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool loop_ready;
    if (!loop_ready) {
        if (uv_loop_init(&loop) != 0)
            abort();
        loop_ready = true;
    }
    fuzz_in_t in = {data, size};
    uint8_t flags = fuzz_u8(&in);
    harness_t *h = calloc(1, sizeof *h);
    if (h == NULL)
        abort();
    h->head = flags & 1;
    h->capture = flags & 2;
    h->want = flags & 8;
    uint32_t rng = flags;
    if (worker_conn_init(&h->conn, &loop, rbuf, sizeof rbuf, &cbs, h) != 0)
        abort();
    h->conn.transport = &fake_transport;
    int connects = 0;
    while (in.n > 0) {
        worker_conn_t *c = &h->conn;
        if (c->state == WORKER_CONN_CLOSED) {
            if (++connects > MAX_CONNECTS)
                break;
            fake_connect(h);
        }
        if (c->state == WORKER_CONN_IDLE)
            send_request(h);
        if (c->state != WORKER_CONN_BUSY)
            break;
        rng = rng * 1103515245u + 12345u;
        size_t max = (flags & 4) ? 1 + (rng >> 16) % 8 : 1 + (rng >> 16) % 2048;
        size_t len;
        const char *chunk = (const char *)fuzz_bytes(&in, max, &len);
        h->fed += len;
        c->transport->read(c, chunk, len);
        /* A closing connection finishes on the loop (done or closed follows). */
        while (c->state == WORKER_CONN_CLOSING)
            uv_run(&loop, UV_RUN_ONCE);
    }
    worker_conn_destroy(&h->conn);
    while (!h->destroyed)
        uv_run(&loop, UV_RUN_ONCE);
    free(h);
    return 0;
}
