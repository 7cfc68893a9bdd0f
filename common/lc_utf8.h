/* lc_utf8.h — UTF-8 validation and cleaning of text that came from the network,
 * so that what we hand to jansson or print in a label is always valid. */
#ifndef LC_UTF8_H
#define LC_UTF8_H

#include <stddef.h>

/* Length (1-4) of the well-formed UTF-8 sequence at s[0..n), or 0 when the
 * bytes there are not one (stray continuation, overlong form, surrogate,
 * beyond U+10FFFF, or cut short by n). */
size_t lc_utf8_seq_len(const char *s, size_t n);

/* Copies in[0..inlen) to out as valid UTF-8 and NUL-terminates it: each
 * invalid byte becomes U+FFFD, control characters (below 0x20 and 0x7f) a
 * space, and the copy stops at the last whole code point that fits in
 * outlen - 1 bytes. Returns the bytes written (without the NUL); outlen must
 * be at least 1. */
size_t lc_utf8_clean(char *out, size_t outlen, const char *in, size_t inlen);

#endif
