/* lc_threshold.h — k6-style thresholds ("p(95)<500" on http_req_duration, per
 * endpoint or for the whole run): parsing from the scenario and judging. */
#ifndef LC_THRESHOLD_H
#define LC_THRESHOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "lc_hist.h"

#define LC_THRESHOLDS_MAX 64u
#define LC_THRESHOLD_EXPR_MAX 64u /* characters of one expression */

enum lc_metric {
    LC_METRIC_REQ_DURATION, /* latency in ms: p(N), med, avg, min, max */
    LC_METRIC_REQ_FAILED,   /* share of failed requests: rate */
    LC_METRIC_REQS,         /* requests: count, rate (per second over the run) */
    LC_METRIC_ITER_DURATION, /* journeys: an iteration's duration in ms, as REQ_DURATION;
                              * {journey:NAME} or every journey's */
    LC_METRIC_GROUP_DURATION, /* journeys: a group's duration in ms; {group:NAME} or all */
    LC_METRIC_CHECKS          /* scripts' check(): share passed (rate); {check:NAME} or all */
};

enum lc_agg {
    LC_AGG_PCT, LC_AGG_MED, LC_AGG_AVG, LC_AGG_MIN, LC_AGG_MAX, LC_AGG_RATE, LC_AGG_COUNT
};

enum lc_cmp { LC_CMP_LT, LC_CMP_LE, LC_CMP_GT, LC_CMP_GE, LC_CMP_EQ, LC_CMP_NE };

typedef struct lc_threshold_s {
    enum lc_metric metric;
    char *endpoint;        /* the series: a task or request name, "iteration:<journey>",
                            * "group:<name>" or "check:<name>"; NULL: every request (or iteration, or group,
                            * by metric) of the run */
    enum lc_agg agg;
    double pct;            /* LC_AGG_PCT: the percentile, 0 < pct <= 100 */
    enum lc_cmp op;
    double value;
    char *expression;      /* as written, e.g. "p(95)<500" */
    bool abort_on_fail;
    uint64_t delay_abort_eval_ms;
} lc_threshold_t;

/* Parses the scenario's "thresholds" object: k6's shape
 *   {"http_req_duration{endpoint:list}": ["p(95)<500", {"threshold": "max<2000",
 *    "abortOnFail": true, "delayAbortEval": "10s"}], "http_req_failed": ["rate<0.01"]}
 * and the older keys p95_ms, error_rate, abort_on_fail (mapped onto it).
 * Endpoint filters must name one of the n_tasks task_names. OUT: *out (malloc'd,
 * free with lc_thresholds_free) and *n. Returns 0, LC_ENOMEM, or LC_EINVAL
 * with "<json path>: <what was expected>" in errmsg. */
int lc_thresholds_parse(const json_t *obj, const char *const *task_names, size_t n_tasks,
                        lc_threshold_t **out, size_t *n, char *errmsg, size_t errlen);
void lc_thresholds_free(lc_threshold_t *t, size_t n);

/* Parses one expression "<agg><op><number>" for metric into t's agg, pct, op
 * and value (spaces between the parts are allowed). Returns 0 or LC_EINVAL. */
int lc_threshold_parse_expr(const char *text, enum lc_metric metric, lc_threshold_t *t);

/* What a threshold is judged on: the whole run's requests or one endpoint's (checks:
 * count is passed + failed, failures the failed). */
typedef struct lc_threshold_data_s {
    uint64_t count, failures;
    const lc_hist_t *hist; /* latencies, microseconds */
    double elapsed_s;      /* for rates */
} lc_threshold_data_t;

/* The value t's aggregation observes in d (ms for latencies); false when d
 * has no data for it (no request, no latency). */
bool lc_threshold_observe(const lc_threshold_t *t, const lc_threshold_data_t *d, double *out);

/* One result as runs show it: {"metric","endpoint","expression","observed"
 * (null without data),"passed","abort_on_fail"}. */
json_t *lc_threshold_result_json(const lc_threshold_t *t, bool has_data, double observed,
                                 bool passed);

/* True when observed satisfies the threshold's comparison. */
bool lc_threshold_holds(const lc_threshold_t *t, double observed);

/* Whether m is a duration (p(N), med, avg, min, max in ms). */
bool lc_metric_is_duration(enum lc_metric m);
/* The series method an unfiltered threshold of m sums ("ITERATION", "GROUP"), or NULL for
 * the requests. */
const char *lc_metric_series_method(enum lc_metric m);

/* "http_req_duration", "http_req_failed", "http_reqs", "iteration_duration", …. */
const char *lc_metric_name(enum lc_metric m);

/* Writes the filter of a result's metric (by name) and series, as written in a scenario:
 * "{endpoint:list}", "{journey:buyer}" (series "iteration:buyer"), "{group:checkout}". */
void lc_threshold_filter_text(const char *metric, const char *series, char *buf, size_t len);

/* Writes "http_req_duration{endpoint:list} p(95)<500" into buf. */
void lc_threshold_label(const lc_threshold_t *t, char *buf, size_t len);

#endif
