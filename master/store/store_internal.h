/* store_internal.h — what the store's source files share; not for other modules. */
#ifndef MASTER_STORE_INTERNAL_H
#define MASTER_STORE_INTERNAL_H

#include <sqlite3.h>
#include <stdbool.h>

#include "lc_hist.h"
#include "store.h"

/* Rows that count requests: a journey's iteration and group series (lc_scenario.h's
 * LC_SERIES_ITERATION, LC_SERIES_GROUP) are durations, not requests, and stay out of the
 * run's request totals. */
/* A run's request series in run_seconds: not the journeys' timers, not the run-wide row. */
#define STORE_REQUESTS_ONLY "method NOT IN ('ITERATION', 'GROUP', 'RUN')"
/* The run-wide row of each second in run_seconds (endpoint '', method 'RUN'): the sum of its
 * request series, written beside them by the FSM for runs listed in run_sums, so a
 * whole-run history reads one row per second, not one per endpoint. */
#define STORE_RUN_ROW_METHOD "RUN"

#define STORE_STR_(x) #x
#define STORE_STR(x) STORE_STR_(x) /* a number macro as SQL text */
#define STORE_NOTES_MAX 64   /* first error messages kept per run */
#define STORE_CHECKS_MAX 64  /* check names kept per run, "(other)" included */
#define STORE_CACHED_MAX 32 /* statements kept prepared (the stats path's) */

struct store_s {
    sqlite3 *db;
    struct {
        const char *sql; /* a string constant: compared by address */
        sqlite3_stmt *st;
    } cached[STORE_CACHED_MAX];
    char *path;     /* the database file; NULL: in memory */
    bool read_only; /* a reader's connection (store_open_reader) */
    bool pinned;    /* a read transaction store_seconds_open began, which close ends */
};

/* Every table, as CREATE TABLE IF NOT EXISTS statements. */
extern const char store_schema_sql[];

/* Runs SQL without results; logs and returns LC_EIO on failure. */
int store_exec(store_t *s, const char *sql);
/* Prepares a statement; logs and returns NULL on failure. */
sqlite3_stmt *store_prepare(store_t *s, const char *sql);
/* A statement kept prepared for sql, which must be a string constant (it
 * is looked up by address): for the statements every StatsBatch runs. Give
 * it back with store_cached_done (reset, bindings cleared), never finalize
 * it. NULL (logged) when it cannot be prepared. */
sqlite3_stmt *store_cached(store_t *s, const char *sql);
void store_cached_done(sqlite3_stmt *st);
/* store_step_done for a cached statement: steps it, then gives it back. */
int store_cached_step_done(store_t *s, sqlite3_stmt *st);

/* The integer a one-row query about run (bound to its only parameter)
 * returns, or none when it returns no row or NULL. */
int64_t store_run_int(store_t *s, const char *sql, uint64_t run, int64_t none);
/* Steps a write statement to completion and finalizes it (st may be NULL).
 * Returns 0, or LC_EIO after logging SQLite's message. */
int store_step_done(store_t *s, sqlite3_stmt *st);
/* Copies a text column into dst ("" for NULL). */
void store_copy_text(char *dst, size_t cap, sqlite3_stmt *st, int col);
/* Wall-clock ms as an ISO 8601 JSON string; null when unset (<= 0). */
json_t *store_time_json(int64_t ms);
/* Applies a RunSeconds command (inside the caller's transaction). */
int store_apply_run_seconds(store_t *s, const Lc__RunSeconds *c);
/* Applies CreateTenant, SetTenantWeight, PutToken or RevokeToken. */
int store_apply_access(store_t *s, const Lc__Command *cmd);
/* Merges run's seconds from <= t < to (run_seconds and run_second_totals) into points of
 * res seconds (store_retention.c; also on an archive file). Returns 0, LC_ENOMEM, LC_EIO. */
int store_compact_range(store_t *s, uint64_t run, uint32_t res, uint32_t from, uint32_t to);
/* The newest t in run's run_seconds (0 when none). */
uint32_t store_last_second(store_t *s, uint64_t run);
/* Adds an encoded histogram column to h; a NULL or bad blob adds nothing. */
void store_hist_add_column(lc_hist_t *h, sqlite3_stmt *st, int col);

/* store_stats_sum.c: one RunSeconds' new batches summed before they are
 * written. A row: its second (0 for a total) and an endpoint's figures, the
 * names pointing into the command, hist.data malloc'd. */
typedef struct store_stats_sum_s {
    uint32_t t;
    Lc__EndpointStats e;
} store_stats_sum_t;
/* The endpoints of the batches with keep[i] summed by (second, endpoint),
 * sorted by second then name. Returns 0 or LC_ENOMEM. */
int store_stats_sum_seconds(const Lc__RunSeconds *c, const bool *keep,
                            store_stats_sum_t **out, size_t *n_out);
/* store_stats_sum_seconds' request rows summed by second (the run-wide rows: name "",
 * method STORE_RUN_ROW_METHOD). */
int store_stats_sum_run_seconds(const store_stats_sum_t *seconds, size_t n,
                                store_stats_sum_t **out, size_t *n_out);
/* store_stats_sum_seconds' rows summed by endpoint (the run's totals). */
int store_stats_sum_totals(const store_stats_sum_t *seconds, size_t n, store_stats_sum_t **out,
                           size_t *n_out);
void store_stats_sums_free(store_stats_sum_t *rows, size_t n);
/* The error counts of the batches with keep[i] summed by (endpoint, kind), sorted by
 * endpoint then kind, the names pointing into the command; free *out with free().
 * Returns 0 or LC_ENOMEM. */
typedef struct store_error_sum_s {
    const char *endpoint, *kind;
    uint64_t count;
} store_error_sum_t;
int store_stats_sum_errors(const Lc__RunSeconds *c, const bool *keep, store_error_sum_t **out,
                           size_t *n_out);
/* The run-wide counters of the batches with keep[i] (users, dropped, tls_*, lost_*)
 * summed by second: a row per second in ascending order, its run and interval set, its
 * other fields unset; free *out with free(). Returns 0 or LC_ENOMEM. */
int store_stats_sum_second_totals(const Lc__RunSeconds *c, const bool *keep,
                                  Lc__StatsBatch **out, size_t *n_out);
/* Whether run's seconds have run-wide rows (it is in run_sums). */
bool store_run_has_sums(store_t *s, uint64_t run);

/* store_assignments.c: RunAssignment, and dropping a finished run's shares. */
int store_apply_run_assignment(store_t *s, const Lc__RunAssignment *c);
int store_forget_assignments(store_t *s, uint64_t run);
/* store_feeds.c: LeaseRows (inside the caller's transaction): LC_EINVAL out of bounds,
 * LC_ENOTFOUND for a run that does not exist or is over, LC_ESTATE for a seq not above the
 * worker's last; each changes nothing. */
int store_apply_lease_rows(store_t *s, const Lc__LeaseRows *c);
/* Drops a finished run's cursors and leases. */
int store_forget_feeds(store_t *s, uint64_t run);

/* store_validate.c: every text of cmd is bounded UTF-8, names without
 * control characters; store_apply refuses (LC_EINVAL) what is not. */
bool store_command_text_ok(const Lc__Command *cmd);

#endif
