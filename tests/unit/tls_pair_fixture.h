/* tls_pair_fixture.h — what test_lc_tls_channel and test_lc_tls_channel_errors share: the
 * group's certificates (test_certs.h), and a server and a client channel wired back to back
 * in memory (each one's io.send fills a queue the test feeds to the other). Include it after
 * cmocka.h. */
#ifndef TESTS_UNIT_TLS_PAIR_FIXTURE_H
#define TESTS_UNIT_TLS_PAIR_FIXTURE_H

#define MIB (1024u * 1024u)

/* ---- Certificates, made once for the whole group (test_certs.h) ---- */

static inline int group_setup(void **state)
{
    (void)state;
    if (test_certs_setup() != 0)
        return -1;
    FILE *f = fopen(file_in_dir("garbage.pem"), "w");
    if (f == NULL)
        return -1;
    fputs("-----BEGIN CERTIFICATE-----\nnot base64 at all!\n-----END CERTIFICATE-----\n", f);
    fclose(f);
    return 0;
}

static inline int group_teardown(void **state)
{
    (void)state;
    return test_certs_teardown();
}

/* ---- Byte buffers and the two ends ---- */

typedef struct {
    uint8_t *data;
    size_t len, cap;
} buf_t;

static inline void buf_append(buf_t *b, const uint8_t *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        b->data = realloc(b->data, cap);
        assert_non_null(b->data);
        b->cap = cap;
    }
    if (n > 0)
        memcpy(b->data + b->len, p, n);
    b->len += n;
}

static inline void buf_free(buf_t *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

typedef struct {
    lc_tls_channel_t *ch;
    buf_t wire;  /* ciphertext sent and not yet fed to the other end */
    buf_t plain; /* plaintext received */
    int sends, receives;
    int send_rv; /* what io.send returns */
    int stop_rv; /* what io.receive returns */
} side_t;

static inline int on_send(void *arg, uint8_t *buf, size_t len)
{
    side_t *s = arg;
    s->sends++;
    if (s->send_rv == 0)
        buf_append(&s->wire, buf, len);
    free(buf); /* ours even when we fail */
    return s->send_rv;
}

static inline int on_receive(void *arg, const uint8_t *data, size_t len)
{
    side_t *s = arg;
    s->receives++;
    buf_append(&s->plain, data, len);
    return s->stop_rv;
}

static inline void side_free(side_t *s)
{
    lc_tls_channel_free(s->ch);
    buf_free(&s->wire);
    buf_free(&s->plain);
    memset(s, 0, sizeof *s);
}

/* Feeds what from sent to to, chunk bytes per call (0: all in one call).
 * Stops at the first non-zero return, which it returns. */
static inline int deliver(side_t *from, side_t *to, size_t chunk)
{
    buf_t w = from->wire;
    memset(&from->wire, 0, sizeof from->wire); /* sends during the feed go to a new queue */
    int rv = 0;
    for (size_t off = 0; off < w.len && rv == 0;) {
        size_t n = chunk == 0 || w.len - off < chunk ? w.len - off : chunk;
        rv = lc_tls_channel_feed(to->ch, w.data + off, n);
        off += n;
    }
    buf_free(&w);
    return rv;
}

/* Shuttles ciphertext both ways until both queues are empty or a feed fails;
 * *failed then names the end whose feed failed. */
static inline int pump(side_t *srv, side_t *cli, size_t chunk, side_t **failed)
{
    *failed = NULL;
    for (int round = 0; srv->wire.len > 0 || cli->wire.len > 0; round++) {
        assert_true(round < 1000);
        int rv = deliver(cli, srv, chunk);
        if (rv != 0) {
            *failed = srv;
            return rv;
        }
        rv = deliver(srv, cli, chunk);
        if (rv != 0) {
            *failed = cli;
            return rv;
        }
    }
    return 0;
}

typedef struct {
    side_t srv, cli;
} pair_t;

/* A server channel on sctx and a client one on cctx dialing host. */
static inline void pair_open(pair_t *p, SSL_CTX *sctx, SSL_CTX *cctx, const char *host)
{
    memset(p, 0, sizeof *p);
    lc_tls_io_t sio = {.arg = &p->srv, .send = on_send, .receive = on_receive};
    assert_int_equal(lc_tls_channel_new(&p->srv.ch, sctx, NULL, &sio), 0);
    assert_int_equal(p->srv.sends, 0); /* a server waits for the ClientHello */
    lc_tls_io_t cio = {.arg = &p->cli, .send = on_send, .receive = on_receive};
    assert_int_equal(lc_tls_channel_new(&p->cli.ch, cctx, host, &cio), 0);
    assert_int_equal(p->cli.sends, 1); /* the ClientHello goes out at once */
    assert_true(p->cli.wire.len > 0);
}

static inline void pair_free(pair_t *p)
{
    side_free(&p->srv);
    side_free(&p->cli);
}

static inline void assert_established(pair_t *p)
{
    assert_true(lc_tls_channel_established(p->srv.ch));
    assert_true(lc_tls_channel_established(p->cli.ch));
    assert_string_equal(lc_tls_channel_error(p->srv.ch), "");
    assert_string_equal(lc_tls_channel_error(p->cli.ch), "");
}

/* A connected pair on fresh contexts (freed here: the channels hold them). */
static inline void pair_connect(pair_t *p, const char *host)
{
    SSL_CTX *sctx = server_ctx(), *cctx = client_ctx();
    pair_open(p, sctx, cctx, host);
    SSL_CTX_free(sctx);
    SSL_CTX_free(cctx);
    side_t *failed;
    assert_int_equal(pump(&p->srv, &p->cli, 0, &failed), 0);
    assert_established(p);
}

static uint8_t *random_bytes(size_t n, uint64_t seed)
{
    uint8_t *p = malloc(n);
    assert_non_null(p);
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (uint8_t)(x >> 24);
    }
    return p;
}

static inline void assert_plain(const side_t *s, const uint8_t *want, size_t len)
{
    assert_int_equal(s->plain.len, len);
    assert_memory_equal(s->plain.data, want, len);
}

/* ---- 1. Handshake ---- */

#endif
