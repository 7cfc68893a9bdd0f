/* runs_fixture.h — test_runs*.c: the run controller (master/runs/runs.c) behind a fake
 * runs_io_t (fleet, clocks, sends) whose command sink records each proposal and applies it
 * to a real in-memory store, as a commit would; and a previous leader's state to adopt. */
#ifndef TESTS_UNIT_RUNS_FIXTURE_H
#define TESTS_UNIT_RUNS_FIXTURE_H

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
#define MAX_EVENTS 256 /* a Hello of LC_PROTOCOL_MAX_RUN_LOADS unknown runs is answered with as many stops */
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
#endif
