/* lc_text.c — UTF-8 validation and cleaning (lc_text.h). */
#include "lc_text.h"

#include <assert.h>
#include <string.h>

#include "lc_utf8.h"

/* Length of the valid UTF-8 sequence at s (1 to 4), or 0 when it is invalid
 * or cut short by the end of the string. */
static size_t sequence_length(const unsigned char *s)
{
    return lc_utf8_seq_len((const char *)s, strnlen((const char *)s, 4));
}

/* C0 controls, DEL and the C1 controls (U+0080..U+009F, encoded c2 80..c2 9f). */
static bool is_control(const unsigned char *s, size_t len)
{
    if (len == 1)
        return s[0] < 0x20 || s[0] == 0x7f;
    return len == 2 && s[0] == 0xc2 && s[1] < 0xa0;
}

bool lc_text_ok(const char *s, size_t max)
{
    assert(s != NULL);
    const unsigned char *p = (const unsigned char *)s;
    size_t used = 0;
    while (p[used] != '\0') {
        size_t len = sequence_length(p + used);
        if (len == 0 || is_control(p + used, len))
            return false;
        used += len;
        if (used > max)
            return false;
    }
    return true;
}

bool lc_text_clean(char *dst, size_t cap, const char *src)
{
    assert(dst != NULL && cap > 0 && src != NULL);
    const unsigned char *p = (const unsigned char *)src;
    size_t in = 0, out = 0;
    bool clean = true;
    while (p[in] != '\0') {
        size_t len = sequence_length(p + in);
        bool bad = len == 0 || is_control(p + in, len);
        size_t emit = bad ? 1 : len;
        if (out + emit >= cap) {
            clean = false; /* cut, at a character boundary */
            break;
        }
        if (bad)
            dst[out] = '?';
        else
            memcpy(dst + out, p + in, len);
        clean = clean && !bad;
        out += emit;
        in += bad ? 1 : len;
    }
    dst[out] = '\0';
    return clean;
}
