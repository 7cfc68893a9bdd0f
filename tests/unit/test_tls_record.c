/* test_tls_record.c — worker/tls_record.c and worker/tls_keys.c against OpenSSL itself
 * (tls_record_fixture.h): the record tally cut anywhere; what we seal must come out of the
 * server's SSL_read and what the server's SSL_write sends must open here, for every AEAD suite
 * of TLS 1.2 (ECDSA and RSA) and TLS 1.3, full and resumed handshakes, records already
 * exchanged through OpenSSL before the takeover, tickets read by OpenSSL or left to us, a
 * HelloRetryRequest (1.3), no extended master secret (1.2); and the suites and states that
 * must stay with OpenSSL. Attacks and key updates: test_tls_record_attacks.c. */
#include "tls_record_fixture.h"

/* ---- Tally ---- */

static void test_tally_any_cut(void **state)
{
    (void)state;
    /* handshake(7), CCS(1), handshake(0), data(300), alert(2) */
    static const uint8_t types[] = {22, 20, 22, 23, 21};
    static const size_t lens[] = {7, 1, 0, 300, 2};
    uint8_t stream[600];
    size_t len = 0;
    for (size_t r = 0; r < 5; r++) {
        stream[len++] = types[r];
        stream[len++] = 3, stream[len++] = 3;
        stream[len++] = (uint8_t)(lens[r] >> 8), stream[len++] = (uint8_t)lens[r];
        memset(stream + len, 0xAA, lens[r]);
        len += lens[r];
    }
    for (size_t cut = 1; cut <= len; cut++) {
        worker_tls_tally_t t;
        memset(&t, 0, sizeof t);
        for (size_t off = 0; off < len; off += cut) {
            worker_tls_tally(&t, stream + off, off + cut <= len ? cut : len - off);
            if (off + cut < len && (off + cut == 12 || off + cut == 18))
                assert_true(worker_tls_tally_whole(&t)); /* ends of the 1st and 2nd records */
        }
        assert_int_equal(t.records, 5);
        assert_int_equal(t.since_ccs, 3);
        assert_true(worker_tls_tally_whole(&t));
    }
    worker_tls_tally_t t;
    memset(&t, 0, sizeof t);
    worker_tls_tally(&t, stream, 3);
    assert_false(worker_tls_tally_whole(&t));
    worker_tls_tally(&t, stream + 3, 5);
    assert_false(worker_tls_tally_whole(&t));
    assert_int_equal(t.records, 1);
}

/* ---- Round trips ---- */

enum mode { FRESH, TICKETS_TO_US, RESUMED, AFTER_DATA, HRR, NO_EMS };
static const char *const MODE_NAMES[] = {"fresh", "tickets left to us", "resumed",
                                         "after application records", "after a HelloRetryRequest",
                                         "without extended master secret"};

static void roundtrip(const suite_t *s, enum mode mode)
{
    snprintf(g_case, sizeof g_case, "%s %s %s, %s", version_name(s->version), s->name,
             s->rsa ? "RSA" : "ECDSA", MODE_NAMES[mode]);
    pair_t p;
    pair_init(&p, s);
    p.hrr = mode == HRR;
    p.no_ems = mode == NO_EMS;
    SSL_SESSION *session = NULL;
    if (mode == RESUMED) {
        pair_connect(&p, NULL);
        client_read_nothing(&p); /* the tickets of TLS 1.3 */
        session = SSL_get1_session(p.c);
        CHECK(session != NULL && SSL_SESSION_is_resumable(session));
        pair_disconnect(&p);
    }
    pair_connect(&p, session);
    SSL_SESSION_free(session);
    int tickets = 0;
    if (mode == TICKETS_TO_US)
        shuttle(&p); /* they wait in c_in, unread */
    else
        client_read_nothing(&p);
    if (mode == AFTER_DATA)
        exchange_through_openssl(&p, 3);
    CHECK(take(&p) == 0);
    CHECK(p.rec.aead == s->aead && p.rec.tls13 == (s->version == TLS1_3_VERSION));
    if (mode == AFTER_DATA) {
        CHECK(p.rec.w.seq >= 3 && p.rec.r.seq >= 3);
    }
    if (mode == TICKETS_TO_US) {
        server_to_ours(&p, (const uint8_t *)"after the tickets", 17, &tickets);
        CHECK(tickets == (s->version == TLS1_3_VERSION ? 2 : 0));
    }
    both_ways(&p);
    /* and a zero-length record (legal), then data */
    uint8_t sealed[64];
    size_t n = worker_tls_record_seal(&p.rec, &p.wctx, WORKER_TLS_CT_DATA,
                                      (const uint8_t *)"", 0, sealed);
    CHECK(n > 0 && BIO_write(p.s_in, sealed, (int)n) == (int)n);
    ours_to_server(&p, (const uint8_t *)"after empty", 11);
    pair_free(&p);
}

static void test_roundtrip_every_suite(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_SUITES; i++)
        for (int mode = FRESH; mode <= NO_EMS; mode++)
            if ((mode != TICKETS_TO_US && mode != HRR) || SUITES[i].version == TLS1_3_VERSION)
                if (mode != NO_EMS || SUITES[i].version == TLS1_2_VERSION)
                    roundtrip(&SUITES[i], (enum mode)mode);
}

/* ---- Suites and states that must stay with OpenSSL ---- */

static void expect_take_refused(const suite_t *s, bool keylog)
{
    snprintf(g_case, sizeof g_case, "%s %s %s, take refused%s", version_name(s->version),
             s->name, s->rsa ? "RSA" : "ECDSA", keylog ? "" : " (no keylog)");
    pair_t p;
    pair_init(&p, s);
    p.no_keylog = !keylog;
    pair_connect(&p, NULL);
    client_read_nothing(&p);
    int rv = take(&p);
    CHECK(rv == LC_EINVAL);
    static const uint8_t zero[sizeof p.rec];
    CHECK(memcmp(&p.rec, zero, sizeof zero) == 0 || p.rec.aead == 0);
    pair_free(&p);
}

static void test_take_refuses_other_suites(void **state)
{
    (void)state;
    static const suite_t cbc[] = {
        {"ECDHE-RSA-AES128-SHA256", TLS1_2_VERSION, true, 0},
        {"ECDHE-ECDSA-AES128-SHA256", TLS1_2_VERSION, false, 0},
        {"ECDHE-RSA-AES256-SHA384", TLS1_2_VERSION, true, 0},
        {"ECDHE-ECDSA-AES128-SHA", TLS1_2_VERSION, false, 0},
        {"ECDHE-ECDSA-AES128-CCM", TLS1_2_VERSION, false, 0},
        {"TLS_AES_128_CCM_SHA256", TLS1_3_VERSION, false, 0},
    };
    for (size_t i = 0; i < sizeof cbc / sizeof cbc[0]; i++)
        expect_take_refused(&cbc[i], true);
    /* TLS 1.3 without the traffic secrets */
    expect_take_refused(&SUITES[6], false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tally_any_cut),
        cmocka_unit_test(test_roundtrip_every_suite),
        cmocka_unit_test(test_take_refuses_other_suites),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
