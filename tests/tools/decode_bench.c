/* decode_bench.c — lc_decode_bench: what decoding a compressed response body costs the
 * worker, in ns per KB of decoded body, for gzip, deflate and br, on JSON-like bodies of a
 * few sizes (tests/bench/bench.sh prints its line; run by hand: lc_decode_bench [ms]). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <brotli/encode.h>
#include <zlib.h>

#include "body_decode.h"
#include "http_conn.h"

static const size_t sizes[] = {1024, 16 * 1024, 256 * 1024};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A listing as an API would answer it: repetitive keys, varying values. */
static void json_body(size_t size, lc_buf_t *b)
{
    lc_buf_append(b, "{\"items\":[", 10);
    for (unsigned i = 0; b->len < size; i++)
        lc_buf_appendf(b, "{\"id\":%u,\"name\":\"item-%u\",\"price\":%u.%02u,\"tags\":[\"t%u\"]},",
                       i, (i * 7919u) % 10000u, (i * 31u) % 500u, i % 100u, i % 13u);
    b->len = size - 2;
    lc_buf_append(b, "]}", 2);
}

static int encode(enum worker_coding c, const lc_buf_t *in, lc_buf_t *out)
{
    size_t cap = in->len + in->len / 2 + 1024;
    if (lc_buf_reserve(out, cap) != 0)
        return -1;
    if (c == WORKER_CODING_BR) {
        size_t n = cap;
        if (!BrotliEncoderCompress(5, 22, BROTLI_MODE_TEXT, in->len, (const uint8_t *)in->data,
                                   &n, (uint8_t *)out->data))
            return -1;
        out->len = n;
        return 0;
    }
    z_stream z = {0};
    if (deflateInit2(&z, 6, Z_DEFLATED, c == WORKER_CODING_GZIP ? 31 : 15, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    z.next_in = (Bytef *)in->data;
    z.avail_in = (uInt)in->len;
    z.next_out = (Bytef *)out->data;
    z.avail_out = (uInt)cap;
    int zr = deflate(&z, Z_FINISH);
    out->len = cap - z.avail_out;
    deflateEnd(&z);
    return zr == Z_STREAM_END ? 0 : -1;
}

/* ns per KB of decoded body, decoding enc again and again for about ms. */
static double measure(enum worker_coding c, const lc_buf_t *enc, size_t plain, unsigned ms)
{
    lc_buf_t out = {0};
    const char *why;
    uint64_t start = now_ns(), end = start + (uint64_t)ms * 1000000u, n = 0, t;
    do {
        if (worker_body_decode(c, enc->data, enc->len, WORKER_BODY_CAPTURE_MAX, &out, &why) != 0 ||
            out.len != plain) {
            fprintf(stderr, "lc_decode_bench: %s: %s\n", worker_coding_name(c), why ? why : "size");
            exit(1);
        }
        n++;
    } while ((t = now_ns()) < end);
    lc_buf_free(&out);
    return (double)(t - start) / (double)n / ((double)plain / 1024.0);
}

int main(int argc, char **argv)
{
    static const enum worker_coding codings[] = {WORKER_CODING_GZIP, WORKER_CODING_DEFLATE,
                                                 WORKER_CODING_BR};
    unsigned ms = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 300;
    if (ms == 0 || ms > 60000) {
        fprintf(stderr, "usage: lc_decode_bench [ms per figure, 1..60000; default 300]\n");
        return 2;
    }
    printf("decode      ");
    for (size_t c = 0; c < 3; c++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            lc_buf_t plain = {0}, enc = {0};
            json_body(sizes[s], &plain);
            if (encode(codings[c], &plain, &enc) != 0) {
                fprintf(stderr, "lc_decode_bench: cannot encode\n");
                return 1;
            }
            printf(" %s_%zuk_ns_per_kb=%.0f", worker_coding_name(codings[c]), sizes[s] / 1024,
                   measure(codings[c], &enc, plain.len, ms));
            if (s == 1)
                printf(" (ratio %.1f)", (double)plain.len / (double)enc.len);
            lc_buf_free(&plain);
            lc_buf_free(&enc);
        }
    printf("\n");
    return 0;
}
