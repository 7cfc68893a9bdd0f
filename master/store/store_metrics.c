/* store_metrics.c — per-endpoint, per-error-kind and per-run figures for /metrics. */
#include "store_metrics.h"

#include <stdlib.h>

#include "lc_err.h"
#include "store_internal.h"

/* The newest runs, as a subquery the two queries below share. */
#define NEWEST_RUNS "(SELECT id FROM runs ORDER BY id DESC LIMIT 50)"

_Static_assert(STORE_METRICS_MAX_RUNS == 50, "NEWEST_RUNS spells the limit");

static const char *column_text(sqlite3_stmt *st, int col)
{
    const char *text = (const char *)sqlite3_column_text(st, col);
    return text != NULL ? text : "";
}

int store_each_endpoint_metrics(store_t *s, void (*fn)(void *arg, const store_endpoint_metrics_t *e),
                                void *arg)
{
    sqlite3_stmt *st = store_prepare(
        s, "SELECT e.run, r.tenant, r.state, e.endpoint, e.method, e.count, e.failures, e.bytes,"
           " e.hist FROM run_endpoints e JOIN runs r ON r.id = e.run"
           " WHERE e.run IN " NEWEST_RUNS " ORDER BY e.run, e.endpoint");
    if (st == NULL)
        return LC_EIO;
    lc_hist_t *hist = malloc(sizeof *hist);
    if (hist == NULL) {
        sqlite3_finalize(st);
        return LC_ENOMEM;
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
        lc_hist_init(hist);
        store_hist_add_column(hist, st, 8);
        store_endpoint_metrics_t e = {
            .run = (uint64_t)sqlite3_column_int64(st, 0), .tenant = column_text(st, 1),
            .state = column_text(st, 2), .endpoint = column_text(st, 3),
            .method = column_text(st, 4), .count = (uint64_t)sqlite3_column_int64(st, 5),
            .failures = (uint64_t)sqlite3_column_int64(st, 6),
            .bytes = (uint64_t)sqlite3_column_int64(st, 7), .hist = hist};
        fn(arg, &e);
    }
    free(hist);
    sqlite3_finalize(st);
    return 0;
}

int store_each_error_metrics(store_t *s, void (*fn)(void *arg, const store_error_metrics_t *e),
                             void *arg)
{
    sqlite3_stmt *st = store_prepare(
        s, "SELECT e.run, r.tenant, r.state, e.endpoint, e.kind, e.count"
           " FROM run_errors e JOIN runs r ON r.id = e.run"
           " WHERE e.run IN " NEWEST_RUNS " ORDER BY e.run, e.endpoint, e.kind");
    if (st == NULL)
        return LC_EIO;
    while (sqlite3_step(st) == SQLITE_ROW) {
        store_error_metrics_t e = {
            .run = (uint64_t)sqlite3_column_int64(st, 0), .tenant = column_text(st, 1),
            .state = column_text(st, 2), .endpoint = column_text(st, 3),
            .kind = column_text(st, 4), .count = (uint64_t)sqlite3_column_int64(st, 5)};
        fn(arg, &e);
    }
    sqlite3_finalize(st);
    return 0;
}

int store_each_run_metrics(store_t *s, void (*fn)(void *arg, const store_run_metrics_t *r),
                           void *arg)
{
    sqlite3_stmt *st = store_prepare(
        s, "SELECT r.id, r.tenant, r.state, r.users, COALESCE(g.granted, 0),"
           " COALESCE(g.queued, 0), COALESCE(a.dropped, SUM(t.dropped), 0),"
           " COALESCE(a.lost_batches, SUM(t.lost_batches), 0),"
           " COALESCE(a.lost_requests, SUM(t.lost_requests), 0)"
           " FROM runs r LEFT JOIN run_grants g ON g.run = r.id"
           " LEFT JOIN run_archives a ON a.run = r.id"
           " LEFT JOIN run_second_totals t ON t.run = r.id AND a.run IS NULL"
           " WHERE r.id IN " NEWEST_RUNS " GROUP BY r.id ORDER BY r.id DESC");
    if (st == NULL)
        return LC_EIO;
    while (sqlite3_step(st) == SQLITE_ROW) {
        store_run_metrics_t r = {
            .run = (uint64_t)sqlite3_column_int64(st, 0), .tenant = column_text(st, 1),
            .state = column_text(st, 2), .users_requested = (uint32_t)sqlite3_column_int64(st, 3),
            .users_granted = (uint32_t)sqlite3_column_int64(st, 4),
            .queued = sqlite3_column_int64(st, 5) != 0,
            .dropped = (uint64_t)sqlite3_column_int64(st, 6),
            .lost_batches = (uint64_t)sqlite3_column_int64(st, 7),
            .lost_requests = (uint64_t)sqlite3_column_int64(st, 8)};
        fn(arg, &r);
    }
    sqlite3_finalize(st);
    return 0;
}
