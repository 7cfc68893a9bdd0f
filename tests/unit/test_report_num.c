/* test_report_num.c — master/report/report_num.c writes exactly what printf writes. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "report_num.h"
#include "test_rand.h"

static void assert_fixed(double v, int decimals)
{
    char want[REPORT_NUM_MAX], got[REPORT_NUM_MAX];
    snprintf(want, sizeof want, "%.*f", decimals, v);
    size_t n = report_num_fixed(got, v, decimals);
    got[n] = '\0';
    if (strcmp(got, want) != 0)
        fail_msg("%%.%df of %.17g: printf \"%s\", report_num_fixed \"%s\"", decimals, v, want, got);
}

/* Values that sit on or next to a rounding tie, and the edges of the fast path. */
static void test_fixed_edges(void **state)
{
    (void)state;
    static const double values[] = {0,      -0.0,   0.5,    1.5,     2.5,       0.125,   0.375,
                                    1.0005, 1.0015, 2.675,  1e-7,    0.0004999, 0.0005,  9.9995,
                                    999.9995, 1099511.627776, 1099511627.776, 1e12, 1e20, -1.25,
                                    123456789.123456789, 4.35, 0.045, 1.005};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        for (int d = 0; d <= 9; d++) {
            assert_fixed(values[i], d);
            assert_fixed(nextafter(values[i], INFINITY), d);
            assert_fixed(nextafter(values[i], -INFINITY), d);
        }
    assert_fixed(NAN, 3);
    assert_fixed(INFINITY, 2);
    assert_fixed(-INFINITY, 6);
    assert_fixed(1.7976931348623157e308, 9); /* the longest output */
}

/* What the reports format: rates (n / step), averages (sum / n), µs as ms. */
static void test_fixed_random(void **state)
{
    (void)state;
    uint64_t seed = 42;
    for (int i = 0; i < 100000; i++) {
        uint64_t a = next_rand(&seed) % 100000000, b = 1 + next_rand(&seed) % 1000;
        int d = (int)(next_rand(&seed) % 3);
        assert_fixed((double)a / (double)b, d == 0 ? 2 : d == 1 ? 3 : 6);
        assert_fixed((double)a / 1000.0, 3);
        uint64_t bits = next_rand(&seed);
        double any;
        memcpy(&any, &bits, sizeof any);
        assert_fixed(any, (int)(next_rand(&seed) % 10));
    }
}

static void test_ms_and_integers(void **state)
{
    (void)state;
    static const uint64_t us[] = {0, 1, 999, 1000, 1001, 123456, 100000000, 999999999999999ull,
                                  1000000000000000ull, UINT64_MAX};
    char want[REPORT_NUM_MAX], got[REPORT_NUM_MAX];
    for (size_t i = 0; i < sizeof us / sizeof us[0]; i++) {
        snprintf(want, sizeof want, "%.3f", (double)us[i] / 1000.0);
        got[report_num_ms(got, us[i])] = '\0';
        assert_string_equal(got, want);
    }
    static const int64_t ints[] = {0, 1, -1, 42, INT64_MAX, INT64_MIN, -1234567890123ll};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        snprintf(want, sizeof want, "%lld", (long long)ints[i]);
        got[report_num_i64(got, ints[i])] = '\0';
        assert_string_equal(got, want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixed_edges),
        cmocka_unit_test(test_fixed_random),
        cmocka_unit_test(test_ms_and_integers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
