/* admission.h — what a worker may say about a run it holds a share of: the
 * pure checks of a StatsBatch and of a claim in Hello against the run's plan
 * and the share the leader knows (runs.c finds the run and the share). */
#ifndef MASTER_ADMISSION_H
#define MASTER_ADMISSION_H

#include <stdint.h>

#include "cluster.pb-c.h"
#include "lc_scenario.h"

/* A claimed generation may be this far past the newest one recorded: the
 * leader may die between sending an Assign and committing its record. */
#define ADMISSION_GENERATION_SLACK 64
/* A batch's second may be this far past the run's elapsed time (clocks). */
#define ADMISSION_SECOND_SLACK_S 5

/* Why batch b cannot be counted in a run of plan sc that has been going for
 * elapsed_s seconds, or NULL: its second, its endpoints, methods and error
 * kinds, and counts that must fit the store's 64-bit columns. */
const char *admission_batch_problem(const lc_scenario_t *sc, const Lc__StatsBatch *b,
                                    uint64_t elapsed_s);

/* Why a Hello's claim cannot be adopted, or NULL. known: the leader knows a
 * share of this worker, of newest generation known_gen; requested: the
 * run's users. */
const char *admission_claim_problem(bool known, uint64_t known_gen, uint32_t requested,
                                    const Lc__RunLoad *claim);

/* Leases of a feeder: at most this many rows per user of the worker's share (and at least
 * ADMISSION_LEASE_MIN), never more than STORE_LEASE_ROWS_MAX, at most one per
 * ADMISSION_LEASE_GAP_MS per (worker, run, feeder): a worker that asks again and again
 * takes a bounded number of rows per second, whatever it asks. */
#define ADMISSION_LEASE_PER_USER 16u
#define ADMISSION_LEASE_MIN 16u
#define ADMISSION_LEASE_GAP_MS 100u

/* Why a FeedRequest cannot be granted in a run of plan sc, or NULL: a feeder the plan has,
 * whose rows are leased (lc_feeder_leased), and at least one row asked. */
const char *admission_feed_problem(const lc_scenario_t *sc, const Lc__FeedRequest *req);
/* The rows a lease gives for asked rows to a share of users of a run of run_users, with
 * remaining rows not yet handed out (UINT64_MAX: no end, on_exhausted wrap): besides the
 * bounds above, at most the share's part of what remains (at least one row), so the last
 * rows of a feeder are spread over the workers as their users are, not held by one. */
uint32_t admission_lease_count(uint32_t asked, uint32_t users, uint32_t run_users,
                               uint64_t remaining);

#endif
