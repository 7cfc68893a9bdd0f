/* test_loadctl_report.c — the report table (common/lc_report.c) and loadctl's JSON printing (master/ctl/ctl_print.c). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lc_report.h"

#include "ctl_print.h"

#define HEADER                                                                                    \
    "Name              Method  Requests  Failures     RPS   Min   Mean   p50   p90   p95   p99 " \
    "   Max  (ms)\n"

static const lc_report_latency_t lat_a = {0.21, 0.80, 0.70, 1.20, 1.50, 2.90, 12.30};
static const lc_report_latency_t lat_unknown = {NAN, NAN, NAN, NAN, NAN, NAN, NAN};

/* Runs lc_report_print into a string the caller frees. */
static char *render(const lc_report_t *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    lc_report_print(f, r);
    assert_int_equal(fclose(f), 0);
    return buf;
}

typedef int (*json_printer)(FILE *, const json_t *);

/* Parses text and runs a ctl_print function on it; returns its output, and its result in *rv. */
static char *render_json(json_printer print, const char *text, int *rv)
{
    json_error_t err;
    json_t *root = json_loads(text, 0, &err);
    assert_non_null(root);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    *rv = print(f, root);
    assert_int_equal(fclose(f), 0);
    json_decref(root);
    return buf;
}

static void test_rows_totals_and_errors(void **state)
{
    lc_report_row_t rows[] = {
        {"list", "GET", 7500, 0, 1500.0, lat_a},
        {"create", "POST", 2500, 3, 500.0, {0.30, 1.10, 1.00, 2.00, 2.50, 3.00, 150.0}},
    };
    lc_report_error_t errors[] = {{"create", "status", 3}};
    lc_report_t r = {"run 3 checkout: finished", 5.0, rows, 2,
                     {"Total", NULL, 10000, 3, 2000.0, lat_a}, errors, 1, 0, 0, 0};
    char *out = render(&r);
    assert_string_equal(out,
        "run 3 checkout: finished  (duration 5.0 s)\n" HEADER
        "list              GET         7500         0  1500.0  0.21   0.80  0.70  1.20  1.50  2.90  12.30\n"
        "create            POST        2500         3   500.0  0.30   1.10  1.00  2.00  2.50  3.00  150.0\n"
        "Total                        10000         3  2000.0  0.21   0.80  0.70  1.20  1.50  2.90  12.30\n"
        "Errors:\n"
        "create            status                   3\n");
    free(out);
}

static void test_no_errors_section_and_no_title(void **state)
{
    lc_report_row_t rows[] = {{"list", "GET", 1, 0, 1.0, lat_a}};
    lc_report_t r = {NULL, 1.0, rows, 1, {NULL, NULL, 1, 0, 1.0, lat_a}, NULL, 0, 0, 0, 0};
    char *out = render(&r);
    assert_null(strstr(out, "Errors"));
    assert_memory_equal(out, HEADER, strlen(HEADER));
    assert_non_null(strstr(out, "\nTotal    "));
    free(out);
}

static void test_missing_values_print_dashes(void **state)
{
    lc_report_row_t rows[] = {{NULL, NULL, UINT64_MAX, UINT64_MAX, NAN, lat_unknown}};
    lc_report_error_t errors[] = {{NULL, "connect", UINT64_MAX}};
    lc_report_t r = {"run 9 x: running", NAN, rows, 1,
                     {"Total", NULL, UINT64_MAX, 0, NAN, lat_unknown}, errors, 1, 7, 3, 2};
    char *out = render(&r);
    assert_string_equal(out,
        "run 9 x: running  (duration -)\n" HEADER
        "-                 -              -         -       -     -      -     -     -     -     -      -\n"
        "Total                            -         0       -     -      -     -     -     -     -      -\n"
        "Dropped starts (no free user): 7\n"
        "TLS handshakes: 3 full, 2 resumed\n"
        "Errors:\n"
        "-                 connect                  -\n");
    free(out);
}

static void test_names_truncated_and_cleaned(void **state)
{
    lc_report_row_t rows[] = {
        {"a-very-long-endpoint-name", "OPTIONS", 1, 0, 1.0, lat_a},
        {"caf\xc3\xa9\n\x1b[2J", "GET", 1, 0, 1.0, lat_a},
    };
    lc_report_t r = {NULL, 1.0, rows, 2, {"Total", NULL, 2, 0, 2.0, lat_a}, NULL, 0, 0, 0, 0};
    char *out = render(&r);
    assert_non_null(strstr(out, "\na-very-long-endp~ OPTIO~         1"));
    /* é is one column, the newline and escape become '?'. */
    assert_non_null(strstr(out, "\ncaf\xc3\xa9??[2J         GET            1"));
    free(out);
}

static void test_large_latencies_keep_width(void **state)
{
    lc_report_latency_t big = {99.99, 123.0, 999.94, 1500.0, 12345.0, 99999.0, 100000.0};
    lc_report_row_t rows[] = {{"slow", "GET", 1, 1, 0.1, big}};
    lc_report_t r = {NULL, 1.0, rows, 1, {"Total", NULL, 1, 1, 0.1, big}, NULL, 0, 0, 0, 0};
    char *out = render(&r);
    assert_non_null(strstr(out,
        "\nslow              GET            1         1     0.1 99.99  123.0 999.9  1500 12345 99999 100000\n"));
    free(out);
}

static void test_latency_from_hist(void **state)
{
    lc_hist_t *h = malloc(sizeof(*h));
    assert_non_null(h);
    lc_hist_init(h);
    lc_report_latency_t l;
    lc_report_latency_from_hist(h, &l);
    assert_true(isnan(l.min) && isnan(l.mean) && isnan(l.p50) && isnan(l.p99) && isnan(l.max));

    for (uint64_t us = 1000; us <= 100000; us += 1000) /* 1 ms .. 100 ms */
        lc_hist_record(h, us);
    lc_report_latency_from_hist(h, &l);
    assert_float_equal(l.min, 1.0, 1e-9);
    assert_float_equal(l.max, 100.0, 1e-9);
    assert_float_equal(l.mean, 50.5, 0.01);
    assert_float_equal(l.p50, 50.0, 0.5 + 0.01 * 50.0);
    assert_float_equal(l.p90, 90.0, 0.5 + 0.01 * 90.0);
    assert_float_equal(l.p99, 99.0, 0.5 + 0.01 * 99.0);
    assert_true(l.p50 <= l.p90 && l.p90 <= l.p95 && l.p95 <= l.p99 && l.p99 <= l.max);
    free(h);
}

static void test_json_report_with_nulls(void **state)
{
    int rv;
    char *out = render_json(ctl_print_report,
        "{\"id\":3,\"name\":\"checkout\",\"state\":\"finished\",\"duration_s\":5,"
        "\"totals\":{\"requests\":10,\"failures\":null,\"rps\":2.0,\"latency_ms\":null},"
        "\"endpoints\":[{\"name\":\"list\",\"method\":\"GET\",\"requests\":10,\"failures\":0,"
        "\"rps\":2.0,\"latency_ms\":{\"min\":0.21,\"mean\":0.8,\"p50\":0.7,\"p90\":1.2,"
        "\"p95\":1.5,\"p99\":2.9,\"max\":12.3}},{\"name\":\"odd\"}],"
        "\"errors\":null}", &rv);
    assert_int_equal(rv, 0);
    assert_string_equal(out,
        "run 3 checkout: finished  (duration 5.0 s)\n" HEADER
        "list              GET           10         0     2.0  0.21   0.80  0.70  1.20  1.50  2.90  12.30\n"
        "odd               -              -         -       -     -      -     -     -     -     -      -\n"
        "Total                           10         -     2.0     -      -     -     -     -     -      -\n");
    free(out);
}

static void test_json_runs_and_workers(void **state)
{
    int rv;
    char *out = render_json(ctl_print_runs, "{\"runs\":[]}", &rv);
    assert_int_equal(rv, 0);
    assert_string_equal(out, "no runs\n");
    free(out);
    out = render_json(ctl_print_runs, "{\"runs\":5}", &rv);
    assert_int_equal(rv, -1);
    free(out);
    out = render_json(ctl_print_runs,
        "{\"runs\":[{\"id\":3,\"name\":\"checkout\",\"tenant\":\"default\",\"state\":\"running\","
        "\"created_at\":\"2026-11-30T05:51:25.123Z\",\"users\":50,\"requests\":1234,"
        "\"failures\":0,\"rps\":1500.2,\"users_granted\":40,\"verdict\":\"pass\"},{\"id\":4}]}", &rv);
    assert_int_equal(rv, 0);
    assert_non_null(strstr(out, "\n    3 checkout         default    running   2026-11-30 05:51:25"
                                "     50       1234         0    1500.2      40 pass   \n"));
    assert_non_null(strstr(out, "\n    4 -                -          -         -      "));
    free(out);
    out = render_json(ctl_print_workers,
        "{\"workers\":[{\"id\":1,\"name\":\"w1\",\"rss_bytes\":52428800,"
        "\"runs\":[{\"run\":3,\"users\":25},{\"run\":4}]}]}", &rv);
    assert_int_equal(rv, 0);
    assert_non_null(strstr(out, "50.0 MiB"));
    assert_non_null(strstr(out, "  3:25 4:-\n"));
    free(out);
}

static void test_progress_line(void **state)
{
    json_t *run = json_loads("{\"state\":\"running\",\"users\":7,\"duration_s\":12.4,"
                             "\"totals\":{\"failures\":4},\"current\":{\"t\":11,"
                             "\"users\":50,\"rps\":1503.2,\"p95_ms\":1.42,\"failures\":0}}", 0, NULL);
    json_t *bare = json_loads("{\"state\":\"pending\",\"current\":null}", 0, NULL);
    assert_non_null(run);
    assert_non_null(bare);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    ctl_print_progress(f, run, 99);
    ctl_print_progress(f, bare, 3);
    assert_int_equal(fclose(f), 0);
    assert_string_equal(buf, "[  12s] state=running users=50 rps=1503.2 p95=1.42ms errors=4\n"
                             "[   3s] state=pending users=- rps=- p95=- errors=-\n");
    free(buf);
    json_decref(run);
    json_decref(bare);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_totals_and_errors),
        cmocka_unit_test(test_no_errors_section_and_no_title),
        cmocka_unit_test(test_missing_values_print_dashes),
        cmocka_unit_test(test_names_truncated_and_cleaned),
        cmocka_unit_test(test_large_latencies_keep_width),
        cmocka_unit_test(test_latency_from_hist),
        cmocka_unit_test(test_json_report_with_nulls),
        cmocka_unit_test(test_json_runs_and_workers),
        cmocka_unit_test(test_progress_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
