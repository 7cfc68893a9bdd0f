/* store_history.c — the walk over a run's seconds, merged over endpoints (or
 * of one), with running totals: an entry at a time, as numbers. */
#include "store_history.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "lc_err.h"
#include "lc_hist_sum.h"
#include "lc_log.h"
#include "lc_run_state.h"
#include "store_archive.h"
#include "store_internal.h"
#include "store_retention.h"

const double store_percentiles[STORE_N_PERCENTILES] = {50,   66,   75,   80,    90,   95,
                                                       98,   99,   99.9, 99.99, 100};
const char *const store_percentile_labels[STORE_N_PERCENTILES] = {
    "50%", "66%", "75%", "80%", "90%", "95%", "98%", "99%", "99.9%", "99.99%", "100%"};

/* Gaps longer than this are not filled with empty seconds (a day). */
#define MAX_GAP_S 86400

static bool run_over(const char *state)
{
    lc_run_state_t s;
    return lc_run_state_parse(state, &s) == 0 && lc_run_state_is_over(s);
}

/* A statement stepped in t order, one row ahead. */
typedef struct cursor_s {
    sqlite3_stmt *st;
    bool row;
} cursor_t;

static void cursor_next(cursor_t *c)
{
    c->row = c->st != NULL && sqlite3_step(c->st) == SQLITE_ROW;
}

static int64_t cursor_t_of(const cursor_t *c)
{
    return c->row ? sqlite3_column_int64(c->st, 0) : INT64_MAX;
}

/* One second being summed. */
typedef struct second_s {
    int64_t t; /* offset from the run's start */
    uint64_t users, count, failures, bytes;
    /* With one row per second (history_t.one_row): that row's percentiles, straight from
     * its histogram (zero, and no latency, for a second without a row). */
    bool has_latency;
    uint64_t pct_us[STORE_N_PERCENTILES];
} second_t;

typedef struct history_s {
    const store_history_query_t *q;
    store_history_head_t head;
    int64_t start_s;       /* unix second of offset 0 */
    bool one_row;          /* each second has at most one row (run-wide, or one endpoint's) */
    lc_hist_sum_t *hist;   /* the current second's latencies (without one_row) */
    lc_hist_sum_t *total;  /* every second so far (q->full) */
    second_t sums;         /* counters of every second so far (t unused) */
    uint64_t last_users;   /* users of the previous second, for gaps */
    size_t emitted;        /* entries made so far */
    store_history_row_fn row;
    void *row_arg;
    int stopped;           /* what row returned, when not 0 */
} history_t;

/* The running totals of a full entry. */
static void fill_totals(const history_t *h, store_history_entry_t *e)
{
    const lc_hist_t *t = &h->total->h;
    e->total_requests = h->sums.count;
    e->total_failures = h->sums.failures;
    e->total_bytes = h->sums.bytes;
    e->total_has_latency = t->total != 0;
    e->total_median_us = lc_hist_sum_tracked(h->total); /* the median, tracked */
    e->total_avg_ms = lc_hist_mean(t) / 1000.0;
    e->total_min_us = t->min;
    e->total_max_us = t->max;
}

static void fill_entry(const history_t *h, const second_t *sec, store_history_entry_t *e)
{
    uint32_t step = h->head.resolution_s;
    e->t = h->start_s + sec->t;
    e->offset_s = sec->t;
    e->users = sec->users;
    e->requests = sec->count;
    e->failures = sec->failures;
    e->bytes = sec->bytes;
    e->rps = (double)sec->count / step;
    e->failures_per_s = (double)sec->failures / step;
    if (h->one_row) {
        e->has_latency = sec->has_latency;
        memcpy(e->pct_us, sec->pct_us, sizeof e->pct_us);
    } else {
        e->has_latency = h->hist->h.total != 0;
        lc_hist_sum_percentiles(h->hist, store_percentiles, STORE_N_PERCENTILES, e->pct_us);
    }
    if (h->q->full)
        fill_totals(h, e);
}

/* Ends a second: adds it to the running totals (its latencies went into them as its rows
 * were read) and, when it is after q->since, hands its entry to h->row. Clears the
 * second's histogram. */
static void emit_second(history_t *h, const second_t *sec)
{
    if (h->q->full) {
        h->sums.count += sec->count;
        h->sums.failures += sec->failures;
        h->sums.bytes += sec->bytes;
    }
    if (h->start_s + sec->t > h->q->since && h->q->limit != 0 && h->emitted >= h->q->limit) {
        h->head.more = true;
    } else if (h->start_s + sec->t > h->q->since && h->stopped == 0) {
        store_history_entry_t e = {0};
        fill_entry(h, sec, &e);
        h->emitted++;
        h->stopped = h->row(h->row_arg, &h->head, &e);
    }
    h->last_users = sec->users;
    lc_hist_sum_clear(h->hist);
}

/* Adds a row's histogram blob to the second's, and (full entries) to the running total in
 * the same pass over it; a bad one adds nothing. A second of one row takes its percentiles
 * in that pass instead of summing a histogram of it. */
static void add_hist_column(history_t *h, second_t *sec, sqlite3_stmt *st, int col)
{
    const void *blob = sqlite3_column_blob(st, col);
    int len = sqlite3_column_bytes(st, col);
    lc_hist_sum_t *total = h->q->full ? h->total : NULL;
    if (h->one_row) { /* PRIMARY KEY(run, t, endpoint): this is the second's only row */
        uint64_t count = 0;
        if (blob != NULL && len > 0 &&
            lc_hist_sum_add_encoded_percentiles(total, blob, (size_t)len, store_percentiles,
                                                STORE_N_PERCENTILES, sec->pct_us, &count) != 0) {
            lc_warn("store", "msg=\"ignoring corrupt histogram\" bytes=%d", len);
            count = 0;
        }
        sec->has_latency = count != 0;
        if (!sec->has_latency)
            memset(sec->pct_us, 0, sizeof sec->pct_us);
        return;
    }
    if (blob != NULL && len > 0 &&
        lc_hist_sum_add_encoded_both(h->hist, total, blob, (size_t)len) != 0)
        lc_warn("store", "msg=\"ignoring corrupt histogram\" bytes=%d", len);
}

/* Sums the rows of second t of both cursors into one second. */
static void take_second(history_t *h, int64_t t, cursor_t *totals, cursor_t *seconds)
{
    second_t sec = {.t = t, .users = h->last_users};
    if (cursor_t_of(totals) == t) {
        sec.users = (uint64_t)sqlite3_column_int64(totals->st, 1);
        cursor_next(totals);
    }
    for (; cursor_t_of(seconds) == t; cursor_next(seconds)) {
        sec.count += (uint64_t)sqlite3_column_int64(seconds->st, 1);
        sec.failures += (uint64_t)sqlite3_column_int64(seconds->st, 2);
        sec.bytes += (uint64_t)sqlite3_column_int64(seconds->st, 3);
        add_hist_column(h, &sec, seconds->st, 4);
    }
    emit_second(h, &sec);
}

/* Merges the two t-ordered cursors (run-wide counters, endpoint rows) into
 * one entry per second, filling gaps between seconds with empty ones. prev
 * is the last second with stats before the cursors' (-1: none). */
static void history_walk(history_t *h, int64_t prev, cursor_t *totals, cursor_t *seconds)
{
    uint32_t step = h->head.resolution_s;
    for (;;) {
        int64_t t = cursor_t_of(totals) < cursor_t_of(seconds) ? cursor_t_of(totals)
                                                               : cursor_t_of(seconds);
        if (t == INT64_MAX || (h->head.more && !h->q->full) || h->stopped != 0)
            break; /* the rest is the next page's (running totals need them all) */
        if (prev >= 0 && t - prev <= MAX_GAP_S)
            for (int64_t gap = prev + step; gap < t; gap += step) {
                second_t empty = {.t = gap, .users = h->last_users};
                emit_second(h, &empty);
            }
        take_second(h, t, totals, seconds);
        prev = t;
    }
}
/* The newest second of a run (-1 when it has none). */
static int64_t newest_second(store_t *s, uint64_t run)
{
    return store_run_int(s, "SELECT MAX(t) FROM run_second_totals WHERE run = ?", run, -1);
}

/* Whether run's seconds have run-wide rows (a read-thread twin of store_run_has_sums:
 * no cached statement). */
static bool run_has_sums(store_t *s, uint64_t run)
{
    return store_run_int(s, "SELECT COUNT(*) FROM run_sums WHERE run = ?", run, 0) > 0;
}

/* Opens the two cursors over seconds lo < t <= hi. Returns whether each second has at most
 * one row (run-wide rows, or one endpoint's). */
static bool open_cursors(store_t *s, store_t *src, uint64_t run, const char *endpoint,
                         int64_t lo, int64_t hi, cursor_t *totals, cursor_t *seconds)
{
    totals->st = store_prepare(src, "SELECT t, users FROM run_second_totals"
                                  " WHERE run = ?1 AND t > ?2 AND t <= ?3 ORDER BY t");
    /* The whole run reads each second's run-wide row where the run has them (endpoint
     * '', through their own index: the literal '' lets SQLite choose it), else sums its
     * request series; separate statements rather than one with "?4 IS NULL OR …": fewer
     * terms for SQLite to evaluate on each of a long history's rows. */
#define SECONDS_OF_RUN \
    "SELECT t, count, failures, bytes, hist FROM run_seconds WHERE run = ?1 AND t > ?2 AND t <= ?3"
    static const char *const sql[] = {
        SECONDS_OF_RUN " AND endpoint = '' ORDER BY t",
        SECONDS_OF_RUN " AND endpoint = ?4 ORDER BY t, endpoint",
        SECONDS_OF_RUN " AND " STORE_REQUESTS_ONLY " ORDER BY t, endpoint",
    };
#undef SECONDS_OF_RUN
    bool run_rows = endpoint == NULL && run_has_sums(s, run);
    seconds->st = store_prepare(src, run_rows ? sql[0] : endpoint != NULL ? sql[1] : sql[2]);
    sqlite3_stmt *both[2] = {totals->st, seconds->st};
    for (int i = 0; i < 2; i++) {
        if (both[i] == NULL)
            continue;
        sqlite3_bind_int64(both[i], 1, (sqlite3_int64)run);
        sqlite3_bind_int64(both[i], 2, lo);
        sqlite3_bind_int64(both[i], 3, hi);
    }
    if (seconds->st != NULL && endpoint != NULL)
        sqlite3_bind_text(seconds->st, 4, endpoint, -1, SQLITE_STATIC);
    cursor_next(totals);
    cursor_next(seconds);
    return run_rows || endpoint != NULL;
}

/* The method of one endpoint of a run into method ("" when unknown). */
static void endpoint_method(store_t *s, uint64_t run, const char *endpoint, char *method,
                            size_t cap)
{
    method[0] = '\0';
    sqlite3_stmt *st = endpoint ? store_prepare(s, "SELECT method FROM run_endpoints"
                                                   " WHERE run = ? AND endpoint = ?")
                                : NULL;
    if (st != NULL) {
        sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
        sqlite3_bind_text(st, 2, endpoint, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW)
            store_copy_text(method, cap, st, 0);
    }
    sqlite3_finalize(st);
}

/* The last second <= lo with stats and its users, so that a walk starting
 * after lo fills a gap and carries users exactly as a walk from the start
 * would. Returns -1 when there is none. */
static int64_t second_before(store_t *s, uint64_t run, int64_t lo, uint64_t *users)
{
    sqlite3_stmt *st = lo >= 0 ? store_prepare(s, "SELECT t, users FROM run_second_totals"
                                                  " WHERE run = ? AND t <= ? ORDER BY t DESC LIMIT 1")
                               : NULL;
    int64_t t = -1;
    if (st != NULL) {
        sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
        sqlite3_bind_int64(st, 2, lo);
        if (sqlite3_step(st) == SQLITE_ROW) {
            t = sqlite3_column_int64(st, 0);
            *users = (uint64_t)sqlite3_column_int64(st, 1);
        }
    }
    sqlite3_finalize(st);
    return t;
}


/* Walks seconds lo < t <= hi of the run, an entry at a time to h->row: the run's seconds
 * from src (s itself, or the run's archive), what else it needs from s. */
static int history_rows(store_t *s, store_t *src, uint64_t run, history_t *h, int64_t lo,
                        int64_t hi)
{
    h->hist = lc_hist_sum_new();
    h->total = lc_hist_sum_new();
    int rv = h->hist && h->total ? 0 : LC_ENOMEM;
    if (rv == 0) {
        lc_hist_sum_track(h->total, 50); /* the Total Median of each entry */
        cursor_t totals, seconds;
        h->one_row = open_cursors(s, src, run, h->q->endpoint, lo, hi, &totals, &seconds);
        rv = totals.st && seconds.st ? 0 : LC_EIO;
        if (rv == 0)
            history_walk(h, second_before(src, run, lo, &h->last_users), &totals, &seconds);
        sqlite3_finalize(totals.st);
        sqlite3_finalize(seconds.st);
    }
    free(h->hist);
    free(h->total);
    return rv;
}

/* Reads the run and where its walk goes: h's head and start, [*lo, *hi]. */
static int history_setup(store_t *s, uint64_t run, history_t *h, int64_t *lo, int64_t *hi)
{
    store_run_t r;
    if (store_run_get(s, run, &r) != 0)
        return LC_ENOTFOUND;
    store_retention_t kept;
    if (store_retention_get(s, run, &kept) != 0)
        kept.resolution_s = 1;
    h->head.run = run;
    h->head.endpoint = h->q->endpoint;
    h->head.resolution_s = kept.resolution_s ? kept.resolution_s : 1;
    endpoint_method(s, run, h->q->endpoint, h->head.method, sizeof h->head.method);
    h->start_s = (int64_t)((r.started_ms ? r.started_ms : r.created_ms) / 1000);
    /* Without running totals only seconds after `since` are read at all. */
    *lo = -1;
    if (!h->q->full && h->q->since > h->start_s - 1)
        *lo = h->q->since - h->start_s;
    *hi = run_over(r.state) ? INT64_MAX : newest_second(s, run) - 1;
    store_run_free(&r);
    return 0;
}

int store_history_each(store_t *s, uint64_t run, const store_history_query_t *q,
                       store_history_row_fn row, void *arg, store_history_head_t *head)
{
    assert(row != NULL);
    history_t h = {.q = q, .row = row, .row_arg = arg};
    int64_t lo, hi;
    int rv = history_setup(s, run, &h, &lo, &hi);
    store_t *src = NULL;
    if (rv == 0)
        rv = store_seconds_open(s, run, &src);
    if (rv == 0 && src != s) /* an archive is merged after the state asks: its own says */
        h.head.resolution_s = store_archive_resolution_of(src, h.head.resolution_s);
    if (rv == 0)
        rv = history_rows(s, src, run, &h, lo, hi);
    if (src != NULL)
        store_seconds_close(s, src);
    if (head != NULL)
        *head = h.head;
    return rv != 0 ? rv : h.stopped;
}
