/* lc_json_fields.h — typed, bounded reads of a jansson object's members for the scenario
 * parsers, with errors that name the JSON path ("journeys[0].steps[2].path: required"). */
#ifndef LC_JSON_FIELDS_H
#define LC_JSON_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define LC_JSON_PATH_MAX 256 /* characters of a JSON path in an error */

/* Carries the caller's error buffer through a recursive descent. */
typedef struct lc_jp_s {
    char *errmsg;
    size_t errlen;
} lc_jp_t;

/* Writes "<parent>.<key>: <what>" (or "<parent>: …" when key is NULL) and returns LC_EINVAL. */
int lc_jp_fail(lc_jp_t *p, const char *parent, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* "scenario: out of memory"; returns LC_ENOMEM. */
int lc_jp_oom(lc_jp_t *p);
/* *out = strdup(text), or LC_ENOMEM. */
int lc_jp_dup(lc_jp_t *p, const char *text, char **out);
/* Rejects any member of obj whose name is not in allowed (NULL-terminated). */
int lc_jp_fields(lc_jp_t *p, json_t *obj, const char *parent, const char *const *allowed);
/* The getters leave *out untouched when the member is absent (its default), and fail
 * with the member's path when it has the wrong type or is out of bounds. */
int lc_jp_string(lc_jp_t *p, json_t *obj, const char *parent, const char *key, size_t min_len,
                 size_t max_len, char **out);
/* lc_jp_string for text without control bytes. */
int lc_jp_text(lc_jp_t *p, json_t *obj, const char *parent, const char *key, size_t min_len,
               size_t max_len, char **out);
/* Refuses a control byte (0x00-0x1f, 0x7f) in text[0..len); what prefixes the message. */
int lc_jp_controls(lc_jp_t *p, const char *parent, const char *key, const char *what,
                   const char *text, size_t len);
int lc_jp_uint_value(lc_jp_t *p, json_t *v, const char *parent, const char *key, uint64_t min,
                     uint64_t max, uint64_t *out);
int lc_jp_uint(lc_jp_t *p, json_t *obj, const char *parent, const char *key, uint32_t min,
               uint32_t max, uint32_t *out);
/* A number in [min, max], or in (min, max] when min_exclusive. */
int lc_jp_double(lc_jp_t *p, json_t *obj, const char *parent, const char *key, double min,
                 double max, bool min_exclusive, double *out);
int lc_jp_bool(lc_jp_t *p, json_t *obj, const char *parent, const char *key, bool *out);
/* An absent member is fine (*out = NULL); a present one must be an object. */
int lc_jp_object(lc_jp_t *p, json_t *obj, const char *parent, const char *key, json_t **out);

#endif
