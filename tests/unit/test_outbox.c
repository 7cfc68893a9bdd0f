/* test_outbox.c — worker/outbox.c: the byte bound drops the oldest batches,
 * every lost batch is reported once with its requests, and batches dropped
 * while on a live connection are lost only if that connection ends unacked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "outbox.h"

#define MAX_LOST 64

typedef struct lost_log_s {
    worker_outbox_batch_t b[MAX_LOST];
    size_t n;
} lost_log_t;

static void on_lost(void *arg, const worker_outbox_batch_t *b)
{
    lost_log_t *log = arg;
    assert_true(log->n < MAX_LOST);
    log->b[log->n++] = *b;
}

/* Pushes a frame of len bytes for (run, seq) counting requests. */
static worker_outbox_entry_t *push(worker_outbox_t *o, uint64_t run, uint64_t seq,
                                   uint64_t requests, size_t len, uint64_t live)
{
    worker_batch_meta_t meta = {.run = run, .seq = seq, .requests = requests};
    uint8_t *frame = malloc(len);
    assert_non_null(frame);
    memset(frame, 0xab, len);
    return worker_outbox_push(o, &meta, frame, len, live);
}

static void test_ack_is_exact(void **state)
{
    (void)state;
    worker_outbox_t o;
    lost_log_t log = {0};
    worker_outbox_init(&o, 1000, on_lost, &log);
    push(&o, 1, 10, 5, 100, 0);
    push(&o, 1, 11, 5, 100, 0);
    push(&o, 2, 11, 5, 100, 0);
    assert_true(worker_outbox_ack(&o, 1, 11));
    assert_int_equal(o.len, 2);
    assert_int_equal(o.bytes, 200);
    assert_false(worker_outbox_ack(&o, 1, 11)); /* a second ack of the same batch */
    assert_true(worker_outbox_ack(&o, 1, 10));
    assert_true(worker_outbox_ack(&o, 2, 11));
    assert_int_equal(o.len, 0);
    assert_null(o.head);
    assert_null(o.tail);
    push(&o, 3, 1, 1, 10, 0); /* the tail was reset properly */
    assert_ptr_equal(o.head, o.tail);
    worker_outbox_clear(&o);
    assert_int_equal(log.n, 0);
}

static void test_overflow_drops_oldest(void **state)
{
    (void)state;
    worker_outbox_t o;
    lost_log_t log = {0};
    worker_outbox_init(&o, 1000, on_lost, &log);
    for (uint64_t seq = 1; seq <= 10; seq++)
        push(&o, seq % 2 ? 7 : 8, seq, seq * 10, 300, 0);
    /* 300-byte frames in 1000 bytes: the 3 newest stay. */
    assert_int_equal(o.len, 3);
    assert_true(o.bytes <= 1000);
    assert_int_equal(o.head->b.seq, 8);
    assert_int_equal(log.n, 7);
    uint64_t requests = 0;
    for (size_t i = 0; i < log.n; i++) {
        assert_int_equal(log.b[i].seq, i + 1); /* oldest first, each once */
        assert_int_equal(log.b[i].run, (i + 1) % 2 ? 7 : 8);
        requests += log.b[i].requests;
    }
    assert_int_equal(requests, 10 + 20 + 30 + 40 + 50 + 60 + 70);
    assert_int_equal(o.lost_batches, 7);
    assert_int_equal(o.lost_requests, requests);
    assert_true(o.in_burst);
    assert_int_equal(o.n_burst_runs, 2);
    /* Room again (acks): the next push ends the burst. */
    assert_true(worker_outbox_ack(&o, 8, 8));
    assert_true(worker_outbox_ack(&o, 7, 9));
    push(&o, 7, 11, 1, 300, 0);
    assert_false(o.in_burst);
    assert_int_equal(o.burst_batches, 0);
    worker_outbox_clear(&o);
}

static void test_newest_always_kept(void **state)
{
    (void)state;
    worker_outbox_t o;
    lost_log_t log = {0};
    worker_outbox_init(&o, 100, on_lost, &log);
    push(&o, 1, 1, 3, 50, 0);
    worker_outbox_entry_t *big = push(&o, 1, 2, 4, 500, 0);
    assert_non_null(big);
    assert_ptr_equal(o.head, big);
    assert_int_equal(o.len, 1);
    assert_int_equal(o.bytes, 500);
    assert_int_equal(log.n, 1);
    assert_int_equal(log.b[0].seq, 1);
    worker_outbox_clear(&o);
    assert_int_equal(o.bytes, 0);
}

static void test_carried_losses_and_final(void **state)
{
    (void)state;
    worker_outbox_t o;
    lost_log_t log = {0};
    worker_outbox_init(&o, 100, on_lost, &log);
    worker_batch_meta_t meta = {.run = 4, .seq = 9, .requests = 12, .lost_batches = 3,
                                .lost_requests = 40, .final = true};
    worker_outbox_push(&o, &meta, calloc(1, 80), 80, 0);
    push(&o, 5, 1, 1, 80, 0);
    assert_int_equal(log.n, 1);
    assert_int_equal(log.b[0].run, 4);
    assert_true(log.b[0].final);
    assert_int_equal(log.b[0].requests, 12);
    assert_int_equal(log.b[0].lost_batches, 3);
    assert_int_equal(log.b[0].lost_requests, 40);
    worker_outbox_clear(&o);
}

static void test_in_flight_drop(void **state)
{
    (void)state;
    worker_outbox_t o;
    lost_log_t log = {0};
    worker_outbox_init(&o, 250, on_lost, &log);
    /* Written on connection 1 (what the link does after a push while ready). */
    for (uint64_t seq = 1; seq <= 4; seq++)
        push(&o, 1, seq, 10, 100, 1)->sent_on = 1;
    /* Frames 1 and 2 went, but their entries wait for acks: nothing lost yet. */
    assert_int_equal(log.n, 0);
    assert_int_equal(o.len, 4);
    assert_int_equal(o.bytes, 200);
    assert_null(o.head->frame);
    /* Batch 1 is acknowledged after all: delivered, not lost. */
    assert_true(worker_outbox_ack(&o, 1, 1));
    assert_int_equal(o.len, 3);
    assert_int_equal(o.bytes, 200);
    /* Connection 1 ends with batch 2 unacknowledged and frameless: lost. */
    worker_outbox_conn_lost(&o, 1);
    assert_int_equal(log.n, 1);
    assert_int_equal(log.b[0].seq, 2);
    assert_int_equal(o.len, 2);
    /* Frames written on an older connection are lost at once when dropped. */
    push(&o, 1, 5, 10, 100, 2)->sent_on = 2;
    assert_int_equal(log.n, 2);
    assert_int_equal(log.b[1].seq, 3);
    assert_int_equal(o.bytes, 200);
    worker_outbox_clear(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ack_is_exact),
        cmocka_unit_test(test_overflow_drops_oldest),
        cmocka_unit_test(test_newest_always_kept),
        cmocka_unit_test(test_carried_losses_and_final),
        cmocka_unit_test(test_in_flight_drop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
