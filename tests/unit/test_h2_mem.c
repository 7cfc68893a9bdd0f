/* test_h2_mem.c — worker/h2_mem.c: the allocator finds a client session's frame buffer,
 * stream table and HPACK rings; their pages leave memory when released (pagemap; the table's
 * only while no stream is open, a ring's only while its table is empty), rings without a
 * table are never in memory, the session struct and small blocks are carved from the spare
 * room the caller gives, the session then still speaks correct HTTP/2 to an nghttp2 server
 * session, and freeing the session forgets every block. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <nghttp2/nghttp2.h>

#include "asan_poison.h"
#include "h2_mem.h"
#include "page_pool.h"
#include "lc_scenario_summary.h"

#define NV(n, v) {(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, sizeof(v) - 1, 0}

typedef struct pair_s {
    worker_h2_mem_t mem;   /* the client's */
    char *home;            /* the page its spare room is, as worker/h2_session.c gives it */
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

/* A client (allocating through p->mem) and a server, SETTINGS exchanged. no_tables: the
 * client keeps no HPACK table either way, as a user's own connection (h2_session.c). */
static void pair_open(pair_t *p, bool no_tables)
{
    nghttp2_session_callbacks *cb;
    nghttp2_option *opt;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    assert_non_null(p->home = worker_page_pool_take(page));
    worker_h2_mem_init(&p->mem, p->home + 256, page - 256); /* 256: the caller's own state */
    assert_int_equal(nghttp2_session_callbacks_new(&cb), 0);
    assert_int_equal(nghttp2_option_new(&opt), 0);
    if (no_tables)
        nghttp2_option_set_max_deflate_dynamic_table_size(opt, 0);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, cli_frame);
    assert_int_equal(worker_h2_mem_client_new(&p->client, cb, p, opt, &p->mem), 0);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, srv_frame);
    assert_int_equal(nghttp2_session_server_new(&p->server, cb, p), 0);
    nghttp2_session_callbacks_del(cb);
    nghttp2_option_del(opt);
    nghttp2_settings_entry none = {NGHTTP2_SETTINGS_HEADER_TABLE_SIZE, 0};
    assert_int_equal(nghttp2_submit_settings(p->client, NGHTTP2_FLAG_NONE, &none, no_tables ? 1 : 0),
                     0);
    assert_int_equal(nghttp2_submit_settings(p->server, NGHTTP2_FLAG_NONE, NULL, 0), 0);
    pump(p);
}

static void pair_close(pair_t *p)
{
    nghttp2_session_del(p->client);
    nghttp2_session_del(p->server);
    worker_page_pool_give(p->home, (size_t)sysconf(_SC_PAGESIZE));
}

static void request(pair_t *p)
{
    static const nghttp2_nv get[] = {NV(":method", "GET"), NV(":scheme", "https"),
                                     NV(":authority", "127.0.0.1:8443"), NV(":path", "/"),
                                     NV("user-agent", "loadcluster/0.16"), NV("accept", "*/*")};
    assert_true(nghttp2_submit_request(p->client, NULL, get, 6, NULL, NULL) > 0);
    pump(p);
}

static const worker_h2_mem_block_t *blk(const pair_t *p, worker_h2_mem_which_t w)
{
    return &p->mem.block[w];
}

/* The bytes of the pages block b spans. */
static size_t spanned(const worker_h2_mem_block_t *b)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (b->len + page - 1) / page * page;
}

/* How many of the pages block b spans are in memory as its own (/proc/self/pagemap: present
 * and mapped here only). A page only read so far maps the kernel's shared zero page, which
 * is present but not ours, and counts in no process's resident size. */
static size_t resident_pages(const worker_h2_mem_block_t *b)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), n = spanned(b) / page, in = 0;
    FILE *f = fopen("/proc/self/pagemap", "rb");
    assert_non_null(f);
    assert_int_equal(fseeko(f, (off_t)((uintptr_t)b->at / page * sizeof(uint64_t)), SEEK_SET), 0);
    for (size_t i = 0; i < n; i++) {
        uint64_t e;
        assert_int_equal(fread(&e, sizeof e, 1, f), 1);
        in += (e >> 63 & 1u) && (e >> 56 & 1u); /* present, exclusively mapped */
    }
    fclose(f);
    return in;
}

static void assert_paged(const worker_h2_mem_block_t *b, size_t min)
{
    assert_non_null(b->at);
    assert_true(b->len >= min);
    assert_int_equal((uintptr_t)b->at % (size_t)sysconf(_SC_PAGESIZE), 0);
}

/* The pages of the frame buffer, the stream table and both rings. */
static size_t all_blocks(const pair_t *p)
{
    size_t n = 0;
    for (int w = 0; w < WORKER_H2_MEM_BLOCKS; w++)
        n += spanned(blk(p, w));
    return n;
}

static void test_blocks_found(void **state)
{
    (void)state;
    pair_t p = {0};
    pair_open(&p, false);
    assert_paged(blk(&p, WORKER_H2_MEM_FRAMEBUF), WORKER_H2_MEM_FRAMEBUF_MIN);
    assert_paged(blk(&p, WORKER_H2_MEM_STREAMS), WORKER_H2_MEM_TABLE_MIN);
    assert_paged(blk(&p, WORKER_H2_MEM_DEFLATE_RING), WORKER_H2_MEM_HPACK_RING);
    assert_paged(blk(&p, WORKER_H2_MEM_INFLATE_RING), WORKER_H2_MEM_HPACK_RING);
    size_t big = 0;
    for (int w = 0; w < WORKER_H2_MEM_BLOCKS; w++)
        big += blk(&p, w)->len;
    assert_true(p.mem.live > big);
    /* The session struct is the first block made: carved at the start of the spare room. */
    assert_ptr_equal((char *)p.client, p.mem.spare + 16);
    assert_true(p.mem.spare_used > p.mem.spare_len / 2);
    nghttp2_session_del(p.client);
    for (int w = 0; w < WORKER_H2_MEM_BLOCKS; w++)
        assert_null(blk(&p, w)->at); /* freed with the session, and forgotten */
    assert_int_equal(p.mem.live, 0); /* every byte it took, given back */
    nghttp2_session_del(p.server);
    worker_page_pool_give(p.home, (size_t)sysconf(_SC_PAGESIZE));
}

/* Released pages leave memory; the session then speaks as before (the server accepts every
 * byte, the answers arrive), the pages coming back as they are used. Without tables the
 * rings are never in memory. */
static void test_release_and_speak_again(void **state)
{
    (void)state;
    pair_t p = {0};
    pair_open(&p, true);
    request(&p);
    assert_int_equal(p.answers_seen, 1);
    assert_true(resident_pages(blk(&p, WORKER_H2_MEM_FRAMEBUF)) >= 1); /* frames written */
    assert_true(resident_pages(blk(&p, WORKER_H2_MEM_STREAMS)) >= 1);  /* the stream noted */
    assert_int_equal(worker_h2_mem_release(&p.mem, p.client), all_blocks(&p));
    for (int w = 0; w < WORKER_H2_MEM_BLOCKS; w++)
        assert_int_equal(resident_pages(blk(&p, w)), 0);
    for (int i = 2; i <= 4; i++) {
        request(&p);
        assert_int_equal(p.requests_seen, i);
        assert_int_equal(p.answers_seen, i);
        assert_true(resident_pages(blk(&p, WORKER_H2_MEM_FRAMEBUF)) >= 1);
        assert_int_equal(resident_pages(blk(&p, WORKER_H2_MEM_DEFLATE_RING)), 0);
        assert_int_equal(resident_pages(blk(&p, WORKER_H2_MEM_INFLATE_RING)), 0);
        assert_int_equal(worker_h2_mem_release(&p.mem, p.client), all_blocks(&p));
    }
    pair_close(&p);
}

/* While a stream is open its entry is in the table: the table stays, the frame buffer (all
 * sent) goes; once the answer has closed the stream, the table goes too. */
static void test_open_stream_keeps_table(void **state)
{
    (void)state;
    pair_t p = {0};
    pair_open(&p, true);
    static const nghttp2_nv get[] = {NV(":method", "GET"), NV(":scheme", "http"),
                                     NV(":authority", "t"), NV(":path", "/")};
    assert_true(nghttp2_submit_request(p.client, NULL, get, 4, NULL, NULL) > 0);
    assert_true(move(p.client, p.server)); /* the request; its answer waits */
    assert_false(nghttp2_session_want_write(p.client));
    const worker_h2_mem_block_t *streams = blk(&p, WORKER_H2_MEM_STREAMS);
    assert_int_equal(worker_h2_mem_release(&p.mem, p.client), all_blocks(&p) - spanned(streams));
    assert_int_equal(resident_pages(streams), spanned(streams) / (size_t)sysconf(_SC_PAGESIZE));
    pump(&p); /* the answer */
    assert_int_equal(p.answers_seen, 1);
    assert_int_equal(worker_h2_mem_release(&p.mem, p.client), all_blocks(&p));
    assert_int_equal(resident_pages(streams), 0);
    pair_close(&p);
}

/* With the default tables both rings hold entries and stay; once the client announces a
 * table of 0 and the server acknowledges it, the decoder's table is empty and its ring's
 * page goes, the encoder's (still holding request headers) stays; answers still arrive. */
static void test_ring_kept_while_its_table_holds(void **state)
{
    (void)state;
    pair_t p = {0};
    pair_open(&p, false);
    request(&p);
    request(&p);
    const worker_h2_mem_block_t *deflate = blk(&p, WORKER_H2_MEM_DEFLATE_RING),
                                *inflate = blk(&p, WORKER_H2_MEM_INFLATE_RING);
    assert_true(nghttp2_session_get_hd_deflate_dynamic_table_size(p.client) > 0);
    assert_true(nghttp2_session_get_hd_inflate_dynamic_table_size(p.client) > 0);
    size_t kept = spanned(deflate) + spanned(inflate);
    assert_int_equal(worker_h2_mem_release(&p.mem, p.client), all_blocks(&p) - kept);
    assert_int_equal(resident_pages(deflate), 1);
    assert_int_equal(resident_pages(inflate), 1);
    nghttp2_settings_entry none = {NGHTTP2_SETTINGS_HEADER_TABLE_SIZE, 0};
    assert_int_equal(nghttp2_submit_settings(p.client, NGHTTP2_FLAG_NONE, &none, 1), 0);
    pump(&p);
    assert_int_equal(nghttp2_session_get_hd_inflate_dynamic_table_size(p.client), 0);
    assert_int_equal(worker_h2_mem_release(&p.mem, p.client), all_blocks(&p) - spanned(deflate));
    assert_int_equal(resident_pages(inflate), 0);
    assert_int_equal(resident_pages(deflate), 1);
    request(&p);
    assert_int_equal(p.answers_seen, 3);
    assert_int_equal(nghttp2_session_get_hd_inflate_dynamic_table_size(p.client), 0);
    pair_close(&p);
}

/* A session without tables, idle and released, holds nothing outside its page: what
 * lc_scenario_summary counts for a user's own HTTP/2 connection ("h2" of
 * bytes_per_idle_user_parts) is that page. */
static void test_idle_session_estimate(void **state)
{
    (void)state;
    pair_t p = {0};
    pair_open(&p, true);
    for (int i = 0; i < 3; i++)
        request(&p);
    size_t released = worker_h2_mem_release(&p.mem, p.client);
    assert_int_equal(released, all_blocks(&p));
    size_t held = p.mem.live - released, estimate = lc_scenario_h2_session_bytes();
    printf("an idle session holds %zu B, all in its page's spare room of %zu B (estimate: the "
           "page, %zu B)\n", held, p.mem.spare_len, estimate);
    assert_int_equal(held, p.mem.spare_used); /* nothing in the heap, nothing freed */
    assert_true(p.mem.spare_used <= p.mem.spare_len);
    assert_int_equal(estimate, (size_t)sysconf(_SC_PAGESIZE));
    pair_close(&p);
}

/* Blocks made while the session is created are carved from the spare room as far as it
 * goes (not one of 0 bytes), then come from malloc; a carved block's room is not handed out again; one that
 * grows moves to malloc with its contents; none is carved once the session exists. */
static void test_carving(void **state)
{
    (void)state;
    static _Alignas(16) char spare[256]; /* zeros; poisoned under ASan while not carved */
    worker_h2_mem_t m;
    worker_h2_mem_init(&m, spare, sizeof spare);
    nghttp2_mem mem = worker_h2_mem(&m);
    m.creating = true; /* as inside worker_h2_mem_client_new */
    char *a = mem.malloc(100, mem.mem_user_data), *b = mem.calloc(2, 60, mem.mem_user_data);
    assert_true(a >= spare && a + 100 <= spare + sizeof spare);
    assert_true(b < spare || b >= spare + sizeof spare); /* 128 taken, 144 asked: no room */
    assert_int_equal(b[119], 0);
    memset(a, 'x', 100);
    mem.free(b, mem.mem_user_data);
    size_t used = m.spare_used;
    mem.free(a, mem.mem_user_data);
    assert_int_equal(m.spare_used, used);
    assert_int_equal(m.live, 0);
    char *z = mem.malloc(0, mem.mem_user_data); /* nothing to carve: malloc's */
    assert_true(z == NULL || z < spare || z >= spare + sizeof spare);
    mem.free(z, mem.mem_user_data);
    m.creating = false;
    char *c = mem.malloc(16, mem.mem_user_data);
    assert_true(c < spare || c >= spare + sizeof spare);
    mem.free(c, mem.mem_user_data);
    WORKER_UNPOISON(spare, sizeof spare);
    memset(spare, 0, sizeof spare);
    worker_h2_mem_init(&m, spare, sizeof spare);
    m.creating = true;
    char *d = mem.malloc(64, mem.mem_user_data);
    m.creating = false;
    assert_true(d >= spare && d < spare + sizeof spare);
    memset(d, 'y', 64);
    char *e = mem.realloc(d, 500, mem.mem_user_data);
    assert_true(e < spare || e >= spare + sizeof spare);
    assert_int_equal(e[0], 'y');
    assert_int_equal(e[63], 'y');
    mem.free(e, mem.mem_user_data);
    assert_int_equal(m.live, 0);
    WORKER_UNPOISON(spare, sizeof spare);
}

/* Without a known buffer there is nothing to release; large blocks after creation are
 * ordinary ones. */
static void test_nothing_known(void **state)
{
    (void)state;
    worker_h2_mem_t m;
    worker_h2_mem_init(&m, NULL, 0);
    assert_int_equal(worker_h2_mem_release(&m, NULL), 0);
    nghttp2_mem mem = worker_h2_mem(&m);
    void *big = mem.malloc(64 * 1024, mem.mem_user_data);
    void *zeroed = mem.calloc(1024, 16, mem.mem_user_data);
    assert_non_null(big);
    assert_non_null(zeroed);
    assert_null(m.block[WORKER_H2_MEM_FRAMEBUF].at);
    assert_null(m.block[WORKER_H2_MEM_STREAMS].at);
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
        cmocka_unit_test(test_ring_kept_while_its_table_holds),
        cmocka_unit_test(test_idle_session_estimate),
        cmocka_unit_test(test_carving),
        cmocka_unit_test(test_nothing_known),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
