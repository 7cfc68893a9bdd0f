/* tls_record_fixture.h — what test_tls_record.c (round trips, the tally, suites
 * refused) and test_tls_record_attacks.c (tampered and forged records, key
 * updates) share: an OpenSSL server and client in memory whose client's records
 * are taken over (worker_tls_record_take, with a worker_tls_seen_t tallied over
 * exactly the bytes the client's SSL read and wrote, and its keylog), every
 * AEAD suite, and records moved between the two. */
#ifndef TESTS_UNIT_TLS_RECORD_FIXTURE_H
#define TESTS_UNIT_TLS_RECORD_FIXTURE_H

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
#include "../support/self_signed.h"

static char g_case[160]; /* what a failed check was about */

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "[%s] check failed at line %d: %s\n", g_case, __LINE__, #cond);        \
            ERR_print_errors_fp(stderr);                                                           \
            fail();                                                                                \
        }                                                                                          \
    } while (0)

/* ---- Keys and server contexts, made once ---- */

static SSL_CTX *g_srv_ec, *g_srv_rsa;

static inline SSL_CTX *server_ctx(EVP_PKEY *key)
{
    X509 *cert = key != NULL ? test_self_signed(key) : NULL;
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

/* ---- The suites ---- */

typedef struct suite_s {
    const char *name; /* OpenSSL's name */
    int version;
    bool rsa;     /* the server's certificate */
    uint8_t aead; /* WORKER_TLS_…; 0: not ours */
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

static inline const char *version_name(int v)
{
    return v == TLS1_3_VERSION ? "TLS1.3" : "TLS1.2";
}

/* ---- A client and a server in memory ---- */

/* The client's BIO: reads from c_in and writes to c_out (memory BIOs), tallying
 * exactly what its SSL takes and gives, as worker/tls_bio.c does. */
typedef struct pair_s {
    const suite_t *suite;
    SSL_CTX *cctx;
    SSL *c, *s;
    BIO *c_in, *c_out; /* behind the client's tallying BIO; ours */
    BIO *s_in, *s_out; /* the server's rbio and wbio (its SSL owns them) */
    worker_tls_seen_t seen;
    bool tally;     /* the BIO still tallies (until the takeover) */
    bool no_keylog; /* leaves the secrets out of seen */
    bool hrr;       /* TLS 1.3: the server wants another key share (HelloRetryRequest) */
    bool no_ems;    /* TLS 1.2: no extended master secret */
    worker_tls_record_t rec;
    EVP_CIPHER_CTX *wctx, *rctx; /* our directions' keyed contexts (tls_record.h) */
} pair_t;

static BIO_METHOD *g_tally_method;

static inline int tally_read(BIO *b, char *out, int size)
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

static inline int tally_write(BIO *b, const char *data, int len)
{
    pair_t *p = BIO_get_data(b);
    BIO_clear_retry_flags(b);
    int n = BIO_write(p->c_out, data, len);
    if (n > 0 && p->tally)
        worker_tls_tally(&p->seen.out, data, (size_t)n);
    return n;
}

static inline long tally_ctrl(BIO *b, int cmd, long num, void *ptr)
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

static inline int tally_create(BIO *b)
{
    BIO_set_init(b, 1);
    return 1;
}

static inline void keylog(const SSL *ssl, const char *line)
{
    pair_t *p = SSL_get_app_data(ssl);
    if (p != NULL && !p->no_keylog)
        worker_tls_seen_keylog(&p->seen, line);
}

static inline void on_msg(int write_p, int version, int content_type, const void *buf, size_t len,
                          SSL *ssl, void *arg)
{
    (void)write_p, (void)version, (void)arg;
    pair_t *p = SSL_get_app_data(ssl);
    if (p != NULL)
        worker_tls_seen_msg(&p->seen, content_type, buf, len);
}

/* Moves every byte waiting from one memory BIO to another. */
static inline size_t move_all(BIO *from, BIO *to)
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

static inline size_t shuttle(pair_t *p)
{
    return move_all(p->c_out, p->s_in) + move_all(p->s_out, p->c_in);
}

static inline void pair_init(pair_t *p, const suite_t *suite)
{
    memset(p, 0, sizeof *p);
    p->suite = suite;
    p->tally = true;
    p->cctx = SSL_CTX_new(TLS_client_method());
    assert_non_null(p->cctx);
    SSL_CTX_set_verify(p->cctx, SSL_VERIFY_NONE, NULL);
    SSL_CTX_set_session_cache_mode(p->cctx,
                                   SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_set_keylog_callback(p->cctx, keylog);
    SSL_CTX_set_msg_callback(p->cctx, on_msg); /* as tls_conn.c: key updates noted */
    assert_int_equal(SSL_CTX_set_min_proto_version(p->cctx, suite->version), 1);
    assert_int_equal(SSL_CTX_set_max_proto_version(p->cctx, suite->version), 1);
    if (suite->version == TLS1_3_VERSION)
        assert_int_equal(SSL_CTX_set_ciphersuites(p->cctx, suite->name), 1);
    else
        assert_int_equal(SSL_CTX_set_cipher_list(p->cctx, suite->name), 1);
}

/* A new connection of the pair (the previous one freed), resuming session when
 * given. */
static inline void pair_connect(pair_t *p, SSL_SESSION *session)
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
    if (p->hrr) { /* the client's first key share is X25519's, which the server
                   refuses */
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

static inline void pair_disconnect(pair_t *p)
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

static inline void pair_free(pair_t *p)
{
    if (p->c != NULL)
        pair_disconnect(p);
    worker_tls_keyed_drop(&p->wctx);
    worker_tls_keyed_drop(&p->rctx);
    SSL_CTX_free(p->cctx);
    ERR_clear_error();
}

/* The client's SSL reads what waits for it (TLS 1.3: the tickets) and wants
 * more. */
static inline void client_read_nothing(pair_t *p)
{
    char b[64];
    shuttle(p);
    int n = SSL_read(p->c, b, sizeof b);
    CHECK(n <= 0 && SSL_get_error(p->c, n) == SSL_ERROR_WANT_READ);
    CHECK(BIO_ctrl_pending(p->c_in) == 0);
}

static inline void fill(uint8_t *b, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++)
        b[i] = (uint8_t)(i * 31 + seed * 7 + i / 251);
}

/* Records exchanged through OpenSSL both ways before any takeover. */
static inline void exchange_through_openssl(pair_t *p, int rounds)
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
static inline int take(pair_t *p)
{
    CHECK(worker_tls_tally_whole(&p->seen.in) && worker_tls_tally_whole(&p->seen.out));
    CHECK(BIO_ctrl_pending(p->c_out) == 0 || p->suite->version == TLS1_3_VERSION);
    p->tally = false;
    return worker_tls_record_take(&p->rec, p->c, &p->seen);
}

/* ---- Records on the wire after the takeover ---- */

/* The next whole record the server sent us (shuttled into c_in), into rec_buf;
 * its length, or 0 when none waits. */
static inline size_t next_record(pair_t *p, uint8_t *rec_buf)
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
static inline int open_record(pair_t *p, worker_tls_record_t *rec, const uint8_t *record,
                              size_t len, uint8_t *plain, uint8_t *type, size_t *plain_len)
{
    const char *why = NULL;
    assert_memory_equal(rec->r.key, p->rec.r.key, sizeof rec->r.key);
    int rv = worker_tls_record_open(rec, &p->rctx, record, len, plain, type, plain_len, &why);
    if (rv != 0)
        CHECK(why != NULL);
    ERR_clear_error();
    return rv;
}

/* We seal len bytes (in records of at most the maximum) for the server, whose
 * SSL_read must give them back. */
static inline void ours_to_server(pair_t *p, const uint8_t *data, size_t len)
{
    static uint8_t sealed[WORKER_TLS_RECORD_MAX_PLAIN + WORKER_TLS_RECORD_OVERHEAD];
    size_t off = 0;
    do {
        size_t n =
            len - off < WORKER_TLS_RECORD_MAX_PLAIN ? len - off : WORKER_TLS_RECORD_MAX_PLAIN;
        size_t out =
            worker_tls_record_seal(&p->rec, &p->wctx, WORKER_TLS_CT_DATA, data + off, n, sealed);
        CHECK(out == n + WORKER_TLS_RECORD_HEADER + 16 +
                         (p->rec.tls13                       ? 1
                          : p->rec.aead == WORKER_TLS_CHACHA ? 0
                                                             : 8));
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

/* The server's SSL_write of len bytes must open here: tickets (TLS 1.3) are
 * skipped and counted into *tickets when given. */
static inline void server_to_ours(pair_t *p, const uint8_t *data, size_t len, int *tickets)
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

/* Both ways, sizes that matter: 1 byte, a full record, a record and a bit, and
 * then some. */
static inline void both_ways(pair_t *p)
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

/* ---- The group: server keys and contexts, the tallying BIO ---- */

static inline int group_setup(void **state)
{
    (void)state;
    g_tally_method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "tally");
    if (g_tally_method == NULL || BIO_meth_set_read(g_tally_method, tally_read) != 1 ||
        BIO_meth_set_write(g_tally_method, tally_write) != 1 ||
        BIO_meth_set_ctrl(g_tally_method, tally_ctrl) != 1 ||
        BIO_meth_set_create(g_tally_method, tally_create) != 1)
        return -1;
    g_srv_ec = server_ctx(EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256"));
    g_srv_rsa = server_ctx(EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048));
    return g_srv_ec != NULL && g_srv_rsa != NULL ? 0 : -1;
}

static inline int group_teardown(void **state)
{
    (void)state;
    SSL_CTX_free(g_srv_ec);
    SSL_CTX_free(g_srv_rsa);
    BIO_meth_free(g_tally_method);
    return 0;
}

#endif
