/* test_heap_trim.c — worker/heap_trim.c: a trim once the free heap grew by a step, or by
 * less once it stopped growing; none while it stays put. Under ASan the heap is ASan's, which mallinfo2 does not see: skipped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "heap_trim.h"

#define BLOCKS 4096
#define BLOCK (8u * 1024u) /* 32 MiB in all: four steps */

static void test_trims_after_a_step(void **state)
{
    (void)state;
#if defined(__SANITIZE_ADDRESS__) || !defined(__GLIBC__)
    skip();
#else
    worker_heap_trim_t h = {0};
    (void)worker_heap_trim_tick(&h);
    (void)worker_heap_trim_tick(&h); /* whatever the process had free, settled */
    assert_int_equal(worker_heap_trim_tick(&h), 0);
    static void *big[BLOCKS], *small[BLOCKS];
    for (int i = 0; i < BLOCKS; i++) {
        big[i] = malloc(BLOCK);
        small[i] = malloc(64); /* keeps the freed blocks from the top of the heap */
        assert_non_null(big[i]);
        assert_non_null(small[i]);
    }
    for (int i = 0; i < BLOCKS; i++)
        free(big[i]);
    assert_int_equal(worker_heap_trim_tick(&h), 1);
    assert_int_equal(worker_heap_trim_tick(&h), 0); /* nothing new is free */
    for (int i = 0; i < BLOCKS; i++)
        free(small[i]);
#endif
}

/* 2 MiB freed, less than a step: no trim while it was just freed, one at the next tick if
 * nothing changed (the tail of a burst), then none. */
static void test_trims_a_settled_tail(void **state)
{
    (void)state;
#if defined(__SANITIZE_ADDRESS__) || !defined(__GLIBC__)
    skip();
#else
    worker_heap_trim_t h = {0};
    (void)worker_heap_trim_tick(&h);
    (void)worker_heap_trim_tick(&h); /* whatever the process had free, settled */
    assert_int_equal(worker_heap_trim_tick(&h), 0);
    enum { N = 256 };
    static void *big[N], *small[N];
    for (int i = 0; i < N; i++) {
        big[i] = malloc(BLOCK);
        small[i] = malloc(64);
        assert_non_null(big[i]);
        assert_non_null(small[i]);
    }
    for (int i = 0; i < N; i++)
        free(big[i]);
    assert_int_equal(worker_heap_trim_tick(&h), 0); /* it just grew */
    assert_int_equal(worker_heap_trim_tick(&h), 1); /* settled */
    assert_int_equal(worker_heap_trim_tick(&h), 0);
    for (int i = 0; i < N; i++)
        free(small[i]);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trims_after_a_step),
        cmocka_unit_test(test_trims_a_settled_tail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
