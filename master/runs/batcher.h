/* batcher.h — bundles workers' StatsBatches on the leader into one RunSeconds
 * command per run every 200 ms, and acknowledges each batch to its worker
 * only after the entry holding it has committed. (It merges nothing: the
 * FSM's SQL adds the batches into the history; formerly "aggregator".) */
#ifndef MASTER_BATCHER_H
#define MASTER_BATCHER_H

#include <stdbool.h>
#include <stdint.h>

#include "commands.h"
#include "fleet.h"
#include "master.h"

/* Uses m's store, runs, fleet and loop; proposes RunSeconds to commands. */
int batcher_init(batcher_t **out, master_t *m, const command_sink_t *commands);
/* Frees queued batches; proposals still in flight are completed without it. */
void batcher_close(batcher_t *a);

/* Takes ownership of env (a StatsBatch from worker w). */
void batcher_add(batcher_t *a, fleet_worker_t *w, Lc__Envelope *env);
/* Proposes every queued batch now. */
void batcher_flush(batcher_t *a);
/* Milliseconds until the next flush proposes what is queued. */
uint64_t batcher_flush_due_in(const batcher_t *a);
/* True while batches of this run are queued or being committed. */
bool batcher_busy(batcher_t *a, uint64_t run);
/* Batches workers re-sent from their outbox that were already counted or in
 * flight (dropped here, acknowledged once committed), since this master started. */
uint64_t batcher_replays(const batcher_t *a);
/* Drops everything queued (this node stopped being leader). */
void batcher_reset(batcher_t *a);

#endif
