/* fuzz_util.h — what several fuzz targets share: a quiet log, a reader of
 * the fuzzer's bytes, and a property check that aborts (so libFuzzer and the
 * replay both report it with a stack). */
#ifndef TESTS_FUZZ_UTIL_H
#define TESTS_FUZZ_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_log.h"

/* A property the code under test must keep; unlike assert() it is checked
 * in every build type. */
#define FUZZ_CHECK(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz property violated: %s (%s:%d): ", #cond, __FILE__, __LINE__);    \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* Whether a finding still open is to be stepped over, so that fuzzing can go
 * past it: LC_FUZZ_IGNORE holds the names (e.g. "render-null,status-zero")
 * that the targets document where they check them. Never set in CI. */
static inline bool fuzz_ignored(const char *name)
{
    const char *list = getenv("LC_FUZZ_IGNORE");
    return list != NULL && strstr(list, name) != NULL;
}

/* Logging per input would dominate the run time: errors only. */
static inline void fuzz_quiet_log(void)
{
    static bool done;
    if (!done) {
        lc_log_set_level(LC_LOG_ERROR + 1);
        done = true;
    }
}

/* Consumes the fuzzer's bytes front to back; past the end everything is 0. */
typedef struct fuzz_in_s {
    const uint8_t *p;
    size_t n;
} fuzz_in_t;

static inline uint8_t fuzz_u8(fuzz_in_t *in)
{
    if (in->n == 0)
        return 0;
    in->n--;
    return *in->p++;
}

static inline uint16_t fuzz_u16(fuzz_in_t *in)
{
    uint16_t lo = fuzz_u8(in);
    return (uint16_t)(lo | (uint16_t)fuzz_u8(in) << 8);
}

/* Up to max bytes (fewer at the end); OUT: *len. */
static inline const uint8_t *fuzz_bytes(fuzz_in_t *in, size_t max, size_t *len)
{
    const uint8_t *p = in->p;
    *len = max < in->n ? max : in->n;
    in->p += *len;
    in->n -= *len;
    return p;
}

/* A NUL-terminated malloc'd copy of data[0..len). */
static inline char *fuzz_strndup(const uint8_t *data, size_t len)
{
    char *s = malloc(len + 1);
    if (s != NULL) {
        memcpy(s, data, len);
        s[len] = '\0';
    }
    return s;
}

/* A varint32 length prefix then that many bytes (a frame of lc_frame.h's
 * shape, though the length is not checked against LC_FRAME_MAX here).
 * Returns false once the input holds no whole record. */
static inline bool fuzz_record(fuzz_in_t *in, const uint8_t **body, size_t *len)
{
    uint32_t v = 0;
    for (int shift = 0; shift < 35; shift += 7) {
        if (in->n == 0)
            return false;
        uint8_t b = fuzz_u8(in);
        v |= (uint32_t)(b & 0x7f) << shift;
        if ((b & 0x80) == 0) {
            if (v > in->n)
                return false;
            *body = fuzz_bytes(in, v, len);
            return true;
        }
    }
    return false;
}

#endif
