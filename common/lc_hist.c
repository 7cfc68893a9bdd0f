/* lc_hist.c — log-linear histograms: record, merge, percentiles, sparse encoding. */
#include "lc_hist.h"

#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "lc_err.h"

#define SUB_COUNT (1u << (LC_HIST_SUB_BITS - 1)) /* buckets per power of two */
#define VARINT_MAX 10                             /* bytes of a 64-bit varint */

/* Bucket layout: with k = floor(log2(v | 255)) and shift = k - 7, the index is
 * shift * 128 + (v >> shift). Below 256 the shift is 0 and the index is v; at
 * and above, v >> shift lies in [128, 256), so each power of two gets 128
 * buckets following the previous one. */
static inline uint32_t index_of(uint64_t v)
{
    unsigned k = 63u - (unsigned)__builtin_clzll(v | ((1u << LC_HIST_SUB_BITS) - 1));
    unsigned shift = k - (LC_HIST_SUB_BITS - 1);
    return (uint32_t)(shift * SUB_COUNT + (v >> shift));
}

static inline uint64_t clamp_value(uint64_t v)
{
    if (v < LC_HIST_MIN_US)
        return LC_HIST_MIN_US;
    if (v > LC_HIST_MAX_US)
        return LC_HIST_MAX_US;
    return v;
}

void lc_hist_init(lc_hist_t *h)
{
    *h = (lc_hist_t){0};
    h->min = UINT64_MAX;
}

void lc_hist_record(lc_hist_t *h, uint64_t value_us)
{
    uint64_t v = clamp_value(value_us);

    h->counts[index_of(v)]++;
    h->total++;
    h->sum += v;
    if (v < h->min)
        h->min = v;
    if (v > h->max)
        h->max = v;
}

void lc_hist_merge(lc_hist_t *dst, const lc_hist_t *src)
{
    for (uint32_t i = 0; i < LC_HIST_BUCKETS; i++)
        dst->counts[i] += src->counts[i];
    dst->total += src->total;
    dst->sum += src->sum;
    if (src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
}

uint32_t lc_hist_bucket_of(uint64_t value_us)
{
    return index_of(clamp_value(value_us));
}

/* Out-of-range bucket numbers are treated as the last bucket. */
uint64_t lc_hist_bucket_low(uint32_t bucket)
{
    if (bucket >= LC_HIST_BUCKETS)
        bucket = LC_HIST_BUCKETS - 1;
    if (bucket < 2 * SUB_COUNT)
        return bucket;
    unsigned shift = bucket / SUB_COUNT - 1;
    return (uint64_t)(bucket % SUB_COUNT + SUB_COUNT) << shift;
}

uint64_t lc_hist_bucket_high(uint32_t bucket)
{
    if (bucket >= LC_HIST_BUCKETS)
        bucket = LC_HIST_BUCKETS - 1;
    if (bucket < 2 * SUB_COUNT)
        return bucket;
    unsigned shift = bucket / SUB_COUNT - 1;
    return lc_hist_bucket_low(bucket) + ((uint64_t)1 << shift) - 1;
}

/* The smallest rank whose share of values reaches p. The epsilon keeps 99.9 % of
 * 100000 from rounding up to 99901 through floating-point noise. */
uint64_t lc_hist_rank_of(double p, uint64_t total)
{
    double r = ceil(p / 100.0 * (double)total - 1e-7);
    if (r < 1.0)
        return 1;
    if (r >= (double)total)
        return total;
    return (uint64_t)r;
}

/* Bucket b's midpoint, within the exact min and max of its histogram. */
static uint64_t value_within(uint32_t b, uint64_t min, uint64_t max)
{
    uint64_t low = lc_hist_bucket_low(b), high = lc_hist_bucket_high(b);
    uint64_t mid = low + (high - low) / 2;
    if (mid < min)
        return min;
    if (mid > max)
        return max;
    return mid;
}

uint64_t lc_hist_bucket_value(const lc_hist_t *h, uint32_t b)
{
    return value_within(b, h->min, h->max);
}

/* Buckets summed at once by a percentile scan before it looks at them one by one. */
#define SCAN_BLOCK 16u

void lc_hist_percentiles_in(const lc_hist_t *h, uint32_t lo, uint32_t hi, const double *ps,
                            size_t n, uint64_t *out)
{
    size_t k = 0, end = n;
    for (size_t i = 1; i < n; i++)
        assert(ps[i] >= ps[i - 1]); /* ascending, no NaN */
    if (h->total == 0) {
        for (; k < n; k++)
            out[k] = 0;
        return;
    }
    for (; k < end && !(ps[k] > 0.0); k++) /* also catches NaN */
        out[k] = h->min;
    for (; end > k && ps[end - 1] >= 100.0; end--)
        out[end - 1] = h->max;
    /* Ranks ascend with p, so each percentile's first bucket reaching its
     * rank is at or after the previous one's: one scan finds them all. Below
     * lo the counts are zero and cannot reach a rank (>= 1), above hi they
     * add nothing: a scan of [lo, hi] stops where a whole one would. */
    uint64_t seen = 0;
    uint64_t rank = k < end ? lc_hist_rank_of(ps[k], h->total) : 0;
    uint32_t last = hi < LC_HIST_BUCKETS - 1 ? hi : LC_HIST_BUCKETS - 2;
    for (uint32_t b = lo; b <= last && k < end;) {
        /* A block of buckets that cannot reach the rank is passed whole: a sum the
         * compiler keeps branch-free, instead of a compare per bucket. */
        uint32_t stop = last - b >= SCAN_BLOCK ? b + SCAN_BLOCK : last + 1;
        if (stop - b == SCAN_BLOCK) {
            const uint64_t *c = &h->counts[b];
            uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0; /* four chains: no wait on each add */
            for (uint32_t i = 0; i < SCAN_BLOCK; i += 4) {
                s0 += c[i];
                s1 += c[i + 1];
                s2 += c[i + 2];
                s3 += c[i + 3];
            }
            uint64_t block = s0 + s1 + s2 + s3;
            if (seen + block < rank) {
                seen += block;
                b = stop;
                continue;
            }
        }
        for (; b < stop && k < end; b++) {
            seen += h->counts[b];
            for (; k < end && seen >= rank; k++) {
                out[k] = lc_hist_bucket_value(h, b);
                if (k + 1 < end)
                    rank = lc_hist_rank_of(ps[k + 1], h->total);
            }
        }
    }
    for (; k < end; k++) /* never reached: the scan runs off the end */
        out[k] = lc_hist_bucket_value(h, LC_HIST_BUCKETS - 1);
}

uint64_t lc_hist_percentile(const lc_hist_t *h, double p)
{
    uint64_t v;
    lc_hist_percentiles_in(h, 0, LC_HIST_BUCKETS - 1, &p, 1, &v);
    return v;
}

double lc_hist_mean(const lc_hist_t *h)
{
    if (h->total == 0)
        return 0.0;
    return (double)h->sum / (double)h->total;
}

static size_t put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

int lc_hist_encode(const lc_hist_t *h, uint8_t **out, size_t *out_len)
{
    size_t nonzero = 0;
    for (uint32_t i = 0; i < LC_HIST_BUCKETS; i++)
        nonzero += h->counts[i] != 0;

    uint8_t *buf = malloc((4 + 2 * nonzero) * VARINT_MAX);
    if (buf == NULL)
        return LC_ENOMEM;

    size_t n = 0;
    n += put_varint(buf + n, h->total);
    n += put_varint(buf + n, h->sum);
    n += put_varint(buf + n, h->min);
    n += put_varint(buf + n, h->max);
    uint32_t prev = 0;
    for (uint32_t i = 0; i < LC_HIST_BUCKETS; i++) {
        if (h->counts[i] == 0)
            continue;
        n += put_varint(buf + n, i - prev);
        n += put_varint(buf + n, h->counts[i]);
        prev = i;
    }
    *out = buf;
    *out_len = n;
    return 0;
}

/* Reads one varint at *pos; returns -1 when truncated or longer than 64 bits. */
static inline int get_varint(const uint8_t *buf, size_t len, size_t *pos, uint64_t *out)
{
    if (*pos < len && buf[*pos] < 0x80) { /* most deltas and many counts: one byte */
        *out = buf[(*pos)++];
        return 0;
    }
    uint64_t v = 0;
    for (unsigned i = 0; i < VARINT_MAX; i++) {
        if (*pos >= len)
            return -1;
        uint8_t b = buf[(*pos)++];
        if (i == VARINT_MAX - 1 && b > 1)
            return -1;
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

typedef struct {
    uint64_t total, sum, min, max;
} hist_header_t;

/* Checks the header against itself: empty means exactly the init state, else
 * min <= max within the clamp range and sum between total*min and total*max. */
static int header_ok(const hist_header_t *hd)
{
    if (hd->total == 0)
        return hd->sum == 0 && hd->min == UINT64_MAX && hd->max == 0;
    if (hd->min < LC_HIST_MIN_US || hd->max > LC_HIST_MAX_US || hd->min > hd->max)
        return 0;
    uint64_t lo, hi;
    if (!__builtin_mul_overflow(hd->total, hd->min, &lo) && hd->sum < lo)
        return 0;
    if (!__builtin_mul_overflow(hd->total, hd->max, &hi) && hd->sum > hi)
        return 0;
    return 1;
}

/* Reads the four header varints at *pos and checks them. */
static int read_header(const uint8_t *buf, size_t len, size_t *pos, hist_header_t *hd)
{
    if (get_varint(buf, len, pos, &hd->total) || get_varint(buf, len, pos, &hd->sum) ||
        get_varint(buf, len, pos, &hd->min) || get_varint(buf, len, pos, &hd->max))
        return -1;
    return header_ok(hd) ? 0 : -1;
}

/* A walk over the (delta, count) pairs after a header that checks each pair as it reads
 * it, so that decoding and merging read an encoding once. */
typedef struct pair_cursor_s {
    const uint8_t *buf;
    size_t len, pos;
    uint64_t total; /* the header's: the counts may not add up to more */
    uint64_t idx;   /* the bucket of the pair read last */
    uint64_t seen;  /* the counts read so far */
    uint64_t first; /* the first pair's bucket; LC_HIST_BUCKETS before it */
} pair_cursor_t;

static pair_cursor_t cursor_at(const uint8_t *buf, size_t len, size_t pos, uint64_t total)
{
    return (pair_cursor_t){.buf = buf, .len = len, .pos = pos, .total = total,
                           .first = LC_HIST_BUCKETS};
}

/* Checks the pair (delta, count) after bucket *idx, with *seen counted so far and *first the
 * first pair's bucket (LC_HIST_BUCKETS before it), and moves them past it. */
static inline bool pair_ok(uint64_t delta, uint64_t count, uint64_t *idx, uint64_t *seen,
                           uint64_t *first, uint64_t total)
{
    if ((delta == 0 && *first != LC_HIST_BUCKETS) || delta >= LC_HIST_BUCKETS - *idx)
        return false; /* repeated or out-of-range bucket */
    *idx += delta;
    if (count == 0 || __builtin_add_overflow(*seen, count, seen) || *seen > total)
        return false;
    if (*first == LC_HIST_BUCKETS)
        *first = *idx;
    return true;
}

/* Reads the next pair: its bucket into c->idx, its count into *count. Returns 1 for a
 * pair, 0 at the end, -1 for a pair that cannot be (c is then of no further use). */
static inline int cursor_next(pair_cursor_t *c, uint64_t *count)
{
    uint64_t delta;
    if (c->pos >= c->len)
        return 0;
    if (get_varint(c->buf, c->len, &c->pos, &delta) || get_varint(c->buf, c->len, &c->pos, count))
        return -1;
    return pair_ok(delta, *count, &c->idx, &c->seen, &c->first, c->total) ? 1 : -1;
}

/* After the last pair: whether the pairs (their counts summing to seen, from bucket first to
 * bucket last) agree with the header: its total, and its min's and max's buckets. */
static bool pairs_agree(uint64_t seen, uint64_t first, uint64_t last, const hist_header_t *hd)
{
    if (seen != hd->total)
        return false;
    return seen == 0 || (first == index_of(hd->min) && last == index_of(hd->max));
}

static bool cursor_end_ok(const pair_cursor_t *c, const hist_header_t *hd)
{
    return pairs_agree(c->seen, c->first, c->idx, hd);
}

/* Takes back the first n pairs of the encoding at pos, which were added to h. Unsigned
 * arithmetic makes this exact even where an addition wrapped. */
static void undo_pairs(lc_hist_t *h, const uint8_t *buf, size_t len, size_t pos, uint64_t total,
                       size_t n)
{
    pair_cursor_t c = cursor_at(buf, len, pos, total);
    uint64_t count;
    for (size_t i = 0; i < n && cursor_next(&c, &count) > 0; i++)
        h->counts[c.idx] -= count;
}

int lc_hist_decode_add(lc_hist_t *h, const uint8_t *buf, size_t len)
{
    uint64_t unused = 0;
    return lc_hist_decode_add_both(h, NULL, buf, len, 0, &unused);
}

static void add_header(lc_hist_t *h, const hist_header_t *hd, uint64_t total)
{
    h->total = total;
    h->sum += hd->sum;
    if (hd->min < h->min)
        h->min = hd->min;
    if (hd->max > h->max)
        h->max = hd->max;
}

/* The percentiles of one encoding, found as its pairs are read (in ascending buckets):
 * what lc_hist_percentiles_in answers for its decoding, without the dense histogram. */
typedef struct pct_walk_s {
    const double *ps;
    uint64_t *out;
    size_t k, end; /* ps[k..end) are still to be found */
    uint64_t rank, seen;
    hist_header_t hd;
} pct_walk_t;

static inline void pct_walk_start(pct_walk_t *w, const hist_header_t *hd, const double *ps,
                                  size_t n, uint64_t *out)
{
    for (size_t i = 1; i < n; i++)
        assert(ps[i] >= ps[i - 1]); /* ascending, no NaN */
    *w = (pct_walk_t){.ps = ps, .out = out, .end = n, .hd = *hd};
    if (hd->total == 0) {
        for (; w->k < n; w->k++)
            out[w->k] = 0;
        return;
    }
    for (; w->k < w->end && !(ps[w->k] > 0.0); w->k++)
        out[w->k] = hd->min;
    for (; w->end > w->k && ps[w->end - 1] >= 100.0; w->end--)
        out[w->end - 1] = hd->max;
    if (w->k < w->end)
        w->rank = lc_hist_rank_of(ps[w->k], hd->total);
}

static inline void pct_walk_add(pct_walk_t *w, uint32_t b, uint64_t count)
{
    w->seen += count;
    for (; w->k < w->end && w->seen >= w->rank; w->k++) {
        w->out[w->k] = value_within(b, w->hd.min, w->hd.max);
        if (w->k + 1 < w->end)
            w->rank = lc_hist_rank_of(w->ps[w->k + 1], w->hd.total);
    }
}

/* One pass: each pair is added as it is read, and a bad encoding's pairs are taken back,
 * so that a and b are unchanged then (bad encodings are rare; good ones are read once). */
int lc_hist_decode_pass(lc_hist_t *a, lc_hist_t *b, const uint8_t *buf, size_t len,
                        lc_hist_pass_t *p)
{
    assert(p != NULL && (a == NULL || a != b) && (p->n == 0 || p->out != NULL));
    hist_header_t hd;
    size_t pos = 0;
    uint64_t total_a = 0, total_b = 0;
    if (read_header(buf, len, &pos, &hd) != 0 ||
        (a != NULL && __builtin_add_overflow(a->total, hd.total, &total_a)) ||
        (b != NULL && __builtin_add_overflow(b->total, hd.total, &total_b)))
        return LC_EPROTO; /* no bucket can overflow if the totals do not */

    pct_walk_t walk;
    pct_walk_start(&walk, &hd, p->ps, p->n, p->out);
    /* cursor_next's walk, on locals the compiler keeps in registers (a cursor's fields stay
     * in memory, a store and a load per pair): the loop of every history read. */
    size_t at = pos, added = 0;
    uint64_t idx = 0, seen = 0, first = LC_HIST_BUCKETS, count, delta, below = 0;
    const uint64_t mark = p->mark;
    uint64_t *ac = a != NULL ? a->counts : NULL, *bc = b != NULL ? b->counts : NULL;
    bool bad = false;
    for (; at < len; added++) {
        if (get_varint(buf, len, &at, &delta) || get_varint(buf, len, &at, &count) ||
            !pair_ok(delta, count, &idx, &seen, &first, hd.total)) {
            bad = true;
            break;
        }
        if (ac != NULL)
            ac[idx] += count;
        if (bc != NULL)
            bc[idx] += count;
        if (idx <= mark)
            below += count;
        if (walk.k < walk.end)
            pct_walk_add(&walk, (uint32_t)idx, count);
    }
    if (bad || !pairs_agree(seen, first, idx, &hd)) {
        if (a != NULL)
            undo_pairs(a, buf, len, pos, hd.total, added);
        if (b != NULL)
            undo_pairs(b, buf, len, pos, hd.total, added);
        return LC_EPROTO;
    }
    p->at_or_below += below;
    p->total = hd.total;
    if (a != NULL)
        add_header(a, &hd, total_a);
    if (b != NULL)
        add_header(b, &hd, total_b);
    return 0;
}

int lc_hist_decode_add_both(lc_hist_t *a, lc_hist_t *b, const uint8_t *buf, size_t len,
                            uint32_t mark, uint64_t *at_or_below)
{
    assert(a != NULL);
    lc_hist_pass_t p = {.mark = mark};
    int rv = lc_hist_decode_pass(a, b, buf, len, &p);
    *at_or_below += p.at_or_below;
    return rv;
}

/* One encoding's (bucket, count) pairs, read and checked in order. */
typedef struct bucket_reader_s {
    pair_cursor_t c;
    uint64_t count; /* the current pair's (its bucket is c.idx); 0 once past the end */
    bool bad;       /* a pair could not be read */
} bucket_reader_t;

static void reader_next(bucket_reader_t *r)
{
    int step = cursor_next(&r->c, &r->count);
    if (step <= 0) {
        r->count = 0;
        r->bad = step < 0;
    }
}

/* Reads and checks one encoding's header; an empty input is the empty
 * histogram. Leaves r at its first pair. */
static int reader_open(bucket_reader_t *r, hist_header_t *hd, const uint8_t *buf, size_t len)
{
    size_t pos = 0;
    *hd = (hist_header_t){0, 0, UINT64_MAX, 0};
    if (len > 0 && read_header(buf, len, &pos, hd) != 0)
        return LC_EPROTO;
    *r = (bucket_reader_t){.c = cursor_at(buf, len, pos, hd->total)};
    reader_next(r);
    return 0;
}

/* Whether a reader that is past its end read a good encoding. */
static bool reader_done_ok(const bucket_reader_t *r, const hist_header_t *hd)
{
    return !r->bad && cursor_end_ok(&r->c, hd);
}

/* The merge's pairs after its header: both inputs' pairs, in order, those of one bucket
 * added. An output pair never takes more bytes than the input pairs it comes from, so buf
 * holds them. Adds the bytes written to *n; returns LC_EPROTO when a count would overflow. */
static int merge_pairs(bucket_reader_t *ra, bucket_reader_t *rb, uint8_t *buf, size_t *n)
{
    uint64_t prev = 0;
    while (ra->count != 0 || rb->count != 0) {
        bool take_a = rb->count == 0 || (ra->count != 0 && ra->c.idx <= rb->c.idx);
        bool take_b = ra->count == 0 || (rb->count != 0 && rb->c.idx <= ra->c.idx);
        uint64_t idx = take_a ? ra->c.idx : rb->c.idx, count = 0;
        if (take_a) {
            count += ra->count;
            reader_next(ra);
        }
        if (take_b && __builtin_add_overflow(count, rb->count, &count))
            return LC_EPROTO;
        if (take_b)
            reader_next(rb);
        *n += put_varint(buf + *n, idx - prev);
        *n += put_varint(buf + *n, count);
        prev = idx;
    }
    return 0;
}

/* Each input is read once: its pairs are checked while they are merged, and a bad one
 * throws the output away. */
int lc_hist_merge_encoded(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                          uint8_t **out, size_t *out_len)
{
    bucket_reader_t ra, rb;
    hist_header_t ha, hb, m;
    if (reader_open(&ra, &ha, a, alen) != 0 || reader_open(&rb, &hb, b, blen) != 0 ||
        __builtin_add_overflow(ha.total, hb.total, &m.total))
        return LC_EPROTO;
    m.sum = ha.sum + hb.sum; /* as lc_hist_decode_add adds it */
    m.min = ha.min < hb.min ? ha.min : hb.min;
    m.max = ha.max > hb.max ? ha.max : hb.max;
    uint8_t *buf = malloc(4 * VARINT_MAX + alen + blen);
    if (buf == NULL)
        return LC_ENOMEM;
    size_t n = 0;
    n += put_varint(buf + n, m.total);
    n += put_varint(buf + n, m.sum);
    n += put_varint(buf + n, m.min);
    n += put_varint(buf + n, m.max);
    if (merge_pairs(&ra, &rb, buf, &n) != 0 || !reader_done_ok(&ra, &ha) ||
        !reader_done_ok(&rb, &hb)) {
        free(buf);
        return LC_EPROTO;
    }
    *out = buf;
    *out_len = n;
    return 0;
}
