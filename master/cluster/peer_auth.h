/* peer_auth.h — the mutual HMAC challenge two masters run on a raw Raft
 * connection before raft reads a byte; pure: bytes in, bytes out, a verdict.
 *
 * The acceptor speaks first; every message has a fixed length, so the reader
 * never takes a byte of what follows (raft's own handshake):
 *   acceptor  -> connector: nA                                   (32 bytes)
 *   connector -> acceptor:  nC || HMAC(s, "lc-raft-v1" "C" nA nC) (64 bytes)
 *   acceptor  -> connector: HMAC(s, "lc-raft-v1" "A" nA nC)      (32 bytes)
 * Each side's fresh nonce makes an answer recorded from another connection
 * useless; the role byte keeps one side's proof from serving as the other's. */
#ifndef MASTER_PEER_AUTH_H
#define MASTER_PEER_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "lc_join.h"

#define PEER_AUTH_NONCE_LEN 32u
#define PEER_AUTH_MAC_LEN 32u
#define PEER_AUTH_MSG_MAX 64u /* the longest message either side sends or reads */

typedef enum { PEER_AUTH_ACCEPTOR, PEER_AUTH_CONNECTOR } peer_auth_role_t;

/* What peer_auth_feed() concluded. */
typedef enum {
    PEER_AUTH_AGAIN = 0, /* more bytes needed (peer_auth_want() says how many) */
    PEER_AUTH_DONE,      /* the peer proved the secret; the stream is raft's */
    PEER_AUTH_FAIL       /* refuse: close the connection; why says why */
} peer_auth_verdict_t;

typedef struct peer_auth_s {
    /* private */
    peer_auth_role_t role;
    int step;                                    /* messages read so far */
    const lc_join_secret_t *secret;
    uint8_t nonce_a[PEER_AUTH_NONCE_LEN];
    uint8_t nonce_c[PEER_AUTH_NONCE_LEN];
    uint8_t in[PEER_AUTH_MSG_MAX];
    size_t have;
    /* read-only */
    char why[96];                                /* set with PEER_AUTH_FAIL */
} peer_auth_t;

/* Starts one side of the challenge. nonce is this side's fresh random nonce
 * (lc_join_nonce()); secret must outlive a. OUT: out, *out_len: the first
 * message to send (the acceptor's nonce; nothing for the connector). */
void peer_auth_start(peer_auth_t *a, peer_auth_role_t role, const lc_join_secret_t *secret,
                     const uint8_t nonce[PEER_AUTH_NONCE_LEN], uint8_t out[PEER_AUTH_MSG_MAX],
                     size_t *out_len);

/* How many bytes the next read may take: exactly what the current message
 * still lacks, 0 once the challenge is over. */
size_t peer_auth_want(const peer_auth_t *a);

/* Feeds bytes read from the peer. More than peer_auth_want() is refused
 * (oversize). OUT: out, *out_len: bytes to send now (possibly none, also with
 * PEER_AUTH_DONE: the acceptor's proof must still be sent). */
peer_auth_verdict_t peer_auth_feed(peer_auth_t *a, const uint8_t *buf, size_t len,
                                   uint8_t out[PEER_AUTH_MSG_MAX], size_t *out_len);

#endif
