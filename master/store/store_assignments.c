/* store_assignments.c — the run_assignments table: each worker's share of an
 * active run (RunAssignment), so that a new leader knows which claims,
 * refusals and statistics a worker may send. */
#include <assert.h>

#include "lc_err.h"
#include "store_internal.h"

static const char put_sql[] = "INSERT OR REPLACE INTO run_assignments(run, worker, generation,"
                              " users) VALUES (?1, ?2, ?3, ?4)";
static const char drop_sql[] = "DELETE FROM run_assignments WHERE run = ?1 AND worker = ?2";
static const char get_sql[] = "SELECT generation, users FROM run_assignments"
                              " WHERE run = ?1 AND worker = ?2";

/* One worker's share of run at generation (users 0: none any more). */
static int put_share(store_t *s, uint64_t run, const char *worker, uint64_t generation,
                     uint32_t users)
{
    assert(worker != NULL);
    sqlite3_stmt *st = store_cached(s, users == 0 ? drop_sql : put_sql);
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    sqlite3_bind_text(st, 2, worker, -1, SQLITE_STATIC);
    if (users != 0) {
        sqlite3_bind_int64(st, 3, (sqlite3_int64)generation);
        sqlite3_bind_int64(st, 4, users);
    }
    return store_cached_step_done(s, st);
}

int store_apply_run_assignment(store_t *s, const Lc__RunAssignment *c)
{
    assert(c != NULL && c->worker != NULL);
    int rv = put_share(s, c->run, c->worker, c->generation, c->users);
    for (size_t i = 0; rv == 0 && i < c->n_more; i++)
        rv = put_share(s, c->run, c->more[i]->worker, c->generation, c->more[i]->users);
    return rv;
}

int store_forget_assignments(store_t *s, uint64_t run)
{
    sqlite3_stmt *st = store_prepare(s, "DELETE FROM run_assignments WHERE run = ?");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    return store_step_done(s, st);
}

int store_assignment_get(store_t *s, uint64_t run, const char *worker, uint64_t *generation,
                         uint32_t *users)
{
    /* Asked for every StatsBatch the leader admits: kept prepared. */
    sqlite3_stmt *st = store_cached(s, get_sql);
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    sqlite3_bind_text(st, 2, worker, -1, SQLITE_STATIC);
    int rv = LC_ENOTFOUND;
    if (sqlite3_step(st) == SQLITE_ROW) {
        *generation = (uint64_t)sqlite3_column_int64(st, 0);
        *users = (uint32_t)sqlite3_column_int64(st, 1);
        rv = 0;
    }
    store_cached_done(st);
    return rv;
}

int store_assignments_each(store_t *s, uint64_t run, bool (*each)(void *arg, const char *worker),
                           void *arg)
{
    assert(each != NULL);
    sqlite3_stmt *st = store_prepare(s, "SELECT worker FROM run_assignments WHERE run = ?"
                                        " ORDER BY worker");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (!each(arg, (const char *)sqlite3_column_text(st, 0)))
            break;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : LC_EIO;
}
