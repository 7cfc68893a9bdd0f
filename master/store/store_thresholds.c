/* store_thresholds.c — reads for threshold evaluation, and the results kept with a run. */
#include "store_thresholds.h"

#include "lc_err.h"
#include "store_internal.h"

int store_threshold_totals(store_t *s, uint64_t run, const char *endpoint, const char *method,
                           uint64_t *count, uint64_t *failures, lc_hist_t *h)
{
    *count = *failures = 0;
    sqlite3_stmt *st = store_prepare(s, "SELECT count, failures, hist FROM run_endpoints"
                                        " WHERE run = ?1 AND (?2 IS NULL OR endpoint = ?2)"
                                        " AND (?2 IS NOT NULL OR (?3 IS NULL AND "
                                        STORE_REQUESTS_ONLY ") OR method = ?3)");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    if (endpoint != NULL)
        sqlite3_bind_text(st, 2, endpoint, -1, SQLITE_STATIC);
    if (method != NULL)
        sqlite3_bind_text(st, 3, method, -1, SQLITE_STATIC);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        *count += (uint64_t)sqlite3_column_int64(st, 0);
        *failures += (uint64_t)sqlite3_column_int64(st, 1);
        store_hist_add_column(h, st, 2);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : LC_EIO;
}

int store_check_totals(store_t *s, uint64_t run, const char *name, uint64_t *passed,
                       uint64_t *failed)
{
    *passed = *failed = 0;
    sqlite3_stmt *st = store_prepare(s, "SELECT TOTAL(passed), TOTAL(failed) FROM run_checks"
                                        " WHERE run = ?1 AND (?2 IS NULL OR name = ?2)");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    if (name != NULL)
        sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *passed = (uint64_t)sqlite3_column_double(st, 0);
        *failed = (uint64_t)sqlite3_column_double(st, 1);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : LC_EIO;
}

int store_apply_run_summary(store_t *s, const Lc__RunFinished *c)
{
    if (c->summary_json == NULL || c->summary_json[0] == '\0')
        return 0;
    sqlite3_stmt *st = store_prepare(
        s, "INSERT OR REPLACE INTO run_summaries(run, summary_json) VALUES (?, ?)");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)c->run);
    sqlite3_bind_text(st, 2, c->summary_json, -1, SQLITE_STATIC);
    return store_step_done(s, st);
}

json_t *store_run_thresholds_json(store_t *s, uint64_t run)
{
    json_t *results = NULL;
    sqlite3_stmt *st = store_prepare(s, "SELECT summary_json FROM run_summaries WHERE run = ?");
    if (st != NULL) {
        sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
        const char *text =
            sqlite3_step(st) == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
        json_t *summary = text != NULL ? json_loads(text, 0, NULL) : NULL;
        results = json_incref(json_object_get(summary, "thresholds"));
        json_decref(summary);
        sqlite3_finalize(st);
    }
    if (!json_is_array(results)) {
        json_decref(results);
        results = json_array();
    }
    return results;
}
