/* test_h2_mem.c — worker/h2_mem.c: the allocator finds a client session's frame buffer and
 * stream table, their pages leave memory when released (mincore; the table's only while no
 * stream is open), the session then still speaks correct HTTP/2 to an nghttp2 server session,
 * and freeing the session forgets both. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>
#include <nghttp2/nghttp2.h>

#include "h2_mem.h"
#include "lc_scenario_summary.h"

#define NV(n, v) {(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, sizeof(v) - 1, 0}

typedef struct pair_s {
    worker_h2_mem_t mem;
    nghttp2_session *client, *server;
    int requests_seen;      /* complete requests the server received */
    int answers_seen;       /* complete answers the client received */
} pair_t;

static int srv_frame(nghttp2_session *s, const nghttp2_frame *f, void *data)
{
    pair_t *p = data;
    if (f->hd.type == NGHTTP2_HEADERS && (f->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
        /* what nginx answers for an empty file */
        static const nghttp2_nv ok[] = {
            NV(":status", "200"), NV("server", "nginx/1.22.1"),
            NV("date", "Sat, 05 Dec 2026 07:40:00 GMT"), NV("content-type", "text/html"),
            NV("content-length", "0"), NV("last-modified", "Fri, 04 Dec 2026 10:00:00 GMT"),
            NV("etag", "\"6750a9a0-0\""), NV("accept-ranges", "bytes")};
        p->requests_seen++;
        assert_int_equal(nghttp2_submit_response(s, f->hd.stream_id, ok, 8, NULL), 0);
    }
    return 0;
}

static int cli_frame(nghttp2_session *s, const nghttp2_frame *f, void *data)
{
    (void)s;
    if (f->hd.type == NGHTTP2_HEADERS && (f->hd.flags & NGHTTP2_FLAG_END_STREAM))
        ((pair_t *)data)->answers_seen++;
    return 0;
}

/* Hands all that `from` has to send to `to`, which must accept every byte; whether any moved. */
static bool move(nghttp2_session *from, nghttp2_session *to)
{
    const uint8_t *out;
    ssize_t n;
    bool moved = false;
    while ((n = nghttp2_session_mem_send(from, &out)) > 0) {
        assert_int_equal(nghttp2_session_mem_recv(to, out, (size_t)n), n);
        moved = true;
    }
    assert_int_equal(n, 0);
    return moved;
}

/* Moves bytes both ways until neither session has more. */
static void pump(pair_t *p)
{
    for (int round = 0; round < 100; round++) {
        bool moved = move(p->client, p->server);
        if (!move(p->server, p->client) && !moved)
            return;
    }
    fail_msg("the sessions never went quiet");
}

static void pair_open(pair_t *p)
{
    nghttp2_session_callbacks *cb;
    assert_int_equal(nghttp2_session_callbacks_new(&cb), 0);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, cli_frame);
    assert_int_equal(worker_h2_mem_client_new(&p->client, cb, p, NULL, &p->mem), 0);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, srv_frame);
    assert_int_equal(nghttp2_session_server_new(&p->server, cb, p), 0);
    nghttp2_session_callbacks_del(cb);
    assert_int_equal(nghttp2_submit_settings(p->client, NGHTTP2_FLAG_NONE, NULL, 0), 0);
    assert_int_equal(nghttp2_submit_settings(p->server, NGHTTP2_FLAG_NONE, NULL, 0), 0);
    pump(p);
}

static void request(pair_t *p)
{
    static const nghttp2_nv get[] = {NV(":method", "GET"), NV(":scheme", "https"),
                                     NV(":authority", "127.0.0.1:8443"), NV(":path", "/"),
                                     NV("user-agent", "loadcluster/0.16"), NV("accept", "*/*")};
    assert_true(nghttp2_submit_request(p->client, NULL, get, 6, NULL, NULL) > 0);
    pump(p);
}

/* How many of the block's whole pages are in memory. */
static size_t resident_pages(const worker_h2_mem_block_t *b)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), n = b->len / page, in = 0;
    unsigned char vec[16];
    assert_true(n > 0 && n <= sizeof vec);
    assert_int_equal(mincore(b->at, n * page, vec), 0);
    for (size_t i = 0; i < n; i++)
        in += vec[i] & 1u;
    return in;
}

static void assert_paged(const worker_h2_mem_block_t *b, size_t min)
{
    assert_non_null(b->at);
    assert_true(b->len >= min);
    assert_int_equal((uintptr_t)b->at % (size_t)sysconf(_SC_PAGESIZE), 0);
}

static size_t whole(const worker_h2_mem_block_t *b)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return b->len / page * page;
}

static void test_blocks_found(void **state)
{
    (void)state;
    pair_t p = {0};
    pair_open(&p);
    assert_paged(&p.mem.framebuf, WORKER_H2_MEM_FRAMEBUF_MIN);
    assert_paged(&p.mem.table, WORKER_H2_MEM_TABLE_MIN);
    assert_true(p.mem.live >= p.mem.framebuf.len + p.mem.table.len);
    nghttp2_session_del(p.client);
    assert_null(p.mem.framebuf.at); /* freed with the session, and forgotten */
    assert_null(p.mem.table.at);
    assert_int_equal(p.mem.live, 0); /* every byte it took, given back */
    nghttp2_session_del(p.server);
}

/* Released pages leave memory; the session then speaks as before (the server accepts every
 * byte, the answers arrive), the pages coming back as they are used. */
static void test_release_and_speak_again(void **state)
{
    (void)state;
    pair_t p = {0};
    pair_open(&p);
    request(&p);
    assert_int_equal(p.answers_seen, 1);
    assert_true(resident_pages(&p.mem.framebuf) >= 1); /* frames were written at its start */
    assert_true(resident_pages(&p.mem.table) >= 1);    /* the stream was noted in it */
    assert_int_equal(worker_h2_mem_release(&p.mem), whole(&p.mem.framebuf) + whole(&p.mem.table));
    assert_int_equal(resident_pages(&p.mem.framebuf), 0);
    assert_int_equal(resident_pages(&p.mem.table), 0);
    for (int i = 2; i <= 4; i++) {
        request(&p);
        assert_int_equal(p.requests_seen, i);
        assert_int_equal(p.answers_seen, i);
        assert_true(resident_pages(&p.mem.framebuf) >= 1);
        assert_true(worker_h2_mem_release(&p.mem) > 0);
    }
    nghttp2_session_del(p.client);
    nghttp2_session_del(p.server);
}

/* While a stream is open its entry is in the table: the table stays, the frame buffer (all
 * sent) goes; once the answer has closed the stream, the table goes too. */
static void test_open_stream_keeps_table(void **state)
{
    (void)state;
    pair_t p = {0};
    pair_open(&p);
    static const nghttp2_nv get[] = {NV(":method", "GET"), NV(":scheme", "http"),
                                     NV(":authority", "t"), NV(":path", "/")};
    assert_true(nghttp2_submit_request(p.client, NULL, get, 4, NULL, NULL) > 0);
    assert_true(move(p.client, p.server)); /* the request; its answer waits */
    assert_false(nghttp2_session_want_write(p.client));
    assert_int_equal(worker_h2_mem_release(&p.mem), whole(&p.mem.framebuf));
    assert_int_equal(resident_pages(&p.mem.table), p.mem.table.len / (size_t)sysconf(_SC_PAGESIZE));
    pump(&p); /* the answer */
    assert_int_equal(p.answers_seen, 1);
    assert_int_equal(worker_h2_mem_release(&p.mem), whole(&p.mem.framebuf) + whole(&p.mem.table));
    assert_int_equal(resident_pages(&p.mem.table), 0);
    nghttp2_session_del(p.client);
    nghttp2_session_del(p.server);
}

/* What a session holds once idle and released: what lc_scenario_summary counts for a user's
 * own HTTP/2 connection ("h2" of bytes_per_idle_user_parts), within a quarter below it. */
static void test_idle_session_estimate(void **state)
{
    (void)state;
    pair_t p = {0};
    pair_open(&p);
    for (int i = 0; i < 3; i++)
        request(&p);
    size_t released = worker_h2_mem_release(&p.mem);
    assert_int_equal(released, whole(&p.mem.framebuf) + whole(&p.mem.table));
    size_t held = p.mem.live - released, estimate = lc_scenario_h2_session_bytes();
    printf("an idle session holds %zu B (estimate %zu B)\n", held, estimate);
    assert_true(held <= estimate);
    assert_true(held >= estimate / 4 * 3);
    nghttp2_session_del(p.client);
    nghttp2_session_del(p.server);
}

/* Without a known buffer there is nothing to release; large blocks after creation are
 * ordinary ones. */
static void test_nothing_known(void **state)
{
    (void)state;
    worker_h2_mem_t m = {0};
    assert_int_equal(worker_h2_mem_release(&m), 0);
    nghttp2_mem mem = worker_h2_mem(&m);
    void *big = mem.malloc(64 * 1024, mem.mem_user_data);
    void *zeroed = mem.calloc(1024, 16, mem.mem_user_data);
    assert_non_null(big);
    assert_non_null(zeroed);
    assert_null(m.framebuf.at);
    assert_null(m.table.at);
    assert_null(mem.calloc(SIZE_MAX / 2, 4, mem.mem_user_data)); /* the product overflows */
    mem.free(big, mem.mem_user_data);
    mem.free(zeroed, mem.mem_user_data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocks_found),
        cmocka_unit_test(test_release_and_speak_again),
        cmocka_unit_test(test_open_stream_keeps_table),
        cmocka_unit_test(test_idle_session_estimate),
        cmocka_unit_test(test_nothing_known),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
