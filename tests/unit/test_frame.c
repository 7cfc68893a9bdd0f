/* test_frame.c — unit tests of common/lc_frame.c: incremental reader, encoder and decoder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lc_err.h"
#include "lc_frame.h"

#define MAX_FRAMES 16
#define PROOF_LEN 3000 /* larger than the reader's first buffer, to make it grow */

/* Records a copy of every frame body the reader delivers. */
typedef struct {
    int n;
    uint8_t *bodies[MAX_FRAMES];
    size_t lens[MAX_FRAMES];
    const uint8_t *ptrs[MAX_FRAMES]; /* where the reader pointed, to check zero-copy */
    int stop_after; /* return 42 after this many frames; 0 never */
} collector_t;

static int collect(void *arg, const uint8_t *body, size_t len)
{
    collector_t *c = arg;
    assert_true(c->n < MAX_FRAMES);
    c->bodies[c->n] = malloc(len ? len : 1);
    assert_non_null(c->bodies[c->n]);
    if (len)
        memcpy(c->bodies[c->n], body, len);
    c->lens[c->n] = len;
    c->ptrs[c->n] = body;
    c->n++;
    return c->stop_after != 0 && c->n >= c->stop_after ? 42 : 0;
}

static void collector_free(collector_t *c)
{
    for (int i = 0; i < c->n; i++)
        free(c->bodies[i]);
    memset(c, 0, sizeof *c);
}

typedef struct {
    uint8_t *data;
    size_t len;
    size_t ends[3]; /* offset just past each frame */
} stream_t;

static void append_frame(stream_t *s, const Lc__Envelope *env, int i)
{
    uint8_t *f;
    size_t flen;
    assert_int_equal(lc_frame_encode(env, &f, &flen), 0);
    s->data = realloc(s->data, s->len + flen);
    assert_non_null(s->data);
    memcpy(s->data + s->len, f, flen);
    s->len += flen;
    s->ends[i] = s->len;
    free(f);
}

/* Three frames of different types and sizes: StatsAck, Stop, a Hello
 * carrying PROOF_LEN bytes (whose length prefix takes two bytes). */
static stream_t make_stream(void)
{
    static uint8_t proof[PROOF_LEN];
    for (size_t i = 0; i < PROOF_LEN; i++)
        proof[i] = (uint8_t)(i * 7);
    stream_t s = {0};

    Lc__StatsAck ack = LC__STATS_ACK__INIT;
    ack.run = 7;
    ack.seq = 99;
    Lc__Envelope e1 = LC__ENVELOPE__INIT;
    e1.msg_case = LC__ENVELOPE__MSG_STATS_ACK;
    e1.stats_ack = &ack;
    append_frame(&s, &e1, 0);

    Lc__Stop stop = LC__STOP__INIT;
    stop.run = 8;
    stop.reason = "cancelled by user";
    Lc__Envelope e2 = LC__ENVELOPE__INIT;
    e2.msg_case = LC__ENVELOPE__MSG_STOP;
    e2.stop = &stop;
    append_frame(&s, &e2, 1);

    Lc__Hello hello = LC__HELLO__INIT;
    hello.protocol_version = 1;
    hello.worker_id = "w-1";
    hello.join_proof.data = proof;
    hello.join_proof.len = PROOF_LEN;
    Lc__Envelope e3 = LC__ENVELOPE__INIT;
    e3.msg_case = LC__ENVELOPE__MSG_HELLO;
    e3.hello = &hello;
    append_frame(&s, &e3, 2);
    return s;
}

/* Decodes the collected frames and checks they are the three of make_stream. */
static void check_stream_frames(collector_t *c)
{
    Lc__Envelope *env;
    char err[64];
    assert_int_equal(c->n, 3);

    assert_int_equal(lc_frame_decode(c->bodies[0], c->lens[0], &env, err, sizeof err), 0);
    assert_int_equal(env->msg_case, LC__ENVELOPE__MSG_STATS_ACK);
    assert_int_equal(env->stats_ack->run, 7);
    assert_int_equal(env->stats_ack->seq, 99);
    lc__envelope__free_unpacked(env, NULL);

    assert_int_equal(lc_frame_decode(c->bodies[1], c->lens[1], &env, err, sizeof err), 0);
    assert_int_equal(env->msg_case, LC__ENVELOPE__MSG_STOP);
    assert_int_equal(env->stop->run, 8);
    assert_string_equal(env->stop->reason, "cancelled by user");
    lc__envelope__free_unpacked(env, NULL);

    assert_int_equal(lc_frame_decode(c->bodies[2], c->lens[2], &env, err, sizeof err), 0);
    assert_int_equal(env->msg_case, LC__ENVELOPE__MSG_HELLO);
    assert_string_equal(env->hello->worker_id, "w-1");
    assert_int_equal(env->hello->join_proof.len, PROOF_LEN);
    for (size_t i = 0; i < PROOF_LEN; i++)
        assert_int_equal(env->hello->join_proof.data[i], (uint8_t)(i * 7));
    lc__envelope__free_unpacked(env, NULL);
}

static void test_byte_by_byte(void **state)
{
    stream_t s = make_stream();
    collector_t c = {0};
    lc_frame_reader_t r;
    lc_frame_reader_init(&r, LC_FRAME_MAX);

    for (size_t i = 0; i < s.len; i++) {
        assert_int_equal(lc_frame_reader_feed(&r, s.data + i, 1, collect, &c), 0);
        int done = (i + 1 >= s.ends[0]) + (i + 1 >= s.ends[1]) + (i + 1 >= s.ends[2]);
        assert_int_equal(c.n, done); /* each frame exactly when its last byte arrives */
        size_t start = done == 0 ? 0 : s.ends[done - 1];
        assert_int_equal(lc_frame_reader_pending(&r), i + 1 - start);
    }
    check_stream_frames(&c);
    assert_int_equal(lc_frame_reader_pending(&r), 0);
    lc_frame_reader_close(&r);
    collector_free(&c);
    free(s.data);
}

static void test_one_feed(void **state)
{
    stream_t s = make_stream();
    collector_t c = {0};
    lc_frame_reader_t r;
    lc_frame_reader_init(&r, LC_FRAME_MAX);

    assert_int_equal(lc_frame_reader_feed(&r, s.data, s.len, collect, &c), 0);
    check_stream_frames(&c);
    /* Whole frames are delivered in place, not copied into the reader. */
    for (int i = 0; i < 3; i++)
        assert_true(c.ptrs[i] >= s.data && c.ptrs[i] + c.lens[i] <= s.data + s.len);
    assert_int_equal(lc_frame_reader_pending(&r), 0);
    lc_frame_reader_close(&r);
    collector_free(&c);
    free(s.data);
}

static void test_split_every_offset(void **state)
{
    stream_t s = make_stream();

    for (size_t k = 0; k <= s.len; k++) {
        collector_t c = {0};
        lc_frame_reader_t r;
        lc_frame_reader_init(&r, LC_FRAME_MAX);
        assert_int_equal(lc_frame_reader_feed(&r, s.data, k, collect, &c), 0);
        assert_int_equal(lc_frame_reader_feed(&r, s.data + k, s.len - k, collect, &c), 0);
        check_stream_frames(&c);
        assert_int_equal(lc_frame_reader_pending(&r), 0);
        lc_frame_reader_close(&r);
        collector_free(&c);
    }
    free(s.data);
}

static void test_oversize(void **state)
{
    /* 20000000 as a varint, followed by a few body bytes that must never be buffered. */
    const uint8_t big[] = {0x80, 0xda, 0xc4, 0x09, 1, 2, 3};
    collector_t c = {0};
    lc_frame_reader_t r;

    lc_frame_reader_init(&r, LC_FRAME_MAX);
    assert_int_equal(lc_frame_reader_feed(&r, big, sizeof big, collect, &c), LC_EPROTO);
    assert_string_equal(r.errmsg, "frame of 20000000 bytes exceeds the 16777216-byte limit");
    assert_int_equal(c.n, 0);
    assert_true(r.cap < 1024);
    /* The reader stays failed: a later valid frame is not delivered. */
    const uint8_t ok[] = {0};
    assert_int_equal(lc_frame_reader_feed(&r, ok, 1, collect, &c), LC_EPROTO);
    assert_int_equal(c.n, 0);
    lc_frame_reader_close(&r);

    /* The same prefix arriving byte by byte is rejected on its last byte. */
    lc_frame_reader_init(&r, LC_FRAME_MAX);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(lc_frame_reader_feed(&r, big + i, 1, collect, &c), 0);
    assert_int_equal(lc_frame_reader_feed(&r, big + 3, 1, collect, &c), LC_EPROTO);
    assert_string_equal(r.errmsg, "frame of 20000000 bytes exceeds the 16777216-byte limit");
    lc_frame_reader_close(&r);

    /* With a small limit, a frame of exactly max bytes passes and max + 1 does not. */
    uint8_t frame[1 + 101] = {100};
    lc_frame_reader_init(&r, 100);
    assert_int_equal(lc_frame_reader_feed(&r, frame, 101, collect, &c), 0);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.lens[0], 100);
    frame[0] = 101;
    assert_int_equal(lc_frame_reader_feed(&r, frame, 1, collect, &c), LC_EPROTO);
    assert_string_equal(r.errmsg, "frame of 101 bytes exceeds the 100-byte limit");
    assert_int_equal(c.n, 1);
    lc_frame_reader_close(&r);
    collector_free(&c);
}

/* Feeds bad in one piece, then byte by byte; both must fail as malformed. */
static void assert_malformed(const uint8_t *bad, size_t len)
{
    collector_t c = {0};
    lc_frame_reader_t r;
    int rv = 0;

    lc_frame_reader_init(&r, LC_FRAME_MAX);
    assert_int_equal(lc_frame_reader_feed(&r, bad, len, collect, &c), LC_EPROTO);
    assert_non_null(strstr(r.errmsg, "length prefix")); /* malformed, not merely oversize */
    lc_frame_reader_close(&r);

    lc_frame_reader_init(&r, LC_FRAME_MAX);
    for (size_t i = 0; i < len && rv == 0; i++)
        rv = lc_frame_reader_feed(&r, bad + i, 1, collect, &c);
    assert_int_equal(rv, LC_EPROTO);
    assert_non_null(strstr(r.errmsg, "length prefix"));
    assert_int_equal(c.n, 0);
    lc_frame_reader_close(&r);
}

static void test_malformed_varint(void **state)
{
    const uint8_t too_long[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
    const uint8_t overflow[] = {0xff, 0xff, 0xff, 0xff, 0x1f};
    const uint8_t overflow_high[] = {0x80, 0x80, 0x80, 0x80, 0x70};
    const uint8_t wraps_to_zero[] = {0x80, 0x80, 0x80, 0x80, 0x10}; /* 2^32 */
    assert_malformed(too_long, sizeof too_long);
    assert_malformed(overflow, sizeof overflow);
    assert_malformed(overflow_high, sizeof overflow_high);
    assert_malformed(wraps_to_zero, sizeof wraps_to_zero);

    /* Five bytes with no overflow (UINT32_MAX) is well-formed, just oversize. */
    const uint8_t u32_max[] = {0xff, 0xff, 0xff, 0xff, 0x0f};
    lc_frame_reader_t r;
    collector_t c = {0};
    lc_frame_reader_init(&r, LC_FRAME_MAX);
    assert_int_equal(lc_frame_reader_feed(&r, u32_max, 5, collect, &c), LC_EPROTO);
    assert_string_equal(r.errmsg, "frame of 4294967295 bytes exceeds the 16777216-byte limit");
    lc_frame_reader_close(&r);

    /* A non-minimal but valid 5-byte prefix of 3 is accepted. */
    const uint8_t padded[] = {0x83, 0x80, 0x80, 0x80, 0x00, 'a', 'b', 'c'};
    lc_frame_reader_init(&r, LC_FRAME_MAX);
    assert_int_equal(lc_frame_reader_feed(&r, padded, sizeof padded, collect, &c), 0);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.lens[0], 3);
    assert_memory_equal(c.bodies[0], "abc", 3);
    lc_frame_reader_close(&r);
    collector_free(&c);
}

static void test_pending_truncated(void **state)
{
    stream_t s = make_stream();
    collector_t c = {0};
    lc_frame_reader_t r;
    lc_frame_reader_init(&r, LC_FRAME_MAX);

    /* Two whole frames and all but the last byte of the third. */
    assert_int_equal(lc_frame_reader_feed(&r, s.data, s.len - 1, collect, &c), 0);
    assert_int_equal(c.n, 2);
    assert_int_equal(lc_frame_reader_pending(&r), s.len - 1 - s.ends[1]);
    assert_int_equal(lc_frame_reader_feed(&r, s.data + s.len - 1, 1, collect, &c), 0);
    check_stream_frames(&c);
    assert_int_equal(lc_frame_reader_pending(&r), 0);

    /* Only the first byte of a two-byte length prefix. */
    assert_int_equal(lc_frame_reader_feed(&r, s.data + s.ends[1], 1, collect, &c), 0);
    assert_int_equal(lc_frame_reader_pending(&r), 1);
    assert_int_equal(c.n, 3);
    lc_frame_reader_close(&r);
    collector_free(&c);
    free(s.data);
}

static void test_callback_stops(void **state)
{
    stream_t s = make_stream();
    collector_t c = {.stop_after = 1};
    lc_frame_reader_t r;
    lc_frame_reader_init(&r, LC_FRAME_MAX);
    assert_int_equal(lc_frame_reader_feed(&r, s.data, s.len, collect, &c), 42);
    assert_int_equal(c.n, 1);
    lc_frame_reader_close(&r);
    collector_free(&c);

    /* Also when the stopping frame completes from the reader's buffer. */
    c.stop_after = 1;
    lc_frame_reader_init(&r, LC_FRAME_MAX);
    assert_int_equal(lc_frame_reader_feed(&r, s.data, 2, collect, &c), 0);
    assert_int_equal(lc_frame_reader_feed(&r, s.data + 2, s.len - 2, collect, &c), 42);
    assert_int_equal(c.n, 1);
    lc_frame_reader_close(&r);
    collector_free(&c);
    free(s.data);
}

static void test_zero_length_frame(void **state)
{
    const uint8_t zeros[] = {0, 0};
    collector_t c = {0};
    lc_frame_reader_t r;
    lc_frame_reader_init(&r, LC_FRAME_MAX);
    assert_int_equal(lc_frame_reader_feed(&r, zeros, 2, collect, &c), 0);
    assert_int_equal(c.n, 2);
    assert_int_equal(c.lens[0], 0);
    assert_int_equal(lc_frame_reader_pending(&r), 0);
    lc_frame_reader_close(&r);
    collector_free(&c);
}

static void assert_decode_fails(const uint8_t *body, size_t len, const char *why)
{
    Lc__Envelope *env = NULL;
    char err[64] = "";
    assert_int_equal(lc_frame_decode(body, len, &env, err, sizeof err), LC_EPROTO);
    assert_string_equal(err, why);
    assert_null(env);
}

static void test_garbage_body(void **state)
{
    const uint8_t short_field[] = {0x0a, 0x05, 0x01};  /* field 1 claims 5 bytes, has 1 */
    const uint8_t bad_wire[] = {0x0f};                 /* wire type 7 does not exist */
    const uint8_t bad_inner[] = {0x42, 0x02, 0x08, 0x80}; /* StatsAck with a truncated varint */
    assert_decode_fails(short_field, sizeof short_field, "undecodable frame");
    assert_decode_fails(bad_wire, sizeof bad_wire, "undecodable frame");
    assert_decode_fails(bad_inner, sizeof bad_inner, "undecodable frame");

    /* A NULL errmsg is allowed. */
    Lc__Envelope *env = NULL;
    assert_int_equal(lc_frame_decode(bad_wire, 1, &env, NULL, 0), LC_EPROTO);
}

static void test_empty_envelope(void **state)
{
    const uint8_t unknown_only[] = {0x78, 0x01}; /* field 15, not in the oneof */
    assert_decode_fails(NULL, 0, "empty envelope");
    assert_decode_fails(unknown_only, sizeof unknown_only, "empty envelope");

    /* An encoded empty Envelope is a one-byte frame whose body fails to decode. */
    Lc__Envelope env = LC__ENVELOPE__INIT;
    uint8_t *f;
    size_t flen;
    assert_int_equal(lc_frame_encode(&env, &f, &flen), 0);
    assert_int_equal(flen, 1);
    assert_int_equal(f[0], 0);
    assert_decode_fails(f + 1, 0, "empty envelope");
    free(f);
}

static void test_encode_too_big(void **state)
{
    Lc__Hello hello = LC__HELLO__INIT;
    hello.join_proof.len = LC_FRAME_MAX;
    hello.join_proof.data = calloc(1, LC_FRAME_MAX);
    assert_non_null(hello.join_proof.data);
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_HELLO;
    env.hello = &hello;
    uint8_t *f = NULL;
    size_t flen = 0;
    assert_int_equal(lc_frame_encode(&env, &f, &flen), LC_ETOOBIG);
    assert_null(f);
    free(hello.join_proof.data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_byte_by_byte),
        cmocka_unit_test(test_one_feed),
        cmocka_unit_test(test_split_every_offset),
        cmocka_unit_test(test_oversize),
        cmocka_unit_test(test_malformed_varint),
        cmocka_unit_test(test_pending_truncated),
        cmocka_unit_test(test_callback_stops),
        cmocka_unit_test(test_zero_length_frame),
        cmocka_unit_test(test_garbage_body),
        cmocka_unit_test(test_empty_envelope),
        cmocka_unit_test(test_encode_too_big),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
