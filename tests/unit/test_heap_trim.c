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

#if !defined(__SANITIZE_ADDRESS__) && defined(__GLIBC__)
static void *small[BLOCKS];

/* A heap tracker whose process's free heap has settled (two ticks) and gives no trim. */
static worker_heap_trim_t settled(void)
{
    worker_heap_trim_t h = {0};
    (void)worker_heap_trim_tick(&h);
    (void)worker_heap_trim_tick(&h); /* whatever the process had free, settled */
    assert_int_equal(worker_heap_trim_tick(&h), 0);
    return h;
}

/* Frees n blocks of BLOCK bytes between small ones that stay (kept in small[]), so that the
 * freed blocks are not at the top of the heap. */
static void free_between_kept(int n)
{
    static void *big[BLOCKS];
    assert_true(n <= BLOCKS);
    for (int i = 0; i < n; i++) {
        big[i] = malloc(BLOCK);
        small[i] = malloc(64);
        assert_non_null(big[i]);
        assert_non_null(small[i]);
    }
    for (int i = 0; i < n; i++)
        free(big[i]);
}

static void free_kept(int n)
{
    for (int i = 0; i < n; i++)
        free(small[i]);
}
#endif

static void test_trims_after_a_step(void **state)
{
    (void)state;
#if defined(__SANITIZE_ADDRESS__) || !defined(__GLIBC__)
    skip();
#else
    worker_heap_trim_t h = settled();
    free_between_kept(BLOCKS);
    assert_int_equal(worker_heap_trim_tick(&h), 1);
    assert_int_equal(worker_heap_trim_tick(&h), 0); /* nothing new is free */
    free_kept(BLOCKS);
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
    worker_heap_trim_t h = settled();
    free_between_kept(256);
    assert_int_equal(worker_heap_trim_tick(&h), 0); /* it just grew */
    assert_int_equal(worker_heap_trim_tick(&h), 1); /* settled */
    assert_int_equal(worker_heap_trim_tick(&h), 0);
    free_kept(256);
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
