/* test_lc_hist_sum.c — common/lc_hist_sum.c gives what lc_hist's dense decode, merge and
 * percentiles give, lc_hist_percentiles_in and a tracked percentile what lc_hist_percentile
 * gives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lc_err.h"
#include "lc_hist.h"
#include "lc_hist_sum.h"
#include "test_rand.h"

static const double ps[] = {0, 1, 25, 50, 66, 75, 80, 90, 95, 98, 99, 99.9, 99.99, 100, 120};
#define N_PS (sizeof ps / sizeof ps[0])

/* A histogram of a few dozen latencies around a random median, encoded. */
static void random_encoding(uint64_t *seed, lc_hist_t *scratch, uint8_t **enc, size_t *len)
{
    lc_hist_init(scratch);
    uint64_t median = 50 + next_rand(seed) % 200000, n = next_rand(seed) % 60;
    for (uint64_t i = 0; i < n; i++)
        for (uint64_t k = next_rand(seed) % 50; k < 50; k++)
            lc_hist_record(scratch, median / 2 + next_rand(seed) % (median + 1));
    assert_int_equal(lc_hist_encode(scratch, enc, len), 0);
}

static void assert_same(const lc_hist_sum_t *s, const lc_hist_t *dense)
{
    assert_int_equal(s->h.total, dense->total);
    assert_int_equal(s->h.sum, dense->sum);
    assert_int_equal(s->h.min, dense->min);
    assert_int_equal(s->h.max, dense->max);
    assert_memory_equal(s->h.counts, dense->counts, sizeof dense->counts);
    uint64_t got[N_PS];
    lc_hist_sum_percentiles(s, ps, N_PS, got);
    for (size_t i = 0; i < N_PS; i++)
        assert_int_equal(got[i], lc_hist_percentile(dense, ps[i]));
}

/* Seconds of many encodings each, summed and cleared, and their running total. */
static void test_sums_match_dense(void **state)
{
    (void)state;
    lc_hist_sum_t *sec = lc_hist_sum_new(), *total = lc_hist_sum_new();
    lc_hist_t *dense = malloc(sizeof *dense), *dense_total = malloc(sizeof *dense_total);
    lc_hist_t *scratch = malloc(sizeof *scratch);
    assert_true(sec && total && dense && dense_total && scratch);
    lc_hist_init(dense_total);
    assert_same(total, dense_total); /* empty */
    uint64_t seed = 7;
    for (int second = 0; second < 200; second++) {
        lc_hist_init(dense);
        for (uint64_t e = next_rand(&seed) % 21; e > 0; e--) {
            uint8_t *enc;
            size_t len;
            random_encoding(&seed, scratch, &enc, &len);
            assert_int_equal(lc_hist_sum_add_encoded_both(sec, total, enc, len), 0);
            assert_int_equal(lc_hist_decode_add(dense, enc, len), 0);
            free(enc);
        }
        assert_same(sec, dense);
        lc_hist_merge(dense_total, dense);
        assert_same(total, dense_total);
        lc_hist_sum_clear(sec);
        lc_hist_init(dense);
        assert_same(sec, dense);
    }
    free(sec);
    free(total);
    free(dense);
    free(dense_total);
    free(scratch);
}

/* A tracked percentile of a running total is the dense one after every add, for low,
 * middle and high p, whether an encoding comes with a second's (add_encoded_both) or alone,
 * and after a clear. */
static void test_tracked_percentile(void **state)
{
    (void)state;
    static const double tracked[] = {0, 0.5, 50, 99.9, 100};
    lc_hist_t *dense = malloc(sizeof *dense), *scratch = malloc(sizeof *scratch);
    lc_hist_sum_t *sec = lc_hist_sum_new();
    assert_true(dense && scratch && sec);
    for (size_t k = 0; k < sizeof tracked / sizeof tracked[0]; k++) {
        lc_hist_sum_t *total = lc_hist_sum_new();
        assert_non_null(total);
        lc_hist_sum_track(total, tracked[k]);
        lc_hist_init(dense);
        assert_int_equal(lc_hist_sum_tracked(total), 0); /* empty */
        uint64_t seed = 11 + k;
        for (int second = 0; second < 300; second++) {
            uint8_t *enc;
            size_t len;
            random_encoding(&seed, scratch, &enc, &len);
            assert_int_equal(lc_hist_decode_add(dense, enc, len), 0);
            if (second % 7 == 3) { /* straight into the total: the cursor is kept */
                assert_int_equal(lc_hist_sum_add_encoded(total, enc, len), 0);
            } else {
                assert_int_equal(lc_hist_sum_add_encoded_both(sec, total, enc, len), 0);
                lc_hist_sum_clear(sec);
            }
            free(enc);
            assert_int_equal(lc_hist_sum_tracked(total), lc_hist_percentile(dense, tracked[k]));
            if (second == 150) { /* cleared: starts again from nothing */
                lc_hist_sum_clear(total);
                lc_hist_init(dense);
                assert_int_equal(lc_hist_sum_tracked(total), 0);
            }
        }
        free(total);
    }
    free(sec);
    free(dense);
    free(scratch);
}

/* A bad encoding is refused as lc_hist_decode_add refuses it, and changes nothing. */
static void test_bad_encoding_changes_nothing(void **state)
{
    (void)state;
    lc_hist_sum_t *s = lc_hist_sum_new();
    lc_hist_t *dense = malloc(sizeof *dense), *scratch = malloc(sizeof *scratch);
    assert_true(s && dense && scratch);
    lc_hist_init(dense);
    uint64_t seed = 11;
    uint8_t *enc;
    size_t len;
    random_encoding(&seed, scratch, &enc, &len);
    assert_int_equal(lc_hist_sum_add_encoded(s, enc, len), 0);
    assert_int_equal(lc_hist_decode_add(dense, enc, len), 0);
    for (size_t cut = 0; cut < len; cut++) {
        int want = lc_hist_decode_add(scratch, enc, cut) == 0 ? 0 : LC_EPROTO;
        lc_hist_init(scratch);
        assert_int_equal(want, LC_EPROTO); /* every strict prefix is truncated */
        assert_int_equal(lc_hist_sum_add_encoded(s, enc, cut), want);
        assert_same(s, dense);
    }
    for (size_t i = 0; i < len; i++) { /* flipped bits: refused or accepted by both alike */
        enc[i] ^= 0x41;
        lc_hist_init(scratch);
        int want = lc_hist_decode_add(dense, enc, len);
        assert_int_equal(lc_hist_sum_add_encoded(s, enc, len), want);
        assert_same(s, dense);
        enc[i] ^= 0x41;
    }
    free(enc);
    free(s);
    free(dense);
    free(scratch);
}

/* One scan of a range gives every percentile of a scan from bucket 0. */
static void test_percentiles_in(void **state)
{
    (void)state;
    lc_hist_t *h = malloc(sizeof *h);
    assert_non_null(h);
    lc_hist_init(h);
    uint64_t got[N_PS];
    lc_hist_percentiles_in(h, 0, LC_HIST_BUCKETS - 1, ps, N_PS, got);
    for (size_t i = 0; i < N_PS; i++)
        assert_int_equal(got[i], 0); /* empty */
    uint64_t seed = 3;
    for (int i = 0; i < 5000; i++)
        lc_hist_record(h, 1000 + next_rand(&seed) % 90000);
    uint32_t lo = lc_hist_bucket_of(h->min), hi = lc_hist_bucket_of(h->max);
    lc_hist_percentiles_in(h, lo, hi, ps, N_PS, got);
    for (size_t i = 0; i < N_PS; i++)
        assert_int_equal(got[i], lc_hist_percentile(h, ps[i]));
    free(h);
}

/* add_encoded_both gives the second and the running total that add_encoded and a dense
 * merge give, its tracked median included; a bad encoding changes neither. */
static void test_add_both(void **state)
{
    (void)state;
    lc_hist_sum_t *sec = lc_hist_sum_new(), *total = lc_hist_sum_new();
    lc_hist_sum_t *ref_sec = lc_hist_sum_new();
    lc_hist_t *scratch = malloc(sizeof *scratch), *dense = malloc(sizeof *dense);
    lc_hist_t *ref_total = malloc(sizeof *ref_total);
    assert_true(sec && total && ref_sec && ref_total && scratch && dense);
    lc_hist_init(ref_total);
    lc_hist_sum_track(total, 50);
    uint64_t seed = 17;
    for (int second = 0; second < 150; second++) {
        for (uint64_t e = next_rand(&seed) % 6; e > 0; e--) {
            uint8_t *enc;
            size_t len;
            random_encoding(&seed, scratch, &enc, &len);
            assert_int_equal(lc_hist_sum_add_encoded_both(sec, total, enc, len), 0);
            assert_int_equal(lc_hist_sum_add_encoded(ref_sec, enc, len), 0);
            if (len > 6) { /* a corrupted copy: refused, and neither changes */
                enc[len / 2] ^= 0x41;
                lc_hist_t before = total->h;
                if (lc_hist_sum_add_encoded_both(sec, total, enc, len) != 0)
                    assert_memory_equal(&before, &total->h, sizeof before);
                else
                    assert_int_equal(lc_hist_sum_add_encoded(ref_sec, enc, len), 0);
            }
            free(enc);
        }
        lc_hist_merge(ref_total, &ref_sec->h);
        lc_hist_init(dense);
        lc_hist_merge(dense, &ref_sec->h);
        assert_same(sec, dense);
        lc_hist_init(dense);
        lc_hist_merge(dense, ref_total);
        assert_same(total, dense);
        assert_int_equal(lc_hist_sum_tracked(total), lc_hist_percentile(dense, 50));
        lc_hist_sum_clear(sec);
        lc_hist_sum_clear(ref_sec);
    }
    free(sec);
    free(total);
    free(ref_sec);
    free(ref_total);
    free(scratch);
    free(dense);
}

/* The percentile by definition: the first bucket whose running count reaches the rank. */
static uint64_t naive_percentile(const lc_hist_t *h, double p)
{
    if (h->total == 0)
        return 0;
    if (!(p > 0.0))
        return h->min;
    if (p >= 100.0)
        return h->max;
    uint64_t rank = lc_hist_rank_of(p, h->total), seen = 0;
    for (uint32_t b = 0; b < LC_HIST_BUCKETS; b++) {
        seen += h->counts[b];
        if (seen >= rank)
            return lc_hist_bucket_value(h, b);
    }
    return lc_hist_bucket_value(h, LC_HIST_BUCKETS - 1);
}

/* The scan that passes whole blocks of buckets finds what the naive one does, for sparse
 * and dense histograms whose percentiles fall at block edges, inside blocks and in the
 * last, partial block. */
static void test_percentiles_match_naive(void **state)
{
    (void)state;
    lc_hist_t *h = malloc(sizeof *h);
    assert_non_null(h);
    uint64_t seed = 5;
    for (int round = 0; round < 400; round++) {
        lc_hist_init(h);
        uint64_t spread = 1 + next_rand(&seed) % 100000, base = 1 + next_rand(&seed) % 50000;
        for (uint64_t n = 1 + next_rand(&seed) % 300; n > 0; n--)
            lc_hist_record(h, base + next_rand(&seed) % spread);
        uint64_t got[N_PS];
        lc_hist_percentiles_in(h, lc_hist_bucket_of(h->min), lc_hist_bucket_of(h->max), ps, N_PS,
                               got);
        for (size_t i = 0; i < N_PS; i++)
            assert_int_equal(got[i], naive_percentile(h, ps[i]));
    }
    free(h);
}

/* add_encoded_percentiles finds an encoding's own percentiles in the pass that adds it to
 * the running total: what the naive scan of its decoding finds (empty ones, ones reaching
 * the last bucket, corrupted ones the decoder accepts alike); the total and its tracked
 * median are add_encoded's; a refused encoding changes nothing. */
static void test_add_percentiles(void **state)
{
    (void)state;
    lc_hist_sum_t *total = lc_hist_sum_new();
    lc_hist_t *scratch = malloc(sizeof *scratch), *decoded = malloc(sizeof *decoded);
    lc_hist_t *ref_total = malloc(sizeof *ref_total);
    assert_true(total && scratch && decoded && ref_total);
    lc_hist_init(ref_total);
    lc_hist_sum_track(total, 50);
    uint64_t seed = 23;
    for (int round = 0; round < 600; round++) {
        uint8_t *enc;
        size_t len;
        random_encoding(&seed, scratch, &enc, &len);
        if (round % 7 == 3) { /* past LC_HIST_MAX_US: the last bucket */
            lc_hist_record(scratch, 2ull * LC_HIST_MAX_US);
            free(enc);
            assert_int_equal(lc_hist_encode(scratch, &enc, &len), 0);
        }
        if (round % 5 == 4 && len > 6)
            enc[next_rand(&seed) % len] ^= (uint8_t)(1u << (next_rand(&seed) % 8));
        lc_hist_init(decoded);
        int want = lc_hist_decode_add(decoded, enc, len);
        lc_hist_t before = total->h;
        uint64_t got[N_PS], count = 12345;
        int rv = lc_hist_sum_add_encoded_percentiles(total, enc, len, ps, N_PS, got, &count);
        assert_int_equal(rv, want);
        if (rv != 0) {
            assert_memory_equal(&before, &total->h, sizeof before);
        } else {
            assert_int_equal(count, decoded->total);
            for (size_t i = 0; i < N_PS; i++)
                assert_int_equal(got[i], naive_percentile(decoded, ps[i]));
            lc_hist_merge(ref_total, decoded);
        }
        assert_memory_equal(ref_total->counts, total->h.counts, sizeof ref_total->counts);
        assert_int_equal(ref_total->total, total->h.total);
        assert_int_equal(lc_hist_sum_tracked(total), lc_hist_percentile(ref_total, 50));
        free(enc);
    }
    uint8_t *empty;
    size_t len;
    lc_hist_init(scratch);
    assert_int_equal(lc_hist_encode(scratch, &empty, &len), 0);
    uint64_t got[N_PS], count = 1;
    assert_int_equal(lc_hist_sum_add_encoded_percentiles(NULL, empty, len, ps, N_PS, got, &count),
                     0);
    assert_int_equal(count, 0); /* an empty histogram: every percentile 0 */
    for (size_t i = 0; i < N_PS; i++)
        assert_int_equal(got[i], 0);
    free(empty);
    free(total);
    free(scratch);
    free(decoded);
    free(ref_total);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sums_match_dense),
        cmocka_unit_test(test_bad_encoding_changes_nothing),
        cmocka_unit_test(test_percentiles_in),
        cmocka_unit_test(test_tracked_percentile),
        cmocka_unit_test(test_percentiles_match_naive),
        cmocka_unit_test(test_add_both),
        cmocka_unit_test(test_add_percentiles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
