/* fuzz_frame.c — lc_frame's reader fed the input in chunks of fuzzer-chosen
 * sizes, lc_frame_decode of each frame it delivers, and the property that a
 * decoded frame encodes again into one frame the reader accepts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "lc_err.h"
#include "lc_frame.h"

/* A small limit bounds memory per input; 1 in 8 inputs gets the real one. */
#define FUZZ_FRAME_MAX (64u << 10)
/* What on_frame returns to stop the feed: no LC_ code. */
#define STOP_FEED 100

typedef struct frames_s {
    size_t delivered;
    size_t reencoded;
} frames_t;

static int count_frame(void *arg, const uint8_t *body, size_t len)
{
    size_t *n = arg;
    (*n)++;
    return 0;
}

static int on_frame(void *arg, const uint8_t *body, size_t len)
{
    frames_t *fr = arg;
    fr->delivered++;
    Lc__Envelope *env = NULL;
    char err[160];
    if (lc_frame_decode(body, len, &env, err, sizeof err) != 0) {
        FUZZ_CHECK(env == NULL, "a failed decode left an envelope");
        return 0;
    }
    FUZZ_CHECK(env->msg_case != LC__ENVELOPE__MSG__NOT_SET, "decoded an empty envelope");
    uint8_t *out = NULL;
    size_t out_len = 0;
    if (lc_frame_encode(env, &out, &out_len) == 0) {
        lc_frame_reader_t r;
        size_t n = 0;
        lc_frame_reader_init(&r, LC_FRAME_MAX);
        int rv = lc_frame_reader_feed(&r, out, out_len, count_frame, &n);
        FUZZ_CHECK(rv == 0 && n == 1 && lc_frame_reader_pending(&r) == 0,
                   "a re-encoded frame does not read back as one frame (rv %d, %zu frames)", rv,
                   n);
        lc_frame_reader_close(&r);
        free(out);
        fr->reencoded++;
    }
    lc__envelope__free_unpacked(env, NULL);
    /* The callback may stop the feed: the reader must return what it said. */
    return fr->delivered == 1000 ? STOP_FEED : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in_t in = {data, size};
    uint8_t mode = fuzz_u8(&in);
    uint32_t rng = (uint32_t)fuzz_u8(&in) << 8 | fuzz_u8(&in);
    lc_frame_reader_t r;
    lc_frame_reader_init(&r, (mode & 7) == 0 ? LC_FRAME_MAX : FUZZ_FRAME_MAX);
    frames_t fr = {0};
    while (in.n > 0) {
        /* Chunk sizes: 1..mode-dependent, from a tiny LCG so splits vary. */
        rng = rng * 1103515245u + 12345u;
        size_t max = (mode & 0x80) ? 1 + (rng >> 16) % 7 : 1 + (rng >> 16) % 4096;
        size_t len;
        const uint8_t *chunk = fuzz_bytes(&in, max, &len);
        int rv = lc_frame_reader_feed(&r, chunk, len, on_frame, &fr);
        if (rv == STOP_FEED)
            break;
        FUZZ_CHECK(rv == 0 || rv == LC_EPROTO || rv == LC_ENOMEM, "feed returned %d", rv);
        if (rv != 0) {
            FUZZ_CHECK(r.errmsg[0] != '\0' || rv == LC_ENOMEM, "an error without a message");
            break;
        }
    }
    lc_frame_reader_pending(&r);
    lc_frame_reader_close(&r);
    return 0;
}
