/* lc_json_scan_token.c — the scan's checking readers: strings, numbers and
 * literals by RFC 8259's grammar, and whole containers with an explicit stack. */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "lc_err.h"
#include "lc_json_scan_internal.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Scalars ---------------------------------------------------------------- */

static bool is_string_special(unsigned char ch)
{
    return ch == '"' || ch == '\\' || ch < 0x20;
}

#if defined(__SSE2__)
/* The offset of the first byte at or after pos that is '"', '\' or below
 * 0x20 (where a string's scan must look), len when there is none. */
static size_t plain_run_end(const char *s, size_t pos, size_t len)
{
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    const __m128i control_max = _mm_set1_epi8(0x1f);
    while (len - pos >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + pos));
        __m128i control = _mm_cmpeq_epi8(_mm_max_epu8(v, control_max), control_max);
        __m128i quotes = _mm_cmpeq_epi8(v, quote), backslashes = _mm_cmpeq_epi8(v, backslash);
        __m128i hit = _mm_or_si128(_mm_or_si128(quotes, backslashes), control);
        int mask = _mm_movemask_epi8(hit);
        if (mask != 0)
            return pos + (size_t)__builtin_ctz((unsigned)mask);
        pos += 16;
    }
    while (pos < len && !is_string_special((unsigned char)s[pos]))
        pos++;
    return pos;
}
#else
#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* Whether any of the 8 bytes in w is '"', '\' or below 0x20 (a classic
 * zero-byte test, per byte in parallel). */
static bool word_has_special(uint64_t w)
{
    uint64_t quote = w ^ (ONES * '"'), backslash = w ^ (ONES * '\\');
    uint64_t found = ((quote - ONES) & ~quote) | ((backslash - ONES) & ~backslash) |
                     ((w - ONES * 0x20) & ~w);
    return (found & HIGHS) != 0;
}

static size_t plain_run_end(const char *s, size_t pos, size_t len)
{
    while (len - pos >= 8) {
        uint64_t w;
        memcpy(&w, s + pos, 8);
        if (word_has_special(w))
            break;
        pos += 8;
    }
    while (pos < len && !is_string_special((unsigned char)s[pos]))
        pos++;
    return pos;
}
#endif

/* The escape at s[pos] (a '\'): checks its form; returns its length or 0. */
static size_t escape_len(const char *s, size_t len, size_t pos)
{
    if (len - pos < 2)
        return 0;
    switch (s[pos + 1]) {
    case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
        return 2;
    case 'u':
        return jstring_read_hex4(s, len, pos + 2) >= 0 ? 6 : 0;
    default:
        return 0;
    }
}

int jscan_string(jcursor_t *c, bool *escaped)
{
    assert(jcursor_peek(c) == '"');
    const char *s = c->s;
    size_t pos = c->pos + 1, len = c->len;
    bool esc = false;
    for (;;) {
        pos = plain_run_end(s, pos, len);
        if (pos >= len)
            return LC_EINVAL;
        unsigned char ch = (unsigned char)s[pos];
        if (ch == '"')
            break;
        if (ch < 0x20)
            return LC_EINVAL;
        size_t n = escape_len(s, len, pos);
        if (n == 0)
            return LC_EINVAL;
        esc = true;
        pos += n;
    }
    c->pos = pos + 1;
    *escaped = esc;
    return 0;
}

static bool is_digit(int ch)
{
    return ch >= '0' && ch <= '9';
}

static void skip_digits(jcursor_t *c)
{
    while (is_digit(jcursor_peek(c)))
        c->pos++;
}

/* What may follow a number or a literal: inside a container a delimiter (the
 * body cannot end there), at the top level also the end. */
static int check_scalar_end(const jcursor_t *c, bool top_level)
{
    int ch = jcursor_peek(c);
    if (ch < 0)
        return top_level ? 0 : LC_EINVAL;
    return ch == ',' || ch == ']' || ch == '}' || ch == ' ' || ch == '\n' || ch == '\r' ||
                   ch == '\t' ? 0 : LC_EINVAL;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int scan_number(jcursor_t *c, bool top_level)
{
    if (jcursor_peek(c) == '-')
        c->pos++;
    if (jcursor_peek(c) == '0')
        c->pos++;
    else if (is_digit(jcursor_peek(c)))
        skip_digits(c);
    else
        return LC_EINVAL;
    if (jcursor_peek(c) == '.') {
        c->pos++;
        if (!is_digit(jcursor_peek(c)))
            return LC_EINVAL;
        skip_digits(c);
    }
    if (jcursor_peek(c) == 'e' || jcursor_peek(c) == 'E') {
        c->pos++;
        if (jcursor_peek(c) == '+' || jcursor_peek(c) == '-')
            c->pos++;
        if (!is_digit(jcursor_peek(c)))
            return LC_EINVAL;
        skip_digits(c);
    }
    return check_scalar_end(c, top_level);
}

static int scan_literal(jcursor_t *c, const char *word, size_t n, bool top_level)
{
    if (c->len - c->pos < n || memcmp(c->s + c->pos, word, n) != 0)
        return LC_EINVAL;
    c->pos += n;
    return check_scalar_end(c, top_level);
}

int jscan_scalar(jcursor_t *c, bool top_level, uint8_t *type, bool *escaped)
{
    switch (jcursor_peek(c)) {
    case '"': *type = LC_V_STRING; return jscan_string(c, escaped);
    case 't': *type = LC_V_BOOL; return scan_literal(c, "true", 4, top_level);
    case 'f': *type = LC_V_BOOL; return scan_literal(c, "false", 5, top_level);
    case 'n': *type = LC_V_NULL; return scan_literal(c, "null", 4, top_level);
    default: *type = LC_V_NUMBER; return scan_number(c, top_level);
    }
}

/* Containers, checked --------------------------------------------------------------- */

/* Which of the open containers are objects, one bit per level. */
typedef struct nesting_s {
    uint64_t is_object[LC_JSON_MAX_DEPTH / 64];
    int n;
} nesting_t;

static bool nest_push(nesting_t *nest, int base_depth, bool is_object)
{
    if (base_depth + nest->n >= LC_JSON_MAX_DEPTH)
        return false;
    uint64_t bit = 1ULL << (nest->n % 64);
    if (is_object)
        nest->is_object[nest->n / 64] |= bit;
    else
        nest->is_object[nest->n / 64] &= ~bit;
    nest->n++;
    return true;
}

static bool nest_top_is_object(const nesting_t *nest)
{
    int i = nest->n - 1;
    return (nest->is_object[i / 64] >> (i % 64)) & 1;
}

/* After a member's or element's value: ',' (then true, positioned at the next
 * member or element) or the close of the innermost container (popped). */
static int after_value(jcursor_t *c, nesting_t *nest, bool *more)
{
    jcursor_skip_ws(c);
    int ch = jcursor_peek(c);
    if (ch == ',') {
        c->pos++;
        jcursor_skip_ws(c);
        *more = true;
        return 0;
    }
    if (ch != (nest_top_is_object(nest) ? '}' : ']'))
        return LC_EINVAL;
    c->pos++;
    nest->n--;
    *more = false;
    return 0;
}

int jscan_member_name(jcursor_t *c, const char **name, size_t *name_len, bool *escaped)
{
    size_t start = c->pos + 1;
    if (jcursor_peek(c) != '"' || jscan_string(c, escaped) != 0)
        return LC_EINVAL;
    *name = c->s + start;
    *name_len = c->pos - 1 - start;
    jcursor_skip_ws(c);
    if (jcursor_peek(c) != ':')
        return LC_EINVAL;
    c->pos++;
    jcursor_skip_ws(c);
    return 0;
}

/* Reads to the end of the container just opened, checking all of it; the
 * container has depth open ones around it. */
static int check_rest(jcursor_t *c, int depth, bool is_object)
{
    nesting_t nest = {.n = 0};
    if (!nest_push(&nest, depth, is_object))
        return LC_EINVAL;
    bool after = false; /* just after a value, not at one */
    jcursor_skip_ws(c);
    if (jcursor_peek(c) == (is_object ? '}' : ']')) {
        c->pos++;
        return 0;
    }
    while (nest.n > 0) {
        int rv;
        if (after) {
            bool more;
            if ((rv = after_value(c, &nest, &more)) != 0)
                return rv;
            after = !more;
            continue;
        }
        const char *name;
        size_t name_len;
        bool escaped;
        if (nest_top_is_object(&nest) &&
            (rv = jscan_member_name(c, &name, &name_len, &escaped)) != 0)
            return rv;
        int ch = jcursor_peek(c);
        if (ch == '{' || ch == '[') {
            c->pos++;
            if (!nest_push(&nest, depth, ch == '{'))
                return LC_EINVAL;
            jcursor_skip_ws(c);
            if (jcursor_peek(c) == (ch == '{' ? '}' : ']')) {
                c->pos++;
                nest.n--;
                after = true;
            }
            continue;
        }
        uint8_t type;
        if ((rv = jscan_scalar(c, false, &type, &escaped)) != 0)
            return rv;
        after = true;
    }
    return 0;
}

int jscan_check_value(jcursor_t *c, int depth)
{
    int ch = jcursor_peek(c);
    if (ch == '{' || ch == '[') {
        c->pos++;
        return check_rest(c, depth, ch == '{');
    }
    uint8_t type;
    bool escaped;
    return jscan_scalar(c, depth == 0, &type, &escaped);
}
