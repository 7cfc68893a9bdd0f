/* lc_report.c — the end-of-run report table (on lc_table, so columns fit any value), and ms
 * latency summaries from µs histograms. */
#include "lc_report.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "lc_table.h"

/* Conventions for values the caller does not know (loadctl reading a JSON
 * report with missing or null fields): a NaN double and a count of
 * UINT64_MAX print as "-", and so does a NULL or empty name. */

/* Longer names are cut, ending in "…", so that one name cannot push the numbers off screen. */
#define NAME_MAX_W 40
#define METHOD_MAX_W 10
#define KIND_MAX_W 24
#define CELL_LEN 32 /* a formatted number */
#define LABEL_LEN 192 /* "journey " and a name of at most 128 bytes, with room to spare */

enum { C_NAME, C_METHOD, C_REQUESTS, C_FAILURES, C_RPS, C_MIN, C_MEAN, C_P50, C_P90, C_P95,
       C_P99, C_MAX, ROW_COLS };

static const lc_table_col_t row_cols[ROW_COLS] = {
    {"Name", false, NAME_MAX_W}, {"Method", false, METHOD_MAX_W}, {"Requests", true, 0},
    {"Failures", true, 0},       {"RPS", true, 0},  {"Min", true, 0},  {"Mean", true, 0},
    {"p50", true, 0},            {"p90", true, 0},  {"p95", true, 0},  {"p99", true, 0},
    {"Max", true, 0},
};

static const lc_table_col_t error_cols[] = {
    {"Endpoint", false, NAME_MAX_W}, {"Kind", false, KIND_MAX_W}, {"Count", true, 0}};
static const lc_table_col_t check_cols[] = {
    {"Check", false, NAME_MAX_W}, {"Passed", true, 0}, {"Failed", true, 0}};

/* One row's cells as text. */
typedef struct row_text_s {
    char num[ROW_COLS][CELL_LEN];
    const char *cell[ROW_COLS];
} row_text_t;

static const char *or_dash(const char *s)
{
    return s == NULL || s[0] == '\0' ? "-" : s;
}

static const char *fmt_count(uint64_t v, char *buf)
{
    if (v == UINT64_MAX)
        return "-";
    snprintf(buf, CELL_LEN, "%llu", (unsigned long long)v);
    return buf;
}

/* Milliseconds with as many decimals as fit: 0.21, 123.4, 12345. */
static const char *fmt_ms(double ms, char *buf)
{
    if (isnan(ms) || ms < 0)
        return "-";
    snprintf(buf, CELL_LEN, "%.*f", ms < 100 ? 2 : ms < 1000 ? 1 : 0, ms);
    return buf;
}

/* method NULL leaves the column blank (totals; later journeys and groups). */
static void row_text(row_text_t *rt, const char *label, const char *method,
                     const lc_report_row_t *row)
{
    const lc_report_latency_t *l = &row->latency;
    const double ms[] = {l->min, l->mean, l->p50, l->p90, l->p95, l->p99, l->max};
    rt->cell[C_NAME] = or_dash(label);
    rt->cell[C_METHOD] = method == NULL ? "" : or_dash(method);
    rt->cell[C_REQUESTS] = fmt_count(row->requests, rt->num[C_REQUESTS]);
    rt->cell[C_FAILURES] = fmt_count(row->failures, rt->num[C_FAILURES]);
    rt->cell[C_RPS] = "-";
    if (!isnan(row->rps) && row->rps >= 0) {
        snprintf(rt->num[C_RPS], CELL_LEN, "%.1f", row->rps);
        rt->cell[C_RPS] = rt->num[C_RPS];
    }
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
        rt->cell[C_MIN + i] = fmt_ms(ms[i], rt->num[C_MIN + i]);
}

/* Fits (out NULL) or prints one row of the endpoint table under label. */
static void put_row(lc_table_t *t, FILE *out, const char *label, const char *method,
                    const lc_report_row_t *row)
{
    row_text_t rt;
    row_text(&rt, label, method, row);
    if (out == NULL)
        lc_table_fit(t, rt.cell);
    else
        lc_table_print_row(out, t, rt.cell);
}

/* A journey's iterations ("iteration:buyer", method ITERATION) or a group ("group:checkout",
 * method GROUP) as people read them: "journey buyer", "group checkout", with no method; a
 * request's name as it is, with its method. OUT: buf (the label), *method. */
static const char *row_label(const lc_report_row_t *row, char *buf, const char **method)
{
    static const struct {
        const char *method, *prefix, *word;
    } timers[] = {/* LC_SERIES_ITERATION and LC_SERIES_GROUP of lc_scenario.h, which cannot be
                   * included here: its feeders' lc_table_t is another than lc_table.h's */
                  {"ITERATION", "iteration:", "journey"},
                  {"GROUP", "group:", "group"}};
    *method = or_dash(row->method);
    for (size_t i = 0; row->name != NULL && i < sizeof timers / sizeof timers[0]; i++) {
        if (row->method == NULL || strcmp(row->method, timers[i].method) != 0)
            continue;
        size_t plen = strlen(timers[i].prefix);
        const char *name = strncmp(row->name, timers[i].prefix, plen) == 0 ? row->name + plen
                                                                           : row->name;
        snprintf(buf, LABEL_LEN, "%s %s", timers[i].word, name);
        *method = NULL;
        return buf;
    }
    return row->name;
}

/* Every row of the endpoint table, in order; a new kind of row is one more line here. */
static void put_rows(lc_table_t *t, FILE *out, const lc_report_t *report)
{
    char label[LABEL_LEN];
    const char *method;
    for (size_t i = 0; i < report->n_rows; i++) {
        const char *name = row_label(&report->rows[i], label, &method);
        put_row(t, out, name, method, &report->rows[i]);
    }
    put_row(t, out, report->total.name ? report->total.name : "Total",
            report->total.method && report->total.method[0] ? report->total.method : NULL,
            &report->total);
}

/* The three cells of row i of a small table (errors, checks); num holds their numbers. */
typedef void (*cells_fn)(const void *rows, size_t i, char num[2][CELL_LEN], const char *cells[3]);

static void error_cells(const void *rows, size_t i, char num[2][CELL_LEN], const char *cells[3])
{
    const lc_report_error_t *e = (const lc_report_error_t *)rows + i;
    cells[0] = or_dash(e->endpoint);
    cells[1] = or_dash(e->kind);
    cells[2] = fmt_count(e->count, num[0]);
}

static void check_cells(const void *rows, size_t i, char num[2][CELL_LEN], const char *cells[3])
{
    const lc_report_check_t *c = (const lc_report_check_t *)rows + i;
    cells[0] = or_dash(c->name);
    cells[1] = fmt_count(c->passed, num[0]);
    cells[2] = fmt_count(c->failed, num[1]);
}

/* "Heading:", the column titles and n rows, the columns fitted to every row first. */
static void print_small_table(FILE *out, const char *heading, const lc_table_col_t *cols,
                              const void *rows, size_t n, cells_fn cells_of)
{
    lc_table_t t;
    char num[2][CELL_LEN];
    const char *cells[3];
    lc_table_init(&t, cols, 3);
    for (size_t i = 0; i < n; i++) {
        cells_of(rows, i, num, cells);
        lc_table_fit(&t, cells);
    }
    fprintf(out, "%s:\n", heading);
    lc_table_print_titles(out, &t, NULL);
    for (size_t i = 0; i < n; i++) {
        cells_of(rows, i, num, cells);
        lc_table_print_row(out, &t, cells);
    }
}

static void print_errors(FILE *out, const lc_report_error_t *errors, size_t n)
{
    print_small_table(out, "Errors", error_cols, errors, n, error_cells);
    for (size_t i = 0; i < n; i++) {
        if (errors[i].message == NULL || errors[i].message[0] == '\0')
            continue;
        char line[1024];
        snprintf(line, sizeof line, "  first %s error on %s: %s", or_dash(errors[i].kind),
                 or_dash(errors[i].endpoint), errors[i].message);
        lc_table_print_text(out, line);
        fputc('\n', out);
    }
}

void lc_report_latency_from_hist(const lc_hist_t *h, lc_report_latency_t *out)
{
    if (h == NULL || h->total == 0) {
        out->min = out->mean = out->p50 = out->p90 = NAN;
        out->p95 = out->p99 = out->max = NAN;
        return;
    }
    out->min = (double)h->min / 1000.0;
    out->mean = lc_hist_mean(h) / 1000.0;
    out->p50 = (double)lc_hist_percentile(h, 50.0) / 1000.0;
    out->p90 = (double)lc_hist_percentile(h, 90.0) / 1000.0;
    out->p95 = (double)lc_hist_percentile(h, 95.0) / 1000.0;
    out->p99 = (double)lc_hist_percentile(h, 99.0) / 1000.0;
    out->max = (double)h->max / 1000.0;
}

void lc_report_print(FILE *out, const lc_report_t *report)
{
    lc_table_t t;
    if (report->title != NULL) {
        lc_table_print_text(out, report->title);
        if (isnan(report->duration_s) || report->duration_s < 0)
            fprintf(out, "  (duration -)\n");
        else
            fprintf(out, "  (duration %.1f s)\n", report->duration_s);
    }
    lc_table_init(&t, row_cols, ROW_COLS);
    put_rows(&t, NULL, report);
    lc_table_print_titles(out, &t, "(ms)");
    put_rows(&t, out, report);
    if (report->dropped > 0)
        fprintf(out, "Dropped starts (no free user): %llu\n", (unsigned long long)report->dropped);
    if (report->tls_handshakes + report->tls_resumed > 0)
        fprintf(out, "TLS handshakes: %llu full, %llu resumed\n",
                (unsigned long long)report->tls_handshakes,
                (unsigned long long)report->tls_resumed);
    if (report->n_errors > 0)
        print_errors(out, report->errors, report->n_errors);
    if (report->n_checks > 0)
        print_small_table(out, "Checks", check_cols, report->checks, report->n_checks,
                          check_cells);
}
