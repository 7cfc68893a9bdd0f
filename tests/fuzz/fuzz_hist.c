/* fuzz_hist.c — lc_hist's sparse decoding of arbitrary bytes; property: for
 * an accepted input, decode(encode(decode(x))) == decode(x), and a rejected
 * one leaves the histogram unchanged. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "lc_err.h"
#include "lc_hist.h"

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
    free(h);
    free(before);
    free(back);
    return 0;
}
