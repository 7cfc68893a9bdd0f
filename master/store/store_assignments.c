/* store_assignments.c — the run_assignments table: each worker's share of an
 * active run (RunAssignment), so that a new leader knows which claims,
 * refusals and statistics a worker may send. */
#include <assert.h>

#include "lc_err.h"
#include "store_internal.h"

int store_apply_run_assignment(store_t *s, const Lc__RunAssignment *c)
{
    assert(c != NULL && c->worker != NULL);
    sqlite3_stmt *st = store_prepare(
        s, c->users == 0 ? "DELETE FROM run_assignments WHERE run = ?1 AND worker = ?2"
                         : "INSERT OR REPLACE INTO run_assignments(run, worker, generation, users)"
                           " VALUES (?1, ?2, ?3, ?4)");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)c->run);
    sqlite3_bind_text(st, 2, c->worker, -1, SQLITE_STATIC);
    if (c->users != 0) {
        sqlite3_bind_int64(st, 3, (sqlite3_int64)c->generation);
        sqlite3_bind_int64(st, 4, c->users);
    }
    return store_step_done(s, st);
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
    sqlite3_stmt *st = store_prepare(
        s, "SELECT generation, users FROM run_assignments WHERE run = ? AND worker = ?");
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
    sqlite3_finalize(st);
    return rv;
}
