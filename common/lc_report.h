/* lc_report.h — the end-of-run report table that loadctl and
 * `loadworker --local` both print, and latency summaries from histograms. */
#ifndef LC_REPORT_H
#define LC_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "lc_hist.h"

/* Latency summary in milliseconds. */
typedef struct lc_report_latency_s {
    double min, mean, p50, p90, p95, p99, max;
} lc_report_latency_t;

typedef struct lc_report_row_s {
    const char *name;
    const char *method;
    uint64_t requests;
    uint64_t failures;
    double rps;
    lc_report_latency_t latency;
} lc_report_row_t;

typedef struct lc_report_error_s {
    const char *endpoint;
    const char *kind;
    uint64_t count;
    const char *message; /* the first one seen (e.g. a script's error), or NULL */
} lc_report_error_t;

/* A script check's counts. */
typedef struct lc_report_check_s {
    const char *name;
    uint64_t passed, failed;
} lc_report_check_t;

typedef struct lc_report_s {
    const char *title;      /* e.g. "run 3 checkout: finished" */
    double duration_s;
    const lc_report_row_t *rows; /* one per endpoint */
    size_t n_rows;
    lc_report_row_t total;  /* name "Total" */
    const lc_report_error_t *errors;
    size_t n_errors;
    uint64_t dropped;        /* open model: starts that found no free user */
    uint64_t tls_handshakes; /* with tls_resumed: printed when non-zero */
    uint64_t tls_resumed;
    const lc_report_check_t *checks; /* scripts' checks, printed when n_checks > 0 */
    size_t n_checks;
} lc_report_t;

/* Fills a latency summary from a histogram of microseconds. */
void lc_report_latency_from_hist(const lc_hist_t *h, lc_report_latency_t *out);

/* Prints the per-endpoint table, the total line and the error table. */
void lc_report_print(FILE *out, const lc_report_t *report);

#endif
