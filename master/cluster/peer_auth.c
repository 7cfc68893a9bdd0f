/* peer_auth.c — the Raft port's mutual HMAC challenge, as a pure state machine. */
#include "peer_auth.h"

#include <assert.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <string.h>

#define LABEL "lc-raft-v1"
#define LABEL_LEN (sizeof LABEL - 1)

enum { STEP_FAILED = -1, STEP_DONE = 100 };

/* mac = HMAC(secret, LABEL || role || nA || nC). */
static int mac_of(const peer_auth_t *a, char role, uint8_t mac[PEER_AUTH_MAC_LEN])
{
    uint8_t msg[LABEL_LEN + 1 + 2 * PEER_AUTH_NONCE_LEN];
    memcpy(msg, LABEL, LABEL_LEN);
    msg[LABEL_LEN] = (uint8_t)role;
    memcpy(msg + LABEL_LEN + 1, a->nonce_a, PEER_AUTH_NONCE_LEN);
    memcpy(msg + LABEL_LEN + 1 + PEER_AUTH_NONCE_LEN, a->nonce_c, PEER_AUTH_NONCE_LEN);
    return lc_join_proof(a->secret, msg, sizeof msg, mac);
}

static bool mac_matches(const peer_auth_t *a, char role, const uint8_t *got)
{
    uint8_t expected[PEER_AUTH_MAC_LEN];
    return mac_of(a, role, expected) == 0 &&
           CRYPTO_memcmp(expected, got, PEER_AUTH_MAC_LEN) == 0;
}

static peer_auth_verdict_t fail(peer_auth_t *a, const char *why)
{
    a->step = STEP_FAILED;
    snprintf(a->why, sizeof a->why, "%s", why);
    return PEER_AUTH_FAIL;
}

void peer_auth_start(peer_auth_t *a, peer_auth_role_t role, const lc_join_secret_t *secret,
                     const uint8_t nonce[PEER_AUTH_NONCE_LEN], uint8_t out[PEER_AUTH_MSG_MAX],
                     size_t *out_len)
{
    assert(secret != NULL && secret->len > 0);
    memset(a, 0, sizeof *a);
    a->role = role;
    a->secret = secret;
    *out_len = 0;
    if (role == PEER_AUTH_ACCEPTOR) {
        memcpy(a->nonce_a, nonce, PEER_AUTH_NONCE_LEN);
        memcpy(out, nonce, PEER_AUTH_NONCE_LEN);
        *out_len = PEER_AUTH_NONCE_LEN;
    } else {
        memcpy(a->nonce_c, nonce, PEER_AUTH_NONCE_LEN);
    }
}

size_t peer_auth_want(const peer_auth_t *a)
{
    size_t message;
    if (a->step == STEP_FAILED || a->step == STEP_DONE)
        return 0;
    if (a->role == PEER_AUTH_ACCEPTOR)
        message = PEER_AUTH_NONCE_LEN + PEER_AUTH_MAC_LEN; /* nC || proof */
    else
        message = a->step == 0 ? PEER_AUTH_NONCE_LEN : PEER_AUTH_MAC_LEN; /* nA, then proof */
    assert(a->have < message);
    return message - a->have;
}

/* The acceptor has nC || proof: check it, answer with its own proof. */
static peer_auth_verdict_t acceptor_check(peer_auth_t *a, uint8_t *out, size_t *out_len)
{
    memcpy(a->nonce_c, a->in, PEER_AUTH_NONCE_LEN);
    /* A connector echoing our nonce could be replaying our own words. */
    if (CRYPTO_memcmp(a->nonce_c, a->nonce_a, PEER_AUTH_NONCE_LEN) == 0)
        return fail(a, "peer reused this side's nonce");
    if (!mac_matches(a, 'C', a->in + PEER_AUTH_NONCE_LEN))
        return fail(a, "wrong proof (another cluster secret?)");
    if (mac_of(a, 'A', out) != 0)
        return fail(a, "cannot compute HMAC");
    *out_len = PEER_AUTH_MAC_LEN;
    a->step = STEP_DONE;
    return PEER_AUTH_DONE;
}

/* The connector has nA: answer nC || proof. */
static peer_auth_verdict_t connector_answer(peer_auth_t *a, uint8_t *out, size_t *out_len)
{
    memcpy(a->nonce_a, a->in, PEER_AUTH_NONCE_LEN);
    if (CRYPTO_memcmp(a->nonce_c, a->nonce_a, PEER_AUTH_NONCE_LEN) == 0)
        return fail(a, "peer reused this side's nonce");
    memcpy(out, a->nonce_c, PEER_AUTH_NONCE_LEN);
    if (mac_of(a, 'C', out + PEER_AUTH_NONCE_LEN) != 0)
        return fail(a, "cannot compute HMAC");
    *out_len = PEER_AUTH_NONCE_LEN + PEER_AUTH_MAC_LEN;
    a->step = 1;
    a->have = 0;
    return PEER_AUTH_AGAIN;
}

peer_auth_verdict_t peer_auth_feed(peer_auth_t *a, const uint8_t *buf, size_t len,
                                   uint8_t out[PEER_AUTH_MSG_MAX], size_t *out_len)
{
    *out_len = 0;
    if (a->step == STEP_FAILED)
        return PEER_AUTH_FAIL;
    size_t want = peer_auth_want(a);
    if (want == 0 || len > want)
        return fail(a, "oversize message");
    memcpy(a->in + a->have, buf, len);
    a->have += len;
    if (len < want)
        return PEER_AUTH_AGAIN;
    if (a->role == PEER_AUTH_ACCEPTOR)
        return acceptor_check(a, out, out_len);
    if (a->step == 0)
        return connector_answer(a, out, out_len);
    if (!mac_matches(a, 'A', a->in))
        return fail(a, "wrong proof from the acceptor (another cluster secret?)");
    a->step = STEP_DONE;
    return PEER_AUTH_DONE;
}
