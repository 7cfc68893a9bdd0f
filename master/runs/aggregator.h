/* aggregator.h — collects workers' StatsBatches on the leader, proposes them
 * as RunSeconds once per interval, and acknowledges each batch to its worker
 * only after the entry holding it has committed. */
#ifndef MASTER_AGGREGATOR_H
#define MASTER_AGGREGATOR_H

#include <stdbool.h>
#include <stdint.h>

#include "fleet.h"
#include "master.h"

int aggregator_init(aggregator_t **out, master_t *m);
/* Frees queued batches; proposals still in flight are completed without it. */
void aggregator_close(aggregator_t *a);

/* Takes ownership of env (a StatsBatch from worker w). */
void aggregator_add(aggregator_t *a, fleet_worker_t *w, Lc__Envelope *env);
/* Proposes every queued batch now. */
void aggregator_flush(aggregator_t *a);
/* True while batches of this run are queued or being committed. */
bool aggregator_busy(aggregator_t *a, uint64_t run);
/* Batches workers re-sent from their outbox that were already counted or in
 * flight (dropped here, acknowledged once committed), since this master started. */
uint64_t aggregator_replays(const aggregator_t *a);
/* Drops everything queued (this node stopped being leader). */
void aggregator_reset(aggregator_t *a);

#endif
