/* report.h — a run's downloadable reports (Locust's CSVs, self-contained HTML, JUnit XML) rendered from its report JSON. */
#ifndef MASTER_REPORT_H
#define MASTER_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "store_history.h"

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
/* The failures CSV (Locust's <prefix>_failures.csv): Method, Name, Error,
 * Occurrences, one row per (endpoint, error kind) of the run's "errors";
 * Method is the endpoint's from "stats" ("" when it has none). */
extern const char report_csv_failures_header[];
int report_csv_failures(FILE *out, const json_t *report);
/* The stats-history CSV (<prefix>_stats_history.csv) of a full history
 * (store_history_json with full): one row per second, of the endpoint the
 * history was asked for, or "Aggregated". */
int report_csv_history(FILE *out, const json_t *history);
/* The same from entries as store_history_each makes them, for a history too
 * long to hold whole: init writes the header line, each entry its row (with
 * head's endpoint and method), done frees what the rows needed and returns 0,
 * or -1 when a write failed. The bytes are report_csv_history's. */
typedef struct report_csv_history_s {
    FILE *out;        /* public */
    char *line;       /* private: ",type,name" and room for a row's numbers */
    size_t label_len; /* private */
} report_csv_history_t;
void report_csv_history_init(report_csv_history_t *w, FILE *out);
int report_csv_history_entry(report_csv_history_t *w, const store_history_head_t *head,
                             const store_history_entry_t *e);
int report_csv_history_done(report_csv_history_t *w);

/* Text for HTML and XML 1.0 content and attribute values: & < > " ' as
 * entities, control characters (but tab, LF, CR) and invalid UTF-8 bytes as
 * U+FFFD, which neither format may carry. */
void report_xml_escape(FILE *out, const char *s);

/* One HTML page with inline CSS and server-drawn SVG charts; it loads
 * nothing (no scripts, styles, fonts or images from anywhere). */
int report_html(FILE *out, const json_t *report);

/* report.json for a history too long to hold whole: begin writes report
 * (the report JSON without "history") but its end, each entry of the walk
 * follows, end closes it. The bytes are json_dumps(JSON_COMPACT) of the
 * whole report. Each returns 0, or -1 when report is not an object or a
 * write failed. */
typedef struct report_json_stream_s {
    FILE *out;      /* public */
    size_t entries; /* read-only */
} report_json_stream_t;
int report_json_begin(report_json_stream_t *w, FILE *out, const json_t *report);
int report_json_entry(report_json_stream_t *w, const store_history_entry_t *e);
int report_json_end(report_json_stream_t *w);

/* report.html for a history too long to hold whole: its entries become
 * chart points in spool (a file open for update, empty) as the walk makes
 * them, then report_html_streamed writes the page of report (the report
 * JSON without "history"). The bytes are report_html's of the whole JSON. */
#define REPORT_CHART_VALUES 6
typedef struct report_point_s {
    double x;                      /* offset_s */
    double v[REPORT_CHART_VALUES]; /* rps, failures/s, p50, p95, p99 (ms), users */
    unsigned has;                  /* bit k: v[k] is a value (else null; v[k] 0) */
} report_point_t;
typedef struct report_html_points_s {
    FILE *spool;  /* public */
    size_t count; /* read-only */
} report_html_points_t;
void report_html_points_init(report_html_points_t *p, FILE *spool);
int report_html_points_add(report_html_points_t *p, const store_history_entry_t *e);
int report_html_streamed(FILE *out, const json_t *report, report_html_points_t *points);

/* JUnit XML: one testsuite "thresholds" with one testcase per threshold (a
 * <failure> with the observed value when it failed); zero tests without. */
int report_junit(FILE *out, const json_t *report);

/* Renders into a malloc'd buffer: *out and *len set on 0. */
int report_render(int (*render)(FILE *, const json_t *), const json_t *json, char **out,
                  size_t *len);

#endif
