/* test_body_decode.c — worker/body_decode.c: every coding decodes what zlib and brotli encode;
 * truncated, corrupt and trailing bytes are refused as such; a bomb stops at the cap without
 * the buffer growing past it; gzip members follow each other; empty bodies are empty. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <brotli/encode.h>
#include <cmocka.h>
#include <zlib.h>

#include "body_decode.h"
#include "lc_err.h"

#define CAP (1u << 20)

/* windowBits: 31 gzip, 15 zlib, -15 raw deflate. */
static void z_encode(int bits, const void *in, size_t len, lc_buf_t *out)
{
    z_stream z = {0};
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, bits, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t bound = deflateBound(&z, len) + 64;
    assert_int_equal(lc_buf_reserve(out, bound), 0);
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)len;
    z.next_out = (Bytef *)out->data + out->len;
    z.avail_out = (uInt)bound;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    out->len += bound - z.avail_out;
    deflateEnd(&z);
}

static void br_encode(const void *in, size_t len, lc_buf_t *out)
{
    size_t n = BrotliEncoderMaxCompressedSize(len) + 64;
    assert_int_equal(lc_buf_reserve(out, n), 0);
    assert_true(BrotliEncoderCompress(5, 22, BROTLI_MODE_GENERIC, len, (const uint8_t *)in, &n,
                                      (uint8_t *)out->data + out->len));
    out->len += n;
}

static void encode(enum worker_coding c, const void *in, size_t len, lc_buf_t *out)
{
    if (c == WORKER_CODING_BR)
        br_encode(in, len, out);
    else
        z_encode(c == WORKER_CODING_GZIP ? 31 : 15, in, len, out);
}

/* 200 KB of text that compresses a little, like a JSON listing. */
static char *sample(size_t *len)
{
    lc_buf_t b = {0};
    for (unsigned i = 0; b.len < 200000; i++)
        assert_int_equal(lc_buf_appendf(&b, "{\"id\":%u,\"name\":\"item-%u\",\"x\":%u},", i,
                                        i * 7919u % 1000u, (i * 2654435761u) >> 7), 0);
    *len = b.len;
    return b.data;
}

static const enum worker_coding codings[] = {WORKER_CODING_GZIP, WORKER_CODING_DEFLATE,
                                             WORKER_CODING_BR};

static void test_coding_names(void **state)
{
    (void)state;
    assert_int_equal(worker_coding_of("gzip", 4), WORKER_CODING_GZIP);
    assert_int_equal(worker_coding_of(" GZip\t", 6), WORKER_CODING_GZIP);
    assert_int_equal(worker_coding_of("x-gzip", 6), WORKER_CODING_GZIP);
    assert_int_equal(worker_coding_of("deflate", 7), WORKER_CODING_DEFLATE);
    assert_int_equal(worker_coding_of("br", 2), WORKER_CODING_BR);
    assert_int_equal(worker_coding_of("identity", 8), WORKER_CODING_IDENTITY);
    assert_int_equal(worker_coding_of("  ", 2), WORKER_CODING_IDENTITY);
    assert_int_equal(worker_coding_of("gzip, br", 8), WORKER_CODING_UNKNOWN);
    assert_int_equal(worker_coding_of("zstd", 4), WORKER_CODING_UNKNOWN);
    assert_int_equal(worker_coding_of("gzi", 3), WORKER_CODING_UNKNOWN);
    assert_string_equal(worker_coding_name(WORKER_CODING_BR), "br");
    assert_string_equal(worker_coding_name(WORKER_CODING_UNKNOWN), "unknown");
}

static void test_round_trips(void **state)
{
    (void)state;
    size_t len;
    char *text = sample(&len);
    for (size_t i = 0; i < sizeof codings / sizeof codings[0]; i++) {
        lc_buf_t enc = {0}, out = {0};
        const char *why = "unset";
        encode(codings[i], text, len, &enc);
        assert_true(enc.len < len);
        assert_int_equal(worker_body_decode(codings[i], enc.data, enc.len, CAP, &out, &why), 0);
        assert_null(why);
        assert_int_equal(out.len, len);
        assert_memory_equal(out.data, text, len);
        assert_int_equal(out.data[out.len], '\0');
        /* The buffer is reused: a second decode replaces the first. */
        assert_int_equal(worker_body_decode(codings[i], enc.data, enc.len, CAP, &out, &why), 0);
        assert_int_equal(out.len, len);
        lc_buf_free(&enc);
        lc_buf_free(&out);
    }
    free(text);
}

static void test_raw_deflate(void **state)
{
    (void)state;
    lc_buf_t enc = {0}, out = {0};
    const char *why;
    z_encode(-15, "raw deflate, as some servers send", 33, &enc);
    assert_int_equal(worker_body_decode(WORKER_CODING_DEFLATE, enc.data, enc.len, CAP, &out, &why),
                     0);
    assert_string_equal(out.data, "raw deflate, as some servers send");
    lc_buf_free(&enc);
    lc_buf_free(&out);
}

static void test_empty(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof codings / sizeof codings[0]; i++) {
        lc_buf_t enc = {0}, out = {0};
        const char *why;
        /* No bytes at all (a 204, a HEAD-like answer that still names its coding). */
        assert_int_equal(worker_body_decode(codings[i], NULL, 0, CAP, &out, &why), 0);
        assert_int_equal(out.len, 0);
        /* An encoded empty body. */
        encode(codings[i], "", 0, &enc);
        assert_true(enc.len > 0);
        assert_int_equal(worker_body_decode(codings[i], enc.data, enc.len, CAP, &out, &why), 0);
        assert_int_equal(out.len, 0);
        lc_buf_free(&enc);
        lc_buf_free(&out);
    }
}

static void test_truncated(void **state)
{
    (void)state;
    size_t len;
    char *text = sample(&len);
    for (size_t i = 0; i < sizeof codings / sizeof codings[0]; i++) {
        lc_buf_t enc = {0}, out = {0};
        encode(codings[i], text, len, &enc);
        size_t cuts[] = {1, 2, 10, enc.len / 2, enc.len - 4, enc.len - 1};
        for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
            const char *why = NULL;
            int rv = worker_body_decode(codings[i], enc.data, cuts[k], CAP, &out, &why);
            assert_int_equal(rv, LC_EPROTO);
            assert_non_null(why);
            assert_true(out.len <= len);
        }
        lc_buf_free(&enc);
        lc_buf_free(&out);
    }
    free(text);
}

static void test_garbage(void **state)
{
    (void)state;
    static const char junk[] = "<html>this body says gzip but is plain text</html>";
    lc_buf_t out = {0};
    for (size_t i = 0; i < sizeof codings / sizeof codings[0]; i++) {
        const char *why = NULL;
        assert_int_equal(worker_body_decode(codings[i], junk, sizeof junk - 1, CAP, &out, &why),
                         LC_EPROTO);
        assert_non_null(why);
    }
    /* Random bytes: refused (or, rarely, a tiny valid stream), never a crash or a stall. */
    uint64_t x = 88172645463325252ULL;
    char bytes[4096];
    for (int round = 0; round < 300; round++) {
        for (size_t j = 0; j < sizeof bytes; j++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            bytes[j] = (char)x;
        }
        const char *why;
        int rv = worker_body_decode(codings[round % 3], bytes, (size_t)(x % sizeof bytes), CAP,
                                    &out, &why);
        assert_true(rv == 0 || rv == LC_EPROTO || rv == LC_ETOOBIG);
    }
    lc_buf_free(&out);
}

static void test_trailing(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof codings / sizeof codings[0]; i++) {
        lc_buf_t enc = {0}, out = {0};
        const char *why = NULL;
        encode(codings[i], "body", 4, &enc);
        assert_int_equal(lc_buf_append(&enc, "JUNK", 4), 0);
        assert_int_equal(worker_body_decode(codings[i], enc.data, enc.len, CAP, &out, &why),
                         LC_EPROTO);
        assert_non_null(strstr(why, "follow"));
        lc_buf_free(&enc);
        lc_buf_free(&out);
    }
}

static void test_gzip_members(void **state)
{
    (void)state;
    lc_buf_t enc = {0}, out = {0};
    const char *why;
    z_encode(31, "hello ", 6, &enc);
    z_encode(31, "", 0, &enc);
    z_encode(31, "world", 5, &enc);
    assert_int_equal(worker_body_decode(WORKER_CODING_GZIP, enc.data, enc.len, CAP, &out, &why),
                     0);
    assert_string_equal(out.data, "hello world");
    /* A zlib stream is one stream: a second one after it is trailing bytes. */
    lc_buf_t z2 = {0};
    z_encode(15, "a", 1, &z2);
    z_encode(15, "b", 1, &z2);
    assert_int_equal(worker_body_decode(WORKER_CODING_DEFLATE, z2.data, z2.len, CAP, &out, &why),
                     LC_EPROTO);
    lc_buf_free(&z2);
    lc_buf_free(&enc);
    lc_buf_free(&out);
}

static void test_bombs(void **state)
{
    (void)state;
    size_t big = 64u << 20;
    char *zeros = calloc(1, big);
    assert_non_null(zeros);
    for (size_t i = 0; i < sizeof codings / sizeof codings[0]; i++) {
        lc_buf_t enc = {0}, out = {0};
        const char *why = NULL;
        encode(codings[i], zeros, big, &enc);
        assert_true(enc.len < 128u << 10); /* a small body… */
        assert_int_equal(worker_body_decode(codings[i], enc.data, enc.len, CAP, &out, &why),
                         LC_ETOOBIG); /* …that is refused at the cap */
        assert_non_null(strstr(why, "cap"));
        assert_true(out.len <= CAP + 1);
        assert_true(out.cap <= 2u * CAP); /* the buffer grew (by doubling) to the cap, no more */
        lc_buf_free(&enc);
        lc_buf_free(&out);
    }
    free(zeros);
}

static void test_exact_cap(void **state)
{
    (void)state;
    size_t cap = 100000;
    char *text = malloc(cap + 1);
    assert_non_null(text);
    memset(text, 'a', cap + 1);
    for (size_t i = 0; i < sizeof codings / sizeof codings[0]; i++) {
        lc_buf_t fits = {0}, over = {0}, out = {0};
        const char *why;
        encode(codings[i], text, cap, &fits);
        encode(codings[i], text, cap + 1, &over);
        assert_int_equal(worker_body_decode(codings[i], fits.data, fits.len, cap, &out, &why), 0);
        assert_int_equal(out.len, cap);
        assert_int_equal(worker_body_decode(codings[i], over.data, over.len, cap, &out, &why),
                         LC_ETOOBIG);
        lc_buf_free(&fits);
        lc_buf_free(&over);
        lc_buf_free(&out);
    }
    lc_buf_t out = {0};
    const char *why;
    assert_int_equal(worker_body_decode(WORKER_CODING_IDENTITY, text, cap + 1, cap, &out, &why),
                     LC_ETOOBIG);
    assert_int_equal(worker_body_decode(WORKER_CODING_IDENTITY, text, cap, cap, &out, &why), 0);
    assert_int_equal(out.len, cap);
    lc_buf_free(&out);
    free(text);
}

static void test_preset_dictionary(void **state)
{
    (void)state;
    z_stream z = {0};
    unsigned char buf[256];
    assert_int_equal(deflateInit(&z, 6), Z_OK);
    assert_int_equal(deflateSetDictionary(&z, (const Bytef *)"dictionary", 10), Z_OK);
    z.next_in = (Bytef *)"dictionary words";
    z.avail_in = 16;
    z.next_out = buf;
    z.avail_out = sizeof buf;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    size_t n = sizeof buf - z.avail_out;
    deflateEnd(&z);
    lc_buf_t out = {0};
    const char *why;
    assert_int_equal(worker_body_decode(WORKER_CODING_DEFLATE, (char *)buf, n, CAP, &out, &why),
                     LC_EPROTO);
    assert_non_null(strstr(why, "dictionary"));
    lc_buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_coding_names), cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_raw_deflate),  cmocka_unit_test(test_empty),
        cmocka_unit_test(test_truncated),    cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_trailing),     cmocka_unit_test(test_gzip_members),
        cmocka_unit_test(test_bombs),        cmocka_unit_test(test_exact_cap),
        cmocka_unit_test(test_preset_dictionary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
