/* test_h2_pool.c — worker/h2_pool.c: engine shares add up, requests go to the least loaded
 * connection up to min(max_streams, the server's limit), waiters are served in FIFO order and
 * nobody jumps the queue, GOAWAY drains, a lost connection gives its streams back exactly
 * once and is reconnected. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "h2_pool.h"

static void test_share_adds_up(void **state)
{
    (void)state;
    for (uint32_t total = 1; total <= 40; total++)
        for (uint32_t n = 1; n <= 8; n++) {
            uint32_t sum = 0;
            for (uint32_t e = 0; e < n; e++) {
                uint32_t share = worker_h2_pool_share(total, n, e);
                assert_true(share >= 1);
                sum += share;
            }
            /* Exact when every engine gets one; else each engine gets its one. */
            assert_int_equal(sum, total >= n ? total : n);
        }
    assert_int_equal(worker_h2_pool_share(10, 4, 0), 3);
    assert_int_equal(worker_h2_pool_share(10, 4, 1), 3);
    assert_int_equal(worker_h2_pool_share(10, 4, 2), 2);
    assert_int_equal(worker_h2_pool_share(10, 4, 3), 2);
}

/* Brings every connection up. */
static void up_all(worker_h2_slots_t *s)
{
    int i;
    while ((i = worker_h2_slots_to_connect(s)) >= 0)
        worker_h2_slots_up(s, (uint32_t)i);
}

static void test_no_slot_before_connected(void **state)
{
    (void)state;
    worker_h2_slots_t s;
    worker_h2_waiter_t w = {0};
    uint32_t conn;
    assert_int_equal(worker_h2_slots_init(&s, 2, 4), 0);
    assert_int_equal(worker_h2_slots_acquire(&s, &w), -1);
    assert_true(w.queued);
    assert_int_equal(worker_h2_slots_to_connect(&s), 0);
    assert_null(worker_h2_slots_next(&s, &conn)); /* connecting is not up */
    worker_h2_slots_up(&s, 0);
    assert_ptr_equal(worker_h2_slots_next(&s, &conn), &w);
    assert_int_equal(conn, 0);
    assert_false(w.queued);
    assert_int_equal(s.conns[0].in_flight, 1);
    worker_h2_slots_free(&s);
}

/* 2 connections of 3 streams: spread evenly, the 7th and later wait, served in order. */
static void test_least_loaded_then_fifo(void **state)
{
    (void)state;
    worker_h2_slots_t s;
    worker_h2_waiter_t w[10] = {{0}};
    uint32_t conn;
    assert_int_equal(worker_h2_slots_init(&s, 2, 3), 0);
    up_all(&s);
    int seen[2] = {0, 0};
    for (int i = 0; i < 6; i++) {
        int c = worker_h2_slots_acquire(&s, &w[i]);
        assert_true(c == 0 || c == 1);
        seen[c]++;
        assert_true(seen[0] - seen[1] <= 1 && seen[1] - seen[0] <= 1);
    }
    for (int i = 6; i < 10; i++)
        assert_int_equal(worker_h2_slots_acquire(&s, &w[i]), -1);
    assert_int_equal(s.n_waiting, 4);
    assert_null(worker_h2_slots_next(&s, &conn)); /* full */
    worker_h2_slots_release(&s, 1);
    assert_ptr_equal(worker_h2_slots_next(&s, &conn), &w[6]);
    assert_int_equal(conn, 1);
    assert_null(worker_h2_slots_next(&s, &conn));
    worker_h2_slots_release(&s, 0);
    worker_h2_slots_release(&s, 0);
    assert_ptr_equal(worker_h2_slots_next(&s, &conn), &w[7]);
    assert_ptr_equal(worker_h2_slots_next(&s, &conn), &w[8]);
    assert_null(worker_h2_slots_next(&s, &conn));
    assert_int_equal(s.n_waiting, 1);
    assert_int_equal(s.conns[0].in_flight + s.conns[1].in_flight, 6);
    worker_h2_slots_free(&s);
}

/* A freed slot goes to the one waiting, not to a newcomer that asks before next(). */
static void test_nobody_jumps_the_queue(void **state)
{
    (void)state;
    worker_h2_slots_t s;
    worker_h2_waiter_t a = {0}, b = {0}, late = {0};
    uint32_t conn;
    assert_int_equal(worker_h2_slots_init(&s, 1, 1), 0);
    up_all(&s);
    assert_int_equal(worker_h2_slots_acquire(&s, &a), 0);
    assert_int_equal(worker_h2_slots_acquire(&s, &b), -1);
    worker_h2_slots_release(&s, 0);
    assert_int_equal(worker_h2_slots_acquire(&s, &late), -1);
    assert_ptr_equal(worker_h2_slots_next(&s, &conn), &b);
    worker_h2_slots_release(&s, 0);
    assert_ptr_equal(worker_h2_slots_next(&s, &conn), &late);
    worker_h2_slots_free(&s);
}

/* The server's SETTINGS_MAX_CONCURRENT_STREAMS below max_streams is the limit; raised, the
 * waiters go. */
static void test_limit_by_settings(void **state)
{
    (void)state;
    worker_h2_slots_t s;
    worker_h2_waiter_t w[5] = {{0}};
    uint32_t conn;
    assert_int_equal(worker_h2_slots_init(&s, 1, 4), 0);
    up_all(&s);
    assert_int_equal(worker_h2_slots_limit(&s, 0), 4);
    worker_h2_slots_peer_max(&s, 0, 2);
    assert_int_equal(worker_h2_slots_limit(&s, 0), 2);
    assert_int_equal(worker_h2_slots_acquire(&s, &w[0]), 0);
    assert_int_equal(worker_h2_slots_acquire(&s, &w[1]), 0);
    assert_int_equal(worker_h2_slots_acquire(&s, &w[2]), -1);
    assert_int_equal(worker_h2_slots_acquire(&s, &w[3]), -1);
    assert_int_equal(worker_h2_slots_acquire(&s, &w[4]), -1);
    worker_h2_slots_peer_max(&s, 0, 100); /* above max_streams: 4 */
    assert_ptr_equal(worker_h2_slots_next(&s, &conn), &w[2]);
    assert_ptr_equal(worker_h2_slots_next(&s, &conn), &w[3]);
    assert_null(worker_h2_slots_next(&s, &conn));
    worker_h2_slots_peer_max(&s, 0, 0); /* a server may say 0: nothing new */
    worker_h2_slots_release(&s, 0);
    assert_null(worker_h2_slots_next(&s, &conn));
    worker_h2_slots_free(&s);
}

/* GOAWAY: the streams in flight finish, none start; the last one ends it, then reconnect. */
static void test_goaway_drains_then_reconnects(void **state)
{
    (void)state;
    worker_h2_slots_t s;
    worker_h2_waiter_t w[3] = {{0}};
    uint32_t conn;
    assert_int_equal(worker_h2_slots_init(&s, 1, 2), 0);
    up_all(&s);
    assert_int_equal(worker_h2_slots_acquire(&s, &w[0]), 0);
    assert_int_equal(worker_h2_slots_acquire(&s, &w[1]), 0);
    worker_h2_slots_goaway(&s, 0);
    assert_int_equal(s.conns[0].state, WORKER_H2_PCONN_DRAINING);
    worker_h2_slots_release(&s, 0);
    assert_int_equal(worker_h2_slots_acquire(&s, &w[2]), -1); /* draining takes none */
    assert_int_equal(worker_h2_slots_to_connect(&s), -1);
    worker_h2_slots_release(&s, 0);
    assert_int_equal(s.conns[0].state, WORKER_H2_PCONN_DOWN);
    assert_int_equal(worker_h2_slots_to_connect(&s), 0);
    worker_h2_slots_up(&s, 0);
    assert_ptr_equal(worker_h2_slots_next(&s, &conn), &w[2]);
    /* An idle connection's GOAWAY: down at once. */
    worker_h2_slots_release(&s, 0);
    worker_h2_slots_goaway(&s, 0);
    assert_int_equal(s.conns[0].state, WORKER_H2_PCONN_DOWN);
    worker_h2_slots_free(&s);
}

/* A lost connection hands back its streams once (no release follows), its limit is forgotten,
 * the waiters keep their order across the reconnect. */
static void test_lost_connection(void **state)
{
    (void)state;
    worker_h2_slots_t s;
    worker_h2_waiter_t w[4] = {{0}};
    uint32_t conn;
    assert_int_equal(worker_h2_slots_init(&s, 2, 1), 0);
    up_all(&s);
    worker_h2_slots_peer_max(&s, 1, 0);
    assert_int_equal(worker_h2_slots_acquire(&s, &w[0]), 0);
    assert_int_equal(worker_h2_slots_acquire(&s, &w[1]), -1);
    assert_int_equal(worker_h2_slots_acquire(&s, &w[2]), -1);
    assert_int_equal(worker_h2_slots_lost(&s, 0), 1);
    assert_int_equal(worker_h2_slots_lost(&s, 0), 0); /* once */
    assert_int_equal(s.conns[0].in_flight, 0);
    assert_int_equal(worker_h2_slots_lost(&s, 1), 0);
    assert_null(worker_h2_slots_next(&s, &conn));
    assert_int_equal(worker_h2_slots_to_connect(&s), 0);
    assert_int_equal(worker_h2_slots_to_connect(&s), 1);
    assert_int_equal(worker_h2_slots_to_connect(&s), -1);
    worker_h2_slots_up(&s, 1);
    worker_h2_slots_up(&s, 0);
    assert_int_equal(worker_h2_slots_limit(&s, 1), 1); /* the old SETTINGS went with it */
    assert_ptr_equal(worker_h2_slots_next(&s, &conn), &w[1]);
    assert_ptr_equal(worker_h2_slots_next(&s, &conn), &w[2]);
    assert_null(worker_h2_slots_next(&s, &conn));
    worker_h2_slots_free(&s);
}

/* A stopped user leaves the queue from its head, middle or tail; the rest keep their order. */
static void test_cancel_keeps_order(void **state)
{
    (void)state;
    worker_h2_slots_t s;
    worker_h2_waiter_t w[5] = {{0}};
    uint32_t conn;
    assert_int_equal(worker_h2_slots_init(&s, 1, 1), 0);
    for (int i = 0; i < 5; i++)
        assert_int_equal(worker_h2_slots_acquire(&s, &w[i]), -1);
    worker_h2_slots_cancel(&s, &w[0]);
    worker_h2_slots_cancel(&s, &w[2]);
    worker_h2_slots_cancel(&s, &w[4]);
    worker_h2_slots_cancel(&s, &w[4]); /* not waiting: no-op */
    assert_int_equal(s.n_waiting, 2);
    assert_int_equal(worker_h2_slots_acquire(&s, &w[4]), -1); /* back at the tail */
    up_all(&s);
    assert_ptr_equal(worker_h2_slots_next(&s, &conn), &w[1]);
    worker_h2_slots_release(&s, 0);
    assert_ptr_equal(worker_h2_slots_next(&s, &conn), &w[3]);
    worker_h2_slots_release(&s, 0);
    assert_ptr_equal(worker_h2_slots_next(&s, &conn), &w[4]);
    worker_h2_slots_release(&s, 0);
    assert_null(worker_h2_slots_next(&s, &conn));
    assert_null(s.head);
    assert_null(s.tail);
    worker_h2_slots_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_share_adds_up),
        cmocka_unit_test(test_no_slot_before_connected),
        cmocka_unit_test(test_least_loaded_then_fifo),
        cmocka_unit_test(test_nobody_jumps_the_queue),
        cmocka_unit_test(test_limit_by_settings),
        cmocka_unit_test(test_goaway_drains_then_reconnects),
        cmocka_unit_test(test_lost_connection),
        cmocka_unit_test(test_cancel_keeps_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
