/* report_junit.c — a run's thresholds as JUnit XML for CI systems, and the
 * escaping that XML and HTML text share. */
#include "report.h"

#include <stdbool.h>
#include <stdint.h>

/* Length of the valid UTF-8 sequence at s that XML 1.0 may carry, or 0. */
static size_t utf8_len(const unsigned char *s)
{
    size_t n;
    uint32_t cp, min;
    if (s[0] < 0x80)
        return 1;
    if ((s[0] & 0xE0) == 0xC0)
        n = 2, min = 0x80, cp = s[0] & 0x1Fu;
    else if ((s[0] & 0xF0) == 0xE0)
        n = 3, min = 0x800, cp = s[0] & 0x0Fu;
    else if ((s[0] & 0xF8) == 0xF0)
        n = 4, min = 0x10000, cp = s[0] & 0x07u;
    else
        return 0;
    for (size_t i = 1; i < n; i++) { /* stops at the NUL: it is no continuation byte */
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3Fu);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE ||
        cp == 0xFFFF)
        return 0;
    return n;
}

void report_xml_escape(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p != '\0') {
        size_t n = utf8_len(p);
        bool control = (*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r') || *p == 0x7f;
        if (n == 0 || control) {
            fputs("\xEF\xBF\xBD", out);
            p += n ? n : 1;
            continue;
        }
        switch (*p) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&#39;", out); break;
        default: fwrite(p, 1, n, out); break;
        }
        p += n;
    }
}

/* Counts the thresholds that failed and those not evaluated (no "passed"). A
 * run view without "thresholds" has none: json_array_size of it is 0. */
static void count_thresholds(const json_t *list, size_t *failed, size_t *skipped)
{
    size_t i;
    const json_t *th;
    *failed = *skipped = 0;
    json_array_foreach(list, i, th) {
        const json_t *passed = json_object_get(th, "passed");
        if (json_is_false(passed))
            ++*failed;
        else if (!json_is_true(passed))
            ++*skipped;
    }
}

/* "http_req_duration{endpoint=list} p(95)<500" */
static void threshold_name(FILE *out, const json_t *th)
{
    const char *metric = json_string_value(json_object_get(th, "metric"));
    const char *endpoint = json_string_value(json_object_get(th, "endpoint"));
    report_xml_escape(out, metric ? metric : "threshold");
    if (endpoint != NULL) {
        fputs("{endpoint=", out);
        report_xml_escape(out, endpoint);
        fputc('}', out);
    }
    fputc(' ', out);
    report_xml_escape(out, json_string_value(json_object_get(th, "expression")));
}

static void observed(FILE *out, const json_t *th)
{
    const json_t *v = json_object_get(th, "observed");
    if (json_is_number(v))
        fprintf(out, "observed %g", json_number_value(v));
    else
        fputs("observed: no data", out);
}

static void testcase(FILE *out, const json_t *th, json_int_t run)
{
    const json_t *passed = json_object_get(th, "passed");
    fputs("    <testcase name=\"", out);
    threshold_name(out, th);
    fprintf(out, "\" classname=\"loadcluster.run%" JSON_INTEGER_FORMAT ".thresholds\" time=\"0\"", run);
    if (json_is_true(passed)) {
        fputs("/>\n", out);
        return;
    }
    fputs(">\n", out);
    if (json_is_false(passed)) {
        fputs("      <failure type=\"threshold\" message=\"", out);
        threshold_name(out, th);
        fputs(" failed: ", out);
        observed(out, th);
        fputs("\">", out);
        observed(out, th);
        fputs("</failure>\n", out);
    } else {
        fputs("      <skipped message=\"not evaluated yet\"/>\n", out);
    }
    fputs("    </testcase>\n", out);
}

int report_junit(FILE *out, const json_t *report)
{
    if (!json_is_object(report))
        return -1;
    const json_t *list = json_object_get(report, "thresholds");
    size_t n = json_array_size(list), failed, skipped;
    count_thresholds(list, &failed, &skipped);
    json_int_t run = json_integer_value(json_object_get(report, "id"));
    double secs = json_number_value(json_object_get(report, "duration_s"));
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
    fprintf(out, "<testsuites name=\"loadcluster run %" JSON_INTEGER_FORMAT ": ", run);
    report_xml_escape(out, json_string_value(json_object_get(report, "name")));
    fprintf(out, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"%.3f\">\n",
            n, failed, skipped, secs);
    fprintf(out, "  <testsuite name=\"thresholds\" tests=\"%zu\" failures=\"%zu\" errors=\"0\""
                 " skipped=\"%zu\" time=\"%.3f\">\n", n, failed, skipped, secs);
    size_t i;
    const json_t *th;
    json_array_foreach(list, i, th) {
        testcase(out, th, run);
    }
    fputs("  </testsuite>\n</testsuites>\n", out);
    return ferror(out) ? -1 : 0;
}
