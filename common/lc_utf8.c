/* lc_utf8.c — UTF-8 validation (RFC 3629) and cleaning. */
#include "lc_utf8.h"

#include <assert.h>
#include <string.h>

size_t lc_utf8_seq_len(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    if (n == 0)
        return 0;
    if (u[0] < 0x80)
        return 1;
    size_t len;
    unsigned char lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
    if (u[0] >= 0xc2 && u[0] <= 0xdf) {
        len = 2;
    } else if (u[0] >= 0xe0 && u[0] <= 0xef) {
        len = 3;
        lo = u[0] == 0xe0 ? 0xa0 : 0x80; /* no overlong forms */
        hi = u[0] == 0xed ? 0x9f : 0xbf; /* no UTF-16 surrogates */
    } else if (u[0] >= 0xf0 && u[0] <= 0xf4) {
        len = 4;
        lo = u[0] == 0xf0 ? 0x90 : 0x80;
        hi = u[0] == 0xf4 ? 0x8f : 0xbf; /* nothing beyond U+10FFFF */
    } else {
        return 0;
    }
    if (n < len || u[1] < lo || u[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (u[i] < 0x80 || u[i] > 0xbf)
            return 0;
    return len;
}

size_t lc_utf8_clean(char *out, size_t outlen, const char *in, size_t inlen)
{
    static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */
    assert(outlen >= 1);
    size_t o = 0;
    for (size_t i = 0; i < inlen;) {
        size_t n = lc_utf8_seq_len(in + i, inlen - i);
        const char *piece = in + i;
        size_t plen = n;
        char space = ' ';
        if (n == 0) {
            piece = replacement;
            plen = sizeof replacement - 1;
            n = 1;
        } else if (n == 1 && ((unsigned char)in[i] < 0x20 || in[i] == 0x7f)) {
            piece = &space;
        }
        if (o + plen > outlen - 1)
            break;
        memcpy(out + o, piece, plen);
        o += plen;
        i += n;
    }
    out[o] = '\0';
    return o;
}
