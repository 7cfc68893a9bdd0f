/* transport.h — the raft_uv_transport of the Raft port: it resolves host
 * names at each connect (canonical/raft 0.15's TCP transport takes only IPv4
 * literals, and a restarted Kubernetes pod comes back with a new IP under the
 * same name), and with a cluster secret it makes both ends of every
 * connection prove the secret (peer_auth.h) before raft sees a byte. Raft's
 * own handshake (protocol, server id, address) follows, as raft_uv_tcp
 * speaks it, so raft itself is unchanged. */
#ifndef MASTER_TRANSPORT_H
#define MASTER_TRANSPORT_H

#include <raft.h>
#include <raft/uv.h>
#include <stdint.h>
#include <uv.h>

#include "lc_join.h"

#define CLUSTER_TRANSPORT_DEADLINE_MS 3000u /* for authentication and raft's handshake */
#define CLUSTER_TRANSPORT_INCOMING_MAX 64u  /* incoming connections not yet raft's */
#define CLUSTER_TRANSPORT_ADDRESS_MAX 264u  /* a raft address, its NUL, padded to 8 */

typedef struct peer_conn_s peer_conn_t;
typedef struct pending_resolve_s pending_resolve_t;

typedef struct cluster_transport_s {
    /* public */
    struct raft_uv_transport outer; /* what raft_uv_init() is given */
    /* private */
    uv_loop_t *loop;
    const lc_join_secret_t *secret; /* NULL: no authentication */
    unsigned deadline_ms;
    raft_id id;
    char address[CLUSTER_TRANSPORT_ADDRESS_MAX]; /* this node's raft address, sent in the handshake */
    char bind_address[64];          /* "ip:port" to listen on; "" = address */
    uv_tcp_t listener;
    int listener_state;             /* 0 none, 1 open, 2 closing, 3 closed */
    unsigned incoming;              /* incoming conns in handshake */
    raft_uv_accept_cb accept_cb;
    raft_uv_transport_close_cb close_cb;
    peer_conn_t *conns;             /* connections in handshake, both directions */
    pending_resolve_t *pending;     /* connects waiting for a name lookup */
    int closing;
    uint64_t log_next_ms[2];        /* refusals are logged at most once a second, */
    unsigned log_suppressed[2];     /* [0] incoming, [1] outgoing */
} cluster_transport_t;

/* Initializes t on loop. bind_address, when not NULL, is the IPv4 "ip:port"
 * to listen on (needed when this node's own address is a host name). secret,
 * when not NULL and not empty, is the cluster secret every peer must prove;
 * it must outlive t. Returns 0 or RAFT_INVALID. */
int cluster_transport_init(cluster_transport_t *t, uv_loop_t *loop, const char *bind_address,
                           const lc_join_secret_t *secret);
/* Releases t's memory; call after raft has closed the transport (or when raft
 * never started it). */
void cluster_transport_close(cluster_transport_t *t);

#endif
