/* transport_internal.h — what transport.c (listening, the session before
 * raft's, closing) and transport_connect.c (outgoing connections, for raft
 * and for the leader watch) share: one connection in handshake. */
#ifndef MASTER_TRANSPORT_INTERNAL_H
#define MASTER_TRANSPORT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lc_addr.h"
#include "lc_buf.h"
#include "peer_auth.h"
#include "transport.h"

/* canonical/raft's TCP handshake (src/uv_tcp.h, uv_tcp_connect.c): three
 * little-endian uint64 (protocol 1, server id, address length padded to 8
 * with its NUL), then the address. */
#define HANDSHAKE_PROTOCOL 1u
/* The same handshake with this protocol opens a watch instead (transport.h):
 * the acceptor answers these 8 bytes, then neither side sends anything. */
#define WATCH_PROTOCOL 0x686374617763ull /* "cwatch" */
#define WATCH_ACK_LEN 8u
/* The same handshake with this protocol opens an archive stream (transport.h): once both
 * sides are through, the stream is archive_net.c's. */
#define ARCHIVE_PROTOCOL 0x7663726174736cull /* "lstarcv" */
#define PREAMBLE_LEN 24u
#define ADDRESS_MAX CLUSTER_TRANSPORT_ADDRESS_MAX /* padded, with the NUL */
#define CIPHER_CHUNK 4096u /* TLS: ciphertext read at a time before raft's */

typedef enum {
    PHASE_CONNECTING, /* outgoing: TCP connect in flight */
    PHASE_TLS,        /* the TLS handshake */
    PHASE_AUTH,       /* the challenge (peer_auth) */
    PHASE_PREAMBLE,   /* incoming: raft's handshake preamble */
    PHASE_ADDRESS,    /* incoming: the peer's raft address */
    PHASE_READY,      /* raft's (or a watch) once the last write completed */
    PHASE_WATCH_ACK,  /* outgoing watch: waiting for the acceptor's answer */
    PHASE_WATCHING    /* a watch is up: any byte is a violation, EOF ends it */
} phase_t;

/* One connection before raft owns it, or a watch for all its life. */
struct peer_conn_s {
    cluster_transport_t *t;
    uv_tcp_t *tcp; /* raft_malloc'd: raft frees it once it is raft's */
    uv_timer_t deadline;
    uv_connect_t connect;
    bool outgoing;
    bool notify;             /* outgoing: raft waits for cb */
    bool in_handshake;       /* incoming: counted in t->incoming */
    bool watch;              /* a watch, never raft's */
    bool archive;            /* an archive stream, never raft's */
    cluster_transport_stream_cb archive_cb; /* outgoing archive stream: its stream, or NULL */
    void *archive_arg;
    bool refused;            /* outgoing: nothing listened at the peer's port */
    unsigned watch_gen;      /* outgoing watch: t->watch_gen when it was opened */
    phase_t phase;
    lc_tls_channel_t *tls;   /* NULL: plain TCP */
    lc_buf_t early;          /* TLS: raft's plaintext read with the handshake */
    char host[LC_HOST_MAX];  /* outgoing: the host dialed, which its certificate must name */
    uint8_t cipher[CIPHER_CHUNK];
    peer_auth_t auth;
    uint8_t in[ADDRESS_MAX]; /* the message being read, read exactly */
    size_t have, want;
    size_t received;         /* bytes from the peer so far */
    raft_id peer_id;
    struct raft_uv_connect *req; /* outgoing */
    raft_uv_connect_cb cb;
    unsigned writes;         /* uv_write requests in flight */
    unsigned closes;         /* handles still closing */
    bool failed;
    char peer[64];           /* ip:port for logs */
    peer_conn_t *next;
};

/* A connect waiting for its host name to be looked up (for raft, or a watch). */
struct pending_resolve_s {
    uv_getaddrinfo_t gai;
    cluster_transport_t *t;
    struct raft_uv_connect *req; /* NULL: for the watch of generation watch_gen, or archive_cb's */
    cluster_transport_stream_cb archive_cb;
    void *archive_arg;
    unsigned watch_gen;
    raft_id id;
    char host[LC_HOST_MAX];
    uint16_t port;
    raft_uv_connect_cb cb;
    pending_resolve_t *next;
};

static inline void transport_put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t transport_get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static inline cluster_transport_t *transport_of_outer(struct raft_uv_transport *outer)
{
    return outer->impl;
}

/* Allocates a connection with its TCP handle and deadline timer initialized. */
peer_conn_t *transport_conn_new(cluster_transport_t *t, bool outgoing);
/* The TCP connection is up (either direction): TLS, the challenge, the handshake. */
void transport_conn_start(peer_conn_t *c);
/* Closes c for why (NULL: not worth a warning). */
void transport_conn_fail(peer_conn_t *c, const char *why);
/* Calls raft's close callback once nothing is left open. */
void transport_maybe_closed(cluster_transport_t *t);

/* raft_uv_transport's connect (transport_connect.c). */
int transport_outer_connect(struct raft_uv_transport *outer, struct raft_uv_connect *req,
                            raft_id id, const char *address, raft_uv_connect_cb cb);

#endif
