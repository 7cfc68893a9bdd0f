/* runs.h — the leader's run controller: shares the fleet between runs
 * (scheduler.h), starts pending runs once granted, ends them by duration or
 * on request, waits for final stats, and adopts runs that were active when
 * this node became leader. */
#ifndef MASTER_RUNS_H
#define MASTER_RUNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "commands.h"
#include "fleet.h"
#include "master.h"
#include "store.h"

/* Everything the controller does to the rest of the master, so that
 * tests/unit/test_runs.c can stand in for the fleet, the quorum and the
 * clocks. runs_io_master is the real one. */
typedef struct runs_io_s {
    void *arg;
    command_sink_t commands; /* RunState, RunGrant, RunFinished */
    /* The fleet: connected workers in join order (valid until the next
     * call), any known worker by id, and its saturation epoch. */
    fleet_worker_t **(*connected)(void *arg, size_t *n);
    fleet_worker_t *(*find)(void *arg, const char *worker_id);
    uint64_t (*saturation_epoch)(void *arg);
    int (*send_assign)(void *arg, const char *worker_id, const fleet_assign_t *a);
    int (*send_stop)(void *arg, const char *worker_id, uint64_t run, const char *reason);
    int (*send_feed_lease)(void *arg, const char *worker_id, const fleet_feed_lease_t *l);
    void (*set_assigned)(void *arg, const char *worker_id, uint64_t run, uint32_t users);
    void (*forget_run)(void *arg, uint64_t run);
    /* The batcher still holds statistics of the run (queued or in flight). */
    bool (*stats_pending)(void *arg, uint64_t run);
    uint64_t (*mono_ms)(void *arg);
    uint64_t (*wall_ms)(void *arg);
} runs_io_t;

/* The io of the running master m (its fleet, batcher, quorum, clocks). */
runs_io_t runs_io_master(master_t *m);

/* store is read for runs and tenants; heartbeat_ms bounds the wait for
 * workers of adopted runs. With a loop, runs_tick runs every 100 ms; with
 * NULL (tests) the caller calls it. */
int runs_init(runs_t **out, uv_loop_t *loop, store_t *store, const runs_io_t *io,
              uint32_t heartbeat_ms);
void runs_close(runs_t *r);
/* Activates pending runs, ends runs by duration or threshold, finishes
 * stopping runs once their final stats are in, and reschedules if due. */
void runs_tick(runs_t *r);

/* Leadership changes: the controller only acts on the leader. */
void runs_on_leader(runs_t *r, bool leader);
void runs_on_worker_join(runs_t *r, fleet_worker_t *w, const Lc__Hello *hello);
void runs_on_worker_lost(runs_t *r, fleet_worker_t *w);
/* A worker cannot run its share of a run: the run fails with its reason.
 * Only a worker holding an assignment of the run can fail it; any other
 * refusal is counted (runs_refused) and changes nothing. */
void runs_on_assign_refused(runs_t *r, fleet_worker_t *w, uint64_t run, const char *reason);
/* A worker's data ran out (a feeder with on_exhausted stop_run): the run finishes, with its
 * reason. As for refusals, only a worker holding a share of the run can end it. */
void runs_on_worker_done(runs_t *r, fleet_worker_t *w, uint64_t run, const char *reason);
/* A worker asks for rows of a sequential feeder: only of a run it holds a share of, of a
 * leased feeder of its plan, at most one new lease per ADMISSION_LEASE_GAP_MS, of bounded
 * size (admission.h). Its last seq again gets its last lease again (no new rows); an older
 * seq nothing. A new seq is proposed as LeaseRows, whose lease is sent once it committed. */
void runs_on_feed_request(runs_t *r, fleet_worker_t *w, const Lc__FeedRequest *req);

/* Whether worker w may add batch b to the history now: it holds (or is
 * adopting) an assignment of a run that is running or stopping, every
 * endpoint and error kind is the plan's, the counts fit the store's 64-bit
 * columns, and the batch's second lies within the run's elapsed time. */
typedef enum runs_admission_e {
    RUNS_ADMIT,
    RUNS_REFUSE,      /* changes nothing, not acknowledged */
    RUNS_REFUSE_OVER, /* the run is over: acknowledged so the worker drops it */
} runs_admission_t;
runs_admission_t runs_admit_stats(runs_t *r, const fleet_worker_t *w, const Lc__StatsBatch *b);

/* Messages from workers that were refused since start, by kind: stats
 * batches, AssignRefused, run claims in Hello and feed requests. */
typedef struct runs_refused_s {
    uint64_t stats, refusals, claims, feeds;
} runs_refused_t;
runs_refused_t runs_refused(const runs_t *r);
/* The final StatsBatch of (run, worker) has committed. */
void runs_on_final_committed(runs_t *r, uint64_t run, const char *worker_id);

/* Plans every pending and running run again (sched_plan) and sends the
 * workers whose share changed a new generation; call it when something the
 * plan depends on changed outside this module, e.g. after SetTenantWeight
 * applied. Worker join and loss, saturation, run start and end reschedule
 * by themselves. Does nothing on a follower. */
void runs_reschedule(runs_t *r);

/* Next run id to propose (unique on this leader). */
uint64_t runs_next_id(runs_t *r);

/* Asks a run to stop. Returns 0, LC_ENOTFOUND, LC_ESTATE (already over;
 * errmsg says so) or LC_ENOTLEADER. */
int runs_request_stop(runs_t *r, uint64_t id, char *errmsg, size_t errlen);

#endif
