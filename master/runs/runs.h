/* runs.h — the leader's run controller: shares the fleet between runs
 * (scheduler.h), starts pending runs once granted, ends them by duration or
 * on request, waits for final stats, and adopts runs that were active when
 * this node became leader. */
#ifndef MASTER_RUNS_H
#define MASTER_RUNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fleet.h"
#include "master.h"

int runs_init(runs_t **out, master_t *m);
void runs_close(runs_t *r);

/* Leadership changes: the controller only acts on the leader. */
void runs_on_leader(runs_t *r, bool leader);
void runs_on_worker_join(runs_t *r, fleet_worker_t *w, const Lc__Hello *hello);
void runs_on_worker_lost(runs_t *r, fleet_worker_t *w);
/* A worker cannot run its share of a run: the run fails with its reason. */
void runs_on_assign_refused(runs_t *r, fleet_worker_t *w, uint64_t run, const char *reason);
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
