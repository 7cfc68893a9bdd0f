/* quorum.h — the Raft glue: canonical/raft on libuv with the store as its
 * state machine; proposing commands and watching this node's role. */
#ifndef MASTER_QUORUM_H
#define MASTER_QUORUM_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "lc_nodes_conf.h"
#include "state.pb-c.h"
#include "store.h"

typedef struct quorum_s quorum_t;

typedef struct quorum_config_s {
    const char *data_dir;      /* raft log and snapshots; created if missing */
    uint64_t id;               /* this node's id */
    const char *raft_address;  /* this node's raft address (one-node quorum) */
    const lc_nodes_conf_t *nodes; /* every master of a quorum; NULL: one node */
    unsigned election_timeout_ms;
    unsigned heartbeat_timeout_ms;
    unsigned snapshot_threshold; /* entries between snapshots */
    unsigned snapshot_trailing;  /* entries kept after a snapshot */
} quorum_config_t;

/* Called when this node becomes leader (true) or stops being leader. */
typedef void (*quorum_role_cb)(void *arg, bool leader);
/* Called once a proposal is applied (status 0; result = store_apply's code)
 * or failed (status = LC_ENOTLEADER or LC_EIO; result meaningless). */
typedef void (*quorum_applied_cb)(void *arg, int status, int result);

/* Starts this node of the quorum (bootstrapped with every node of cfg->nodes,
 * or alone, on first start) applying to store.
 * Returns 0 or an error with errmsg. */
int quorum_init(quorum_t **out, uv_loop_t *loop, store_t *store, const quorum_config_t *cfg,
                quorum_role_cb on_role, void *role_arg, char *errmsg, size_t errlen);

bool quorum_is_leader(quorum_t *q);
uint64_t quorum_term(quorum_t *q);
uint64_t quorum_id(quorum_t *q);
/* The leader's id as this node knows it, 0 when none. */
uint64_t quorum_leader_id(quorum_t *q);
uint64_t quorum_commit_index(quorum_t *q);
uint64_t quorum_applied_index(quorum_t *q);

/* Proposes a command. cb may be NULL. Returns 0 (cb will be called), or
 * LC_ENOTLEADER / LC_ENOMEM (cb will not be called). */
int quorum_propose(quorum_t *q, const Lc__Command *cmd, quorum_applied_cb cb, void *arg);

/* Stops raft; on_closed(arg) runs once every handle is closed and q is freed. */
void quorum_close(quorum_t *q, void (*on_closed)(void *arg), void *arg);

#endif
