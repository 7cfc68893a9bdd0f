/* test_tls_record.c — worker/tls_record.c and worker/tls_keys.c against OpenSSL itself: an
 * OpenSSL server and an OpenSSL client in memory complete a handshake; the client's records
 * are then taken over (worker_tls_record_take, with a worker_tls_seen_t tallied over exactly
 * the bytes the client's SSL read and wrote, and its keylog), and what we seal must come out
 * of the server's SSL_read, what the server's SSL_write sends must open here. Every AEAD suite
 * of TLS 1.2 (ECDSA and RSA) and TLS 1.3, full and resumed handshakes, records already
 * exchanged through OpenSSL before the takeover, tickets read by OpenSSL or left to us, a
 * HelloRetryRequest (1.3), no extended master secret (1.2); TLS
 * 1.3 key updates both ways; and records an attacker changed, replayed, reflected or forged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "lc_err.h"
#include "tls_record.h"

static char g_case[160]; /* what a failed check was about */

#define CHECK(cond)                                                                         \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            fprintf(stderr, "[%s] check failed at line %d: %s\n", g_case, __LINE__, #cond); \
            ERR_print_errors_fp(stderr);                                                    \
            fail();                                                                         \
        }                                                                                   \
    } while (0)

/* ---- Keys and server contexts, made once ---- */

static SSL_CTX *g_srv_ec, *g_srv_rsa;

static X509 *self_signed(EVP_PKEY *key)
{
    X509 *x = X509_new();
    if (x == NULL)
        return NULL;
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
    X509_gmtime_adj(X509_getm_notBefore(x), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x), 86400);
    X509_set_pubkey(x, key);
    X509_NAME *n = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)"record.test", -1,
                               -1, 0);
    X509_set_issuer_name(x, n);
    if (X509_sign(x, key, EVP_sha256()) == 0) {
        X509_free(x);
        return NULL;
    }
    return x;
}

static SSL_CTX *server_ctx(EVP_PKEY *key)
{
    X509 *cert = key != NULL ? self_signed(key) : NULL;
    SSL_CTX *ctx = cert != NULL ? SSL_CTX_new(TLS_server_method()) : NULL;
    if (ctx == NULL || SSL_CTX_use_certificate(ctx, cert) != 1 ||
        SSL_CTX_use_PrivateKey(ctx, key) != 1 ||
        /* every suite of the tests, CCM (not ours) too */
        SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:"
                                      "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_CCM_SHA256") != 1 ||
        SSL_CTX_set_cipher_list(ctx, "ALL") != 1) {
        SSL_CTX_free(ctx);
        ctx = NULL;
    }
    X509_free(cert);
    EVP_PKEY_free(key);
    return ctx;
}

static int group_setup(void **state)
{
    (void)state;
    g_srv_ec = server_ctx(EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256"));
    g_srv_rsa = server_ctx(EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048));
    return g_srv_ec != NULL && g_srv_rsa != NULL ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    SSL_CTX_free(g_srv_ec);
    SSL_CTX_free(g_srv_rsa);
    return 0;
}

/* ---- The suites ---- */

typedef struct suite_s {
    const char *name; /* OpenSSL's name */
    int version;
    bool rsa;         /* the server's certificate */
    uint8_t aead;     /* WORKER_TLS_…; 0: not ours */
} suite_t;

static const suite_t SUITES[] = {
    {"ECDHE-ECDSA-AES128-GCM-SHA256", TLS1_2_VERSION, false, WORKER_TLS_AES128GCM},
    {"ECDHE-RSA-AES128-GCM-SHA256", TLS1_2_VERSION, true, WORKER_TLS_AES128GCM},
    {"ECDHE-ECDSA-AES256-GCM-SHA384", TLS1_2_VERSION, false, WORKER_TLS_AES256GCM},
    {"ECDHE-RSA-AES256-GCM-SHA384", TLS1_2_VERSION, true, WORKER_TLS_AES256GCM},
    {"ECDHE-ECDSA-CHACHA20-POLY1305", TLS1_2_VERSION, false, WORKER_TLS_CHACHA},
    {"ECDHE-RSA-CHACHA20-POLY1305", TLS1_2_VERSION, true, WORKER_TLS_CHACHA},
    {"TLS_AES_128_GCM_SHA256", TLS1_3_VERSION, false, WORKER_TLS_AES128GCM},
    {"TLS_AES_256_GCM_SHA384", TLS1_3_VERSION, false, WORKER_TLS_AES256GCM},
    {"TLS_CHACHA20_POLY1305_SHA256", TLS1_3_VERSION, false, WORKER_TLS_CHACHA},
    {"TLS_AES_128_GCM_SHA256", TLS1_3_VERSION, true, WORKER_TLS_AES128GCM},
    {"TLS_AES_256_GCM_SHA384", TLS1_3_VERSION, true, WORKER_TLS_AES256GCM},
    {"TLS_CHACHA20_POLY1305_SHA256", TLS1_3_VERSION, true, WORKER_TLS_CHACHA},
};
#define N_SUITES (sizeof SUITES / sizeof SUITES[0])

static const char *version_name(int v)
{
    return v == TLS1_3_VERSION ? "TLS1.3" : "TLS1.2";
}

/* ---- A client and a server in memory ---- */

/* The client's BIO: reads from c_in and writes to c_out (memory BIOs), tallying exactly
 * what its SSL takes and gives, as worker/tls_bio.c does. */
typedef struct pair_s {
    const suite_t *suite;
    SSL_CTX *cctx;
    SSL *c, *s;
    BIO *c_in, *c_out; /* behind the client's tallying BIO; ours */
    BIO *s_in, *s_out; /* the server's rbio and wbio (its SSL owns them) */
    worker_tls_seen_t seen;
    bool tally;        /* the BIO still tallies (until the takeover) */
    bool no_keylog;    /* leaves the secrets out of seen */
    bool hrr;          /* TLS 1.3: the server wants another key share (HelloRetryRequest) */
    bool no_ems;       /* TLS 1.2: no extended master secret */
    worker_tls_record_t rec;
    EVP_CIPHER_CTX *wctx, *rctx; /* our directions' keyed contexts (tls_record.h) */
} pair_t;

static BIO_METHOD *g_tally_method;

static int tally_read(BIO *b, char *out, int size)
{
    pair_t *p = BIO_get_data(b);
    BIO_clear_retry_flags(b);
    int n = BIO_read(p->c_in, out, size);
    if (n <= 0) {
        BIO_set_retry_read(b);
        return -1;
    }
    if (p->tally)
        worker_tls_tally(&p->seen.in, out, (size_t)n);
    return n;
}

static int tally_write(BIO *b, const char *data, int len)
{
    pair_t *p = BIO_get_data(b);
    BIO_clear_retry_flags(b);
    int n = BIO_write(p->c_out, data, len);
    if (n > 0 && p->tally)
        worker_tls_tally(&p->seen.out, data, (size_t)n);
    return n;
}

static long tally_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)num, (void)ptr;
    pair_t *p = BIO_get_data(b);
    switch (cmd) {
    case BIO_CTRL_FLUSH:
        return 1;
    case BIO_CTRL_PENDING:
        return (long)BIO_ctrl_pending(p->c_in);
    default:
        return 0;
    }
}

static int tally_create(BIO *b)
{
    BIO_set_init(b, 1);
    return 1;
}

static void keylog(const SSL *ssl, const char *line)
{
    pair_t *p = SSL_get_app_data(ssl);
    if (p != NULL && !p->no_keylog)
        worker_tls_seen_keylog(&p->seen, line);
}

static void on_msg(int write_p, int version, int content_type, const void *buf, size_t len,
                   SSL *ssl, void *arg)
{
    (void)write_p, (void)version, (void)arg;
    pair_t *p = SSL_get_app_data(ssl);
    if (p != NULL)
        worker_tls_seen_msg(&p->seen, content_type, buf, len);
}

/* Moves every byte waiting from one memory BIO to another. */
static size_t move_all(BIO *from, BIO *to)
{
    char chunk[4096];
    size_t moved = 0;
    int n;
    while ((n = BIO_read(from, chunk, sizeof chunk)) > 0) {
        assert_int_equal(BIO_write(to, chunk, n), n);
        moved += (size_t)n;
    }
    return moved;
}

static size_t shuttle(pair_t *p)
{
    return move_all(p->c_out, p->s_in) + move_all(p->s_out, p->c_in);
}

static void pair_init(pair_t *p, const suite_t *suite)
{
    memset(p, 0, sizeof *p);
    p->suite = suite;
    p->tally = true;
    p->cctx = SSL_CTX_new(TLS_client_method());
    assert_non_null(p->cctx);
    SSL_CTX_set_verify(p->cctx, SSL_VERIFY_NONE, NULL);
    SSL_CTX_set_session_cache_mode(p->cctx, SSL_SESS_CACHE_CLIENT |
                                                SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_set_keylog_callback(p->cctx, keylog);
    SSL_CTX_set_msg_callback(p->cctx, on_msg); /* as tls_conn.c: key updates noted */
    assert_int_equal(SSL_CTX_set_min_proto_version(p->cctx, suite->version), 1);
    assert_int_equal(SSL_CTX_set_max_proto_version(p->cctx, suite->version), 1);
    if (suite->version == TLS1_3_VERSION)
        assert_int_equal(SSL_CTX_set_ciphersuites(p->cctx, suite->name), 1);
    else
        assert_int_equal(SSL_CTX_set_cipher_list(p->cctx, suite->name), 1);
}

/* A new connection of the pair (the previous one freed), resuming session when given. */
static void pair_connect(pair_t *p, SSL_SESSION *session)
{
    p->c_in = BIO_new(BIO_s_mem());
    p->c_out = BIO_new(BIO_s_mem());
    p->s_in = BIO_new(BIO_s_mem());
    p->s_out = BIO_new(BIO_s_mem());
    BIO *tb = BIO_new(g_tally_method);
    p->c = SSL_new(p->cctx);
    p->s = SSL_new(p->suite->rsa ? g_srv_rsa : g_srv_ec);
    assert_true(p->c_in && p->c_out && p->s_in && p->s_out && tb && p->c && p->s);
    BIO_set_data(tb, p);
    SSL_set_bio(p->c, tb, tb);
    SSL_set_bio(p->s, p->s_in, p->s_out);
    SSL_set_app_data(p->c, p);
    SSL_set_connect_state(p->c);
    SSL_set_accept_state(p->s);
    if (session != NULL)
        assert_int_equal(SSL_set_session(p->c, session), 1);
    if (p->hrr) { /* the client's first key share is X25519's, which the server refuses */
        assert_int_equal(SSL_set1_groups_list(p->c, "X25519:P-256"), 1);
        assert_int_equal(SSL_set1_groups_list(p->s, "P-256"), 1);
    }
    if (p->no_ems)
        SSL_set_options(p->c, SSL_OP_NO_EXTENDED_MASTER_SECRET);
    memset(&p->seen, 0, sizeof p->seen);
    p->tally = true;
    bool c_done = false, s_done = false;
    for (int round = 0; round < 50 && !(c_done && s_done); round++) {
        if (!c_done) {
            int n = SSL_do_handshake(p->c);
            if (n == 1) {
                c_done = true;
                p->seen.in_at_ready = p->seen.in.records;
                p->seen.out_at_ready = p->seen.out.records;
            } else {
                CHECK(SSL_get_error(p->c, n) == SSL_ERROR_WANT_READ);
            }
        }
        if (!s_done) {
            int n = SSL_do_handshake(p->s);
            if (n == 1)
                s_done = true;
            else
                CHECK(SSL_get_error(p->s, n) == SSL_ERROR_WANT_READ);
        }
        shuttle(p);
    }
    CHECK(c_done && s_done);
    CHECK(SSL_version(p->c) == p->suite->version);
    const char *got = SSL_CIPHER_get_name(SSL_get_current_cipher(p->c));
    CHECK(strcmp(got, p->suite->name) == 0);
    CHECK(SSL_session_reused(p->c) == (session != NULL));
    if (p->hrr)
        CHECK(SSL_get_negotiated_group(p->c) == NID_X9_62_prime256v1);
}

static void pair_disconnect(pair_t *p)
{
    /* freed unshut, OpenSSL would not resume their session */
    SSL_set_shutdown(p->c, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
    SSL_set_shutdown(p->s, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
    SSL_free(p->c);
    SSL_free(p->s);
    BIO_free(p->c_in);
    BIO_free(p->c_out);
    p->c = p->s = NULL;
    p->c_in = p->c_out = NULL;
}

static void pair_free(pair_t *p)
{
    if (p->c != NULL)
        pair_disconnect(p);
    worker_tls_keyed_drop(&p->wctx);
    worker_tls_keyed_drop(&p->rctx);
    SSL_CTX_free(p->cctx);
    ERR_clear_error();
}

/* The client's SSL reads what waits for it (TLS 1.3: the tickets) and wants more. */
static void client_read_nothing(pair_t *p)
{
    char b[64];
    shuttle(p);
    int n = SSL_read(p->c, b, sizeof b);
    CHECK(n <= 0 && SSL_get_error(p->c, n) == SSL_ERROR_WANT_READ);
    CHECK(BIO_ctrl_pending(p->c_in) == 0);
}

static void fill(uint8_t *b, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++)
        b[i] = (uint8_t)(i * 31 + seed * 7 + i / 251);
}

/* Records exchanged through OpenSSL both ways before any takeover. */
static void exchange_through_openssl(pair_t *p, int rounds)
{
    uint8_t out[3000], in[3000];
    for (int r = 0; r < rounds; r++) {
        size_t len = 100 + (size_t)r * 1000;
        fill(out, len, (unsigned)r);
        CHECK(SSL_write(p->c, out, (int)len) == (int)len);
        shuttle(p);
        CHECK(SSL_read(p->s, in, sizeof in) == (int)len && memcmp(in, out, len) == 0);
        fill(out, len, (unsigned)r + 50);
        CHECK(SSL_write(p->s, out, (int)len) == (int)len);
        shuttle(p);
        CHECK(SSL_read(p->c, in, sizeof in) == (int)len && memcmp(in, out, len) == 0);
    }
    CHECK(BIO_ctrl_pending(p->c_in) == 0);
}

/* Takes the client's records over; the client's SSL is not used again. */
static int take(pair_t *p)
{
    CHECK(worker_tls_tally_whole(&p->seen.in) && worker_tls_tally_whole(&p->seen.out));
    CHECK(BIO_ctrl_pending(p->c_out) == 0 || p->suite->version == TLS1_3_VERSION);
    p->tally = false;
    return worker_tls_record_take(&p->rec, p->c, &p->seen);
}

/* ---- Records on the wire after the takeover ---- */

/* The next whole record the server sent us (shuttled into c_in), into rec_buf; its length,
 * or 0 when none waits. */
static size_t next_record(pair_t *p, uint8_t *rec_buf)
{
    move_all(p->s_out, p->c_in);
    if (BIO_ctrl_pending(p->c_in) < WORKER_TLS_RECORD_HEADER)
        return 0;
    CHECK(BIO_read(p->c_in, rec_buf, WORKER_TLS_RECORD_HEADER) == WORKER_TLS_RECORD_HEADER);
    size_t body = (size_t)rec_buf[3] << 8 | rec_buf[4];
    CHECK(body <= WORKER_TLS_RECORD_MAX_BODY);
    CHECK(BIO_read(p->c_in, rec_buf + WORKER_TLS_RECORD_HEADER, (int)body) == (int)body);
    return WORKER_TLS_RECORD_HEADER + body;
}

/* Opens with rec, whose read key is ours (p->rctx is keyed with it). */
static int open_record(pair_t *p, worker_tls_record_t *rec, const uint8_t *record, size_t len,
                       uint8_t *plain, uint8_t *type, size_t *plain_len)
{
    const char *why = NULL;
    assert_memory_equal(rec->r.key, p->rec.r.key, sizeof rec->r.key);
    int rv = worker_tls_record_open(rec, &p->rctx, record, len, plain, type, plain_len, &why);
    if (rv != 0)
        CHECK(why != NULL);
    ERR_clear_error();
    return rv;
}

/* We seal len bytes (in records of at most the maximum) for the server, whose SSL_read must
 * give them back. */
static void ours_to_server(pair_t *p, const uint8_t *data, size_t len)
{
    static uint8_t sealed[WORKER_TLS_RECORD_MAX_PLAIN + WORKER_TLS_RECORD_OVERHEAD];
    size_t off = 0;
    do {
        size_t n = len - off < WORKER_TLS_RECORD_MAX_PLAIN ? len - off : WORKER_TLS_RECORD_MAX_PLAIN;
        size_t out = worker_tls_record_seal(&p->rec, &p->wctx, WORKER_TLS_CT_DATA, data + off, n,
                                            sealed);
        CHECK(out == n + WORKER_TLS_RECORD_HEADER + 16 +
                         (p->rec.tls13 ? 1 : p->rec.aead == WORKER_TLS_CHACHA ? 0 : 8));
        CHECK(BIO_write(p->s_in, sealed, (int)out) == (int)out);
        off += n;
    } while (off < len);
    uint8_t *got = malloc(len + 1);
    assert_non_null(got);
    size_t have = 0;
    while (have < len) {
        int n = SSL_read(p->s, got + have, (int)(len - have));
        if (n <= 0) {
            fprintf(stderr, "[%s] server SSL_read: error %d after %zu of %zu bytes\n", g_case,
                    SSL_get_error(p->s, n), have, len);
            break;
        }
        have += (size_t)n;
    }
    CHECK(have == len && memcmp(got, data, len) == 0);
    free(got);
}

/* The server's SSL_write of len bytes must open here: tickets (TLS 1.3) are skipped and
 * counted into *tickets when given. */
static void server_to_ours(pair_t *p, const uint8_t *data, size_t len, int *tickets)
{
    static uint8_t record[WORKER_TLS_RECORD_HEADER + WORKER_TLS_RECORD_MAX_BODY];
    static uint8_t plain[WORKER_TLS_RECORD_MAX_BODY];
    if (len > 0)
        CHECK(SSL_write(p->s, data, (int)len) == (int)len);
    uint8_t *got = malloc(len + 1);
    assert_non_null(got);
    size_t have = 0, n;
    while (have < len && (n = next_record(p, record)) > 0) {
        uint8_t type = 0;
        size_t plain_len = 0;
        CHECK(open_record(p, &p->rec, record, n, plain, &type, &plain_len) == 0);
        if (type == WORKER_TLS_CT_HANDSHAKE && tickets != NULL && plain[0] == 4) {
            (*tickets)++;
            continue;
        }
        CHECK(type == WORKER_TLS_CT_DATA);
        CHECK(plain_len <= WORKER_TLS_RECORD_MAX_PLAIN && have + plain_len <= len);
        memcpy(got + have, plain, plain_len);
        have += plain_len;
    }
    CHECK(have == len && memcmp(got, data, len) == 0);
    free(got);
}

/* Both ways, sizes that matter: 1 byte, a full record, a record and a bit, and then some. */
static void both_ways(pair_t *p)
{
    static const size_t sizes[] = {1, 100, WORKER_TLS_RECORD_MAX_PLAIN,
                                   WORKER_TLS_RECORD_MAX_PLAIN + 1, 40000};
    static uint8_t data[40000];
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        fill(data, sizes[i], (unsigned)i);
        ours_to_server(p, data, sizes[i]);
        fill(data, sizes[i], (unsigned)i + 100);
        server_to_ours(p, data, sizes[i], NULL);
    }
}

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
    g_tally_method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "tally");
    if (g_tally_method == NULL || BIO_meth_set_read(g_tally_method, tally_read) != 1 ||
        BIO_meth_set_write(g_tally_method, tally_write) != 1 ||
        BIO_meth_set_ctrl(g_tally_method, tally_ctrl) != 1 ||
        BIO_meth_set_create(g_tally_method, tally_create) != 1)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tally_any_cut),
        cmocka_unit_test(test_roundtrip_every_suite),
        cmocka_unit_test(test_attacks_every_suite),
        cmocka_unit_test(test_take_refuses_other_suites),
        cmocka_unit_test(test_key_update_both_ways),
        cmocka_unit_test(test_key_update_before_takeover),
    };
    int rv = cmocka_run_group_tests(tests, group_setup, group_teardown);
    BIO_meth_free(g_tally_method);
    return rv;
}
