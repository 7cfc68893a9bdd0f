/* journey_feed.h — engine thread: feeder rows and JSON list elements for a journey's feed
 * and foreach ops. */
#ifndef WORKER_JOURNEY_FEED_H
#define WORKER_JOURNEY_FEED_H

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"
#include "lc_json_scan.h"

/* The next row of feeder f for this worker: from its leased stock (plan.h's
 * worker_feed_t.stock; WORKER_TAKE_WAIT while more rows are on their way), else its slice;
 * WORKER_TAKE_EXHAUSTED when none is left and the feeder's policy is not wrap. */
enum worker_take worker_feed_next(engine_run_t *r, uint32_t f, uint64_t *rng, uint32_t *row);

/* Per-user rows in shuffle order (and sequential without a master): user_id's own row (${user_id} is unique in
 * the cluster, so no two users take one row); false past the end unless the policy wraps. */
bool worker_feed_of_user(engine_run_t *r, uint32_t f, uint64_t user_id, uint32_t *row);

/* Element at of the JSON array text list (and their count); a string element is raw
 * (elem->escaped: decode it). 0 or LC_EINVAL. */
int worker_json_element(const char *list, size_t len, uint32_t at, uint32_t *count,
                        lc_jmatch_t *elem);

#endif
