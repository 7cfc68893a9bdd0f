/* decode_frame.h — for the worker's unit tests: the one Envelope a whole
 * frame (length prefix and body) carries, as the master's reader sees it. */
#ifndef TEST_DECODE_FRAME_H
#define TEST_DECODE_FRAME_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lc_frame.h"

static int grab_frame(void *arg, const uint8_t *body, size_t len)
{
    Lc__Envelope **out = arg;
    char err[160];
    assert_int_equal(lc_frame_decode(body, len, out, err, sizeof err), 0);
    return 0;
}

/* Free the result with lc__envelope__free_unpacked(env, NULL). */
static Lc__Envelope *decode_frame(const uint8_t *frame, size_t len)
{
    lc_frame_reader_t r;
    Lc__Envelope *env = NULL;
    lc_frame_reader_init(&r, LC_FRAME_MAX);
    assert_int_equal(lc_frame_reader_feed(&r, frame, len, grab_frame, &env), 0);
    assert_int_equal(lc_frame_reader_pending(&r), 0);
    lc_frame_reader_close(&r);
    assert_non_null(env);
    return env;
}

#endif
