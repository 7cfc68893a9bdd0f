/* scheduler.h — who gets how many users on which worker: pure functions, no
 * I/O, no globals, unit-tested on their own (tests/unit/test_scheduler.c). */
#ifndef MASTER_SCHEDULER_H
#define MASTER_SCHEDULER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Tenant weights are clamped to 1..SCHED_WEIGHT_MAX (0 counts as 1) so the
 * scheduler's exact integer arithmetic cannot overflow. */
#define SCHED_WEIGHT_MAX 1000000u

/* Splits `total` over n shares in proportion to `weights` by largest
 * remainder (ties go to the lower index), so out[] sums to total exactly.
 * All-zero weights split evenly. n must be > 0. */
void sched_split(uint32_t total, const uint32_t *weights, size_t n, uint32_t *out);

typedef struct sched_worker_s {
    const char *id;        /* unique; the order of users over workers follows it */
    uint32_t capacity;     /* effective capacity: users it may carry now */
} sched_worker_t;

typedef struct sched_tenant_s {
    const char *name;      /* unique */
    uint32_t weight;       /* 0 counts as 1 */
} sched_tenant_t;

typedef struct sched_run_s {
    uint64_t id;           /* unique */
    uint64_t created;      /* creation order: lower is older (ties: lower id) */
    const char *tenant;    /* a tenant missing from the tenant list has weight 1 */
    uint32_t requested;    /* users the scenario asks for */
    bool queue;            /* policy "queue": start only when granted in full */
    bool started;          /* already running: queueing never preempts it */
    const uint32_t *current; /* users per worker now, indexed like workers[]; NULL: none */
} sched_run_t;

typedef struct sched_grant_s {
    uint32_t granted;      /* users the run gets = the sum of users[] */
    bool queued;           /* the run gets nothing now and waits */
    uint32_t *users;       /* OUT: caller-allocated, n_workers entries, indexed like workers[] */
} sched_grant_t;

/* Plans every active run at once; out[i] answers runs[i].
 *
 * 1. Admission: runs with policy degrade, and started runs, are admitted.
 *    Queue runs that have not started are tried oldest first: one is admitted
 *    when, with it, every admitted unstarted queue run is granted in full;
 *    otherwise it stays queued (granted 0) and its share goes to the others.
 * 2. Tenants: the fleet's capacity (sum of worker capacities) is split over
 *    tenants with admitted runs by weighted max-min fairness (water-filling):
 *    no tenant gets more than its runs ask, leftovers go to the others, and
 *    the constrained ones share the rest by weight, rounded by largest
 *    remainder (ties: tenant name order).
 * 3. Runs: a tenant's grant is split over its admitted runs the same way with
 *    equal weights (ties: older run first).
 * 4. Workers: runs oldest first, each run's grant is spread over the workers
 *    in proportion to their free capacity (what older runs left), every
 *    worker within one user of its exact share, never above its capacity.
 *    Of those roundings the one closest to `current` is taken, so nothing
 *    moves unless the proportions require it.
 *
 * The result depends on ids, names and values only, never on input order.
 * Returns 0, or LC_ENOMEM (out[] then undefined). */
int sched_plan(const sched_worker_t *workers, size_t n_workers, const sched_tenant_t *tenants,
               size_t n_tenants, const sched_run_t *runs, size_t n_runs, sched_grant_t *out);

#endif
