/* test_lc_err.c — unit tests for common/lc_err.c: lc_errf and lc_err_wrap, whole and cut. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lc_err.h"

static void test_errf(void **state)
{
    char err[64] = "old";
    assert_int_equal(lc_errf(err, sizeof err, LC_EINVAL, "%s: no %s", "nodes.conf", "nodes"),
                     LC_EINVAL);
    assert_string_equal(err, "nodes.conf: no nodes");
    assert_int_equal(lc_errf(err, 6, LC_EIO, "%s", "truncated"), LC_EIO);
    assert_string_equal(err, "trunc");
}

static void test_errf_no_buffer(void **state)
{
    char err[8] = "keep";
    assert_int_equal(lc_errf(NULL, 0, LC_ENOMEM, "x"), LC_ENOMEM);
    assert_int_equal(lc_errf(err, 0, LC_ENOMEM, "x"), LC_ENOMEM);
    assert_string_equal(err, "keep");
    assert_int_equal(lc_err_wrap(NULL, 0, LC_EIO, "x"), LC_EIO);
    assert_int_equal(lc_err_wrap(err, 0, LC_EIO, "x"), LC_EIO);
    assert_string_equal(err, "keep");
}

static void test_wrap(void **state)
{
    char err[64];
    lc_errf(err, sizeof err, LC_EIO, "disk full");
    assert_int_equal(lc_err_wrap(err, sizeof err, LC_EIO, "open %s", "x.db"), LC_EIO);
    assert_string_equal(err, "open x.db: disk full");
    assert_int_equal(lc_err_wrap(err, sizeof err, LC_ENOMEM, "store"), LC_ENOMEM);
    assert_string_equal(err, "store: open x.db: disk full");

    err[0] = '\0';
    lc_err_wrap(err, sizeof err, LC_EIO, "empty");
    assert_string_equal(err, "empty: ");
}

/* A cut wrap keeps the start of "<prefix>: <old>", as one snprintf of it would. */
static void test_wrap_cut(void **state)
{
    static const char *const olds[] = {"disk full", "", "x"};
    for (size_t o = 0; o < sizeof olds / sizeof olds[0]; o++) {
        for (size_t len = 1; len <= 20; len++) {
            char err[32], want[32];
            memset(err, 'Z', sizeof err);
            snprintf(err, len, "%s", olds[o]);
            lc_err_wrap(err, len, LC_EIO, "open %s", "x.db");
            snprintf(want, len, "open x.db: %s", olds[o]);
            if (strcmp(err, want) != 0)
                fail_msg("len %zu, old \"%s\": got \"%s\", want \"%s\"", len, olds[o], err, want);
            assert_int_equal(err[len], 'Z'); /* nothing written past len */
        }
    }
}

static void test_strerror(void **state)
{
    assert_string_equal(lc_strerror(LC_ENOMEM), "out of memory");
    assert_string_equal(lc_strerror(-1), "unknown error");
    assert_string_equal(lc_strerror(LC_ERR_COUNT), "unknown error");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errf),     cmocka_unit_test(test_errf_no_buffer),
        cmocka_unit_test(test_wrap),     cmocka_unit_test(test_wrap_cut),
        cmocka_unit_test(test_strerror),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
