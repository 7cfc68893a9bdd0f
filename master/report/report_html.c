/* report_html.c — a run's report as one self-contained HTML page: inline
 * CSS, SVG charts drawn here from the history, tables, the scenario. It
 * references nothing outside itself, so it can be mailed or archived. */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>


#define SVG_W 960
#define SVG_H 240
#define PAD_L 64
#define PAD_R 16
#define PAD_T 30
#define PAD_B 28
#define DASH "\xE2\x80\x93" /* an en dash: "no value" */

static const char css[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#222;"
    "max-width:1160px;margin:1.5em auto;padding:0 1em}"
    "h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.15em;margin-top:1.8em;"
    "border-bottom:1px solid #ddd;padding-bottom:.2em}h3{font-size:1em;margin:1.2em 0 .2em}"
    "table{border-collapse:collapse;width:100%;font-size:13px}"
    "th,td{padding:4px 8px;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}"
    "th{background:#f5f5f5}.l{text-align:left;white-space:normal;word-break:break-all}"
    "tr.total td{font-weight:600;border-top:2px solid #ccc}"
    "dl{display:grid;grid-template-columns:max-content auto;gap:2px 18px}dt{color:#666}dd{margin:0}"
    ".badge{display:inline-block;padding:1px 10px;border-radius:4px;color:#fff;font-weight:600}"
    ".pass{background:#2e7d32}.fail{background:#c62828}.none{background:#757575}"
    "pre{background:#f6f8fa;padding:1em;overflow:auto;font-size:12px;white-space:pre-wrap}"
    "svg{display:block;width:100%;height:auto}svg text{font-size:11px;fill:#555}"
    ".muted{color:#888}footer{margin-top:2em;color:#888;font-size:12px}";

static const char *str_of(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

/* A JSON value as escaped text: strings, integers, reals with two decimals;
 * a dash for null or missing. */
static void put_value(FILE *out, const json_t *v)
{
    if (json_is_string(v))
        report_xml_escape(out, json_string_value(v));
    else if (json_is_integer(v))
        fprintf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else if (json_is_real(v))
        fprintf(out, "%.2f", json_real_value(v));
    else if (json_is_boolean(v))
        fputs(json_is_true(v) ? "yes" : "no", out);
    else
        fputs(DASH, out);
}

/* A number with a fixed number of decimals, or a dash. */
static void put_fixed(FILE *out, const json_t *v, int decimals)
{
    if (json_is_number(v))
        fprintf(out, "%.*f", decimals, json_number_value(v));
    else
        fputs(DASH, out);
}

static void kv(FILE *out, const char *label, const json_t *v)
{
    fprintf(out, "<dt>%s</dt><dd>", label);
    put_value(out, v);
    fputs("</dd>\n", out);
}

static void head(FILE *out, const json_t *report)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n", out);
    fputs("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n", out);
    fprintf(out, "<title>Run %" JSON_INTEGER_FORMAT " ",
            json_integer_value(json_object_get(report, "id")));
    report_xml_escape(out, str_of(report, "name"));
    fprintf(out, " \xE2\x80\x94 loadcluster report</title>\n<style>%s</style>\n</head>\n<body>\n", css);
}

static void verdict_badge(FILE *out, const char *verdict, bool has_thresholds)
{
    if (strcmp(verdict, "pass") == 0)
        fputs("<span class=\"badge pass\">PASS</span>", out);
    else if (strcmp(verdict, "fail") == 0)
        fputs("<span class=\"badge fail\">FAIL</span>", out);
    else if (has_thresholds)
        fputs("<span class=\"badge none\">not judged yet</span>", out);
    else
        fputs("<span class=\"badge none\">no thresholds</span>", out);
}

static void latency_line(FILE *out, const json_t *lat)
{
    static const char *const keys[] = {"p50", "p95", "p99", "max"};
    fputs("<dt>Latency (ms)</dt><dd>", out);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        fprintf(out, "%s%s ", i ? " \xC2\xB7 " : "", keys[i]);
        put_fixed(out, json_object_get(lat, keys[i]), 2);
    }
    fputs("</dd>\n", out);
}

static void summary(FILE *out, const json_t *report)
{
    const json_t *totals = json_object_get(report, "totals");
    fprintf(out, "<h1>Run %" JSON_INTEGER_FORMAT ": ",
            json_integer_value(json_object_get(report, "id")));
    report_xml_escape(out, str_of(report, "name"));
    fputs("</h1>\n<p>", out);
    verdict_badge(out, str_of(report, "verdict"),
                  json_array_size(json_object_get(report, "thresholds")) > 0);
    fputs(" <span class=\"muted\">state</span> ", out);
    report_xml_escape(out, str_of(report, "state"));
    fputs("</p>\n<dl>\n", out);
    kv(out, "Tenant", json_object_get(report, "tenant"));
    if (str_of(report, "reason")[0] != '\0')
        kv(out, "Reason", json_object_get(report, "reason"));
    kv(out, "Created", json_object_get(report, "created_at"));
    kv(out, "Started", json_object_get(report, "started_at"));
    kv(out, "Finished", json_object_get(report, "finished_at"));
    kv(out, "Duration (s)", json_object_get(report, "duration_s"));
    kv(out, "Users", json_object_get(report, "users"));
    kv(out, "Requests", json_object_get(totals, "requests"));
    kv(out, "Failures", json_object_get(totals, "failures"));
    kv(out, "Requests/s", json_object_get(totals, "rps"));
    latency_line(out, json_object_get(totals, "latency_ms"));
    if (json_integer_value(json_object_get(totals, "dropped")) > 0)
        kv(out, "Dropped starts", json_object_get(totals, "dropped"));
    fputs("</dl>\n", out);
}

static void warnings(FILE *out, const json_t *list)
{
    size_t i;
    const json_t *w;
    if (json_array_size(list) == 0)
        return;
    fputs("<h2>Warnings</h2>\n<ul>\n", out);
    json_array_foreach(list, i, w) {
        fputs("<li>", out);
        put_value(out, json_is_string(w) ? w : json_object_get(w, "message"));
        fputs("</li>\n", out);
    }
    fputs("</ul>\n", out);
}

static void thresholds(FILE *out, const json_t *list)
{
    size_t i;
    const json_t *th;
    if (json_array_size(list) == 0)
        return;
    fputs("<h2>Thresholds</h2>\n<table>\n<tr><th class=\"l\">Metric</th><th class=\"l\">Endpoint"
          "</th><th class=\"l\">Threshold</th><th>Observed</th><th class=\"l\">Result</th></tr>\n",
          out);
    json_array_foreach(list, i, th) {
        const json_t *passed = json_object_get(th, "passed");
        fputs("<tr><td class=\"l\">", out);
        put_value(out, json_object_get(th, "metric"));
        fputs("</td><td class=\"l\">", out);
        put_value(out, json_object_get(th, "endpoint"));
        fputs("</td><td class=\"l\">", out);
        put_value(out, json_object_get(th, "expression"));
        fputs("</td><td>", out);
        put_fixed(out, json_object_get(th, "observed"), 2);
        fprintf(out, "</td><td class=\"l\">%s</td></tr>\n",
                json_is_true(passed)    ? "<span class=\"badge pass\">pass</span>"
                : json_is_false(passed) ? "<span class=\"badge fail\">fail</span>"
                                        : DASH);
    }
    fputs("</table>\n", out);
}

/* Charts -------------------------------------------------------------------- */

/* The values the charts draw, in report_point_t.v: one series each. */
enum { V_RPS, V_FAILURES_PER_S, V_P50, V_P95, V_P99, V_USERS };

typedef struct series_s {
    int v; /* index into report_point_t.v */
    const char *label, *color;
} series_t;

typedef struct frame_s {
    double x0, x1, ymax;
} frame_t;

/* Where the points come from: the report JSON's "history", or a spool of
 * report_point_t that report_html_points_add wrote. */
typedef struct points_s {
    const json_t *history; /* NULL: spool */
    FILE *spool;
    size_t count, next;
} points_t;

static double px_x(const frame_t *f, double x)
{
    return PAD_L + (x - f->x0) / (f->x1 - f->x0) * (SVG_W - PAD_L - PAD_R);
}

static double px_y(const frame_t *f, double y)
{
    return SVG_H - PAD_B - y / f->ymax * (SVG_H - PAD_T - PAD_B);
}

/* The smallest of 1, 2, 2.5, 5 times a power of ten that is >= v. */
static double nice_ceil(double v)
{
    static const double steps[] = {1, 2, 2.5, 5, 10};
    if (!(v > 0))
        return 1;
    double p = pow(10, floor(log10(v)));
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if (steps[i] * p >= v * (1 - 1e-12))
            return steps[i] * p;
    return 10 * p;
}

/* One history entry of the JSON as a point: x is offset_s (else its index). */
static void point_of_json(const json_t *sec, size_t i, report_point_t *pt)
{
    static const char *const keys[REPORT_CHART_VALUES] = {"rps",    "failures_per_s", "p50_ms",
                                                          "p95_ms", "p99_ms",         "users"};
    const json_t *x = json_object_get(sec, "offset_s");
    pt->x = json_is_number(x) ? json_number_value(x) : (double)i;
    pt->has = 0;
    for (int k = 0; k < REPORT_CHART_VALUES; k++) {
        const json_t *v = json_object_get(sec, keys[k]);
        pt->v[k] = json_number_value(v); /* 0 for null, as the frame takes it */
        if (json_is_number(v))
            pt->has |= 1u << k;
    }
}

static void points_rewind(points_t *p)
{
    p->next = 0;
    if (p->spool != NULL)
        rewind(p->spool);
}

/* The next point; false after the last (or when the spool cannot be read). */
static bool points_next(points_t *p, report_point_t *pt)
{
    if (p->next >= p->count)
        return false;
    if (p->history != NULL)
        point_of_json(json_array_get(p->history, p->next), p->next, pt);
    else if (fread(pt, sizeof *pt, 1, p->spool) != 1)
        return false;
    p->next++;
    return true;
}

static frame_t frame_of(points_t *p, const series_t *series, int n)
{
    frame_t f = {0, 1, 0};
    report_point_t pt;
    points_rewind(p);
    for (size_t i = 0; points_next(p, &pt); i++) {
        if (i == 0)
            f.x0 = pt.x;
        if (i + 1 == p->count)
            f.x1 = pt.x;
        for (int k = 0; k < n; k++)
            if (pt.v[series[k].v] > f.ymax)
                f.ymax = pt.v[series[k].v];
    }
    if (f.x1 <= f.x0)
        f.x1 = f.x0 + 1;
    f.ymax = nice_ceil(f.ymax);
    return f;
}

/* Seconds between time labels: a round step giving at most about 8 labels. */
static double time_step(double range)
{
    static const double steps[] = {1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if (range / steps[i] <= 8)
            return steps[i];
    return 3600 * ceil(range / 3600 / 8);
}

/* Horizontal grid lines with value labels, time labels below (m:ss from the
 * run's start), and the legend above. */
static void svg_axes(FILE *out, const frame_t *f, const series_t *series, int n)
{
    for (int k = 0; k <= 4; k++) {
        double v = f->ymax * k / 4, y = px_y(f, v);
        fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"/>"
                     "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.4g</text>\n",
                PAD_L, y, SVG_W - PAD_R, y, k ? "#eee" : "#999", PAD_L - 6, y + 4, v);
    }
    double step = time_step(f->x1 - f->x0);
    for (double x = ceil(f->x0 / step) * step; x <= f->x1 + 1e-9; x += step) {
        long s = lround(x);
        fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%ld:%02ld</text>\n",
                px_x(f, x), SVG_H - 8, s / 60, labs(s % 60));
    }
    for (int k = 0; k < n; k++)
        fprintf(out, "<rect x=\"%d\" y=\"8\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                     "<text x=\"%d\" y=\"18\">%s</text>\n",
                PAD_L + k * 150, series[k].color, PAD_L + k * 150 + 16, series[k].label);
}

/* One series as path segments; a second without a value (null) breaks the
 * line, and a lone point is drawn as a dot (zero-length, round cap). */
static void svg_series(FILE *out, const frame_t *f, points_t *p, const series_t *s)
{
    size_t run = 0;
    report_point_t pt;
    points_rewind(p);
    while (points_next(p, &pt)) {
        if (!(pt.has & (1u << s->v))) {
            if (run > 0)
                fputs(run == 1 ? " l0 0\"/>\n" : "\"/>\n", out);
            run = 0;
            continue;
        }
        if (run == 0)
            fprintf(out, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" "
                         "stroke-linecap=\"round\" stroke-linejoin=\"round\" d=\"", s->color);
        fprintf(out, "%s%.1f %.1f", run ? " L" : "M", px_x(f, pt.x), px_y(f, pt.v[s->v]));
        run++;
    }
    if (run > 0)
        fputs(run == 1 ? " l0 0\"/>\n" : "\"/>\n", out);
}

static void chart(FILE *out, const char *title, points_t *p, const series_t *series, int n)
{
    fprintf(out, "<h3>%s</h3>\n", title);
    if (p->count == 0) {
        fputs("<p class=\"muted\">No statistics yet.</p>\n", out);
        return;
    }
    frame_t f = frame_of(p, series, n);
    fprintf(out, "<svg viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"%s\">\n", SVG_W, SVG_H,
            title);
    svg_axes(out, &f, series, n);
    for (int k = 0; k < n; k++)
        svg_series(out, &f, p, &series[k]);
    fputs("</svg>\n", out);
}

static void charts(FILE *out, points_t *p)
{
    static const series_t rates[] = {{V_RPS, "requests/s", "#1565c0"},
                                     {V_FAILURES_PER_S, "failures/s", "#c62828"}};
    static const series_t latency[] = {{V_P50, "p50 (ms)", "#2e7d32"},
                                       {V_P95, "p95 (ms)", "#ef6c00"},
                                       {V_P99, "p99 (ms)", "#6a1b9a"}};
    static const series_t users[] = {{V_USERS, "users", "#455a64"}};
    fputs("<h2>Over time</h2>\n", out);
    chart(out, "Requests and failures per second", p, rates, 2);
    chart(out, "Response times, per second (ms)", p, latency, 3);
    chart(out, "Users", p, users, 1);
}

/* Tables -------------------------------------------------------------------- */

static void stats_row(FILE *out, const json_t *row, bool total)
{
    static const char *const ms_keys[] = {"min_ms", "avg_ms", "median_ms"};
    static const char *const pct[] = {"90%", "95%", "99%", "99.9%"};
    const json_t *pcts = json_object_get(row, "percentiles_ms");
    fputs(total ? "<tr class=\"total\"><td class=\"l\">" : "<tr><td class=\"l\">", out);
    report_xml_escape(out, str_of(row, "type"));
    fputs("</td><td class=\"l\">", out);
    report_xml_escape(out, str_of(row, "name"));
    fputs("</td><td>", out);
    put_value(out, json_object_get(row, "requests"));
    fputs("</td><td>", out);
    put_value(out, json_object_get(row, "failures"));
    fputs("</td><td>", out);
    put_fixed(out, json_object_get(row, "rps"), 2);
    fputs("</td><td>", out);
    put_fixed(out, json_object_get(row, "failures_per_s"), 2);
    for (size_t i = 0; i < sizeof ms_keys / sizeof ms_keys[0]; i++) {
        fputs("</td><td>", out);
        put_fixed(out, json_object_get(row, ms_keys[i]), 2);
    }
    for (size_t i = 0; i < sizeof pct / sizeof pct[0]; i++) {
        fputs("</td><td>", out);
        put_fixed(out, json_object_get(pcts, pct[i]), 2);
    }
    fputs("</td><td>", out);
    put_fixed(out, json_object_get(row, "max_ms"), 2);
    fputs("</td><td>", out);
    put_fixed(out, json_object_get(row, "avg_content_size"), 0);
    fputs("</td></tr>\n", out);
}

static void stats_table(FILE *out, const json_t *rows)
{
    size_t i;
    const json_t *row;
    fputs("<h2>Endpoints</h2>\n<table>\n<tr><th class=\"l\">Type</th><th class=\"l\">Name</th>"
          "<th>Requests</th><th>Failures</th><th>Requests/s</th><th>Failures/s</th>"
          "<th>Min</th><th>Average</th><th>Median</th><th>90%</th><th>95%</th><th>99%</th>"
          "<th>99.9%</th><th>Max (ms)</th><th>Avg size (B)</th></tr>\n", out);
    json_array_foreach(rows, i, row) {
        stats_row(out, row, i + 1 == json_array_size(rows));
    }
    fputs("</table>\n", out);
}

static void errors_table(FILE *out, const json_t *rows)
{
    size_t i;
    const json_t *row;
    fputs("<h2>Errors</h2>\n", out);
    if (json_array_size(rows) == 0) {
        fputs("<p class=\"muted\">None.</p>\n", out);
        return;
    }
    fputs("<table>\n<tr><th class=\"l\">Endpoint</th><th class=\"l\">Kind</th><th>Count</th>"
          "<th class=\"l\">First message</th></tr>\n", out);
    json_array_foreach(rows, i, row) {
        fputs("<tr><td class=\"l\">", out);
        put_value(out, json_object_get(row, "endpoint"));
        fputs("</td><td class=\"l\">", out);
        put_value(out, json_object_get(row, "kind"));
        fputs("</td><td>", out);
        put_value(out, json_object_get(row, "count"));
        fputs("</td><td class=\"l\">", out);
        const json_t *msg = json_object_get(row, "first_message");
        if (msg != NULL)
            put_value(out, msg);
        fputs("</td></tr>\n", out);
    }
    fputs("</table>\n", out);
}

/* Scripts' checks by name; nothing when the run has none. */
static void checks_table(FILE *out, const json_t *rows)
{
    size_t i;
    const json_t *row;
    if (json_array_size(rows) == 0)
        return;
    fputs("<h2>Checks</h2>\n<table>\n<tr><th class=\"l\">Check</th><th>Passed</th>"
          "<th>Failed</th></tr>\n", out);
    json_array_foreach(rows, i, row) {
        fputs("<tr><td class=\"l\">", out);
        put_value(out, json_object_get(row, "name"));
        fputs("</td><td>", out);
        put_value(out, json_object_get(row, "passed"));
        fputs("</td><td>", out);
        put_value(out, json_object_get(row, "failed"));
        fputs("</td></tr>\n", out);
    }
    fputs("</table>\n", out);
}

static void scenario(FILE *out, const json_t *sc)
{
    fputs("<h2>Scenario</h2>\n<pre>", out);
    if (json_is_string(sc)) {
        report_xml_escape(out, json_string_value(sc));
    } else if (sc != NULL) {
        char *text = json_dumps(sc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        report_xml_escape(out, text ? text : "");
        free(text);
    }
    fputs("</pre>\n", out);
}

/* The page, with its charts drawn from p. */
static int html_page(FILE *out, const json_t *report, points_t *p)
{
    if (!json_is_object(report) || !json_is_array(json_object_get(report, "stats")))
        return -1;
    head(out, report);
    summary(out, report);
    thresholds(out, json_object_get(report, "thresholds"));
    warnings(out, json_object_get(report, "warnings"));
    charts(out, p);
    stats_table(out, json_object_get(report, "stats"));
    errors_table(out, json_object_get(report, "errors"));
    checks_table(out, json_object_get(report, "checks"));
    scenario(out, json_object_get(report, "scenario"));
    fputs("<footer>loadcluster " LC_VERSION " \xC2\xB7 latencies from merged histograms (at most"
          " 1 % relative error)</footer>\n</body>\n</html>\n", out);
    return ferror(out) || (p->spool != NULL && ferror(p->spool)) ? -1 : 0;
}

int report_html(FILE *out, const json_t *report)
{
    const json_t *history = json_object_get(report, "history");
    points_t p = {.history = history, .count = json_array_size(history)};
    return html_page(out, report, &p);
}

void report_html_points_init(report_html_points_t *p, FILE *spool)
{
    *p = (report_html_points_t){.spool = spool};
}

/* What point_of_json reads from store_history_entry_json's JSON of e. */
static double ms_of(uint64_t us)
{
    return (double)us / 1000.0;
}

int report_html_points_add(report_html_points_t *p, const store_history_entry_t *e)
{
    report_point_t pt = {.x = (double)e->offset_s, .has = 0};
    pt.v[V_RPS] = e->rps;
    pt.v[V_FAILURES_PER_S] = e->failures_per_s;
    pt.v[V_USERS] = (double)(json_int_t)e->users;
    pt.has = 1u << V_RPS | 1u << V_FAILURES_PER_S | 1u << V_USERS;
    if (e->has_latency) {
        pt.v[V_P50] = ms_of(e->pct_us[STORE_PCT_P50]);
        pt.v[V_P95] = ms_of(e->pct_us[STORE_PCT_P95]);
        pt.v[V_P99] = ms_of(e->pct_us[STORE_PCT_P99]);
        pt.has |= 1u << V_P50 | 1u << V_P95 | 1u << V_P99;
    }
    if (fwrite(&pt, sizeof pt, 1, p->spool) != 1)
        return -1;
    p->count++;
    return 0;
}

int report_html_streamed(FILE *out, const json_t *report, report_html_points_t *points)
{
    if (fflush(points->spool) != 0)
        return -1;
    points_t p = {.spool = points->spool, .count = points->count};
    return html_page(out, report, &p);
}
