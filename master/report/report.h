/* report.h — a run's downloadable reports (Locust CSV, self-contained HTML, JUnit XML) rendered from its report JSON. */
#ifndef MASTER_REPORT_H
#define MASTER_REPORT_H

#include <jansson.h>
#include <stdio.h>

/* The report JSON is the run view (store_run_json, with "verdict" and
 * "thresholds" when the run has them) plus "scenario" (the scenario as
 * submitted), "stats" (store_report_stats_json) and "history" (the
 * "seconds" of store_history_json). Renderers return 0, or -1 when the JSON
 * lacks what they need or writing failed. */

/* Locust's stats CSV and stats-history CSV headers, exactly (no line end). */
extern const char report_csv_stats_header[];
extern const char report_csv_history_header[];

/* One RFC 4180 text field: quoted, with quotes doubled, when it holds a
 * comma, a quote, CR or LF (as Python's csv module, and so Locust, writes
 * it). One that starts with = + - @, TAB or CR, which a spreadsheet would run
 * as a formula, is quoted and prefixed with ' (OWASP's CSV injection advice). */
void report_csv_field(FILE *out, const char *s);
/* The stats CSV (Locust's <prefix>_stats.csv): one row per endpoint (Type is
 * the method), then "Aggregated"; CRLF line ends. */
int report_csv_stats(FILE *out, const json_t *report);
/* The stats-history CSV (<prefix>_stats_history.csv) of a full history
 * (store_history_json with full): one row per second, of the endpoint the
 * history was asked for, or "Aggregated". */
int report_csv_history(FILE *out, const json_t *history);
/* The same a row at a time, for a history too long to hold whole: the
 * header line, then each entry of "seconds" with the document's other
 * fields in history (endpoint, method). */
void report_csv_history_begin(FILE *out);
int report_csv_history_row(FILE *out, const json_t *history, const json_t *sec);

/* Text for HTML and XML 1.0 content and attribute values: & < > " ' as
 * entities, control characters (but tab, LF, CR) and invalid UTF-8 bytes as
 * U+FFFD, which neither format may carry. */
void report_xml_escape(FILE *out, const char *s);

/* One HTML page with inline CSS and server-drawn SVG charts; it loads
 * nothing (no scripts, styles, fonts or images from anywhere). */
int report_html(FILE *out, const json_t *report);

/* JUnit XML: one testsuite "thresholds" with one testcase per threshold (a
 * <failure> with the observed value when it failed); zero tests without. */
int report_junit(FILE *out, const json_t *report);

/* Renders into a malloc'd buffer: *out and *len set on 0. */
int report_render(int (*render)(FILE *, const json_t *), const json_t *json, char **out,
                  size_t *len);

#endif
