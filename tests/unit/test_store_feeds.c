/* test_store_feeds.c — LeaseRows in the store (master/store/store_feeds.c): leases are
 * disjoint and follow the cursor, run out at the last row (or wrap), refuse replays and bad
 * commands without a change, and go on from the cursor after a snapshot and restore. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "lc_err.h"
#include "store.h"
#include "store_commands.h"

#define RUN 7

static const char scenario[] = "{\"name\":\"f\"}"; /* the store keeps it as text only */

static int lease(store_t *s, const char *worker, uint64_t seq, uint32_t count, uint32_t rows,
                 bool wrap)
{
    Lc__LeaseRows lr = LC__LEASE_ROWS__INIT;
    lr.run = RUN;
    lr.feeder = 1;
    lr.worker = (char *)worker;
    lr.seq = seq;
    lr.count = count;
    lr.rows = rows;
    lr.wrap = wrap;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_LEASE_ROWS;
    cmd.lease_rows = &lr;
    return store_apply(s, &cmd);
}

static store_lease_t got(store_t *s, const char *worker)
{
    store_lease_t l;
    assert_int_equal(store_lease_get(s, RUN, 1, worker, &l), 0);
    return l;
}

static uint64_t cursor(store_t *s)
{
    uint64_t next = 0;
    uint32_t rows = 0;
    assert_int_equal(store_feed_cursor(s, RUN, 1, &next, &rows), 0);
    return next;
}

static store_t *running_store(void)
{
    store_t *s = test_store_open();
    assert_int_equal(test_store_create_run(s, RUN, "r", scenario, 10, 1000), 0);
    assert_int_equal(test_store_set_state(s, RUN, "running", 2000, ""), 0);
    return s;
}

/* Workers asking in turn get adjacent, disjoint ranges: every row handed out once. */
static void test_leases_are_disjoint_and_monotonic(void **state)
{
    (void)state;
    store_t *s = running_store();
    const char *workers[] = {"wa", "wb", "wc"};
    uint8_t seen[1000] = {0};
    uint64_t expect = 0;
    for (uint64_t i = 0; i < 30; i++) {
        const char *w = workers[i % 3];
        assert_int_equal(lease(s, w, 100 + i, 7 + (uint32_t)(i % 5), 1000, false), 0);
        store_lease_t l = got(s, w);
        assert_int_equal(l.seq, 100 + i);
        assert_int_equal(l.start, expect); /* from the cursor, never back */
        assert_int_equal(l.count, 7 + i % 5);
        for (uint64_t t = l.start; t < l.start + l.count; t++)
            assert_int_equal(seen[t]++, 0);
        expect += l.count;
        assert_int_equal(cursor(s), expect);
        assert_false(l.exhausted);
    }
    store_close(s);
}

/* The last lease is cut at the last row and says so; later ones are empty. */
static void test_exhaustion(void **state)
{
    (void)state;
    store_t *s = running_store();
    assert_int_equal(lease(s, "wa", 1, 4, 10, false), 0);
    assert_int_equal(lease(s, "wb", 1, 4, 10, false), 0);
    assert_int_equal(lease(s, "wa", 2, 4, 10, false), 0);
    store_lease_t l = got(s, "wa");
    assert_int_equal(l.start, 8);
    assert_int_equal(l.count, 2);
    assert_true(l.exhausted);
    assert_int_equal(lease(s, "wb", 2, 4, 10, false), 0);
    l = got(s, "wb");
    assert_int_equal(l.count, 0);
    assert_true(l.exhausted);
    assert_int_equal(cursor(s), 10);
    store_close(s);
}

/* on_exhausted wrap: the order goes on past the last row; no lease says exhausted. */
static void test_wrap_goes_on(void **state)
{
    (void)state;
    store_t *s = running_store();
    for (uint64_t i = 1; i <= 4; i++) {
        assert_int_equal(lease(s, "wa", i, 4, 5, true), 0);
        store_lease_t l = got(s, "wa");
        assert_int_equal(l.start, (i - 1) * 4);
        assert_int_equal(l.count, 4);
        assert_false(l.exhausted);
    }
    store_close(s);
}

/* A replayed or older seq, a run that is unknown or over, and commands out of bounds change
 * nothing: the cursor stays. */
static void test_refusals_change_nothing(void **state)
{
    (void)state;
    store_t *s = running_store();
    assert_int_equal(lease(s, "wa", 5, 10, 100, false), 0);
    assert_int_equal(lease(s, "wa", 5, 10, 100, false), LC_ESTATE); /* replay */
    assert_int_equal(lease(s, "wa", 4, 10, 100, false), LC_ESTATE); /* older */
    assert_int_equal(lease(s, "wa", 6, 0, 100, false), LC_EINVAL);
    assert_int_equal(lease(s, "wa", 6, STORE_LEASE_ROWS_MAX + 1, 100, false), LC_EINVAL);
    assert_int_equal(lease(s, "", 6, 10, 100, false), LC_EINVAL);
    assert_int_equal(lease(s, "wa", 6, 10, 0, false), LC_EINVAL);
    Lc__LeaseRows lr = LC__LEASE_ROWS__INIT;
    lr.run = RUN;
    lr.feeder = STORE_LEASE_FEEDERS_MAX;
    lr.worker = "wa";
    lr.seq = 9;
    lr.count = 1;
    lr.rows = 10;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_LEASE_ROWS;
    cmd.lease_rows = &lr;
    assert_int_equal(store_apply(s, &cmd), LC_EINVAL);
    lr.feeder = 1;
    lr.run = RUN + 1;
    assert_int_equal(store_apply(s, &cmd), LC_ENOTFOUND); /* no such run */
    assert_int_equal(cursor(s), 10);
    assert_int_equal(got(s, "wa").seq, 5);
    Lc__RunFinished fin = LC__RUN_FINISHED__INIT;
    fin.run = RUN;
    fin.state = "finished";
    fin.verdict = "";
    fin.summary_json = "{}";
    cmd.cmd_case = LC__COMMAND__CMD_RUN_FINISHED;
    cmd.run_finished = &fin;
    assert_int_equal(store_apply(s, &cmd), 0);
    assert_int_equal(lease(s, "wa", 7, 10, 100, false), LC_ENOTFOUND); /* over */
    store_lease_t l;
    assert_int_equal(store_lease_get(s, RUN, 1, "wa", &l), LC_ENOTFOUND); /* forgotten */
    store_close(s);
}

/* The cursor and the leases are in the snapshot: a restored master goes on from there, and
 * a replay of the last request is still recognised. */
static void test_survives_snapshot_restore(void **state)
{
    (void)state;
    store_t *s = running_store();
    assert_int_equal(lease(s, "wa", 1, 30, 100, false), 0);
    assert_int_equal(lease(s, "wb", 1, 20, 100, false), 0);
    uint8_t *image;
    size_t len;
    assert_int_equal(store_serialize(s, &image, &len), 0);
    store_close(s);
    store_t *r = test_store_open();
    assert_int_equal(store_deserialize(r, image, len), 0);
    free(image);
    assert_int_equal(cursor(r), 50);
    assert_int_equal(lease(r, "wb", 1, 20, 100, false), LC_ESTATE);
    assert_int_equal(lease(r, "wc", 1, 20, 100, false), 0);
    store_lease_t l = got(r, "wc");
    assert_int_equal(l.start, 50);
    assert_int_equal(l.count, 20);
    store_close(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_leases_are_disjoint_and_monotonic),
        cmocka_unit_test(test_exhaustion),
        cmocka_unit_test(test_wrap_goes_on),
        cmocka_unit_test(test_refusals_change_nothing),
        cmocka_unit_test(test_survives_snapshot_restore),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
