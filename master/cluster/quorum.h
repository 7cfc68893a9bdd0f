/* quorum.h — the Raft glue: canonical/raft on libuv with the store as its
 * state machine; proposing commands and watching this node's role. */
#ifndef MASTER_QUORUM_H
#define MASTER_QUORUM_H

#include <stdbool.h>
#include <stdint.h>
#include <openssl/ssl.h>
#include <uv.h>

#include "lc_join.h"
#include "lc_nodes_conf.h"
#include "state.pb-c.h"
#include "store.h"
#include "transport.h"

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
    bool no_bootstrap;           /* wait to be added to a running quorum */
    const lc_join_secret_t *cluster_secret; /* peers prove it (transport.h); NULL: none */
    /* Both or neither: Raft over mutual TLS (transport.h); a peer is
     * admitted when its certificate names the host of its raft address and
     * that server is in the configuration (any, before this node has one). */
    SSL_CTX *tls_server, *tls_client;
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

/* A follower's news of its leader (leader_watch.h): gone, the leader it
 * knew died and its election is already starting (send no worker there);
 * otherwise leader_id has just become known as the leader. */
typedef void (*quorum_leader_cb)(void *arg, uint64_t leader_id, bool gone);
void quorum_on_leader(quorum_t *q, quorum_leader_cb cb, void *arg);

bool quorum_is_leader(quorum_t *q);
uint64_t quorum_term(quorum_t *q);
uint64_t quorum_id(quorum_t *q);
/* The leader's id as this node knows it, 0 when none. */
uint64_t quorum_leader_id(quorum_t *q);
uint64_t quorum_commit_index(quorum_t *q);
uint64_t quorum_applied_index(quorum_t *q);

/* One server of the Raft configuration. */
typedef struct quorum_server_s {
    uint64_t id;
    char address[LC_HOST_MAX + 8]; /* raft address */
    bool voter;
} quorum_server_t;

/* The Raft port's transport (archive streams ride on it: archive_net.h). */
cluster_transport_t *quorum_transport(quorum_t *q);

/* The current Raft configuration; returns how many servers were written. */
size_t quorum_servers(quorum_t *q, quorum_server_t *out, size_t max);

/* Membership changes, on the leader. add: raft_add, then promote to voter
 * once caught up; remove: raft_remove. cb(arg, status) with 0 or an LC_
 * error, and errmsg filled on failure. Return 0 (cb follows) or an error. */
typedef void (*quorum_change_cb)(void *arg, int status, const char *errmsg);
int quorum_add_voter(quorum_t *q, uint64_t id, const char *raft_address, quorum_change_cb cb,
                     void *arg);
int quorum_remove(quorum_t *q, uint64_t id, quorum_change_cb cb, void *arg);

/* Proposes a command. cb may be NULL. Returns 0 (cb will be called), or
 * LC_ENOTLEADER / LC_ENOMEM (cb will not be called). */
int quorum_propose(quorum_t *q, const Lc__Command *cmd, quorum_applied_cb cb, void *arg);

/* Hands leadership to the most up-to-date voter (raft_transfer), for a clean
 * shutdown. Returns 0 and calls done(arg, new leader id or 0) once another
 * node leads or an election timeout passed; returns LC_ESTATE (done not
 * called) when this node is not the leader or has no voter to hand over to. */
int quorum_step_down(quorum_t *q, void (*done)(void *arg, uint64_t new_leader), void *arg);

/* The first step of a shutdown: refuses new proposals (quorum_is_leader turns
 * false) and calls on_drained(arg) once the log writes in flight are on disk,
 * or after 2 s. Proposals in flight may still be applied meanwhile, so what
 * their callbacks touch must stay open until then. */
void quorum_drain(quorum_t *q, void (*on_drained)(void *arg), void *arg);

/* Stops raft (after quorum_drain, when it was called); on_closed(arg) runs
 * once raft and the handles are closed. q itself stays allocated: raft_uv
 * 0.15 may still run a callback on it later in the same loop. */
void quorum_close(quorum_t *q, void (*on_closed)(void *arg), void *arg);

/* Frees a closed q (NULL is fine); call it only after the loop has ended. */
void quorum_free(quorum_t *q);

#endif
