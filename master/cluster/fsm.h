/* fsm.h — the Raft state machine: decodes each committed Command and applies
 * it to the store; snapshots are the serialized SQLite database, taken from
 * a read transaction on a thread of raft's (fsm version 3), not on the loop. */
#ifndef MASTER_FSM_H
#define MASTER_FSM_H

#include <raft.h>

#include "state.pb-c.h"
#include "store.h"

typedef struct fsm_s {
    struct raft_fsm raft;      /* what raft_init() is given */
    /* private */
    store_t *store;            /* not owned */
    store_snapshot_t *pending; /* from snapshot to snapshot_finalize */
    uint64_t pending_since_ms;
    uint64_t slow_warned_ms;   /* when the last "slow apply" was logged */
} fsm_t;

/* Fills f to apply to `store` (not owned). The apply result handed to
 * raft_apply callbacks is the store's return code as an intptr_t: a failed
 * command never fails the log. */
void fsm_init(fsm_t *f, store_t *store);

/* Encodes a command as a log entry: a 4-byte little-endian length, the
 * protobuf bytes, and zero padding to a multiple of 8 bytes (raft's on-disk
 * format requires 8-byte aligned entry sizes). out->base is raft_malloc'd.
 * Returns 0 or LC_ENOMEM. */
int fsm_encode_command(const Lc__Command *cmd, struct raft_buffer *out);

/* Decodes the result pointer an apply callback receives. */
int fsm_result_code(void *result);

#endif
