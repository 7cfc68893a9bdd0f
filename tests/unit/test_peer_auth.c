/* test_peer_auth.c — unit tests of master/cluster/peer_auth.c: the Raft
 * port's mutual HMAC challenge, without sockets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "peer_auth.h"

typedef struct {
    lc_join_secret_t secret;
    peer_auth_t acceptor, connector;
    uint8_t nonce_a[PEER_AUTH_NONCE_LEN], nonce_c[PEER_AUTH_NONCE_LEN];
    uint8_t a_out[PEER_AUTH_MSG_MAX], c_out[PEER_AUTH_MSG_MAX];
    size_t a_len, c_len;
} pair_t;

static void secret_of(lc_join_secret_t *s, const char *text)
{
    memset(s, 0, sizeof *s);
    s->len = strlen(text);
    memcpy(s->bytes, text, s->len);
}

/* Both sides started with fixed nonces; the acceptor's nonce is in a_out. */
static void pair_start(pair_t *p, const char *a_secret, const char *c_secret, uint8_t seed)
{
    static lc_join_secret_t c_sec; /* one connector secret per test is enough */
    memset(p, 0, sizeof *p);
    secret_of(&p->secret, a_secret);
    secret_of(&c_sec, c_secret);
    memset(p->nonce_a, 0xA0 ^ seed, sizeof p->nonce_a);
    memset(p->nonce_c, 0xC0 ^ seed, sizeof p->nonce_c);
    peer_auth_start(&p->acceptor, PEER_AUTH_ACCEPTOR, &p->secret, p->nonce_a, p->a_out, &p->a_len);
    peer_auth_start(&p->connector, PEER_AUTH_CONNECTOR, &c_sec, p->nonce_c, p->c_out, &p->c_len);
}

/* The connector reads the acceptor's nonce; its answer is then in c_out. */
static void connector_answers(pair_t *p)
{
    assert_int_equal(peer_auth_feed(&p->connector, p->a_out, p->a_len, p->c_out, &p->c_len),
                     PEER_AUTH_AGAIN);
    assert_int_equal(p->c_len, 64);
}

static void test_honest_exchange(void **state)
{
    (void)state;
    pair_t p;
    pair_start(&p, "the-cluster-secret", "the-cluster-secret", 0);
    assert_int_equal(p.a_len, PEER_AUTH_NONCE_LEN);
    assert_memory_equal(p.a_out, p.nonce_a, PEER_AUTH_NONCE_LEN);
    assert_int_equal(p.c_len, 0);
    assert_int_equal(peer_auth_want(&p.connector), PEER_AUTH_NONCE_LEN);
    assert_int_equal(peer_auth_want(&p.acceptor), 64);

    assert_int_equal(peer_auth_feed(&p.connector, p.a_out, p.a_len, p.c_out, &p.c_len), PEER_AUTH_AGAIN);
    assert_int_equal(p.c_len, 64);
    assert_memory_equal(p.c_out, p.nonce_c, PEER_AUTH_NONCE_LEN);
    assert_int_equal(peer_auth_want(&p.connector), PEER_AUTH_MAC_LEN);

    assert_int_equal(peer_auth_feed(&p.acceptor, p.c_out, p.c_len, p.a_out, &p.a_len), PEER_AUTH_DONE);
    assert_int_equal(p.a_len, PEER_AUTH_MAC_LEN);
    assert_int_equal(peer_auth_want(&p.acceptor), 0);

    assert_int_equal(peer_auth_feed(&p.connector, p.a_out, p.a_len, p.c_out, &p.c_len), PEER_AUTH_DONE);
    assert_int_equal(p.c_len, 0);
    assert_int_equal(peer_auth_want(&p.connector), 0);
}

/* Bytes arrive one at a time: nothing is decided before a message is whole. */
static void test_byte_by_byte(void **state)
{
    (void)state;
    pair_t p;
    pair_start(&p, "the-cluster-secret", "the-cluster-secret", 1);
    for (size_t i = 0; i < p.a_len; i++) {
        peer_auth_verdict_t v = peer_auth_feed(&p.connector, p.a_out + i, 1, p.c_out, &p.c_len);
        assert_int_equal(v, PEER_AUTH_AGAIN);
        assert_int_equal(p.c_len, i + 1 < p.a_len ? 0 : 64);
    }
    uint8_t answer[64];
    memcpy(answer, p.c_out, 64);
    for (size_t i = 0; i < 64; i++) {
        assert_int_equal(peer_auth_want(&p.acceptor), 64 - i);
        peer_auth_verdict_t v = peer_auth_feed(&p.acceptor, answer + i, 1, p.a_out, &p.a_len);
        assert_int_equal(v, i + 1 < 64 ? PEER_AUTH_AGAIN : PEER_AUTH_DONE);
    }
    assert_int_equal(peer_auth_feed(&p.connector, p.a_out, p.a_len, p.c_out, &p.c_len), PEER_AUTH_DONE);
}

/* A truncated answer never completes: the caller's deadline closes it. */
static void test_truncated(void **state)
{
    (void)state;
    pair_t p;
    pair_start(&p, "the-cluster-secret", "the-cluster-secret", 2);
    connector_answers(&p);
    assert_int_equal(peer_auth_feed(&p.acceptor, p.c_out, 63, p.a_out, &p.a_len), PEER_AUTH_AGAIN);
    assert_int_equal(p.a_len, 0);
    assert_int_equal(peer_auth_want(&p.acceptor), 1);
}

static void test_oversize(void **state)
{
    (void)state;
    pair_t p;
    pair_start(&p, "the-cluster-secret", "the-cluster-secret", 3);
    uint8_t big[PEER_AUTH_MSG_MAX + 1] = {0};
    assert_int_equal(peer_auth_feed(&p.acceptor, big, sizeof big, p.a_out, &p.a_len), PEER_AUTH_FAIL);
    assert_non_null(strstr(p.acceptor.why, "oversize"));
    assert_int_equal(peer_auth_want(&p.acceptor), 0);
    /* Once failed, always failed. */
    assert_int_equal(peer_auth_feed(&p.acceptor, big, 1, p.a_out, &p.a_len), PEER_AUTH_FAIL);
    /* The connector takes the nonce and nothing more. */
    assert_int_equal(peer_auth_feed(&p.connector, big, PEER_AUTH_NONCE_LEN + 1, p.c_out, &p.c_len),
                     PEER_AUTH_FAIL);
    assert_int_equal(p.c_len, 0);
}

static void test_wrong_secret(void **state)
{
    (void)state;
    pair_t p;
    pair_start(&p, "the-cluster-secret", "another-cluster-secret", 4);
    connector_answers(&p);
    assert_int_equal(peer_auth_feed(&p.acceptor, p.c_out, p.c_len, p.a_out, &p.a_len), PEER_AUTH_FAIL);
    assert_int_equal(p.a_len, 0); /* no proof of ours goes to a stranger */
    assert_non_null(strstr(p.acceptor.why, "wrong proof"));
}

/* A connector must check the acceptor too: a fake acceptor's answer fails. */
static void test_wrong_acceptor_proof(void **state)
{
    (void)state;
    pair_t p;
    pair_start(&p, "the-cluster-secret", "the-cluster-secret", 5);
    connector_answers(&p);
    uint8_t forged[PEER_AUTH_MAC_LEN];
    memset(forged, 0x55, sizeof forged);
    assert_int_equal(peer_auth_feed(&p.connector, forged, sizeof forged, p.c_out, &p.c_len),
                     PEER_AUTH_FAIL);
    assert_non_null(strstr(p.connector.why, "wrong proof"));
}

/* An acceptor that echoes the connector's own MAC back (reflection) fails:
 * the two directions' proofs differ. */
static void test_reflected_proof(void **state)
{
    (void)state;
    pair_t p;
    pair_start(&p, "the-cluster-secret", "the-cluster-secret", 6);
    connector_answers(&p);
    assert_int_equal(peer_auth_feed(&p.connector, p.c_out + PEER_AUTH_NONCE_LEN, PEER_AUTH_MAC_LEN,
                                    p.a_out, &p.a_len),
                     PEER_AUTH_FAIL);
}

/* An answer recorded from one connection is useless on the next: the
 * acceptor's nonce is fresh. */
static void test_replayed_answer(void **state)
{
    (void)state;
    pair_t first, second;
    pair_start(&first, "the-cluster-secret", "the-cluster-secret", 7);
    connector_answers(&first);
    uint8_t recorded[64];
    memcpy(recorded, first.c_out, 64);
    pair_start(&second, "the-cluster-secret", "the-cluster-secret", 8);
    assert_int_equal(peer_auth_feed(&second.acceptor, recorded, 64, second.a_out, &second.a_len),
                     PEER_AUTH_FAIL);
    assert_non_null(strstr(second.acceptor.why, "wrong proof"));
}

/* A connector that sends the acceptor's own nonce back as its own is refused. */
static void test_replayed_nonce(void **state)
{
    (void)state;
    pair_t p;
    pair_start(&p, "the-cluster-secret", "the-cluster-secret", 9);
    uint8_t echo[64];
    memcpy(echo, p.nonce_a, PEER_AUTH_NONCE_LEN);
    memset(echo + PEER_AUTH_NONCE_LEN, 0, PEER_AUTH_MAC_LEN);
    assert_int_equal(peer_auth_feed(&p.acceptor, echo, sizeof echo, p.a_out, &p.a_len), PEER_AUTH_FAIL);
    assert_non_null(strstr(p.acceptor.why, "nonce"));
    /* And a connector given its own nonce as the acceptor's. */
    pair_t q;
    pair_start(&q, "the-cluster-secret", "the-cluster-secret", 10);
    assert_int_equal(peer_auth_feed(&q.connector, q.nonce_c, PEER_AUTH_NONCE_LEN, q.c_out, &q.c_len),
                     PEER_AUTH_FAIL);
    assert_int_equal(q.c_len, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_honest_exchange),  cmocka_unit_test(test_byte_by_byte),
        cmocka_unit_test(test_truncated),        cmocka_unit_test(test_oversize),
        cmocka_unit_test(test_wrong_secret),     cmocka_unit_test(test_wrong_acceptor_proof),
        cmocka_unit_test(test_reflected_proof),  cmocka_unit_test(test_replayed_answer),
        cmocka_unit_test(test_replayed_nonce),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
