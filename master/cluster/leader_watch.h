/* leader_watch.h — a follower watches its leader's raft port (transport.h's
 * watch); when the leader's process dies, the follower's election starts
 * within a few heartbeats instead of after the rest of its election timeout,
 * and the master stops sending workers to the dead address. */
#ifndef MASTER_LEADER_WATCH_H
#define MASTER_LEADER_WATCH_H

#include <raft.h>
#include <stdbool.h>
#include <stdint.h>

#include "transport.h"

/* gone: the leader with this id died; otherwise this follower has just
 * learnt that id leads. */
typedef void (*leader_watch_cb)(void *arg, uint64_t id, bool gone);

typedef struct leader_watch_s {
    struct raft *raft;
    cluster_transport_t *transport;
    raft_id watched;      /* the leader watched, 0: none */
    bool open;            /* a watch on it is being set up or up */
    raft_time retry_at;   /* after a watch that could not be set up */
    bool hastened;        /* this follower's deadline was moved earlier */
    raft_time hastened_at;
    uint64_t rng;         /* our own: raft's io->random is seeded alike on masters
                           * started together, and equal draws split the vote */
    leader_watch_cb event;
    void *arg;
} leader_watch_t;

/* event may be NULL. Registers with t's watch callback. */
void leader_watch_init(leader_watch_t *w, struct raft *r, cluster_transport_t *t,
                       leader_watch_cb event, void *arg);
/* Looks at raft's state (call it often, e.g. with the role poll): watches the
 * current leader while this node follows it, nothing otherwise. */
void leader_watch_poll(leader_watch_t *w);

#endif
