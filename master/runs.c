/* runs.c — the leader's run controller: pending → running → stopping →
 * finished/failed/aborted, driven by a tick, fleet events and API calls. */
#include "runs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregator.h"
#include "lc_clock.h"
#include "lc_err.h"
#include "lc_log.h"
#include "lc_scenario.h"
#include "quorum.h"
#include "run_verdict.h"
#include "scheduler.h"
#include "store.h"

#define TICK_MS 100
#define FINAL_GRACE_MS 5000 /* beyond the request timeout, for final batches */

typedef struct assignment_s {
    char worker[FLEET_ID_MAX];
    uint32_t users;
    bool final_done; /* its final batch committed, or the worker is gone */
} assignment_t;

typedef struct active_run_s {
    uint64_t id;
    lc_scenario_t sc;
    char *scenario_json;
    uint64_t started_wall_ms;
    bool stopping;
    bool finishing;           /* RunFinished proposed */
    uint64_t stop_deadline_ms; /* monotonic */
    uint64_t adopt_until_ms;   /* monotonic; workers may still report it */
    bool adopting;             /* taken over from a previous leader, grace running */
    char final_state[16];
    char reason[256];
    uint64_t generation;
    assignment_t *asg;
    size_t n_asg;
    struct active_run_s *next;
} active_run_t;

struct runs_s {
    master_t *m;
    uv_timer_t tick;
    bool leader;
    uint64_t last_id;
    active_run_t *active;
};

static uint64_t mono_ms(void)
{
    return lc_mono_ns() / 1000000u;
}

static active_run_t *find_active(runs_t *r, uint64_t id)
{
    for (active_run_t *ar = r->active; ar != NULL; ar = ar->next)
        if (ar->id == id)
            return ar;
    return NULL;
}

static void free_active(active_run_t *ar)
{
    lc_scenario_free(&ar->sc);
    free(ar->scenario_json);
    free(ar->asg);
    free(ar);
}

static void remove_active(runs_t *r, active_run_t *ar)
{
    for (active_run_t **link = &r->active; *link != NULL; link = &(*link)->next) {
        if (*link == ar) {
            *link = ar->next;
            free_active(ar);
            return;
        }
    }
}

static int propose_state(runs_t *r, uint64_t id, const char *state, const char *reason)
{
    Lc__RunState rs = LC__RUN_STATE__INIT;
    rs.run = id;
    rs.state = (char *)state;
    rs.at_ms = lc_wall_ms();
    rs.reason = (char *)reason;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_RUN_STATE;
    cmd.run_state = &rs;
    return quorum_propose(r->m->quorum, &cmd, NULL, NULL);
}

static assignment_t *find_asg(active_run_t *ar, const char *worker)
{
    for (size_t i = 0; i < ar->n_asg; i++)
        if (strcmp(ar->asg[i].worker, worker) == 0)
            return &ar->asg[i];
    return NULL;
}

static assignment_t *add_asg(active_run_t *ar, const char *worker)
{
    assignment_t *grown = realloc(ar->asg, (ar->n_asg + 1) * sizeof *grown);
    if (grown == NULL)
        return NULL;
    ar->asg = grown;
    assignment_t *a = &ar->asg[ar->n_asg++];
    memset(a, 0, sizeof *a);
    snprintf(a->worker, sizeof a->worker, "%s", worker);
    return a;
}

/* users: this worker's users (closed model) or user pool (open model);
 * spawn_rate and rate: its share of the scenario's spawn and arrival rates. */
static void send_assign(runs_t *r, active_run_t *ar, const char *worker, uint32_t users,
                        double spawn_rate, double rate)
{
    Lc__Assign as = LC__ASSIGN__INIT;
    as.run = ar->id;
    as.generation = ar->generation;
    as.users = users;
    as.spawn_rate = spawn_rate;
    as.rate = rate;
    as.scenario_json = ar->scenario_json;
    uint64_t now = lc_wall_ms();
    as.elapsed_ms = now > ar->started_wall_ms ? now - ar->started_wall_ms : 0;
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_ASSIGN;
    env.assign = &as;
    fleet_send(r->m->fleet, worker, &env);
}

static void send_stop(runs_t *r, uint64_t run, const char *worker, const char *reason)
{
    Lc__Stop st = LC__STOP__INIT;
    st.run = run;
    st.reason = (char *)reason;
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_STOP;
    env.stop = &st;
    fleet_send(r->m->fleet, worker, &env);
}

/* Spreads the run's users over the connected workers in proportion to their
 * capacity and sends each changed share as a new generation. */
static int plan_and_assign(runs_t *r, active_run_t *ar)
{
    size_t n;
    fleet_worker_t **workers = fleet_connected(r->m->fleet, &n);
    if (n == 0)
        return LC_EAGAIN;
    uint32_t *caps = calloc(n, sizeof *caps), *shares = calloc(n, sizeof *shares);
    if (caps == NULL || shares == NULL) {
        free(caps);
        free(shares);
        return LC_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        caps[i] = workers[i]->capacity;
    uint32_t total = ar->sc.arrival_rate > 0 ? ar->sc.max_users : ar->sc.users;
    sched_split(total, caps, n, shares);
    ar->generation++;
    for (size_t i = 0; i < n; i++) {
        assignment_t *a = find_asg(ar, workers[i]->id);
        if (a == NULL && (a = add_asg(ar, workers[i]->id)) == NULL)
            continue;
        a->users = shares[i];
        double part = total ? (double)shares[i] / total : 0;
        send_assign(r, ar, a->worker, shares[i], ar->sc.spawn_rate * part,
                    ar->sc.arrival_rate * part);
    }
    free(caps);
    free(shares);
    return 0;
}

static active_run_t *activate(runs_t *r, const store_run_t *row)
{
    active_run_t *ar = calloc(1, sizeof *ar);
    char why[256];
    if (ar == NULL)
        return NULL;
    ar->id = row->id;
    ar->scenario_json = strdup(row->scenario_json);
    if (ar->scenario_json == NULL ||
        lc_scenario_parse(row->scenario_json, strlen(row->scenario_json), &ar->sc, why,
                          sizeof why) != 0) {
        lc_error("runs", "msg=\"stored scenario does not parse\" run=%llu",
                 (unsigned long long)row->id);
        free_active(ar);
        return NULL;
    }
    ar->next = r->active;
    r->active = ar;
    return ar;
}

static void start_pending(runs_t *r, uint64_t id)
{
    if (find_active(r, id) != NULL || fleet_count_connected(r->m->fleet) == 0)
        return;
    store_run_t row;
    if (store_run_get(r->m->store, id, &row) != 0)
        return;
    active_run_t *ar = activate(r, &row);
    store_run_free(&row);
    if (ar == NULL)
        return;
    ar->started_wall_ms = lc_wall_ms();
    plan_and_assign(r, ar);
    propose_state(r, id, "running", "");
    lc_info("runs", "msg=\"run started\" run=%llu workers=%zu", (unsigned long long)id, ar->n_asg);
}

static void begin_stop(runs_t *r, active_run_t *ar, const char *final_state, const char *reason)
{
    if (ar->stopping)
        return;
    ar->stopping = true;
    snprintf(ar->final_state, sizeof ar->final_state, "%s", final_state);
    snprintf(ar->reason, sizeof ar->reason, "%s", reason);
    uint32_t wait = ar->sc.request_timeout_ms < 30000 ? ar->sc.request_timeout_ms : 30000;
    ar->stop_deadline_ms = mono_ms() + wait + FINAL_GRACE_MS;
    for (size_t i = 0; i < ar->n_asg; i++)
        send_stop(r, ar->id, ar->asg[i].worker, reason);
    propose_state(r, ar->id, "stopping", reason);
    lc_info("runs", "msg=\"run stopping\" run=%llu reason=\"%s\"", (unsigned long long)ar->id,
            reason);
}

static void finish(runs_t *r, active_run_t *ar)
{
    char verdict[16];
    run_verdict(r->m->store, ar->id, &ar->sc, verdict, sizeof verdict);
    Lc__RunFinished fin = LC__RUN_FINISHED__INIT;
    fin.run = ar->id;
    fin.state = ar->final_state;
    fin.at_ms = lc_wall_ms();
    fin.verdict = verdict;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_RUN_FINISHED;
    cmd.run_finished = &fin;
    if (quorum_propose(r->m->quorum, &cmd, NULL, NULL) != 0)
        return;
    lc_info("runs", "msg=\"run finished\" run=%llu state=%s verdict=%s",
            (unsigned long long)ar->id, ar->final_state, verdict[0] ? verdict : "-");
    remove_active(r, ar);
}

static bool finals_done(const active_run_t *ar)
{
    for (size_t i = 0; i < ar->n_asg; i++)
        if (!ar->asg[i].final_done)
            return false;
    return true;
}

/* After the grace period: did the workers' reports cover the whole run, on
 * exactly the workers connected now? */
static bool adoption_complete(runs_t *r, const active_run_t *ar)
{
    size_t n;
    fleet_connected(r->m->fleet, &n);
    uint64_t users = 0;
    for (size_t i = 0; i < ar->n_asg; i++)
        users += ar->asg[i].users;
    uint32_t total = ar->sc.arrival_rate > 0 ? ar->sc.max_users : ar->sc.users;
    return ar->n_asg > 0 && ar->n_asg == n && users == total;
}

/* Advances one active run; returns false when it was removed. */
static bool tick_run(runs_t *r, active_run_t *ar, uint64_t now)
{
    if (ar->stopping) {
        bool done = finals_done(ar) || now >= ar->stop_deadline_ms;
        if (done && !aggregator_busy(r->m->agg, ar->id)) {
            if (!finals_done(ar))
                lc_warn("runs", "msg=\"final stats missing at deadline\" run=%llu",
                        (unsigned long long)ar->id);
            finish(r, ar);
            return false;
        }
        return true;
    }
    if (ar->adopting && now >= ar->adopt_until_ms) {
        ar->adopting = false;
        if (!adoption_complete(r, ar))
            plan_and_assign(r, ar); /* the fleet changed: spread the run again */
    }
    uint64_t wall = lc_wall_ms();
    if (wall >= ar->started_wall_ms + ar->sc.duration_ms)
        begin_stop(r, ar, "finished", "duration reached");
    return true;
}

static void tick_cb(uv_timer_t *t)
{
    runs_t *r = t->data;
    if (!r->leader)
        return;
    uint64_t *ids;
    size_t n;
    if (store_runs_in_state(r->m->store, "pending", &ids, &n) == 0) {
        for (size_t i = 0; i < n; i++)
            start_pending(r, ids[i]);
        free(ids);
    }
    uint64_t now = mono_ms();
    for (active_run_t *ar = r->active, *next; ar != NULL; ar = next) {
        next = ar->next;
        tick_run(r, ar, now);
    }
}

/* A new leader takes over runs the database says are active; workers report
 * their share in Hello within the grace period. */
static void adopt_active(runs_t *r, const char *state)
{
    uint64_t *ids;
    size_t n;
    if (store_runs_in_state(r->m->store, state, &ids, &n) != 0)
        return;
    for (size_t i = 0; i < n; i++) {
        store_run_t row;
        if (store_run_get(r->m->store, ids[i], &row) != 0)
            continue;
        active_run_t *ar = activate(r, &row);
        if (ar != NULL) {
            ar->started_wall_ms = row.started_ms ? row.started_ms : lc_wall_ms();
            ar->adopt_until_ms = mono_ms() + 2u * r->m->cfg.worker_heartbeat_ms;
            ar->adopting = true;
            if (strcmp(state, "stopping") == 0)
                begin_stop(r, ar, "finished", row.reason[0] ? row.reason : "stopped");
            lc_info("runs", "msg=\"run adopted\" run=%llu state=%s", (unsigned long long)row.id,
                    state);
        }
        store_run_free(&row);
    }
    free(ids);
}

void runs_on_leader(runs_t *r, bool leader)
{
    r->leader = leader;
    while (r->active != NULL)
        remove_active(r, r->active);
    if (!leader)
        return;
    uint64_t max = store_max_run_id(r->m->store);
    if (max > r->last_id)
        r->last_id = max;
    adopt_active(r, "running");
    adopt_active(r, "stopping");
}

void runs_on_worker_join(runs_t *r, fleet_worker_t *w, const Lc__Hello *hello)
{
    if (!r->leader)
        return;
    for (size_t i = 0; i < hello->n_running; i++) {
        uint64_t run = hello->running[i]->run;
        active_run_t *ar = find_active(r, run);
        if (ar == NULL) {
            send_stop(r, run, w->id, "run is not active");
            continue;
        }
        assignment_t *a = find_asg(ar, w->id);
        if (a == NULL && (a = add_asg(ar, w->id)) != NULL)
            a->users = hello->running[i]->users; /* adopted, not restarted */
        if (ar->generation < hello->running[i]->generation)
            ar->generation = hello->running[i]->generation;
        if (ar->stopping)
            send_stop(r, run, w->id, ar->reason);
    }
}

void runs_on_worker_lost(runs_t *r, fleet_worker_t *w)
{
    if (!r->leader)
        return;
    for (active_run_t *ar = r->active; ar != NULL; ar = ar->next) {
        assignment_t *a = find_asg(ar, w->id);
        if (a == NULL)
            continue;
        a->final_done = true; /* it cannot send anything any more */
        if (ar->stopping)
            continue;
        size_t i = (size_t)(a - ar->asg);
        memmove(&ar->asg[i], &ar->asg[i + 1], (ar->n_asg - i - 1) * sizeof *ar->asg);
        ar->n_asg--;
        if (plan_and_assign(r, ar) != 0)
            begin_stop(r, ar, "failed", "all workers lost");
    }
}

void runs_on_assign_refused(runs_t *r, fleet_worker_t *w, uint64_t run, const char *reason)
{
    active_run_t *ar = find_active(r, run);
    if (!r->leader || ar == NULL)
        return;
    char why[256];
    snprintf(why, sizeof why, "worker %s refused its share: %s", w->name[0] ? w->name : w->id,
             reason);
    assignment_t *a = find_asg(ar, w->id);
    if (a != NULL)
        a->final_done = true; /* it runs nothing of this run: no final stats to wait for */
    begin_stop(r, ar, "failed", why);
}

void runs_on_final_committed(runs_t *r, uint64_t run, const char *worker_id)
{
    active_run_t *ar = find_active(r, run);
    assignment_t *a = ar ? find_asg(ar, worker_id) : NULL;
    if (a != NULL)
        a->final_done = true;
}

uint64_t runs_next_id(runs_t *r)
{
    uint64_t max = store_max_run_id(r->m->store);
    if (max > r->last_id)
        r->last_id = max;
    return ++r->last_id;
}

int runs_request_stop(runs_t *r, uint64_t id, char *errmsg, size_t errlen)
{
    if (!r->leader)
        return LC_ENOTLEADER;
    active_run_t *ar = find_active(r, id);
    if (ar != NULL) {
        begin_stop(r, ar, "aborted", "stopped by request");
        return 0;
    }
    store_run_t row;
    if (store_run_get(r->m->store, id, &row) != 0)
        return LC_ENOTFOUND;
    int rv = 0;
    if (strcmp(row.state, "pending") == 0) {
        active_run_t *pending = activate(r, &row);
        if (pending != NULL)
            begin_stop(r, pending, "aborted", "stopped by request before it started");
    } else {
        snprintf(errmsg, errlen, "run %llu is already %s", (unsigned long long)id, row.state);
        rv = LC_ESTATE;
    }
    store_run_free(&row);
    return rv;
}

int runs_init(runs_t **out, master_t *m)
{
    runs_t *r = calloc(1, sizeof *r);
    if (r == NULL)
        return LC_ENOMEM;
    r->m = m;
    uv_timer_init(m->loop, &r->tick);
    r->tick.data = r;
    uv_timer_start(&r->tick, tick_cb, TICK_MS, TICK_MS);
    *out = r;
    return 0;
}

static void tick_closed_cb(uv_handle_t *h)
{
    free(h->data);
}

void runs_close(runs_t *r)
{
    while (r->active != NULL)
        remove_active(r, r->active);
    uv_close((uv_handle_t *)&r->tick, tick_closed_cb);
}
