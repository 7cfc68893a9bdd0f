/* lc_hist_sum.c — a histogram summed from encodings, tracking the buckets it touched. */
#include "lc_hist_sum.h"

#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lc_err.h"

lc_hist_sum_t *lc_hist_sum_new(void)
{
    lc_hist_sum_t *s = malloc(sizeof *s);
    if (s == NULL)
        return NULL;
    lc_hist_init(&s->h);
    s->lo = LC_HIST_BUCKETS;
    s->hi = 0;
    s->run_on = false;
    s->run_valid = false;
    return s;
}

void lc_hist_sum_clear(lc_hist_sum_t *s)
{
    if (s->lo <= s->hi)
        memset(&s->h.counts[s->lo], 0, (size_t)(s->hi - s->lo + 1) * sizeof s->h.counts[0]);
    s->h.total = 0;
    s->h.sum = 0;
    s->h.min = UINT64_MAX;
    s->h.max = 0;
    s->lo = LC_HIST_BUCKETS;
    s->hi = 0;
    s->run_valid = false;
}

/* Widens the touched range to [lo, hi]. */
static void touch(lc_hist_sum_t *s, uint32_t lo, uint32_t hi)
{
    if (lo < s->lo)
        s->lo = lo;
    if (hi > s->hi)
        s->hi = hi;
}

int lc_hist_sum_add_encoded(lc_hist_sum_t *s, const uint8_t *buf, size_t len)
{
    return lc_hist_sum_add_encoded_both(s, NULL, buf, len);
}

/* Widens s's touched range to its min and max buckets after an add: a valid encoding's
 * buckets lie between those of its min and max (the decoder checks it), so the buckets
 * touched by all the encodings added lie between those of the sum's min and max. */
static void touch_all(lc_hist_sum_t *s)
{
    if (s->h.total > 0)
        touch(s, lc_hist_bucket_of(s->h.min), lc_hist_bucket_of(s->h.max));
}

/* One pass over an encoding into s and also (either may be NULL; not both the same), keeping
 * the tracked cursor of also (else of s) exact. */
static int add_pass(lc_hist_sum_t *s, lc_hist_sum_t *also, const uint8_t *buf, size_t len,
                    lc_hist_pass_t *p)
{
    assert(s == NULL || s != also);
    lc_hist_sum_t *kept = also != NULL ? also : s; /* the one whose cursor is kept */
    p->mark = kept != NULL && kept->run_valid ? kept->run_b : 0;
    p->at_or_below = 0;
    if (lc_hist_decode_pass(s ? &s->h : NULL, also ? &also->h : NULL, buf, len, p) != 0)
        return LC_EPROTO;
    if (kept != NULL && kept->run_valid)
        kept->run_seen += p->at_or_below;
    if (s != NULL && also != NULL)
        s->run_valid = false;
    if (s != NULL)
        touch_all(s);
    if (also != NULL)
        touch_all(also);
    return 0;
}

int lc_hist_sum_add_encoded_both(lc_hist_sum_t *s, lc_hist_sum_t *also, const uint8_t *buf,
                                 size_t len)
{
    assert(s != NULL);
    lc_hist_pass_t p = {0};
    return add_pass(s, also, buf, len, &p);
}

int lc_hist_sum_add_encoded_percentiles(lc_hist_sum_t *also, const uint8_t *buf, size_t len,
                                        const double *ps, size_t n, uint64_t *out,
                                        uint64_t *count)
{
    lc_hist_pass_t p = {.ps = ps, .n = n, .out = out};
    if (add_pass(NULL, also, buf, len, &p) != 0)
        return LC_EPROTO;
    *count = p.total;
    return 0;
}

void lc_hist_sum_track(lc_hist_sum_t *s, double p)
{
    s->run_on = true;
    s->run_p = p;
    s->run_valid = false;
}

uint64_t lc_hist_sum_tracked(lc_hist_sum_t *s)
{
    assert(s->run_on);
    const lc_hist_t *h = &s->h;
    if (h->total == 0 || !(s->run_p > 0.0) || s->run_p >= 100.0) {
        uint64_t v;
        lc_hist_percentiles_in(h, s->lo, s->hi, &s->run_p, 1, &v);
        return v;
    }
    if (!s->run_valid) { /* total > 0: lo <= hi, and every bucket below lo is zero */
        s->run_b = s->lo;
        s->run_seen = h->counts[s->lo];
        s->run_valid = true;
    }
    /* The answer is the first bucket whose running count reaches the rank. */
    uint64_t rank = lc_hist_rank_of(s->run_p, h->total);
    while (s->run_b > 0 && s->run_seen - h->counts[s->run_b] >= rank)
        s->run_seen -= h->counts[s->run_b--];
    while (s->run_seen < rank && s->run_b < LC_HIST_BUCKETS - 1)
        s->run_seen += h->counts[++s->run_b];
    return lc_hist_bucket_value(h, s->run_b);
}

void lc_hist_sum_percentiles(const lc_hist_sum_t *s, const double *ps, size_t n, uint64_t *out)
{
    lc_hist_percentiles_in(&s->h, s->lo, s->hi, ps, n, out);
}
