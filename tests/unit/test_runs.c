/* test_runs.c — the run controller (master/runs/runs.c): a run's life, workers lost or
 * refusing, adoption after a leader change, stop requests, followers and saturation
 * (runs_fixture.h); what a worker may speak for is in test_runs_admission.c. */
#include "lc_protocol.h"
#include "runs_fixture.h"

/* ---- pending → running → stopping → finished ---------------------------- */

static void test_lifecycle(void **state)
{
    fixture_t *fx = *state;
    char buf[16];
    start_on_two(fx);
    assert_string_equal(stored_state(fx, RUN, buf, sizeof buf), "running");
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_RUN_STATE, "running"), 1);
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_RUN_GRANT, NULL), 1);
    assert_int_equal(fx->proposed[fx->n_proposed - 1].granted, 10);
    uint64_t g1 = 0, g2 = 0;
    uint32_t u1 = assigned_users(fx, RUN, "w1", &g1), u2 = assigned_users(fx, RUN, "w2", &g2);
    assert_int_equal(u1 + u2, 10);
    assert_int_equal(u1, 5);
    assert_int_equal(g1, 1);
    assert_int_equal(g2, 1);
    /* Both shares are recorded, in one command for the one reschedule. */
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_RUN_ASSIGNMENT, NULL), 1);
    const char *const names[] = {"w1", "w2"};
    for (size_t i = 0; i < 2; i++) {
        uint64_t gen = 0;
        uint32_t users = 0;
        assert_int_equal(store_assignment_get(fx->store, RUN, names[i], &gen, &users), 0);
        assert_int_equal(gen, 1);
        assert_int_equal(users, 5);
    }

    /* Nothing changes before the duration. */
    size_t sent = fx->n_sent, proposed = fx->n_proposed;
    advance(fx, 9000);
    assert_int_equal(fx->n_sent, sent);
    assert_int_equal(fx->n_proposed, proposed);

    advance(fx, 1000); /* 10 s: duration reached */
    assert_string_equal(stored_state(fx, RUN, buf, sizeof buf), "stopping");
    assert_int_equal(count_stops(fx, RUN), 2);
    assert_string_equal(fx->sent[fx->n_sent - 1].reason, "duration reached");

    /* Final batches: one, then the other; the batcher still holds stats. */
    runs_on_final_committed(fx->runs, RUN, "w1");
    advance(fx, 100);
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_RUN_FINISHED, NULL), 0);
    runs_on_final_committed(fx->runs, RUN, "w2");
    fx->stats_pending = true;
    advance(fx, 100);
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_RUN_FINISHED, NULL), 0);
    fx->stats_pending = false;
    advance(fx, 100);
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_RUN_FINISHED, "finished"), 1);
    assert_string_equal(stored_state(fx, RUN, buf, sizeof buf), "finished");

    /* Removed: a late final batch and further ticks change nothing. */
    proposed = fx->n_proposed;
    sent = fx->n_sent;
    runs_on_final_committed(fx->runs, RUN, "w1");
    advance(fx, 10000);
    assert_int_equal(fx->n_proposed, proposed);
    assert_int_equal(fx->n_sent, sent);
    char err[128] = "";
    assert_int_equal(runs_request_stop(fx->runs, RUN, err, sizeof err), LC_ESTATE);
    assert_string_equal(err, "run 1 is already finished");
}

/* A worker whose final batch never comes: the run finishes at the deadline
 * (request timeout 2 s + 5 s grace) without it. */
static void test_final_batch_missing_at_deadline(void **state)
{
    fixture_t *fx = *state;
    start_on_two(fx);
    advance(fx, 10000);
    runs_on_final_committed(fx->runs, RUN, "w1");
    advance(fx, 6800);
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_RUN_FINISHED, NULL), 0);
    advance(fx, 300);
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_RUN_FINISHED, "finished"), 1);
    /* w2's final batch commits after the run ended: ignored. */
    size_t proposed = fx->n_proposed;
    runs_on_final_committed(fx->runs, RUN, "w2");
    advance(fx, 100);
    assert_int_equal(fx->n_proposed, proposed);
}

/* ---- workers lost mid-run ------------------------------------------------ */

static void test_worker_lost_mid_run(void **state)
{
    fixture_t *fx = *state;
    char buf[16];
    start_on_two(fx);
    fleet_worker_t *w2 = find(fx, "w2");
    w2->conn = NULL;
    /* Disconnected but not lost yet: its share may still run, so nothing moves. */
    advance(fx, 100);
    assert_int_equal(assigned_users(fx, RUN, "w1", NULL), 5);
    runs_on_worker_lost(fx->runs, w2);
    uint64_t gen = 0;
    assert_int_equal(assigned_users(fx, RUN, "w1", &gen), 10);
    assert_int_equal(gen, 2);
    assert_string_equal(stored_state(fx, RUN, buf, sizeof buf), "running");

    fleet_worker_t *w1 = find(fx, "w1");
    w1->conn = NULL;
    runs_on_worker_lost(fx->runs, w1);
    assert_string_equal(stored_state(fx, RUN, buf, sizeof buf), "stopping");
    assert_string_equal(fx->proposed[fx->n_proposed - 1].reason, "all workers lost");
    advance(fx, 100); /* both gone: no final batch to wait for */
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_RUN_FINISHED, "failed"), 1);
}

/* A worker back with its id but without its share (a restart: a StatefulSet's pod) lost it:
 * the share's users are placed again, on it too, with a new generation. Before, the leader
 * kept it as running them and the run went on 5 users short. */
static void test_worker_back_without_its_share(void **state)
{
    fixture_t *fx = *state;
    start_on_two(fx);
    size_t sent_before = fx->n_sent;
    fleet_worker_t *w2 = find(fx, "w2");
    Lc__Hello hello;
    lc__hello__init(&hello);
    hello.worker_id = w2->id; /* runs nothing */
    runs_on_worker_join(fx->runs, w2, &hello);
    advance(fx, 100);
    uint64_t gen = 0;
    assert_true(fx->n_sent > sent_before);
    assert_int_equal(assigned_users(fx, RUN, "w2", &gen) + assigned_users(fx, RUN, "w1", NULL), 10);
    assert_true(assigned_users(fx, RUN, "w2", NULL) > 0);
    assert_true(gen > 1);

    /* A Hello listing as many runs as a master accepts, none of them this one, may have left
     * it out: the share stays. */
    sent_before = fx->n_sent;
    Lc__RunLoad many[LC_PROTOCOL_MAX_RUN_LOADS], *many_p[LC_PROTOCOL_MAX_RUN_LOADS];
    for (size_t i = 0; i < LC_PROTOCOL_MAX_RUN_LOADS; i++) {
        lc__run_load__init(&many[i]);
        many[i].run = RUN + 1000 + i;
        many_p[i] = &many[i];
    }
    lc__hello__init(&hello);
    hello.worker_id = w2->id;
    hello.running = many_p;
    hello.n_running = LC_PROTOCOL_MAX_RUN_LOADS;
    runs_on_worker_join(fx->runs, w2, &hello);
    advance(fx, 100);
    for (size_t i = sent_before; i < fx->n_sent; i++) /* stops for the unknown runs only */
        assert_true(fx->sent[i].stop && fx->sent[i].run != RUN);

    /* Back with its share (a reconnection), it keeps it: nothing is sent again. */
    sent_before = fx->n_sent;
    Lc__RunLoad load, *loads[1];
    hello_with(w2, &load, loads, &hello, gen, assigned_users(fx, RUN, "w2", NULL));
    runs_on_worker_join(fx->runs, w2, &hello);
    advance(fx, 100);
    assert_int_equal(fx->n_sent, sent_before);
}

/* ---- a refusal ----------------------------------------------------------- */

static void test_refusal_fails_the_run(void **state)
{
    fixture_t *fx = *state;
    start_on_two(fx);
    runs_on_assign_refused(fx->runs, find(fx, "w1"), RUN, "cannot open ca_file");
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_RUN_STATE, "stopping"), 1);
    assert_string_equal(fx->proposed[fx->n_proposed - 1].reason,
                        "worker w1 refused its share: cannot open ca_file");
    assert_int_equal(count_stops(fx, RUN), 2);
    runs_on_final_committed(fx->runs, RUN, "w2"); /* w1 runs nothing: not waited for */
    advance(fx, 100);
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_RUN_FINISHED, "failed"), 1);
}

/* A worker whose feeder ran out (on_exhausted stop_run) ends the run, as finished; a worker
 * without a share of it cannot. */
static void test_worker_done_finishes_the_run(void **state)
{
    fixture_t *fx = *state;
    char buf[16];
    start_on_two(fx);
    fleet_worker_t *w3 = add_worker(fx, "w3", 100);
    runs_on_worker_done(fx->runs, w3, RUN, "feeder f has no rows left");
    assert_string_equal(stored_state(fx, RUN, buf, sizeof buf), "running");
    assert_int_equal(runs_refused(fx->runs).refusals, 1);
    runs_on_worker_done(fx->runs, find(fx, "w1"), RUN, "feeder f has no rows left");
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_RUN_STATE, "stopping"), 1);
    assert_string_equal(fx->proposed[fx->n_proposed - 1].reason,
                        "worker w1: feeder f has no rows left");
    assert_int_equal(count_stops(fx, RUN), 2);
    runs_on_final_committed(fx->runs, RUN, "w1");
    runs_on_final_committed(fx->runs, RUN, "w2");
    advance(fx, 100);
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_RUN_FINISHED, "finished"), 1);
}

/* ---- adoption after a leader change -------------------------------------- */

static void test_adoption_keeps_workers_running(void **state)
{
    fixture_t *fx = *state;
    store_running(fx);
    store_share(fx, "w1", 5, 10);
    fleet_worker_t *w1 = add_worker(fx, "w1", 100);
    runs_on_leader(fx->runs, true);
    Lc__RunLoad load, *loads[1];
    Lc__Hello hello;
    hello_with(w1, &load, loads, &hello, 5, 10);
    runs_on_worker_join(fx->runs, w1, &hello);
    /* Within the grace period nothing is re-planned or restarted. */
    advance(fx, 100);
    assert_int_equal(fx->n_sent, 0);
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_RUN_STATE, NULL), 0);

    /* A second worker joins; after the grace (2 heartbeats + 5 s) users move
     * to it with a generation past the one the worker reported. */
    add_worker(fx, "w2", 100);
    advance(fx, 2 * 1000 + 5000);
    advance(fx, 100);
    uint64_t gen = 0;
    assert_int_equal(assigned_users(fx, RUN, "w2", &gen) + assigned_users(fx, RUN, "w1", NULL), 10);
    assert_true(gen > 5);
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_RUN_STATE, "running"), 0);
}

/* An adopted run none of whose workers came back cannot pass as finished. */
static void test_adopted_run_without_workers_fails(void **state)
{
    fixture_t *fx = *state;
    store_running(fx);
    runs_on_leader(fx->runs, true);
    advance(fx, 10000);
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_RUN_STATE, "stopping"), 1);
    assert_string_equal(fx->proposed[fx->n_proposed - 1].reason,
                        "no worker reported the run after the leader change");
    advance(fx, 100);
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_RUN_FINISHED, "failed"), 1);
}

/* The workers stopped their shares while no leader was there (the orphan timeout) and
 * replayed them to this one, finals included: with every recorded share's final in, the
 * history is whole and the run finishes at its duration; with one missing it fails. */
static void adopted_with_finals(fixture_t *fx, bool both)
{
    store_running(fx);
    store_share(fx, "w1", 3, 5);
    store_share(fx, "w2", 3, 5);
    add_worker(fx, "w1", 100);
    add_worker(fx, "w2", 100);
    runs_on_leader(fx->runs, true);
    runs_on_final_committed(fx->runs, RUN, "w1");
    if (both)
        runs_on_final_committed(fx->runs, RUN, "w2");
    advance(fx, 10000);
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_RUN_STATE, "stopping"), 1);
}

static void test_adopted_run_whose_finals_came_back_finishes(void **state)
{
    fixture_t *fx = *state;
    adopted_with_finals(fx, true);
    assert_string_equal(fx->proposed[fx->n_proposed - 1].reason, "duration reached");
    advance(fx, 100);
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_RUN_FINISHED, "finished"), 1);
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_RUN_FINISHED, "failed"), 0);
}

static void test_adopted_run_missing_a_final_fails(void **state)
{
    fixture_t *fx = *state;
    adopted_with_finals(fx, false);
    assert_string_equal(fx->proposed[fx->n_proposed - 1].reason,
                        "no worker reported the run after the leader change");
    advance(fx, 100);
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_RUN_FINISHED, "failed"), 1);
}

/* A worker reporting a run that is not active is told to stop it. */
static void test_hello_with_unknown_run_is_stopped(void **state)
{
    fixture_t *fx = *state;
    fleet_worker_t *w1 = add_worker(fx, "w1", 100);
    runs_on_leader(fx->runs, true);
    Lc__RunLoad load, *loads[1];
    Lc__Hello hello;
    hello_with(w1, &load, loads, &hello, 1, 3);
    runs_on_worker_join(fx->runs, w1, &hello);
    assert_int_equal(count_stops(fx, RUN), 1);
    assert_string_equal(fx->sent[0].reason, "run is not active");
}

/* ---- stop requests and followers ----------------------------------------- */

static void test_stop_before_start(void **state)
{
    fixture_t *fx = *state;
    char err[128] = "";
    create_run(fx, RUN); /* no worker: it stays pending */
    runs_on_leader(fx->runs, true);
    advance(fx, 100);
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_RUN_GRANT, NULL), 1);
    assert_true(fx->proposed[fx->n_proposed - 1].queued);
    assert_int_equal(runs_request_stop(fx->runs, RUN, err, sizeof err), 0);
    advance(fx, 100);
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_RUN_FINISHED, "aborted"), 1);
    assert_int_equal(runs_request_stop(fx->runs, 99, err, sizeof err), LC_ENOTFOUND);
}

static void test_follower_does_nothing(void **state)
{
    fixture_t *fx = *state;
    char err[64];
    add_worker(fx, "w1", 100);
    create_run(fx, RUN);
    advance(fx, 100);
    assert_int_equal(fx->n_proposed, 0);
    assert_int_equal(fx->n_sent, 0);
    assert_int_equal(runs_request_stop(fx->runs, RUN, err, sizeof err), LC_ENOTLEADER);
}

/* Saturation moves users: a lower effective capacity and a new epoch. */
static void test_saturation_reschedules(void **state)
{
    fixture_t *fx = *state;
    start_on_two(fx);
    fleet_worker_t *w1 = find(fx, "w1");
    w1->sat.saturated = true;
    w1->sat.effective_capacity = 2;
    fx->saturation_epoch++;
    advance(fx, 100);
    /* Spread by free capacity (2 vs 100), never past the effective one. */
    uint32_t u1 = assigned_users(fx, RUN, "w1", NULL), u2 = assigned_users(fx, RUN, "w2", NULL);
    assert_true(u1 <= 2);
    assert_int_equal(u1 + u2, 10);
    assert_string_equal(fx->proposed[fx->n_proposed - 1].reason, "generator saturated;");
}


/* A run the previous leader was stopping waits for its workers' final
 * batches through the adoption grace instead of finishing at once. */
static void test_adopted_stopping_run_waits_for_its_workers(void **state)
{
    fixture_t *fx = *state;
    store_running(fx);
    store_share(fx, "w1", 3, 10);
    Lc__RunState rs = LC__RUN_STATE__INIT;
    rs.run = RUN;
    rs.state = "stopping";
    rs.at_ms = fx->wall;
    rs.reason = "duration reached";
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_RUN_STATE;
    cmd.run_state = &rs;
    assert_int_equal(store_apply(fx->store, &cmd), 0);
    fleet_worker_t *w1 = add_worker(fx, "w1", 100);
    runs_on_leader(fx->runs, true);
    advance(fx, 100);
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_RUN_FINISHED, NULL), 0);
    Lc__RunLoad load, *loads[1];
    Lc__Hello hello;
    hello_with(w1, &load, loads, &hello, 3, 0);
    runs_on_worker_join(fx->runs, w1, &hello);
    runs_on_final_committed(fx->runs, RUN, "w1");
    advance(fx, 100);
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_RUN_FINISHED, NULL), 0); /* grace */
    advance(fx, 2 * 1000 + 5000);
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_RUN_FINISHED, "finished"), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lifecycle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_final_batch_missing_at_deadline, setup, teardown),
        cmocka_unit_test_setup_teardown(test_worker_lost_mid_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_worker_back_without_its_share, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusal_fails_the_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_adoption_keeps_workers_running, setup, teardown),
        cmocka_unit_test_setup_teardown(test_adopted_run_without_workers_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_adopted_run_whose_finals_came_back_finishes, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_adopted_run_missing_a_final_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hello_with_unknown_run_is_stopped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_before_start, setup, teardown),
        cmocka_unit_test_setup_teardown(test_follower_does_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_saturation_reschedules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_worker_done_finishes_the_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_adopted_stopping_run_waits_for_its_workers, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
