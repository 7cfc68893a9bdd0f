/* test_tls_record_attacks.c — worker/tls_record.c against OpenSSL (tls_record_fixture.h):
 * records an attacker changed, replayed, reordered, reflected or forged, for every suite; and
 * TLS 1.3 key updates both ways, also one OpenSSL followed before the takeover. */
#include "tls_record_fixture.h"

/* ---- Attacks ---- */

/* The server's view of rec: its keys to seal what we open (a forger who has the keys, to
 * make records well authenticated but malformed inside). */
static worker_tls_record_t server_view(const worker_tls_record_t *rec)
{
    worker_tls_record_t srv = *rec;
    srv.w = rec->r;
    srv.r = rec->w;
    return srv;
}

/* Seals with the server's view (a context keyed with its key, dropped after). */
static size_t forge_seal(worker_tls_record_t *srv, uint8_t type, const uint8_t *plain, size_t len,
                         uint8_t *out)
{
    EVP_CIPHER_CTX *ctx = NULL;
    size_t n = worker_tls_record_seal(srv, &ctx, type, plain, len, out);
    worker_tls_keyed_drop(&ctx);
    return n;
}

static void expect_rejected(pair_t *p, const uint8_t *record, size_t len, const char *what)
{
    worker_tls_record_t copy = p->rec;
    uint8_t plain[WORKER_TLS_RECORD_MAX_BODY], type = 0;
    size_t plain_len = 0;
    int rv = open_record(p, &copy, record, len, plain, &type, &plain_len);
    if (rv != LC_EPROTO)
        fprintf(stderr, "[%s] %s: open returned %d (type %u, %zu bytes)\n", g_case, what, rv,
                type, plain_len);
    CHECK(rv == LC_EPROTO);
}

static void attacks(const suite_t *s)
{
    snprintf(g_case, sizeof g_case, "%s %s %s, attacks", version_name(s->version), s->name,
             s->rsa ? "RSA" : "ECDSA");
    pair_t p;
    pair_init(&p, s);
    pair_connect(&p, NULL);
    client_read_nothing(&p);
    CHECK(take(&p) == 0);
    bool explicit = !p.rec.tls13 && p.rec.aead != WORKER_TLS_CHACHA;
    static const char msg[] = "a record an attacker would like to change";
    CHECK(SSL_write(p.s, msg, sizeof msg - 1) == (int)sizeof msg - 1);
    uint8_t genuine[256], bad[256], plain[WORKER_TLS_RECORD_MAX_BODY], type;
    size_t len = next_record(&p, genuine), plain_len;
    CHECK(len > 0);
    /* Every bit of the header's type and version, of the explicit nonce, the first and last
     * bytes of the ciphertext, and every bit of the tag's last byte. */
    size_t ct = WORKER_TLS_RECORD_HEADER + (explicit ? 8 : 0);
    size_t spots[] = {0, 1, 2, 5, 8, 12, ct, ct + 1, len - 17, len - 16, len - 1};
    for (size_t i = 0; i < sizeof spots / sizeof spots[0]; i++)
        for (int bit = 0; bit < 8; bit++) {
            memcpy(bad, genuine, len);
            bad[spots[i]] ^= (uint8_t)(1u << bit);
            char what[64];
            snprintf(what, sizeof what, "bit %d of byte %zu flipped", bit, spots[i]);
            expect_rejected(&p, bad, len, what);
        }
    /* Length field: one byte shorter (the tag cut), one longer (a byte appended). */
    memcpy(bad, genuine, len);
    bad[4]--;
    if (bad[4] == 0xff)
        bad[3]--;
    expect_rejected(&p, bad, len - 1, "record cut by one byte");
    memcpy(bad, genuine, len);
    bad[len] = 0;
    bad[4]++;
    if (bad[4] == 0)
        bad[3]++;
    expect_rejected(&p, bad, len + 1, "a byte appended");
    /* Bodies too short for the cipher: each length below the minimum, zero included. */
    size_t min_body = (explicit ? 8 : 0) + 16 + (p.rec.tls13 ? 1 : 0);
    for (size_t body = 0; body < min_body; body++) {
        memcpy(bad, genuine, WORKER_TLS_RECORD_HEADER + body);
        bad[3] = 0, bad[4] = (uint8_t)body;
        expect_rejected(&p, bad, WORKER_TLS_RECORD_HEADER + body, "body too short");
    }
    /* The genuine record still opens after all that (a failed open changes nothing)... */
    worker_tls_record_t before = p.rec;
    CHECK(open_record(&p, &p.rec, genuine, len, plain, &type, &plain_len) == 0);
    CHECK(type == WORKER_TLS_CT_DATA && plain_len == sizeof msg - 1 &&
          memcmp(plain, msg, plain_len) == 0);
    CHECK(p.rec.r.seq == before.r.seq + 1);
    /* ...once: replayed, it does not. */
    expect_rejected(&p, genuine, len, "replayed");
    /* Reordered: the third record before the second. */
    CHECK(SSL_write(p.s, "two", 3) == 3 && SSL_write(p.s, "three", 5) == 5);
    uint8_t two[128], three[128];
    size_t two_len = next_record(&p, two), three_len = next_record(&p, three);
    expect_rejected(&p, three, three_len, "reordered");
    /* Reflected: a record we sealed, sent back to us. */
    uint8_t ours[128];
    worker_tls_record_t wcopy = p.rec;
    size_t ours_len = worker_tls_record_seal(&wcopy, &p.wctx, WORKER_TLS_CT_DATA,
                                             (const uint8_t *)"mirror", 6, ours);
    CHECK(ours_len > 0);
    expect_rejected(&p, ours, ours_len, "our own record reflected");
    CHECK(open_record(&p, &p.rec, two, two_len, plain, &type, &plain_len) == 0);
    CHECK(plain_len == 3 && memcmp(plain, "two", 3) == 0);
    CHECK(open_record(&p, &p.rec, three, three_len, plain, &type, &plain_len) == 0);
    CHECK(plain_len == 5 && memcmp(plain, "three", 5) == 0);

    /* Forged with the server's keys: well authenticated, but malformed inside. */
    worker_tls_record_t srv = server_view(&p.rec);
    size_t n = forge_seal(&srv, WORKER_TLS_CT_DATA,
                                      (const uint8_t *)"forged", 6, bad);
    worker_tls_record_t copy = p.rec;
    CHECK(n > 0 && open_record(&p, &copy, bad, n, plain, &type, &plain_len) == 0);
    CHECK(type == WORKER_TLS_CT_DATA && plain_len == 6); /* the forger's method works */
    static const uint8_t unknown[] = {0, 20, 24, 99, 255};
    for (size_t i = 0; i < sizeof unknown; i++) {
        srv = server_view(&p.rec);
        n = forge_seal(&srv, unknown[i], (const uint8_t *)"x", 1, bad);
        CHECK(n > 0);
        copy = p.rec;
        int rv = open_record(&p, &copy, bad, n, plain, &type, &plain_len);
        if (!p.rec.tls13) {
            expect_rejected(&p, bad, n, "an unknown outer content type");
        } else if (unknown[i] == 0) {
            /* inner "x\0": the type is 'x', which the transport must refuse */
            CHECK(rv == 0 && type == 'x' && plain_len == 0);
        } else {
            /* TLS 1.3's inner type is the caller's to check (tls_taken.c's on_record) */
            CHECK(rv == 0 && type == unknown[i] && plain_len == 1);
        }
    }
    if (p.rec.tls13) {
        /* An outer type other than application_data, properly authenticated. */
        srv = server_view(&p.rec);
        n = forge_seal(&srv, WORKER_TLS_CT_DATA, (const uint8_t *)"o", 1,
                                   bad);
        bad[0] = WORKER_TLS_CT_HANDSHAKE; /* the AAD covers it: fails either way */
        expect_rejected(&p, bad, n, "TLS 1.3 outer type handshake");
        /* Padding only: an inner plaintext of zeros. */
        static const uint8_t zeros[40];
        for (size_t pad = 0; pad < sizeof zeros; pad += 13) {
            srv = server_view(&p.rec);
            n = forge_seal(&srv, 0, zeros, pad, bad);
            CHECK(n > 0);
            expect_rejected(&p, bad, n, "padding only");
        }
        /* Padding after a real type is fine: "hi", application_data, then zeros. */
        static const uint8_t padded[] = {'h', 'i', WORKER_TLS_CT_DATA, 0, 0, 0, 0};
        srv = server_view(&p.rec);
        n = forge_seal(&srv, 0, padded, sizeof padded, bad);
        copy = p.rec;
        CHECK(open_record(&p, &copy, bad, n, plain, &type, &plain_len) == 0);
        CHECK(type == WORKER_TLS_CT_DATA && plain_len == 2 && memcmp(plain, "hi", 2) == 0);
    }
    /* The connection still works both ways after every rejected record. */
    both_ways(&p);
    pair_free(&p);
}

static void test_attacks_every_suite(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_SUITES; i++)
        attacks(&SUITES[i]);
}

/* ---- TLS 1.3 key updates ---- */

static void expect_key_update(pair_t *p, uint8_t requested)
{
    uint8_t record[256], plain[256], type;
    size_t plain_len, n = next_record(p, record);
    CHECK(n > 0);
    CHECK(open_record(p, &p->rec, record, n, plain, &type, &plain_len) == 0);
    CHECK(type == WORKER_TLS_CT_HANDSHAKE && plain_len == 5);
    CHECK(plain[0] == 24 && plain[1] == 0 && plain[2] == 0 && plain[3] == 1 &&
          plain[4] == requested);
    worker_tls_keyed_drop(&p->rctx);
    CHECK(worker_tls_record_update(&p->rec, &p->rec.r) == 0);
}

static void send_key_update(pair_t *p, uint8_t requested)
{
    const uint8_t msg[] = {24, 0, 0, 1, requested};
    uint8_t sealed[64];
    size_t n = worker_tls_record_seal(&p->rec, &p->wctx, WORKER_TLS_CT_HANDSHAKE, msg,
                                      sizeof msg, sealed);
    CHECK(n > 0 && BIO_write(p->s_in, sealed, (int)n) == (int)n);
    worker_tls_keyed_drop(&p->wctx);
    CHECK(worker_tls_record_update(&p->rec, &p->rec.w) == 0);
    CHECK(p->rec.w.seq == 0);
}

static void key_updates(const suite_t *s)
{
    snprintf(g_case, sizeof g_case, "TLS1.3 %s, key updates", s->name);
    pair_t p;
    pair_init(&p, s);
    pair_connect(&p, NULL);
    client_read_nothing(&p);
    CHECK(take(&p) == 0);
    both_ways(&p);
    uint8_t old_key[32];
    memcpy(old_key, p.rec.r.key, sizeof old_key);
    /* The server's, asking for ours. */
    CHECK(SSL_key_update(p.s, SSL_KEY_UPDATE_REQUESTED) == 1);
    CHECK(SSL_write(p.s, "under new keys", 14) == 14);
    expect_key_update(&p, 1);
    CHECK(memcmp(old_key, p.rec.r.key, p.rec.key_len) != 0 && p.rec.r.seq == 0);
    {
        uint8_t record[256], plain[256], type;
        size_t plain_len, n = next_record(&p, record);
        CHECK(n > 0 && open_record(&p, &p.rec, record, n, plain, &type, &plain_len) == 0);
        CHECK(type == WORKER_TLS_CT_DATA && plain_len == 14 &&
              memcmp(plain, "under new keys", 14) == 0);
    }
    /* Our answer (not requested), then data under our new keys. */
    send_key_update(&p, 0);
    ours_to_server(&p, (const uint8_t *)"ours after the update", 21);
    both_ways(&p);
    /* Ours, asking for the server's: it answers with its own before its next data. */
    send_key_update(&p, 1);
    ours_to_server(&p, (const uint8_t *)"asked", 5);
    CHECK(SSL_write(p.s, "answered", 8) == 8);
    expect_key_update(&p, 0);
    {
        uint8_t record[256], plain[256], type;
        size_t plain_len, n = next_record(&p, record);
        CHECK(n > 0 && open_record(&p, &p.rec, record, n, plain, &type, &plain_len) == 0);
        CHECK(type == WORKER_TLS_CT_DATA && plain_len == 8 && memcmp(plain, "answered", 8) == 0);
    }
    /* Many in a row. */
    for (int i = 0; i < 5; i++) {
        CHECK(SSL_key_update(p.s, SSL_KEY_UPDATE_NOT_REQUESTED) == 1);
        CHECK(SSL_do_handshake(p.s) == 1);
        expect_key_update(&p, 0);
        send_key_update(&p, 0);
    }
    both_ways(&p);
    /* A record under the keys before the update no longer opens. */
    worker_tls_record_t stale = p.rec;
    memcpy(stale.r.key, old_key, sizeof old_key);
    CHECK(SSL_write(p.s, "fresh", 5) == 5);
    uint8_t record[256], plain[256], type;
    size_t plain_len, n = next_record(&p, record);
    EVP_CIPHER_CTX *stale_ctx = NULL; /* keyed with the old key */
    const char *why;
    CHECK(n > 0 && worker_tls_record_open(&stale, &stale_ctx, record, n, plain, &type, &plain_len,
                                          &why) == LC_EPROTO);
    worker_tls_keyed_drop(&stale_ctx);
    pair_free(&p);
}

static void test_key_update_both_ways(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_SUITES; i++)
        if (SUITES[i].version == TLS1_3_VERSION && !SUITES[i].rsa)
            key_updates(&SUITES[i]);
}

/* A key update OpenSSL already followed before the takeover: the keylog gave only the first
 * traffic secrets, so the keys taken must not be those: the take refuses, or what it took
 * works both ways. */
static void update_before_take(const suite_t *s, bool server_side)
{
    snprintf(g_case, sizeof g_case, "TLS1.3 %s, %s key update before the takeover", s->name,
             server_side ? "the server's" : "the client's");
    pair_t p;
    pair_init(&p, s);
    pair_connect(&p, NULL);
    client_read_nothing(&p);
    if (server_side) {
        CHECK(SSL_key_update(p.s, SSL_KEY_UPDATE_NOT_REQUESTED) == 1);
        CHECK(SSL_write(p.s, "x", 1) == 1);
        char b[8];
        shuttle(&p);
        CHECK(SSL_read(p.c, b, sizeof b) == 1);
    } else {
        CHECK(SSL_key_update(p.c, SSL_KEY_UPDATE_NOT_REQUESTED) == 1);
        CHECK(SSL_write(p.c, "x", 1) == 1);
        char b[8];
        shuttle(&p);
        CHECK(SSL_read(p.s, b, sizeof b) == 1);
    }
    int rv = take(&p);
    if (rv == 0) {
        ours_to_server(&p, (const uint8_t *)"after", 5);
        server_to_ours(&p, (const uint8_t *)"after", 5, NULL);
    } else {
        CHECK(rv == LC_EINVAL);
    }
    pair_free(&p);
}

static void test_key_update_before_takeover(void **state)
{
    (void)state;
    update_before_take(&SUITES[6], true);
    update_before_take(&SUITES[6], false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attacks_every_suite),
        cmocka_unit_test(test_key_update_both_ways),
        cmocka_unit_test(test_key_update_before_takeover),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
