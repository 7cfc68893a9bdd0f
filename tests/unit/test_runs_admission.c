/* test_runs_admission.c — the run controller (master/runs/runs.c) and what a worker may speak
 * for: stats batches, feeder lease requests, refusals and claims of runs it does not hold
 * (runs_fixture.h). */
#include "runs_fixture.h"

/* ---- what a worker may speak for (issue 12) ------------------------------ */

static Lc__StatsBatch batch_of(Lc__EndpointStats *ep, Lc__EndpointStats **eps, uint64_t run)
{
    lc__endpoint_stats__init(ep);
    ep->name = "a";
    ep->method = "GET";
    ep->count = 7;
    ep->failures = 1;
    eps[0] = ep;
    Lc__StatsBatch b = LC__STATS_BATCH__INIT;
    b.run = run;
    b.worker_id = "w1";
    b.seq = 1;
    b.interval = 1;
    b.endpoints = eps;
    b.n_endpoints = 1;
    return b;
}

static void test_stats_admission(void **state)
{
    fixture_t *fx = *state;
    start_on_two(fx);
    fleet_worker_t *w1 = find(fx, "w1"), *w3 = add_worker(fx, "w3", 100);
    Lc__EndpointStats ep, *eps[1];
    Lc__StatsBatch b = batch_of(&ep, eps, RUN);
    assert_int_equal(runs_admit_stats(fx->runs, w1, &b), RUNS_ADMIT);
    /* a worker with no share of the run */
    assert_int_equal(runs_admit_stats(fx->runs, w3, &b), RUNS_REFUSE);
    /* another run, not active */
    b.run = 42;
    assert_int_equal(runs_admit_stats(fx->runs, w1, &b), RUNS_REFUSE);
    b.run = RUN;
    /* the plan has no such endpoint, or not with that method */
    ep.name = "b";
    assert_int_equal(runs_admit_stats(fx->runs, w1, &b), RUNS_REFUSE);
    ep.name = "a";
    ep.method = "POST";
    assert_int_equal(runs_admit_stats(fx->runs, w1, &b), RUNS_REFUSE);
    ep.method = "GET";
    /* counts that do not fit, or more failures than requests */
    ep.count = (uint64_t)INT64_MAX + 5;
    assert_int_equal(runs_admit_stats(fx->runs, w1, &b), RUNS_REFUSE);
    ep.count = 1;
    ep.failures = 2;
    assert_int_equal(runs_admit_stats(fx->runs, w1, &b), RUNS_REFUSE);
    ep.failures = 0;
    /* a second far past the run's elapsed time (0.1 s) */
    b.interval = 3600;
    assert_int_equal(runs_admit_stats(fx->runs, w1, &b), RUNS_REFUSE);
    b.interval = 1;
    /* an error kind the protocol does not have */
    Lc__ErrorCount err = LC__ERROR_COUNT__INIT, *errs[1] = {&err};
    err.endpoint = "a";
    err.kind = "pwned";
    err.count = 1;
    b.errors = errs;
    b.n_errors = 1;
    assert_int_equal(runs_admit_stats(fx->runs, w1, &b), RUNS_REFUSE);
    err.kind = "timeout";
    assert_int_equal(runs_admit_stats(fx->runs, w1, &b), RUNS_ADMIT);
    assert_int_equal(runs_refused(fx->runs).stats, 8);

    /* once the run is over, a batch is refused but may be acknowledged */
    advance(fx, 10000);
    runs_on_final_committed(fx->runs, RUN, "w1");
    runs_on_final_committed(fx->runs, RUN, "w2");
    advance(fx, 100);
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_RUN_FINISHED, "finished"), 1);
    assert_int_equal(runs_admit_stats(fx->runs, w1, &b), RUNS_REFUSE_OVER);
}

/* A FeedRequest of worker for seq (count rows). */
static void ask_rows(fixture_t *fx, const char *worker, uint32_t feeder, uint64_t seq)
{
    Lc__FeedRequest req = LC__FEED_REQUEST__INIT;
    req.run = RUN;
    req.feeder = feeder;
    req.seq = seq;
    req.count = 1000;
    runs_on_feed_request(fx->runs, find(fx, worker), &req);
}

static const sent_t *last_sent(const fixture_t *fx)
{
    assert_true(fx->n_sent > 0);
    return &fx->sent[fx->n_sent - 1];
}

/* Feed requests: a stranger or an unknown feeder gets nothing; a sharer's lease is bounded
 * by its share of the rows left and sent once committed; its seq again gets the same lease
 * and no new rows, an older seq nothing; one LeaseRows in flight and one per 100 ms. */
static void test_feed_leases(void **state)
{
    fixture_t *fx = *state;
    run_json = feed_scenario;
    start_on_two(fx); /* 5 users each */
    add_worker(fx, "w3", 100);
    ask_rows(fx, "w3", 0, 1);
    ask_rows(fx, "w1", 1, 1);
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_LEASE_ROWS, NULL), 0);
    assert_int_equal(runs_refused(fx->runs).feeds, 2);
    ask_rows(fx, "w1", 0, 7);
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_LEASE_ROWS, NULL), 1);
    size_t sent = fx->n_sent;
    advance(fx, 10);
    assert_int_equal(fx->n_sent, sent + 1);
    assert_true(last_sent(fx)->lease);
    assert_int_equal(last_sent(fx)->seq, 7);
    assert_int_equal(last_sent(fx)->start, 0);
    assert_int_equal(last_sent(fx)->users, 20); /* half the 40 rows: half the users */
    ask_rows(fx, "w1", 0, 7); /* a replay: the same lease, no rows */
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_LEASE_ROWS, NULL), 1);
    assert_int_equal(last_sent(fx)->start, 0);
    assert_int_equal(last_sent(fx)->users, 20);
    ask_rows(fx, "w1", 0, 6); /* older */
    assert_int_equal(runs_refused(fx->runs).feeds, 3);
    ask_rows(fx, "w2", 0, 3);
    ask_rows(fx, "w2", 0, 4); /* one in flight */
    advance(fx, 10);
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_LEASE_ROWS, NULL), 2);
    assert_int_equal(last_sent(fx)->start, 20);
    assert_int_equal(last_sent(fx)->users, 10);
    ask_rows(fx, "w2", 0, 4); /* 10 ms after the last: too soon */
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_LEASE_ROWS, NULL), 2);
    advance(fx, 100);
    ask_rows(fx, "w2", 0, 4);
    advance(fx, 10);
    assert_int_equal(count_proposals(fx, LC__COMMAND__CMD_LEASE_ROWS, NULL), 3);
    assert_int_equal(last_sent(fx)->start, 30);
    assert_int_equal(last_sent(fx)->users, 5);
}

static void test_refusal_from_a_stranger_changes_nothing(void **state)
{
    fixture_t *fx = *state;
    char buf[16];
    start_on_two(fx);
    fleet_worker_t *w3 = add_worker(fx, "w3", 100);
    runs_on_assign_refused(fx->runs, w3, RUN, "forged");
    assert_string_equal(stored_state(fx, RUN, buf, sizeof buf), "running");
    assert_int_equal(runs_refused(fx->runs).refusals, 1);
}

/* A claim in Hello: only of the worker's own share, at a generation the
 * leader could have sent (2^64-1 would wrap the run's generation). */
static void test_hostile_claims_are_refused(void **state)
{
    fixture_t *fx = *state;
    store_running(fx);
    store_share(fx, "w1", 5, 10);
    fleet_worker_t *w1 = add_worker(fx, "w1", 100), *w9 = add_worker(fx, "w9", 100);
    runs_on_leader(fx->runs, true);
    Lc__RunLoad load, *loads[1];
    Lc__Hello hello;
    hello_with(w1, &load, loads, &hello, UINT64_MAX, 10);
    runs_on_worker_join(fx->runs, w1, &hello);
    assert_int_equal(count_stops(fx, RUN), 1);
    assert_string_equal(fx->sent[fx->n_sent - 1].reason, "claimed generation was never assigned");
    hello_with(w9, &load, loads, &hello, 1, 5);
    runs_on_worker_join(fx->runs, w9, &hello);
    assert_string_equal(fx->sent[fx->n_sent - 1].reason, "this worker holds no share of the run");
    hello_with(w1, &load, loads, &hello, 5, 1000);
    runs_on_worker_join(fx->runs, w1, &hello);
    assert_string_equal(fx->sent[fx->n_sent - 1].reason, "claimed users exceed the run's");
    assert_int_equal(runs_refused(fx->runs).claims, 3);
    /* the honest claim is adopted; after the grace, assignments go on from
     * generation 6, not from a wrapped one */
    hello_with(w1, &load, loads, &hello, 5, 10);
    runs_on_worker_join(fx->runs, w1, &hello);
    advance(fx, 2 * 1000 + 5000);
    advance(fx, 100);
    uint64_t gen = 0;
    assigned_users(fx, RUN, "w9", &gen);
    assert_int_equal(gen, 6);
}


int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_stats_admission, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusal_from_a_stranger_changes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_claims_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_feed_leases, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
