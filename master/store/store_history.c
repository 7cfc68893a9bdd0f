/* store_history.c — a run's seconds merged over endpoints (or of one), with
 * running totals, and the Locust-style per-endpoint table of the reports. */
#include "store_history.h"

#include <assert.h>
#include <stdlib.h>

#include "lc_err.h"
#include "lc_run_state.h"
#include "store_internal.h"
#include "store_retention.h"

const double store_percentiles[STORE_N_PERCENTILES] = {50,   66,   75,   80,    90,   95,
                                                       98,   99,   99.9, 99.99, 100};
const char *const store_percentile_labels[STORE_N_PERCENTILES] = {
    "50%", "66%", "75%", "80%", "90%", "95%", "98%", "99%", "99.9%", "99.99%", "100%"};

/* Gaps longer than this are not filled with empty seconds (a day). */
#define MAX_GAP_S 86400

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

/* Seconds the run has been going: to its end, or to now while it runs. */
static double run_elapsed_s(const store_run_t *r, uint64_t now_ms)
{
    if (r->started_ms == 0)
        return 0;
    uint64_t end = r->finished_ms ? r->finished_ms : now_ms;
    return end > r->started_ms ? (double)(end - r->started_ms) / 1000.0 : 0;
}

static bool run_over(const char *state)
{
    lc_run_state_t s;
    return lc_run_state_parse(state, &s) == 0 && lc_run_state_is_over(s);
}

static double per_s(uint64_t n, double secs)
{
    return secs > 0 ? (double)n / secs : 0;
}

/* History ------------------------------------------------------------------ */

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
} second_t;

typedef struct history_s {
    const store_history_query_t *q;
    int64_t start_s;     /* unix second of offset 0 */
    lc_hist_t *hist;     /* the current second's latencies */
    lc_hist_t *total;    /* every second so far (q->full) */
    second_t sums;       /* counters of every second so far (t unused) */
    uint64_t last_users; /* users of the previous second, for gaps */
    uint32_t step;       /* seconds per point: 1, or 10 / 60 once compacted */
    bool more;           /* q->limit cut the list: ask again with since = the last t */
    size_t emitted;      /* entries made so far */
    json_t *rows;        /* where entries go, unless sink */
    int (*sink)(void *arg, const json_t *head, json_t *entry);
    void *sink_arg;
    const json_t *head;  /* for sink */
    int stopped;         /* what sink returned, when not 0 */
} history_t;

/* The running totals of a full history entry. */
static json_t *running_total_json(const history_t *h)
{
    const lc_hist_t *t = h->total;
    json_t *o = json_pack("{s:I,s:I}", "requests", (json_int_t)h->sums.count, "failures",
                          (json_int_t)h->sums.failures);
    json_object_set_new(o, "median_ms", pct_json(t, 50));
    json_object_set_new(o, "avg_ms", t->total ? json_real(lc_hist_mean(t) / 1000.0) : json_null());
    json_object_set_new(o, "min_ms", t->total ? ms_json(t->min) : json_null());
    json_object_set_new(o, "max_ms", t->total ? ms_json(t->max) : json_null());
    json_object_set_new(o, "avg_content_size",
                        json_real(h->sums.count ? (double)h->sums.bytes / (double)h->sums.count : 0));
    return o;
}

static json_t *second_json(const history_t *h, const second_t *sec)
{
    json_t *row = json_pack("{s:I,s:I,s:I,s:I,s:I,s:f,s:f}", "t", (json_int_t)(h->start_s + sec->t),
                            "offset_s", (json_int_t)sec->t, "users", (json_int_t)sec->users,
                            "requests", (json_int_t)sec->count, "failures",
                            (json_int_t)sec->failures, "rps", (double)sec->count / h->step,
                            "failures_per_s", (double)sec->failures / h->step);
    if (row == NULL)
        return NULL;
    json_object_set_new(row, "p50_ms", pct_json(h->hist, 50));
    json_object_set_new(row, "p95_ms", pct_json(h->hist, 95));
    json_object_set_new(row, "p99_ms", pct_json(h->hist, 99));
    if (h->q->full) {
        json_object_set_new(row, "bytes", json_integer((json_int_t)sec->bytes));
        json_object_set_new(row, "percentiles_ms", percentiles_json(h->hist));
        json_object_set_new(row, "total", running_total_json(h));
    }
    return row;
}

/* Ends a second: adds it to the running totals and, when it is after
 * q->since, appends its entry. Resets the second's histogram. */
static void emit_second(history_t *h, const second_t *sec)
{
    if (h->q->full) {
        lc_hist_merge(h->total, h->hist);
        h->sums.count += sec->count;
        h->sums.failures += sec->failures;
        h->sums.bytes += sec->bytes;
    }
    if (h->start_s + sec->t > h->q->since && h->q->limit != 0 && h->emitted >= h->q->limit) {
        h->more = true;
    } else if (h->start_s + sec->t > h->q->since && h->stopped == 0) {
        json_t *row = second_json(h, sec);
        h->emitted++;
        if (row != NULL && h->sink != NULL) {
            h->stopped = h->sink(h->sink_arg, h->head, row);
            json_decref(row);
        } else if (row != NULL) {
            json_array_append_new(h->rows, row);
        }
    }
    h->last_users = sec->users;
    lc_hist_init(h->hist);
}

/* Sums the rows of second t of both cursors into one second. */
static void take_second(history_t *h, int64_t t, cursor_t *totals, cursor_t *seconds)
{
    second_t sec = {t, h->last_users, 0, 0, 0};
    if (cursor_t_of(totals) == t) {
        sec.users = (uint64_t)sqlite3_column_int64(totals->st, 1);
        cursor_next(totals);
    }
    for (; cursor_t_of(seconds) == t; cursor_next(seconds)) {
        sec.count += (uint64_t)sqlite3_column_int64(seconds->st, 1);
        sec.failures += (uint64_t)sqlite3_column_int64(seconds->st, 2);
        sec.bytes += (uint64_t)sqlite3_column_int64(seconds->st, 3);
        store_hist_add_column(h->hist, seconds->st, 4);
    }
    emit_second(h, &sec);
}

/* Merges the two t-ordered cursors (run-wide counters, endpoint rows) into
 * one entry per second, filling gaps between seconds with empty ones. prev
 * is the last second with stats before the cursors' (-1: none). */
static void history_walk(history_t *h, int64_t prev, cursor_t *totals, cursor_t *seconds)
{
    for (;;) {
        int64_t t = cursor_t_of(totals) < cursor_t_of(seconds) ? cursor_t_of(totals)
                                                               : cursor_t_of(seconds);
        if (t == INT64_MAX || (h->more && !h->q->full) || h->stopped != 0)
            break; /* the rest is the next page's (running totals need them all) */
        if (prev >= 0 && t - prev <= MAX_GAP_S)
            for (int64_t gap = prev + h->step; gap < t; gap += h->step) {
                second_t empty = {gap, h->last_users, 0, 0, 0};
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

/* Opens the two cursors over seconds lo < t <= hi. */
static void open_cursors(store_t *s, uint64_t run, const char *endpoint, int64_t lo, int64_t hi,
                         cursor_t *totals, cursor_t *seconds)
{
    totals->st = store_prepare(s, "SELECT t, users FROM run_second_totals"
                                  " WHERE run = ?1 AND t > ?2 AND t <= ?3 ORDER BY t");
    seconds->st = store_prepare(s, "SELECT t, count, failures, bytes, hist FROM run_seconds"
                                   " WHERE run = ?1 AND t > ?2 AND t <= ?3"
                                   " AND (?4 IS NULL OR endpoint = ?4)"
                                   " AND (?4 IS NOT NULL OR " STORE_REQUESTS_ONLY ")"
                                   " ORDER BY t, endpoint");
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
}

/* The method of one endpoint of a run ("" when unknown). */
static json_t *endpoint_method(store_t *s, uint64_t run, const char *endpoint)
{
    char method[32] = "";
    sqlite3_stmt *st = endpoint ? store_prepare(s, "SELECT method FROM run_endpoints"
                                                   " WHERE run = ? AND endpoint = ?")
                                : NULL;
    if (st != NULL) {
        sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
        sqlite3_bind_text(st, 2, endpoint, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW)
            store_copy_text(method, sizeof method, st, 0);
    }
    sqlite3_finalize(st);
    return json_string(method);
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

/* Walks seconds lo < t <= hi of the run into h->rows. */
static int history_rows(store_t *s, uint64_t run, history_t *h, int64_t lo, int64_t hi)
{
    h->hist = malloc(sizeof *h->hist);
    h->total = malloc(sizeof *h->total);
    int rv = h->hist && h->total ? 0 : LC_ENOMEM;
    if (rv == 0) {
        lc_hist_init(h->hist);
        lc_hist_init(h->total);
        cursor_t totals, seconds;
        open_cursors(s, run, h->q->endpoint, lo, hi, &totals, &seconds);
        rv = totals.st && seconds.st ? 0 : LC_EIO;
        if (rv == 0)
            history_walk(h, second_before(s, run, lo, &h->last_users), &totals, &seconds);
        sqlite3_finalize(totals.st);
        sqlite3_finalize(seconds.st);
    }
    free(h->hist);
    free(h->total);
    return rv;
}

/* Reads the run and where its walk goes: h's step and start, [*lo, *hi]. */
static int history_setup(store_t *s, uint64_t run, history_t *h, int64_t *lo, int64_t *hi)
{
    store_run_t r;
    if (store_run_get(s, run, &r) != 0)
        return LC_ENOTFOUND;
    store_retention_t kept;
    if (store_retention_get(s, run, &kept) != 0)
        kept.resolution_s = 1;
    h->step = kept.resolution_s ? kept.resolution_s : 1;
    h->start_s = (int64_t)((r.started_ms ? r.started_ms : r.created_ms) / 1000);
    /* Without running totals only seconds after `since` are read at all. */
    *lo = -1;
    if (!h->q->full && h->q->since > h->start_s - 1)
        *lo = h->q->since - h->start_s;
    *hi = run_over(r.state) ? INT64_MAX : newest_second(s, run) - 1;
    store_run_free(&r);
    return 0;
}

/* The document's fields besides "seconds". */
static json_t *history_head(store_t *s, uint64_t run, const store_history_query_t *q,
                            const history_t *h)
{
    return json_pack("{s:I,s:o,s:o,s:I,s:b}", "run", (json_int_t)run, "endpoint",
                     q->endpoint ? json_string(q->endpoint) : json_null(), "method",
                     endpoint_method(s, run, q->endpoint), "resolution_s", (json_int_t)h->step,
                     "more", h->more);
}

json_t *store_history_json(store_t *s, uint64_t run, const store_history_query_t *q,
                           uint64_t now_ms)
{
    (void)now_ms;
    history_t h = {.q = q, .rows = json_array()};
    int64_t lo, hi;
    if (h.rows == NULL || history_setup(s, run, &h, &lo, &hi) != 0 ||
        history_rows(s, run, &h, lo, hi) != 0) {
        json_decref(h.rows);
        return NULL;
    }
    json_t *doc = history_head(s, run, q, &h);
    if (doc == NULL || json_object_set_new(doc, "seconds", h.rows) != 0) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

int store_history_each(store_t *s, uint64_t run, const store_history_query_t *q,
                       uint64_t now_ms, store_history_row_fn row, void *arg)
{
    (void)now_ms;
    assert(row != NULL);
    history_t h = {.q = q, .sink = row, .sink_arg = arg};
    int64_t lo, hi;
    int rv = history_setup(s, run, &h, &lo, &hi);
    if (rv != 0)
        return rv;
    json_t *head = history_head(s, run, q, &h); /* "more" is meaningless without a limit */
    if (head == NULL)
        return LC_ENOMEM;
    h.head = head;
    rv = history_rows(s, run, &h, lo, hi);
    json_decref(head);
    return rv != 0 ? rv : h.stopped;
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

/* One row per endpoint into rows; their sums into *sum and total. */
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
        lc_hist_merge(total, h);
        sum->count += r.count;
        sum->failures += r.failures;
        sum->bytes += r.bytes;
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
