/* test_fleet_traffic.c — the fleet after the handshake, through its transport seam
 * (fleet.h, fleet_fixture.h): heartbeats and saturation, stats and refusals, the messages
 * to a worker, liveness (no Hello, a silent worker), heartbeat delays and losing leadership. */
#include "fleet_fixture.h"
#include "lc_clock.h"

static bool stats_batch(fake_conn_t *fc, const char *worker_id, uint64_t run, uint64_t seq)
{
    Lc__StatsBatch sb = LC__STATS_BATCH__INIT;
    sb.run = run;
    sb.worker_id = (char *)worker_id;
    sb.seq = seq;
    sb.interval = 1;
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_STATS;
    env.stats = &sb;
    return receive(fc, &env, 10);
}

static json_t *worker_json(fixture_t *fx, json_t *list, const char *id)
{
    size_t i;
    json_t *row;
    json_array_foreach(list, i, row)
        if (strcmp(json_string_value(json_object_get(row, "id")), id) == 0)
            return row;
    fail_msg("no worker %s in fleet_workers_json", id);
    return NULL;
}

/* ---- heartbeats, stats, refusals ----------------------------------------- */

/* A heartbeat the worker says it sent at sent_ms (its clock), received at now_ms. */
static void heartbeat_sent_at(fake_conn_t *fc, uint64_t sent_ms, uint64_t now_ms)
{
    Lc__Heartbeat hb = LC__HEARTBEAT__INIT;
    hb.time_ms = sent_ms;
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_HEARTBEAT;
    env.heartbeat = &hb;
    assert_false(receive(fc, &env, now_ms));
}

/* The delay is measured against the connection's fastest heartbeat, so the worker's clock
 * offset (here: a clock 10^6 ms behind, then 2*10^6) cancels out; a heartbeat 500 s late by
 * its own clock shows 500 s (within the milliseconds the test takes), a lying one is capped. */
static void test_heartbeat_delay(void **state)
{
    fixture_t *fx = *state;
    fleet_set_accepting(fx->f, true, 1, 7);
    fake_conn_t *fc = open_conn(fx, 0);
    assert_false(hello(fc, "w1", 0));
    const lc_worst_t *d = fleet_heartbeat_delay(fx->f);
    uint64_t wall = lc_wall_ms();
    heartbeat_sent_at(fc, wall - 1000000, 1000);
    heartbeat_sent_at(fc, wall - 1000000 + 1000, 2000); /* sent 1 s later: faster, the new least */
    assert_true(lc_worst_max(d) < 1000);                /* the test's own milliseconds */
    heartbeat_sent_at(fc, wall - 1000000 + 1000 - 500000, 3000);
    assert_true(lc_worst_max(d) >= 500000 && lc_worst_max(d) < 505000);
    assert_true(lc_worst_recent(d) >= 500000);
    heartbeat_sent_at(fc, 1, 4000); /* sent "in 1970" */
    assert_int_equal(lc_worst_max(d), 3600000);
}

static void test_heartbeat_updates_and_saturates(void **state)
{
    fixture_t *fx = *state;
    fleet_set_accepting(fx->f, true, 1, 7);
    fake_conn_t *fc = open_conn(fx, 0);
    assert_false(hello(fc, "w1", 0));
    fleet_worker_t *w = fleet_find(fx->f, "w1");
    assert_int_equal(fleet_saturation_epoch(fx->f), 0);

    assert_false(heartbeat(fc, 42.5, 123456789, 60, 1000));
    assert_true(w->cpu_percent == 42.5);
    assert_int_equal(w->rss_bytes, 123456789);
    assert_int_equal(w->last_seen_ms, 1000);
    assert_int_equal(w->n_loads, 1);
    assert_int_equal(w->loads[0].run, 5);
    assert_int_equal(w->loads[0].generation, 1);
    assert_int_equal(w->loads[0].users, 60);
    assert_int_equal(w->loads[0].connections, 120);
    assert_int_equal(fleet_saturation_epoch(fx->f), 0);

    assert_false(heartbeat(fc, 95.0, 1, 80, 2000));
    assert_false(heartbeat(fc, 95.0, 1, 80, 3000));
    assert_int_equal(fleet_saturation_epoch(fx->f), 0);
    assert_int_equal(w->sat.effective_capacity, 100);
    assert_false(heartbeat(fc, 95.0, 1, 80, 4000));
    assert_int_equal(fleet_saturation_epoch(fx->f), 1);
    assert_true(w->sat.saturated);
    assert_int_equal(w->sat.effective_capacity, 72); /* 90 % of the 80 users it runs */
    json_t *list = fleet_workers_json(fx->f);
    json_t *row = worker_json(fx, list, "w1");
    assert_int_equal(json_integer_value(json_object_get(row, "effective_capacity")), 72);
    assert_int_equal(json_integer_value(json_object_get(row, "capacity")), 100);
    assert_true(json_is_true(json_object_get(row, "saturated")));
    json_decref(list);

    /* warm heartbeats change nothing; cool ones give a step back */
    for (int i = 0; i < 5; i++)
        heartbeat(fc, 80.0, 1, 72, 5000 + (uint64_t)i);
    assert_int_equal(fleet_saturation_epoch(fx->f), 1);
    for (int i = 0; i < 3; i++)
        heartbeat(fc, 10.0, 1, 72, 6000 + (uint64_t)i);
    assert_int_equal(fleet_saturation_epoch(fx->f), 2);
    assert_int_equal(w->sat.effective_capacity, 82); /* 72 + max(28 / 4, 10) */
    assert_int_equal(fx->joins, 1);
    assert_int_equal(fc->n_sent, 2); /* a heartbeat is not answered */
}

static void test_stats_batch(void **state)
{
    fixture_t *fx = *state;
    fleet_set_accepting(fx->f, true, 1, 7);
    fake_conn_t *c1 = open_conn(fx, 0), *c2 = open_conn(fx, 0);
    assert_false(hello(c1, "w1", 0));
    assert_false(hello(c2, "w2", 0));
    assert_false(stats_batch(c1, "w1", 9, 4));
    assert_int_equal(fx->stats, 1);
    assert_ptr_equal(fx->stats_worker, fleet_find(fx->f, "w1"));
    assert_int_equal(fx->stats_run, 9);
    assert_int_equal(fx->stats_seq, 4);
    assert_int_equal(fleet_find(fx->f, "w1")->last_seen_ms, 10);

    log_begin(fx);
    bool closing = stats_batch(c2, "w1", 9, 5);
    const char *log = log_end(fx);
    assert_true(closing);
    assert_logged(log, "stats batch names another worker");
    assert_int_equal(fx->stats, 1);
    assert_int_equal(c2->closes, 1);
    assert_null(fleet_find(fx->f, "w2")->conn);
    assert_ptr_equal(fleet_find(fx->f, "w1")->conn, c1->c);
    assert_int_equal(fleet_count_connected(fx->f), 1);
}

static void test_assign_refused(void **state)
{
    fixture_t *fx = *state;
    fleet_set_accepting(fx->f, true, 1, 7);
    fake_conn_t *fc = open_conn(fx, 0);
    assert_false(hello(fc, "w1", 0));
    Lc__AssignRefused r = LC__ASSIGN_REFUSED__INIT;
    r.run = 9;
    r.generation = 3;
    r.reason = "scenario needs a feature this worker lacks";
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_ASSIGN_REFUSED;
    env.assign_refused = &r;
    assert_false(receive(fc, &env, 5));
    assert_int_equal(fx->refused, 1);
    assert_ptr_equal(fx->refused_worker, fleet_find(fx->f, "w1"));
    assert_int_equal(fx->refused_run, 9);
    assert_int_equal(fx->refused_generation, 3);
    assert_string_equal(fx->refused_reason, "scenario needs a feature this worker lacks");
    assert_int_equal(fc->closes, 0);
}

/* ---- messages to a worker ------------------------------------------------ */

static void test_send_to_connected_worker(void **state)
{
    fixture_t *fx = *state;
    fleet_set_accepting(fx->f, true, 1, 7);
    fake_conn_t *fc = open_conn(fx, 0);
    assert_false(hello(fc, "w1", 0));
    fleet_assign_t a = {.run = 11, .generation = 2, .users = 30, .spawn_rate = 2.5,
                        .rate = 7.25, .scenario_json = "{\"tasks\":[]}", .elapsed_ms = 1500};
    assert_int_equal(fleet_send_assign(fx->f, "w1", &a), 0);
    const Lc__Assign *as = sent(fc, 2, LC__ENVELOPE__MSG_ASSIGN)->assign;
    assert_int_equal(as->run, 11);
    assert_int_equal(as->generation, 2);
    assert_int_equal(as->users, 30);
    assert_true(as->spawn_rate == 2.5);
    assert_true(as->rate == 7.25);
    assert_string_equal(as->scenario_json, "{\"tasks\":[]}");
    assert_int_equal(as->elapsed_ms, 1500);

    assert_int_equal(fleet_send_stop(fx->f, "w1", 11, "stopped by user"), 0);
    const Lc__Stop *st = sent(fc, 3, LC__ENVELOPE__MSG_STOP)->stop;
    assert_int_equal(st->run, 11);
    assert_string_equal(st->reason, "stopped by user");

    assert_int_equal(fleet_send_ack(fx->f, "w1", 11, 77), 0);
    const Lc__StatsAck *ack = sent(fc, 4, LC__ENVELOPE__MSG_STATS_ACK)->stats_ack;
    assert_int_equal(ack->run, 11);
    assert_int_equal(ack->seq, 77);
    assert_int_equal(fc->n_sent, 5);

    json_t *list = fleet_workers_json(fx->f);
    json_t *runs = json_object_get(worker_json(fx, list, "w1"), "runs");
    assert_int_equal(json_array_size(runs), 1);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(runs, 0), "run")), 11);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(runs, 0), "users")), 30);
    assert_true(json_is_true(json_object_get(worker_json(fx, list, "w1"), "connected")));
    json_decref(list);
}

static void test_send_to_unknown_or_disconnected(void **state)
{
    fixture_t *fx = *state;
    fleet_set_accepting(fx->f, true, 1, 7);
    fleet_assign_t a = {.run = 12, .generation = 1, .users = 25, .scenario_json = "{}"};
    assert_int_equal(fleet_send_assign(fx->f, "nobody", &a), LC_ENOTFOUND);
    assert_int_equal(fleet_send_stop(fx->f, "nobody", 12, "x"), LC_ENOTFOUND);
    assert_int_equal(fleet_send_ack(fx->f, "nobody", 12, 1), LC_ENOTFOUND);
    assert_null(fleet_find(fx->f, "nobody")); /* the assign did not create it */

    fake_conn_t *fc = open_conn(fx, 0);
    assert_false(hello(fc, "w1", 0));
    fleet_conn_close(fc->c, NULL);
    /* disconnected as soon as the close starts, before the transport is done */
    assert_int_equal(fleet_send_stop(fx->f, "w1", 12, "x"), LC_ECLOSED);
    flush_closes(fx);
    assert_int_equal(fleet_send_assign(fx->f, "w1", &a), LC_ECLOSED);
    assert_int_equal(fleet_send_stop(fx->f, "w1", 12, "x"), LC_ECLOSED);
    assert_int_equal(fleet_send_ack(fx->f, "w1", 12, 1), LC_ECLOSED);
    assert_int_equal(fc->n_sent, 2); /* Challenge and Welcome only */

    json_t *list = fleet_workers_json(fx->f);
    json_t *row = worker_json(fx, list, "w1");
    assert_true(json_is_false(json_object_get(row, "connected")));
    json_t *runs = json_object_get(row, "runs");
    assert_int_equal(json_array_size(runs), 1);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(runs, 0), "run")), 12);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(runs, 0), "users")), 25);
    assert_int_equal(
        json_integer_value(json_object_get(json_array_get(runs, 0), "running_users")), 0);
    json_decref(list);

    /* users 0 forgets the share */
    a.users = 0;
    assert_int_equal(fleet_send_assign(fx->f, "w1", &a), LC_ECLOSED);
    assert_int_equal(fleet_find(fx->f, "w1")->n_assigned, 0);
}

/* ---- liveness and leadership --------------------------------------------- */

static void test_no_hello_within_5s(void **state)
{
    fixture_t *fx = *state;
    fleet_set_accepting(fx->f, true, 1, 7);
    fake_conn_t *plain = open_conn(fx, 1000), *tls = open_conn(fx, 1000);
    fake_conn_t *worker = open_conn(fx, 1000);
    tls->secured = false;
    assert_false(hello(worker, "w1", 1000));
    heartbeat(worker, 1.0, 1, 0, 5500);
    fleet_tick(fx->f, 6000); /* 5 s exactly: still in time */
    assert_int_equal(plain->closes, 0);
    assert_int_equal(tls->closes, 0);
    log_begin(fx);
    fleet_tick(fx->f, 6001);
    const char *log = log_end(fx);
    assert_int_equal(plain->closes, 1);
    assert_int_equal(tls->closes, 1);
    assert_int_equal(worker->closes, 0);
    assert_logged(log, "peer=10.0.0.1:40000 worker=- reason=\"no Hello within 5 s\"");
    assert_logged(log, "peer=10.0.0.2:40000 worker=- reason=\"no TLS handshake within 5 s");
    flush_closes(fx);
    assert_int_equal(fleet_conn_count(fx->f), 1);
    assert_int_equal(fleet_count_connected(fx->f), 1);
}

static void test_silent_worker_is_lost(void **state)
{
    fixture_t *fx = *state;
    fleet_set_accepting(fx->f, true, 1, 7);
    fake_conn_t *a = open_conn(fx, 0), *b = open_conn(fx, 0);
    assert_false(hello(a, "A", 0));
    assert_false(hello(b, "B", 0));
    heartbeat(b, 1.0, 1, 0, 2500);
    fleet_tick(fx->f, 3 * HEARTBEAT_MS); /* 3 intervals exactly: still alive */
    assert_int_equal(fx->lost, 0);
    log_begin(fx);
    fleet_tick(fx->f, 3 * HEARTBEAT_MS + 1);
    const char *log = log_end(fx);
    assert_logged(log, "reason=\"missed 3 heartbeats\"");
    assert_int_equal(fx->lost, 1);
    assert_string_equal(fx->lost_id, "A");
    assert_false(fx->lost_had_conn); /* closed before on_lost */
    assert_int_equal(a->closes, 1);
    assert_int_equal(b->closes, 0);
    assert_null(fleet_find(fx->f, "A"));
    size_t n;
    fleet_worker_t *const *known = fleet_known(fx->f, &n);
    assert_int_equal(n, 1);
    assert_string_equal(known[0]->id, "B");
    flush_closes(fx);
    fleet_tick(fx->f, 3 * HEARTBEAT_MS + 2);
    assert_int_equal(fx->lost, 1); /* once */

    /* a disconnected worker is lost the same way, on its last frame's clock */
    fleet_conn_close(b->c, NULL);
    flush_closes(fx);
    fleet_tick(fx->f, 2500 + 3 * HEARTBEAT_MS);
    assert_int_equal(fx->lost, 1);
    assert_non_null(fleet_find(fx->f, "B"));
    fleet_tick(fx->f, 2500 + 3 * HEARTBEAT_MS + 1);
    assert_int_equal(fx->lost, 2);
    assert_string_equal(fx->lost_id, "B");
    fleet_known(fx->f, &n);
    assert_int_equal(n, 0);
}

static void test_losing_leadership_closes_everything(void **state)
{
    fixture_t *fx = *state;
    fake_conn_t *early = open_conn(fx, 0);
    fleet_set_accepting(fx->f, false, 2, 6); /* not the leader, and was not */
    assert_int_equal(early->closes, 0);
    fleet_set_accepting(fx->f, true, 1, 7);
    assert_int_equal(early->closes, 0);
    fake_conn_t *a = open_conn(fx, 0), *b = open_conn(fx, 0);
    assert_false(hello(a, "A", 0));
    assert_false(hello(b, "B", 0));
    fleet_set_accepting(fx->f, true, 1, 7); /* still the leader: nothing */
    assert_int_equal(a->closes, 0);
    log_begin(fx);
    fleet_set_accepting(fx->f, false, 3, 8);
    const char *log = log_end(fx);
    assert_logged(log, "this master is no longer the leader");
    assert_int_equal(early->closes, 1);
    assert_int_equal(a->closes, 1);
    assert_int_equal(b->closes, 1);
    assert_int_equal(fleet_count_connected(fx->f), 0);
    size_t n;
    fleet_known(fx->f, &n);
    assert_int_equal(n, 2); /* disconnected, not lost */
    flush_closes(fx);
    assert_int_equal(fleet_conn_count(fx->f), 0);
    /* a new Hello now gets a Redirect */
    fx->leader = "10.0.0.103:5557";
    fake_conn_t *again = open_conn(fx, 10);
    assert_true(hello(again, "A", 10));
    sent(again, 1, LC__ENVELOPE__MSG_REDIRECT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_heartbeat_updates_and_saturates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_heartbeat_delay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stats_batch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_assign_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_send_to_connected_worker, setup, teardown),
        cmocka_unit_test_setup_teardown(test_send_to_unknown_or_disconnected, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_hello_within_5s, setup, teardown),
        cmocka_unit_test_setup_teardown(test_silent_worker_is_lost, setup, teardown),
        cmocka_unit_test_setup_teardown(test_losing_leadership_closes_everything, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

