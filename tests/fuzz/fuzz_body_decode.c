/* fuzz_body_decode.c — hostile encoded bodies into worker/body_decode.c; properties: the
 * answer is 0, LC_EPROTO or LC_ETOOBIG (with a reason), never more than the cap decoded and
 * the buffer at most twice the cap, and decoding the same bytes again gives the same body.
 * Input: one byte (low 2 bits: gzip, deflate, br, or a Content-Encoding name to parse from the
 * rest up to a NUL; high 4 bits: the cap, 1 KiB to 1 MiB), then the encoded body. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "body_decode.h"
#include "fuzz_util.h"
#include "lc_err.h"

static const enum worker_coding codings[] = {WORKER_CODING_GZIP, WORKER_CODING_DEFLATE,
                                             WORKER_CODING_BR};

static void check_decode(enum worker_coding coding, const char *in, size_t len, size_t cap)
{
    lc_buf_t out = {0}, again = {0};
    const char *why = NULL, *why2 = NULL;
    int rv = worker_body_decode(coding, in, len, cap, &out, &why);
    FUZZ_CHECK(rv == 0 || rv == LC_EPROTO || rv == LC_ETOOBIG, "rv %d", rv);
    FUZZ_CHECK((rv == 0) == (why == NULL), "rv %d, why %s", rv, why ? why : "(none)");
    FUZZ_CHECK(rv != 0 || out.len <= cap, "decoded %zu bytes over the cap %zu", out.len, cap);
    FUZZ_CHECK(out.len <= cap + 1 && out.cap <= 2 * cap + 2, "len %zu, buffer %zu, cap %zu",
               out.len, out.cap, cap);
    int rv2 = worker_body_decode(coding, in, len, cap, &again, &why2);
    FUZZ_CHECK(rv2 == rv && (rv != 0 || (again.len == out.len &&
                                         memcmp(again.data, out.data, out.len) == 0)),
               "a second decode differs: %d vs %d", rv, rv2);
    lc_buf_free(&out);
    lc_buf_free(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t cap = (size_t)1024 << ((data[0] >> 4) % 11);
    const char *in = (const char *)data + 1;
    size_t len = size - 1;
    if ((data[0] & 3) == 3) {
        const char *nul = memchr(in, '\0', len);
        size_t n = nul ? (size_t)(nul - in) : len;
        enum worker_coding c = worker_coding_of(in, n);
        FUZZ_CHECK(c <= WORKER_CODING_UNKNOWN, "coding %d", (int)c);
        if (c == WORKER_CODING_UNKNOWN || nul == NULL)
            return 0;
        check_decode(c, nul + 1, len - n - 1, cap);
        return 0;
    }
    check_decode(codings[data[0] & 3], in, len, cap);
    return 0;
}
