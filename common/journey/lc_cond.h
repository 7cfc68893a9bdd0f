/* lc_cond.h — the condition language of `if` and `while`: compiled once per run (then read-only,
 * shared by threads), evaluated per iteration without allocating in the common case. */
#ifndef LC_COND_H
#define LC_COND_H

#include <stdbool.h>
#include <stddef.h>

#include "lc_tpl.h"

/* The language (not Turing-complete: no loops, no assignment, no calls but these):
 *   expr    := or
 *   or      := and ('||' and)*
 *   and     := not ('&&' not)*
 *   not     := '!' not | cmp
 *   cmp     := operand (('=='|'!='|'<'|'<='|'>'|'>=') operand)?   (no chains: a < b < c fails)
 *   operand := '(' expr ')' | number | 'string' | "string" | true | false
 *            | ${…}                      an lc_tpl expression, filters included: ${name|len}
 *            | exists(name) | exists(${name})
 *            | contains(operand, operand)
 *            | rand()                     a uniform double in [0, 1)
 * Spaces, tabs, CR and LF may stand between tokens. A condition in parentheses is an operand
 * whose text is "true" or "false": (a < b) == true.
 * Numbers are decimal: [+-]?(D+(.D*)?|.D+)([eE][+-]?D+)? (no hex, inf or nan). Strings take the
 * escapes \' \" and \\ only, and may not hold "${" (write ${x} outside quotes to use a value).
 * Comparison is numeric when both sides' text is such a number as a whole (integers exactly,
 * at any length up to LC_COND_NUMBER_MAX bytes; others as doubles), else bytewise (memcmp,
 * then the shorter first): "10" > "9" is true, "abc" < "abd" is true.
 * An operand alone is true when it is the boolean true, a number other than 0 (by type: a
 * number literal, rand(), a JSON number, a numeric built-in or |len), or a string or JSON text
 * that is not empty; false for false, 0, null and "" (the strings "false" and "0" are true).
 * contains(a, b) is whether b's bytes occur in a's. exists(x) is whether the variable is set;
 * any other use of an unset variable fails the evaluation (&& and || stop early, so
 * "exists(x) && ${x} > 0" never fails). */

#define LC_COND_SOURCE_MAX 1024
#define LC_COND_DEPTH_MAX 16  /* nested '(' '!' and function calls */
#define LC_COND_NODES_MAX 64  /* operands and operators */
#define LC_COND_NUMBER_MAX 128 /* a longer text is compared as a string */

typedef struct lc_cond_s lc_cond_t;

/* Compiles src[0..len); every ${…} and exists() name is resolved through names (may be NULL
 * when none may be used). OUT: *out, freed with lc_cond_free. Returns 0, LC_ENOMEM, LC_ETOOBIG
 * (over a limit above) or LC_EINVAL, with errmsg naming the source, what and where:
 * "${count} > : expected an operand at offset 11". */
int lc_cond_compile(lc_cond_t **out, const char *src, size_t len, const lc_tpl_names_t *names,
                    char *errmsg, size_t errlen);
void lc_cond_free(lc_cond_t *c);

/* Evaluates c. OUT: *out. Returns 0; LC_ENOTFOUND when a variable read outside exists() is
 * unset (*env->missing names it); LC_ENOMEM. Values longer than a small stack buffer are
 * copied to the heap and freed before it returns. */
int lc_cond_eval(const lc_cond_t *c, const lc_tpl_env_t *env, bool *out);

/* The slots c reads in ${…} operands (not those only inside exists()), each once: writes up
 * to max of them and returns how many there are. */
size_t lc_cond_uses(const lc_cond_t *c, int *slots, size_t max);
/* The source as given to lc_cond_compile, NUL-terminated. */
const char *lc_cond_source(const lc_cond_t *c);

#endif
