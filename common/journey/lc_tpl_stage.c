/* lc_tpl_stage.c — percent-encoding, JSON escaping, base64 and byte counts for lc_tpl. */
#include "lc_tpl_stage.h"

#include <assert.h>
#include <stdbool.h>
#include <string.h>

#include "lc_utf8.h"
#include "lc_value.h"

static const char upper_hex[] = "0123456789ABCDEF";

static size_t times_or_max(size_t n, size_t k, size_t plus)
{
    return n > (SIZE_MAX - plus) / k ? SIZE_MAX : n * k + plus;
}

size_t lc_tpl_write_u64(char *dst, uint64_t v)
{
    char digits[20];
    size_t n = 0;
    do
        digits[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    for (size_t i = 0; i < n; i++)
        dst[i] = digits[n - 1 - i];
    return n;
}

/* Percent-encoding ---------------------------------------------------------------------------- */

static bool is_alnum(unsigned char ch)
{
    return (ch >= '0' && ch <= '9') || (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z');
}

static size_t percent_bound(size_t n)
{
    return times_or_max(n, 3, 0);
}

/* Copies the bytes keep() accepts, writes a space as '+' when plus_space, %XX the rest. */
static size_t percent_encode(const char *src, size_t n, char *dst, bool (*keep)(unsigned char),
                             bool plus_space)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)src[i];
        if (keep(ch)) {
            dst[w++] = (char)ch;
        } else if (ch == ' ' && plus_space) {
            dst[w++] = '+';
        } else {
            dst[w++] = '%';
            dst[w++] = upper_hex[ch >> 4];
            dst[w++] = upper_hex[ch & 0xF];
        }
    }
    return w;
}

/* RFC 3986's unreserved characters. */
static bool url_keeps(unsigned char ch)
{
    return is_alnum(ch) || ch == '-' || ch == '.' || ch == '_' || ch == '~';
}

/* WHATWG's application/x-www-form-urlencoded byte serializer's. */
static bool form_keeps(unsigned char ch)
{
    return is_alnum(ch) || ch == '*' || ch == '-' || ch == '.' || ch == '_';
}

static size_t url_write(const char *src, size_t n, uint8_t *type, char *dst)
{
    *type = LC_V_STRING;
    return percent_encode(src, n, dst, url_keeps, false);
}

static size_t form_write(const char *src, size_t n, uint8_t *type, char *dst)
{
    *type = LC_V_STRING;
    return percent_encode(src, n, dst, form_keeps, true);
}

/* JSON ---------------------------------------------------------------------------------------- */

static size_t json_escape_bound(size_t n)
{
    return times_or_max(n, 6, 0); /* \u00XX, or \ufffd for a byte that is not UTF-8 */
}

static size_t json_quote_bound(size_t n)
{
    return times_or_max(n, 6, 2);
}

static size_t control_escape(unsigned char ch, char *dst)
{
    static const char named[] = {['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n', ['\r'] = 'r',
                                 ['\t'] = 't'};
    dst[0] = '\\';
    if (ch < sizeof named && named[ch] != 0) {
        dst[1] = named[ch];
        return 2;
    }
    memcpy(dst + 1, "u00", 3);
    dst[4] = "0123456789abcdef"[ch >> 4];
    dst[5] = "0123456789abcdef"[ch & 0xF];
    return 6;
}

/* The inside of a JSON string: valid UTF-8 as it is, invalid bytes as U+FFFD. */
static size_t json_escape(const char *src, size_t n, char *dst)
{
    size_t w = 0;
    for (size_t i = 0; i < n;) {
        unsigned char ch = (unsigned char)src[i];
        size_t seq = ch < 0x80 ? 1 : lc_utf8_seq_len(src + i, n - i);
        if (seq > 1) {
            memcpy(dst + w, src + i, seq);
            w += seq;
            i += seq;
            continue;
        }
        i++;
        if (seq == 0) {
            memcpy(dst + w, "\\ufffd", 6);
            w += 6;
        } else if (ch == '"' || ch == '\\') {
            dst[w++] = '\\';
            dst[w++] = (char)ch;
        } else if (ch >= 0x20) {
            dst[w++] = (char)ch;
        } else {
            w += control_escape(ch, dst + w);
        }
    }
    return w;
}

/* Whatever the value was, the result is the text of a string's inside. */
static size_t json_str_write(const char *src, size_t n, uint8_t *type, char *dst)
{
    *type = LC_V_STRING;
    return json_escape(src, n, dst);
}

/* A string becomes a JSON string; numbers, booleans, null and JSON text already are JSON. */
static size_t json_write(const char *src, size_t n, uint8_t *type, char *dst)
{
    if (*type != LC_V_STRING) {
        if (n > 0)
            memcpy(dst, src, n);
        return n;
    }
    *type = LC_V_JSON;
    dst[0] = '"';
    size_t w = 1 + json_escape(src, n, dst + 1);
    dst[w++] = '"';
    return w;
}

/* base64 and len ------------------------------------------------------------------------------ */

static size_t base64_bound(size_t n)
{
    return times_or_max(n / 3 + (n % 3 != 0), 4, 0);
}

static size_t base64_write(const char *src, size_t n, uint8_t *type, char *dst)
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *u = (const unsigned char *)src;
    size_t w = 0, i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)u[i] << 16 | (uint32_t)u[i + 1] << 8 | u[i + 2];
        dst[w++] = alphabet[v >> 18];
        dst[w++] = alphabet[(v >> 12) & 63];
        dst[w++] = alphabet[(v >> 6) & 63];
        dst[w++] = alphabet[v & 63];
    }
    if (i < n) {
        uint32_t v = (uint32_t)u[i] << 16 | (i + 1 < n ? (uint32_t)u[i + 1] << 8 : 0);
        dst[w++] = alphabet[v >> 18];
        dst[w++] = alphabet[(v >> 12) & 63];
        dst[w++] = i + 1 < n ? alphabet[(v >> 6) & 63] : '=';
        dst[w++] = '=';
    }
    *type = LC_V_STRING;
    return w;
}

static size_t len_bound(size_t n)
{
    return 20;
}

static size_t len_write(const char *src, size_t n, uint8_t *type, char *dst)
{
    *type = LC_V_NUMBER;
    return lc_tpl_write_u64(dst, n);
}

/* Tables -------------------------------------------------------------------------------------- */

static const lc_tpl_stage_t filters[] = {
    [LC_TPL_FILTER_URL] = {"url", percent_bound, url_write},
    [LC_TPL_FILTER_JSON] = {"json", json_quote_bound, json_write},
    [LC_TPL_FILTER_BASE64] = {"base64", base64_bound, base64_write},
    [LC_TPL_FILTER_LEN] = {"len", len_bound, len_write},
};

static const lc_tpl_stage_t escapers[] = {
    [LC_TPL_JSON_STR] = {"json string", json_escape_bound, json_str_write},
    [LC_TPL_FORM] = {"form", percent_bound, form_write},
};

const lc_tpl_stage_t *lc_tpl_filter_find(const char *name, size_t n, uint8_t *id)
{
    assert(name != NULL && id != NULL);
    for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++) {
        if (strlen(filters[i].name) == n && memcmp(filters[i].name, name, n) == 0) {
            *id = (uint8_t)i;
            return &filters[i];
        }
    }
    return NULL;
}

const lc_tpl_stage_t *lc_tpl_filter(uint8_t id)
{
    assert(id < sizeof filters / sizeof filters[0]);
    return &filters[id];
}

const lc_tpl_stage_t *lc_tpl_escaper(lc_tpl_mode_t mode)
{
    assert(mode == LC_TPL_RAW || mode == LC_TPL_JSON_STR || mode == LC_TPL_FORM);
    return mode == LC_TPL_RAW ? NULL : &escapers[mode];
}
