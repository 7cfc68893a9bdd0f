/* test_report_csv.c — the run reports (master/report_csv.c, report_html.c,
 * report_junit.c): Locust's CSV columns and quoting, HTML and XML escaping
 * of hostile names, and the JUnit testcases of the thresholds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report.h"

#define HOSTILE "<script>alert(1)</script>"

/* Locust 2.x, StatsCSV.requests_csv_columns and stats_history_csv_columns. */
static const char *const locust_stats[] = {
    "Type", "Name", "Request Count", "Failure Count", "Median Response Time",
    "Average Response Time", "Min Response Time", "Max Response Time", "Average Content Size",
    "Requests/s", "Failures/s", "50%", "66%", "75%", "80%", "90%", "95%", "98%", "99%", "99.9%",
    "99.99%", "100%"};
static const char *const locust_history[] = {
    "Timestamp", "User Count", "Type", "Name", "Requests/s", "Failures/s", "50%", "66%", "75%",
    "80%", "90%", "95%", "98%", "99%", "99.9%", "99.99%", "100%", "Total Request Count",
    "Total Failure Count", "Total Median Response Time", "Total Average Response Time",
    "Total Min Response Time", "Total Max Response Time", "Total Average Content Size"};

static char *joined(const char *const *cols, size_t n)
{
    static char buf[1024];
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        strcat(buf, i ? "," : "");
        strcat(buf, cols[i]);
    }
    return buf;
}

/* Renders into a string the caller frees (asserting success or failure). */
static char *render(int (*fn)(FILE *, const json_t *), const char *json_text, int expect)
{
    json_error_t err;
    json_t *doc = json_loads(json_text, 0, &err);
    if (doc == NULL)
        fail_msg("bad test JSON: %s", err.text);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(fn(f, doc), expect);
    assert_int_equal(fclose(f), 0);
    json_decref(doc);
    return buf;
}

static char *field(const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    report_csv_field(f, s);
    fclose(f);
    return buf;
}

static char *xml(const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    report_xml_escape(f, s);
    fclose(f);
    return buf;
}

#define ASSERT_CONVERTS(fn, in, want)                                                              \
    do {                                                                                           \
        char *got_ = fn(in);                                                                       \
        assert_string_equal(got_, want);                                                           \
        free(got_);                                                                                \
    } while (0)

static void test_headers_are_locusts(void **state)
{
    (void)state;
    assert_string_equal(report_csv_stats_header,
                        joined(locust_stats, sizeof locust_stats / sizeof locust_stats[0]));
    assert_string_equal(report_csv_history_header,
                        joined(locust_history, sizeof locust_history / sizeof locust_history[0]));
}

static void test_csv_quoting_is_rfc4180(void **state)
{
    (void)state;
    ASSERT_CONVERTS(field, "list", "list");
    ASSERT_CONVERTS(field, "", "");
    ASSERT_CONVERTS(field, "a,b", "\"a,b\"");
    ASSERT_CONVERTS(field, "say \"hi\"", "\"say \"\"hi\"\"\"");
    ASSERT_CONVERTS(field, "two\nlines", "\"two\nlines\"");
    ASSERT_CONVERTS(field, "cr\r", "\"cr\r\"");
    ASSERT_CONVERTS(field, HOSTILE, HOSTILE); /* CSV is not HTML: nothing to quote */
    ASSERT_CONVERTS(field, "\"", "\"\"\"\"");
}

/* OWASP's CSV injection advice: a text cell that a spreadsheet would read as
 * a formula (= + - @, or TAB or CR first) gets a leading ' and is quoted. */
static void test_csv_formulas_are_neutralised(void **state)
{
    (void)state;
    ASSERT_CONVERTS(field, "=HYPERLINK(\"http://evil/\",\"x\")",
                    "\"'=HYPERLINK(\"\"http://evil/\"\",\"\"x\"\")\"");
    ASSERT_CONVERTS(field, "=1+2", "\"'=1+2\"");
    ASSERT_CONVERTS(field, "+1", "\"'+1\"");
    ASSERT_CONVERTS(field, "-1", "\"'-1\""); /* a name, even if it looks like a number */
    ASSERT_CONVERTS(field, "@SUM(A1)", "\"'@SUM(A1)\"");
    ASSERT_CONVERTS(field, "\tx", "\"'\tx\"");
    ASSERT_CONVERTS(field, "\rx", "\"'\rx\"");
    ASSERT_CONVERTS(field, "a=b", "a=b"); /* only the first character matters */
    ASSERT_CONVERTS(field, "GET /a-b", "GET /a-b");

    /* In the files: the name column is neutralised, negative numbers stay numbers. */
    char *csv = render(report_csv_stats,
                       "{\"stats\":[{\"type\":\"GET\",\"name\":\"=cmd|' /C calc'!A0\","
                       "\"requests\":1,\"failures\":0,\"median_ms\":-1.5,\"avg_ms\":1,"
                       "\"min_ms\":1,\"max_ms\":1,\"avg_content_size\":0,\"rps\":1,"
                       "\"failures_per_s\":0,\"percentiles_ms\":{}}]}",
                       0);
    assert_non_null(strstr(csv, "\r\nGET,\"'=cmd|' /C calc'!A0\",1,0,-1.500,1.000,"));
    free(csv);
    csv = render(report_csv_history,
                 "{\"endpoint\":\"+x\",\"method\":\"-GET\",\"seconds\":[{\"t\":1,\"users\":1,"
                 "\"rps\":1,\"failures_per_s\":0,\"total\":{\"requests\":1,\"failures\":0}}]}",
                 0);
    assert_non_null(strstr(csv, "\r\n1,1,\"'-GET\",\"'+x\",1.000000,"));
    free(csv);
}

static const char report_json[] =
    "{\"id\":7,\"name\":\"" HOSTILE "\",\"state\":\"finished\",\"tenant\":\"t\",\"verdict\":\"\","
    "\"duration_s\":10.0,\"totals\":{\"requests\":30,\"failures\":1,\"rps\":3.0,"
    "\"latency_ms\":{\"p50\":1.5,\"p95\":2.5,\"p99\":3.0,\"max\":4.0}},"
    "\"errors\":[{\"endpoint\":\"" HOSTILE "\",\"kind\":\"status\",\"count\":1}],"
    "\"scenario\":{\"name\":\"" HOSTILE "\",\"tasks\":[{\"name\":\"a&b\"}]},"
    "\"stats\":["
    "{\"type\":\"GET\",\"name\":\"a,\\\"b\\\"\",\"requests\":30,\"failures\":1,\"median_ms\":1.5,"
    "\"avg_ms\":1.75,\"min_ms\":0.5,\"max_ms\":4.0,\"avg_content_size\":64.0,\"rps\":3.0,"
    "\"failures_per_s\":0.1,\"percentiles_ms\":{\"50%\":1.5,\"66%\":1.6,\"75%\":1.7,\"80%\":1.8,"
    "\"90%\":2.0,\"95%\":2.5,\"98%\":2.8,\"99%\":3.0,\"99.9%\":3.5,\"99.99%\":3.9,\"100%\":4.0}},"
    "{\"type\":\"POST\",\"name\":\"" HOSTILE "\",\"requests\":0,\"failures\":0,\"median_ms\":null,"
    "\"avg_ms\":null,\"min_ms\":null,\"max_ms\":null,\"avg_content_size\":0,\"rps\":0,"
    "\"failures_per_s\":0,\"percentiles_ms\":{\"50%\":null}},"
    "{\"type\":\"\",\"name\":\"Aggregated\",\"requests\":30,\"failures\":1,\"median_ms\":1.5,"
    "\"avg_ms\":1.75,\"min_ms\":0.5,\"max_ms\":4.0,\"avg_content_size\":64.0,\"rps\":3.0,"
    "\"failures_per_s\":0.1,\"percentiles_ms\":{\"50%\":1.5,\"66%\":1.6,\"75%\":1.7,\"80%\":1.8,"
    "\"90%\":2.0,\"95%\":2.5,\"98%\":2.8,\"99%\":3.0,\"99.9%\":3.5,\"99.99%\":3.9,\"100%\":4.0}}],"
    "\"history\":[{\"t\":100,\"offset_s\":1,\"users\":2,\"requests\":10,\"failures\":0,\"rps\":10,"
    "\"failures_per_s\":0,\"p50_ms\":1.0,\"p95_ms\":2.0,\"p99_ms\":3.0},"
    "{\"t\":101,\"offset_s\":2,\"users\":2,\"requests\":0,\"failures\":0,\"rps\":0,"
    "\"failures_per_s\":0,\"p50_ms\":null,\"p95_ms\":null,\"p99_ms\":null},"
    "{\"t\":102,\"offset_s\":3,\"users\":3,\"requests\":20,\"failures\":1,\"rps\":20,"
    "\"failures_per_s\":1,\"p50_ms\":1.5,\"p95_ms\":2.5,\"p99_ms\":4.0}]}";

static void test_stats_csv_rows(void **state)
{
    (void)state;
    char *csv = render(report_csv_stats, report_json, 0);
    const char *want =
        "GET,\"a,\"\"b\"\"\",30,1,1.500,1.750,0.500,4.000,64.00,3.000000,0.100000,"
        "1.500,1.600,1.700,1.800,2.000,2.500,2.800,3.000,3.500,3.900,4.000\r\n"
        "POST," HOSTILE ",0,0,0,0,0,0,0.00,0.000000,0.000000,"
        "N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A\r\n"
        ",Aggregated,30,1,1.500,1.750,0.500,4.000,64.00,3.000000,0.100000,"
        "1.500,1.600,1.700,1.800,2.000,2.500,2.800,3.000,3.500,3.900,4.000\r\n";
    size_t hlen = strlen(report_csv_stats_header);
    assert_memory_equal(csv, report_csv_stats_header, hlen);
    assert_memory_equal(csv + hlen, "\r\n", 2);
    assert_string_equal(csv + hlen + 2, want);
    free(csv);
    free(render(report_csv_stats, "{\"id\":1}", -1)); /* no "stats": refused */
}

static const char history_json[] =
    "{\"run\":7,\"endpoint\":%s,\"method\":\"%s\",\"seconds\":[{\"t\":100,\"offset_s\":1,"
    "\"users\":2,\"requests\":10,\"failures\":0,\"rps\":10,\"failures_per_s\":0,"
    "\"p50_ms\":1.0,\"p95_ms\":2.0,\"p99_ms\":3.0,\"bytes\":640,\"percentiles_ms\":{\"50%%\":1.0,"
    "\"100%%\":3.0},\"total\":{\"requests\":10,\"failures\":0,\"median_ms\":1.0,\"avg_ms\":1.25,"
    "\"min_ms\":0.5,\"max_ms\":3.0,\"avg_content_size\":64.0}}]}";

static void test_history_csv_rows(void **state)
{
    (void)state;
    char doc[2048];
    snprintf(doc, sizeof doc, history_json, "null", "");
    char *csv = render(report_csv_history, doc, 0);
    const char *row = strstr(csv, "\r\n");
    assert_non_null(row);
    assert_string_equal(row + 2, "100,2,,Aggregated,10.000000,0.000000,1.000,N/A,N/A,N/A,N/A,"
                                 "N/A,N/A,N/A,N/A,N/A,3.000,10,0,1.000,1.250,0.500,3.000,64.00\r\n");
    free(csv);
    snprintf(doc, sizeof doc, history_json, "\"a,b\"", "PUT");
    csv = render(report_csv_history, doc, 0);
    assert_non_null(strstr(csv, "\r\n100,2,PUT,\"a,b\",10.000000,"));
    free(csv);
    /* A history without running totals (not the full one) cannot be a CSV. */
    free(render(report_csv_history, "{\"seconds\":[{\"t\":1}]}", -1));
}

static void test_xml_escaping(void **state)
{
    (void)state;
    ASSERT_CONVERTS(xml, "a&b<c>\"d'e", "a&amp;b&lt;c&gt;&quot;d&#39;e");
    ASSERT_CONVERTS(xml, HOSTILE, "&lt;script&gt;alert(1)&lt;/script&gt;");
    ASSERT_CONVERTS(xml, "tab\tnl\ncr\r", "tab\tnl\ncr\r");
    ASSERT_CONVERTS(xml, "bell\x01" "del\x7f", "bell\xEF\xBF\xBD" "del\xEF\xBF\xBD");
    ASSERT_CONVERTS(xml, "caf\xC3\xA9 \xF0\x9F\x98\x80", "caf\xC3\xA9 \xF0\x9F\x98\x80");
    ASSERT_CONVERTS(xml, "bad\xFF" "x", "bad\xEF\xBF\xBDx");
    ASSERT_CONVERTS(xml, "short\xC3", "short\xEF\xBF\xBD");     /* truncated sequence */
    ASSERT_CONVERTS(xml, "over\xC0\xAF", "over\xEF\xBF\xBD\xEF\xBF\xBD"); /* overlong '/' */
    ASSERT_CONVERTS(xml, "sur\xED\xA0\x80", "sur\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
    ASSERT_CONVERTS(xml, NULL, "");
}

static void test_html_is_escaped_and_self_contained(void **state)
{
    (void)state;
    char *html = render(report_html, report_json, 0);
    assert_null(strstr(html, "<script"));
    assert_non_null(strstr(html, "<h1>Run 7: &lt;script&gt;alert(1)&lt;/script&gt;</h1>"));
    assert_non_null(strstr(html, "<title>Run 7 &lt;script&gt;alert(1)&lt;/script&gt;"));
    /* The scenario, JSON-quoted, then HTML-escaped. */
    assert_non_null(strstr(html, "&quot;name&quot;: &quot;&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert_non_null(strstr(html, "&quot;a&amp;b&quot;"));
    assert_non_null(strstr(html, "<td class=\"l\">a,&quot;b&quot;</td>"));
    assert_non_null(strstr(html, "<svg "));
    assert_non_null(strstr(html, "<path "));
    /* A second without requests breaks each latency line in two: lone points
     * drawn as dots. Rates and users have a value every second: one line each. */
    int paths = 0, dots = 0;
    for (const char *p = html; (p = strstr(p, "<path ")) != NULL; p++)
        paths++;
    for (const char *p = html; (p = strstr(p, " l0 0\"/>")) != NULL; p++)
        dots++;
    assert_int_equal(paths, 2 + 3 * 2 + 1);
    assert_int_equal(dots, 3 * 2);
    for (const char *bad = "src=\0href=\0url(\0@import\0http://\0https://\0<link\0"; *bad;
         bad += strlen(bad) + 1)
        if (strstr(html, bad) != NULL)
            fail_msg("the page references something outside itself: %s", bad);
    assert_int_equal(strncmp(html, "<!DOCTYPE html>", 15), 0);
    assert_non_null(strstr(html, "</html>\n"));
    free(html);
    free(render(report_html, "[]", -1));
}

static void test_junit_one_testcase_per_threshold(void **state)
{
    (void)state;
    char *x = render(report_junit,
                     "{\"id\":3,\"name\":\"" HOSTILE "\",\"duration_s\":2.5,\"verdict\":\"fail\","
                     "\"thresholds\":[{\"metric\":\"http_req_duration\",\"endpoint\":\"a<b\","
                     "\"expression\":\"p(95)<500\",\"observed\":612.5,\"passed\":false},"
                     "{\"metric\":\"http_req_failed\",\"endpoint\":null,\"expression\":\"rate<0.01\","
                     "\"observed\":0,\"passed\":true},"
                     "{\"metric\":\"http_reqs\",\"expression\":\"count>10\",\"observed\":null}]}",
                     0);
    assert_non_null(strstr(x, "<testsuites name=\"loadcluster run 3: &lt;script&gt;alert(1)"
                              "&lt;/script&gt;\" tests=\"3\" failures=\"1\" errors=\"0\" "
                              "skipped=\"1\" time=\"2.500\">"));
    assert_non_null(strstr(x, "<testsuite name=\"thresholds\" tests=\"3\" failures=\"1\""));
    assert_non_null(strstr(x, "<testcase name=\"http_req_duration{endpoint=a&lt;b} p(95)&lt;500\""));
    assert_non_null(strstr(x, "<failure type=\"threshold\" message=\"http_req_duration{endpoint="
                              "a&lt;b} p(95)&lt;500 failed: observed 612.5\">observed 612.5</failure>"));
    assert_non_null(strstr(x, "<testcase name=\"http_req_failed rate&lt;0.01\" classname=\"loadcluster"
                              ".run3.thresholds\" time=\"0\"/>"));
    assert_non_null(strstr(x, "<skipped message=\"not evaluated yet\"/>"));
    assert_null(strstr(x, "<script"));
    free(x);

    /* No thresholds (older run views have no field at all): zero tests. */
    x = render(report_junit, "{\"id\":4,\"name\":\"n\",\"duration_s\":1,\"verdict\":\"\"}", 0);
    assert_non_null(strstr(x, "<testsuite name=\"thresholds\" tests=\"0\" failures=\"0\""));
    assert_null(strstr(x, "<testcase"));
    free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_headers_are_locusts),
        cmocka_unit_test(test_csv_quoting_is_rfc4180),
        cmocka_unit_test(test_csv_formulas_are_neutralised),
        cmocka_unit_test(test_stats_csv_rows),
        cmocka_unit_test(test_history_csv_rows),
        cmocka_unit_test(test_xml_escaping),
        cmocka_unit_test(test_html_is_escaped_and_self_contained),
        cmocka_unit_test(test_junit_one_testcase_per_threshold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
