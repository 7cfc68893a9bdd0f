/* test_runs.c — the run controller (master/runs/runs.c) driven through its
 * runs_io_t: a fake fleet and clocks, and a command sink that records each
 * proposal and applies it to a real in-memory store, as a commit would. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lc_err.h"
#include "runs.h"
#include "store.h"

#define RUN 1
#define MAX_EVENTS 64
#define MAX_WORKERS 4

/* 10 users for 10 s; request timeout 2 s, so the final-stats wait is 7 s. */
static const char scenario[] =
    "{\"name\":\"t\",\"target\":\"http://127.0.0.1:1\",\"duration\":\"10s\",\"users\":10,"
    "\"spawn_rate\":10,\"request_timeout_ms\":2000,\"tasks\":[{\"name\":\"a\",\"path\":\"/\"}]}";

/* The same with a sequential feeder of 40 rows (and journeys). */
static const char feed_scenario[] =
    "{\"name\":\"t\",\"target\":\"http://127.0.0.1:1\",\"duration\":\"10s\",\"users\":10,"
    "\"spawn_rate\":10,\"request_timeout_ms\":2000,\"feeders\":{\"f\":{\"mode\":\"per_iteration\","
    "\"on_exhausted\":\"stop_user\",\"csv\":\"a\\n0\\n1\\n2\\n3\\n4\\n5\\n6\\n7\\n8\\n9\\n10\\n11\\n12\\n"
    "13\\n14\\n15\\n16\\n17\\n18\\n19\\n20\\n21\\n22\\n23\\n24\\n25\\n26\\n27\\n28\\n29\\n30\\n31\\n"
    "32\\n33\\n34\\n35\\n36\\n37\\n38\\n39\\n\"}},"
    "\"journeys\":[{\"name\":\"j\",\"steps\":[{\"name\":\"a\",\"path\":\"/${f.a}\"}]}]}";
static const char *run_json; /* the scenario create_run stores: scenario unless a test says */

typedef struct sent_s {
    char worker[FLEET_ID_MAX];
    bool stop;            /* Stop, else Assign (or FeedLease when lease) */
    bool lease;
    uint64_t seq, start;
    uint64_t run, generation;
    uint32_t users;
    char reason[256];
} sent_t;

typedef struct proposal_s {
    Lc__Command__CmdCase cmd;
    char state[16];       /* RunState / RunFinished */
    char reason[256];
    uint32_t granted;     /* RunGrant */
    bool queued;
} proposal_t;

typedef struct fixture_s {
    store_t *store;
    runs_t *runs;
    uint64_t mono, wall;
    bool stats_pending;
    uint64_t saturation_epoch;
    fleet_worker_t workers[MAX_WORKERS];
    size_t n_workers;
    fleet_worker_t *connected[MAX_WORKERS];
    sent_t sent[MAX_EVENTS];
    size_t n_sent;
    proposal_t proposed[MAX_EVENTS];
    size_t n_proposed;
} fixture_t;

/* ---- the fake io -------------------------------------------------------- */

static void record(fixture_t *fx, const Lc__Command *cmd)
{
    assert_true(fx->n_proposed < MAX_EVENTS);
    proposal_t *p = &fx->proposed[fx->n_proposed++];
    memset(p, 0, sizeof *p);
    p->cmd = cmd->cmd_case;
    if (cmd->cmd_case == LC__COMMAND__CMD_RUN_STATE) {
        snprintf(p->state, sizeof p->state, "%s", cmd->run_state->state);
        snprintf(p->reason, sizeof p->reason, "%s", cmd->run_state->reason);
    } else if (cmd->cmd_case == LC__COMMAND__CMD_RUN_FINISHED) {
        snprintf(p->state, sizeof p->state, "%s", cmd->run_finished->state);
    } else if (cmd->cmd_case == LC__COMMAND__CMD_RUN_GRANT) {
        p->granted = cmd->run_grant->granted;
        p->queued = cmd->run_grant->queued;
        for (size_t i = 0; i < cmd->run_grant->n_warnings; i++)
            snprintf(p->reason + strlen(p->reason), sizeof p->reason - strlen(p->reason), "%s;",
                     cmd->run_grant->warnings[i]);
    }
}

static int propose(void *arg, const Lc__Command *cmd, quorum_applied_cb cb, void *cb_arg)
{
    fixture_t *fx = arg;
    record(fx, cmd);
    int result = store_apply(fx->store, cmd);
    if (cb != NULL)
        cb(cb_arg, 0, result);
    return 0;
}

static fleet_worker_t **connected(void *arg, size_t *n)
{
    fixture_t *fx = arg;
    *n = 0;
    for (size_t i = 0; i < fx->n_workers; i++)
        if (fx->workers[i].conn != NULL)
            fx->connected[(*n)++] = &fx->workers[i];
    return fx->connected;
}

static fleet_worker_t *find(void *arg, const char *worker_id)
{
    fixture_t *fx = arg;
    for (size_t i = 0; i < fx->n_workers; i++)
        if (strcmp(fx->workers[i].id, worker_id) == 0)
            return &fx->workers[i];
    return NULL;
}

static uint64_t saturation_epoch(void *arg)
{
    return ((fixture_t *)arg)->saturation_epoch;
}

static sent_t *add_sent(fixture_t *fx, const char *worker, uint64_t run)
{
    assert_true(fx->n_sent < MAX_EVENTS);
    sent_t *s = &fx->sent[fx->n_sent++];
    memset(s, 0, sizeof *s);
    snprintf(s->worker, sizeof s->worker, "%s", worker);
    s->run = run;
    return s;
}

static int send_assign(void *arg, const char *worker_id, const fleet_assign_t *a)
{
    sent_t *s = add_sent(arg, worker_id, a->run);
    s->generation = a->generation;
    s->users = a->users;
    return 0;
}

static int send_stop(void *arg, const char *worker_id, uint64_t run, const char *reason)
{
    sent_t *s = add_sent(arg, worker_id, run);
    s->stop = true;
    snprintf(s->reason, sizeof s->reason, "%s", reason);
    return 0;
}

static int send_feed_lease(void *arg, const char *worker_id, const fleet_feed_lease_t *l)
{
    sent_t *s = add_sent(arg, worker_id, l->run);
    s->lease = true;
    s->seq = l->seq;
    s->start = l->start;
    s->users = l->count;
    return 0;
}

static void set_assigned(void *arg, const char *worker_id, uint64_t run, uint32_t users)
{
}

static void forget_run(void *arg, uint64_t run)
{
}

static bool stats_pending(void *arg, uint64_t run)
{
    return ((fixture_t *)arg)->stats_pending;
}

static uint64_t mono_ms(void *arg)
{
    return ((fixture_t *)arg)->mono;
}

static uint64_t wall_ms(void *arg)
{
    return ((fixture_t *)arg)->wall;
}

/* ---- fixture ------------------------------------------------------------ */

static fleet_worker_t *add_worker(fixture_t *fx, const char *id, uint32_t capacity)
{
    assert_true(fx->n_workers < MAX_WORKERS);
    fleet_worker_t *w = &fx->workers[fx->n_workers++];
    snprintf(w->id, sizeof w->id, "%s", id);
    w->threads = 1;
    w->sat = saturation_start(capacity);
    w->conn = (fleet_conn_t *)w; /* any non-NULL value means connected here */
    return w;
}

static void create_run(fixture_t *fx, uint64_t id)
{
    Lc__CreateRun cr = LC__CREATE_RUN__INIT;
    cr.id = id;
    cr.tenant = "default";
    cr.name = "t";
    cr.scenario_json = (char *)run_json;
    cr.users = 10;
    cr.created_ms = fx->wall;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_CREATE_RUN;
    cmd.create_run = &cr;
    assert_int_equal(store_apply(fx->store, &cmd), 0);
}

static int setup(void **state)
{
    fixture_t *fx = calloc(1, sizeof *fx);
    char err[256];
    assert_non_null(fx);
    assert_int_equal(store_open(&fx->store, err, sizeof err), 0);
    fx->mono = 1000000;
    fx->wall = 1800000000000ull;
    run_json = scenario;
    runs_io_t io = {.arg = fx,
                    .commands = {.propose = propose, .arg = fx},
                    .connected = connected,
                    .find = find,
                    .saturation_epoch = saturation_epoch,
                    .send_assign = send_assign,
                    .send_stop = send_stop,
                    .send_feed_lease = send_feed_lease,
                    .set_assigned = set_assigned,
                    .forget_run = forget_run,
                    .stats_pending = stats_pending,
                    .mono_ms = mono_ms,
                    .wall_ms = wall_ms};
    assert_int_equal(runs_init(&fx->runs, NULL, fx->store, &io, 1000), 0);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *fx = *state;
    runs_close(fx->runs);
    store_close(fx->store);
    free(fx);
    return 0;
}

/* Moves both clocks and ticks once. */
static void advance(fixture_t *fx, uint64_t ms)
{
    fx->mono += ms;
    fx->wall += ms;
    runs_tick(fx->runs);
}

static const char *stored_state(fixture_t *fx, uint64_t id, char *buf, size_t len)
{
    store_run_t row;
    assert_int_equal(store_run_get(fx->store, id, &row), 0);
    snprintf(buf, len, "%s", row.state);
    store_run_free(&row);
    return buf;
}

static size_t count_proposals(const fixture_t *fx, Lc__Command__CmdCase cmd, const char *state)
{
    size_t n = 0;
    for (size_t i = 0; i < fx->n_proposed; i++)
        n += fx->proposed[i].cmd == cmd && (state == NULL || strcmp(fx->proposed[i].state, state) == 0);
    return n;
}

/* Users the latest Assign of run gave each worker, summed; *gen its newest generation. */
static uint32_t assigned_users(const fixture_t *fx, uint64_t run, const char *worker, uint64_t *gen)
{
    uint32_t users = 0;
    for (size_t i = 0; i < fx->n_sent; i++) {
        const sent_t *s = &fx->sent[i];
        if (s->stop || s->lease || s->run != run || strcmp(s->worker, worker) != 0)
            continue;
        users = s->users;
        if (gen != NULL)
            *gen = s->generation;
    }
    return users;
}

static size_t count_stops(const fixture_t *fx, uint64_t run)
{
    size_t n = 0;
    for (size_t i = 0; i < fx->n_sent; i++)
        n += fx->sent[i].stop && fx->sent[i].run == run;
    return n;
}

/* Two workers of 100, run RUN created and granted: running on both. */
static void start_on_two(fixture_t *fx)
{
    add_worker(fx, "w1", 100);
    add_worker(fx, "w2", 100);
    create_run(fx, RUN);
    runs_on_leader(fx->runs, true);
    advance(fx, 100);
}

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

/* The store says RUN is running (a previous leader started it). */
static void store_running(fixture_t *fx)
{
    create_run(fx, RUN);
    Lc__RunState rs = LC__RUN_STATE__INIT;
    rs.run = RUN;
    rs.state = "running";
    rs.at_ms = fx->wall;
    rs.reason = "";
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_RUN_STATE;
    cmd.run_state = &rs;
    assert_int_equal(store_apply(fx->store, &cmd), 0);
}

/* The previous leader's record of worker's share (RunAssignment). */
static void store_share(fixture_t *fx, const char *worker, uint64_t generation, uint32_t users)
{
    Lc__RunAssignment ra = LC__RUN_ASSIGNMENT__INIT;
    ra.run = RUN;
    ra.worker = (char *)worker;
    ra.generation = generation;
    ra.users = users;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_RUN_ASSIGNMENT;
    cmd.run_assignment = &ra;
    assert_int_equal(store_apply(fx->store, &cmd), 0);
}

static void hello_with(fleet_worker_t *w, Lc__RunLoad *load, Lc__RunLoad **loads, Lc__Hello *h,
                       uint64_t generation, uint32_t users)
{
    lc__run_load__init(load);
    load->run = RUN;
    load->generation = generation;
    load->users = users;
    loads[0] = load;
    lc__hello__init(h);
    h->worker_id = w->id;
    h->running = loads;
    h->n_running = 1;
}

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
        cmocka_unit_test_setup_teardown(test_refusal_fails_the_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_adoption_keeps_workers_running, setup, teardown),
        cmocka_unit_test_setup_teardown(test_adopted_run_without_workers_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hello_with_unknown_run_is_stopped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_before_start, setup, teardown),
        cmocka_unit_test_setup_teardown(test_follower_does_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_saturation_reschedules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stats_admission, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusal_from_a_stranger_changes_nothing, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_hostile_claims_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_worker_done_finishes_the_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_feed_leases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_adopted_stopping_run_waits_for_its_workers, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
