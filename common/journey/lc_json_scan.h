/* lc_json_scan.h — finds what a JSONPath subset selects in a JSON body, scanning it without a tree. */
#ifndef LC_JSON_SCAN_H
#define LC_JSON_SCAN_H

#include <stdbool.h>
#include <stddef.h>

#include "lc_buf.h"
#include "lc_value.h"

/* A path has at most this many segments after the '$'. */
#define LC_JPATH_MAX_SEGMENTS 32
/* A body nested deeper than this many arrays and objects is refused (LC_EINVAL). */
#define LC_JSON_MAX_DEPTH 256

/* A compiled path: immutable once compiled, so any number of threads may
 * scan with it at once. */
typedef struct lc_jpath_s lc_jpath_t;

/* One selected value. v.data points into the body: for a string the bytes
 * between its quotes, undecoded (escaped says whether a '\' appears in them,
 * i.e. whether lc_json_string_decode is needed); for any other type the
 * value's whole text (objects and arrays as LC_V_JSON). */
typedef struct lc_jmatch_s {
    lc_value_t v;
    bool escaped;
} lc_jmatch_t;

/* Called once per selected value in document order; returns false to stop
 * the scan (which then returns 0). */
typedef bool (*lc_jpath_match_cb)(void *ctx, const lc_jmatch_t *m);

/* Compiles src, a NUL-terminated path: '$' then up to 32 segments
 *   .name  ['name']  ["name"]  (a member; inside quotes '\' escapes ' " or \)
 *   [N]  [-N]  (an array element, counted from the end when negative)
 *   [*]  .*    (every element of an array, every member value of an object)
 * A name after '.' is letters, digits, '_', '-', '$' and bytes >= 0x80; any
 * other name needs the bracket form. OUT: *out, freed with lc_jpath_free.
 * Returns 0, LC_ENOMEM, or LC_EINVAL with errmsg saying what and where
 * ("$.items[: expected a number, '*' or a quoted name at offset 8"). */
int lc_jpath_compile(lc_jpath_t **out, const char *src, char *errmsg, size_t errlen);

void lc_jpath_free(lc_jpath_t *p);

/* Whether the path has a wildcard, i.e. can select more than one value. */
bool lc_jpath_has_wildcard(const lc_jpath_t *p);

/* Calls fn for each value p selects in body[0..len) (not NUL-terminated).
 * When an object has a member name twice, the first one is the one a name
 * segment selects. The scan stops as soon as no further value can be
 * selected, so a body is checked only as far as it was read, and in depth only
 * where the path goes: the members and elements of the containers it enters,
 * and the values it selects, are checked against RFC 8259's grammar (except
 * that the bytes of strings need not be UTF-8); a container it skips is read
 * only to find its end (strings to their closing quote, brackets counted).
 * Time is linear in len (one more pass over an array a negative index counts
 * from the end of), memory a few KB of stack.
 * Returns 0, or LC_EINVAL when the part read is not JSON, is cut short, or
 * nests deeper than LC_JSON_MAX_DEPTH; fn may have been called before that. */
int lc_jpath_scan(const lc_jpath_t *p, const char *body, size_t len, lc_jpath_match_cb fn,
                  void *ctx);

/* Appends the decoded form of a JSON string's raw text (the bytes between its
 * quotes): escapes including \uXXXX and surrogate pairs become UTF-8 (\u0000 a
 * NUL byte), other bytes are copied as they are. Returns 0, LC_ENOMEM, or
 * LC_EINVAL for a bad escape or a lone surrogate (out unchanged then). */
int lc_json_string_decode(const char *raw, size_t len, lc_buf_t *out);

/* Appends s[0..len) as a JSON string, quotes included: '"', '\' and control
 * characters escaped, each byte that is not part of valid UTF-8 replaced by
 * U+FFFD, so that the result is always valid JSON. Returns 0 or LC_ENOMEM
 * (out unchanged then). */
int lc_json_string_encode(const char *s, size_t len, lc_buf_t *out);

#endif
