/* fsm.h — the Raft state machine: decodes each committed Command and applies
 * it to the store; snapshots are the serialized SQLite database. */
#ifndef MASTER_FSM_H
#define MASTER_FSM_H

#include <raft.h>

#include "store.h"

/* Fills a raft_fsm that applies to `store` (not owned). The apply result
 * handed to raft_apply callbacks is the store's return code as an intptr_t:
 * a failed command never fails the log. */
void fsm_init(struct raft_fsm *fsm, store_t *store);

/* Decodes the result pointer an apply callback receives. */
int fsm_result_code(void *result);

#endif
