/* runs.c — the leader's run controller: pending → running → stopping →
 * finished/failed/aborted, driven by a tick, fleet events and API calls;
 * every change replans all runs at once with sched_plan. */
#include "runs.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "lc_clock.h"
#include "lc_err.h"
#include "lc_log.h"
#include "lc_protocol.h"
#include "lc_scenario.h"
#include "lc_text.h"
#include "run_verdict.h"
#include "runs_internal.h"
#include "scheduler.h"
#include "store.h"

#define TICK_MS 100
#define FINAL_GRACE_MS 5000 /* beyond the request timeout, for final batches */
/* How long an adopted run waits for its workers beyond 2 heartbeats: a worker
 * gives up on a dead leader after its TCP user timeout (4 s), then tries the
 * next master within a backoff round (1 s). */
#define ADOPT_RECONNECT_MS 5000

static uint64_t now_mono(const runs_t *r)
{
    return r->io.mono_ms(r->io.arg);
}

uint64_t runs_now_mono(const runs_t *r)
{
    return now_mono(r);
}

uint64_t runs_now_wall(const runs_t *r)
{
    return r->io.wall_ms(r->io.arg);
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
    free(ar->gates);
    free(ar->finals_back);
    free(ar);
}

static void remove_active(runs_t *r, active_run_t *ar)
{
    for (active_run_t **link = &r->active; *link != NULL; link = &(*link)->next) {
        if (*link == ar) {
            *link = ar->next;
            r->io.forget_run(r->io.arg, ar->id);
            free_active(ar);
            return;
        }
    }
}

static int propose_state(runs_t *r, uint64_t id, lc_run_state_t state, const char *reason)
{
    return command_run_state(&r->io.commands, id, state, reason, runs_now_wall(r));
}

assignment_t *runs_find_asg(active_run_t *ar, const char *worker)
{
    for (size_t i = 0; i < ar->n_asg; i++)
        if (strcmp(ar->asg[i].worker, worker) == 0)
            return &ar->asg[i];
    return NULL;
}

assignment_t *runs_add_asg(active_run_t *ar, const char *worker)
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

/* users: this worker's users (closed model) or user pool (open model). The
 * spawn and arrival rates are split in the same proportion of what the run
 * asks, so a degraded run is the whole run scaled down. */
void runs_send_assign(runs_t *r, active_run_t *ar, const char *worker, uint32_t users,
                        uint64_t user_base)
{
    double part = ar->requested ? (double)users / ar->requested : 0;
    uint64_t now = runs_now_wall(r);
    fleet_assign_t as = {.run = ar->id,
                         .generation = ar->generation,
                         .users = users,
                         .spawn_rate = ar->sc.spawn_rate * part,
                         .rate = ar->sc.arrival_rate * part,
                         .scenario_json = ar->scenario_json,
                         .elapsed_ms = now > ar->started_wall_ms ? now - ar->started_wall_ms : 0,
                         .user_base = user_base};
    r->io.send_assign(r->io.arg, worker, &as);
}

static void send_stop(runs_t *r, uint64_t run, const char *worker, const char *reason)
{
    r->io.send_stop(r->io.arg, worker, run, reason);
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
    ar->requested = ar->sc.arrival_rate > 0 ? ar->sc.max_users : ar->sc.users;
    ar->next = r->active;
    r->active = ar;
    return ar;
}

/* A pending run joins the scheduler's runs; it starts once granted. */
static void activate_pending(runs_t *r, uint64_t id)
{
    if (find_active(r, id) != NULL)
        return;
    store_run_t row;
    if (store_run_get(r->store, id, &row) != 0)
        return;
    if (activate(r, &row) != NULL)
        r->dirty = true;
    store_run_free(&row);
}

static void begin_stop(runs_t *r, active_run_t *ar, lc_run_state_t final_state, const char *reason)
{
    if (ar->stopping)
        return;
    ar->stopping = true;
    assert(lc_run_state_is_over(final_state));
    ar->final_state = final_state;
    /* Cut at a character boundary: the store refuses half a UTF-8 sequence. */
    lc_text_clean(ar->reason, sizeof ar->reason, reason);
    uint32_t wait = ar->sc.request_timeout_ms < 30000 ? ar->sc.request_timeout_ms : 30000;
    ar->stop_deadline_ms = now_mono(r) + wait + FINAL_GRACE_MS;
    for (size_t i = 0; i < ar->n_asg; i++)
        send_stop(r, ar->id, ar->asg[i].worker, ar->reason);
    propose_state(r, ar->id, LC_RUN_STOPPING, ar->reason);
    r->dirty = true; /* its users are free for the others */
    lc_info("runs", "msg=\"run stopping\" run=%llu reason=\"%s\"", (unsigned long long)ar->id,
            ar->reason);
}

static void finish(runs_t *r, active_run_t *ar)
{
    assert(ar->stopping && lc_run_state_is_over(ar->final_state)); /* only a stopping run finishes */
    char verdict[16], *summary;
    run_verdict(r->store, ar->id, &ar->sc, verdict, sizeof verdict, &summary);
    int rv = command_run_finished(&r->io.commands, ar->id, ar->final_state, verdict,
                                  summary ? summary : "", runs_now_wall(r));
    free(summary);
    if (rv != 0)
        return;
    lc_info("runs", "msg=\"run finished\" run=%llu state=%s verdict=%s",
            (unsigned long long)ar->id, lc_run_state_name(ar->final_state), verdict[0] ? verdict : "-");
    remove_active(r, ar);
}

static bool finals_done(const active_run_t *ar)
{
    for (size_t i = 0; i < ar->n_asg; i++)
        if (!ar->asg[i].final_done)
            return false;
    return true;
}

/* Scheduling ------------------------------------------------------------ */

static bool any_adopting(const runs_t *r)
{
    for (const active_run_t *ar = r->active; ar != NULL; ar = ar->next)
        if (ar->adopting)
            return true;
    return false;
}

/* A worker that dropped its connection but is not lost yet may still run its
 * share: planning around it would run those users twice, so wait until it is
 * back or lost (3 heartbeat intervals at most). */
static bool share_in_limbo(runs_t *r)
{
    for (const active_run_t *ar = r->active; ar != NULL; ar = ar->next) {
        for (size_t i = 0; i < ar->n_asg && !ar->stopping; i++) {
            fleet_worker_t *w = r->io.find(r->io.arg, ar->asg[i].worker);
            if (w != NULL && w->conn == NULL && ar->asg[i].users > 0)
                return true;
        }
    }
    return false;
}

static void start_run(runs_t *r, active_run_t *ar, uint32_t granted)
{
    assert(!ar->started && !ar->stopping && granted > 0); /* pending → running, once */
    ar->started = true;
    ar->started_wall_ms = runs_now_wall(r);
    propose_state(r, ar->id, LC_RUN_RUNNING, "");
    lc_info("runs", "msg=\"run started\" run=%llu users=%u requested=%u",
            (unsigned long long)ar->id, granted, ar->requested);
}

/* Plans every pending and running run over the connected workers at once
 * (sched_plan) and carries the differences out. */
static void reschedule(runs_t *r)
{
    if (!r->leader)
        return;
    if (any_adopting(r) || share_in_limbo(r)) {
        r->dirty = true; /* tried again every tick */
        return;
    }
    r->dirty = false;
    r->saturation_epoch = r->io.saturation_epoch(r->io.arg);
    plan_io_t io;
    int rv = runs_plan_io_build(r, &io);
    if (rv == 0 && io.nr > 0)
        rv = sched_plan(io.workers, io.nw, io.tenants, io.nt, io.runs, io.nr, io.out);
    for (size_t i = 0; rv == 0 && i < io.nr; i++) {
        active_run_t *ar = io.ars[i];
        if (!ar->started && io.out[i].granted > 0)
            start_run(r, ar, io.out[i].granted);
        if (ar->started)
            runs_move_users(r, ar, &io, io.out[i].users);
        runs_note_grant(r, ar, &io, &io.out[i]);
    }
    if (rv != 0) {
        lc_error("runs", "msg=\"scheduling failed\" error=\"%s\"", lc_strerror(rv));
        r->dirty = true;
    }
    runs_plan_io_free(&io);
}

void runs_reschedule(runs_t *r)
{
    r->dirty = true;
    reschedule(r);
}

static bool final_back(const active_run_t *ar, const char *worker)
{
    for (size_t i = 0; i < ar->n_finals_back; i++)
        if (strcmp(ar->finals_back[i], worker) == 0)
            return true;
    return false;
}

typedef struct {
    const active_run_t *ar;
    bool all;
} finals_check_t;

static bool check_final(void *arg, const char *worker)
{
    finals_check_t *fc = arg;
    fc->all = final_back(fc->ar, worker);
    return fc->all;
}

/* An adopted run none of whose workers holds a share here: whether every worker the state
 * records a share for sent its final batch to this leader (so the history has all of it). */
static bool all_shares_final(runs_t *r, const active_run_t *ar)
{
    finals_check_t fc = {.ar = ar, .all = ar->n_finals_back > 0};
    if (!fc.all || store_assignments_each(r->store, ar->id, check_final, &fc) != 0)
        return false;
    return fc.all;
}

/* Advances one active run; returns false when it was removed. */
static bool tick_run(runs_t *r, active_run_t *ar, uint64_t now)
{
    runs_feed_tick(r, ar); /* stopping too: on_stop steps may still take rows */
    if (ar->stopping) {
        /* An adopted stopping run has no assignments until its workers are
         * back: "every final batch in" means nothing before the grace ends. */
        if (ar->adopting && now >= ar->adopt_until_ms)
            ar->adopting = false;
        bool done = (finals_done(ar) && !ar->adopting) || now >= ar->stop_deadline_ms;
        if (done && !r->io.stats_pending(r->io.arg, ar->id)) {
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
        r->dirty = true; /* plan again from what the workers reported */
    }
    if (!ar->started)
        return true;
    uint64_t wall = runs_now_wall(r);
    if (wall >= ar->started_wall_ms + ar->sc.duration_ms && ar->adopted && ar->n_asg == 0) {
        /* Unless every worker of a recorded share sent its final batch to this leader, what
         * they counted since the change is not in the history: the run cannot pass as
         * finished. */
        if (all_shares_final(r, ar))
            begin_stop(r, ar, LC_RUN_FINISHED, "duration reached");
        else
            begin_stop(r, ar, LC_RUN_FAILED, "no worker reported the run after the leader change");
    }
    else if (wall >= ar->started_wall_ms + ar->sc.duration_ms)
        begin_stop(r, ar, LC_RUN_FINISHED, "duration reached");
    char why[sizeof ar->reason];
    if (!ar->stopping && now >= ar->thresholds_due_ms) { /* abortOnFail, once a second */
        ar->thresholds_due_ms = now + 1000;
        uint64_t elapsed = wall > ar->started_wall_ms ? wall - ar->started_wall_ms : 0;
        if (run_thresholds_should_abort(r->store, ar->id, &ar->sc, elapsed, why, sizeof why))
            begin_stop(r, ar, LC_RUN_ABORTED, why);
    }
    return true;
}

void runs_tick(runs_t *r)
{
    if (!r->leader)
        return;
    uint64_t *ids;
    size_t n;
    if (store_runs_in_state(r->store, lc_run_state_name(LC_RUN_PENDING), &ids, &n) == 0) {
        for (size_t i = 0; i < n; i++)
            activate_pending(r, ids[i]);
        free(ids);
    }
    uint64_t now = now_mono(r);
    for (active_run_t *ar = r->active, *next; ar != NULL; ar = next) {
        next = ar->next;
        tick_run(r, ar, now);
    }
    if (r->io.saturation_epoch(r->io.arg) != r->saturation_epoch)
        r->dirty = true;
    if (r->dirty)
        reschedule(r);
}

static void tick_cb(uv_timer_t *t)
{
    runs_tick(t->data);
}

/* A new leader takes over runs the database says are active; workers report
 * their share in Hello within the grace period. */
static void adopt_active(runs_t *r, lc_run_state_t state)
{
    uint64_t *ids;
    size_t n;
    if (store_runs_in_state(r->store, lc_run_state_name(state), &ids, &n) != 0)
        return;
    for (size_t i = 0; i < n; i++) {
        store_run_t row;
        if (store_run_get(r->store, ids[i], &row) != 0)
            continue;
        active_run_t *ar = activate(r, &row);
        if (ar != NULL) {
            ar->started_wall_ms = row.started_ms ? row.started_ms : runs_now_wall(r);
            ar->started = true;
            ar->adopt_until_ms = now_mono(r) + 2u * r->heartbeat_ms + ADOPT_RECONNECT_MS;
            ar->adopting = ar->adopted = true;
            if (state == LC_RUN_STOPPING)
                begin_stop(r, ar, LC_RUN_FINISHED, row.reason[0] ? row.reason : "stopped");
            lc_info("runs", "msg=\"run adopted\" run=%llu state=%s", (unsigned long long)row.id,
                    lc_run_state_name(state));
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
    uint64_t max = store_max_run_id(r->store);
    if (max > r->last_id)
        r->last_id = max;
    adopt_active(r, LC_RUN_RUNNING);
    adopt_active(r, LC_RUN_STOPPING);
}

/* Counts a refused message; logs it once per (worker, run) among the
 * recent ones, so a flood of forgeries is one line each. */
void runs_note_refused(runs_t *r, uint64_t *counter, const char *worker, uint64_t run,
                       const char *what, const char *why)
{
    (*counter)++;
    for (size_t i = 0; i < REFUSAL_LOG_SLOTS; i++)
        if (r->logged[i].run == run && strcmp(r->logged[i].worker, worker) == 0)
            return;
    size_t slot = r->logged_next++ % REFUSAL_LOG_SLOTS;
    snprintf(r->logged[slot].worker, sizeof r->logged[slot].worker, "%s", worker);
    r->logged[slot].run = run;
    lc_warn("runs", "msg=\"%s refused\" worker=%s run=%llu reason=\"%s\"", what, worker,
            (unsigned long long)run, why);
}

/* The share the leader knows worker holds of ar: in memory (assigned or
 * adopted by this leader), or as recorded by RunAssignment. */
static bool known_share(runs_t *r, const active_run_t *ar, const char *worker, uint64_t *gen,
                        uint32_t *users)
{
    const assignment_t *a = runs_find_asg((active_run_t *)ar, worker);
    uint64_t stored_gen = 0;
    uint32_t stored_users = 0;
    bool stored = store_assignment_get(r->store, ar->id, worker, &stored_gen, &stored_users) == 0;
    *gen = stored_gen > ar->generation ? stored_gen : ar->generation;
    *users = a != NULL ? a->users : stored_users;
    return a != NULL || stored;
}

/* Hello's claim to run a share: only of the worker's own share, at a
 * generation the leader could have sent, with no more users than it has. */
static const char *claim_problem(runs_t *r, const active_run_t *ar, const char *worker,
                                 const Lc__RunLoad *claim)
{
    uint64_t gen;
    uint32_t users;
    bool known = known_share(r, ar, worker, &gen, &users);
    return admission_claim_problem(known, gen, ar->requested, claim);
}

static void adopt_claim(runs_t *r, active_run_t *ar, fleet_worker_t *w, const Lc__RunLoad *claim)
{
    assignment_t *a = runs_find_asg(ar, w->id);
    if (a == NULL && (a = runs_add_asg(ar, w->id)) != NULL) {
        a->users = claim->users; /* adopted, not restarted */
        r->io.set_assigned(r->io.arg, w->id, ar->id, a->users);
    }
    if (ar->generation < claim->generation)
        ar->generation = claim->generation;
    if (ar->stopping)
        send_stop(r, ar->id, w->id, ar->reason);
}

/* The worker runs nothing of ar any more (lost, or back without it): its final stats will
 * not come, and unless the run is stopping its users go to the fleet again. */
static void forget_share(active_run_t *ar, assignment_t *a)
{
    a->final_done = true; /* it cannot send anything of this share any more */
    if (ar->stopping)
        return;
    size_t i = (size_t)(a - ar->asg);
    memmove(&ar->asg[i], &ar->asg[i + 1], (ar->n_asg - i - 1) * sizeof *ar->asg);
    ar->n_asg--;
}

static bool hello_claims(const Lc__Hello *hello, uint64_t run)
{
    for (size_t i = 0; i < hello->n_running; i++)
        if (hello->running[i]->run == run)
            return true;
    return false;
}

/* A worker back (a reconnection, or a restart with the same id: a StatefulSet's pod) without
 * a share it held lost that share, as a lost worker does: before, the leader kept counting it
 * as running and the run went on with fewer users than it had. */
static void forget_unclaimed(runs_t *r, fleet_worker_t *w, const Lc__Hello *hello)
{
    if (hello->n_running >= LC_PROTOCOL_MAX_RUN_LOADS)
        return; /* a full list may have left some out: nothing can be told from it */
    for (active_run_t *ar = r->active; ar != NULL; ar = ar->next) {
        assignment_t *a = runs_find_asg(ar, w->id);
        if (a == NULL || a->final_done || hello_claims(hello, ar->id))
            continue;
        lc_warn("runs", "msg=\"worker came back without its share: its users are placed again\" "
                "run=%llu worker=%s users=%u", (unsigned long long)ar->id, w->id, a->users);
        forget_share(ar, a);
    }
}

void runs_on_worker_join(runs_t *r, fleet_worker_t *w, const Lc__Hello *hello)
{
    if (!r->leader)
        return;
    forget_unclaimed(r, w, hello);
    for (size_t i = 0; i < hello->n_running; i++) {
        const Lc__RunLoad *claim = hello->running[i];
        active_run_t *ar = find_active(r, claim->run);
        const char *problem = ar != NULL ? claim_problem(r, ar, w->id, claim) : NULL;
        if (ar == NULL) {
            send_stop(r, claim->run, w->id, "run is not active");
        } else if (problem != NULL) {
            runs_note_refused(r, &r->refused.claims, w->id, claim->run, "run claim", problem);
            send_stop(r, claim->run, w->id, problem);
        } else {
            adopt_claim(r, ar, w, claim);
        }
    }
    runs_reschedule(r); /* its capacity joins the fleet's */
}

void runs_on_worker_lost(runs_t *r, fleet_worker_t *w)
{
    if (!r->leader)
        return;
    for (active_run_t *ar = r->active; ar != NULL; ar = ar->next) {
        assignment_t *a = runs_find_asg(ar, w->id);
        if (a == NULL)
            continue;
        forget_share(ar, a);
        if (ar->stopping)
            continue;
        size_t connected;
        r->io.connected(r->io.arg, &connected);
        if (connected == 0)
            begin_stop(r, ar, LC_RUN_FAILED, "all workers lost");
    }
    runs_reschedule(r); /* its users go to the survivors */
}

active_run_t *runs_run_of_sharer(runs_t *r, fleet_worker_t *w, uint64_t run, const char *what,
                                 uint64_t *counter, uint32_t *users)
{
    active_run_t *ar = find_active(r, run);
    uint64_t gen;
    if (!r->leader)
        return NULL;
    if (ar == NULL || !known_share(r, ar, w->id, &gen, users) || *users == 0) {
        runs_note_refused(r, counter, w->id, run, what, "this worker holds no share of the run");
        return NULL;
    }
    return ar;
}

static active_run_t *run_of_sharer(runs_t *r, fleet_worker_t *w, uint64_t run, const char *what)
{
    uint32_t users;
    return runs_run_of_sharer(r, w, run, what, &r->refused.refusals, &users);
}

static const char *worker_label(const fleet_worker_t *w)
{
    return w->name[0] ? w->name : w->id;
}

void runs_on_assign_refused(runs_t *r, fleet_worker_t *w, uint64_t run, const char *reason)
{
    active_run_t *ar = run_of_sharer(r, w, run, "assignment refusal");
    if (ar == NULL)
        return;
    char why[256];
    snprintf(why, sizeof why, "worker %s refused its share: %s", worker_label(w), reason);
    assignment_t *a = runs_find_asg(ar, w->id);
    if (a != NULL)
        a->final_done = true; /* it runs nothing of this run: no final stats to wait for */
    begin_stop(r, ar, LC_RUN_FAILED, why);
}

void runs_on_worker_done(runs_t *r, fleet_worker_t *w, uint64_t run, const char *reason)
{
    active_run_t *ar = run_of_sharer(r, w, run, "request to end a run");
    if (ar == NULL)
        return;
    char why[256];
    snprintf(why, sizeof why, "worker %s: %s", worker_label(w), reason);
    begin_stop(r, ar, LC_RUN_FINISHED, why);
}

void runs_on_final_committed(runs_t *r, uint64_t run, const char *worker_id)
{
    active_run_t *ar = find_active(r, run);
    assignment_t *a = ar ? runs_find_asg(ar, worker_id) : NULL;
    if (a != NULL) {
        a->final_done = true;
    } else if (ar != NULL && ar->adopted && !final_back(ar, worker_id)) {
        char(*more)[FLEET_ID_MAX] =
            realloc(ar->finals_back, (ar->n_finals_back + 1) * sizeof *ar->finals_back);
        if (more == NULL)
            return; /* the run then fails as if this final had not come: never passes short */
        ar->finals_back = more;
        snprintf(ar->finals_back[ar->n_finals_back++], FLEET_ID_MAX, "%s", worker_id);
    }
}

runs_admission_t runs_admit_stats(runs_t *r, const fleet_worker_t *w, const Lc__StatsBatch *b)
{
    assert(w != NULL && b != NULL);
    active_run_t *ar = r->leader ? find_active(r, b->run) : NULL;
    uint64_t gen;
    uint32_t users;
    const char *problem = NULL;
    if (ar == NULL || !ar->started)
        problem = "run is not running or stopping on this leader";
    else if (!known_share(r, ar, w->id, &gen, &users))
        problem = "this worker holds no share of the run";
    if (problem == NULL) {
        uint64_t wall = runs_now_wall(r);
        uint64_t elapsed_s = wall > ar->started_wall_ms ? (wall - ar->started_wall_ms) / 1000 : 0;
        problem = admission_batch_problem(&ar->sc, b, elapsed_s);
    }
    if (problem == NULL)
        return RUNS_ADMIT;
    runs_note_refused(r, &r->refused.stats, w->id, b->run, "stats batch", problem);
    return ar == NULL && store_run_is_over(r->store, b->run) ? RUNS_REFUSE_OVER : RUNS_REFUSE;
}

runs_refused_t runs_refused(const runs_t *r)
{
    return r->refused;
}

uint64_t runs_next_id(runs_t *r)
{
    uint64_t max = store_max_run_id(r->store);
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
        begin_stop(r, ar, LC_RUN_ABORTED,
                   ar->started ? "stopped by request" : "stopped by request before it started");
        return 0;
    }
    store_run_t row;
    if (store_run_get(r->store, id, &row) != 0)
        return LC_ENOTFOUND;
    int rv = 0;
    lc_run_state_t stored;
    if (lc_run_state_parse(row.state, &stored) == 0 && stored == LC_RUN_PENDING) {
        active_run_t *pending = activate(r, &row);
        if (pending != NULL)
            begin_stop(r, pending, LC_RUN_ABORTED, "stopped by request before it started");
    } else {
        snprintf(errmsg, errlen, "run %llu is already %s", (unsigned long long)id, row.state);
        rv = LC_ESTATE;
    }
    store_run_free(&row);
    return rv;
}

int runs_init(runs_t **out, uv_loop_t *loop, store_t *store, const runs_io_t *io,
              uint32_t heartbeat_ms)
{
    assert(store != NULL && io != NULL && io->commands.propose != NULL);
    runs_t *r = calloc(1, sizeof *r);
    if (r == NULL)
        return LC_ENOMEM;
    r->store = store;
    r->io = *io;
    r->heartbeat_ms = heartbeat_ms;
    if (loop != NULL) {
        r->tick = malloc(sizeof *r->tick);
        if (r->tick == NULL) {
            free(r);
            return LC_ENOMEM;
        }
        uv_timer_init(loop, r->tick);
        r->tick->data = r;
        uv_timer_start(r->tick, tick_cb, TICK_MS, TICK_MS);
    }
    *out = r;
    return 0;
}

static void tick_closed_cb(uv_handle_t *h)
{
    free(h);
}

void runs_close(runs_t *r)
{
    while (r->active != NULL)
        remove_active(r, r->active);
    if (r->tick != NULL)
        uv_close((uv_handle_t *)r->tick, tick_closed_cb);
    free(r);
}
