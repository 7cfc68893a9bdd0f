/* test_busy_poll.c — worker/busy_poll.c: the window's rule; a loop fed bytes close together
 * polls instead of sleeping (few voluntary context switches, polled time counted); fed
 * sparsely, its window falls to 0 and it sleeps at once; with no window it is a plain uv_run.
 * Every loop ends when its handle closes (the writer's end of a socket pair at EOF). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "busy_poll.h"

#define US 1000ull

static void window_rule(void **state)
{
    (void)state;
    /* Work within the longest window: the next idle period polls that long. */
    assert_int_equal(worker_busy_poll_next_window(0, 200 * US, 150 * US), 200 * US);
    assert_int_equal(worker_busy_poll_next_window(50 * US, 200 * US, 200 * US), 200 * US);
    /* Gaps longer than that: halve, and below 1 µs stop polling. */
    assert_int_equal(worker_busy_poll_next_window(200 * US, 200 * US, 201 * US), 100 * US);
    assert_int_equal(worker_busy_poll_next_window(1500, 200 * US, 5000 * US), 0);
    assert_int_equal(worker_busy_poll_next_window(0, 200 * US, 5000 * US), 0);
    /* No window at all: never polls, whatever the gaps. */
    assert_int_equal(worker_busy_poll_next_window(0, 0, 1), 0);
}

typedef struct {
    int fd;
    unsigned writes;
    unsigned gap_us;
} writer_t;

static void sleep_us(unsigned us)
{
    struct timespec ts = {.tv_sec = us / 1000000u, .tv_nsec = (long)(us % 1000000u) * 1000};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Writes a byte every gap_us, then closes its end (the reader's EOF). */
static void write_bytes(void *arg)
{
    writer_t *w = arg;
    for (unsigned i = 0; i < w->writes; i++) {
        sleep_us(w->gap_us);
        assert_int_equal(write(w->fd, "x", 1), 1);
    }
    close(w->fd);
}

typedef struct {
    uv_pipe_t pipe;
    char buf[64];
    size_t bytes;
} reader_t;

static void on_alloc(uv_handle_t *h, size_t size, uv_buf_t *buf)
{
    (void)size;
    reader_t *r = h->data;
    *buf = uv_buf_init(r->buf, sizeof r->buf);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    (void)buf;
    reader_t *r = s->data;
    worker_busy_poll_note_work();
    if (n > 0)
        r->bytes += (size_t)n;
    else if (n < 0)
        uv_close((uv_handle_t *)s, NULL);
}

typedef struct {
    uint64_t polled_ns;
    long sleeps; /* voluntary context switches of the loop's thread */
    size_t bytes;
} outcome_t;

/* Runs a loop with a window of max_us reading what a writer sends every gap_us. */
static outcome_t feed(uint32_t max_us, unsigned writes, unsigned gap_us)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    reader_t r = {.bytes = 0};
    assert_int_equal(uv_pipe_init(&loop, &r.pipe, 0), 0);
    assert_int_equal(uv_pipe_open(&r.pipe, sv[0]), 0);
    r.pipe.data = &r;
    assert_int_equal(uv_read_start((uv_stream_t *)&r.pipe, on_alloc, on_read), 0);
    worker_busy_poll_t bp;
    worker_busy_poll_init(&bp, max_us);
    writer_t w = {.fd = sv[1], .writes = writes, .gap_us = gap_us};
    uv_thread_t writer;
    struct rusage before, after;
    assert_int_equal(getrusage(RUSAGE_THREAD, &before), 0);
    assert_int_equal(uv_thread_create(&writer, write_bytes, &w), 0);
    worker_busy_poll_run(&loop, &bp); /* returns once the pipe closed at EOF */
    assert_int_equal(getrusage(RUSAGE_THREAD, &after), 0);
    assert_int_equal(uv_thread_join(&writer), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
    print_message("window %u us, %u bytes %u us apart: %ld sleeps, %.1f ms polled\n", max_us,
                  writes, gap_us, after.ru_nvcsw - before.ru_nvcsw,
                  (double)atomic_load(&bp.polled_ns) / 1e6);
    return (outcome_t){.polled_ns = atomic_load(&bp.polled_ns),
                       .sleeps = after.ru_nvcsw - before.ru_nvcsw, .bytes = r.bytes};
}

/* Bytes 30 µs apart (a nanosleep of 30 µs lasts longer: the gaps are still well inside a
 * window of 1 ms): the loop polls nearly throughout, sleeping far less than once a byte. */
static void close_together_polls(void **state)
{
    (void)state;
    enum { WRITES = 2000 };
    outcome_t o = feed(1000, WRITES, 30);
    assert_int_equal(o.bytes, WRITES);
    assert_true(o.polled_ns > 0);
    assert_true(o.sleeps < WRITES / 4);
    /* The same bytes to a loop that never polls: it sleeps for most of them. */
    outcome_t plain = feed(0, WRITES, 30);
    assert_int_equal(plain.bytes, WRITES);
    assert_int_equal(plain.polled_ns, 0);
    assert_true(plain.sleeps > 2 * o.sleeps);
}

/* Bytes 5 ms apart against a window of at most 1 ms: the window never opens (a new loop's
 * is 0 and every gap is longer than the longest; only the EOF right after the last byte
 * opens it, and the loop ends there), so nothing is polled and the loop sleeps before each
 * byte. */
static void far_apart_sleeps(void **state)
{
    (void)state;
    enum { WRITES = 40 };
    outcome_t o = feed(1000, WRITES, 5000);
    assert_int_equal(o.bytes, WRITES);
    assert_int_equal(o.polled_ns, 0);
    assert_true(o.sleeps >= WRITES / 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(window_rule),
        cmocka_unit_test(close_together_polls),
        cmocka_unit_test(far_apart_sleeps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
