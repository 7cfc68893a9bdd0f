/* test_lc_worst.c — common/lc_worst.c: the worst value per second, over ten seconds and ever. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lc_worst.h"

static void test_empty(void **state)
{
    (void)state;
    lc_worst_t w = {0};
    assert_int_equal(lc_worst_recent(&w), 0);
    assert_int_equal(lc_worst_last_second(&w), 0);
    assert_int_equal(lc_worst_max(&w), 0);
}

/* Values of this second: the worst is kept, in recent and ever; not yet in the last whole
 * second, which is the one before. */
static void test_worst_kept(void **state)
{
    (void)state;
    lc_worst_t w = {0};
    lc_worst_note(&w, 7);
    lc_worst_note(&w, 42);
    lc_worst_note(&w, 3);
    assert_int_equal(lc_worst_recent(&w), 42);
    assert_int_equal(lc_worst_max(&w), 42);
}

/* A slot of an old second is not counted: its second is over ten seconds ago. */
static void test_old_seconds_forgotten(void **state)
{
    (void)state;
    lc_worst_t w = {0};
    lc_worst_note(&w, 5);
    for (size_t i = 0; i < LC_WORST_WINDOW_S; i++)
        if (w.second_of[i] != 0)
            w.second_of[i] -= 100; /* as if noted 100 s ago */
    assert_int_equal(lc_worst_recent(&w), 0);
    assert_int_equal(lc_worst_last_second(&w), 0);
    assert_int_equal(lc_worst_max(&w), 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_worst_kept),
        cmocka_unit_test(test_old_seconds_forgotten),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
