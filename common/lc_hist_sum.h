/* lc_hist_sum.h — a histogram summed from many encodings at the cost of their size: it knows
 * which buckets it touched, so clearing and percentiles skip the rest. */
#ifndef LC_HIST_SUM_H
#define LC_HIST_SUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lc_hist.h"

typedef struct lc_hist_sum_s {
    /* read-only */
    lc_hist_t h; /* the sum: what lc_hist_decode_add of the same encodings gives */
    /* private */
    uint32_t lo, hi; /* every bucket outside [lo, hi] is zero; lo > hi: all are */
    /* The running percentile (lc_hist_sum_track): when run_valid, the counts of buckets
     * 0..run_b sum to run_seen; adds keep that true, so a growing sum's percentile
     * moves the cursor a few buckets instead of scanning them all. */
    double run_p;
    bool run_on, run_valid;
    uint32_t run_b;
    uint64_t run_seen;
} lc_hist_sum_t;

/* About 22 KiB: allocate it (NULL without memory), free with free(). */
lc_hist_sum_t *lc_hist_sum_new(void);
/* Back to the empty histogram, clearing only the buckets touched. */
void lc_hist_sum_clear(lc_hist_sum_t *s);
/* Adds an encoding, as lc_hist_decode_add does, in one pass over it.
 * Returns 0, or LC_EPROTO for a bad encoding (s unchanged then). */
int lc_hist_sum_add_encoded(lc_hist_sum_t *s, const uint8_t *buf, size_t len);
/* lc_hist_sum_add_encoded into s and into also (a running total: its tracked percentile's
 * cursor is kept), reading the encoding once. Neither changes on LC_EPROTO. */
int lc_hist_sum_add_encoded_both(lc_hist_sum_t *s, lc_hist_sum_t *also, const uint8_t *buf,
                                 size_t len);
/* The percentiles ps (ascending) of one encoding alone into out, and its count into *count,
 * while it is added to also (a running total, as in lc_hist_sum_add_encoded_both; NULL:
 * none), in one pass and without a dense histogram of it: a history's second that has one
 * row. Returns 0, or LC_EPROTO (also unchanged, out undefined). */
int lc_hist_sum_add_encoded_percentiles(lc_hist_sum_t *also, const uint8_t *buf, size_t len,
                                        const double *ps, size_t n, uint64_t *out,
                                        uint64_t *count);
/* Keeps percentile p (0..100) of s up to date as encodings are added to it, for a running
 * total asked for its percentile after every second (a history's "Total Median"). */
void lc_hist_sum_track(lc_hist_sum_t *s, double p);
/* lc_hist_percentile(&s->h, p) of the tracked p: at the cost of how far it moved since
 * the last call (adds keep the cursor; a clear drops it). */
uint64_t lc_hist_sum_tracked(lc_hist_sum_t *s);
/* out[i] = lc_hist_percentile(&s->h, ps[i]) for ascending ps, in one pass over the buckets. */
void lc_hist_sum_percentiles(const lc_hist_sum_t *s, const double *ps, size_t n, uint64_t *out);

#endif
