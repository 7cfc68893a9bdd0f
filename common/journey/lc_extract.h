/* lc_extract.h — compiled extractors: a value out of a response body by JSONPath, regex or bounds. */
#ifndef LC_EXTRACT_H
#define LC_EXTRACT_H

#include <stddef.h>
#include <stdint.h>

#include "lc_buf.h"
#include "lc_value.h"

/* Which of the matches the value is. */
enum lc_pick {
    LC_PICK_FIRST,
    LC_PICK_LAST,
    LC_PICK_RANDOM, /* uniform over the matches, from the caller's generator */
    LC_PICK_ALL,    /* a JSON array of them all (LC_V_JSON): json matches as their JSON text
                     * came, regex and between ones as JSON strings (bytes that are not
                     * UTF-8 become U+FFFD) */
    LC_PICK_COUNT,  /* how many there are, in decimal (LC_V_NUMBER; "0" is a value, not a miss) */
};

/* Compiled once per plan, then immutable: any number of threads may run one
 * extractor at once. */
typedef struct lc_extractor_s lc_extractor_t;

/* Each constructor returns 0, LC_ENOMEM, or LC_EINVAL with errmsg saying what
 * is wrong; OUT: *x, freed with lc_extractor_free. */

/* A JSONPath of lc_json_scan.h. Strings come out decoded (LC_V_STRING), other
 * values as their JSON text with their type (objects and arrays LC_V_JSON). */
int lc_extractor_json(lc_extractor_t **x, const char *path, enum lc_pick pick, char *errmsg,
                      size_t errlen);

/* A PCRE2 pattern, JIT-compiled when the platform has it; options go inline
 * ("(?i)"), and there is no UTF mode: it matches bytes, so a body need not be
 * UTF-8. group NULL: group 1, or the whole match when the pattern has no
 * group; else a group's name or decimal number, which must exist. A match in
 * which that group took no part is not counted. Values are LC_V_STRING, their
 * bytes as they came. */
int lc_extractor_regex(lc_extractor_t **x, const char *pattern, const char *group,
                       enum lc_pick pick, char *errmsg, size_t errlen);

/* The text after each left and before the next right after it; an empty left
 * means from the start of the body, an empty right to its end (each then
 * allows one match at most). A left without a right after it is no match.
 * Values are LC_V_STRING. */
int lc_extractor_between(lc_extractor_t **x, const char *left, const char *right,
                         enum lc_pick pick, char *errmsg, size_t errlen);

void lc_extractor_free(lc_extractor_t *x);

/* Appends the extracted value to out and sets *type (enum lc_vtype). body[0..len)
 * need not be NUL-terminated. rng is the state of the caller's xorshift64*
 * generator (non-zero), advanced once per match for LC_PICK_RANDOM only
 * (NULL allowed for the other picks). No heap allocation beyond out's growth
 * once the thread's regex scratch exists (see lc_extract_thread_cleanup).
 * Returns 0, LC_ENOTFOUND (no match; LC_PICK_ALL included, LC_PICK_COUNT never),
 * LC_EINVAL (a json extractor read a part of the body that is not JSON; a regex
 * reached its match, depth or heap limit, so a hostile body cannot keep it
 * busy), or LC_ENOMEM. out is unchanged unless 0 is returned. */
int lc_extractor_run(const lc_extractor_t *x, const char *body, size_t len, uint64_t *rng,
                     lc_buf_t *out, uint8_t *type);

/* Frees the calling thread's regex scratch (match data and JIT stack, made by
 * its first regex run and kept for the next). An engine thread that ran
 * extractors calls it once before it exits; running again afterwards is
 * allowed and makes them anew. */
void lc_extract_thread_cleanup(void);

#endif
