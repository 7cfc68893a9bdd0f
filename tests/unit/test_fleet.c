/* test_fleet.c — the fleet's handshake through its transport seam (fleet.h): Challenge,
 * Hello, Welcome, Redirect, JoinRefused, the join secret, a worker id that connects again,
 * and a transport that reports a close at once (fleet_fixture.h); heartbeats, stats,
 * messages, liveness and leadership are in test_fleet_traffic.c. */
#include "fleet_fixture.h"

static int setup_secret(void **state)
{
    return setup_with(state, true);
}

static const uint8_t *nonce_of(const fake_conn_t *fc)
{
    const Lc__Envelope *env = sent(fc, 0, LC__ENVELOPE__MSG_CHALLENGE);
    assert_int_equal(env->challenge->nonce.len, LC_JOIN_NONCE_LEN);
    return env->challenge->nonce.data;
}

/* The state of a connection the fleet refused before any worker existed. */
static void assert_refused_no_worker(fixture_t *fx, const fake_conn_t *fc)
{
    assert_int_equal(fc->closes, 1);
    assert_true(fleet_conn_closing(fc->c));
    size_t n;
    fleet_known(fx->f, &n);
    assert_int_equal(n, 0);
    assert_int_equal(fleet_count_connected(fx->f), 0);
    assert_int_equal(fx->joins, 0);
}

/* ---- the handshake ------------------------------------------------------- */

static void test_open_sends_challenge(void **state)
{
    fixture_t *fx = *state;
    fake_conn_t *a = open_conn(fx, 0), *b = open_conn(fx, 0);
    assert_int_equal(a->n_sent, 1);
    assert_int_equal(b->n_sent, 1);
    assert_int_equal(fleet_conn_count(fx->f), 2);
    assert_false(fleet_conn_closing(a->c));
    /* each connection its own nonce */
    assert_memory_not_equal(nonce_of(a), nonce_of(b), LC_JOIN_NONCE_LEN);
}

static void test_first_frame_not_hello_closes(void **state)
{
    fixture_t *fx = *state;
    fleet_set_accepting(fx->f, true, 1, 7);
    fake_conn_t *fc = open_conn(fx, 0);
    log_begin(fx);
    bool closing = heartbeat(fc, 10.0, 1, 1, 5);
    const char *log = log_end(fx);
    assert_true(closing);
    assert_logged(log, "expected Hello as the first frame");
    assert_int_equal(fc->n_sent, 1); /* the Challenge only */
    assert_refused_no_worker(fx, fc);
    /* frames already read after the close are dropped (and freed) */
    assert_true(hello(fc, "w1", 6));
    assert_int_equal(fc->n_sent, 1);
    assert_int_equal(fx->joins, 0);
    flush_closes(fx);
    assert_int_equal(fleet_conn_count(fx->f), 0);
}

static void assert_welcome(const fake_conn_t *fc, size_t i, const char *const *masters, size_t n)
{
    const Lc__Welcome *w = sent(fc, i, LC__ENVELOPE__MSG_WELCOME)->welcome;
    assert_int_equal(w->leader_id, 1);
    assert_int_equal(w->term, 7);
    assert_int_equal(w->heartbeat_ms, HEARTBEAT_MS);
    assert_int_equal(w->stats_interval_ms, STATS_MS);
    assert_int_equal(w->n_masters, n);
    for (size_t j = 0; j < n; j++)
        assert_string_equal(w->masters[j], masters[j]);
}

static void test_hello_while_accepting_welcomes(void **state)
{
    fixture_t *fx = *state;
    fx->masters[0] = "10.0.0.100:5557";
    fx->masters[1] = "10.0.0.101:5557";
    fx->masters[2] = "10.0.0.102:5557";
    fx->n_masters = 3;
    fleet_set_accepting(fx->f, true, 1, 7);
    fake_conn_t *fc = open_conn(fx, 0);
    Lc__RunLoad load = LC__RUN_LOAD__INIT, *running[] = {&load};
    load.run = 5;
    load.generation = 2;
    load.users = 10;
    load.connections = 3;
    Lc__Hello h = hello_for("w1");
    h.threads = 4;
    h.capacity = 250;
    h.running = running;
    h.n_running = 1;
    assert_false(hello_send(fc, &h, 42));

    assert_int_equal(fc->n_sent, 2);
    assert_welcome(fc, 1, fx->masters, 3);
    assert_int_equal(fc->closes, 0);
    assert_int_equal(fx->joins, 1);
    assert_int_equal(fx->joined_running, 1);
    fleet_worker_t *w = fleet_find(fx->f, "w1");
    assert_non_null(w);
    assert_ptr_equal(fx->joined, w);
    assert_ptr_equal(w->conn, fc->c);
    assert_string_equal(w->name, "host-a");
    assert_string_equal(w->address, "10.0.0.1:40000");
    assert_int_equal(w->threads, 4);
    assert_int_equal(w->sat.capacity, 250);
    assert_int_equal(w->sat.effective_capacity, 250);
    assert_false(w->sat.saturated);
    assert_int_equal(w->last_seen_ms, 42);
    assert_int_equal(w->n_loads, 1);
    assert_int_equal(w->loads[0].run, 5);
    assert_int_equal(w->loads[0].generation, 2);
    assert_int_equal(w->loads[0].users, 10);
    assert_int_equal(w->loads[0].connections, 3);
    size_t n;
    fleet_worker_t **connected = fleet_connected(fx->f, &n);
    assert_int_equal(n, 1);
    assert_ptr_equal(connected[0], w);
    assert_null(fleet_find(fx->f, "w2"));

    /* no master list from the event: the advertise address */
    fx->n_masters = 0;
    fake_conn_t *fc2 = open_conn(fx, 50);
    assert_false(hello(fc2, "w2", 50));
    const char *advertise[] = {"10.0.0.100:5557"};
    assert_welcome(fc2, 1, advertise, 1);
    assert_int_equal(fx->joins, 2);
    connected = fleet_connected(fx->f, &n);
    assert_int_equal(n, 2);
    assert_string_equal(connected[0]->id, "w1"); /* join order */
    assert_string_equal(connected[1]->id, "w2");
}

static void test_hello_while_not_accepting_redirects(void **state)
{
    fixture_t *fx = *state;
    fleet_set_accepting(fx->f, false, 2, 8);
    fx->leader = "10.0.0.102:5557";
    fake_conn_t *fc = open_conn(fx, 0);
    assert_true(hello(fc, "w1", 1));
    assert_int_equal(fc->n_sent, 2);
    assert_string_equal(sent(fc, 1, LC__ENVELOPE__MSG_REDIRECT)->redirect->leader,
                        "10.0.0.102:5557");
    assert_refused_no_worker(fx, fc);

    /* During an election: the Hello waits for a leader instead of being closed... */
    fx->leader = NULL;
    fake_conn_t *fc2 = open_conn(fx, 0), *fc3 = open_conn(fx, 0);
    assert_false(hello(fc2, "w1", 10));
    assert_false(hello(fc3, "w2", 10));
    fleet_tick(fx->f, 1000);
    assert_int_equal(fc2->closes, 0);
    assert_int_equal(fc2->n_sent, 1); /* the Challenge only */
    assert_int_equal(fx->joins, 0);
    /* ...and is sent on at the first tick that knows one. */
    fx->leader = "10.0.0.103:5557";
    fleet_tick(fx->f, 1250);
    assert_string_equal(sent(fc2, 1, LC__ENVELOPE__MSG_REDIRECT)->redirect->leader,
                        "10.0.0.103:5557");
    assert_refused_no_worker(fx, fc2);
    assert_refused_no_worker(fx, fc3);

    /* With no leader for PARK_MAX_MS (3 s), it is closed and the worker backs off. */
    fx->leader = NULL;
    fake_conn_t *fc4 = open_conn(fx, 2000);
    assert_false(hello(fc4, "w1", 2000));
    fleet_tick(fx->f, 5000);
    assert_int_equal(fc4->closes, 0);
    log_begin(fx);
    fleet_tick(fx->f, 5001);
    const char *log = log_end(fx);
    assert_logged(log, "no leader known yet");
    assert_int_equal(fc4->n_sent, 1); /* no Redirect */
    assert_refused_no_worker(fx, fc4);
}

/* At most 128 Hellos wait for a leader at once; the next is closed at once. */
static void test_parked_hellos_bounded(void **state)
{
    fixture_t *fx = *state;
    fleet_set_accepting(fx->f, false, 2, 8);
    fx->leader = NULL;
    for (int i = 0; i < 128; i++) {
        char id[16];
        snprintf(id, sizeof id, "w%d", i);
        assert_false(hello(open_conn(fx, 0), id, 1));
    }
    fake_conn_t *extra = open_conn(fx, 0);
    log_begin(fx);
    assert_true(hello(extra, "w-extra", 1));
    assert_logged(log_end(fx), "no leader known yet");
}

static void test_bad_hellos_close(void **state)
{
    fixture_t *fx = *state;
    fleet_set_accepting(fx->f, true, 1, 7);
    char id65[66];
    memset(id65, 'x', 65);
    id65[65] = '\0';
    struct {
        const char *id;
        uint32_t version, threads;
        const char *reason;
    } cases[] = {
        {"w1", LC_PROTOCOL_VERSION + 1, 2, "unsupported protocol version"},
        {"w1", 0, 2, "unsupported protocol version"},
        {"", LC_PROTOCOL_VERSION, 2, "worker id must be 1 to 64 characters"},
        {id65, LC_PROTOCOL_VERSION, 2, "worker id must be 1 to 64 characters"},
        {"a b", LC_PROTOCOL_VERSION, 2, "worker id has characters other than printable ASCII"},
        {"a\"b", LC_PROTOCOL_VERSION, 2, "worker id has characters other than printable ASCII"},
        {"a\x7f", LC_PROTOCOL_VERSION, 2, "worker id has characters other than printable ASCII"},
        {"w1", LC_PROTOCOL_VERSION, 0, "threads must be 1 to 4096"},
    };
    _Static_assert(sizeof cases / sizeof cases[0] <= MAX_CONNS, "one connection per case");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fake_conn_t *fc = open_conn(fx, 0);
        Lc__Hello h = hello_for(cases[i].id);
        h.protocol_version = cases[i].version;
        h.threads = cases[i].threads;
        log_begin(fx);
        bool closing = hello_send(fc, &h, 1);
        const char *log = log_end(fx);
        assert_true(closing);
        assert_logged(log, cases[i].reason);
        assert_int_equal(fc->n_sent, 1); /* neither Welcome nor JoinRefused */
        assert_refused_no_worker(fx, fc);
        flush_closes(fx);
    }
    assert_int_equal(fleet_conn_count(fx->f), 0);
}

/* The limits themselves are accepted: a 64-character id, 4096 threads. */
static void test_hello_limits_accepted(void **state)
{
    fixture_t *fx = *state;
    fleet_set_accepting(fx->f, true, 1, 7);
    char id64[65];
    memset(id64, 'x', 64);
    id64[64] = '\0';
    fake_conn_t *fc = open_conn(fx, 0);
    Lc__Hello h = hello_for(id64);
    h.threads = 4096;
    assert_false(hello_send(fc, &h, 1));
    sent(fc, 1, LC__ENVELOPE__MSG_WELCOME);
    assert_non_null(fleet_find(fx->f, id64));

    fake_conn_t *fc2 = open_conn(fx, 0);
    h = hello_for("w2");
    h.threads = 4097;
    assert_true(hello_send(fc2, &h, 1));
    assert_null(fleet_find(fx->f, "w2"));
}

static void test_join_secret(void **state)
{
    fixture_t *fx = *state;
    fleet_set_accepting(fx->f, true, 1, 7);

    fake_conn_t *none = open_conn(fx, 0);
    assert_true(hello(none, "w1", 1));
    assert_int_equal(none->n_sent, 2);
    assert_string_equal(sent(none, 1, LC__ENVELOPE__MSG_JOIN_REFUSED)->join_refused->reason,
                        "this cluster requires a join secret");
    assert_refused_no_worker(fx, none);

    uint8_t wrong[LC_JOIN_PROOF_LEN] = {0};
    fake_conn_t *bad = open_conn(fx, 0);
    Lc__Hello h = hello_for("w1");
    h.join_proof.data = wrong;
    h.join_proof.len = sizeof wrong;
    assert_true(hello_send(bad, &h, 1));
    assert_string_equal(sent(bad, 1, LC__ENVELOPE__MSG_JOIN_REFUSED)->join_refused->reason,
                        "join proof does not match the cluster's secret");
    assert_refused_no_worker(fx, bad);

    /* the right proof for another connection's nonce is a replay */
    fake_conn_t *good = open_conn(fx, 0), *replay = open_conn(fx, 0);
    uint8_t proof[LC_JOIN_PROOF_LEN];
    assert_int_equal(
        lc_join_proof_for(&fx->secret, nonce_of(good), LC_JOIN_NONCE_LEN, "w1", proof), 0);
    h.join_proof.data = proof;
    h.join_proof.len = sizeof proof;
    assert_true(hello_send(replay, &h, 1));
    sent(replay, 1, LC__ENVELOPE__MSG_JOIN_REFUSED);
    assert_refused_no_worker(fx, replay);

    /* a proof of the wrong length */
    fake_conn_t *shortp = open_conn(fx, 0);
    uint8_t short_proof[LC_JOIN_PROOF_LEN];
    assert_int_equal(
        lc_join_proof_for(&fx->secret, nonce_of(shortp), LC_JOIN_NONCE_LEN, "w1", short_proof), 0);
    h.join_proof.data = short_proof;
    h.join_proof.len = sizeof short_proof - 1;
    assert_true(hello_send(shortp, &h, 1));
    sent(shortp, 1, LC__ENVELOPE__MSG_JOIN_REFUSED);
    assert_refused_no_worker(fx, shortp);

    /* the right nonce, but the proof made for another worker id */
    fake_conn_t *other = open_conn(fx, 0);
    uint8_t other_proof[LC_JOIN_PROOF_LEN];
    assert_int_equal(
        lc_join_proof_for(&fx->secret, nonce_of(other), LC_JOIN_NONCE_LEN, "w2", other_proof), 0);
    h.join_proof.data = other_proof;
    assert_true(hello_send(other, &h, 1));
    assert_string_equal(sent(other, 1, LC__ENVELOPE__MSG_JOIN_REFUSED)->join_refused->reason,
                        "join proof does not match the cluster's secret");
    assert_refused_no_worker(fx, other);

    h.join_proof.data = proof;
    h.join_proof.len = sizeof proof;
    assert_false(hello_send(good, &h, 1));
    assert_int_equal(good->n_sent, 2);
    sent(good, 1, LC__ENVELOPE__MSG_WELCOME);
    assert_int_equal(good->closes, 0);
    assert_int_equal(fx->joins, 1);
    assert_ptr_equal(fleet_find(fx->f, "w1")->conn, good->c);
}

/* A live worker keeps its id: a second connection claiming it is refused.
 * One silent for a heartbeat interval (restarted, half-open) is replaced. */
static void test_same_worker_id_replaces_connection(void **state)
{
    fixture_t *fx = *state;
    fleet_set_accepting(fx->f, true, 1, 7);
    fake_conn_t *first = open_conn(fx, 0), *thief = open_conn(fx, 0), *second = open_conn(fx, 0);
    assert_false(hello(first, "w1", 1));
    fleet_worker_t *w = fleet_find(fx->f, "w1");
    assert_ptr_equal(w->conn, first->c);
    log_begin(fx);
    assert_true(hello(thief, "w1", 1 + HEARTBEAT_MS));
    const char *log = log_end(fx);
    assert_logged(log, "worker id already connected and alive");
    assert_string_equal(sent(thief, 1, LC__ENVELOPE__MSG_JOIN_REFUSED)->join_refused->reason,
                        "this worker id is connected from another address");
    assert_int_equal(first->closes, 0);
    assert_ptr_equal(w->conn, first->c);
    log_begin(fx);
    bool closing = hello(second, "w1", 2 + HEARTBEAT_MS);
    log = log_end(fx);
    assert_false(closing);
    assert_logged(log, "replaced by a new connection of the same worker");
    assert_int_equal(first->closes, 1);
    assert_int_equal(second->closes, 0);
    sent(second, 1, LC__ENVELOPE__MSG_WELCOME);
    assert_ptr_equal(fleet_find(fx->f, "w1"), w); /* the same worker, not a second one */
    assert_ptr_equal(w->conn, second->c);
    assert_int_equal(w->last_seen_ms, 2 + HEARTBEAT_MS);
    assert_int_equal(fx->joins, 2);
    /* the first connection's close callback does not disconnect the worker */
    flush_closes(fx);
    assert_ptr_equal(w->conn, second->c);
    size_t n;
    fleet_known(fx->f, &n);
    assert_int_equal(n, 1);
    assert_int_equal(fleet_count_connected(fx->f), 1);
    assert_int_equal(fleet_conn_count(fx->f), 1);
}

/* An attacker (or a confused worker) says Hello as A and then as B on one
 * connection; after the disconnect A must not keep a pointer to it. */
static void test_second_hello_other_id_same_conn(void **state)
{
    fixture_t *fx = *state;
    /* Issue 12: this was a heap-use-after-free (A->conn left pointing at the
     * freed connection). A connection now speaks for one worker id. */
    fleet_set_accepting(fx->f, true, 1, 7);
    fake_conn_t *fc = open_conn(fx, 0);
    assert_false(hello(fc, "A", 1));
    log_begin(fx);
    assert_true(hello(fc, "B", 2));
    assert_logged(log_end(fx), "a second Hello on a joined connection");
    assert_null(fleet_find(fx->f, "B"));
    fleet_conn_close(fc->c, "test: disconnect");
    flush_closes(fx);
    fleet_tick(fx->f, 2 + 3 * HEARTBEAT_MS + 1);
    size_t n;
    fleet_known(fx->f, &n);
    json_t *list = fleet_workers_json(fx->f);
    assert_non_null(list);
    assert_int_equal(json_array_size(list), n);
    json_decref(list);
    /* whatever the fix (refuse the second Hello, or move the connection),
     * both are silent past the limit and gone, and nothing is connected */
    assert_int_equal(n, 0);
    assert_int_equal(fleet_count_connected(fx->f), 0);
    assert_false(fx->lost_had_conn);
}

/* fleet.h allows a transport to call fleet_conn_gone from close "at once":
 * the loops that close several connections survive it. */
static void test_gone_at_once_from_tick_and_leadership(void **state)
{
    fixture_t *fx = *state;
    fx->gone_at_once = true;
    fleet_set_accepting(fx->f, true, 1, 7);
    fake_conn_t *silent1 = open_conn(fx, 0), *silent2 = open_conn(fx, 0);
    fake_conn_t *a = open_conn(fx, 0), *b = open_conn(fx, 0), *c = open_conn(fx, 0);
    assert_false(hello(a, "A", 0));
    assert_false(hello(b, "B", 0));
    assert_false(hello(c, "C", 0));
    /* replacing B's connection frees the old one at once */
    fake_conn_t *b2 = open_conn(fx, 0);
    assert_false(hello(b2, "B", HEARTBEAT_MS + 1)); /* B silent for an interval */
    assert_true(b->gone);
    assert_ptr_equal(fleet_find(fx->f, "B")->conn, b2->c);
    heartbeat(c, 1.0, 1, 0, 5000);
    heartbeat(b2, 1.0, 1, 0, 5000);
    fleet_tick(fx->f, 5001); /* two silent connections and A, all freed in the loop */
    assert_true(silent1->gone && silent2->gone && a->gone);
    assert_int_equal(fx->lost, 1);
    assert_string_equal(fx->lost_id, "A");
    assert_int_equal(fleet_conn_count(fx->f), 2);
    fleet_set_accepting(fx->f, false, 2, 8);
    assert_true(c->gone && b2->gone);
    assert_int_equal(fleet_conn_count(fx->f), 0);
    size_t n;
    fleet_known(fx->f, &n);
    assert_int_equal(n, 2);
}

/* ...but a frame that makes fleet_conn_receive close its connection does not. */
static void test_gone_at_once_from_receive(void **state)
{
    fixture_t *fx = *state;
    /* This was a heap-use-after-free (fleet_conn_receive read c after the
     * close it caused freed it); the free now waits for the dispatch's end. */
    fx->gone_at_once = true;
    fleet_set_accepting(fx->f, true, 1, 7);
    fake_conn_t *fc = open_conn(fx, 0);
    assert_true(heartbeat(fc, 1.0, 1, 0, 1)); /* not Hello: closed */
    assert_true(fc->gone);
    assert_int_equal(fleet_conn_count(fx->f), 0);
}


int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_open_sends_challenge, setup, teardown),
        cmocka_unit_test_setup_teardown(test_first_frame_not_hello_closes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hello_while_accepting_welcomes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hello_while_not_accepting_redirects, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parked_hellos_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_hellos_close, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hello_limits_accepted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_join_secret, setup_secret, teardown),
        cmocka_unit_test_setup_teardown(test_same_worker_id_replaces_connection, setup, teardown),
        cmocka_unit_test_setup_teardown(test_second_hello_other_id_same_conn, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gone_at_once_from_tick_and_leadership, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_gone_at_once_from_receive, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

