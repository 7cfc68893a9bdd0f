/* retention.h — on the leader, proposes the RetainHistory steps that finished
 * runs are due for (store/store_retention.h), one at a time, so that every
 * master compacts, drops acks and deletes the same history. */
#ifndef MASTER_RETENTION_H
#define MASTER_RETENTION_H

#include <stdbool.h>
#include <uv.h>

#include "commands.h"
#include "store.h"
#include "store_retention.h"

typedef struct retention_s retention_t;

/* Checks every interval_ms while leading (retention_on_leader). */
int retention_init(retention_t **out, uv_loop_t *loop, store_t *store,
                   const command_sink_t *commands, const store_retention_policy_t *policy,
                   uint64_t interval_ms);
void retention_on_leader(retention_t *r, bool leader);
/* Proposes the next due step now unless one is in flight; returns whether
 * it proposed one (the timer's work; tests call it directly). */
bool retention_step(retention_t *r, uint64_t now_wall_ms);
void retention_close(retention_t *r);

#endif
