/* test_feed_stock.c — a leased feeder's rows in hand on a worker (worker/feed_stock.c):
 * tickets taken in order across leases, a wait while more are asked for, exhaustion only
 * once the leader said so and the stock is empty, and when to ask for how many. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "feed_stock.h"

static void test_takes_leases_in_order_then_waits(void **state)
{
    (void)state;
    worker_stock_t s;
    uint64_t t = 0;
    assert_int_equal(worker_stock_init(&s), 0);
    assert_int_equal(worker_stock_take(&s, &t), WORKER_TAKE_WAIT); /* nothing yet */
    assert_true(worker_stock_add(&s, 10, 2, false));
    assert_true(worker_stock_add(&s, 40, 1, false));
    uint64_t expect[] = {10, 11, 40};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(worker_stock_take(&s, &t), WORKER_TAKE_ROW);
        assert_int_equal(t, expect[i]);
    }
    assert_int_equal(worker_stock_take(&s, &t), WORKER_TAKE_WAIT);
    assert_true(worker_stock_add(&s, 50, 1, true)); /* the last lease */
    assert_int_equal(worker_stock_take(&s, &t), WORKER_TAKE_ROW);
    assert_int_equal(t, 50);
    assert_int_equal(worker_stock_take(&s, &t), WORKER_TAKE_EXHAUSTED);
    worker_stock_close(&s);
}

/* Users that waited before the first lease came take its rows: once each has one, no more
 * is asked for (test_journeys: the extra row one worker asked for left the other's fourth
 * user without one, 7 logins for 8 users). */
static void test_waits_before_a_lease_ask_nothing(void **state)
{
    (void)state;
    worker_stock_t s;
    uint64_t t = 0;
    bool retry;
    assert_int_equal(worker_stock_init(&s), 0);
    for (int i = 0; i < 12; i++) /* 4 users, each waiting 3 times */
        assert_int_equal(worker_stock_take(&s, &t), WORKER_TAKE_WAIT);
    assert_true(worker_stock_add(&s, 0, 4, false));
    for (int i = 0; i < 4; i++)
        assert_int_equal(worker_stock_take(&s, &t), WORKER_TAKE_ROW);
    assert_int_equal(worker_stock_look(&s, 4, true, 1000, &retry), 0);
    assert_false(retry);
    worker_stock_close(&s);
}

static void test_full_stock_refuses_a_lease(void **state)
{
    (void)state;
    worker_stock_t s;
    assert_int_equal(worker_stock_init(&s), 0);
    for (unsigned i = 0; i < WORKER_STOCK_LEASES; i++)
        assert_true(worker_stock_add(&s, i * 10, 1, false));
    assert_false(worker_stock_add(&s, 100, 1, false));
    assert_true(worker_stock_add(&s, 0, 0, true)); /* an empty last answer is always held */
    worker_stock_close(&s);
}

static void test_want(void **state)
{
    (void)state;
    assert_int_equal(worker_stock_want(5, 0, 0), 10);   /* two rows a user */
    assert_int_equal(worker_stock_want(5, 6, 0), 0);    /* more than half in hand */
    assert_int_equal(worker_stock_want(5, 5, 0), 5);
    assert_int_equal(worker_stock_want(5, 0, 100), 200); /* two seconds at the rate */
    assert_int_equal(worker_stock_want(0, 0, 0), 1);
    assert_int_equal(worker_stock_want(100000, 0, 0), WORKER_STOCK_ASK_MAX);
}

/* Per-user rows: what the users without one need, and no more (8 rows, two workers of 4
 * users: each takes 4); then one per waiting user (5 takes a look), at most users. */
static void test_want_per_user(void **state)
{
    (void)state;
    assert_int_equal(worker_stock_want_per_user(4, 0, 0, 0), 4);
    assert_int_equal(worker_stock_want_per_user(4, 4, 0, 0), 0);
    assert_int_equal(worker_stock_want_per_user(4, 1, 2, 0), 1);
    assert_int_equal(worker_stock_want_per_user(4, 0, 4, 0), 0);
    /* a waiting user takes again every 20 ms: 5 takes between two looks */
    assert_int_equal(worker_stock_want_per_user(4, 0, 4, 5), 1);
    assert_int_equal(worker_stock_want_per_user(4, 0, 4, 2), 1);
    assert_int_equal(worker_stock_want_per_user(4, 0, 4, 10), 2);
    assert_int_equal(worker_stock_want_per_user(4, 0, 4, 50), 4);
    assert_int_equal(worker_stock_want_per_user(4, 1, 4, 3), 0);
}

/* One request at a time: while it is outstanding nothing new is asked, and it is due again
 * after WORKER_STOCK_RETRY_MS. */
static void test_look_asks_once_and_retries(void **state)
{
    (void)state;
    worker_stock_t s;
    bool retry;
    assert_int_equal(worker_stock_init(&s), 0);
    assert_int_equal(worker_stock_look(&s, 4, false, 1000, &retry), 8);
    assert_false(retry);
    s.asked_seq = 1;
    s.asked_ms = 1000;
    assert_int_equal(worker_stock_look(&s, 4, false, 1100, &retry), 0);
    assert_false(retry);
    assert_int_equal(worker_stock_look(&s, 4, false, 1000 + WORKER_STOCK_RETRY_MS, &retry), 0);
    assert_true(retry);
    s.asked_seq = 0;
    assert_true(worker_stock_add(&s, 0, 0, true));
    assert_int_equal(worker_stock_look(&s, 4, false, 2000, &retry), 0); /* exhausted: never again */
    assert_false(retry);
    worker_stock_close(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_takes_leases_in_order_then_waits),
        cmocka_unit_test(test_full_stock_refuses_a_lease),
        cmocka_unit_test(test_want),
        cmocka_unit_test(test_want_per_user),
        cmocka_unit_test(test_waits_before_a_lease_ask_nothing),
        cmocka_unit_test(test_look_asks_once_and_retries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
