/* store_history_json.c — the JSON of a run's history (its entries, its head,
 * the whole document) and the Locust-style per-endpoint table of the reports. */
#include "store_history.h"

#include <stdlib.h>

#include "lc_err.h"
#include "lc_scenario.h"
#include "store_internal.h"

static json_t *ms_json(uint64_t us)
{
    return json_real((double)us / 1000.0);
}

/* A percentile in ms, or null for an empty histogram. */
static json_t *pct_json(const lc_hist_t *h, double p)
{
    return h->total ? ms_json(lc_hist_percentile(h, p)) : json_null();
}

static json_t *percentiles_json(const lc_hist_t *h)
{
    json_t *o = json_object();
    for (int i = 0; i < STORE_N_PERCENTILES; i++)
        json_object_set_new(o, store_percentile_labels[i], pct_json(h, store_percentiles[i]));
    return o;
}

/* An entry's latency: µs as ms, or null when there is none. */
static json_t *latency_json(bool has, uint64_t us)
{
    return has ? ms_json(us) : json_null();
}

/* Seconds the run has been going: to its end, or to now while it runs. */
static double run_elapsed_s(const store_run_t *r, uint64_t now_ms)
{
    if (r->started_ms == 0)
        return 0;
    uint64_t end = r->finished_ms ? r->finished_ms : now_ms;
    return end > r->started_ms ? (double)(end - r->started_ms) / 1000.0 : 0;
}

static double per_s(uint64_t n, double secs)
{
    return secs > 0 ? (double)n / secs : 0;
}

/* History ------------------------------------------------------------------ */

/* The running totals of a full history entry. */
static json_t *running_total_json(const store_history_entry_t *e)
{
    bool has = e->total_has_latency;
    json_t *o = json_pack("{s:I,s:I}", "requests", (json_int_t)e->total_requests, "failures",
                          (json_int_t)e->total_failures);
    json_object_set_new(o, "median_ms", latency_json(has, e->total_median_us));
    json_object_set_new(o, "avg_ms", has ? json_real(e->total_avg_ms) : json_null());
    json_object_set_new(o, "min_ms", latency_json(has, e->total_min_us));
    json_object_set_new(o, "max_ms", latency_json(has, e->total_max_us));
    json_object_set_new(o, "avg_content_size",
                        json_real(e->total_requests ? (double)e->total_bytes /
                                                          (double)e->total_requests
                                                    : 0));
    return o;
}

static json_t *entry_percentiles_json(const store_history_entry_t *e)
{
    json_t *o = json_object();
    for (int i = 0; i < STORE_N_PERCENTILES; i++)
        json_object_set_new(o, store_percentile_labels[i], latency_json(e->has_latency, e->pct_us[i]));
    return o;
}

json_t *store_history_entry_json(const store_history_entry_t *e, bool full)
{
    json_t *row = json_pack("{s:I,s:I,s:I,s:I,s:I,s:f,s:f}", "t", (json_int_t)e->t, "offset_s",
                            (json_int_t)e->offset_s, "users", (json_int_t)e->users, "requests",
                            (json_int_t)e->requests, "failures", (json_int_t)e->failures, "rps",
                            e->rps, "failures_per_s", e->failures_per_s);
    if (row == NULL)
        return NULL;
    json_object_set_new(row, "p50_ms", latency_json(e->has_latency, e->pct_us[STORE_PCT_P50]));
    json_object_set_new(row, "p95_ms", latency_json(e->has_latency, e->pct_us[STORE_PCT_P95]));
    json_object_set_new(row, "p99_ms", latency_json(e->has_latency, e->pct_us[STORE_PCT_P99]));
    if (full) {
        json_object_set_new(row, "bytes", json_integer((json_int_t)e->bytes));
        json_object_set_new(row, "percentiles_ms", entry_percentiles_json(e));
        json_object_set_new(row, "total", running_total_json(e));
    }
    return row;
}

json_t *store_history_head_json(const store_history_head_t *head)
{
    return json_pack("{s:I,s:o,s:s,s:I,s:b}", "run", (json_int_t)head->run, "endpoint",
                     head->endpoint ? json_string(head->endpoint) : json_null(), "method",
                     head->method, "resolution_s", (json_int_t)head->resolution_s, "more",
                     head->more);
}

typedef struct collect_s {
    json_t *rows;
    bool full;
} collect_t;

static int collect_entry(void *arg, const store_history_head_t *head,
                         const store_history_entry_t *e)
{
    (void)head;
    collect_t *c = arg;
    json_t *row = store_history_entry_json(e, c->full);
    if (row != NULL)
        json_array_append_new(c->rows, row);
    return 0;
}

json_t *store_history_json(store_t *s, uint64_t run, const store_history_query_t *q)
{
    collect_t c = {.rows = json_array(), .full = q->full};
    store_history_head_t head;
    if (c.rows == NULL || store_history_each(s, run, q, collect_entry, &c, &head) != 0) {
        json_decref(c.rows);
        return NULL;
    }
    json_t *doc = store_history_head_json(&head);
    if (doc == NULL || json_object_set_new(doc, "seconds", c.rows) != 0) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

/* Request table ------------------------------------------------------------ */

typedef struct stats_row_s {
    const char *type, *name;
    uint64_t count, failures, bytes;
} stats_row_t;

static json_t *stats_row_json(const stats_row_t *r, const lc_hist_t *h, double secs)
{
    json_t *row = json_pack("{s:s,s:s,s:I,s:I}", "type", r->type, "name", r->name, "requests",
                            (json_int_t)r->count, "failures", (json_int_t)r->failures);
    if (row == NULL)
        return NULL;
    json_object_set_new(row, "median_ms", pct_json(h, 50));
    json_object_set_new(row, "avg_ms", h->total ? json_real(lc_hist_mean(h) / 1000.0) : json_null());
    json_object_set_new(row, "min_ms", h->total ? ms_json(h->min) : json_null());
    json_object_set_new(row, "max_ms", h->total ? ms_json(h->max) : json_null());
    json_object_set_new(row, "avg_content_size",
                        json_real(r->count ? (double)r->bytes / (double)r->count : 0));
    json_object_set_new(row, "rps", json_real(per_s(r->count, secs)));
    json_object_set_new(row, "failures_per_s", json_real(per_s(r->failures, secs)));
    json_object_set_new(row, "percentiles_ms", percentiles_json(h));
    return row;
}

/* One row per endpoint into rows; the request series' sums (the Aggregated row) into *sum and
 * total. */
static int endpoint_rows(store_t *s, uint64_t run, double secs, json_t *rows, stats_row_t *sum,
                         lc_hist_t *total)
{
    sqlite3_stmt *st = store_prepare(s, "SELECT endpoint, method, count, failures, bytes, hist"
                                        " FROM run_endpoints WHERE run = ? ORDER BY endpoint, method");
    lc_hist_t *h = malloc(sizeof *h);
    if (st == NULL || h == NULL) {
        sqlite3_finalize(st);
        free(h);
        return st ? LC_ENOMEM : LC_EIO;
    }
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        const char *method = (const char *)sqlite3_column_text(st, 1);
        stats_row_t r = {method ? method : "", name ? name : "",
                         (uint64_t)sqlite3_column_int64(st, 2),
                         (uint64_t)sqlite3_column_int64(st, 3),
                         (uint64_t)sqlite3_column_int64(st, 4)};
        lc_hist_init(h);
        store_hist_add_column(h, st, 5);
        if (!lc_series_is_timer(r.type)) { /* iterations and groups are not requests */
            lc_hist_merge(total, h);
            sum->count += r.count;
            sum->failures += r.failures;
            sum->bytes += r.bytes;
        }
        json_t *row = stats_row_json(&r, h, secs);
        if (row != NULL)
            json_array_append_new(rows, row);
    }
    sqlite3_finalize(st);
    free(h);
    return 0;
}

json_t *store_report_stats_json(store_t *s, uint64_t run, uint64_t now_ms)
{
    store_run_t r;
    if (store_run_get(s, run, &r) != 0)
        return NULL;
    double secs = run_elapsed_s(&r, now_ms);
    store_run_free(&r);
    json_t *rows = json_array();
    lc_hist_t *total = malloc(sizeof *total);
    stats_row_t sum = {"", "Aggregated", 0, 0, 0};
    int rv = total && rows ? 0 : LC_ENOMEM;
    if (rv == 0) {
        lc_hist_init(total);
        rv = endpoint_rows(s, run, secs, rows, &sum, total);
    }
    json_t *agg = rv == 0 ? stats_row_json(&sum, total, secs) : NULL;
    free(total);
    if (agg == NULL) {
        json_decref(rows);
        return NULL;
    }
    json_array_append_new(rows, agg);
    return rows;
}
