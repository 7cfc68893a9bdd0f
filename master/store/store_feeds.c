/* store_feeds.c — sequential feeders' rows handed out by LeaseRows: each feeder's cursor and
 * each worker's latest lease, so no two workers (or two starts of one) ever get one row. */
#include <assert.h>

#include "lc_err.h"
#include "lc_journey.h"
#include "store_internal.h"

_Static_assert(STORE_LEASE_FEEDERS_MAX == LC_JOURNEY_FEEDERS_MAX,
               "a lease may name any feeder a scenario can have");

static const char lease_get_sql[] = "SELECT seq, start, count, exhausted FROM feed_leases"
                                    " WHERE run = ?1 AND feeder = ?2 AND worker = ?3";
static const char cursor_get_sql[] = "SELECT next, rows FROM feed_cursors"
                                     " WHERE run = ?1 AND feeder = ?2";

int store_lease_get(store_t *s, uint64_t run, uint32_t feeder, const char *worker,
                    store_lease_t *out)
{
    assert(s != NULL && worker != NULL && out != NULL);
    sqlite3_stmt *st = store_cached(s, lease_get_sql);
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    sqlite3_bind_int64(st, 2, feeder);
    sqlite3_bind_text(st, 3, worker, -1, SQLITE_STATIC);
    int rv = LC_ENOTFOUND;
    if (sqlite3_step(st) == SQLITE_ROW) {
        out->seq = (uint64_t)sqlite3_column_int64(st, 0);
        out->start = (uint64_t)sqlite3_column_int64(st, 1);
        out->count = (uint32_t)sqlite3_column_int64(st, 2);
        out->exhausted = sqlite3_column_int(st, 3) != 0;
        rv = 0;
    }
    store_cached_done(st);
    return rv;
}

int store_feed_cursor(store_t *s, uint64_t run, uint32_t feeder, uint64_t *next, uint32_t *rows)
{
    assert(s != NULL && next != NULL && rows != NULL);
    sqlite3_stmt *st = store_cached(s, cursor_get_sql);
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    sqlite3_bind_int64(st, 2, feeder);
    int rv = LC_ENOTFOUND;
    if (sqlite3_step(st) == SQLITE_ROW) {
        *next = (uint64_t)sqlite3_column_int64(st, 0);
        *rows = (uint32_t)sqlite3_column_int64(st, 1);
        rv = 0;
    }
    store_cached_done(st);
    return rv;
}

/* A lease may be asked only of a run that exists and is not over (pending included: a
 * worker may ask as soon as its Assign came, before RunState running is applied). */
static bool run_takes_leases(store_t *s, uint64_t run)
{
    int64_t over = store_run_int(s, "SELECT state IN ('finished', 'failed', 'aborted')"
                                    " FROM runs WHERE id = ?", run, -1);
    return over == 0;
}

/* The command's bounds, checked alike on every master. */
static bool lease_ok(const Lc__LeaseRows *c)
{
    return c->worker != NULL && c->worker[0] != '\0' && c->feeder < STORE_LEASE_FEEDERS_MAX &&
           c->count >= 1 && c->count <= STORE_LEASE_ROWS_MAX && c->rows >= 1;
}

/* The feeder's cursor, made at 0 by its first lease (rows as that lease said). */
static int cursor_at(store_t *s, const Lc__LeaseRows *c, uint64_t *next, uint32_t *rows)
{
    sqlite3_stmt *st = store_prepare(s, "INSERT OR IGNORE INTO feed_cursors(run, feeder, next,"
                                        " rows) VALUES (?, ?, 0, ?)");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)c->run);
    sqlite3_bind_int64(st, 2, c->feeder);
    sqlite3_bind_int64(st, 3, c->rows);
    int rv = store_step_done(s, st);
    return rv != 0 ? rv : store_feed_cursor(s, c->run, c->feeder, next, rows);
}

static int cursor_put(store_t *s, const Lc__LeaseRows *c, uint64_t next)
{
    sqlite3_stmt *st = store_prepare(s, "UPDATE feed_cursors SET next = ? WHERE run = ?"
                                        " AND feeder = ?");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)next);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)c->run);
    sqlite3_bind_int64(st, 3, c->feeder);
    return store_step_done(s, st);
}

static int lease_put(store_t *s, const Lc__LeaseRows *c, const store_lease_t *l)
{
    sqlite3_stmt *st = store_prepare(s, "INSERT OR REPLACE INTO feed_leases(run, feeder, worker,"
                                        " seq, start, count, exhausted)"
                                        " VALUES (?, ?, ?, ?, ?, ?, ?)");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)c->run);
    sqlite3_bind_int64(st, 2, c->feeder);
    sqlite3_bind_text(st, 3, c->worker, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)l->seq);
    sqlite3_bind_int64(st, 5, (sqlite3_int64)l->start);
    sqlite3_bind_int64(st, 6, l->count);
    sqlite3_bind_int(st, 7, l->exhausted ? 1 : 0);
    return store_step_done(s, st);
}

int store_apply_lease_rows(store_t *s, const Lc__LeaseRows *c)
{
    assert(s != NULL && c != NULL);
    if (!lease_ok(c))
        return LC_EINVAL;
    if (!run_takes_leases(s, c->run))
        return LC_ENOTFOUND;
    store_lease_t last;
    int rv = store_lease_get(s, c->run, c->feeder, c->worker, &last);
    if (rv == 0 && last.seq >= c->seq)
        return LC_ESTATE; /* a replay, or older than the lease it holds: no new rows */
    if (rv != 0 && rv != LC_ENOTFOUND)
        return rv;
    uint64_t next;
    uint32_t rows;
    if ((rv = cursor_at(s, c, &next, &rows)) != 0)
        return rv;
    /* wrap: the order goes on past the last row (row = n % rows), so it never runs out. */
    uint64_t left = c->wrap ? UINT32_MAX : (next < rows ? rows - next : 0);
    store_lease_t l = {.seq = c->seq, .start = next,
                       .count = (uint32_t)(c->count < left ? c->count : left)};
    l.exhausted = !c->wrap && next + l.count >= rows;
    rv = cursor_put(s, c, next + l.count);
    return rv != 0 ? rv : lease_put(s, c, &l);
}

int store_forget_feeds(store_t *s, uint64_t run)
{
    sqlite3_stmt *st = store_prepare(s, "DELETE FROM feed_leases WHERE run = ?");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    int rv = store_step_done(s, st);
    st = rv == 0 ? store_prepare(s, "DELETE FROM feed_cursors WHERE run = ?") : NULL;
    if (rv != 0 || st == NULL)
        return rv != 0 ? rv : LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    return store_step_done(s, st);
}
