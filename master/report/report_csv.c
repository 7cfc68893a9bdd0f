/* report_csv.c — Locust's stats and stats-history CSV files from a run's
 * report JSON, column for column, so Locust tooling reads them unchanged. */
#include "report.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "report_num.h"
#include "store_history.h"

/* Locust's StatsCSV.requests_csv_columns and stats_history_csv_columns with
 * the default PERCENTILES_TO_REPORT. */
const char report_csv_stats_header[] =
    "Type,Name,Request Count,Failure Count,Median Response Time,Average Response Time,"
    "Min Response Time,Max Response Time,Average Content Size,Requests/s,Failures/s,"
    "50%,66%,75%,80%,90%,95%,98%,99%,99.9%,99.99%,100%";
const char report_csv_history_header[] =
    "Timestamp,User Count,Type,Name,Requests/s,Failures/s,"
    "50%,66%,75%,80%,90%,95%,98%,99%,99.9%,99.99%,100%,"
    "Total Request Count,Total Failure Count,Total Median Response Time,"
    "Total Average Response Time,Total Min Response Time,Total Max Response Time,"
    "Total Average Content Size";

const char report_csv_failures_header[] = "Method,Name,Error,Occurrences";

/* Python's csv module ends rows with CRLF (so does RFC 4180). */
#define CSV_EOL "\r\n"

/* A text cell a spreadsheet would take for a formula: OWASP's list for CSV
 * injection. Only text goes through report_csv_field; numbers never do. */
static bool is_formula(const char *s)
{
    return s[0] != '\0' && strchr("=+-@\t\r", s[0]) != NULL;
}

void report_csv_field(FILE *out, const char *s)
{
    if (s == NULL)
        s = "";
    bool formula = is_formula(s);
    if (!formula && s[strcspn(s, ",\"\r\n")] == '\0') {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    if (formula)
        fputc('\'', out); /* shown as text, and the name still reads as it was */
    for (; *s != '\0'; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

/* ",<number>" in fmt, or "," and if_null when v is not a number. */
static void put_num(FILE *out, const json_t *v, const char *fmt, const char *if_null)
{
    fputc(',', out);
    if (json_is_number(v))
        fprintf(out, fmt, json_number_value(v));
    else
        fputs(if_null, out);
}

static void put_int(FILE *out, const json_t *v)
{
    fprintf(out, ",%" JSON_INTEGER_FORMAT, json_integer_value(v));
}

/* The eleven percentile columns: N/A where there is no latency (Locust
 * writes N/A for an entry without requests). */
static void put_percentiles(FILE *out, const json_t *pcts)
{
    for (int i = 0; i < STORE_N_PERCENTILES; i++)
        put_num(out, json_object_get(pcts, store_percentile_labels[i]), "%.3f", "N/A");
}

/* Request Count … Average Content Size: the columns Locust's stats and its
 * history's "Total" part share. */
static void put_totals(FILE *out, const json_t *t)
{
    put_int(out, json_object_get(t, "requests"));
    put_int(out, json_object_get(t, "failures"));
    put_num(out, json_object_get(t, "median_ms"), "%.3f", "0");
    put_num(out, json_object_get(t, "avg_ms"), "%.3f", "0");
    put_num(out, json_object_get(t, "min_ms"), "%.3f", "0");
    put_num(out, json_object_get(t, "max_ms"), "%.3f", "0");
    put_num(out, json_object_get(t, "avg_content_size"), "%.2f", "0");
}

static int stats_row(FILE *out, const json_t *row)
{
    const char *type = json_string_value(json_object_get(row, "type"));
    const char *name = json_string_value(json_object_get(row, "name"));
    if (type == NULL || name == NULL || !json_is_integer(json_object_get(row, "requests")))
        return -1;
    report_csv_field(out, type);
    fputc(',', out);
    report_csv_field(out, name);
    put_totals(out, row);
    put_num(out, json_object_get(row, "rps"), "%.6f", "0");
    put_num(out, json_object_get(row, "failures_per_s"), "%.6f", "0");
    put_percentiles(out, json_object_get(row, "percentiles_ms"));
    fputs(CSV_EOL, out);
    return 0;
}

int report_csv_stats(FILE *out, const json_t *report)
{
    const json_t *rows = json_object_get(report, "stats");
    if (!json_is_array(rows))
        return -1;
    fputs(report_csv_stats_header, out);
    fputs(CSV_EOL, out);
    size_t i;
    const json_t *row;
    json_array_foreach(rows, i, row) {
        if (stats_row(out, row) != 0)
            return -1;
    }
    return ferror(out) ? -1 : 0;
}

/* The method of the stats row named name, or "". */
static const char *method_of(const json_t *stats, const char *name)
{
    size_t i;
    const json_t *row;
    json_array_foreach(stats, i, row) {
        const char *n = json_string_value(json_object_get(row, "name"));
        const char *type = json_string_value(json_object_get(row, "type"));
        if (n != NULL && type != NULL && strcmp(n, name) == 0)
            return type;
    }
    return "";
}

int report_csv_failures(FILE *out, const json_t *report)
{
    const json_t *errors = json_object_get(report, "errors");
    const json_t *stats = json_object_get(report, "stats");
    if (!json_is_array(errors))
        return -1;
    fputs(report_csv_failures_header, out);
    fputs(CSV_EOL, out);
    size_t i;
    const json_t *row;
    json_array_foreach(errors, i, row) {
        const char *name = json_string_value(json_object_get(row, "endpoint"));
        const char *kind = json_string_value(json_object_get(row, "kind"));
        if (name == NULL || kind == NULL || !json_is_integer(json_object_get(row, "count")))
            return -1;
        report_csv_field(out, method_of(stats, name));
        fputc(',', out);
        report_csv_field(out, name);
        fputc(',', out);
        report_csv_field(out, kind);
        put_int(out, json_object_get(row, "count"));
        fputs(CSV_EOL, out);
    }
    return ferror(out) ? -1 : 0;
}

/* One second: Timestamp … Failures/s, its percentiles, then the run's
 * totals up to it. type and name are the history's endpoint or Aggregated. */
static int history_row(FILE *out, const json_t *sec, const char *type, const char *name)
{
    const json_t *total = json_object_get(sec, "total");
    if (!json_is_integer(json_object_get(sec, "t")) || !json_is_object(total))
        return -1;
    fprintf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(json_object_get(sec, "t")));
    put_int(out, json_object_get(sec, "users"));
    fputc(',', out);
    report_csv_field(out, type);
    fputc(',', out);
    report_csv_field(out, name);
    put_num(out, json_object_get(sec, "rps"), "%f", "0");
    put_num(out, json_object_get(sec, "failures_per_s"), "%f", "0");
    put_percentiles(out, json_object_get(sec, "percentiles_ms"));
    put_totals(out, total);
    fputs(CSV_EOL, out);
    return 0;
}

static void history_header(FILE *out)
{
    fputs(report_csv_history_header, out);
    fputs(CSV_EOL, out);
}

static int history_json_row(FILE *out, const json_t *history, const json_t *sec)
{
    const char *endpoint = json_string_value(json_object_get(history, "endpoint"));
    const char *method = json_string_value(json_object_get(history, "method"));
    return history_row(out, sec, endpoint ? (method ? method : "") : "",
                       endpoint ? endpoint : "Aggregated");
}

int report_csv_history(FILE *out, const json_t *history)
{
    const json_t *seconds = json_object_get(history, "seconds");
    if (!json_is_array(seconds))
        return -1;
    history_header(out);
    size_t i;
    const json_t *sec;
    json_array_foreach(seconds, i, sec) {
        if (history_json_row(out, history, sec) != 0)
            return -1;
    }
    return ferror(out) ? -1 : 0;
}

/* history.csv from entries ------------------------------------------------ */

/* The longest row but its label: 24 numbers of at most REPORT_NUM_MAX. */
#define ROW_NUMBERS_MAX (24 * (REPORT_NUM_MAX + 1) + 4)

void report_csv_history_init(report_csv_history_t *w, FILE *out)
{
    *w = (report_csv_history_t){.out = out};
    history_header(out);
}

/* The row's ",type,name" as CSV fields, made once, with room for a row after it. */
static int make_label(report_csv_history_t *w, const store_history_head_t *head)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL)
        return -1;
    fputc(',', f);
    report_csv_field(f, head->endpoint ? head->method : "");
    fputc(',', f);
    report_csv_field(f, head->endpoint ? head->endpoint : "Aggregated");
    if (fclose(f) != 0) {
        free(text);
        return -1;
    }
    w->line = malloc(len + ROW_NUMBERS_MAX);
    if (w->line != NULL)
        memcpy(w->line, text, len);
    free(text);
    w->label_len = len;
    return w->line ? 0 : -1;
}

/* ",<v>" with decimals, into p. */
static char *put_fixed(char *p, double v, int decimals)
{
    *p++ = ',';
    return p + report_num_fixed(p, v, decimals);
}

/* ",<ms>", or "," and if_null without a latency. */
static char *put_ms(char *p, bool has, uint64_t us, const char *if_null)
{
    *p++ = ',';
    if (has)
        return p + report_num_ms(p, us);
    size_t n = strlen(if_null);
    memcpy(p, if_null, n);
    return p + n;
}

static char *put_count(char *p, uint64_t v)
{
    *p++ = ',';
    return p + report_num_i64(p, (int64_t)v); /* as the JSON's integer holds it */
}

/* What history_row writes from the entry's JSON, from the entry itself. */
static size_t entry_numbers(char *p0, const store_history_entry_t *e)
{
    char *p = p0;
    p = put_fixed(p, e->rps, 6);
    p = put_fixed(p, e->failures_per_s, 6);
    for (int i = 0; i < STORE_N_PERCENTILES; i++)
        p = put_ms(p, e->has_latency, e->pct_us[i], "N/A");
    p = put_count(p, e->total_requests);
    p = put_count(p, e->total_failures);
    bool has = e->total_has_latency;
    p = put_ms(p, has, e->total_median_us, "0");
    if (has) {
        p = put_fixed(p, e->total_avg_ms, 3);
    } else {
        memcpy(p, ",0", 2);
        p += 2;
    }
    p = put_ms(p, has, e->total_min_us, "0");
    p = put_ms(p, has, e->total_max_us, "0");
    double size = e->total_requests ? (double)e->total_bytes / (double)e->total_requests : 0;
    p = put_fixed(p, size, 2);
    memcpy(p, CSV_EOL, 2);
    return (size_t)(p + 2 - p0);
}

int report_csv_history_entry(report_csv_history_t *w, const store_history_head_t *head,
                             const store_history_entry_t *e)
{
    if (w->line == NULL && make_label(w, head) != 0)
        return -1;
    char lead[2 * REPORT_NUM_MAX];
    size_t n = report_num_i64(lead, e->t);
    lead[n++] = ',';
    n += report_num_i64(lead + n, (int64_t)e->users);
    size_t len = entry_numbers(w->line + w->label_len, e);
    if (fwrite(lead, 1, n, w->out) != n || fwrite(w->line, 1, w->label_len + len, w->out) !=
                                               w->label_len + len)
        return -1;
    return 0;
}

int report_csv_history_done(report_csv_history_t *w)
{
    free(w->line);
    w->line = NULL;
    return ferror(w->out) ? -1 : 0;
}

int report_render(int (*render)(FILE *, const json_t *), const json_t *json, char **out,
                  size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (f == NULL)
        return -1;
    int rv = render(f, json);
    if (fclose(f) != 0)
        rv = -1;
    if (rv != 0) {
        free(buf);
        return -1;
    }
    *out = buf;
    *len = n;
    return 0;
}
