/* control.h — control thread: the run table; turns assignments into engine
 * messages, merges the engines' counters and cuts them into StatsBatches. */
#ifndef WORKER_CONTROL_H
#define WORKER_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "cluster.pb-c.h"
#include "engine.h"
#include "heap_trim.h"
#include "mailbox.h"
#include "plan.h"
#include "stats.h"

enum worker_run_state {
    WORKER_RUN_PREPARING, /* resolving the target, waiting for start_delay */
    WORKER_RUN_RUNNING,
    WORKER_RUN_STOPPING,  /* engines finishing requests in flight */
    WORKER_RUN_FINAL,     /* final batch queued, waiting for its ack */
};

typedef struct worker_control_s worker_control_t;

/* What an Assign carries, decoupled from protobuf for --local. */
typedef struct worker_assign_s {
    uint64_t run;
    uint64_t generation;
    uint32_t users;           /* closed: users; open: the bound of the user pool */
    double spawn_rate;
    double rate;              /* open model: requests/s; 0: a share of arrival_rate like users */
    const char *scenario_json;
    size_t scenario_len;
    uint32_t start_delay_ms;
    uint64_t elapsed_ms;
    uint64_t user_base;       /* ${user_id}s of this share follow it */
} worker_assign_t;

typedef struct worker_run_s {
    struct worker_run_s *next;
    worker_control_t *ctl;
    uint64_t id;
    uint64_t generation;
    uint32_t users;           /* assigned (open model: the bound of the user pool) */
    uint64_t user_base;       /* ${user_id}s of the current share follow it */
    bool exhausted;           /* a stop_run feeder ran out: the hook was told */
    double spawn_rate;        /* assigned */
    double rate;              /* open model: assigned requests/s (a share of arrival_rate) */
    enum worker_run_state state;
    worker_plan_t *plan;
    worker_stats_t *acc;      /* merged counters not yet cut into a batch */
    uint8_t *notes_sent;      /* a bit per (endpoint, error kind) whose message was sent */
    uint64_t seq;             /* its last batch's seq (the control's seqs grow across runs) */
    uint64_t n_batches;       /* batches cut */
    uint64_t final_seq;
    uint64_t assigned_ms;     /* control loop time of the first Assign */
    uint64_t started_ms;      /* control loop time the engines started it */
    uint64_t finished_ms;     /* control loop time the last engine finished */
    uint64_t elapsed_ms;      /* from the first Assign */
    uint32_t start_delay_ms;
    uint32_t stop_deadline_ms;
    unsigned engines_done;
    uint32_t *eng_users;      /* per engine, from its last report */
    uint32_t *eng_conns;
    uv_getaddrinfo_t gai;
    uv_timer_t start_timer;
    uv_timer_t safety_timer;
    uint8_t handles;
    bool resolving;
    uint8_t resolved;         /* origins of the plan resolved so far (one at a time) */
    /* A script's sandboxes, one per engine: loading on libuv's pool, or loaded until
     * RUN_START hands them over (lua_load.h). The load holds a reference while it runs. */
    struct worker_lua_load_s *lua_load;
    bool start_due;           /* the start time came while they loaded: start once loaded */
    bool removed;             /* unlinked: callbacks still pending only drop references */
    bool stop_early;          /* Stop came while preparing */
    bool self_stopped;        /* stopped by this worker (orphan timeout, safety net) */
    bool again;               /* assigned anew while self-stopped: restarts once final */
    uint64_t again_ms;        /* control loop time that Assign came */
    worker_assign_t again_as; /* its share (scenario_json not kept) */
    uint64_t lost_batches;    /* lost to outbox overflow, not yet reported in a batch */
    uint64_t lost_requests;
} worker_run_t;

/* What the control thread tells its owner (--join or --local glue). */
typedef struct worker_control_hooks_s {
    /* A StatsBatch frame to queue; the frame's ownership passes. */
    void (*batch)(void *arg, const worker_batch_meta_t *meta, uint8_t *frame, size_t len);
    /* The engines started the run (optional). */
    void (*run_started)(void *arg, worker_run_t *run);
    /* Every engine finished the run; its final batch was handed over. */
    void (*run_finished)(void *arg, worker_run_t *run);
    /* The run could not start (bad target, resolution failure). */
    void (*run_failed)(void *arg, uint64_t run, const char *why);
    /* Optional: every stats interval, the engines' counts of a running run
     * were merged (eng_users is fresh). Without batches, its presence alone
     * makes the control thread collect every interval. */
    void (*interval)(void *arg, worker_run_t *run);
    /* Optional: a feeder with on_exhausted stop_run ran out (once per run): the run should
     * end everywhere; reason names the feeder. */
    void (*run_exhausted)(void *arg, worker_run_t *run, const char *reason);
    /* Optional: ask the leader for count more rows of the run's leased feeder, as request
     * seq (the same seq again: the same request, its answer lost or late). */
    void (*feed_request)(void *arg, uint64_t run, uint32_t feeder, uint64_t seq, uint32_t count);
} worker_control_hooks_t;

struct worker_control_s {
    uv_loop_t *loop;
    const char *worker_id;
    worker_engine_t **engines;
    unsigned n_engines;
    worker_mailbox_t inbox;
    worker_run_t *runs;
    uv_timer_t stats_timer;
    uv_timer_t feed_timer;    /* --join: looks at the leased feeders' stocks (control_feed.c) */
    uint64_t feed_seq;        /* the last FeedRequest seq: from epoch << 32, like batch seqs */
    worker_heap_trim_t heap_trim; /* free heap back to the system (heap_trim.h) */
    uint32_t stats_interval_ms;
    bool batches;             /* cut StatsBatches (--join) or keep totals (--local) */
    bool safety_net;          /* stop runs by themselves past their duration */
    /* The last batch seq used, by any run: seqs grow across runs, so a run
     * forgotten and assigned again never repeats one. Starts at epoch << 32. */
    uint64_t last_seq;
    uint64_t round;
    unsigned round_pending;   /* engines yet to end the current round */
    const worker_control_hooks_t *hooks;
    void *hooks_arg;
    uint8_t handles;
    bool closing;
    void (*closed_cb)(worker_control_t *ctl);
    worker_trace_t *trace;    /* --local --trace: every run's plan traces its journeys */
};


/* Starts the engine threads. batches: cut StatsBatches every
 * stats_interval_ms. Returns 0 or an LC_ error. */
int worker_control_init(worker_control_t *ctl, uv_loop_t *loop,
                        const worker_engines_conf_t *engines, bool batches, const char *worker_id,
                        const worker_control_hooks_t *hooks, void *hooks_arg);
/* The batch epoch of this start (worker_seq_epoch_next): batch seqs of
 * every run start past epoch << 32. Call before the first Assign. */
void worker_control_set_seq_epoch(worker_control_t *ctl, uint64_t epoch);
/* Starts or rescales a run. Returns 0, or LC_EINVAL (bad scenario) or
 * LC_ETOOBIG (the open-file limit cannot hold its connections) with errmsg;
 * the assignment is then ignored and should be refused to the master. */
int worker_control_assign(worker_control_t *ctl, const worker_assign_t *a, char *errmsg,
                          size_t errlen);
/* Stops a run gracefully: nothing new, requests in flight get deadline_ms. */
void worker_control_stop(worker_control_t *ctl, uint64_t run, uint32_t deadline_ms);
/* Stops a preparing or running run on this worker's own decision (orphan
 * timeout). Such a run never starts again by itself; an Assign for it (from
 * a leader that did not see it running, whatever the generation) runs it
 * again once its stop completed. An Assign for a run the master stopped is
 * ignored. */
void worker_control_stop_self(worker_control_t *ctl, uint64_t run, uint32_t deadline_ms);
/* Stops every run; the deadline is min(deadline_ms, the run's request timeout). */
void worker_control_stop_all(worker_control_t *ctl, uint32_t deadline_ms);
/* The master acknowledged batches up to seq: a finished run is forgotten. */
void worker_control_acked(worker_control_t *ctl, uint64_t run, uint64_t seq);
/* A batch of run was lost (outbox overflow) with the requests it counted and
 * the losses it reported: the run's next batch reports them, or, once the run
 * is final, an extra final batch that carries only them. Returns false when
 * the run is forgotten already (the loss then stays in the log only). */
bool worker_control_lost(worker_control_t *ctl, uint64_t run, uint64_t batches,
                         uint64_t requests);
/* The leader's answer to a FeedRequest: its rows into the run's stock; an answer to nothing
 * outstanding (a duplicate), of an unknown run or feeder, or larger than asked is ignored. */
void worker_control_feed_lease(worker_control_t *ctl, const Lc__FeedLease *l);
/* control_feed.c, for control.c: the stocks' timer (initialized here; it ticks only while
 * some run has a leased feeder); a new run's leased feeders (under a master only), which
 * start it. */
void worker_control_feed_start(worker_control_t *ctl);
int worker_control_feed_plan(worker_control_t *ctl, worker_plan_t *p);
/* Changes the stats interval. */
void worker_control_set_interval(worker_control_t *ctl, uint32_t ms);
/* Collects and sends a batch now (the interval restarts from here): a
 * worker back at a new leader after a failover shows its counts at once. */
void worker_control_collect_now(worker_control_t *ctl);
/* Runs that are preparing, running or stopping. */
size_t worker_control_active(const worker_control_t *ctl);
/* Fills up to max RunLoads (assigned users when assigned_users, else the
 * users running) for runs preparing or running. Returns how many. */
size_t worker_control_loads(const worker_control_t *ctl, Lc__RunLoad *out, size_t max,
                            bool assigned_users);
/* How long the engines have polled without finding work so far, in ns (busy_poll.h). */
uint64_t worker_control_polled_ns(const worker_control_t *ctl);
/* Stops the engines and closes every handle; closed_cb runs at the end. */
void worker_control_close(worker_control_t *ctl, void (*closed_cb)(worker_control_t *));

#endif
