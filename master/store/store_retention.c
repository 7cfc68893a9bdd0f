/* store_retention.c — the history of finished runs over time: RetainHistory
 * merges a run's seconds into coarser points (histograms merged exactly, so
 * the run's totals and percentiles never change), drops its acks, or deletes
 * its seconds; store_retention_next says what is due under a policy. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "lc_err.h"
#include "lc_hist.h"
#include "lc_run_state.h"
#include "store_internal.h"
#include "store_retention.h"

/* One point of the coarser series being built. */
typedef struct point_s {
    uint32_t t;
    char *endpoint, *method;
    uint64_t count, failures, bytes;
    lc_hist_t *hist;
} point_t;

typedef struct points_s {
    point_t *p;
    size_t n, cap;
} points_t;

static void points_free(points_t *ps)
{
    for (size_t i = 0; i < ps->n; i++) {
        free(ps->p[i].endpoint);
        free(ps->p[i].method);
        free(ps->p[i].hist);
    }
    free(ps->p);
}

static point_t *point_new(points_t *ps, uint32_t t, const char *endpoint, const char *method)
{
    if (ps->n == ps->cap) {
        size_t cap = ps->cap ? ps->cap * 2 : 64;
        point_t *grown = realloc(ps->p, cap * sizeof *grown);
        if (grown == NULL)
            return NULL;
        ps->p = grown;
        ps->cap = cap;
    }
    point_t *p = &ps->p[ps->n];
    memset(p, 0, sizeof *p);
    p->t = t;
    p->endpoint = strdup(endpoint);
    p->method = strdup(method);
    p->hist = malloc(sizeof *p->hist);
    if (p->endpoint == NULL || p->method == NULL || p->hist == NULL) {
        free(p->endpoint);
        free(p->method);
        free(p->hist);
        return NULL;
    }
    lc_hist_init(p->hist);
    ps->n++;
    return p;
}

/* Reads the seconds [from, to) into points of res seconds: rows come ordered
 * by endpoint and time, so a point is complete when the next row starts
 * another. */
static int read_points(store_t *s, uint64_t run, uint32_t res, uint32_t from, uint32_t to,
                       points_t *out)
{
    sqlite3_stmt *st = store_prepare(
        s, "SELECT t, endpoint, method, count, failures, bytes, hist FROM run_seconds"
           " WHERE run = ? AND t >= ? AND t < ? ORDER BY endpoint, t");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    sqlite3_bind_int64(st, 2, from);
    sqlite3_bind_int64(st, 3, to);
    int rv = 0, rc;
    point_t *cur = NULL;
    while (rv == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        uint32_t t = (uint32_t)sqlite3_column_int64(st, 0), bucket = t - t % res;
        const char *endpoint = (const char *)sqlite3_column_text(st, 1);
        const char *method = (const char *)sqlite3_column_text(st, 2);
        if (cur == NULL || cur->t != bucket || strcmp(cur->endpoint, endpoint) != 0)
            cur = point_new(out, bucket, endpoint, method);
        if (cur == NULL) {
            rv = LC_ENOMEM;
            break;
        }
        cur->count += (uint64_t)sqlite3_column_int64(st, 3);
        cur->failures += (uint64_t)sqlite3_column_int64(st, 4);
        cur->bytes += (uint64_t)sqlite3_column_int64(st, 5);
        store_hist_add_column(cur->hist, st, 6);
    }
    if (rv == 0 && rc != SQLITE_DONE)
        rv = LC_EIO;
    sqlite3_finalize(st);
    return rv;
}

static int write_point(store_t *s, uint64_t run, const point_t *p)
{
    uint8_t *hist;
    size_t len;
    if (lc_hist_encode(p->hist, &hist, &len) != 0)
        return LC_ENOMEM;
    sqlite3_stmt *st = store_prepare(
        s, "INSERT INTO run_seconds(run, t, endpoint, method, count, failures, bytes, hist)"
           " VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    if (st == NULL) {
        free(hist);
        return LC_EIO;
    }
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    sqlite3_bind_int64(st, 2, p->t);
    sqlite3_bind_text(st, 3, p->endpoint, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, p->method, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, (sqlite3_int64)p->count);
    sqlite3_bind_int64(st, 6, (sqlite3_int64)p->failures);
    sqlite3_bind_int64(st, 7, (sqlite3_int64)p->bytes);
    sqlite3_bind_blob(st, 8, hist, (int)len, free);
    return store_step_done(s, st);
}

static int delete_range(store_t *s, const char *table, uint64_t run, uint32_t from, uint32_t to)
{
    char sql[128];
    snprintf(sql, sizeof sql, "DELETE FROM %s WHERE run = ? AND t >= ? AND t < ?", table);
    sqlite3_stmt *st = store_prepare(s, sql);
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    sqlite3_bind_int64(st, 2, from);
    sqlite3_bind_int64(st, 3, to);
    return store_step_done(s, st);
}

/* The run-wide counters of each point: users is a level (its highest second
 * stands for the point), the others add up. Plain SQL: no histograms. */
static int compact_second_totals(store_t *s, uint64_t run, uint32_t res, uint32_t from, uint32_t to)
{
    int rv = store_exec(s, "CREATE TEMP TABLE IF NOT EXISTS retain_totals AS"
                           " SELECT * FROM run_second_totals WHERE 0");
    sqlite3_stmt *st = rv == 0 ? store_prepare(
        s, "INSERT INTO retain_totals SELECT run, t - t % ?1, MAX(users), SUM(dropped),"
           " SUM(tls_handshakes), SUM(tls_resumed), SUM(lost_batches), SUM(lost_requests)"
           " FROM run_second_totals WHERE run = ?2 AND t >= ?3 AND t < ?4 GROUP BY t - t % ?1")
                               : NULL;
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, res);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)run);
    sqlite3_bind_int64(st, 3, from);
    sqlite3_bind_int64(st, 4, to);
    rv = store_step_done(s, st);
    if (rv == 0)
        rv = delete_range(s, "run_second_totals", run, from, to);
    if (rv == 0)
        rv = store_exec(s, "INSERT INTO run_second_totals SELECT * FROM retain_totals");
    int cleared = store_exec(s, "DELETE FROM retain_totals");
    return rv != 0 ? rv : cleared;
}

int store_compact_range(store_t *s, uint64_t run, uint32_t res, uint32_t from, uint32_t to)
{
    points_t ps = {0};
    int rv = read_points(s, run, res, from, to, &ps);
    if (rv == 0)
        rv = delete_range(s, "run_seconds", run, from, to);
    for (size_t i = 0; rv == 0 && i < ps.n; i++)
        rv = write_point(s, run, &ps.p[i]);
    points_free(&ps);
    return rv == 0 ? compact_second_totals(s, run, res, from, to) : rv;
}

/* ---- the run_retention row ---------------------------------------------- */

int store_retention_get(store_t *s, uint64_t run, store_retention_t *out)
{
    memset(out, 0, sizeof *out);
    out->resolution_s = 1;
    sqlite3_stmt *st = store_cached(
        s, "SELECT resolution_s, progress_res, progress_t, acks_dropped, seconds_deleted"
           " FROM run_retention WHERE run = ?");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    if (sqlite3_step(st) == SQLITE_ROW) {
        out->resolution_s = (uint32_t)sqlite3_column_int64(st, 0);
        out->progress_res = (uint32_t)sqlite3_column_int64(st, 1);
        out->progress_t = (uint32_t)sqlite3_column_int64(st, 2);
        out->acks_dropped = sqlite3_column_int(st, 3) != 0;
        out->seconds_deleted = sqlite3_column_int(st, 4) != 0;
    }
    store_cached_done(st);
    st = store_cached(s, "SELECT 1 FROM run_archives WHERE run = ?");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    out->archived = sqlite3_step(st) == SQLITE_ROW;
    store_cached_done(st);
    return 0;
}

static int retention_put(store_t *s, uint64_t run, const store_retention_t *r)
{
    sqlite3_stmt *st = store_prepare(
        s, "INSERT OR REPLACE INTO run_retention(run, resolution_s, progress_res, progress_t,"
           " acks_dropped, seconds_deleted) VALUES (?, ?, ?, ?, ?, ?)");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    sqlite3_bind_int64(st, 2, r->resolution_s);
    sqlite3_bind_int64(st, 3, r->progress_res);
    sqlite3_bind_int64(st, 4, r->progress_t);
    sqlite3_bind_int(st, 5, r->acks_dropped);
    sqlite3_bind_int(st, 6, r->seconds_deleted);
    return store_step_done(s, st);
}

uint32_t store_last_second(store_t *s, uint64_t run)
{
    sqlite3_stmt *st = store_prepare(s, "SELECT MAX(t) FROM run_seconds WHERE run = ?");
    uint32_t t = 0;
    if (st == NULL)
        return 0;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    if (sqlite3_step(st) == SQLITE_ROW)
        t = (uint32_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return t;
}

static int delete_run_rows(store_t *s, const char *table, uint64_t run)
{
    char sql[96];
    snprintf(sql, sizeof sql, "DELETE FROM %s WHERE run = ?", table);
    sqlite3_stmt *st = store_prepare(s, sql);
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    return store_step_done(s, st);
}

/* Records that run's seconds leave the database, with the whole-run sums of its
 * run_second_totals that /metrics and the run list keep reading from here. The rows stay
 * until this master's archiver has written them to the run's file (store_archive.h). */
static int archive_mark(store_t *s, uint64_t run)
{
    sqlite3_stmt *st = store_prepare(
        s, "INSERT OR IGNORE INTO run_archives(run, dropped, tls_handshakes, tls_resumed,"
           " lost_batches, lost_requests) SELECT ?1, COALESCE(SUM(dropped), 0),"
           " COALESCE(SUM(tls_handshakes), 0), COALESCE(SUM(tls_resumed), 0),"
           " COALESCE(SUM(lost_batches), 0), COALESCE(SUM(lost_requests), 0)"
           " FROM run_second_totals WHERE run = ?1");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    return store_step_done(s, st);
}

static bool compaction_valid(const Lc__RetainHistory *c)
{
    return (c->resolution_s == 10 || c->resolution_s == 60) && c->from_t < c->to_t &&
           c->from_t % c->resolution_s == 0 && c->to_t % c->resolution_s == 0;
}

static int apply_compaction(store_t *s, const Lc__RetainHistory *c, store_retention_t *r)
{
    if (r->seconds_deleted || c->resolution_s <= r->resolution_s)
        return 0; /* nothing left to merge, or already this coarse */
    if (r->archived) { /* each master's archiver merges the file, whole and off the loop */
        r->resolution_s = c->resolution_s;
        r->progress_res = r->progress_t = 0;
        return 0;
    }
    int rv = store_compact_range(s, c->run, c->resolution_s, c->from_t, c->to_t);
    if (rv != 0)
        return rv;
    r->progress_res = c->resolution_s;
    r->progress_t = c->to_t;
    if (c->to_t > store_last_second(s, c->run)) { /* the whole history is at the new resolution */
        r->resolution_s = c->resolution_s;
        r->progress_res = r->progress_t = 0;
    }
    return 0;
}

int store_apply_retain_history(store_t *s, const Lc__RetainHistory *c)
{
    assert(c != NULL);
    if (!store_run_is_over(s, c->run))
        return LC_ESTATE; /* an active run's history is still being written */
    if (c->resolution_s != 0 && !compaction_valid(c))
        return LC_EINVAL;
    store_retention_t r;
    int rv = store_retention_get(s, c->run, &r);
    if (rv == 0 && c->resolution_s != 0)
        rv = apply_compaction(s, c, &r);
    if (rv == 0 && c->archive && !r.archived && !r.seconds_deleted) {
        rv = archive_mark(s, c->run);
        r.archived = rv == 0;
    }
    if (rv == 0 && (c->drop_acks || c->archive) && !r.acks_dropped) {
        rv = delete_run_rows(s, "acks", c->run);
        r.acks_dropped = true;
    }
    if (rv == 0 && c->delete_seconds && !r.seconds_deleted) {
        rv = delete_run_rows(s, "run_seconds", c->run);
        if (rv == 0)
            rv = delete_run_rows(s, "run_second_totals", c->run);
        r.seconds_deleted = true;
    }
    return rv == 0 ? retention_put(s, c->run, &r) : rv;
}

/* ---- what is due ---------------------------------------------------------- */

/* The resolution a run finished age_ms ago should have by now. */
static uint32_t target_resolution(const store_retention_policy_t *p, uint64_t age_ms)
{
    if (p->full_ms == 0)
        return 1; /* per-second points for good */
    if (p->ten_s_ms != 0 && age_ms >= p->ten_s_ms)
        return 60;
    if (p->full_ms != 0 && age_ms >= p->full_ms)
        return 10;
    return 1;
}

/* The resolution every run ends at under p (before deletion). */
static uint32_t final_resolution(const store_retention_policy_t *p)
{
    return p->full_ms == 0 ? 1 : p->ten_s_ms != 0 ? 60 : 10;
}

/* Fills out with the next step for one run; false when nothing is due. */
static bool next_for_run(store_t *s, const store_retention_policy_t *p, uint64_t run,
                         uint64_t age_ms, Lc__RetainHistory *out)
{
    store_retention_t r;
    if (store_retention_get(s, run, &r) != 0)
        return false;
    out->run = run;
    out->drop_acks = !r.acks_dropped && p->acks_ms != 0 && age_ms >= p->acks_ms;
    out->delete_seconds = !r.seconds_deleted && p->max_ms != 0 && age_ms >= p->max_ms;
    out->archive = p->archive && !r.archived && !r.seconds_deleted && !out->delete_seconds &&
                   p->acks_ms != 0 && age_ms >= p->acks_ms;
    uint32_t target = target_resolution(p, age_ms);
    if (!r.seconds_deleted && !out->delete_seconds && target > r.resolution_s) {
        uint32_t from = r.progress_res == target ? r.progress_t : 0;
        out->resolution_s = target;
        out->from_t = from;
        out->to_t = from + STORE_RETENTION_CHUNK_S; /* a multiple of 10 and 60 */
    }
    return out->drop_acks || out->delete_seconds || out->archive || out->resolution_s != 0;
}

int store_retention_next(store_t *s, const store_retention_policy_t *p, uint64_t now_ms,
                         Lc__RetainHistory *out)
{
    assert(p != NULL && out != NULL);
    lc__retain_history__init(out);
    /* Settled runs (nothing more can happen to them under p) are not even
     * read: the scan costs the runs still ageing, not the whole history. */
    sqlite3_stmt *st = store_prepare(
        s, "SELECT r.id, r.finished FROM runs r LEFT JOIN run_retention x ON x.run = r.id"
           " WHERE r.finished > 0 AND r.state IN ('finished', 'failed', 'aborted')"
           " AND (NOT (COALESCE(x.acks_dropped, 0) = 1 OR ?1 = 0)"
           "      OR NOT (COALESCE(x.seconds_deleted, 0) = 1"
           "              OR (?2 = 0 AND COALESCE(x.resolution_s, 1) >= ?3))"
           "      OR (?4 AND ?1 <> 0 AND COALESCE(x.seconds_deleted, 0) = 0"
           "          AND r.id NOT IN (SELECT run FROM run_archives))) ORDER BY r.id");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)p->acks_ms);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)p->max_ms);
    sqlite3_bind_int64(st, 3, final_resolution(p));
    sqlite3_bind_int(st, 4, p->archive);
    int rv = LC_ENOTFOUND;
    while (rv == LC_ENOTFOUND && sqlite3_step(st) == SQLITE_ROW) {
        uint64_t run = (uint64_t)sqlite3_column_int64(st, 0);
        uint64_t finished = (uint64_t)sqlite3_column_int64(st, 1);
        uint64_t age = now_ms > finished ? now_ms - finished : 0;
        if (next_for_run(s, p, run, age, out))
            rv = 0;
    }
    sqlite3_finalize(st);
    return rv;
}

int store_tenant_run_counts(store_t *s, const char *tenant, uint64_t *active, uint64_t *kept)
{
    sqlite3_stmt *st = store_prepare(
        s, "SELECT COALESCE(SUM(r.state IN ('pending', 'running', 'stopping')), 0),"
           " COALESCE(SUM(COALESCE(x.seconds_deleted, 0) = 0), 0)"
           " FROM runs r LEFT JOIN run_retention x ON x.run = r.id WHERE r.tenant = ?");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_text(st, 1, tenant, -1, SQLITE_STATIC);
    int rv = LC_EIO;
    if (sqlite3_step(st) == SQLITE_ROW) {
        *active = (uint64_t)sqlite3_column_int64(st, 0);
        *kept = (uint64_t)sqlite3_column_int64(st, 1);
        rv = 0;
    }
    sqlite3_finalize(st);
    return rv;
}
