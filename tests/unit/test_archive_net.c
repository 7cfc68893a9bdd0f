/* test_archive_net.c — the archive stream between masters (master/runs/archive_net.c), each
 * side against a hostile other side on a socket pair: a fetcher told "not here", "busy" or
 * nonsense, announced 0 bytes or more than 64 GiB, sent more than announced, or cut short,
 * ends with an error that says so; an honest answer lands byte for byte. A server given a bad
 * request answers "bad request", one for a run it does not hold "not here", one followed by
 * more bytes is closed, and an honest one gets the file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <raft.h>

#include "archive_net.h"
#include "lc_clock.h"
#include "lc_err.h"

#define RUN 5

typedef struct {
    char dir[64], db[96], tmp[128];
    uv_loop_t loop;
    archive_net_t *n;
    int peer;           /* the test's end of the socket pair */
    bool done;
    int status;
    char why[256];
} fixture_t;

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/lc-test-archive-net.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->db, sizeof f->db, "%s/state.db", f->dir);
    snprintf(f->tmp, sizeof f->tmp, "%s/fetched", f->dir);
    char path[160];
    snprintf(path, sizeof path, "%s/archive", f->dir);
    assert_int_equal(mkdir(path, 0700), 0);
    assert_int_equal(uv_loop_init(&f->loop), 0);
    assert_int_equal(archive_net_init(&f->n, &f->loop, NULL, f->db), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    archive_net_close(f->n);
    while (uv_run(&f->loop, UV_RUN_DEFAULT) != 0)
        ;
    assert_int_equal(uv_loop_close(&f->loop), 0);
    if (f->peer > 0)
        close(f->peer);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

/* Our end of a fresh socket pair, as the transport would hand it over; f->peer the other. */
static uv_stream_t *pair(fixture_t *f)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    uv_pipe_t *p = raft_malloc(sizeof *p);
    assert_non_null(p);
    assert_int_equal(uv_pipe_init(&f->loop, p, 0), 0);
    assert_int_equal(uv_pipe_open(p, sv[0]), 0);
    f->peer = sv[1];
    fcntl(f->peer, F_SETFL, O_NONBLOCK);
    return (uv_stream_t *)p;
}

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void send_all(fixture_t *f, const void *data, size_t len)
{
    assert_int_equal(write(f->peer, data, len), (ssize_t)len);
}

/* Runs the loop, reading what arrives at the peer into buf, until it closes or 5 s pass
 * (with until_done: until the fetch is done). Returns the bytes read. */
static size_t pump(fixture_t *f, uint8_t *buf, size_t cap, bool until_done)
{
    size_t have = 0;
    uint64_t deadline = lc_mono_ms() + 5000;
    while (lc_mono_ms() < deadline && !(until_done && f->done)) {
        uv_run(&f->loop, UV_RUN_NOWAIT);
        ssize_t n = buf != NULL && have < cap ? read(f->peer, buf + have, cap - have) : -1;
        if (n == 0 && !until_done)
            break; /* the other side closed */
        if (n > 0)
            have += (size_t)n;
        if (buf != NULL && have == cap && !until_done)
            break; /* all that was asked for */
        usleep(1000);
    }
    return have;
}

/* ---- the fetcher against a hostile server ----------------------------------------------- */

static void fetched_cb(void *arg, int status, const char *why)
{
    fixture_t *f = arg;
    assert_false(f->done); /* once */
    f->done = true;
    f->status = status;
    snprintf(f->why, sizeof f->why, "%s", why ? why : "");
}

/* Starts a fetch and checks its request: "lcarch01" and the run. */
static void fetch(fixture_t *f)
{
    assert_int_equal(archive_net_fetch_stream(f->n, pair(f), 3, RUN, f->tmp, fetched_cb, f), 0);
    uint8_t req[16], want[16];
    assert_int_equal(pump(f, req, sizeof req, false) >= 16 ? 16 : 0, 16);
    memcpy(want, "lcarch01", 8);
    put_u64(want + 8, RUN);
    assert_memory_equal(req, want, 16);
}

static void answer(fixture_t *f, uint64_t status, uint64_t size)
{
    uint8_t head[16];
    put_u64(head, status);
    put_u64(head + 8, size);
    send_all(f, head, sizeof head);
}

static void assert_fetch_failed(fixture_t *f, int status, const char *why)
{
    pump(f, NULL, 0, true);
    assert_true(f->done);
    assert_int_equal(f->status, status);
    if (strstr(f->why, why) == NULL)
        fail_msg("ended with \"%s\", expected \"%s\"", f->why, why);
}

static void test_fetch_refusals(void **state)
{
    fixture_t *f = *state;
    static const struct {
        uint64_t status;
        int rv;
        const char *why;
    } cases[] = {
        {ARCHIVE_NET_NOT_HERE, LC_ENOTFOUND, "has no archive of the run"},
        {ARCHIVE_NET_BUSY, LC_EAGAIN, "is busy"},
        {ARCHIVE_NET_BAD_REQUEST, LC_EAGAIN, "refused the request"},
        {77, LC_EAGAIN, "answered nonsense"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        f->done = false;
        fetch(f);
        answer(f, cases[i].status, 0);
        assert_fetch_failed(f, cases[i].rv, cases[i].why);
        close(f->peer);
    }
    f->peer = -1;
}

static void test_fetch_bad_sizes(void **state)
{
    fixture_t *f = *state;
    static const uint64_t sizes[] = {0, ARCHIVE_NET_SIZE_MAX + 1, UINT64_MAX};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        f->done = false;
        fetch(f);
        answer(f, ARCHIVE_NET_HERE, sizes[i]);
        assert_fetch_failed(f, LC_EPROTO, "announced");
        close(f->peer);
    }
    f->peer = -1;
}

static void test_fetch_more_than_announced(void **state)
{
    fixture_t *f = *state;
    fetch(f);
    uint8_t body[150];
    memset(body, 'x', sizeof body);
    answer(f, ARCHIVE_NET_HERE, 100);
    send_all(f, body, sizeof body);
    assert_fetch_failed(f, LC_EPROTO, "more than the size it announced");
}

static void test_fetch_cut_short(void **state)
{
    fixture_t *f = *state;
    fetch(f);
    uint8_t body[50];
    memset(body, 'x', sizeof body);
    answer(f, ARCHIVE_NET_HERE, 100);
    send_all(f, body, sizeof body);
    for (int i = 0; i < 50; i++) { /* the 50 bytes are written before the end comes */
        uv_run(&f->loop, UV_RUN_NOWAIT);
        usleep(1000);
    }
    close(f->peer);
    f->peer = -1;
    assert_fetch_failed(f, LC_ECLOSED, "closed after 50 of 100 bytes");
}

static void test_fetch_lands_byte_for_byte(void **state)
{
    fixture_t *f = *state;
    fetch(f);
    size_t len = 600 * 1024 + 7; /* several chunks and a tail */
    uint8_t *body = malloc(len);
    for (size_t i = 0; i < len; i++)
        body[i] = (uint8_t)(i * 31 + 7);
    answer(f, ARCHIVE_NET_HERE, len);
    for (size_t off = 0; off < len;) { /* the socket pair's buffer is smaller than the file */
        ssize_t n = write(f->peer, body + off, len - off);
        if (n > 0)
            off += (size_t)n;
        uv_run(&f->loop, UV_RUN_NOWAIT);
    }
    pump(f, NULL, 0, true);
    assert_true(f->done);
    assert_int_equal(f->status, 0);
    FILE *in = fopen(f->tmp, "rb");
    assert_non_null(in);
    uint8_t *got = malloc(len + 1);
    assert_int_equal(fread(got, 1, len + 1, in), len);
    fclose(in);
    assert_memory_equal(got, body, len);
    free(got);
    free(body);
}

/* ---- the server against a hostile fetcher ------------------------------------------------- */

static void request(fixture_t *f, const char *magic, uint64_t run)
{
    archive_net_serve_stream(f->n, 4, pair(f));
    uint8_t req[16];
    memcpy(req, magic, 8);
    put_u64(req + 8, run);
    send_all(f, req, sizeof req);
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void test_serve_refusals(void **state)
{
    fixture_t *f = *state;
    uint8_t got[64];
    request(f, "lcarch02", RUN); /* another protocol version */
    assert_int_equal(pump(f, got, sizeof got, false), 16);
    assert_int_equal(get_u64(got), ARCHIVE_NET_BAD_REQUEST);
    close(f->peer);
    request(f, "lcarch01", RUN); /* no such file here */
    assert_int_equal(pump(f, got, sizeof got, false), 16);
    assert_int_equal(get_u64(got), ARCHIVE_NET_NOT_HERE);
    assert_int_equal(get_u64(got + 8), 0);
    close(f->peer);
    f->peer = -1;
}

static void write_archive(fixture_t *f, size_t len)
{
    char path[160];
    snprintf(path, sizeof path, "%s/archive/run-%d.db", f->dir, RUN);
    FILE *out = fopen(path, "wb");
    for (size_t i = 0; i < len; i++)
        fputc((int)(i % 251), out);
    fclose(out);
}

static void test_serve_more_than_a_request_is_closed(void **state)
{
    fixture_t *f = *state;
    write_archive(f, 4 * 1024 * 1024);
    request(f, "lcarch01", RUN);
    send_all(f, "more", 4);
    uint8_t *got = malloc(8u << 20);
    size_t n = pump(f, got, 8u << 20, false);
    /* Closed early: never the whole file. */
    assert_true(n < 16 + 4 * 1024 * 1024);
    free(got);
}

static void test_serve_sends_the_file(void **state)
{
    fixture_t *f = *state;
    size_t len = 700 * 1024 + 3;
    write_archive(f, len);
    request(f, "lcarch01", RUN);
    uint8_t *got = malloc(len + 64);
    size_t n = pump(f, got, len + 64, false);
    assert_int_equal(n, 16 + len);
    assert_int_equal(get_u64(got), ARCHIVE_NET_HERE);
    assert_int_equal(get_u64(got + 8), len);
    for (size_t i = 0; i < len; i++)
        if (got[16 + i] != (uint8_t)(i % 251))
            fail_msg("byte %zu differs", i);
    free(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fetch_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fetch_bad_sizes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fetch_more_than_announced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fetch_cut_short, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fetch_lands_byte_for_byte, setup, teardown),
        cmocka_unit_test_setup_teardown(test_serve_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_serve_more_than_a_request_is_closed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_serve_sends_the_file, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
