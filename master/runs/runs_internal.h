/* runs_internal.h — what runs.c (the run controller) and runs_plan.c (carrying out the
 * scheduler's plan) share and no other module sees. */
#ifndef MASTER_RUNS_INTERNAL_H
#define MASTER_RUNS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lc_run_state.h"
#include "lc_scenario.h"
#include "runs.h"
#include "scheduler.h"

#define REFUSAL_LOG_SLOTS 64

typedef struct assignment_s {
    char worker[FLEET_ID_MAX];
    uint32_t users;
    bool final_done; /* its final batch committed, or the worker is gone */
} assignment_t;

/* A worker's leases of one feeder on this leader: how fast it is given rows, and the
 * proposal waiting for its commit (runs_feed.c). */
typedef struct feed_gate_s {
    char worker[FLEET_ID_MAX];
    uint32_t feeder;
    uint64_t proposed_ms;     /* monotonic, the last LeaseRows proposed */
    uint64_t pending_seq;     /* its FeedRequest seq until the lease is sent; 0: none */
} feed_gate_t;

typedef struct active_run_s {
    uint64_t id;
    lc_scenario_t sc;
    char *scenario_json;
    uint64_t started_wall_ms;
    uint32_t requested;       /* users (closed model) or max_users (open model) */
    bool started;             /* false while pending: not granted yet */
    bool stopping;
    bool finishing;           /* RunFinished proposed */
    uint64_t stop_deadline_ms; /* monotonic */
    uint64_t adopt_until_ms;   /* monotonic; workers may still report it */
    bool adopting;             /* taken over from a previous leader, grace running */
    bool adopted;              /* taken over from a previous leader at all */
    lc_run_state_t final_state; /* once stopping: finished, failed or aborted */
    char reason[256];
    uint64_t generation;
    assignment_t *asg;
    size_t n_asg;
    /* The scheduler's grant as last proposed (RunGrant); shown by the API. */
    bool grant_proposed;
    uint32_t granted;
    bool queued;
    char warnings[512];       /* '\n'-separated */
    uint64_t thresholds_due_ms; /* monotonic: next abortOnFail evaluation */
    feed_gate_t *gates;       /* one per (worker, leased feeder) that asked */
    size_t n_gates;
    /* Adopted: workers whose final batch committed on this leader without a share here
     * (they stopped the share while no leader was there, and replayed it). */
    char (*finals_back)[FLEET_ID_MAX];
    size_t n_finals_back;
    struct active_run_s *next;
} active_run_t;

struct runs_s {
    store_t *store;
    runs_io_t io;
    uint32_t heartbeat_ms;
    uv_timer_t *tick;         /* NULL without a loop */
    bool leader;
    uint64_t last_id;
    active_run_t *active;
    bool dirty;               /* a reschedule is due */
    uint64_t saturation_epoch; /* fleet's, at the last reschedule */
    runs_refused_t refused;
    struct {                  /* (worker, run) refusals logged lately: logged once */
        char worker[FLEET_ID_MAX];
        uint64_t run;
    } logged[REFUSAL_LOG_SLOTS];
    size_t logged_next;
};

/* sched_plan's inputs and outputs for the connected workers and the runs
 * that are pending or running (a stopping run's users are on their way out). */
typedef struct plan_io_s {
    fleet_worker_t **fw;
    size_t nw, nr, nt;
    sched_worker_t *workers;
    sched_tenant_t *tenants;
    sched_run_t *runs;
    active_run_t **ars;
    sched_grant_t *out;
    uint32_t *current, *users; /* nr rows of nw */
} plan_io_t;

/* runs.c */
uint64_t runs_now_wall(const runs_t *r);
assignment_t *runs_find_asg(active_run_t *ar, const char *worker);
/* A new assignment of ar to worker; NULL without memory. */
assignment_t *runs_add_asg(active_run_t *ar, const char *worker);
void runs_send_assign(runs_t *r, active_run_t *ar, const char *worker, uint32_t users,
                      uint64_t user_base);

/* The active run w holds a share of (users > 0 in *users), as leader; else NULL, and the
 * attempt (what) is counted in *counter as a refusal. */
active_run_t *runs_run_of_sharer(runs_t *r, fleet_worker_t *w, uint64_t run, const char *what,
                                 uint64_t *counter, uint32_t *users);
void runs_note_refused(runs_t *r, uint64_t *counter, const char *worker, uint64_t run,
                       const char *what, const char *why);
uint64_t runs_now_mono(const runs_t *r);

/* runs_feed.c */
/* Sends the leases whose LeaseRows committed; forgets proposals lost on the way. */
void runs_feed_tick(runs_t *r, active_run_t *ar);

/* runs_plan.c */
/* sched_plan's inputs for r's connected workers and pending and running runs. Returns 0 or
 * LC_ENOMEM; free with runs_plan_io_free either way. */
int runs_plan_io_build(runs_t *r, plan_io_t *io);
void runs_plan_io_free(plan_io_t *io);
void runs_move_users(runs_t *r, active_run_t *ar, const plan_io_t *io, const uint32_t *users);
void runs_note_grant(runs_t *r, active_run_t *ar, const plan_io_t *io, const sched_grant_t *g);

#endif
