/* lc_json_scan_internal.h — what lc_json_scan's files share: the compiled path, cursor, readers. */
#ifndef LC_JSON_SCAN_INTERNAL_H
#define LC_JSON_SCAN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lc_json_scan.h"

enum jpath_seg_kind {
    SEG_NAME,     /* .name ['name']: the first member of that name */
    SEG_INDEX,    /* [N] [-N] */
    SEG_WILDCARD, /* [*] .* */
};

typedef struct jpath_seg_s {
    uint8_t kind;        /* enum jpath_seg_kind */
    bool wildcard_above; /* a segment before this one is a wildcard */
    int64_t index;       /* SEG_INDEX: N, negative from the end (-1 the last) */
    const char *name;    /* SEG_NAME: decoded bytes (not NUL-terminated) */
    size_t name_len;
} jpath_seg_t;

struct lc_jpath_s {
    size_t nseg;
    bool has_wildcard;
    jpath_seg_t seg[LC_JPATH_MAX_SEGMENTS];
    char names[]; /* the bytes the segments' names point to */
};

/* A position in a body. */
typedef struct jcursor_s {
    const char *s;
    size_t len;
    size_t pos;
} jcursor_t;

static inline void jcursor_skip_ws(jcursor_t *c)
{
    while (c->pos < c->len) {
        char ch = c->s[c->pos];
        if (ch != ' ' && ch != '\n' && ch != '\r' && ch != '\t')
            return;
        c->pos++;
    }
}

/* The byte at the cursor, or -1 at the end of the body. */
static inline int jcursor_peek(const jcursor_t *c)
{
    return c->pos < c->len ? (unsigned char)c->s[c->pos] : -1;
}

/* Readers that check (lc_json_scan_token.c). Each moves the cursor past what
 * it read and returns 0, or LC_EINVAL with the cursor anywhere. depth is the
 * number of containers open around the value. */

/* At a '"'. OUT: *escaped, whether the string holds a '\'. */
int jscan_string(jcursor_t *c, bool *escaped);
/* A string, number, true, false or null (top_level: the body may end right
 * after a number). OUT: *type (enum lc_vtype), *escaped. */
int jscan_scalar(jcursor_t *c, bool top_level, uint8_t *type, bool *escaped);
/* Any value, containers checked throughout. */
int jscan_check_value(jcursor_t *c, int depth);
/* At a member: past its name and ':' to its value. OUT: the name's raw text. */
int jscan_member_name(jcursor_t *c, const char **name, size_t *name_len, bool *escaped);

/* The fast skip (lc_json_scan_skip.c): from outside any string, to just past
 * the close that leaves open containers (1: the one the cursor is in; 0: the
 * cursor is at the '[' or '{' of the container to skip), counting brackets
 * outside strings only. Returns 0, or LC_EINVAL at the end of the body or when
 * depth + open containers would pass LC_JSON_MAX_DEPTH. */
int jskip_containers(jcursor_t *c, int depth, int open);

/* The value of the four hex digits at raw[i..i+4) (after a "\u"), or -1
 * when they are not four hex digits or the text ends first. i <= len. */
int32_t jstring_read_hex4(const char *raw, size_t len, size_t i);

/* Decodes the one character (a byte or a whole escape) at raw[*i] of a JSON
 * string's raw text into out, advancing *i past it. Returns the bytes written
 * (1 to 4), or 0 for a bad escape or a lone surrogate. i < len. */
size_t jstring_decode_one(const char *raw, size_t len, size_t *i, char out[4]);

#endif
