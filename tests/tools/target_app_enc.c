/* target_app_enc.c — lc_target's gzip, deflate and br answers, and its decompression bombs. */
#include "target_app_enc.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <brotli/encode.h>
#include <zlib.h>

#include "lc_err.h"
#include "target.h"

#define SIZE_MAX_BYTES (8ul << 20)
#define SIZE_DEFAULT 1024ul
#define BOMB_MIB_MAX 256ul /* 256 MiB of input is ~2 s of deflate on the loop */
#define BOMB_MIB_DEFAULT 64ul
#define CHUNK (64u << 10)

enum coding { C_GZIP, C_DEFLATE, C_BR };
static const char *const coding_names[] = {"gzip", "deflate", "br"};

static int coding_of(app_span_t s, enum coding *out)
{
    for (int i = C_GZIP; i <= C_BR; i++)
        if (s.len == strlen(coding_names[i]) && memcmp(s.at, coding_names[i], s.len) == 0) {
            *out = (enum coding)i;
            return 0;
        }
    return LC_EINVAL;
}

/* Whether an Accept-Encoding list names coding (weights are not looked at). */
static bool accepts(const app_req_t *req, enum coding coding)
{
    app_span_t list, name, value;
    if (!app_req_header(req, "accept-encoding", &list))
        return false;
    while (app_pair_next(&list, ',', true, &name, &value)) {
        const char *semi = memchr(name.at, ';', name.len);
        size_t n = semi ? (size_t)(semi - name.at) : name.len;
        while (n > 0 && name.at[n - 1] == ' ')
            n--;
        if (n == strlen(coding_names[coding]) && strncasecmp(name.at, coding_names[coding], n) == 0)
            return true;
    }
    return false;
}

/* Feeds in[0..len) through a zlib stream onto out; finish ends the stream. 0 or LC_ENOMEM. */
static int z_feed(z_stream *z, const void *in, size_t len, bool finish, lc_buf_t *out)
{
    z->next_in = (Bytef *)in;
    z->avail_in = (uInt)len;
    int zr;
    do {
        if (lc_buf_reserve(out, CHUNK) != 0)
            return LC_ENOMEM;
        z->next_out = (Bytef *)out->data + out->len;
        z->avail_out = CHUNK;
        zr = deflate(z, finish ? Z_FINISH : Z_NO_FLUSH);
        out->len += CHUNK - z->avail_out;
        out->data[out->len] = '\0';
    } while (zr == Z_OK && (z->avail_out == 0 || (finish && zr != Z_STREAM_END)));
    return zr == Z_OK || zr == Z_STREAM_END || zr == Z_BUF_ERROR ? 0 : LC_ENOMEM;
}

/* times copies of in[0..len) encoded with coding (zlib formats) into out. */
static int z_encode(enum coding coding, const char *in, size_t len, size_t times, lc_buf_t *out)
{
    z_stream z = {0};
    if (deflateInit2(&z, 6, Z_DEFLATED, coding == C_GZIP ? 15 + 16 : 15, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
        return LC_ENOMEM;
    int rv = 0;
    for (size_t i = 0; rv == 0 && i < times; i++)
        rv = z_feed(&z, in, len, false, out);
    if (rv == 0)
        rv = z_feed(&z, NULL, 0, true, out);
    deflateEnd(&z);
    return rv;
}

static int br_encode(const char *in, size_t len, size_t times, lc_buf_t *out)
{
    BrotliEncoderState *s = BrotliEncoderCreateInstance(NULL, NULL, NULL);
    if (s == NULL)
        return LC_ENOMEM;
    BrotliEncoderSetParameter(s, BROTLI_PARAM_QUALITY, 5);
    int rv = 0;
    for (size_t i = 0; rv == 0 && i <= times; i++) {
        bool last = i == times;
        size_t avail_in = last ? 0 : len;
        const uint8_t *next_in = (const uint8_t *)in;
        do {
            if (lc_buf_reserve(out, CHUNK) != 0) {
                rv = LC_ENOMEM;
                break;
            }
            size_t avail_out = CHUNK;
            uint8_t *next_out = (uint8_t *)out->data + out->len;
            if (!BrotliEncoderCompressStream(s, last ? BROTLI_OPERATION_FINISH
                                                     : BROTLI_OPERATION_PROCESS,
                                             &avail_in, &next_in, &avail_out, &next_out, NULL))
                rv = LC_ENOMEM;
            out->len += CHUNK - avail_out;
            out->data[out->len] = '\0';
        } while (rv == 0 && (avail_in > 0 || BrotliEncoderHasMoreOutput(s) ||
                             (last && !BrotliEncoderIsFinished(s))));
    }
    BrotliEncoderDestroyInstance(s);
    return rv;
}

static int encode(enum coding coding, const char *in, size_t len, size_t times, lc_buf_t *out)
{
    return coding == C_BR ? br_encode(in, len, times, out) : z_encode(coding, in, len, times, out);
}

/* {"coding":…,"encoded":…,"token":"tok-N","pad":"item-0 item-1 …"} of at least size bytes. */
static int json_body(const char *coding, bool encoded, unsigned long size, lc_buf_t *b)
{
    int rv = lc_buf_appendf(b, "{\"coding\":\"%s\",\"encoded\":%s,\"token\":\"tok-%lu\",\"pad\":\"",
                            coding, encoded ? "true" : "false", size);
    for (unsigned i = 0; rv == 0 && b->len + 2 < size; i++)
        rv = lc_buf_appendf(b, "item-%u ", i);
    return rv == 0 ? lc_buf_append(b, "\"}", 2) : rv;
}

static int bad_request(app_resp_t *out, const char *why)
{
    out->status = 400;
    return lc_buf_appendf(&out->body, "{\"error\":\"%s\"}", why);
}

int app_enc_serve(const char *path, size_t path_len, app_span_t query, const app_req_t *req,
                  app_resp_t *out)
{
    enum coding coding;
    unsigned long size = SIZE_DEFAULT;
    app_span_t v;
    if (coding_of((app_span_t){path + 1, path_len - 1}, &coding) != 0)
        return bad_request(out, "unknown coding");
    if (app_query_get(query, "size", &v) && !parse_digits(v.at, v.len, SIZE_MAX_BYTES, &size))
        return bad_request(out, "size: expected 0 to 8388608");
    bool force = app_query_get(query, "force", &v) && v.len == 1 && v.at[0] == '1';
    bool on = force || accepts(req, coding);
    lc_buf_t plain = {0};
    int rv = json_body(on ? coding_names[coding] : "identity", on, size, on ? &plain : &out->body);
    if (rv == 0 && on)
        rv = encode(coding, plain.data, plain.len, 1, &out->body);
    if (rv == 0 && on)
        rv = lc_buf_appendf(&out->headers, "Content-Encoding: %s\r\n", coding_names[coding]);
    lc_buf_free(&plain);
    out->status = 200;
    return rv;
}

/* The last bomb of each coding this thread made. */
typedef struct bomb_s {
    unsigned long mib; /* 0: none yet */
    lc_buf_t bytes;
} bomb_t;
static _Thread_local bomb_t bombs[C_BR + 1];

static const lc_buf_t *make_bomb(enum coding coding, unsigned long mib)
{
    bomb_t *b = &bombs[coding];
    if (b->mib == mib)
        return &b->bytes;
    char *zeros = malloc(CHUNK);
    if (zeros == NULL)
        return NULL;
    memset(zeros, '0', CHUNK);
    lc_buf_free(&b->bytes);
    b->mib = 0;
    int rv = encode(coding, zeros, CHUNK, mib * ((1u << 20) / CHUNK), &b->bytes);
    free(zeros);
    if (rv != 0)
        return NULL;
    b->mib = mib;
    return &b->bytes;
}

void app_enc_thread_free(void)
{
    for (size_t i = 0; i <= C_BR; i++) {
        lc_buf_free(&bombs[i].bytes);
        bombs[i].mib = 0;
    }
}

int app_enc_bomb(app_span_t query, app_resp_t *out)
{
    enum coding coding = C_GZIP;
    unsigned long mib = BOMB_MIB_DEFAULT;
    app_span_t v;
    if (app_query_get(query, "coding", &v) && coding_of(v, &coding) != 0)
        return bad_request(out, "coding: expected gzip, deflate or br");
    if (app_query_get(query, "mib", &v) && (!parse_digits(v.at, v.len, BOMB_MIB_MAX, &mib) ||
                                            mib == 0))
        return bad_request(out, "mib: expected 1 to 256");
    const lc_buf_t *bomb = make_bomb(coding, mib);
    int rv = bomb != NULL ? lc_buf_append(&out->body, bomb->data, bomb->len) : LC_ENOMEM;
    if (rv == 0)
        rv = lc_buf_appendf(&out->headers, "Content-Encoding: %s\r\n", coding_names[coding]);
    out->status = 200;
    return rv;
}
