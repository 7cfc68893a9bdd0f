/* lc_text.h — worker text made safe to store and show (on lc_utf8): valid
 * UTF-8, no control characters, bounded in length. */
#ifndef LC_TEXT_H
#define LC_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* Whether s is at most max bytes of valid UTF-8 (no overlong forms, no
 * surrogates) without control characters (C0, DEL, C1). */
bool lc_text_ok(const char *s, size_t max);

/* Copies src into dst (cap bytes, NUL-terminated): every invalid byte and
 * control character becomes '?', and the copy is cut at a character
 * boundary. Returns true when nothing had to be replaced or cut. */
bool lc_text_clean(char *dst, size_t cap, const char *src);

/* The value of a hexadecimal digit (either case), or -1. */
static inline int lc_hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

#endif
