/* transport.h — the raft_uv_transport of the Raft port: it resolves host
 * names at each connect (canonical/raft 0.15's TCP transport takes only IPv4
 * literals, and a restarted Kubernetes pod comes back with a new IP under the
 * same name); with certificates it runs every connection over mutual TLS
 * (tls_relay.h), and with a cluster secret it makes both ends prove the
 * secret (peer_auth.h), before raft sees a byte. Raft's own handshake
 * (protocol, server id, address) follows, as raft_uv_tcp speaks it, so raft
 * itself is unchanged. */
#ifndef MASTER_TRANSPORT_H
#define MASTER_TRANSPORT_H

#include <raft.h>
#include <raft/uv.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "lc_join.h"
#include "lc_tls_channel.h"
#include "tls_relay.h"

#define CLUSTER_TRANSPORT_DEADLINE_MS 3000u /* for authentication and raft's handshake */
#define CLUSTER_TRANSPORT_INCOMING_MAX 64u  /* incoming connections not yet raft's */
#define CLUSTER_TRANSPORT_ADDRESS_MAX 264u  /* a raft address, its NUL, padded to 8 */

/* With TLS: whether server id may take part from address (its raft
 * address, as its handshake claims it). */
typedef bool (*cluster_transport_admit_fn)(void *arg, raft_id id, const char *address);

typedef struct cluster_transport_config_s {
    const char *bind_address; /* IPv4 "ip:port" to listen on; NULL: this node's address */
    const lc_join_secret_t *secret; /* the cluster secret; NULL or empty: no challenge */
    /* Both or neither: raft over mutual TLS. An incoming peer's certificate
     * must name the host of the raft address it claims, and admit must
     * accept its id at that address; an outgoing connection verifies that
     * the peer's certificate names the host dialed. */
    SSL_CTX *tls_server, *tls_client;
    cluster_transport_admit_fn admit; /* NULL: any id whose certificate fits */
    void *admit_arg;
} cluster_transport_config_t;

typedef struct peer_conn_s peer_conn_t;
typedef struct pending_resolve_s pending_resolve_t;

typedef struct cluster_transport_s {
    /* public */
    struct raft_uv_transport outer; /* what raft_uv_init() is given */
    /* private */
    uv_loop_t *loop;
    const lc_join_secret_t *secret; /* NULL: no challenge */
    SSL_CTX *tls_server, *tls_client; /* NULL: plain TCP */
    cluster_transport_admit_fn admit;
    void *admit_arg;
    tls_relays_t relays;            /* TLS connections raft owns */
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

/* Initializes t on loop with cfg (the secret and contexts must outlive t).
 * Returns 0 or RAFT_INVALID. */
int cluster_transport_init(cluster_transport_t *t, uv_loop_t *loop,
                           const cluster_transport_config_t *cfg);
/* Releases t's memory; call after raft has closed the transport (or when raft
 * never started it). */
void cluster_transport_close(cluster_transport_t *t);

#endif
