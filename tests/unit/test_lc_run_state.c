/* test_lc_run_state.c — unit tests for common/lc_run_state.c: names both ways, and the end states. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lc_err.h"
#include "lc_run_state.h"

/* The database and the API store these texts: they must never change. */
static void test_names(void **state)
{
    assert_string_equal(lc_run_state_name(LC_RUN_PENDING), "pending");
    assert_string_equal(lc_run_state_name(LC_RUN_RUNNING), "running");
    assert_string_equal(lc_run_state_name(LC_RUN_STOPPING), "stopping");
    assert_string_equal(lc_run_state_name(LC_RUN_FINISHED), "finished");
    assert_string_equal(lc_run_state_name(LC_RUN_FAILED), "failed");
    assert_string_equal(lc_run_state_name(LC_RUN_ABORTED), "aborted");
    assert_string_equal(lc_run_state_name(LC_RUN_STATE_COUNT), "?");
    assert_string_equal(lc_run_state_name((lc_run_state_t)-1), "?");
}

static void test_parse_round_trip(void **state)
{
    for (int s = 0; s < LC_RUN_STATE_COUNT; s++) {
        lc_run_state_t got = LC_RUN_STATE_COUNT;
        assert_int_equal(lc_run_state_parse(lc_run_state_name((lc_run_state_t)s), &got), 0);
        assert_int_equal(got, s);
    }
}

static void test_parse_unknown(void **state)
{
    static const char *const bad[] = {"", "Pending", "run", "finished ", "?", "done"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        lc_run_state_t got = LC_RUN_RUNNING;
        assert_int_equal(lc_run_state_parse(bad[i], &got), LC_EINVAL);
        assert_int_equal(got, LC_RUN_RUNNING);
    }
    lc_run_state_t got = LC_RUN_RUNNING;
    assert_int_equal(lc_run_state_parse(NULL, &got), LC_EINVAL);
}

static void test_is_over(void **state)
{
    assert_false(lc_run_state_is_over(LC_RUN_PENDING));
    assert_false(lc_run_state_is_over(LC_RUN_RUNNING));
    assert_false(lc_run_state_is_over(LC_RUN_STOPPING));
    assert_true(lc_run_state_is_over(LC_RUN_FINISHED));
    assert_true(lc_run_state_is_over(LC_RUN_FAILED));
    assert_true(lc_run_state_is_over(LC_RUN_ABORTED));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_parse_round_trip),
        cmocka_unit_test(test_parse_unknown),
        cmocka_unit_test(test_is_over),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
