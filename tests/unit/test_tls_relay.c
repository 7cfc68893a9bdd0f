/* test_tls_relay.c — unit tests of master/cluster/tls_relay.c on one libuv
 * loop: a TCP connection over loopback whose one end is a "peer" driven by
 * the test (a server lc_tls_channel), whose other end is handed, once its
 * client channel is up, to a relay; the test then plays raft on the relay's
 * socket pair end. Bytes arrive exactly both ways (to raft, the early bytes
 * that came with the handshake first), a peer that stops reading makes the relay stop reading
 * raft (raft's own write queue grows, not the relay's memory), and closing
 * either side or the whole set ends the others. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <raft.h>

#include "lc_buf.h"
#include "test_certs.h"
#include "tls_relay.h"

#define BIG (24u << 20) /* more than the relay's high water and the kernel's buffers */

typedef struct peer_s {
    uv_tcp_t tcp;
    lc_tls_channel_t *ch;
    lc_buf_t plain; /* what raft sent, through the relay */
    bool eof;
    bool reading;
} peer_t;

typedef struct fixture_s {
    uv_loop_t loop;
    uv_tcp_t listener;
    peer_t peer;
    uv_tcp_t *relay_tcp; /* raft_malloc'd: the relay frees it */
    lc_tls_channel_t *relay_ch;
    uv_connect_t connect;
    uv_stream_t *raft;   /* raft's end of the socket pair */
    lc_buf_t raft_in;    /* what the peer sent, through the relay */
    bool raft_eof;
    tls_relays_t set;
    int emptied;
    SSL_CTX *sctx, *cctx;
} fixture_t;

static fixture_t *g; /* the one fixture of the running test */

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)h;
    *buf = uv_buf_init(malloc(suggested), (unsigned)suggested);
}

static void write_done(uv_write_t *req, int status)
{
    (void)status;
    free(req->data);
    free(req);
}

/* Writes a copy of data to s. */
static void write_copy(uv_stream_t *s, const void *data, size_t len)
{
    uv_write_t *req = malloc(sizeof *req);
    req->data = malloc(len);
    memcpy(req->data, data, len);
    uv_buf_t b = uv_buf_init(req->data, (unsigned)len);
    assert_int_equal(uv_write(req, s, &b, 1, write_done), 0);
}

static int send_to_tcp(void *arg, uint8_t *buf, size_t len)
{
    write_copy(arg, buf, len);
    free(buf);
    return 0;
}

static int peer_receive(void *arg, const uint8_t *data, size_t len)
{
    peer_t *p = arg;
    return lc_buf_append(&p->plain, data, len);
}

static void peer_read_cb(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    peer_t *p = s->data;
    if (n < 0)
        p->eof = true;
    else if (n > 0)
        lc_tls_channel_feed(p->ch, (const uint8_t *)buf->base, (size_t)n);
    free(buf->base);
}

static void on_accept(uv_stream_t *l, int status)
{
    assert_int_equal(status, 0);
    peer_t *p = &g->peer;
    uv_tcp_init(&g->loop, &p->tcp);
    assert_int_equal(uv_accept(l, (uv_stream_t *)&p->tcp), 0);
    p->tcp.data = p;
    /* tcp is p's first member: one arg serves send (the stream) and receive (the peer). */
    lc_tls_io_t io = {.arg = p, .send = send_to_tcp, .receive = peer_receive};
    assert_int_equal(lc_tls_channel_new(&p->ch, g->sctx, NULL, &io), 0);
    p->reading = true;
    uv_read_start((uv_stream_t *)&p->tcp, alloc_cb, peer_read_cb);
}

/* The relay side before the relay: the client's handshake. */
static void client_read_cb(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    (void)s;
    if (n > 0)
        assert_int_equal(lc_tls_channel_feed(g->relay_ch, (const uint8_t *)buf->base, (size_t)n),
                         0);
    free(buf->base);
}

static int no_plaintext(void *arg, const uint8_t *data, size_t len)
{
    (void)arg;
    (void)data;
    (void)len;
    fail_msg("plaintext before the relay");
    return 0;
}

static void on_connect(uv_connect_t *req, int status)
{
    (void)req;
    assert_int_equal(status, 0);
    lc_tls_io_t io = {.arg = g->relay_tcp, .send = send_to_tcp, .receive = no_plaintext};
    assert_int_equal(lc_tls_channel_new(&g->relay_ch, g->cctx, "127.0.0.1", &io), 0);
    uv_read_start((uv_stream_t *)g->relay_tcp, alloc_cb, client_read_cb);
}

static void raft_read_cb(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    (void)s;
    if (n < 0)
        g->raft_eof = true;
    else if (n > 0)
        lc_buf_append(&g->raft_in, buf->base, (size_t)n);
    free(buf->base);
}

static void on_empty(void *arg)
{
    ((fixture_t *)arg)->emptied++;
}

/* Runs the loop until cond holds (10 s at most). */
#define RUN_UNTIL(cond)                                                                            \
    do {                                                                                           \
        for (int i_ = 0; i_ < 100000 && !(cond); i_++)                                            \
            if (uv_run(&g->loop, UV_RUN_NOWAIT) == 0 || i_ % 16 == 15)                            \
                usleep(100);                                                                       \
        assert_true(cond);                                                                         \
    } while (0)
#define RUN_UNTIL_OR(cond, say)                                                                    \
    do {                                                                                           \
        for (int i_ = 0; i_ < 100000 && !(cond); i_++)                                            \
            if (uv_run(&g->loop, UV_RUN_NOWAIT) == 0 || i_ % 16 == 15)                            \
                usleep(100);                                                                       \
        if (!(cond))                                                                               \
            say;                                                                                   \
        assert_true(cond);                                                                         \
    } while (0)

static int setup(void **state)
{
    g = calloc(1, sizeof *g);
    assert_int_equal(uv_loop_init(&g->loop), 0);
    g->sctx = server_ctx();
    g->cctx = client_ctx();
    g->set = (tls_relays_t){.on_empty = on_empty, .arg = g};
    struct sockaddr_in addr;
    uv_ip4_addr("127.0.0.1", 0, &addr);
    uv_tcp_init(&g->loop, &g->listener);
    assert_int_equal(uv_tcp_bind(&g->listener, (const struct sockaddr *)&addr, 0), 0);
    assert_int_equal(uv_listen((uv_stream_t *)&g->listener, 4, on_accept), 0);
    struct sockaddr_storage bound;
    int len = sizeof bound;
    uv_tcp_getsockname(&g->listener, (struct sockaddr *)&bound, &len);
    g->relay_tcp = raft_malloc(sizeof *g->relay_tcp);
    uv_tcp_init(&g->loop, g->relay_tcp);
    assert_int_equal(uv_tcp_connect(&g->connect, g->relay_tcp, (const struct sockaddr *)&bound,
                                    on_connect),
                     0);
    RUN_UNTIL(g->relay_ch != NULL && lc_tls_channel_established(g->relay_ch) &&
              g->peer.ch != NULL && lc_tls_channel_established(g->peer.ch));
    uv_read_stop((uv_stream_t *)g->relay_tcp);
    assert_int_equal(tls_relay_start(&g->set, &g->loop, g->relay_tcp, g->relay_ch,
                                     (const uint8_t *)"EARLY", 5, "test peer", &g->raft),
                     0);
    assert_int_equal(g->set.count, 1);
    uv_read_start(g->raft, alloc_cb, raft_read_cb);
    *state = g;
    return 0;
}

static void close_and_free(uv_handle_t *h)
{
    raft_free(h);
}

static int teardown(void **state)
{
    (void)state;
    tls_relays_close_all(&g->set);
    if (!uv_is_closing((uv_handle_t *)g->raft))
        uv_close((uv_handle_t *)g->raft, close_and_free);
    if (!uv_is_closing((uv_handle_t *)&g->peer.tcp))
        uv_close((uv_handle_t *)&g->peer.tcp, NULL);
    uv_close((uv_handle_t *)&g->listener, NULL);
    uv_run(&g->loop, UV_RUN_DEFAULT);
    assert_int_equal(g->set.count, 0);
    assert_int_equal(uv_loop_close(&g->loop), 0);
    lc_tls_channel_free(g->peer.ch);
    lc_buf_free(&g->peer.plain);
    lc_buf_free(&g->raft_in);
    SSL_CTX_free(g->sctx);
    SSL_CTX_free(g->cctx);
    free(g);
    g = NULL;
    return 0;
}

static uint8_t *pattern(size_t n, unsigned seed)
{
    uint8_t *p = malloc(n);
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(i * 31 + seed + i / 4093);
    return p;
}

/* What raft writes arrives at the peer exactly; the peer's bytes that came
 * with the handshake (early), then what it writes, arrive at raft exactly. */
static void test_both_ways(void **state)
{
    (void)state;
    uint8_t *out = pattern(3u << 20, 1), *in = pattern(2u << 20, 2);
    write_copy(g->raft, out, 3u << 20);
    assert_int_equal(lc_tls_channel_write(g->peer.ch, in, 2u << 20), 0);
    RUN_UNTIL_OR(g->peer.plain.len == 3u << 20 && g->raft_in.len == 5 + (2u << 20),
                 fprintf(stderr, "peer got %zu, raft got %zu\n", g->peer.plain.len, g->raft_in.len));
    assert_memory_equal(g->peer.plain.data, out, 3u << 20);
    assert_memory_equal(g->raft_in.data, "EARLY", 5);
    assert_memory_equal(g->raft_in.data + 5, in, 2u << 20);
    free(out);
    free(in);
}

/* A peer that does not read: the relay stops reading raft, so raft's own
 * write queue holds most of what it wrote; once the peer reads, all of it
 * arrives, in order. */
static void test_backpressure(void **state)
{
    (void)state;
    uv_read_stop((uv_stream_t *)&g->peer.tcp);
    uint8_t *out = pattern(BIG, 3);
    write_copy(g->raft, out, BIG);
    for (int i = 0; i < 300; i++)
        uv_run(&g->loop, UV_RUN_NOWAIT);
    size_t held_by_raft = uv_stream_get_write_queue_size(g->raft);
    assert_true(held_by_raft > BIG / 3);
    uv_read_start((uv_stream_t *)&g->peer.tcp, alloc_cb, peer_read_cb);
    RUN_UNTIL(g->peer.plain.len == BIG);
    assert_memory_equal(g->peer.plain.data, out, BIG);
    free(out);
}

/* raft drops its stream: the relay closes the TCP connection (the peer sees
 * EOF) and leaves the set, which says it is empty. */
static void test_raft_closes(void **state)
{
    (void)state;
    uv_close((uv_handle_t *)g->raft, close_and_free);
    RUN_UNTIL(g->peer.eof && g->set.count == 0);
    assert_int_equal(g->emptied, 1);
}

/* The peer goes away: raft reads EOF on its stream. */
static void test_peer_closes(void **state)
{
    (void)state;
    uv_close((uv_handle_t *)&g->peer.tcp, NULL);
    RUN_UNTIL(g->raft_eof && g->set.count == 0);
}

/* The transport closes: every relay ends, raft reads EOF. */
static void test_close_all(void **state)
{
    (void)state;
    tls_relays_close_all(&g->set);
    RUN_UNTIL(g->raft_eof && g->peer.eof && g->set.count == 0);
    assert_int_equal(g->emptied, 1);
}

static int group_setup(void **state)
{
    (void)state;
    return test_certs_setup();
}

static int group_teardown(void **state)
{
    (void)state;
    return test_certs_teardown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_both_ways, setup, teardown),
        cmocka_unit_test_setup_teardown(test_backpressure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_raft_closes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_peer_closes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_close_all, setup, teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
