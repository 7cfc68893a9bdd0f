/* lc_hist.h — log-linear latency histograms (HdrHistogram-style), mergeable
 * by adding counts and sent in a sparse encoding. */
#ifndef LC_HIST_H
#define LC_HIST_H

#include <stddef.h>
#include <stdint.h>

/* Values are microseconds, clamped to [LC_HIST_MIN_US, LC_HIST_MAX_US]. Below
 * 2^LC_HIST_SUB_BITS every value has its own bucket; above, each power of two
 * is split into 2^(LC_HIST_SUB_BITS-1) buckets, so a bucket's width is at most
 * 1/128 of its values: a reported percentile is within 1 % of the exact one. */
#define LC_HIST_MIN_US 1u
#define LC_HIST_MAX_US 100000000u /* 100 s */
#define LC_HIST_SUB_BITS 8
#define LC_HIST_BUCKETS ((27 - LC_HIST_SUB_BITS + 2) * (1u << (LC_HIST_SUB_BITS - 1)))

typedef struct lc_hist_s {
    uint64_t total; /* number of recorded values */
    uint64_t sum;   /* sum of recorded (clamped) values, for the mean */
    uint64_t min;   /* exact smallest value, UINT64_MAX when empty */
    uint64_t max;   /* exact largest value, 0 when empty */
    uint64_t counts[LC_HIST_BUCKETS];
} lc_hist_t;

void lc_hist_init(lc_hist_t *h);
void lc_hist_record(lc_hist_t *h, uint64_t value_us);
/* Adds every count of src to dst: merge(a, b) equals the histogram of both. */
void lc_hist_merge(lc_hist_t *dst, const lc_hist_t *src);
/* Value at percentile p (0..100); 0 when empty. p=100 gives the exact max. */
uint64_t lc_hist_percentile(const lc_hist_t *h, double p);
/* out[i] = lc_hist_percentile(h, ps[i]) for ascending ps, in one scan of
 * buckets lo..hi; every bucket outside them must be zero. */
void lc_hist_percentiles_in(const lc_hist_t *h, uint32_t lo, uint32_t hi, const double *ps,
                            size_t n, uint64_t *out);
/* The two halves of a percentile's scan, for callers that keep their own
 * cursor (lc_hist_sum's running percentile): the 1-based rank of percentile
 * p among total values, and what the scan answers when it stops at bucket b
 * (its midpoint, within h's exact min and max). */
uint64_t lc_hist_rank_of(double p, uint64_t total);
uint64_t lc_hist_bucket_value(const lc_hist_t *h, uint32_t b);
/* Mean in microseconds; 0 when empty. */
double lc_hist_mean(const lc_hist_t *h);

/* Bucket index of a value and the representative value of a bucket (its
 * midpoint), exposed for tests and for exporters (Prometheus buckets). */
uint32_t lc_hist_bucket_of(uint64_t value_us);
uint64_t lc_hist_bucket_low(uint32_t bucket);
uint64_t lc_hist_bucket_high(uint32_t bucket); /* inclusive */

/* Sparse encoding: varints of total, sum, min, max, then (bucket-index delta,
 * count) pairs for non-zero buckets. *out is malloc'd; caller frees.
 * Returns 0 or LC_ENOMEM. */
int lc_hist_encode(const lc_hist_t *h, uint8_t **out, size_t *out_len);
/* Decodes an encoding and adds it to h, in one pass over it. Returns 0, or
 * LC_EPROTO for a truncated or inconsistent encoding, or one whose counts
 * would overflow h's (h unchanged then). */
int lc_hist_decode_add(lc_hist_t *h, const uint8_t *buf, size_t len);
/* lc_hist_decode_add into a and, unless NULL, b too, reading the encoding once (a second's
 * histogram and the run's so far); *at_or_below gains the encoding's counts in buckets
 * 0..mark (for the cursor of a running total: lc_hist_sum's tracked percentile). Both
 * unchanged when it returns LC_EPROTO. */
int lc_hist_decode_add_both(lc_hist_t *a, lc_hist_t *b, const uint8_t *buf, size_t len,
                            uint32_t mark, uint64_t *at_or_below);
/* What lc_hist_decode_pass finds besides its adds. */
typedef struct lc_hist_pass_s {
    uint32_t mark;        /* in: the bucket at_or_below counts up to */
    uint64_t at_or_below; /* out (added to): the encoding's counts in buckets 0..mark */
    const double *ps;     /* in: n ascending percentiles of the encoding alone to find */
    size_t n;
    uint64_t *out;        /* out: their values, as lc_hist_percentiles_in of its decoding */
    uint64_t total;       /* out: the encoding's count */
} lc_hist_pass_t;
/* lc_hist_decode_add_both where a may be NULL too, and the encoding's own percentiles found
 * in the same pass (no dense histogram of it needed). a and b are unchanged, and p->out is
 * undefined, when it returns LC_EPROTO. */
int lc_hist_decode_pass(lc_hist_t *a, lc_hist_t *b, const uint8_t *buf, size_t len,
                        lc_hist_pass_t *p);
/* The encoding of the merge of two encodings (len 0: an empty histogram),
 * exactly what encoding their dense merge gives, made in time linear in
 * their size (no dense histogram). *out is malloc'd. Returns 0, LC_ENOMEM,
 * or LC_EPROTO when either is not a valid encoding (or the counts would
 * overflow). */
int lc_hist_merge_encoded(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                          uint8_t **out, size_t *out_len);

#endif
