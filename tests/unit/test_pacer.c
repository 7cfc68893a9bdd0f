/* test_pacer.c — worker/pacer.c: ramps hit their targets, start times come
 * from absolute arithmetic (no drift), late ticks catch up exactly, rescales
 * keep the count continuous, and engine shares add up. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "pacer.h"

#define EPS 1e-6

static void assert_near(double got, double want, double tol)
{
    if (fabs(got - want) > tol)
        fail_msg("got %.9f, want %.9f (± %g)", got, want, tol);
}

static void test_stages_at_ramps_and_holds(void **state)
{
    lc_stage_t st[] = {{2000, 20}, {2000, 20}, {1000, 0}, {0, 7}};
    assert_near(worker_stages_at(st, 4, 0), 0, EPS);
    assert_near(worker_stages_at(st, 4, 500), 5, EPS);
    assert_near(worker_stages_at(st, 4, 1000), 10, EPS);
    assert_near(worker_stages_at(st, 4, 2000), 20, EPS);
    assert_near(worker_stages_at(st, 4, 3000), 20, EPS);
    assert_near(worker_stages_at(st, 4, 4500), 10, EPS);
    /* A zero-length stage jumps; after the last stage its target holds. */
    assert_near(worker_stages_at(st, 4, 5000), 7, EPS);
    assert_near(worker_stages_at(st, 4, 1e9), 7, EPS);
}

/* n engines with equal shares add up to the rounded worker-wide value. */
static void test_stages_share_adds_up(void **state)
{
    for (unsigned n = 1; n <= 8; n++) {
        for (int step = 0; step <= 1000; step++) {
            /* Scenario users 0..100, off the exact halves where rounding in
             * floating point may go either way. */
            double x = step * 0.1 + 1e-4;
            double share = 3.0 / 100.0; /* 3 users per engine for 100 in the scenario */
            uint32_t sum = 0;
            for (unsigned i = 0; i < n; i++)
                sum += worker_stages_share(x, share, i, n);
            assert_int_equal(sum, (uint32_t)floor(x * share * n + 0.5));
        }
        /* At the peak every engine runs exactly its share. */
        for (unsigned i = 0; i < n; i++)
            assert_int_equal(worker_stages_share(100, 0.03, i, n), 3);
    }
}

static void test_constant_rate_has_no_drift(void **state)
{
    worker_pacer_t p;
    worker_pacer_init(&p, NULL, 0, 1000, 0, 0);
    assert_near(worker_pacer_due(&p), 0, EPS);
    worker_pacer_skip(&p, 999999);
    assert_near(worker_pacer_due(&p), 999999.0, 1e-3);
    /* An odd rate: start k is due at exactly k / rate, however large k. */
    worker_pacer_init(&p, NULL, 0, 333.0, 0, 0);
    worker_pacer_skip(&p, 3330000);
    assert_near(worker_pacer_due(&p), 10000000.0, 1e-3);
}

static void test_pending_counts_every_due_start(void **state)
{
    worker_pacer_t p;
    worker_pacer_init(&p, NULL, 0, 1000, 0, 0);
    /* Starts at 0, 1, …, 10000 ms are due by 10 s. */
    assert_int_equal(worker_pacer_pending(&p, 10000), 10001);
    assert_int_equal(worker_pacer_pending(&p, 9999.5), 10000);
    worker_pacer_skip(&p, 10001);
    assert_int_equal(worker_pacer_pending(&p, 10000), 0);
    assert_near(worker_pacer_due(&p), 10001, 1e-6);
}

/* Ticks that come late (here every 7 ms, some 50 ms late) issue every start
 * whose time passed, each with its own time: the count by T is exact. */
static void test_late_ticks_catch_up(void **state)
{
    worker_pacer_t p;
    worker_pacer_init(&p, NULL, 0, 1000, 0, 0);
    double last = -1;
    uint64_t issued = 0;
    for (double now = 0; now <= 10000; now += (issued % 5 == 0) ? 57 : 7) {
        double due;
        while ((due = worker_pacer_due(&p)) <= now) {
            assert_true(due > last);
            assert_near(due, (double)issued, 1e-6);
            last = due;
            issued++;
            worker_pacer_advance(&p);
        }
    }
    assert_int_equal(issued + worker_pacer_pending(&p, 10000), 10001);
}

/* 0 → 100/s over 10 s is 500 starts: start k is due at sqrt(0.2·k) s. */
static void test_ramp_up_rate(void **state)
{
    lc_stage_t st[] = {{10000, 100}, {10000, 100}};
    worker_pacer_t p;
    worker_pacer_init(&p, st, 2, 1.0, 0, 0);
    for (uint64_t k = 1; k <= 500; k += 7) {
        p.next = k;
        assert_near(worker_pacer_due(&p), sqrt(0.2 * (double)k) * 1000.0, 1e-6);
    }
    p.next = 0;
    assert_int_equal(worker_pacer_pending(&p, 10000), 501);
    assert_int_equal(worker_pacer_pending(&p, 20000), 1501);
    /* After the stages the last rate holds. */
    assert_int_equal(worker_pacer_pending(&p, 30000), 2501);
    /* A scale halves every count (a worker with half of the rate). */
    worker_pacer_init(&p, st, 2, 0.5, 0, 0);
    assert_int_equal(worker_pacer_pending(&p, 30000), 1251);
}

static void test_ramp_down_to_zero_ends(void **state)
{
    lc_stage_t st[] = {{1000, 1000}, {1000, 0}};
    worker_pacer_t p;
    worker_pacer_init(&p, st, 2, 1.0, 0.5, 0);
    assert_int_equal(worker_pacer_pending(&p, 2000), 1000);
    worker_pacer_skip(&p, 999);
    double due = worker_pacer_due(&p); /* start 999.5 of 1000: in the last ms of the ramp */
    assert_true(due > 1900 && due <= 2000);
    worker_pacer_advance(&p);
    assert_true(isinf(worker_pacer_due(&p)));
    assert_int_equal(worker_pacer_pending(&p, 1e9), 0);
}

static void test_rescale_keeps_count_continuous(void **state)
{
    worker_pacer_t p;
    worker_pacer_init(&p, NULL, 0, 1000, 0, 0);
    worker_pacer_skip(&p, worker_pacer_pending(&p, 5000)); /* 0..5000 issued */
    worker_pacer_rescale(&p, 5000, 2000);
    /* Start 5001 was due at 5001 ms at the old rate; at 2000/s it comes after 0.5 ms. */
    assert_near(worker_pacer_due(&p), 5000.5, 1e-6);
    assert_int_equal(worker_pacer_pending(&p, 6000), 2000);
    worker_pacer_rescale(&p, 6000, 0);
    assert_true(isinf(worker_pacer_due(&p)));
}

/* A run adopted 5 s in starts its schedule there; engines interleave by phase. */
static void test_offset_and_phase(void **state)
{
    lc_stage_t st[] = {{10000, 1000}};
    worker_pacer_t a, b;
    worker_pacer_init(&a, NULL, 0, 500, 0, 5000);
    assert_near(worker_pacer_due(&a), 5000, 1e-6);
    worker_pacer_init(&b, NULL, 0, 500, 0.5, 5000);
    assert_near(worker_pacer_due(&b), 5001, 1e-6);
    worker_pacer_advance(&a);
    assert_near(worker_pacer_due(&a), 5002, 1e-6);
    /* Mid-ramp: the rate at 5 s is 500/s, so 1 s later ~550 starts came. */
    worker_pacer_init(&a, st, 1, 1.0, 0, 5000);
    assert_int_equal(worker_pacer_pending(&a, 6000), 551);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stages_at_ramps_and_holds),
        cmocka_unit_test(test_stages_share_adds_up),
        cmocka_unit_test(test_constant_rate_has_no_drift),
        cmocka_unit_test(test_pending_counts_every_due_start),
        cmocka_unit_test(test_late_ticks_catch_up),
        cmocka_unit_test(test_ramp_up_rate),
        cmocka_unit_test(test_ramp_down_to_zero_ends),
        cmocka_unit_test(test_rescale_keeps_count_continuous),
        cmocka_unit_test(test_offset_and_phase),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
