/* lc_json_scan_path.c — compiles the JSONPath subset of lc_json_scan.h into segments. */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lc_err.h"
#include "lc_json_scan_internal.h"

/* Indices beyond this are refused: no body we read holds that many elements. */
#define INDEX_MAX INT32_MAX

typedef struct path_parser_s {
    const char *src;
    size_t len;
    size_t pos;
    lc_jpath_t *p;
    char *names_end; /* where the next decoded name goes in p->names */
    char *errmsg;
    size_t errlen;
} path_parser_t;

static int path_error(path_parser_t *pp, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int path_error(path_parser_t *pp, size_t at, const char *fmt, ...)
{
    char what[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return lc_errf(pp->errmsg, pp->errlen, LC_EINVAL, "%s: %s at offset %zu", pp->src, what, at);
}

static bool is_name_byte(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || c == '$' || c >= 0x80;
}

static jpath_seg_t *new_segment(path_parser_t *pp, uint8_t kind)
{
    lc_jpath_t *p = pp->p;
    assert(p->nseg < LC_JPATH_MAX_SEGMENTS);
    jpath_seg_t *seg = &p->seg[p->nseg++];
    seg->kind = kind;
    seg->wildcard_above = p->has_wildcard;
    if (kind == SEG_WILDCARD)
        p->has_wildcard = true;
    return seg;
}

/* After '.': a bare name or '*'. */
static int parse_dot(path_parser_t *pp)
{
    size_t start = pp->pos;
    if (start < pp->len && pp->src[start] == '.')
        return path_error(pp, start - 1, "recursive descent '..' is not supported");
    if (start < pp->len && pp->src[start] == '*') {
        pp->pos++;
        new_segment(pp, SEG_WILDCARD);
        return 0;
    }
    while (pp->pos < pp->len && is_name_byte((unsigned char)pp->src[pp->pos]))
        pp->pos++;
    if (pp->pos < pp->len && pp->src[pp->pos] != '.' && pp->src[pp->pos] != '[')
        return path_error(pp, pp->pos,
                          "unexpected character '%c' in a name (quote the name: ['...'])",
                          pp->src[pp->pos]);
    if (pp->pos == start)
        return path_error(pp, start, "expected a name or '*' after '.'");
    jpath_seg_t *seg = new_segment(pp, SEG_NAME);
    seg->name = pp->names_end;
    seg->name_len = pp->pos - start;
    memcpy(pp->names_end, pp->src + start, seg->name_len);
    pp->names_end += seg->name_len;
    return 0;
}

/* After "['" or "[\"": the name up to the same quote; '\' escapes a quote or itself. */
static int parse_quoted(path_parser_t *pp)
{
    char quote = pp->src[pp->pos++];
    jpath_seg_t *seg = new_segment(pp, SEG_NAME);
    seg->name = pp->names_end;
    for (;;) {
        if (pp->pos >= pp->len)
            return path_error(pp, pp->pos, "unterminated quoted name");
        char c = pp->src[pp->pos];
        if (c == quote)
            break;
        if (c == '\\') {
            char next = pp->pos + 1 < pp->len ? pp->src[pp->pos + 1] : '\0';
            if (next != '\'' && next != '"' && next != '\\')
                return path_error(pp, pp->pos, "'\\' in a quoted name escapes only ' \" or \\");
            c = next;
            pp->pos++;
        }
        *pp->names_end++ = c;
        pp->pos++;
    }
    seg->name_len = (size_t)(pp->names_end - seg->name);
    pp->pos++;
    return 0;
}

/* After '[': an optional '-' and decimal digits. */
static int parse_index(path_parser_t *pp)
{
    bool negative = pp->src[pp->pos] == '-';
    size_t start = pp->pos += negative;
    int64_t n = 0;
    while (pp->pos < pp->len && pp->src[pp->pos] >= '0' && pp->src[pp->pos] <= '9') {
        n = n * 10 + (pp->src[pp->pos++] - '0');
        if (n > INDEX_MAX)
            return path_error(pp, start, "index too large");
    }
    if (pp->pos == start)
        return path_error(pp, pp->pos, "expected digits after '-'");
    if (negative && n == 0)
        return path_error(pp, start, "-0 is not an index (the last element is -1)");
    jpath_seg_t *seg = new_segment(pp, SEG_INDEX);
    seg->index = negative ? -n : n;
    return 0;
}

/* After '[': a quoted name, an index or '*', then ']'. */
static int parse_bracket(path_parser_t *pp)
{
    char c = pp->pos < pp->len ? pp->src[pp->pos] : '\0';
    int rv;
    if (c == '*') {
        pp->pos++;
        new_segment(pp, SEG_WILDCARD);
        rv = 0;
    } else if (c == '\'' || c == '"') {
        rv = parse_quoted(pp);
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        rv = parse_index(pp);
    } else if (c == '?' || c == '(') {
        return path_error(pp, pp->pos, "filter and script expressions are not supported");
    } else {
        return path_error(pp, pp->pos, "expected a number, '*' or a quoted name");
    }
    if (rv != 0)
        return rv;
    c = pp->pos < pp->len ? pp->src[pp->pos] : '\0';
    if (c == ':')
        return path_error(pp, pp->pos, "slices are not supported");
    if (c == ',')
        return path_error(pp, pp->pos, "unions are not supported");
    if (c != ']')
        return path_error(pp, pp->pos, "expected ']'");
    pp->pos++;
    return 0;
}

static int parse_segments(path_parser_t *pp)
{
    if (pp->len == 0 || pp->src[0] != '$')
        return path_error(pp, 0, "a path starts with '$'");
    pp->pos = 1;
    while (pp->pos < pp->len) {
        if (pp->p->nseg == LC_JPATH_MAX_SEGMENTS)
            return path_error(pp, pp->pos, "more than 32 segments");
        char c = pp->src[pp->pos++];
        int rv;
        if (c == '.')
            rv = parse_dot(pp);
        else if (c == '[')
            rv = parse_bracket(pp);
        else
            return path_error(pp, pp->pos - 1, "expected '.' or '['");
        if (rv != 0)
            return rv;
    }
    return 0;
}

int lc_jpath_compile(lc_jpath_t **out, const char *src, char *errmsg, size_t errlen)
{
    assert(out != NULL && src != NULL);
    *out = NULL;
    size_t len = strlen(src);
    /* Decoded names are never longer than the source text they came from. */
    lc_jpath_t *p = calloc(1, sizeof *p + len + 1);
    if (p == NULL)
        return lc_errf(errmsg, errlen, LC_ENOMEM, "%s", lc_strerror(LC_ENOMEM));
    path_parser_t pp = {.src = src, .len = len, .p = p, .names_end = p->names,
                        .errmsg = errmsg, .errlen = errlen};
    int rv = parse_segments(&pp);
    if (rv != 0) {
        free(p);
        return rv;
    }
    *out = p;
    return 0;
}

void lc_jpath_free(lc_jpath_t *p)
{
    free(p);
}

bool lc_jpath_has_wildcard(const lc_jpath_t *p)
{
    assert(p != NULL);
    return p->has_wildcard;
}
