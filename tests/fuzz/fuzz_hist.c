/* fuzz_hist.c — lc_hist's sparse decoding of arbitrary bytes; properties:
 * for an accepted input, decode(encode(decode(x))) == decode(x), and a
 * rejected one leaves the histogram unchanged; merging the input (split in
 * two) as encodings gives the bytes of the dense merge, and is refused
 * exactly when a half does not decode; the percentiles found while decoding
 * (lc_hist_decode_pass) are those of the decoded histogram. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "lc_err.h"
#include "lc_hist.h"

/* Both halves of the input as encodings: lc_hist_merge_encoded against
 * decoding both into one histogram and encoding it. */
static void check_merge_encoded(const uint8_t *data, size_t size, lc_hist_t *dense)
{
    size_t cut = size > 1 ? data[0] % size : 0;
    const uint8_t *a = data, *b = data + cut;
    size_t alen = cut, blen = size - cut;
    lc_hist_init(dense);
    bool ok = alen == 0 || lc_hist_decode_add(dense, a, alen) == 0;
    uint64_t first_total = dense->total;
    ok = ok && (blen == 0 || lc_hist_decode_add(dense, b, blen) == 0);
    bool overflow = dense->total < first_total; /* the dense sum wrapped */
    uint8_t *got = NULL, *want = NULL;
    size_t got_len = 0, want_len = 0;
    int rv = lc_hist_merge_encoded(a, alen, b, blen, &got, &got_len);
    if (!ok) {
        FUZZ_CHECK(rv == LC_EPROTO, "a merge of a bad encoding was accepted (%d)", rv);
        return;
    }
    FUZZ_CHECK(rv != LC_EPROTO || overflow, "a merge of two good encodings was refused");
    if (rv != 0)
        return; /* counts that overflow: refused, as they should be */
    FUZZ_CHECK(lc_hist_encode(dense, &want, &want_len) == 0, "encode failed");
    FUZZ_CHECK(got_len == want_len && memcmp(got, want, want_len) == 0,
               "merge_encoded (%zu bytes) differs from the dense merge (%zu)", got_len, want_len);
    free(got);
    free(want);
}

/* lc_hist_decode_pass with nothing to add to: accepted exactly when a decode into an empty
 * histogram is, and its percentiles are that histogram's. */
static void check_pass_percentiles(const uint8_t *data, size_t size, lc_hist_t *dense)
{
    static const double ps[] = {0, 10, 50, 66, 90, 99, 99.9, 99.99, 100};
    enum { N = sizeof ps / sizeof ps[0] };
    lc_hist_init(dense);
    int want = lc_hist_decode_add(dense, data, size);
    uint64_t got[N];
    lc_hist_pass_t pass = {.ps = ps, .n = N, .out = got};
    int rv = lc_hist_decode_pass(NULL, NULL, data, size, &pass);
    FUZZ_CHECK(rv == want, "decode_pass answered %d, decode_add %d", rv, want);
    if (rv != 0)
        return;
    FUZZ_CHECK(pass.total == dense->total, "decode_pass counted %llu of %llu",
               (unsigned long long)pass.total, (unsigned long long)dense->total);
    for (size_t i = 0; i < N; i++)
        FUZZ_CHECK(got[i] == lc_hist_percentile(dense, ps[i]), "percentile %g: %llu, not %llu",
                   ps[i], (unsigned long long)got[i],
                   (unsigned long long)lc_hist_percentile(dense, ps[i]));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Three histograms of ~20 KiB each: heap, not the fuzzer's stack. */
    lc_hist_t *h = malloc(sizeof *h), *before = malloc(sizeof *before), *back = malloc(sizeof *back);
    if (h == NULL || before == NULL || back == NULL)
        abort();
    lc_hist_init(h);
    /* Half the inputs decode onto a histogram that already holds values. */
    if (size > 0 && (data[0] & 1)) {
        lc_hist_record(h, 1);
        lc_hist_record(h, 150000);
    }
    memcpy(before, h, sizeof *h);
    int rv = lc_hist_decode_add(h, data, size);
    if (rv != 0) {
        FUZZ_CHECK(memcmp(h, before, sizeof *h) == 0, "a rejected decode (%d) changed h", rv);
    } else {
        uint8_t *enc = NULL;
        size_t enc_len = 0;
        FUZZ_CHECK(lc_hist_encode(h, &enc, &enc_len) == 0, "encode failed");
        lc_hist_init(back);
        rv = lc_hist_decode_add(back, enc, enc_len);
        FUZZ_CHECK(rv == 0, "an encoding of a decoded histogram is rejected (%d)", rv);
        FUZZ_CHECK(memcmp(back, h, sizeof *h) == 0, "decode(encode(decode(x))) != decode(x)");
        free(enc);
        uint64_t prev = 0;
        for (double p = 0; p <= 100; p += 12.5) {
            uint64_t v = lc_hist_percentile(h, p);
            FUZZ_CHECK(h->total == 0 || v >= prev, "percentiles decrease at p=%g", p);
            prev = v;
        }
        lc_hist_mean(h);
        lc_hist_merge(back, h);
    }
    check_merge_encoded(data, size, back);
    check_pass_percentiles(data, size, back);
    free(h);
    free(before);
    free(back);
    return 0;
}
