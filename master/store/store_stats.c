/* store_stats.c — applying RunSeconds: per-second and total counters,
 * merged histograms and errors, each worker batch applied at most once. */
#include <stdlib.h>

#include "lc_err.h"
#include "lc_log.h"
#include "store_internal.h"
#include "store_retention.h"

void store_hist_add_column(lc_hist_t *h, sqlite3_stmt *st, int col)
{
    const void *blob = sqlite3_column_blob(st, col);
    int len = sqlite3_column_bytes(st, col);
    if (blob != NULL && len > 0 && lc_hist_decode_add(h, blob, (size_t)len) != 0)
        lc_warn("store", "msg=\"ignoring corrupt histogram\" bytes=%d", len);
}

/* The merge of a stored and a batch histogram the slow way, which also
 * takes what is still good when one of them is corrupt (it is logged). */
static int dense_merge(const void *stored, size_t stored_len, const ProtobufCBinaryData *add,
                       uint8_t **out, size_t *out_len)
{
    lc_hist_t *h = malloc(sizeof *h);
    if (h == NULL)
        return LC_ENOMEM;
    lc_hist_init(h);
    if (stored_len > 0 && lc_hist_decode_add(h, stored, stored_len) != 0)
        lc_warn("store", "msg=\"ignoring corrupt histogram\" bytes=%zu", stored_len);
    if (add->len > 0 && lc_hist_decode_add(h, add->data, add->len) != 0)
        lc_warn("store", "msg=\"batch histogram is corrupt; counts kept, latencies dropped\"");
    int rv = lc_hist_encode(h, out, out_len);
    free(h);
    return rv;
}

/* Reads the stored histogram of one row (select returns it as column 0),
 * adds `add` to it and returns the new encoding: merged as encodings, in
 * time linear in their size, unless one is corrupt. */
static int merged_hist(sqlite3_stmt *select, const ProtobufCBinaryData *add, uint8_t **out,
                       size_t *out_len)
{
    const void *stored = NULL;
    size_t stored_len = 0;
    if (select != NULL && sqlite3_step(select) == SQLITE_ROW &&
        (stored = sqlite3_column_blob(select, 0)) != NULL)
        stored_len = (size_t)sqlite3_column_bytes(select, 0);
    int rv = lc_hist_merge_encoded(stored, stored_len, add->data, add->len, out, out_len);
    if (rv == LC_EPROTO)
        rv = dense_merge(stored, stored_len, add, out, out_len);
    store_cached_done(select); /* stored points into the row until here */
    return rv;
}

/* Binds a named parameter if the statement has it. */
static void bind_int(sqlite3_stmt *st, const char *name, uint64_t v)
{
    int i = sqlite3_bind_parameter_index(st, name);
    if (i > 0)
        sqlite3_bind_int64(st, i, (sqlite3_int64)v);
}

static void bind_text(sqlite3_stmt *st, const char *name, const char *v)
{
    int i = sqlite3_bind_parameter_index(st, name);
    if (i > 0)
        sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
}

/* Adds one endpoint's counters and histogram to a row: select_sql reads the
 * row's histogram, upsert_sql writes the sums. Both use the named parameters
 * :run :t :endpoint (and the upsert :method :count :failures :bytes :hist). */
static int add_counts(store_t *s, const char *select_sql, const char *upsert_sql, uint64_t run,
                      uint32_t t, const Lc__EndpointStats *e)
{
    sqlite3_stmt *sel = store_cached(s, select_sql);
    if (sel == NULL)
        return LC_EIO;
    bind_int(sel, ":run", run);
    bind_int(sel, ":t", t);
    bind_text(sel, ":endpoint", e->name);
    uint8_t *hist;
    size_t hist_len;
    int rv = merged_hist(sel, &e->hist, &hist, &hist_len);
    if (rv != 0)
        return rv;
    sqlite3_stmt *st = store_cached(s, upsert_sql);
    if (st != NULL) {
        bind_int(st, ":run", run);
        bind_int(st, ":t", t);
        bind_text(st, ":endpoint", e->name);
        bind_text(st, ":method", e->method);
        bind_int(st, ":count", e->count);
        bind_int(st, ":failures", e->failures);
        bind_int(st, ":bytes", e->bytes);
        sqlite3_bind_blob(st, sqlite3_bind_parameter_index(st, ":hist"), hist, (int)hist_len,
                          SQLITE_STATIC);
    }
    rv = store_cached_step_done(s, st);
    free(hist);
    return rv;
}

static int add_second(store_t *s, uint64_t run, uint32_t t, const Lc__EndpointStats *e)
{
    return add_counts(
        s, "SELECT hist FROM run_seconds WHERE run = :run AND t = :t AND endpoint = :endpoint",
        "INSERT INTO run_seconds(run, t, endpoint, method, count, failures, bytes, hist)"
        " VALUES (:run, :t, :endpoint, :method, :count, :failures, :bytes, :hist)"
        " ON CONFLICT(run, t, endpoint) DO UPDATE SET count = count + :count,"
        " failures = failures + :failures, bytes = bytes + :bytes, hist = :hist",
        run, t, e);
}

static int add_total(store_t *s, uint64_t run, const Lc__EndpointStats *e)
{
    return add_counts(
        s, "SELECT hist FROM run_endpoints WHERE run = :run AND endpoint = :endpoint",
        "INSERT INTO run_endpoints(run, endpoint, method, count, failures, bytes, hist)"
        " VALUES (:run, :endpoint, :method, :count, :failures, :bytes, :hist)"
        " ON CONFLICT(run, endpoint) DO UPDATE SET count = count + :count,"
        " failures = failures + :failures, bytes = bytes + :bytes, hist = :hist",
        run, 0, e);
}

/* The first message of (run, endpoint, kind) is kept, for at most STORE_NOTES_MAX pairs. */
static int add_error_note(store_t *s, uint64_t run, const Lc__ErrorCount *e)
{
    sqlite3_stmt *st = store_cached(
        s, "INSERT OR IGNORE INTO run_error_notes(run, endpoint, kind, message)"
           " SELECT ?1, ?2, ?3, ?4 WHERE (SELECT COUNT(*) FROM run_error_notes WHERE run = ?1)"
           " < " STORE_STR(STORE_NOTES_MAX));
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    sqlite3_bind_text(st, 2, e->endpoint, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, e->kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, e->message, -1, SQLITE_STATIC);
    return store_cached_step_done(s, st);
}

/* A script check's counts; past STORE_CHECKS_MAX - 1 names a run's new names count as
 * "(other)". */
static int add_check(store_t *s, uint64_t run, const Lc__CheckCount *c)
{
    sqlite3_stmt *st = store_cached(
        s, "INSERT INTO run_checks(run, name, passed, failed) VALUES (?1,"
           " CASE WHEN EXISTS (SELECT 1 FROM run_checks WHERE run = ?1 AND name = ?2)"
           " OR (SELECT COUNT(*) FROM run_checks WHERE run = ?1) < "
           STORE_STR(STORE_CHECKS_MAX) " - 1 THEN ?2 ELSE '(other)' END, ?3, ?4)"
           " ON CONFLICT(run, name) DO UPDATE SET passed = passed + ?3, failed = failed + ?4");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    sqlite3_bind_text(st, 2, c->name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)c->passed);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)c->failed);
    return store_cached_step_done(s, st);
}

/* One (endpoint, kind)'s errors of a command, summed by store_stats_sum_errors. */
static int add_error(store_t *s, uint64_t run, const store_error_sum_t *e)
{
    sqlite3_stmt *st = store_cached(
        s, "INSERT INTO run_errors(run, endpoint, kind, count) VALUES (?1, ?2, ?3, ?4)"
           " ON CONFLICT(run, endpoint, kind) DO UPDATE SET count = count + ?4");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    sqlite3_bind_text(st, 2, e->endpoint, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, e->kind, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)e->count);
    return store_cached_step_done(s, st);
}

/* The error counts of the kept batches, each (endpoint, kind) row written once a command. */
static int apply_error_sums(store_t *s, const Lc__RunSeconds *c, const bool *keep)
{
    store_error_sum_t *sums = NULL;
    size_t n = 0;
    int rv = store_stats_sum_errors(c, keep, &sums, &n);
    for (size_t i = 0; rv == 0 && i < n; i++)
        rv = add_error(s, c->run, &sums[i]);
    free(sums);
    return rv;
}

/* Run-wide counters of one second (users, dropped starts, TLS, losses): a row that
 * store_stats_sum_second_totals summed from a command's batches. */
static int add_second_totals(store_t *s, const Lc__StatsBatch *sum)
{
    sqlite3_stmt *st = store_cached(
        s, "INSERT INTO run_second_totals(run, t, users, dropped, tls_handshakes, tls_resumed,"
           " lost_batches, lost_requests) VALUES (:run, :t, :users, :dropped, :hs, :resumed,"
           " :lost_b, :lost_r) ON CONFLICT(run, t) DO UPDATE SET"
           " users = users + :users, dropped = dropped + :dropped,"
           " tls_handshakes = tls_handshakes + :hs, tls_resumed = tls_resumed + :resumed,"
           " lost_batches = lost_batches + :lost_b, lost_requests = lost_requests + :lost_r");
    if (st == NULL)
        return LC_EIO;
    bind_int(st, ":run", sum->run);
    bind_int(st, ":t", sum->interval);
    bind_int(st, ":users", sum->users);
    bind_int(st, ":dropped", sum->dropped);
    bind_int(st, ":hs", sum->tls_handshakes);
    bind_int(st, ":resumed", sum->tls_resumed);
    bind_int(st, ":lost_b", sum->lost_batches);
    bind_int(st, ":lost_r", sum->lost_requests);
    return store_cached_step_done(s, st);
}

static int apply_second_totals(store_t *s, const Lc__RunSeconds *c, const bool *keep)
{
    Lc__StatsBatch *sums = NULL;
    size_t n = 0;
    int rv = store_stats_sum_second_totals(c, keep, &sums, &n);
    for (size_t i = 0; rv == 0 && i < n; i++)
        rv = add_second_totals(s, &sums[i]);
    free(sums);
    return rv;
}

/* The (worker, run, seq) marker that makes a replay of the batch a no-op; *fresh says
 * whether it is new, i.e. the batch was not applied before (in an earlier command, or
 * earlier in this one). One statement both asks and records. */
static int mark_applied(store_t *s, const Lc__StatsBatch *b, bool *fresh)
{
    sqlite3_stmt *st =
        store_cached(s, "INSERT OR IGNORE INTO acks(worker, run, seq) VALUES (?1, ?2, ?3)");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_text(st, 1, b->worker_id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)b->run);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)b->seq);
    if (store_cached_step_done(s, st) != 0)
        return LC_EIO;
    *fresh = sqlite3_changes(s->db) > 0;
    return 0;
}

/* A new batch's own rows: its first error messages (in the command's order, which
 * decides the notes a run keeps) and its checks. Its counters are summed with the
 * command's other batches (apply_endpoint_sums, apply_error_sums, apply_second_totals). */
static int apply_batch(store_t *s, const Lc__StatsBatch *b)
{
    int rv = 0;
    for (size_t i = 0; rv == 0 && i < b->n_errors; i++) {
        const Lc__ErrorCount *e = b->errors[i];
        if (e->message != NULL && e->message[0] != '\0')
            rv = add_error_note(s, b->run, e);
    }
    for (size_t i = 0; rv == 0 && i < b->n_checks; i++)
        rv = add_check(s, b->run, b->checks[i]);
    return rv;
}

/* The endpoint figures of the kept batches, each (second, endpoint) row and
 * each endpoint's total written once with the sum of what they bring. */
static int apply_endpoint_sums(store_t *s, const Lc__RunSeconds *c, const bool *keep)
{
    store_stats_sum_t *seconds = NULL, *totals = NULL, *run_rows = NULL;
    size_t n_seconds = 0, n_totals = 0, n_run_rows = 0;
    int rv = store_stats_sum_seconds(c, keep, &seconds, &n_seconds);
    if (rv == 0)
        rv = store_stats_sum_totals(seconds, n_seconds, &totals, &n_totals);
    if (rv == 0 && store_run_has_sums(s, c->run))
        rv = store_stats_sum_run_seconds(seconds, n_seconds, &run_rows, &n_run_rows);
    for (size_t i = 0; rv == 0 && i < n_seconds; i++)
        rv = add_second(s, c->run, seconds[i].t, &seconds[i].e);
    for (size_t i = 0; rv == 0 && i < n_run_rows; i++)
        rv = add_second(s, c->run, run_rows[i].t, &run_rows[i].e);
    for (size_t i = 0; rv == 0 && i < n_totals; i++)
        rv = add_total(s, c->run, &totals[i].e);
    store_stats_sums_free(seconds, n_seconds);
    store_stats_sums_free(totals, n_totals);
    store_stats_sums_free(run_rows, n_run_rows);
    return rv;
}

bool store_run_has_sums(store_t *s, uint64_t run)
{
    sqlite3_stmt *st = store_cached(s, "SELECT 1 FROM run_sums WHERE run = ?");
    if (st == NULL)
        return false;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    bool found = sqlite3_step(st) == SQLITE_ROW;
    store_cached_done(st);
    return found;
}

int store_batch_applied(store_t *s, const char *worker, uint64_t run, uint64_t seq)
{
    sqlite3_stmt *st = store_cached(s, "SELECT 1 FROM acks WHERE worker = ? AND run = ? AND seq = ?");
    if (st == NULL)
        return 0;
    sqlite3_bind_text(st, 1, worker, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)run);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)seq);
    int found = sqlite3_step(st) == SQLITE_ROW;
    store_cached_done(st);
    return found;
}

int store_apply_run_seconds(store_t *s, const Lc__RunSeconds *c)
{
    sqlite3_stmt *st = store_cached(s, "SELECT 1 FROM runs WHERE id = ?");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)c->run);
    int exists = sqlite3_step(st) == SQLITE_ROW;
    store_cached_done(st);
    if (!exists)
        return LC_ENOTFOUND;
    /* Without its acks a replay could not be told from new counts: once they
     * are dropped (RetainHistory, long after the run ended) nothing is added. */
    store_retention_t r;
    if (store_retention_get(s, c->run, &r) != 0)
        return LC_EIO;
    if (r.acks_dropped)
        return 0;
    bool *keep = calloc(c->n_batches > 0 ? c->n_batches : 1, sizeof *keep);
    if (keep == NULL)
        return LC_ENOMEM;
    int rv = 0;
    for (size_t i = 0; rv == 0 && i < c->n_batches; i++) {
        const Lc__StatsBatch *b = c->batches[i];
        /* A replayed batch (after a reconnect or failover, or twice in this
         * command: its ack is in by then) is skipped whole. */
        bool fresh = false;
        if (b->run != c->run || (rv = mark_applied(s, b, &fresh)) != 0 || !fresh)
            continue;
        rv = apply_batch(s, b);
        keep[i] = rv == 0;
    }
    if (rv == 0)
        rv = apply_second_totals(s, c, keep);
    if (rv == 0)
        rv = apply_endpoint_sums(s, c, keep);
    if (rv == 0)
        rv = apply_error_sums(s, c, keep);
    free(keep);
    return rv;
}
