/* tls_relay.h — raft's plaintext over a mutual TLS connection: raft gets one
 * end of a socket pair as its stream, and a relay carries the bytes between
 * the other end and the TLS channel on the peer's TCP connection. */
#ifndef MASTER_TLS_RELAY_H
#define MASTER_TLS_RELAY_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "lc_tls_channel.h"

/* Bytes queued towards one side past which the relay stops reading the
 * other side, and below which it reads again: a slow peer holds back raft
 * (whose own queue it is), not the master's memory. */
#define TLS_RELAY_HIGH_WATER (1024u * 1024u)
#define TLS_RELAY_LOW_WATER (256u * 1024u)

typedef struct tls_relay_s tls_relay_t;

/* Every relay of one transport, so that closing the transport closes them. */
typedef struct tls_relays_s {
    tls_relay_t *head;
    size_t count;
    void (*on_empty)(void *arg); /* the last relay was freed */
    void *arg;
} tls_relays_t;

/* Starts a relay for an established, verified connection. On success it
 * owns tcp (raft_malloc'd, reading stopped, no write in flight; raft_free'd
 * once closed) and tls (its io is redirected to the relay); early (len
 * bytes of raft's plaintext that came with the handshake) is copied and
 * passed on first. OUT: *raft_stream, raft's end of the socket pair
 * (raft_malloc'd, as raft frees it). Returns 0, or a UV_ error, in which case
 * the caller still owns tcp and tls. peer names the peer in logs. */
int tls_relay_start(tls_relays_t *set, uv_loop_t *loop, uv_tcp_t *tcp, lc_tls_channel_t *tls,
                    const uint8_t *early, size_t len, const char *peer,
                    uv_stream_t **raft_stream);

/* Closes every relay of set (raft sees its stream end); set->on_empty
 * follows once all are freed. */
void tls_relays_close_all(tls_relays_t *set);

#endif
