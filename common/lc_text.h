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

#endif
