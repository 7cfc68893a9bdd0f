/* lc_tpl.h — ${…} templates: compiled once per run (then read-only, shared by threads), rendered
 * per request into the caller's buffer. */
#ifndef LC_TPL_H
#define LC_TPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lc_buf.h"
#include "lc_value.h"

/* The language, in full:
 *   ${name}            a variable ([A-Za-z_][A-Za-z0-9_]*) or a feeder column (feeder.column),
 *                      at most LC_TPL_NAME_MAX characters, resolved through lc_tpl_names_t;
 *   ${user_id} ${iteration} ${now_ms} ${uuid} ${rand(a,b)}
 *                      built-ins, matched before any variable of the same name; rand draws a
 *                      uniform 64-bit signed integer in [a, b] (a <= b, literal integers);
 *                      uuid is a random version 4 UUID in lowercase;
 *   ${x | url | len}   filters, applied left to right (spaces allowed around names and '|'):
 *                      url     percent-encodes every byte but RFC 3986's unreserved ones;
 *                      json    a string as a quoted, escaped JSON string; other types as they are
 *                          (so json is idempotent: its result is JSON text);
 *                      base64  standard alphabet, padded;
 *                      len     the byte length, as a number.
 *   $${                a literal "${": before a '{', each "$$" stands for one '$' ("$$${x}" is
 *                      a '$' and then x); a '$' anywhere else is itself ("$$5" stays "$$5").
 * The mode escapes the whole rendering, literals (at compile time) and values alike. */
typedef enum lc_tpl_mode_e {
    LC_TPL_RAW,      /* as is (CR and LF too: a caller rendering a header checks for them) */
    LC_TPL_JSON_STR, /* the inside of a JSON string: " \ and controls escaped, bad UTF-8 -> U+FFFD */
    LC_TPL_FORM,     /* an application/x-www-form-urlencoded value: space as +, the rest %XX */
} lc_tpl_mode_t;

#define LC_TPL_SOURCE_MAX (1 << 20) /* a scenario's own limit: a request body may be that big */
#define LC_TPL_PARTS_MAX 256  /* literal runs and ${…} expressions */
#define LC_TPL_NAME_MAX 64
#define LC_TPL_FILTERS_MAX 8  /* per expression */

typedef struct lc_tpl_s lc_tpl_t;

/* Compile-time name resolution: resolve returns the slot (>= 0) of the variable or feeder
 * column name[0..len) (not NUL-terminated), or -1 when there is no such name. */
typedef struct lc_tpl_names_s {
    int (*resolve)(void *ctx, const char *name, size_t len);
    void *ctx;
} lc_tpl_names_t;

/* What a rendering reads; built by the engine for each request, used by one thread. */
typedef struct lc_tpl_env_s {
    /* Whether the variable of slot is set; OUT: its value, which must not point into the
     * buffer being rendered into (it may move as that buffer grows). */
    bool (*get)(void *ctx, int slot, lc_value_t *out);
    void *ctx;
    uint64_t user_id;     /* ${user_id} */
    uint64_t iteration;   /* ${iteration} */
    uint64_t now_ms;      /* ${now_ms}: Unix time in milliseconds */
    uint64_t *rng;        /* lc_rng.h state for rand and uuid, advanced in place */
    const char **missing; /* OUT, may be NULL: on LC_ENOTFOUND, the unset variable's name
                           * (NUL-terminated, owned by the template) */
} lc_tpl_env_t;

/* Compiles src[0..len) (any bytes) for mode; names may be NULL when no variable may be used.
 * OUT: *out, freed with lc_tpl_free. Returns 0, LC_ENOMEM, LC_ETOOBIG (over a limit above) or
 * LC_EINVAL, with errmsg saying what and where: "${foo|bar}: unknown filter bar",
 * "unknown variable ${x}", "unterminated ${ at offset 4". */
int lc_tpl_compile(lc_tpl_t **out, const char *src, size_t len, lc_tpl_mode_t mode,
                   const lc_tpl_names_t *names, char *errmsg, size_t errlen);
void lc_tpl_free(lc_tpl_t *t);

/* Appends the rendering of t to out: a literal-only template is one append, and nothing is
 * allocated but out's growth. Returns 0; LC_ENOTFOUND when a variable is unset (out unchanged,
 * *env->missing names it); LC_ENOMEM (out unchanged). */
int lc_tpl_render(const lc_tpl_t *t, const lc_tpl_env_t *env, lc_buf_t *out);

/* The source as given to lc_tpl_compile, NUL-terminated. */
const char *lc_tpl_source(const lc_tpl_t *t);
/* Whether t holds any ${…}. */
bool lc_tpl_dynamic(const lc_tpl_t *t);
/* Whether two renderings of t with the same variables are alike: no ${now_ms}, ${uuid} or
 * ${rand(a,b)}. */
bool lc_tpl_repeatable(const lc_tpl_t *t);
/* Whether t is exactly one ${variable} without filters (not a built-in); OUT: *slot. A JSON
 * body keeps such a variable's JSON type. */
bool lc_tpl_single_var(const lc_tpl_t *t, int *slot);
/* The slots t reads, each once, in order of first use: writes up to max of them and returns
 * how many there are (more than max: the list was cut). */
size_t lc_tpl_uses(const lc_tpl_t *t, int *slots, size_t max);

/* Whether t is exactly one ${…} expression (a variable or a built-in, filters allowed). */
bool lc_tpl_is_expression(const lc_tpl_t *t);
/* The value of such a t, typed (a variable's type, or what the last filter makes of it), as
 * lc_tpl_render would write it. A variable without filters is not copied; any other value is
 * written into scratch when it fits cap bytes, else at the end of *spill (grown, not counted in
 * its len: valid until spill is used again; the caller frees spill). OUT: *value. Returns 0,
 * LC_ENOTFOUND (as lc_tpl_render) or LC_ENOMEM. */
int lc_tpl_value(const lc_tpl_t *t, const lc_tpl_env_t *env, char *scratch, size_t cap,
                 lc_buf_t *spill, lc_value_t *value);

/* Length of the name at s[0..n) ([A-Za-z_][A-Za-z0-9_]*, optionally '.' and another such
 * word), however long; 0 when s does not start with one. */
size_t lc_tpl_name_len(const char *s, size_t n);

#endif
