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

/* A watch on a peer ended. definite: the peer's process is gone (the
 * established watch closed, or nothing listens at its raft port); false: it
 * could not be set up (a timeout, an older peer that refuses watches). */
typedef void (*cluster_transport_watch_cb)(void *arg, raft_id id, bool definite);

/* An archive stream is through TLS and the challenge: stream is a plain byte stream
 * (raft_malloc'd; close it with uv_close and raft_free it), or NULL when it failed. */
typedef void (*cluster_transport_stream_cb)(void *arg, uv_stream_t *stream);
/* An incoming archive stream from server id, through TLS, the challenge and (over TLS) the
 * membership check; the callee owns stream. */
typedef void (*cluster_transport_archive_cb)(void *arg, raft_id id, uv_stream_t *stream);

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
    unsigned watchers;              /* incoming watches held */
    unsigned watch_gen;             /* our watch's generation: older ones are stale */
    cluster_transport_watch_cb watch_lost;
    void *watch_arg;
    cluster_transport_archive_cb archive_serve; /* NULL: archive streams are refused */
    void *archive_serve_arg;
} cluster_transport_t;

/* Initializes t on loop with cfg (the secret and contexts must outlive t).
 * Returns 0 or RAFT_INVALID. */
int cluster_transport_init(cluster_transport_t *t, uv_loop_t *loop,
                           const cluster_transport_config_t *cfg);
/* The watch: a connection to a peer's raft port that carries nothing after
 * its handshake (the cluster secret's challenge and TLS as raft's own), so
 * its end says at once that the peer's process died, long before an election
 * timeout would. One at a time: watch() replaces the previous one, unwatch()
 * ends it; lost(arg, id, definite) is called once when a watch ends by
 * itself. set_watch_cb before the first watch. */
void cluster_transport_set_watch_cb(cluster_transport_t *t, cluster_transport_watch_cb lost,
                                    void *arg);
/* Returns 0, or a RAFT_ error (lost is not called then). */
int cluster_transport_watch(cluster_transport_t *t, raft_id id, const char *address);
void cluster_transport_unwatch(cluster_transport_t *t);

/* Archive streams: a connection to a peer's raft port, authenticated as raft's own
 * (TLS, the challenge), that then carries one archive file (archive_net.h). serve takes the
 * incoming ones (NULL: refuse them). open dials id at address; cb(arg, stream or NULL)
 * follows exactly once when it returns 0. */
void cluster_transport_set_archive_server(cluster_transport_t *t, cluster_transport_archive_cb serve,
                                          void *arg);
int cluster_transport_open_archive(cluster_transport_t *t, raft_id id, const char *address,
                                   cluster_transport_stream_cb cb, void *arg);

/* Releases t's memory; call after raft has closed the transport (or when raft
 * never started it). */
void cluster_transport_close(cluster_transport_t *t);

#endif
