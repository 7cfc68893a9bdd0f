/* lc_report.c — the fixed-width end-of-run report table, and ms latency summaries from µs histograms. */
#include "lc_report.h"

#include <math.h>
#include <stdbool.h>

/* Conventions for values the caller does not know (loadctl reading a JSON
 * report with missing or null fields): a NaN double and a count of
 * UINT64_MAX print as "-", and so does a NULL or empty name. */

#define NAME_W 17
#define METHOD_W 6
#define KIND_W 16
#define COUNT_W 10

/* Bytes of the UTF-8 sequence starting with lead byte c (1 for stray bytes). */
static size_t utf8_len(unsigned char c)
{
    if (c >= 0xf0 && c <= 0xf4)
        return 4;
    if (c >= 0xe0)
        return c <= 0xef ? 3 : 1;
    if (c >= 0xc2)
        return 2;
    return 1;
}

/* Number of display columns of s, counting one per code point. */
static size_t display_width(const char *s)
{
    size_t cols = 0;
    for (size_t i = 0; s[i] != '\0'; cols++) {
        size_t n = utf8_len((unsigned char)s[i]);
        for (size_t k = 1; k < n; k++)
            if (s[i + k] == '\0')
                return cols + 1;
        i += n;
    }
    return cols;
}

/* Writes at most cols code points of s, replacing control characters so a
 * hostile endpoint name cannot move the cursor or break the table. */
static void put_chars(FILE *out, const char *s, size_t cols)
{
    size_t i = 0;
    for (size_t c = 0; c < cols && s[i] != '\0'; c++) {
        unsigned char b = (unsigned char)s[i];
        size_t n = utf8_len(b);
        if (b < 0x20 || b == 0x7f || (n == 1 && b >= 0x80)) {
            fputc('?', out);
            i++;
            continue;
        }
        for (size_t k = 0; k < n && s[i] != '\0'; k++)
            fputc(s[i++], out);
    }
}

/* Prints s in exactly width columns: left-aligned and padded, or cut with a
 * trailing "~" when too long. */
static void put_cell(FILE *out, const char *s, size_t width)
{
    if (s == NULL || s[0] == '\0')
        s = "-";
    size_t w = display_width(s);
    if (w > width) {
        put_chars(out, s, width - 1);
        fputc('~', out);
        return;
    }
    put_chars(out, s, w);
    for (; w < width; w++)
        fputc(' ', out);
}

static void put_count(FILE *out, uint64_t v, int width)
{
    if (v == UINT64_MAX)
        fprintf(out, "%*s", width, "-");
    else
        fprintf(out, "%*llu", width, (unsigned long long)v);
}

/* Milliseconds with as many decimals as fit: 0.21, 123.4, 12345. */
static void put_ms(FILE *out, double ms, int width)
{
    if (isnan(ms) || ms < 0)
        fprintf(out, "%*s", width, "-");
    else if (ms < 100)
        fprintf(out, "%*.2f", width, ms);
    else if (ms < 1000)
        fprintf(out, "%*.1f", width, ms);
    else
        fprintf(out, "%*.0f", width, ms);
}

static void print_header(FILE *out)
{
    fprintf(out, "%-*s %-*s%*s%*s%8s%6s%7s%6s%6s%6s%6s%7s  (ms)\n", NAME_W, "Name", METHOD_W,
            "Method", COUNT_W, "Requests", COUNT_W, "Failures", "RPS", "Min", "Mean", "p50",
            "p90", "p95", "p99", "Max");
}

static void print_row(FILE *out, const lc_report_row_t *row, bool is_total)
{
    const lc_report_latency_t *l = &row->latency;

    put_cell(out, row->name, NAME_W);
    fputc(' ', out);
    if (is_total && (row->method == NULL || row->method[0] == '\0'))
        fprintf(out, "%*s", METHOD_W, "");
    else
        put_cell(out, row->method, METHOD_W);
    put_count(out, row->requests, COUNT_W);
    put_count(out, row->failures, COUNT_W);
    if (isnan(row->rps) || row->rps < 0)
        fprintf(out, "%8s", "-");
    else
        fprintf(out, "%8.1f", row->rps);
    put_ms(out, l->min, 6);
    put_ms(out, l->mean, 7);
    put_ms(out, l->p50, 6);
    put_ms(out, l->p90, 6);
    put_ms(out, l->p95, 6);
    put_ms(out, l->p99, 6);
    put_ms(out, l->max, 7);
    fputc('\n', out);
}

static void print_errors(FILE *out, const lc_report_error_t *errors, size_t n)
{
    fprintf(out, "Errors:\n");
    for (size_t i = 0; i < n; i++) {
        put_cell(out, errors[i].endpoint, NAME_W);
        fputc(' ', out);
        put_cell(out, errors[i].kind, KIND_W);
        put_count(out, errors[i].count, COUNT_W);
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
    if (report->title != NULL) {
        put_chars(out, report->title, display_width(report->title));
        if (isnan(report->duration_s) || report->duration_s < 0)
            fprintf(out, "  (duration -)\n");
        else
            fprintf(out, "  (duration %.1f s)\n", report->duration_s);
    }
    print_header(out);
    for (size_t i = 0; i < report->n_rows; i++)
        print_row(out, &report->rows[i], false);
    lc_report_row_t total = report->total;
    if (total.name == NULL)
        total.name = "Total";
    print_row(out, &total, true);
    if (report->dropped > 0)
        fprintf(out, "Dropped starts (no free user): %llu\n", (unsigned long long)report->dropped);
    if (report->tls_handshakes + report->tls_resumed > 0)
        fprintf(out, "TLS handshakes: %llu full, %llu resumed\n",
                (unsigned long long)report->tls_handshakes,
                (unsigned long long)report->tls_resumed);
    if (report->n_errors > 0)
        print_errors(out, report->errors, report->n_errors);
}
