/* lc_json_scan_string.c — JSON string escapes: decoding the scanner's raw strings, encoding text. */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "lc_err.h"
#include "lc_json_scan_internal.h"
#include "lc_text.h"
#include "lc_utf8.h"

int32_t jstring_read_hex4(const char *raw, size_t len, size_t i)
{
    if (len - i < 4)
        return -1;
    int32_t v = 0;
    for (size_t k = 0; k < 4; k++) {
        int h = lc_hex_digit(raw[i + k]);
        if (h < 0)
            return -1;
        v = v << 4 | h;
    }
    return v;
}

static size_t utf8_put(uint32_t cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* raw[*i] is just after "\u": one code point, a surrogate pair taking a second "\u". */
static size_t decode_unicode(const char *raw, size_t len, size_t *i, char out[4])
{
    int32_t cp = jstring_read_hex4(raw, len, *i);
    if (cp < 0 || (cp >= 0xdc00 && cp <= 0xdfff))
        return 0;
    *i += 4;
    if (cp >= 0xd800 && cp <= 0xdbff) {
        if (len - *i < 2 || raw[*i] != '\\' || raw[*i + 1] != 'u')
            return 0;
        int32_t low = jstring_read_hex4(raw, len, *i + 2);
        if (low < 0xdc00 || low > 0xdfff)
            return 0;
        *i += 6;
        cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
    }
    return utf8_put((uint32_t)cp, out);
}

size_t jstring_decode_one(const char *raw, size_t len, size_t *i, char out[4])
{
    assert(*i < len);
    char c = raw[(*i)++];
    if (c != '\\') {
        out[0] = c;
        return 1;
    }
    if (*i == len)
        return 0;
    c = raw[(*i)++];
    switch (c) {
    case '"': case '\\': case '/': out[0] = c; return 1;
    case 'b': out[0] = '\b'; return 1;
    case 'f': out[0] = '\f'; return 1;
    case 'n': out[0] = '\n'; return 1;
    case 'r': out[0] = '\r'; return 1;
    case 't': out[0] = '\t'; return 1;
    case 'u': return decode_unicode(raw, len, i, out);
    default: return 0;
    }
}

int lc_json_string_decode(const char *raw, size_t len, lc_buf_t *out)
{
    assert(out != NULL && (raw != NULL || len == 0));
    /* Every escape decodes to fewer bytes than its text, so len is enough room. */
    if (lc_buf_reserve(out, len) != 0)
        return LC_ENOMEM;
    char *dst = out->data + out->len;
    size_t i = 0;
    while (i < len) {
        const char *bs = memchr(raw + i, '\\', len - i);
        size_t run = bs != NULL ? (size_t)(bs - (raw + i)) : len - i;
        memcpy(dst, raw + i, run);
        dst += run;
        i += run;
        if (i == len)
            break;
        size_t n = jstring_decode_one(raw, len, &i, dst);
        if (n == 0) {
            out->data[out->len] = '\0';
            return LC_EINVAL;
        }
        dst += n;
    }
    out->len = (size_t)(dst - out->data);
    out->data[out->len] = '\0';
    return 0;
}

/* The escape of a byte below 0x20, '"' or '\' into esc; its length. */
static size_t escape_byte(unsigned char c, char esc[6])
{
    static const char hex[] = "0123456789abcdef";
    const char *named = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\n' ? "\\n" :
                        c == '\r' ? "\\r" : c == '\t' ? "\\t" : c == '\b' ? "\\b" :
                        c == '\f' ? "\\f" : NULL;
    if (named != NULL) {
        memcpy(esc, named, 2);
        return 2;
    }
    memcpy(esc, "\\u00", 4);
    esc[4] = hex[c >> 4];
    esc[5] = hex[c & 0xf];
    return 6;
}

/* Appends s[0..len) escaped, without quotes. */
static int encode_body(const char *s, size_t len, lc_buf_t *out)
{
    size_t i = 0, run = 0; /* s[run..i) is copied as it is */
    while (i < len) {
        unsigned char c = (unsigned char)s[i];
        size_t seq = c >= 0x80 ? lc_utf8_seq_len(s + i, len - i)
                               : (size_t)(c >= 0x20 && c != '"' && c != '\\');
        if (seq > 0) {
            i += seq;
            continue;
        }
        char esc[6];
        size_t n = c < 0x80 ? escape_byte(c, esc) : 3;
        if (c >= 0x80)
            memcpy(esc, "\xef\xbf\xbd", 3); /* U+FFFD for a byte that is not UTF-8 */
        if (lc_buf_append(out, s + run, i - run) != 0 || lc_buf_append(out, esc, n) != 0)
            return LC_ENOMEM;
        run = ++i;
    }
    return lc_buf_append(out, s + run, i - run);
}

int lc_json_string_encode(const char *s, size_t len, lc_buf_t *out)
{
    assert(out != NULL && (s != NULL || len == 0));
    size_t start = out->len;
    int rv = lc_buf_append(out, "\"", 1);
    if (rv == 0)
        rv = encode_body(s, len, out);
    if (rv == 0)
        rv = lc_buf_append(out, "\"", 1);
    if (rv != 0 && out->data != NULL) {
        out->len = start;
        out->data[start] = '\0';
    }
    return rv;
}
