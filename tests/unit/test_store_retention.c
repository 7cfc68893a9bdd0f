/* test_store_retention.c — RetainHistory (master/store/store_retention.c):
 * compaction keeps every total and the run's percentiles exact, acks are
 * dropped and later batches refused, seconds deleted with the summary kept,
 * and what store_retention_next finds due at each age. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lc_err.h"
#include "lc_hist.h"
#include "run_seconds_fixture.h"
#include "store_commands.h"
#include "store_internal.h"
#include "store_retention.h"

static store_t *finished_run(void)
{
    return run_with_seconds(test_store_open());
}

/* Totals of the seconds table (sums, point count, users/dropped sums) and
 * the p50/p99 of all its histograms merged. */
typedef struct seconds_sum_s {
    int64_t count, failures, bytes, points, dropped, max_users;
    uint64_t p50, p99, max;
} seconds_sum_t;

/* The sums of the run's request rows, or (run_rows) of its run-wide rows. */
static seconds_sum_t sum_rows(store_t *s, bool run_rows)
{
    seconds_sum_t out = {0};
    lc_hist_t *h = malloc(sizeof *h);
    lc_hist_init(h);
    sqlite3_stmt *st = store_prepare(
        s, "SELECT count, failures, bytes, hist FROM run_seconds WHERE run = 1"
           " AND (method = 'RUN') = ?");
    sqlite3_bind_int(st, 1, run_rows);
    while (sqlite3_step(st) == SQLITE_ROW) {
        out.count += sqlite3_column_int64(st, 0);
        out.failures += sqlite3_column_int64(st, 1);
        out.bytes += sqlite3_column_int64(st, 2);
        out.points++;
        store_hist_add_column(h, st, 3);
    }
    sqlite3_finalize(st);
    st = store_prepare(s, "SELECT SUM(dropped), MAX(users) FROM run_second_totals WHERE run = 1");
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    out.dropped = sqlite3_column_int64(st, 0);
    out.max_users = sqlite3_column_int64(st, 1);
    sqlite3_finalize(st);
    out.p50 = lc_hist_percentile(h, 50);
    out.p99 = lc_hist_percentile(h, 99);
    out.max = lc_hist_percentile(h, 100);
    free(h);
    return out;
}

/* The request rows' sums; the run-wide rows (one per point where endpoints a and b have two)
 * must hold exactly the same, before and after every compaction. */
static seconds_sum_t sum_seconds(store_t *s)
{
    seconds_sum_t req = sum_rows(s, false), run = sum_rows(s, true);
    assert_int_equal(run.points * 2, req.points);
    assert_int_equal(run.count, req.count);
    assert_int_equal(run.failures, req.failures);
    assert_int_equal(run.bytes, req.bytes);
    assert_int_equal(run.p50, req.p50);
    assert_int_equal(run.p99, req.p99);
    assert_int_equal(run.max, req.max);
    return req;
}

static void test_compaction_is_exact(void **state)
{
    store_t *s = finished_run();
    /* an active run's history is not touched */
    assert_int_equal(retain(s, 10, 0, 600, false, false), LC_ESTATE);
    finish(s);
    seconds_sum_t before = sum_seconds(s);
    assert_int_equal(before.points, 2 * SECONDS);
    assert_int_equal(retain(s, 7, 0, 600, false, false), LC_EINVAL);  /* not 10 or 60 */
    assert_int_equal(retain(s, 10, 5, 600, false, false), LC_EINVAL); /* unaligned */
    assert_int_equal(retain(s, 10, 0, 60, false, false), 0);          /* a first chunk */
    store_retention_t r;
    assert_int_equal(store_retention_get(s, RUN, &r), 0);
    assert_int_equal(r.resolution_s, 1);
    assert_int_equal(r.progress_res, 10);
    assert_int_equal(r.progress_t, 60);
    assert_int_equal(retain(s, 10, 60, 600, false, false), 0);
    seconds_sum_t ten = sum_seconds(s);
    assert_int_equal(store_retention_get(s, RUN, &r), 0);
    assert_int_equal(r.resolution_s, 10);
    /* points 0,10,...,120 for each endpoint: 13 each */
    assert_int_equal(ten.points, 2 * 13);
    assert_int_equal(ten.count, before.count);
    assert_int_equal(ten.failures, before.failures);
    assert_int_equal(ten.bytes, before.bytes);
    assert_int_equal(ten.dropped, before.dropped);
    assert_int_equal(ten.max_users, before.max_users);
    assert_int_equal(ten.p50, before.p50);
    assert_int_equal(ten.p99, before.p99);
    assert_int_equal(ten.max, before.max);
    /* then 1 min points; a repeated step changes nothing */
    assert_int_equal(retain(s, 60, 0, 600, false, false), 0);
    assert_int_equal(retain(s, 10, 0, 600, false, false), 0);
    seconds_sum_t minute = sum_seconds(s);
    assert_int_equal(minute.points, 2 * 3);
    assert_int_equal(minute.count, before.count);
    assert_int_equal(minute.p99, before.p99);
    store_close(s);
}

static void test_acks_dropped_then_batches_change_nothing(void **state)
{
    store_t *s = finished_run();
    finish(s);
    assert_true(store_batch_applied(s, "w1", RUN, 2));
    assert_int_equal(retain(s, 0, 0, 0, true, false), 0);
    assert_false(store_batch_applied(s, "w1", RUN, 2));
    seconds_sum_t before = sum_seconds(s);
    assert_int_equal(apply_second(s, 2, 1, "a"), 0); /* a replay: its marker is gone */
    seconds_sum_t after = sum_seconds(s);
    assert_int_equal(after.count, before.count);
    store_close(s);
}

static void test_delete_keeps_the_summary(void **state)
{
    store_t *s = finished_run();
    finish(s);
    assert_int_equal(retain(s, 0, 0, 0, false, true), 0);
    assert_int_equal(sum_seconds(s).points, 0);
    sqlite3_stmt *st = store_prepare(s, "SELECT SUM(count) FROM run_endpoints WHERE run = 1");
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_true(sqlite3_column_int64(st, 0) > 0);
    sqlite3_finalize(st);
    store_run_t row;
    assert_int_equal(store_run_get(s, RUN, &row), 0);
    assert_string_equal(row.state, "finished");
    store_run_free(&row);
    store_close(s);
}

/* Drives store_retention_next as the leader would, applying each step. */
static int run_due(store_t *s, const store_retention_policy_t *p, uint64_t now)
{
    Lc__RetainHistory step;
    int steps = 0;
    while (store_retention_next(s, p, now, &step) == 0) {
        Lc__Command cmd = LC__COMMAND__INIT;
        cmd.cmd_case = LC__COMMAND__CMD_RETAIN_HISTORY;
        cmd.retain_history = &step;
        assert_int_equal(store_apply(s, &cmd), 0);
        assert_true(++steps < 100);
    }
    return steps;
}

static void test_what_is_due(void **state)
{
    store_t *s = finished_run();
    store_retention_policy_t p = {.full_ms = 30 * DAY, .ten_s_ms = 90 * DAY, .max_ms = 365 * DAY,
                                  .acks_ms = 3600000};
    Lc__RetainHistory step;
    assert_int_equal(store_retention_next(s, &p, FINISHED_MS + 400 * DAY, &step), LC_ENOTFOUND);
    finish(s);
    assert_int_equal(store_retention_next(s, &p, FINISHED_MS + 1000, &step), LC_ENOTFOUND);
    assert_int_equal(run_due(s, &p, FINISHED_MS + 2 * 3600000), 1); /* acks */
    store_retention_t r;
    assert_int_equal(store_retention_get(s, RUN, &r), 0);
    assert_true(r.acks_dropped);
    assert_int_equal(r.resolution_s, 1);
    assert_int_equal(run_due(s, &p, FINISHED_MS + 31 * DAY), 1); /* one 600 s chunk */
    assert_int_equal(store_retention_get(s, RUN, &r), 0);
    assert_int_equal(r.resolution_s, 10);
    assert_int_equal(run_due(s, &p, FINISHED_MS + 91 * DAY), 1);
    assert_int_equal(store_retention_get(s, RUN, &r), 0);
    assert_int_equal(r.resolution_s, 60);
    assert_int_equal(run_due(s, &p, FINISHED_MS + 366 * DAY), 1);
    assert_int_equal(sum_seconds(s).points, 0);
    assert_int_equal(run_due(s, &p, FINISHED_MS + 999 * DAY), 0); /* settled */
    store_close(s);
}

/* 0 means never: no acks dropped, per-second points kept, nothing due. */
static void test_zero_means_never(void **state)
{
    store_t *s = finished_run();
    finish(s);
    store_retention_policy_t p = {.full_ms = 0, .ten_s_ms = 90 * DAY, .max_ms = 0, .acks_ms = 0};
    Lc__RetainHistory step;
    assert_int_equal(store_retention_next(s, &p, FINISHED_MS + 999 * DAY, &step), LC_ENOTFOUND);
    assert_true(store_batch_applied(s, "w1", RUN, 2));
    store_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compaction_is_exact),
        cmocka_unit_test(test_acks_dropped_then_batches_change_nothing),
        cmocka_unit_test(test_delete_keeps_the_summary),
        cmocka_unit_test(test_what_is_due),
        cmocka_unit_test(test_zero_means_never),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
