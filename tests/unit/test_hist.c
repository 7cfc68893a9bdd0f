/* test_hist.c — unit tests of common/lc_hist.c: layout, percentiles, merge, encoding. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lc_err.h"
#include "lc_hist.h"
#include "test_rand.h"

#define N_VALUES 100000

static double rand_unit(uint64_t *state)
{
    return (double)(next_rand(state) >> 11) / (double)(1ull << 53);
}

typedef uint64_t (*gen_fn)(uint64_t *state);

static uint64_t gen_uniform(uint64_t *state)
{
    return 1 + next_rand(state) % 1000000;
}

/* Log-uniform over 1..1e8: every decade equally likely. */
static uint64_t gen_log_uniform(uint64_t *state)
{
    uint64_t r = (uint64_t)exp(rand_unit(state) * log(1e8));
    return r < 1 ? 1 : r;
}

/* Bimodal: fast cache hits around 200 µs and slow misses around 80 ms. */
static uint64_t gen_bimodal(uint64_t *state)
{
    if (next_rand(state) % 10 < 8)
        return 150 + next_rand(state) % 100;
    return 60000 + next_rand(state) % 40000;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static uint64_t *make_values(gen_fn gen, uint64_t seed, size_t n)
{
    uint64_t *v = malloc(n * sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; i < n; i++)
        v[i] = gen(&seed);
    return v;
}

static void record_all(lc_hist_t *h, const uint64_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        lc_hist_record(h, v[i]);
}

static void assert_hist_equal(const lc_hist_t *a, const lc_hist_t *b)
{
    assert_int_equal(a->total, b->total);
    assert_int_equal(a->sum, b->sum);
    assert_int_equal(a->min, b->min);
    assert_int_equal(a->max, b->max);
    assert_memory_equal(a->counts, b->counts, sizeof a->counts);
}

static void test_bucket_layout(void **state)
{
    for (uint64_t v = 1; v < 256; v++)
        assert_int_equal(lc_hist_bucket_of(v), v);
    assert_int_equal(lc_hist_bucket_of(0), 1);
    assert_int_equal(lc_hist_bucket_of(UINT64_MAX), lc_hist_bucket_of(LC_HIST_MAX_US));
    assert_true(lc_hist_bucket_of(LC_HIST_MAX_US) < LC_HIST_BUCKETS);
    assert_int_equal(lc_hist_bucket_of(1u << 26), LC_HIST_BUCKETS - 128);
    assert_int_equal(lc_hist_bucket_high(LC_HIST_BUCKETS - 1), (1ull << 27) - 1);

    for (uint32_t b = 1; b < LC_HIST_BUCKETS; b++) {
        uint64_t low = lc_hist_bucket_low(b), high = lc_hist_bucket_high(b);
        assert_true(low <= high);
        assert_int_equal(low, lc_hist_bucket_high(b - 1) + 1); /* contiguous, no gaps */
        if (low <= LC_HIST_MAX_US) {
            assert_int_equal(lc_hist_bucket_of(low), b);
            if (high <= LC_HIST_MAX_US)
                assert_int_equal(lc_hist_bucket_of(high), b);
        }
        if (b >= 256)
            assert_true((high - low + 1) * 128 <= low); /* width <= 1/128 of the values */
    }
}

static void test_empty(void **state)
{
    lc_hist_t h;
    lc_hist_init(&h);
    assert_int_equal(h.total, 0);
    assert_int_equal(h.min, UINT64_MAX);
    assert_int_equal(h.max, 0);
    assert_int_equal(lc_hist_percentile(&h, 50), 0);
    assert_int_equal(lc_hist_percentile(&h, 100), 0);
    assert_true(lc_hist_mean(&h) == 0.0);
}

static void test_clamp(void **state)
{
    lc_hist_t h;
    lc_hist_init(&h);
    lc_hist_record(&h, 0);
    lc_hist_record(&h, 500000000);
    assert_int_equal(h.min, LC_HIST_MIN_US);
    assert_int_equal(h.max, LC_HIST_MAX_US);
    assert_int_equal(h.sum, LC_HIST_MIN_US + LC_HIST_MAX_US);
    assert_int_equal(h.counts[lc_hist_bucket_of(1)], 1);
    assert_int_equal(h.counts[lc_hist_bucket_of(LC_HIST_MAX_US)], 1);
    assert_int_equal(lc_hist_percentile(&h, 100), LC_HIST_MAX_US);
    assert_int_equal(lc_hist_percentile(&h, 0), LC_HIST_MIN_US);
}

/* Records n values from gen and checks each percentile against the exact one
 * from the sorted values (nearest-rank definition), plus min, max and mean. */
static void check_percentiles(gen_fn gen, uint64_t seed)
{
    static const unsigned per_mille[] = {10, 250, 500, 900, 950, 990, 999};
    uint64_t *v = make_values(gen, seed, N_VALUES);
    lc_hist_t *h = malloc(sizeof *h);
    assert_non_null(h);
    lc_hist_init(h);
    record_all(h, v, N_VALUES);
    qsort(v, N_VALUES, sizeof *v, cmp_u64);

    uint64_t sum = 0;
    for (size_t i = 0; i < N_VALUES; i++)
        sum += v[i];
    assert_int_equal(h->total, N_VALUES);
    assert_int_equal(h->sum, sum);
    assert_int_equal(h->min, v[0]);
    assert_int_equal(h->max, v[N_VALUES - 1]);
    assert_int_equal(lc_hist_percentile(h, 0), v[0]);
    assert_int_equal(lc_hist_percentile(h, 100), v[N_VALUES - 1]);
    assert_true(lc_hist_mean(h) == (double)sum / N_VALUES);

    for (size_t i = 0; i < sizeof per_mille / sizeof per_mille[0]; i++) {
        size_t rank = ((size_t)per_mille[i] * N_VALUES + 999) / 1000;
        uint64_t exact = v[rank - 1];
        uint64_t got = lc_hist_percentile(h, per_mille[i] / 10.0);
        uint64_t diff = got > exact ? got - exact : exact - got;
        if (diff * 100 > exact)
            fail_msg("p%.1f: got %llu, exact %llu", per_mille[i] / 10.0,
                     (unsigned long long)got, (unsigned long long)exact);
    }
    free(h);
    free(v);
}

static void test_percentiles_uniform(void **state)
{
    check_percentiles(gen_uniform, 1);
}

static void test_percentiles_log_uniform(void **state)
{
    check_percentiles(gen_log_uniform, 2);
}

static void test_percentiles_bimodal(void **state)
{
    check_percentiles(gen_bimodal, 3);
}

/* A single repeated value: every percentile is that value exactly. */
static void test_percentiles_constant(void **state)
{
    lc_hist_t h;
    lc_hist_init(&h);
    for (int i = 0; i < 1000; i++)
        lc_hist_record(&h, 123457);
    assert_int_equal(lc_hist_percentile(&h, 1), 123457);
    assert_int_equal(lc_hist_percentile(&h, 50), 123457);
    assert_int_equal(lc_hist_percentile(&h, 99.9), 123457);
}

static void test_merge(void **state)
{
    uint64_t *a = make_values(gen_uniform, 11, N_VALUES);
    uint64_t *b = make_values(gen_log_uniform, 12, N_VALUES);
    lc_hist_t *ha = malloc(sizeof *ha), *hb = malloc(sizeof *hb), *both = malloc(sizeof *both);
    assert_true(ha && hb && both);
    lc_hist_init(ha);
    lc_hist_init(hb);
    lc_hist_init(both);
    record_all(ha, a, N_VALUES);
    record_all(hb, b, N_VALUES);
    record_all(both, a, N_VALUES);
    record_all(both, b, N_VALUES);

    lc_hist_merge(ha, hb);
    assert_hist_equal(ha, both);

    /* Merging into or from an empty histogram is the identity. */
    lc_hist_t *empty = malloc(sizeof *empty);
    assert_non_null(empty);
    lc_hist_init(empty);
    lc_hist_merge(ha, empty);
    assert_hist_equal(ha, both);
    lc_hist_merge(empty, both);
    assert_hist_equal(empty, both);

    free(empty);
    free(both);
    free(hb);
    free(ha);
    free(b);
    free(a);
}

static void test_encode_roundtrip(void **state)
{
    uint64_t *v = make_values(gen_log_uniform, 21, N_VALUES);
    lc_hist_t *h = malloc(sizeof *h), *back = malloc(sizeof *back);
    assert_true(h && back);
    lc_hist_init(h);
    record_all(h, v, N_VALUES);

    uint8_t *enc;
    size_t len;
    assert_int_equal(lc_hist_encode(h, &enc, &len), 0);
    assert_true(len < sizeof h->counts); /* sparse */
    lc_hist_init(back);
    assert_int_equal(lc_hist_decode_add(back, enc, len), 0);
    assert_hist_equal(back, h);

    /* Decoding adds: a second decode doubles the counts, as a merge would. */
    assert_int_equal(lc_hist_decode_add(back, enc, len), 0);
    lc_hist_merge(h, h);
    assert_hist_equal(back, h);
    free(enc);

    /* The empty histogram round-trips and adds nothing. */
    lc_hist_t *empty = malloc(sizeof *empty);
    assert_non_null(empty);
    lc_hist_init(empty);
    assert_int_equal(lc_hist_encode(empty, &enc, &len), 0);
    assert_int_equal(lc_hist_decode_add(back, enc, len), 0);
    assert_hist_equal(back, h);
    free(enc);
    free(empty);
    free(back);
    free(h);
    free(v);
}

/* A histogram with some data, to check that failed decodes leave it alone. */
static lc_hist_t *make_target(void)
{
    lc_hist_t *h = malloc(sizeof *h);
    assert_non_null(h);
    lc_hist_init(h);
    lc_hist_record(h, 5);
    lc_hist_record(h, 70000);
    return h;
}

static void assert_rejected(const uint8_t *buf, size_t len)
{
    lc_hist_t *h = make_target(), *before = make_target();
    assert_int_equal(lc_hist_decode_add(h, buf, len), LC_EPROTO);
    assert_hist_equal(h, before);
    free(before);
    free(h);
}

static void test_decode_truncated(void **state)
{
    uint64_t *v = make_values(gen_bimodal, 31, 1000);
    lc_hist_t *h = malloc(sizeof *h);
    assert_non_null(h);
    lc_hist_init(h);
    record_all(h, v, 1000);
    uint8_t *enc;
    size_t len;
    assert_int_equal(lc_hist_encode(h, &enc, &len), 0);
    for (size_t cut = 0; cut < len; cut++)
        assert_rejected(enc, cut);
    free(enc);
    free(h);
    free(v);
}

static size_t put(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    for (; v >= 0x80; v >>= 7)
        p[n++] = (uint8_t)(v | 0x80);
    p[n++] = (uint8_t)v;
    return n;
}

/* Builds header + pairs by hand: pairs holds (delta, count) varints. */
static size_t build(uint8_t *buf, uint64_t total, uint64_t sum, uint64_t min, uint64_t max,
                    const uint64_t *pairs, size_t npairs)
{
    size_t n = put(buf, total);
    n += put(buf + n, sum);
    n += put(buf + n, min);
    n += put(buf + n, max);
    for (size_t i = 0; i < 2 * npairs; i++)
        n += put(buf + n, pairs[i]);
    return n;
}

static void test_decode_corrupted(void **state)
{
    uint8_t buf[256];
    size_t n;
    uint32_t b10 = lc_hist_bucket_of(10), b20 = lc_hist_bucket_of(20);

    /* The well-formed baseline is accepted, so each rejection below is due to its one change. */
    uint64_t good[] = {b10, 1, b20 - b10, 2};
    n = build(buf, 3, 50, 10, 20, good, 2);
    lc_hist_t *h = make_target();
    assert_int_equal(lc_hist_decode_add(h, buf, n), 0);
    assert_int_equal(h->total, 5);
    free(h);

    assert_rejected(buf, build(buf, 4, 50, 10, 20, good, 2)); /* counts sum to 3, total 4 */
    assert_rejected(buf, build(buf, 2, 50, 10, 20, good, 2)); /* counts exceed total */
    uint64_t out_of_range[] = {b10, 1, LC_HIST_BUCKETS, 2};
    assert_rejected(buf, build(buf, 3, 50, 10, 20, out_of_range, 2));
    uint64_t far[] = {LC_HIST_BUCKETS + 5, 3};
    assert_rejected(buf, build(buf, 3, 30, 10, 10, far, 1));
    uint64_t repeated[] = {b10, 1, 0, 2};
    assert_rejected(buf, build(buf, 3, 30, 10, 10, repeated, 2));
    uint64_t zero_count[] = {b10, 3, b20 - b10, 0};
    assert_rejected(buf, build(buf, 3, 30, 10, 20, zero_count, 2));
    assert_rejected(buf, build(buf, 3, 50, 20, 10, good, 2)); /* min > max */
    assert_rejected(buf, build(buf, 3, 50, 11, 20, good, 2)); /* min not in first bucket */
    assert_rejected(buf, build(buf, 3, 1000, 10, 20, good, 2)); /* sum > total * max */
    assert_rejected(buf, build(buf, 0, 0, 10, 20, NULL, 0));    /* empty with a min and max */

    /* Trailing bytes after a valid encoding. */
    n = build(buf, 3, 50, 10, 20, good, 2);
    buf[n] = 0;
    assert_rejected(buf, n + 1);
    n += put(buf + n, 1);
    n += put(buf + n, 1);
    assert_rejected(buf, n);

    /* An 11-byte varint. */
    memset(buf, 0xff, 10);
    buf[10] = 0x01;
    assert_rejected(buf, 11);
}

/* Flipping any byte must either be rejected with h unchanged or decode into
 * something self-consistent; under ASan this also proves no out-of-bounds access. */
static void test_decode_bit_flips(void **state)
{
    uint64_t *v = make_values(gen_uniform, 41, 500);
    lc_hist_t *src = malloc(sizeof *src), *before = make_target(), *h = make_target();
    assert_non_null(src);
    lc_hist_init(src);
    record_all(src, v, 500);
    uint8_t *enc;
    size_t len;
    assert_int_equal(lc_hist_encode(src, &enc, &len), 0);

    size_t rejected = 0;
    for (size_t i = 0; i < len; i++) {
        for (unsigned bit = 0; bit < 8; bit++) {
            enc[i] ^= (uint8_t)(1u << bit);
            *h = *before;
            if (lc_hist_decode_add(h, enc, len) != 0) {
                assert_hist_equal(h, before);
                rejected++;
            } else {
                assert_int_equal(h->total, before->total + src->total);
            }
            enc[i] ^= (uint8_t)(1u << bit);
        }
    }
    assert_true(rejected > len * 4); /* most corruptions are caught */
    free(enc);
    free(h);
    free(before);
    free(src);
    free(v);
}

/* The decoder adds each pair as it reads it and takes the pairs back when the encoding
 * turns out bad: encodings found bad only after their last pair leave a target that holds
 * the same buckets exactly as it was. */
static void test_decode_late_failure_undone(void **state)
{
    (void)state;
    uint64_t *v = make_values(gen_log_uniform, 57, 3000);
    lc_hist_t *src = malloc(sizeof *src), *h = malloc(sizeof *h), *before = malloc(sizeof *before);
    assert_true(src && h && before);
    lc_hist_init(src);
    record_all(src, v, 3000);
    lc_hist_init(before);
    record_all(before, v, 1500); /* the target's buckets are the encoding's */
    uint8_t *enc, buf[64 * 1024];
    size_t len;
    assert_int_equal(lc_hist_encode(src, &enc, &len), 0);
    assert_true(len + 64 < sizeof buf);
    uint32_t last = lc_hist_bucket_of(src->max);
    assert_true(last + 2 < LC_HIST_BUCKETS);

    size_t n = len; /* a pair after the last: its count exceeds the total */
    memcpy(buf, enc, len);
    n += put(buf + n, 1);
    n += put(buf + n, 1);
    memcpy(h, before, sizeof *h);
    assert_int_equal(lc_hist_decode_add(h, buf, n), LC_EPROTO);
    assert_memory_equal(h, before, sizeof *h);

    /* The total one more than the counts (the sum still fits it): found at the end. */
    lc_hist_t *more = malloc(sizeof *more);
    assert_non_null(more);
    memcpy(more, src, sizeof *more);
    more->counts[last] += 1;
    more->total += 1;
    more->sum += src->max;
    uint8_t *menc;
    size_t mlen;
    assert_int_equal(lc_hist_encode(more, &menc, &mlen), 0);
    n = put(buf, src->total + 1);
    n += put(buf + n, src->sum + src->max);
    n += put(buf + n, src->min);
    n += put(buf + n, src->max);
    uint8_t scratch[10];
    size_t header = put(scratch, src->total) + put(scratch, src->sum) + put(scratch, src->min) +
                    put(scratch, src->max);
    memcpy(buf + n, enc + header, len - header); /* src's pairs under more's header */
    n += len - header;
    memcpy(h, before, sizeof *h);
    assert_int_equal(lc_hist_decode_add(h, buf, n), LC_EPROTO);
    assert_memory_equal(h, before, sizeof *h);
    /* The same header with its pairs is good, so the refusal was the total's. */
    assert_int_equal(lc_hist_decode_add(h, menc, mlen), 0);
    assert_int_equal(h->total, before->total + more->total);

    free(menc);
    free(more);
    free(enc);
    free(before);
    free(h);
    free(src);
    free(v);
}

/* The dense way: decode both into an empty histogram, encode. */
static void dense_merge(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                        uint8_t **out, size_t *out_len)
{
    lc_hist_t *h = malloc(sizeof *h);
    assert_non_null(h);
    lc_hist_init(h);
    if (alen > 0)
        assert_int_equal(lc_hist_decode_add(h, a, alen), 0);
    if (blen > 0)
        assert_int_equal(lc_hist_decode_add(h, b, blen), 0);
    assert_int_equal(lc_hist_encode(h, out, out_len), 0);
    free(h);
}

static void encode_values(gen_fn gen, uint64_t seed, size_t n, uint8_t **out, size_t *len)
{
    lc_hist_t *h = malloc(sizeof *h);
    assert_non_null(h);
    lc_hist_init(h);
    uint64_t *v = make_values(gen, seed, n);
    record_all(h, v, n);
    assert_int_equal(lc_hist_encode(h, out, len), 0);
    free(v);
    free(h);
}

/* Merging two encodings gives the very bytes the dense merge encodes: for
 * disjoint, overlapping and empty histograms, either order. */
static void test_merge_encoded(void **state)
{
    (void)state;
    static const gen_fn gens[] = {gen_uniform, gen_log_uniform, gen_bimodal};
    static const size_t sizes[] = {0, 1, 7, 300, 5000};
    for (size_t g = 0; g < 3; g++)
        for (size_t i = 0; i < 5; i++)
            for (size_t j = 0; j < 5; j++) {
                uint8_t *a, *b, *want, *got;
                size_t alen, blen, wlen, glen;
                encode_values(gens[g], 100 + i, sizes[i], &a, &alen);
                encode_values(gens[(g + j) % 3], 200 + j, sizes[j], &b, &blen);
                dense_merge(a, alen, b, blen, &want, &wlen);
                assert_int_equal(lc_hist_merge_encoded(a, alen, b, blen, &got, &glen), 0);
                assert_int_equal(glen, wlen);
                assert_memory_equal(got, want, wlen);
                free(got);
                assert_int_equal(lc_hist_merge_encoded(b, blen, a, alen, &got, &glen), 0);
                assert_memory_equal(got, want, wlen);
                free(got);
                /* An absent histogram (no bytes) is an empty one. */
                assert_int_equal(lc_hist_merge_encoded(NULL, 0, a, alen, &got, &glen), 0);
                free(want);
                dense_merge(NULL, 0, a, alen, &want, &wlen);
                assert_int_equal(glen, wlen);
                assert_memory_equal(got, want, wlen);
                free(got);
                free(want);
                free(a);
                free(b);
            }
}

/* A corrupt input on either side is refused, with nothing written. */
static void test_merge_encoded_refuses_corrupt(void **state)
{
    (void)state;
    uint8_t *a, *out = NULL;
    size_t alen, len = 0;
    encode_values(gen_uniform, 7, 400, &a, &alen);
    size_t rejected = 0;
    for (size_t i = 0; i < alen; i++) {
        uint8_t *bad = malloc(alen);
        memcpy(bad, a, alen);
        bad[i] ^= 0x41;
        lc_hist_t *h = malloc(sizeof *h);
        lc_hist_init(h);
        bool dense_ok = lc_hist_decode_add(h, bad, alen) == 0;
        int rv = lc_hist_merge_encoded(a, alen, bad, alen, &out, &len);
        /* Exactly the encodings the dense decoder refuses are refused. */
        assert_int_equal(rv == 0, dense_ok);
        if (rv == 0)
            free(out);
        else
            rejected++;
        free(h);
        free(bad);
    }
    assert_true(rejected > 0);
    assert_int_equal(lc_hist_merge_encoded(a, 3, a, alen, &out, &len), LC_EPROTO);
    free(a);
}

/* Adding an encoding whose total would overflow the histogram's is refused and changes
 * nothing: as lc_hist_merge_encoded refuses it (the FSM's sums rely on both agreeing). */
static void test_decode_add_refuses_overflow(void **state)
{
    (void)state;
    lc_hist_t *big = calloc(1, sizeof *big), *h = calloc(1, sizeof *h), *before = malloc(sizeof *before);
    lc_hist_init(big);
    big->total = UINT64_MAX - 1;
    big->counts[lc_hist_bucket_of(100)] = UINT64_MAX - 1;
    big->min = big->max = 100;
    big->sum = 100;
    uint8_t *enc;
    size_t len;
    assert_int_equal(lc_hist_encode(big, &enc, &len), 0);
    lc_hist_init(h);
    lc_hist_record(h, 100);
    lc_hist_record(h, 200);
    memcpy(before, h, sizeof *h);
    assert_int_equal(lc_hist_decode_add(h, enc, len), LC_EPROTO);
    assert_memory_equal(h, before, sizeof *h);
    uint8_t *small, *merged;
    size_t small_len, merged_len;
    assert_int_equal(lc_hist_encode(h, &small, &small_len), 0);
    assert_int_equal(lc_hist_merge_encoded(small, small_len, enc, len, &merged, &merged_len),
                     LC_EPROTO);
    free(enc);
    free(small);
    free(big);
    free(h);
    free(before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bucket_layout),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_clamp),
        cmocka_unit_test(test_percentiles_uniform),
        cmocka_unit_test(test_percentiles_log_uniform),
        cmocka_unit_test(test_percentiles_bimodal),
        cmocka_unit_test(test_percentiles_constant),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_encode_roundtrip),
        cmocka_unit_test(test_decode_truncated),
        cmocka_unit_test(test_decode_corrupted),
        cmocka_unit_test(test_decode_bit_flips),
        cmocka_unit_test(test_decode_late_failure_undone),
        cmocka_unit_test(test_merge_encoded),
        cmocka_unit_test(test_merge_encoded_refuses_corrupt),
        cmocka_unit_test(test_decode_add_refuses_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
