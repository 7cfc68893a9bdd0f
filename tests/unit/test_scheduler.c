/* test_scheduler.c — largest-remainder splitting of users over workers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "scheduler.h"

static void test_proportional_split(void **state)
{
    (void)state;
    uint32_t caps[] = {100, 200, 300}, out[3];
    sched_split(600, caps, 3, out);
    assert_int_equal(out[0], 100);
    assert_int_equal(out[1], 200);
    assert_int_equal(out[2], 300);
    sched_split(7, caps, 3, out); /* 7/6, 14/6, 21/6 → 1.17, 2.33, 3.5 */
    assert_int_equal(out[0] + out[1] + out[2], 7);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 2);
    assert_int_equal(out[2], 4);
}

static void test_zero_weights_split_evenly(void **state)
{
    (void)state;
    uint32_t caps[] = {0, 0}, out[2];
    sched_split(5, caps, 2, out);
    assert_int_equal(out[0], 3);
    assert_int_equal(out[1], 2);
}

/* On random inputs the shares sum to the total and each share is within one
 * user of its exact proportion. */
static void test_random_sums_and_bounds(void **state)
{
    (void)state;
    srand(7);
    for (int round = 0; round < 10000; round++) {
        size_t n = 1 + (size_t)(rand() % 16);
        uint32_t caps[16], out[16], total = (uint32_t)(rand() % 100000);
        uint64_t sum_caps = 0, sum_out = 0;
        for (size_t i = 0; i < n; i++)
            sum_caps += caps[i] = (uint32_t)(rand() % 5000);
        sched_split(total, caps, n, out);
        for (size_t i = 0; i < n; i++) {
            sum_out += out[i];
            double exact = sum_caps ? (double)total * caps[i] / (double)sum_caps
                                    : (double)total / (double)n;
            assert_true((double)out[i] > exact - 1.0 && (double)out[i] < exact + 1.0);
        }
        assert_int_equal(sum_out, total);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_proportional_split),
        cmocka_unit_test(test_zero_weights_split_evenly),
        cmocka_unit_test(test_random_sums_and_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
