/* lc_frame.c — varint32-prefixed Envelope frames: incremental reader, encode, decode. */
#include "lc_frame.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_err.h"

#define PREFIX_MAX 5              /* bytes of a varint32 */
#define KEEP_CAP (64u << 10)      /* buffers above this are freed once their frame is done */
#define MIN_CAP 256u

void lc_frame_reader_init(lc_frame_reader_t *r, size_t max)
{
    *r = (lc_frame_reader_t){0};
    r->max = max;
}

void lc_frame_reader_close(lc_frame_reader_t *r)
{
    free(r->buf);
    r->buf = NULL;
    r->len = 0;
    r->cap = 0;
}

size_t lc_frame_reader_pending(const lc_frame_reader_t *r)
{
    return r->len;
}

/* Parses the length prefix at p. Returns 1 with *flen and *used when it is
 * complete and within r->max, 0 when more bytes are needed, -1 when it is
 * malformed or announces an oversize frame (errmsg set). */
static int parse_prefix(lc_frame_reader_t *r, const uint8_t *p, size_t n, uint32_t *flen,
                        size_t *used)
{
    uint32_t v = 0;

    for (size_t i = 0; i < n && i < PREFIX_MAX; i++) {
        uint8_t b = p[i];
        if (i == PREFIX_MAX - 1 && (b & 0x80)) {
            snprintf(r->errmsg, sizeof r->errmsg, "frame length prefix longer than 5 bytes");
            return -1;
        }
        if (i == PREFIX_MAX - 1 && (b & 0x70)) {
            snprintf(r->errmsg, sizeof r->errmsg, "frame length prefix overflows 32 bits");
            return -1;
        }
        v |= (uint32_t)(b & 0x7f) << (7 * i);
        if (b & 0x80)
            continue;
        if (v > r->max) {
            snprintf(r->errmsg, sizeof r->errmsg, "frame of %u bytes exceeds the %zu-byte limit",
                     (unsigned)v, r->max);
            return -1;
        }
        *flen = v;
        *used = i + 1;
        return 1;
    }
    return 0;
}

/* Makes room for need bytes, growing geometrically but never past limit
 * (the size of the whole frame), so a large announced frame is not
 * allocated before its bytes arrive. */
static int reserve(lc_frame_reader_t *r, size_t need, size_t limit)
{
    if (need <= r->cap)
        return 0;
    size_t cap = r->cap < MIN_CAP ? MIN_CAP : r->cap;
    while (cap < need)
        cap *= 2;
    if (cap > limit)
        cap = limit;
    uint8_t *buf = realloc(r->buf, cap);
    if (buf == NULL)
        return LC_ENOMEM;
    r->buf = buf;
    r->cap = cap;
    return 0;
}

/* Delivers the frame completed in r->buf, then drops an oversized buffer so an
 * idle connection does not keep a 16 MiB frame's memory. */
static int deliver_buffered(lc_frame_reader_t *r, size_t used, uint32_t flen, lc_frame_cb on_frame,
                            void *arg)
{
    r->len = 0;
    int rv = on_frame(arg, r->buf + used, flen);
    if (r->cap > KEEP_CAP) {
        free(r->buf);
        r->buf = NULL;
        r->cap = 0;
    }
    return rv;
}

/* Continues the incomplete frame held in r->buf with bytes from *p / *n,
 * advancing them. Returns 0 with r->len == 0 when the frame was delivered, 0
 * with r->len > 0 when the input ran out first, or an error. */
static int feed_buffered(lc_frame_reader_t *r, const uint8_t **p, size_t *n, lc_frame_cb on_frame,
                         void *arg)
{
    uint32_t flen = 0;
    size_t used = 0;
    int rc;

    /* The prefix is at most 5 bytes and r->cap >= MIN_CAP, so copy it bytewise. */
    while ((rc = parse_prefix(r, r->buf, r->len, &flen, &used)) == 0) {
        if (*n == 0)
            return 0;
        r->buf[r->len++] = **p;
        (*p)++;
        (*n)--;
    }
    if (rc < 0)
        return LC_EPROTO;

    size_t total = used + flen, take = total - r->len;
    if (take > *n)
        take = *n;
    if (reserve(r, r->len + take, total) != 0)
        return LC_ENOMEM;
    memcpy(r->buf + r->len, *p, take);
    r->len += take;
    *p += take;
    *n -= take;
    if (r->len < total)
        return 0;
    return deliver_buffered(r, used, flen, on_frame, arg);
}

/* Keeps the incomplete tail p[0..n) for the next feed; limit is the size of
 * the whole frame, or PREFIX_MAX while its length is still unknown. */
static int buffer_tail(lc_frame_reader_t *r, const uint8_t *p, size_t n, size_t limit)
{
    if (reserve(r, n, limit < MIN_CAP ? MIN_CAP : limit) != 0)
        return LC_ENOMEM;
    memcpy(r->buf, p, n);
    r->len = n;
    return 0;
}

int lc_frame_reader_feed(lc_frame_reader_t *r, const uint8_t *buf, size_t len,
                         lc_frame_cb on_frame, void *arg)
{
    const uint8_t *p = buf;
    size_t n = len;
    int rv;

    if (r->errmsg[0] != '\0')
        return LC_EPROTO; /* a stream that went bad once stays bad */
    if (r->len > 0) {
        rv = feed_buffered(r, &p, &n, on_frame, arg);
        if (rv != 0 || r->len > 0)
            return rv;
    }
    /* Whole frames in the caller's buffer are delivered in place, uncopied. */
    while (n > 0) {
        uint32_t flen = 0;
        size_t used = 0;
        int rc = parse_prefix(r, p, n, &flen, &used);
        if (rc < 0)
            return LC_EPROTO;
        if (rc == 0 || n - used < flen)
            return buffer_tail(r, p, n, rc == 0 ? PREFIX_MAX : used + flen);
        rv = on_frame(arg, p + used, flen);
        if (rv != 0)
            return rv;
        p += used + flen;
        n -= used + flen;
    }
    return 0;
}

int lc_frame_encode(const Lc__Envelope *env, uint8_t **out, size_t *out_len)
{
    size_t body = lc__envelope__get_packed_size(env);
    if (body > LC_FRAME_MAX)
        return LC_ETOOBIG;

    uint8_t *buf = malloc(PREFIX_MAX + body);
    if (buf == NULL)
        return LC_ENOMEM;
    size_t n = 0;
    uint32_t v = (uint32_t)body;
    while (v >= 0x80) {
        buf[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    buf[n++] = (uint8_t)v;
    n += lc__envelope__pack(env, buf + n);
    *out = buf;
    *out_len = n;
    return 0;
}

int lc_frame_decode(const uint8_t *body, size_t len, Lc__Envelope **out, char *errmsg,
                    size_t errlen)
{
    Lc__Envelope *env = lc__envelope__unpack(NULL, len, body);
    const char *why = NULL;

    if (env == NULL) {
        why = "undecodable frame";
    } else if (env->msg_case == LC__ENVELOPE__MSG__NOT_SET) {
        lc__envelope__free_unpacked(env, NULL);
        why = "empty envelope";
    }
    if (why != NULL)
        return lc_errf(errmsg, errlen, LC_EPROTO, "%s", why);
    *out = env;
    return 0;
}
