/* lc_text.c — UTF-8 validation and cleaning (lc_text.h). */
#include "lc_text.h"

#include <assert.h>
#include <stdint.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (1 to 4), or 0 when it is invalid
 * or cut short by the end of the string. */
static size_t sequence_length(const unsigned char *s)
{
    unsigned char c = s[0];
    size_t len;
    uint32_t cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        len = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        len = 4, cp = c & 0x07;
    else
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0; /* also stops at the terminating NUL */
        cp = cp << 6 | (s[i] & 0x3f);
    }
    bool overlong = (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
    if (overlong || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
        return 0;
    return len;
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
