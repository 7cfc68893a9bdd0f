/* test_ctl_print.c — the report table (common/lc_report.c) and loadctl's JSON printing
 * (ctl/ctl_print.c): exact layouts, and columns that stay aligned and apart for any value. */
#include <math.h>
#include <setjmp.h>
#include <stdbool.h>
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
    "Name    Method  Requests  Failures     RPS   Min  Mean   p50   p90   p95   p99    Max  (ms)\n"

/* The endpoint table's titles and which are right-aligned (numbers). */
static const char *const report_titles[] = {"Name", "Method", "Requests", "Failures", "RPS", "Min",
                                            "Mean", "p50", "p90", "p95", "p99", "Max"};
static const bool report_right[] = {false, false, true, true, true, true,
                                    true,  true,  true, true, true, true};

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

/* Copies text with each UTF-8 sequence as one '#', so that byte offsets are display columns. */
static char *columns_of(const char *text)
{
    char *m = malloc(strlen(text) + 1), *o = m;
    assert_non_null(m);
    for (const unsigned char *p = (const unsigned char *)text; *p != '\0'; p++)
        if ((*p & 0xc0) != 0x80)
            *o++ = *p >= 0x80 ? '#' : (char)*p;
    *o = '\0';
    return m;
}

/* Asserts that the nrows lines after the title line (the first starting with titles[0] after
 * any spaces) keep every column where its title is: a right-aligned cell ends where its title
 * ends, a left-aligned one starts where its title starts, and a space stands on that side, so
 * no cell ever touches its neighbour. Only a left-aligned cell of a column in may_blank may be
 * empty. */
static void assert_aligned(const char *text, const char *const *titles, const bool *right,
                           size_t ncols, size_t nrows, const bool *may_blank)
{
    char *m = columns_of(text), *head = m;
    size_t start[16], end[16], from = 0;
    assert_true(ncols <= 16);
    while (strncmp(head + strspn(head, " "), titles[0], strlen(titles[0])) != 0) {
        head = strchr(head, '\n');
        assert_non_null(head);
        head++;
    }
    size_t head_len = strcspn(head, "\n");
    for (size_t i = 0; i < ncols; i++) {
        char *t = strstr(head + from, titles[i]);
        assert_non_null(t);
        start[i] = (size_t)(t - head);
        end[i] = start[i] + strlen(titles[i]);
        assert_true(end[i] <= head_len);
        from = end[i];
    }
    const char *line = head + head_len + 1;
    for (size_t r = 0; r < nrows; r++) {
        size_t len = strcspn(line, "\n");
        assert_true(len > 0 && line[len - 1] != ' '); /* no trailing spaces */
        for (size_t i = 0; i < ncols; i++) {
            if (right[i]) {
                assert_true(end[i] <= len && line[end[i] - 1] != ' ');
                assert_true(end[i] == len || line[end[i]] == ' ');
            } else {
                assert_true(start[i] == 0 || line[start[i] - 1] == ' ');
                assert_true(start[i] < len || (may_blank && may_blank[i]));
                if (start[i] < len && line[start[i]] == ' ')
                    assert_true(may_blank && may_blank[i]);
            }
        }
        line += len + (line[len] == '\n');
    }
    free(m);
}

static void test_rows_totals_and_errors(void **state)
{
    lc_report_row_t rows[] = {
        {"list", "GET", 7500, 0, 1500.0, lat_a},
        {"create", "POST", 2500, 3, 500.0, {0.30, 1.10, 1.00, 2.00, 2.50, 3.00, 150.0}},
    };
    lc_report_error_t errors[] = {{"create", "status", 3, NULL}};
    lc_report_t r = {"run 3 checkout: finished", 5.0, rows, 2,
                     {"Total", NULL, 10000, 3, 2000.0, lat_a}, errors, 1, 0, 0, 0, NULL, 0};
    char *out = render(&r);
    assert_string_equal(out,
        "run 3 checkout: finished  (duration 5.0 s)\n" HEADER
        "list    GET         7500         0  1500.0  0.21  0.80  0.70  1.20  1.50  2.90  12.30\n"
        "create  POST        2500         3   500.0  0.30  1.10  1.00  2.00  2.50  3.00  150.0\n"
        "Total              10000         3  2000.0  0.21  0.80  0.70  1.20  1.50  2.90  12.30\n"
        "Errors:\n"
        "Endpoint  Kind    Count\n"
        "create    status      3\n");
    free(out);
}

static void test_no_errors_section_and_no_title(void **state)
{
    lc_report_row_t rows[] = {{"list", "GET", 1, 0, 1.0, lat_a}};
    lc_report_t r = {NULL, 1.0, rows, 1, {NULL, NULL, 1, 0, 1.0, lat_a}, NULL, 0, 0, 0, 0, NULL, 0};
    char *out = render(&r);
    assert_null(strstr(out, "Errors"));
    assert_memory_equal(out, "Name   Method  Requests", strlen("Name   Method  Requests"));
    assert_non_null(strstr(out, "\nTotal    "));
    free(out);
}

static void test_missing_values_print_dashes(void **state)
{
    lc_report_row_t rows[] = {{NULL, NULL, UINT64_MAX, UINT64_MAX, NAN, lat_unknown}};
    lc_report_error_t errors[] = {{NULL, "connect", UINT64_MAX, NULL}};
    lc_report_t r = {"run 9 x: running", NAN, rows, 1,
                     {"Total", NULL, UINT64_MAX, 0, NAN, lat_unknown}, errors, 1, 7, 3, 2, NULL, 0};
    char *out = render(&r);
    assert_string_equal(out,
        "run 9 x: running  (duration -)\n"
        "Name   Method  Requests  Failures  RPS  Min  Mean  p50  p90  p95  p99  Max  (ms)\n"
        "-      -              -         -    -    -     -    -    -    -    -    -\n"
        "Total                 -         0    -    -     -    -    -    -    -    -\n"
        "Dropped starts (no free user): 7\n"
        "TLS handshakes: 3 full, 2 resumed\n"
        "Errors:\n"
        "Endpoint  Kind     Count\n"
        "-         connect      -\n");
    free(out);
}

static void test_names_truncated_and_cleaned(void **state)
{
    lc_report_row_t rows[] = {
        {"a-very-long-endpoint-name-that-goes-on-and-on-for-sixty-chars", "OPTIONS", 1, 0, 1.0,
         lat_a},
        {"caf\xc3\xa9\n\x1b[2J\xff", "GET", 1, 0, 1.0, lat_a},
    };
    lc_report_t r = {NULL, 1.0, rows, 2, {"Total", NULL, 2, 0, 2.0, lat_a}, NULL, 0, 0, 0, 0, NULL, 0};
    char *out = render(&r);
    /* Cut at 40 columns ending in an ellipsis; OPTIONS fits its column. */
    assert_non_null(strstr(out, "\na-very-long-endpoint-name-that-goes-on-\xe2\x80\xa6  OPTIONS  "));
    /* é is one column; the newline, the escape and the stray byte become '?'. */
    assert_non_null(strstr(out, "\ncaf\xc3\xa9??[2J?                                GET  "));
    assert_aligned(out, report_titles, report_right, 12, 3,
                   (const bool[]){false, true, false});
    free(out);
}

static void test_large_latencies_keep_width(void **state)
{
    lc_report_latency_t big = {99.99, 123.0, 999.94, 1500.0, 12345.0, 99999.0, 100000.0};
    lc_report_row_t rows[] = {{"slow", "GET", 1, 1, 0.1, big}};
    lc_report_t r = {NULL, 1.0, rows, 1, {"Total", NULL, 1, 1, 0.1, big}, NULL, 0, 0, 0, 0, NULL, 0};
    char *out = render(&r);
    assert_non_null(strstr(out,
        "\nslow   GET            1         1  0.1  99.99  123.0  999.9  1500  12345  99999  100000\n"));
    assert_aligned(out, report_titles, report_right, 12, 2, (const bool[]){false, true, false});
    free(out);
}

/* The bug this layout fixes: 291439 failures next to 145646.7 rps printed as 291439145646.7. */
static void test_huge_values_keep_columns_apart(void **state)
{
    lc_report_latency_t slow = {0.01, 1234567.0, 999.0, 100000.0, 2e6, 3e7, 4e9};
    lc_report_latency_t zero = {0, 0, 0, 0, 0, 0, 0};
    lc_report_row_t rows[] = {
        {"list", "GET", 1000000000000ull, 291439, 145646.7, slow},
        {"idle", "GET", 0, 0, 0.0, zero},
        {"an-endpoint-name-of-sixty-characters-0123456789-abcdefghijkl", "POST", 7, 0, 0.5, lat_a},
    };
    lc_report_error_t errors[] = {{"list", "status", 291439, NULL},
                                  {rows[2].name, "connect_refused", 1000000000000ull, NULL}};
    lc_report_t r = {"run 1 big: finished", 3600.0, rows, 3,
                     {"Total", NULL, 1000000000007ull, 291439, 145647.2, slow}, errors, 2, 0, 0, 0, NULL, 0};
    char *out = render(&r);
    assert_null(strstr(out, "291439145646.7"));
    assert_non_null(strstr(out, " 1000000000000    291439  145646.7 "));
    assert_non_null(strstr(out, "\nidle  "));
    assert_aligned(out, report_titles, report_right, 12, 4, (const bool[]){false, true, false});
    const char *const error_titles[] = {"Endpoint", "Kind", "Count"};
    assert_aligned(out, error_titles, (const bool[]){false, false, true}, 3, 2, NULL);
    free(out);
}

/* The series a journey run reports ("iteration:buyer" ITERATION, "group:checkout" GROUP) are
 * named for people, with no method, and keep the columns apart at any magnitude (issue 14). */
static void test_journey_and_group_rows_named(void **state)
{
    lc_report_latency_t slow = {0.01, 1234567.0, 999.0, 100000.0, 2e6, 3e7, 4e9};
    lc_report_row_t rows[] = {
        {"login", "POST", 1000000000000ull, 291439, 145646.7, slow},
        {"iteration:buyer", "ITERATION", 999999999ull, 291439, 145646.7, slow},
        {"group:checkout", "GROUP", 12, 0, 0.1, lat_a},
        {"iteration:a-journey-name-of-sixty-characters-0123456789-abcdefgh", "ITERATION", 1, 0,
         0.1, lat_a},
    };
    lc_report_t r = {"run 1 shop: finished", 3600.0, rows, 4,
                     {"Total", NULL, 1000000000000ull, 291439, 145646.7, slow}, NULL, 0, 0, 0, 0,
                     NULL, 0};
    char *out = render(&r);
    assert_null(strstr(out, "iteration:"));
    assert_null(strstr(out, "group:"));
    assert_null(strstr(out, "ITERATION"));
    assert_null(strstr(out, "GROUP"));
    assert_null(strstr(out, "291439145646.7"));
    /* The method column is blank on these rows: the name, then the numbers. */
    assert_non_null(strstr(out, "\njourney buyer                                         "
                                "999999999    291439  145646.7 "));
    assert_non_null(strstr(out, "\ngroup checkout                                               "
                                "12 "));
    assert_non_null(strstr(out, "\njourney a-journey-name-of-sixty-charact\xe2\x80\xa6        "
                                "              1 "));
    assert_aligned(out, report_titles, report_right, 12, 5, (const bool[]){false, true, false});
    free(out);
}

/* A first error message and the checks table; a message's control characters and
 * escapes never reach the terminal. */
static void test_first_messages_and_checks(void **state)
{
    lc_report_row_t rows[] = {{"login", "POST", 4, 2, 1.0, lat_a}};
    lc_report_error_t errors[] = {
        {"login", "script", 2, "journeys[0].steps[1]: [string \"journey\"]:3: boom\x1b[2J"},
        {"login", "status", 1, NULL}};
    lc_report_check_t checks[] = {{"status is 200", 3, 1}, {"has token", 4, 0}};
    lc_report_t r = {NULL, 1.0, rows, 1, {"Total", NULL, 4, 2, 1.0, lat_a}, errors, 2, 0, 0, 0,
                     checks, 2};
    char *out = render(&r);
    assert_non_null(strstr(out, "  first script error on login: journeys[0].steps[1]: "
                                "[string \"journey\"]:3: boom?[2J\n"));
    assert_null(strstr(out, "first status error"));
    assert_null(strchr(out, '\x1b'));
    assert_non_null(strstr(out, "Checks:\nCheck          Passed  Failed\n"
                                "status is 200       3       1\nhas token           4       0\n"));
    free(out);
}

/* Rows for journeys and groups are labels with spaces, and must not break the columns. */
static void test_labels_with_spaces_align(void **state)
{
    lc_report_row_t rows[] = {
        {"journey buyer", NULL, 12345, 12, 41.2, lat_a},
        {"group checkout", "", 999999, 0, 3333.3, lat_a},
        {"GET /items/${item}", "GET", 5, 5, 0.1, lat_a},
    };
    lc_report_t r = {NULL, 1.0, rows, 3, {"Total", NULL, 1012349, 17, 3374.6, lat_a}, NULL, 0, 0,
                     0, 0, NULL, 0};
    char *out = render(&r);
    assert_non_null(strstr(out, "\njourney buyer       -          12345"));
    assert_aligned(out, report_titles, report_right, 12, 4, (const bool[]){false, true, false});
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
        "run 3 checkout: finished  (duration 5.0 s)\n"
        "Name   Method  Requests  Failures  RPS   Min  Mean   p50   p90   p95   p99    Max  (ms)\n"
        "list   GET           10         0  2.0  0.21  0.80  0.70  1.20  1.50  2.90  12.30\n"
        "odd    -              -         -    -     -     -     -     -     -     -      -\n"
        "Total                10         -  2.0     -     -     -     -     -     -      -\n");
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
    assert_string_equal(out,
        "ID  NAME      TENANT   STATE    CREATED (UTC)        USERS  REQUESTS  FAILURES     RPS  GRANTED  VERDICT\n"
        " 3  checkout  default  running  2026-11-30 05:51:25     50      1234         0  1500.2       40  pass\n"
        " 4  -         -        -        -                        -         -         -       -        -  -\n");
    free(out);
    out = render_json(ctl_print_workers,
        "{\"workers\":[{\"id\":1,\"name\":\"w1\",\"rss_bytes\":52428800,"
        "\"runs\":[{\"run\":3,\"users\":25},{\"run\":4}]}]}", &rv);
    assert_int_equal(rv, 0);
    assert_non_null(strstr(out, "50.0 MiB"));
    assert_string_equal(out,
        "ID  NAME  ADDRESS  THREADS  CAPACITY  CPU%       RSS  SEEN  RUNS (run:users)\n"
        " 1  w1    -              -         -     -  50.0 MiB     -  3:25 4:-\n");
    free(out);
}

static const char *const run_titles[] = {"ID", "NAME", "TENANT", "STATE", "CREATED (UTC)", "USERS",
                                         "REQUESTS", "FAILURES", "RPS", "GRANTED", "VERDICT"};
static const bool run_right[] = {true, false, false, false, false, true,
                                 true, true,  true,  true,  false};

static void test_json_tables_fit_huge_values(void **state)
{
    int rv;
    char *out = render_json(ctl_print_runs,
        "{\"runs\":[{\"id\":123456,\"name\":\"an-endpoint-name-of-sixty-characters-0123456789-abcdefghijkl\","
        "\"tenant\":\"default\",\"state\":\"finished\",\"created_at\":\"2026-11-30T05:51:25.123Z\","
        "\"users\":1000000,\"requests\":1000000000000,\"failures\":291439,\"rps\":145646.7,"
        "\"users_granted\":1000000,\"verdict\":\"fail\"},"
        "{\"id\":1,\"name\":\"x\",\"tenant\":\"t\",\"state\":\"pending\",\"created_at\":\"-\","
        "\"users\":0,\"requests\":0,\"failures\":0,\"rps\":0,\"users_granted\":0,\"verdict\":\"-\"}]}",
        &rv);
    assert_int_equal(rv, 0);
    assert_null(strstr(out, "291439145646.7"));
    assert_non_null(strstr(out, "  1000000000000    291439  145646.7  "));
    assert_non_null(strstr(out, "an-endpoint-name-of-sixty-characters-01\xe2\x80\xa6  default"));
    assert_aligned(out, run_titles, run_right, 11, 2, NULL);
    free(out);
    out = render_json(ctl_print_workers,
        "{\"workers\":[{\"id\":1,\"name\":\"w1\",\"address\":\"127.0.0.1:9000\",\"threads\":1024,"
        "\"capacity\":10000000000,\"cpu_percent\":12345.6,\"rss_bytes\":1099511627776,"
        "\"last_seen_ms_ago\":123456789,\"runs\":[{\"run\":3,\"users\":25}]},"
        "{\"id\":2,\"name\":\"w2\",\"address\":\"h\",\"threads\":0,\"capacity\":0,"
        "\"cpu_percent\":0,\"rss_bytes\":0,\"last_seen_ms_ago\":0,\"runs\":[]}]}", &rv);
    assert_int_equal(rv, 0);
    const char *const worker_titles[] = {"ID", "NAME", "ADDRESS", "THREADS", "CAPACITY", "CPU%",
                                         "RSS", "SEEN", "RUNS (run:users)"};
    assert_aligned(out, worker_titles,
                   (const bool[]){true, false, false, true, true, true, true, true, false}, 9, 2,
                   NULL);
    free(out);
    out = render_json(ctl_print_tenants,
        "{\"tenants\":[{\"name\":\"a\",\"weight\":100000000000,\"created_at\":\"2026-11-30T05:51:25Z\"},"
        "{\"name\":\"b\",\"weight\":0,\"created_at\":\"2026-11-30T05:51:25Z\"}]}", &rv);
    assert_int_equal(rv, 0);
    assert_aligned(out, (const char *const[]){"NAME", "WEIGHT", "CREATED (UTC)"},
                   (const bool[]){false, true, false}, 3, 2, NULL);
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
        cmocka_unit_test(test_huge_values_keep_columns_apart),
        cmocka_unit_test(test_journey_and_group_rows_named),
        cmocka_unit_test(test_labels_with_spaces_align),
        cmocka_unit_test(test_latency_from_hist),
        cmocka_unit_test(test_json_report_with_nulls),
        cmocka_unit_test(test_json_runs_and_workers),
        cmocka_unit_test(test_json_tables_fit_huge_values),
        cmocka_unit_test(test_progress_line),
        cmocka_unit_test(test_first_messages_and_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
