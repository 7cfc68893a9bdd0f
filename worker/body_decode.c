/* body_decode.c — content codings: gzip and deflate through zlib, br through libbrotli, each
 * writing into a buffer that never grows past the cap (plus one byte that proves a bomb). */
#include "body_decode.h"

#include <assert.h>
#include <limits.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <strings.h>

#include <brotli/decode.h>
#include <zlib.h>

#include "lc_err.h"

#define ROOM_MIN (16u << 10) /* the first piece of output room; it doubles from there */

static const char TOO_BIG[] = "the decoded body is longer than the body cap "
                              "(a decompression bomb?)";
static const char TRUNCATED[] = "the encoded body ends before its stream does (truncated)";
static const char TRAILING[] = "bytes follow the end of the encoded stream";
static const char NO_MEMORY[] = "out of memory while decoding";

enum worker_coding worker_coding_of(const char *value, size_t len)
{
    static const struct {
        const char *name;
        enum worker_coding coding;
    } names[] = {{"identity", WORKER_CODING_IDENTITY}, {"gzip", WORKER_CODING_GZIP},
                 {"x-gzip", WORKER_CODING_GZIP},       {"deflate", WORKER_CODING_DEFLATE},
                 {"br", WORKER_CODING_BR}};
    while (len > 0 && (value[0] == ' ' || value[0] == '\t'))
        value++, len--;
    while (len > 0 && (value[len - 1] == ' ' || value[len - 1] == '\t'))
        len--;
    if (len == 0)
        return WORKER_CODING_IDENTITY;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i].name) == len && strncasecmp(names[i].name, value, len) == 0)
            return names[i].coding;
    return WORKER_CODING_UNKNOWN;
}

const char *worker_coding_name(enum worker_coding coding)
{
    static const char *const names[] = {"identity", "gzip", "deflate", "br"};
    return coding < WORKER_CODING_UNKNOWN ? names[coding] : "unknown";
}

/* Room for the next piece of output at out->data + out->len: out doubles as it fills, up to
 * cap + 1 bytes in all (the byte past the cap shows the body is too big). 0 or LC_ENOMEM. */
static int make_room(lc_buf_t *out, size_t cap, size_t *room)
{
    size_t limit = cap + 1;
    assert(out->len < limit);
    size_t avail = out->data != NULL ? out->cap - out->len - 1 : 0;
    if (avail == 0) {
        size_t want = out->len > ROOM_MIN ? out->len : ROOM_MIN;
        if (want > limit - out->len)
            want = limit - out->len;
        if (lc_buf_reserve(out, want) != 0)
            return LC_ENOMEM;
        avail = out->cap - out->len - 1;
    }
    *room = avail < limit - out->len ? avail : limit - out->len;
    return 0;
}

static int fail(const char **why, const char *text, int rv)
{
    *why = text;
    return rv;
}

/* What an inflate() result other than Z_OK and Z_STREAM_END means. */
static int inflate_error(const z_stream *z, int zr, const char **why)
{
    if (zr == Z_MEM_ERROR)
        return fail(why, NO_MEMORY, LC_ENOMEM);
    if (zr == Z_NEED_DICT)
        return fail(why, "the deflate stream needs a preset dictionary", LC_EPROTO);
    if (zr == Z_BUF_ERROR && z->avail_in == 0)
        return fail(why, TRUNCATED, LC_EPROTO);
    return fail(why, "the deflate data is corrupt", LC_EPROTO);
}

/* A gzip stream ended: another member may follow (RFC 1952 2.2), nothing else may. */
static int next_member(z_stream *z, bool gzip, const char **why)
{
    if (!gzip || z->avail_in < 2 || z->next_in[0] != 0x1f || z->next_in[1] != 0x8b)
        return fail(why, TRAILING, LC_EPROTO);
    return inflateReset(z) == Z_OK ? 0 : fail(why, NO_MEMORY, LC_ENOMEM);
}

static int inflate_into(z_stream *z, bool gzip, size_t cap, lc_buf_t *out, const char **why)
{
    for (;;) {
        size_t room;
        if (make_room(out, cap, &room) != 0)
            return fail(why, NO_MEMORY, LC_ENOMEM);
        z->next_out = (Bytef *)out->data + out->len;
        z->avail_out = (uInt)(room < UINT_MAX ? room : UINT_MAX);
        uInt given = z->avail_out;
        int zr = inflate(z, Z_NO_FLUSH);
        out->len += given - z->avail_out;
        out->data[out->len] = '\0';
        if (out->len > cap)
            return fail(why, TOO_BIG, LC_ETOOBIG);
        if (zr == Z_STREAM_END && z->avail_in == 0)
            return 0;
        int rv = zr == Z_STREAM_END ? next_member(z, gzip, why)
                 : zr == Z_OK       ? 0
                                    : inflate_error(z, zr, why);
        if (rv != 0)
            return rv;
    }
}

/* Whether in begins with a zlib header (RFC 1950 2.2): HTTP's "deflate" is that, but some
 * servers send a raw deflate stream instead, as browsers accept. */
static bool zlib_header(const unsigned char *in, size_t len)
{
    return len >= 2 && (in[0] & 0x0f) == 8 && (in[0] >> 4) <= 7 &&
           ((unsigned)in[0] << 8 | in[1]) % 31 == 0;
}

static int decode_zlib(bool gzip, const char *in, size_t len, size_t cap, lc_buf_t *out,
                       const char **why)
{
    z_stream z = {0};
    const unsigned char *bytes = (const unsigned char *)in;
    int bits = gzip ? 15 + 16 : zlib_header(bytes, len) ? 15 : -15;
    if (len > UINT_MAX)
        return fail(why, "the encoded body is too long", LC_ETOOBIG);
    if (inflateInit2(&z, bits) != Z_OK)
        return fail(why, NO_MEMORY, LC_ENOMEM);
    z.next_in = (Bytef *)bytes;
    z.avail_in = (uInt)len;
    int rv = inflate_into(&z, gzip, cap, out, why);
    inflateEnd(&z);
    return rv;
}

/* Brotli's allocations, counted so that a stream cannot make the decoder itself grow past
 * WORKER_BR_MEMORY_MAX. */
typedef struct br_meter_s {
    size_t used;
    bool refused;
} br_meter_t;

typedef union br_block_u {
    size_t size;
    max_align_t align;
} br_block_t;

static void *br_alloc(void *opaque, size_t size)
{
    br_meter_t *m = opaque;
    if (size > WORKER_BR_MEMORY_MAX - m->used) {
        m->refused = true;
        return NULL;
    }
    br_block_t *b = malloc(sizeof *b + size);
    if (b == NULL)
        return NULL;
    b->size = size;
    m->used += size;
    return b + 1;
}

static void br_free(void *opaque, void *addr)
{
    br_meter_t *m = opaque;
    if (addr == NULL)
        return;
    br_block_t *b = (br_block_t *)addr - 1;
    m->used -= b->size;
    free(b);
}

static int br_error(const BrotliDecoderState *s, const br_meter_t *m, const char **why)
{
    if (m->refused)
        return fail(why, "the brotli stream needs more decoder memory than allowed "
                         "(a decompression bomb?)", LC_ETOOBIG);
    if (BrotliDecoderGetErrorCode(s) <= BROTLI_DECODER_ERROR_ALLOC_CONTEXT_MODES &&
        BrotliDecoderGetErrorCode(s) >= BROTLI_DECODER_ERROR_ALLOC_BLOCK_TYPE_TREES)
        return fail(why, NO_MEMORY, LC_ENOMEM);
    return fail(why, "the brotli data is corrupt", LC_EPROTO);
}

static int br_into(BrotliDecoderState *s, const br_meter_t *m, const char *in, size_t len,
                   size_t cap, lc_buf_t *out, const char **why)
{
    const uint8_t *next_in = (const uint8_t *)in;
    size_t avail_in = len;
    for (;;) {
        size_t room;
        if (make_room(out, cap, &room) != 0)
            return fail(why, NO_MEMORY, LC_ENOMEM);
        uint8_t *next_out = (uint8_t *)out->data + out->len;
        size_t avail_out = room;
        BrotliDecoderResult r =
            BrotliDecoderDecompressStream(s, &avail_in, &next_in, &avail_out, &next_out, NULL);
        out->len += room - avail_out;
        out->data[out->len] = '\0';
        if (out->len > cap)
            return fail(why, TOO_BIG, LC_ETOOBIG);
        if (r == BROTLI_DECODER_RESULT_SUCCESS)
            return avail_in == 0 ? 0 : fail(why, TRAILING, LC_EPROTO);
        if (r == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT)
            return fail(why, TRUNCATED, LC_EPROTO);
        if (r == BROTLI_DECODER_RESULT_ERROR)
            return br_error(s, m, why);
    }
}

static int decode_br(const char *in, size_t len, size_t cap, lc_buf_t *out, const char **why)
{
    br_meter_t meter = {0};
    BrotliDecoderState *s = BrotliDecoderCreateInstance(br_alloc, br_free, &meter);
    if (s == NULL)
        return fail(why, NO_MEMORY, LC_ENOMEM);
    int rv = br_into(s, &meter, in, len, cap, out, why);
    BrotliDecoderDestroyInstance(s);
    assert(meter.used == 0);
    return rv;
}

int worker_body_decode(enum worker_coding coding, const char *in, size_t len, size_t cap,
                       lc_buf_t *out, const char **why)
{
    assert(coding != WORKER_CODING_UNKNOWN && (in != NULL || len == 0));
    *why = NULL;
    out->len = 0;
    if (out->data != NULL)
        out->data[0] = '\0';
    if (len == 0 || coding == WORKER_CODING_IDENTITY) {
        if (len > cap)
            return fail(why, TOO_BIG, LC_ETOOBIG);
        return lc_buf_append(out, len ? in : "", len) == 0 ? 0 : fail(why, NO_MEMORY, LC_ENOMEM);
    }
    if (coding == WORKER_CODING_BR)
        return decode_br(in, len, cap, out, why);
    return decode_zlib(coding == WORKER_CODING_GZIP, in, len, cap, out, why);
}
