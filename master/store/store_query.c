/* store_query.c — reading runs back: single rows, id lists, and the JSON views
 * the API serves. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lc_err.h"
#include "lc_run_state.h"
#include "lc_scenario.h"
#include "store_archive.h"
#include "store_internal.h"
#include "store_thresholds.h"

void store_run_free(store_run_t *r)
{
    free(r->scenario_json);
    r->scenario_json = NULL;
}

int store_run_get(store_t *s, uint64_t id, store_run_t *out)
{
    memset(out, 0, sizeof *out);
    sqlite3_stmt *st = store_prepare(
        s, "SELECT id, tenant, name, state, users, created, started, finished, reason, verdict,"
           " scenario_json FROM runs WHERE id = ?");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)id);
    int rv = LC_ENOTFOUND;
    if (sqlite3_step(st) == SQLITE_ROW) {
        out->id = (uint64_t)sqlite3_column_int64(st, 0);
        store_copy_text(out->tenant, sizeof out->tenant, st, 1);
        store_copy_text(out->name, sizeof out->name, st, 2);
        store_copy_text(out->state, sizeof out->state, st, 3);
        out->users = (uint32_t)sqlite3_column_int64(st, 4);
        out->created_ms = (uint64_t)sqlite3_column_int64(st, 5);
        out->started_ms = (uint64_t)sqlite3_column_int64(st, 6);
        out->finished_ms = (uint64_t)sqlite3_column_int64(st, 7);
        store_copy_text(out->reason, sizeof out->reason, st, 8);
        store_copy_text(out->verdict, sizeof out->verdict, st, 9);
        const char *scenario = (const char *)sqlite3_column_text(st, 10);
        out->scenario_json = strdup(scenario ? scenario : "");
        rv = out->scenario_json ? 0 : LC_ENOMEM;
    }
    sqlite3_finalize(st);
    return rv;
}

int store_run_tenant(store_t *s, uint64_t id, char *tenant, size_t len)
{
    tenant[0] = '\0';
    sqlite3_stmt *st = store_prepare(s, "SELECT tenant FROM runs WHERE id = ?");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)id);
    int rv = LC_ENOTFOUND;
    if (sqlite3_step(st) == SQLITE_ROW) {
        store_copy_text(tenant, len, st, 0);
        rv = 0;
    }
    sqlite3_finalize(st);
    return rv;
}

int store_runs_in_state(store_t *s, const char *state, uint64_t **ids, size_t *n)
{
    *ids = NULL;
    *n = 0;
    /* The run controller asks every tick (100 ms): kept prepared. */
    sqlite3_stmt *st = store_cached(s, "SELECT id FROM runs WHERE state = ? ORDER BY id");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_text(st, 1, state, -1, SQLITE_STATIC);
    size_t cap = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 8;
            uint64_t *grown = realloc(*ids, cap * sizeof **ids);
            if (grown == NULL) {
                store_cached_done(st);
                return LC_ENOMEM;
            }
            *ids = grown;
        }
        (*ids)[(*n)++] = (uint64_t)sqlite3_column_int64(st, 0);
    }
    store_cached_done(st);
    return 0;
}

uint64_t store_max_run_id(store_t *s)
{
    sqlite3_stmt *st = store_prepare(s, "SELECT COALESCE(MAX(id), 0) FROM runs");
    uint64_t id = 0;
    if (st != NULL && sqlite3_step(st) == SQLITE_ROW)
        id = (uint64_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return id;
}

int store_member_get(store_t *s, uint64_t id, char *raft, char *worker, char *api, size_t len)
{
    raft[0] = worker[0] = api[0] = '\0';
    /* Asked for each master whenever the members are listed (redirects, the cluster view). */
    sqlite3_stmt *st = store_cached(s, "SELECT raft, worker, api FROM members WHERE id = ?");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)id);
    int rv = LC_ENOTFOUND;
    if (sqlite3_step(st) == SQLITE_ROW) {
        store_copy_text(raft, len, st, 0);
        store_copy_text(worker, len, st, 1);
        store_copy_text(api, len, st, 2);
        rv = 0;
    }
    store_cached_done(st);
    return rv;
}

/* JSON helpers ---------------------------------------------------------- */

static double ms_of(uint64_t us)
{
    return (double)us / 1000.0;
}

static json_t *latency_json(const lc_hist_t *h)
{
    if (h->total == 0)
        return json_pack("{s:n,s:n,s:n,s:n,s:n,s:n,s:n}", "min", "mean", "p50", "p90", "p95",
                         "p99", "max");
    return json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "min", ms_of(h->min), "mean",
                     lc_hist_mean(h) / 1000.0, "p50", ms_of(lc_hist_percentile(h, 50)), "p90",
                     ms_of(lc_hist_percentile(h, 90)), "p95", ms_of(lc_hist_percentile(h, 95)),
                     "p99", ms_of(lc_hist_percentile(h, 99)), "max", ms_of(h->max));
}

/* Seconds the run has been going: to its end, or to now while it runs. */
static double run_duration_s(const store_run_t *r, uint64_t now_ms)
{
    if (r->started_ms == 0)
        return 0;
    uint64_t end = r->finished_ms ? r->finished_ms : now_ms;
    return end > r->started_ms ? (double)(end - r->started_ms) / 1000.0 : 0;
}

static double rate(uint64_t count, double seconds)
{
    return seconds > 0 ? (double)count / seconds : 0;
}

static json_t *run_head_json(const store_run_t *r, uint64_t now_ms)
{
    return json_pack("{s:I,s:s,s:s,s:s,s:o,s:o,s:o,s:i,s:f,s:s,s:s}", "id", (json_int_t)r->id,
                     "name", r->name, "tenant", r->tenant, "state", r->state, "created_at",
                     store_time_json((int64_t)r->created_ms), "started_at",
                     store_time_json((int64_t)r->started_ms), "finished_at",
                     store_time_json((int64_t)r->finished_ms), "users", (int)r->users,
                     "duration_s", run_duration_s(r, now_ms), "reason", r->reason, "verdict",
                     r->verdict);
}

/* Endpoints of a run as JSON rows; totals accumulated into *total. */
static json_t *endpoints_json(store_t *s, uint64_t run, double secs, lc_hist_t *total,
                              uint64_t sums[3])
{
    json_t *rows = json_array();
    sqlite3_stmt *st = store_prepare(s, "SELECT endpoint, method, count, failures, bytes, hist"
                                        " FROM run_endpoints WHERE run = ? ORDER BY endpoint");
    if (st == NULL)
        return rows;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    lc_hist_t *h = malloc(sizeof *h);
    while (h != NULL && sqlite3_step(st) == SQLITE_ROW) {
        lc_hist_init(h);
        store_hist_add_column(h, st, 5);
        uint64_t count = (uint64_t)sqlite3_column_int64(st, 2);
        uint64_t failures = (uint64_t)sqlite3_column_int64(st, 3);
        uint64_t bytes = (uint64_t)sqlite3_column_int64(st, 4);
        if (!lc_series_is_timer((const char *)sqlite3_column_text(st, 1))) {
            lc_hist_merge(total, h);
            sums[0] += count;
            sums[1] += failures;
            sums[2] += bytes;
        }
        json_array_append_new(
            rows, json_pack("{s:s,s:s,s:I,s:I,s:I,s:f,s:o}", "name",
                            (const char *)sqlite3_column_text(st, 0), "method",
                            (const char *)sqlite3_column_text(st, 1), "requests",
                            (json_int_t)count, "failures", (json_int_t)failures, "bytes",
                            (json_int_t)bytes, "rps", rate(count, secs), "latency_ms",
                            latency_json(h)));
    }
    free(h);
    sqlite3_finalize(st);
    return rows;
}

static json_t *errors_json(store_t *s, uint64_t run)
{
    json_t *rows = json_array();
    sqlite3_stmt *st = store_prepare(
        s, "SELECT e.endpoint, e.kind, e.count, n.message FROM run_errors e"
           " LEFT JOIN run_error_notes n ON n.run = e.run AND n.endpoint = e.endpoint"
           " AND n.kind = e.kind WHERE e.run = ? ORDER BY e.count DESC, e.endpoint, e.kind");
    if (st == NULL)
        return rows;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    while (sqlite3_step(st) == SQLITE_ROW) {
        json_t *row = json_pack("{s:s,s:s,s:I}", "endpoint",
                                (const char *)sqlite3_column_text(st, 0), "kind",
                                (const char *)sqlite3_column_text(st, 1), "count",
                                (json_int_t)sqlite3_column_int64(st, 2));
        const char *message = (const char *)sqlite3_column_text(st, 3);
        if (row != NULL && message != NULL)
            json_object_set_new(row, "first_message", json_string(message));
        json_array_append_new(rows, row);
    }
    sqlite3_finalize(st);
    return rows;
}

/* A run's script checks by name: passed and failed counts. */
static json_t *checks_json(store_t *s, uint64_t run)
{
    json_t *rows = json_array();
    sqlite3_stmt *st = store_prepare(s, "SELECT name, passed, failed FROM run_checks"
                                        " WHERE run = ? ORDER BY name");
    if (st == NULL)
        return rows;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    while (sqlite3_step(st) == SQLITE_ROW)
        json_array_append_new(rows, json_pack("{s:s,s:I,s:I}", "name",
                                              (const char *)sqlite3_column_text(st, 0), "passed",
                                              (json_int_t)sqlite3_column_int64(st, 1), "failed",
                                              (json_int_t)sqlite3_column_int64(st, 2)));
    sqlite3_finalize(st);
    return rows;
}

/* The newest second of a run with stats, or -1. */
static int64_t last_second(store_t *s, uint64_t run)
{
    return store_run_int(s, "SELECT MAX(t) FROM run_seconds WHERE run = ?", run, -1);
}

/* Sums one second over its endpoints into count, failures and h. */
static void sum_second(store_t *s, uint64_t run, int64_t t, uint64_t *count, uint64_t *failures,
                       lc_hist_t *h)
{
    sqlite3_stmt *st =
        store_prepare(s, "SELECT count, failures, hist FROM run_seconds WHERE run = ? AND t = ?"
                         " AND " STORE_REQUESTS_ONLY);
    *count = *failures = 0;
    if (st == NULL)
        return;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    sqlite3_bind_int64(st, 2, t);
    while (sqlite3_step(st) == SQLITE_ROW) {
        *count += (uint64_t)sqlite3_column_int64(st, 0);
        *failures += (uint64_t)sqlite3_column_int64(st, 1);
        store_hist_add_column(h, st, 2);
    }
    sqlite3_finalize(st);
}

/* Run-wide counters of one second (t >= 0) or of the whole run (t < 0):
 * users (of that second only), dropped starts, TLS handshakes, resumptions. */
typedef struct second_totals_s {
    int64_t users, dropped, tls_handshakes, tls_resumed, lost_batches, lost_requests;
} second_totals_t;

static second_totals_t second_totals(store_t *s, uint64_t run, int64_t t)
{
    second_totals_t out = {0, 0, 0, 0, 0, 0};
    sqlite3_stmt *st = store_prepare(
        s, "SELECT COALESCE(SUM(CASE WHEN t = ?2 THEN users END), 0), COALESCE(SUM(dropped), 0),"
           " COALESCE(SUM(tls_handshakes), 0), COALESCE(SUM(tls_resumed), 0),"
           " COALESCE(SUM(lost_batches), 0), COALESCE(SUM(lost_requests), 0)"
           " FROM run_second_totals WHERE run = ?1 AND (?2 < 0 OR t = ?2)");
    if (st == NULL)
        return out;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    sqlite3_bind_int64(st, 2, t);
    if (sqlite3_step(st) == SQLITE_ROW) {
        out.users = sqlite3_column_int64(st, 0);
        out.dropped = sqlite3_column_int64(st, 1);
        out.tls_handshakes = sqlite3_column_int64(st, 2);
        out.tls_resumed = sqlite3_column_int64(st, 3);
        out.lost_batches = sqlite3_column_int64(st, 4);
        out.lost_requests = sqlite3_column_int64(st, 5);
    }
    sqlite3_finalize(st);
    return out;
}

/* A run's whole-run counters as its archiving recorded them (zeros when it has none). */
static second_totals_t archived_totals(store_t *s, uint64_t run)
{
    second_totals_t out = {0, 0, 0, 0, 0, 0};
    sqlite3_stmt *st = store_prepare(s, "SELECT dropped, tls_handshakes, tls_resumed,"
                                        " lost_batches, lost_requests FROM run_archives"
                                        " WHERE run = ?");
    if (st != NULL)
        sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    if (st != NULL && sqlite3_step(st) == SQLITE_ROW)
        out = (second_totals_t){0, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                                sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3),
                                sqlite3_column_int64(st, 4)};
    sqlite3_finalize(st);
    return out;
}

/* The latest complete second of a run: {"t","users","rps","p95_ms","failures"}. */
static json_t *current_json(store_t *s, const store_run_t *r)
{
    int64_t t = last_second(s, r->id);
    if (t < 0)
        return json_null();
    if (t > 0)
        t--; /* the newest second is still filling, or cut short by the end */
    lc_hist_t *h = malloc(sizeof *h);
    if (h == NULL)
        return json_null();
    lc_hist_init(h);
    uint64_t count, failures;
    sum_second(s, r->id, t, &count, &failures, h);
    second_totals_t tot = second_totals(s, r->id, t);
    json_t *cur = json_pack("{s:I,s:I,s:f,s:f,s:I,s:I}", "t", (json_int_t)t, "users",
                            (json_int_t)tot.users, "rps", (double)count, "p95_ms",
                            h->total ? ms_of(lc_hist_percentile(h, 95)) : 0.0, "failures",
                            (json_int_t)failures, "dropped", (json_int_t)tot.dropped);
    free(h);
    return cur;
}

/* The scheduler's view (RunGrant): users asked and granted, queued, and
 * warnings, from the run_grants columns granted, queued, warnings at col..col+2
 * of st (NULL, or a NULL granted column, when the run has no grant yet).
 * Before the first grant a pending run counts as queued; after the run the
 * last grant and warnings stay. */
static void grant_set(json_t *run, const char *state, uint32_t requested, sqlite3_stmt *st,
                      int col)
{
    json_int_t granted = 0;
    lc_run_state_t s = LC_RUN_FAILED; /* an unknown state waits for nothing */
    lc_run_state_parse(state, &s);
    bool queued = s == LC_RUN_PENDING;
    json_t *warnings = NULL;
    if (st != NULL && sqlite3_column_type(st, col) != SQLITE_NULL) {
        granted = sqlite3_column_int64(st, col);
        queued = sqlite3_column_int(st, col + 1) != 0;
        const char *text = (const char *)sqlite3_column_text(st, col + 2);
        warnings = text ? json_loads(text, 0, NULL) : NULL;
    }
    if (s != LC_RUN_PENDING && s != LC_RUN_RUNNING)
        queued = false; /* over, or on its way out: it waits for nothing */
    if (!json_is_array(warnings)) {
        json_decref(warnings);
        warnings = json_array();
    }
    json_object_set_new(run, "users_requested", json_integer(requested));
    json_object_set_new(run, "users_granted", json_integer(granted));
    json_object_set_new(run, "queued", json_boolean(queued));
    json_object_set_new(run, "warnings", warnings);
}

static void grant_json(store_t *s, json_t *run, const store_run_t *r)
{
    sqlite3_stmt *st = store_prepare(s, "SELECT granted, queued, warnings FROM run_grants"
                                        " WHERE run = ?");
    if (st != NULL)
        sqlite3_bind_int64(st, 1, (sqlite3_int64)r->id);
    bool found = st != NULL && sqlite3_step(st) == SQLITE_ROW;
    grant_set(run, r->state, r->users, found ? st : NULL, 0);
    sqlite3_finalize(st);
}

json_t *store_run_json(store_t *s, uint64_t id, uint64_t now_ms)
{
    store_run_t r;
    if (store_run_get(s, id, &r) != 0)
        return NULL;
    double secs = run_duration_s(&r, now_ms);
    json_t *run = run_head_json(&r, now_ms);
    lc_hist_t *total = malloc(sizeof *total);
    if (total == NULL || run == NULL) {
        free(total);
        json_decref(run);
        store_run_free(&r);
        return NULL;
    }
    lc_hist_init(total);
    uint64_t sums[3] = {0, 0, 0};
    json_object_set_new(run, "endpoints", endpoints_json(s, id, secs, total, sums));
    /* A finished run's seconds may be in its archive; while it is not on this master yet,
     * its counters are the ones archiving recorded and it has no current second. */
    store_t *src = NULL;
    if (store_seconds_open(s, id, &src) != 0)
        src = NULL;
    second_totals_t tot = src ? second_totals(src, id, -1) : archived_totals(s, id);
    json_object_set_new(
        run, "totals",
        json_pack("{s:I,s:I,s:I,s:f,s:o,s:I,s:I,s:I,s:I,s:I}", "requests", (json_int_t)sums[0],
                  "failures", (json_int_t)sums[1], "bytes", (json_int_t)sums[2], "rps",
                  rate(sums[0], secs), "latency_ms", latency_json(total), "dropped",
                  (json_int_t)tot.dropped, "tls_handshakes", (json_int_t)tot.tls_handshakes,
                  "tls_resumed", (json_int_t)tot.tls_resumed, "lost_batches",
                  (json_int_t)tot.lost_batches, "lost_requests", (json_int_t)tot.lost_requests));
    json_object_set_new(run, "errors", errors_json(s, id));
    json_object_set_new(run, "checks", checks_json(s, id));
    grant_json(s, run, &r);
    json_object_set_new(run, "thresholds", store_run_thresholds_json(s, id));
    json_object_set_new(run, "current", src ? current_json(src, &r) : json_null());
    if (src != NULL)
        store_seconds_close(s, src);
    free(total);
    store_run_free(&r);
    return run;
}

/* The run list reads only runs, run_grants and the per-endpoint totals
 * (summed by the run's primary-key prefix): no histogram is decoded, so a
 * long history lists quickly. */
static const char runs_list_sql[] =
    "SELECT r.id, r.name, r.tenant, r.state, r.users, r.created, r.started, r.finished,"
    " r.verdict, g.granted, g.queued, g.warnings,"
    " (SELECT COALESCE(SUM(e.count), 0) FROM run_endpoints e WHERE e.run = r.id"
    " AND e." STORE_REQUESTS_ONLY "),"
    " (SELECT COALESCE(SUM(e.failures), 0) FROM run_endpoints e WHERE e.run = r.id"
    " AND e." STORE_REQUESTS_ONLY ")"
    " FROM runs r LEFT JOIN run_grants g ON g.run = r.id"
    " WHERE (?1 IS NULL OR r.tenant = ?1) AND (?2 IS NULL OR r.state = ?2)"
    " ORDER BY r.id DESC LIMIT 1000";

/* The columns of runs_list_sql; granted, queued, warnings in this order
 * (grant_set). */
enum {
    LIST_ID, LIST_NAME, LIST_TENANT, LIST_STATE, LIST_USERS, LIST_CREATED, LIST_STARTED,
    LIST_FINISHED, LIST_VERDICT, LIST_GRANTED, LIST_QUEUED, LIST_WARNINGS, LIST_REQUESTS,
    LIST_FAILURES
};

/* One row of runs_list_sql as the list shows it. */
static json_t *run_summary_json(sqlite3_stmt *st, uint64_t now_ms)
{
    store_run_t r;
    memset(&r, 0, sizeof r);
    r.id = (uint64_t)sqlite3_column_int64(st, LIST_ID);
    store_copy_text(r.name, sizeof r.name, st, LIST_NAME);
    store_copy_text(r.tenant, sizeof r.tenant, st, LIST_TENANT);
    store_copy_text(r.state, sizeof r.state, st, LIST_STATE);
    store_copy_text(r.verdict, sizeof r.verdict, st, LIST_VERDICT);
    r.users = (uint32_t)sqlite3_column_int64(st, LIST_USERS);
    r.created_ms = (uint64_t)sqlite3_column_int64(st, LIST_CREATED);
    r.started_ms = (uint64_t)sqlite3_column_int64(st, LIST_STARTED);
    r.finished_ms = (uint64_t)sqlite3_column_int64(st, LIST_FINISHED);
    uint64_t requests = (uint64_t)sqlite3_column_int64(st, LIST_REQUESTS);
    json_t *run = json_pack(
        "{s:I,s:s,s:s,s:s,s:o,s:o,s:o,s:i,s:I,s:I,s:f,s:s}", "id", (json_int_t)r.id, "name",
        r.name, "tenant", r.tenant, "state", r.state, "created_at",
        store_time_json((int64_t)r.created_ms), "started_at",
        store_time_json((int64_t)r.started_ms), "finished_at",
        store_time_json((int64_t)r.finished_ms), "users", (int)r.users, "requests",
        (json_int_t)requests, "failures", (json_int_t)sqlite3_column_int64(st, LIST_FAILURES),
        "rps", rate(requests, run_duration_s(&r, now_ms)), "verdict", r.verdict);
    if (run != NULL)
        grant_set(run, r.state, r.users, st, LIST_GRANTED);
    return run;
}

json_t *store_runs_json(store_t *s, const char *tenant, const char *state, uint64_t now_ms)
{
    json_t *list = json_array();
    sqlite3_stmt *st = store_prepare(s, runs_list_sql);
    if (st != NULL && tenant != NULL)
        sqlite3_bind_text(st, 1, tenant, -1, SQLITE_STATIC);
    if (st != NULL && state != NULL)
        sqlite3_bind_text(st, 2, state, -1, SQLITE_STATIC);
    while (st != NULL && sqlite3_step(st) == SQLITE_ROW) {
        json_t *run = run_summary_json(st, now_ms);
        if (run != NULL)
            json_array_append_new(list, run);
    }
    sqlite3_finalize(st);
    return list;
}

bool store_run_is_over(store_t *s, uint64_t id)
{
    store_run_t row;
    lc_run_state_t state;
    if (store_run_get(s, id, &row) != 0)
        return false;
    bool over = lc_run_state_parse(row.state, &state) == 0 && lc_run_state_is_over(state);
    store_run_free(&row);
    return over;
}
