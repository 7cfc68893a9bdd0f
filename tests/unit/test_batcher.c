/* test_batcher.c — the batcher (master/runs/batcher.c) with a real store,
 * run controller and fleet (through its transport seam) and a command sink
 * the test answers: a batch is acknowledged only once its entry applied; an
 * entry that did not apply is proposed again (3 times at most) and never
 * acknowledged; a batch already applied is acknowledged again at once; a
 * refused one changes nothing, and one of a run that is over is acknowledged
 * so the worker drops it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "batcher.h"
#include "lc_clock.h"
#include "lc_err.h"
#include "lc_protocol.h"
#include "runs.h"
#include "store.h"

#define RUN 1

static const char scenario[] =
    "{\"name\":\"t\",\"target\":\"http://127.0.0.1:1\",\"duration\":\"60s\",\"users\":2,"
    "\"tasks\":[{\"name\":\"a\",\"path\":\"/\"}]}";

typedef struct fixture_s {
    uv_loop_t loop;
    master_t m;
    fleet_conn_t *conn;
    fleet_worker_t *worker;
    int acks;               /* StatsAcks the fleet sent */
    uint64_t last_ack_seq;
    int proposals;          /* RunSeconds proposed */
    size_t last_batches;
    quorum_applied_cb cb;   /* of the latest proposal, answered by the test */
    void *cb_arg;
} fixture_t;

/* ---- fakes --------------------------------------------------------------- */

static int transport_send(void *arg, void *conn_data, const Lc__Envelope *env)
{
    fixture_t *fx = arg;
    if (env->msg_case == LC__ENVELOPE__MSG_STATS_ACK) {
        fx->acks++;
        fx->last_ack_seq = env->stats_ack->seq;
    }
    return 0;
}

static void transport_close(void *arg, void *conn_data)
{
}

static int propose(void *arg, const Lc__Command *cmd, quorum_applied_cb cb, void *cb_arg)
{
    fixture_t *fx = arg;
    assert_int_equal(cmd->cmd_case, LC__COMMAND__CMD_RUN_SECONDS);
    fx->proposals++;
    fx->last_batches = cmd->run_seconds->n_batches;
    fx->cb = cb;
    fx->cb_arg = cb_arg;
    return 0;
}

/* Answers the latest proposal: applied with result (0 or an error). */
static void answer(fixture_t *fx, int result)
{
    assert_non_null(fx->cb);
    quorum_applied_cb cb = fx->cb;
    fx->cb = NULL;
    cb(fx->cb_arg, 0, result);
}

static void apply(store_t *s, Lc__Command *cmd)
{
    assert_int_equal(store_apply(s, cmd), 0);
}

/* Run RUN running, w1's share of it recorded (RunAssignment). */
static void store_running_run(store_t *s)
{
    Lc__CreateRun cr = LC__CREATE_RUN__INIT;
    cr.id = RUN;
    cr.tenant = "default";
    cr.name = "t";
    cr.scenario_json = (char *)scenario;
    cr.users = 2;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_CREATE_RUN;
    cmd.create_run = &cr;
    apply(s, &cmd);
    Lc__RunState rs = LC__RUN_STATE__INIT;
    rs.run = RUN;
    rs.state = "running";
    rs.at_ms = lc_wall_ms();
    rs.reason = "";
    cmd.cmd_case = LC__COMMAND__CMD_RUN_STATE;
    cmd.run_state = &rs;
    apply(s, &cmd);
    Lc__RunAssignment ra = LC__RUN_ASSIGNMENT__INIT;
    ra.run = RUN;
    ra.worker = "w1";
    ra.generation = 1;
    ra.users = 2;
    cmd.cmd_case = LC__COMMAND__CMD_RUN_ASSIGNMENT;
    cmd.run_assignment = &ra;
    apply(s, &cmd);
}

/* w1 joins through the fleet's dispatch. */
static void join_w1(fixture_t *fx)
{
    fx->conn = fleet_conn_open(fx->m.fleet, fx, "127.0.0.1:1", 1);
    Lc__Hello h = LC__HELLO__INIT;
    h.protocol_version = LC_PROTOCOL_VERSION;
    h.worker_id = "w1";
    h.name = "w1";
    h.threads = 1;
    h.capacity = 10;
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_HELLO;
    env.hello = &h;
    size_t len = lc__envelope__get_packed_size(&env);
    uint8_t *buf = malloc(len);
    lc__envelope__pack(&env, buf);
    assert_false(fleet_conn_receive(fx->conn, lc__envelope__unpack(NULL, len, buf), 1));
    free(buf);
    fx->worker = fleet_find(fx->m.fleet, "w1");
    assert_non_null(fx->worker);
}

/* A heap StatsBatch of w1 for run: 5 requests of "a" in second 1, its
 * worker's last for the run when final. */
static Lc__Envelope *batch_of(uint64_t run, uint64_t seq, bool final)
{
    Lc__EndpointStats ep = LC__ENDPOINT_STATS__INIT, *eps[] = {&ep};
    ep.name = "a";
    ep.method = "GET";
    ep.count = 5;
    Lc__StatsBatch b = LC__STATS_BATCH__INIT;
    b.run = run;
    b.worker_id = "w1";
    b.seq = seq;
    b.interval = 0;
    b.endpoints = eps;
    b.n_endpoints = 1;
    b.final = final;
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_STATS;
    env.stats = &b;
    size_t len = lc__envelope__get_packed_size(&env);
    uint8_t *buf = malloc(len);
    lc__envelope__pack(&env, buf);
    Lc__Envelope *copy = lc__envelope__unpack(NULL, len, buf);
    free(buf);
    return copy;
}

static Lc__Envelope *batch(uint64_t run, uint64_t seq)
{
    return batch_of(run, seq, false);
}

static int setup(void **state)
{
    fixture_t *fx = calloc(1, sizeof *fx);
    char err[256];
    assert_int_equal(uv_loop_init(&fx->loop), 0);
    fx->m.loop = &fx->loop;
    fx->m.cfg.worker_heartbeat_ms = 1000;
    assert_int_equal(store_open(&fx->m.store, err, sizeof err), 0);
    store_running_run(fx->m.store);
    fleet_config_t fc = {.advertise = "127.0.0.1:5557", .heartbeat_ms = 1000,
                         .stats_interval_ms = 1000};
    fleet_events_t ev = {.arg = fx};
    fleet_transport_t t = {.arg = fx, .send = transport_send, .close = transport_close};
    assert_int_equal(fleet_new(&fx->m.fleet, &fc, &ev, &t), 0);
    fleet_set_accepting(fx->m.fleet, true, 1, 1);
    runs_io_t io = runs_io_master(&fx->m);
    assert_int_equal(runs_init(&fx->m.runs, NULL, fx->m.store, &io, 1000), 0);
    runs_on_leader(fx->m.runs, true); /* adopts RUN from the store */
    command_sink_t sink = {.propose = propose, .arg = fx};
    assert_int_equal(batcher_init(&fx->m.batcher, &fx->m, &sink), 0);
    join_w1(fx);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *fx = *state;
    batcher_close(fx->m.batcher);
    runs_close(fx->m.runs);
    fleet_conn_close(fx->conn, NULL);
    fleet_conn_gone(fx->conn);
    fleet_free(fx->m.fleet);
    fx->m.fleet = NULL;
    store_close(fx->m.store);
    uv_run(&fx->loop, UV_RUN_DEFAULT); /* the batcher's timer closes */
    assert_int_equal(uv_loop_close(&fx->loop), 0);
    free(fx);
    return 0;
}

/* ---- tests ----------------------------------------------------------------- */

static void test_ack_only_after_apply(void **state)
{
    fixture_t *fx = *state;
    batcher_add(fx->m.batcher, fx->worker, batch(RUN, 7));
    assert_true(batcher_busy(fx->m.batcher, RUN));
    batcher_flush(fx->m.batcher);
    assert_int_equal(fx->proposals, 1);
    assert_int_equal(fx->acks, 0); /* proposed, not applied yet */
    answer(fx, LC_EIO);            /* committed, but the FSM could not apply it */
    assert_int_equal(fx->acks, 0);
    assert_true(batcher_busy(fx->m.batcher, RUN)); /* queued again */
    batcher_flush(fx->m.batcher);
    assert_int_equal(fx->proposals, 2);
    answer(fx, 0);
    assert_int_equal(fx->acks, 1);
    assert_int_equal(fx->last_ack_seq, 7);
    assert_false(batcher_busy(fx->m.batcher, RUN));
}

static void test_gives_up_after_three_failed_applies(void **state)
{
    fixture_t *fx = *state;
    batcher_add(fx->m.batcher, fx->worker, batch(RUN, 8));
    for (int i = 0; i < 3; i++) {
        batcher_flush(fx->m.batcher);
        answer(fx, LC_EIO);
    }
    assert_int_equal(fx->proposals, 3);
    assert_int_equal(fx->acks, 0); /* left to the worker's outbox: it replays it */
    assert_false(batcher_busy(fx->m.batcher, RUN));
}

static void test_applied_batch_is_acked_again(void **state)
{
    fixture_t *fx = *state;
    batcher_add(fx->m.batcher, fx->worker, batch(RUN, 9));
    batcher_flush(fx->m.batcher);
    assert_int_equal(fx->last_batches, 1);
    /* the entry applies on the store, as a commit would */
    Lc__Envelope *e = batch(RUN, 9);
    Lc__StatsBatch *bs[] = {e->stats};
    Lc__RunSeconds rs = LC__RUN_SECONDS__INIT;
    rs.run = RUN;
    rs.batches = bs;
    rs.n_batches = 1;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_RUN_SECONDS;
    cmd.run_seconds = &rs;
    apply(fx->m.store, &cmd);
    lc__envelope__free_unpacked(e, NULL);
    answer(fx, 0);
    assert_int_equal(fx->acks, 1);
    /* the worker lost the ack and replays: acknowledged, not proposed */
    batcher_add(fx->m.batcher, fx->worker, batch(RUN, 9));
    assert_int_equal(fx->acks, 2);
    assert_int_equal(fx->proposals, 1);
    assert_int_equal(batcher_replays(fx->m.batcher), 1);
}

/* A batch sent again while its first copy is queued or in flight is dropped (its ack
 * comes when that copy commits); another seq is a batch of its own. */
static void test_queued_and_in_flight_replays_dropped(void **state)
{
    fixture_t *fx = *state;
    batcher_add(fx->m.batcher, fx->worker, batch(RUN, 10));
    batcher_add(fx->m.batcher, fx->worker, batch(RUN, 10)); /* queued */
    assert_int_equal(batcher_replays(fx->m.batcher), 1);
    batcher_add(fx->m.batcher, fx->worker, batch(RUN, 11));
    assert_int_equal(batcher_replays(fx->m.batcher), 1);
    batcher_flush(fx->m.batcher);
    assert_int_equal(fx->proposals, 1);
    assert_int_equal(fx->last_batches, 2);
    batcher_add(fx->m.batcher, fx->worker, batch(RUN, 11)); /* in flight */
    assert_int_equal(batcher_replays(fx->m.batcher), 2);
    assert_true(batcher_busy(fx->m.batcher, RUN)); /* in flight */
    batcher_flush(fx->m.batcher);
    assert_int_equal(fx->proposals, 1); /* nothing new was queued */
    answer(fx, 0);
    assert_int_equal(fx->acks, 2);
}

static void test_refused_batches(void **state)
{
    fixture_t *fx = *state;
    /* a run the worker holds no share of (it does not exist): nothing */
    batcher_add(fx->m.batcher, fx->worker, batch(42, 1));
    batcher_flush(fx->m.batcher);
    assert_int_equal(fx->proposals, 0);
    assert_int_equal(fx->acks, 0);
    assert_int_equal(runs_refused(fx->m.runs).stats, 1);
}

/* Finals that arrive together share one entry, proposed soon (not at the
 * next 200 ms flush): proposed one by one, the finals of 1,000 workers held
 * every master's loop for ~450 ms. */
static void test_finals_share_an_entry_soon(void **state)
{
    fixture_t *fx = *state;
    assert_true(batcher_flush_due_in(fx->m.batcher) > 20); /* the periodic flush */
    for (uint64_t seq = 1; seq <= 40; seq++)
        batcher_add(fx->m.batcher, fx->worker, batch_of(RUN, seq, true));
    assert_int_equal(fx->proposals, 0); /* not one entry per final */
    /* The flush was brought forward to 20 ms (by the loop's clock, not the wall's). */
    assert_true(batcher_flush_due_in(fx->m.batcher) <= 20);
    uint64_t start_ns = uv_hrtime();
    while (fx->proposals == 0 && uv_hrtime() - start_ns < 5000000000ull)
        uv_run(&fx->loop, UV_RUN_ONCE);
    assert_int_equal(fx->proposals, 1);
    assert_int_equal(fx->last_batches, 40);
    answer(fx, 0);
    assert_int_equal(fx->acks, 40);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ack_only_after_apply, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gives_up_after_three_failed_applies, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_applied_batch_is_acked_again, setup, teardown),
        cmocka_unit_test_setup_teardown(test_queued_and_in_flight_replays_dropped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_batches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finals_share_an_entry_soon, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
