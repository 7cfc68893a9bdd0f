/* lc_json_fields.c — typed, bounded member reads with JSON-path errors. */
#include "lc_json_fields.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_err.h"

/* Writes "<parent>.<key>: <what>" (or "<parent>: …" when key is NULL) and returns LC_EINVAL. */
int lc_jp_fail(lc_jp_t *p, const char *parent, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    lc_verrf(p->errmsg, p->errlen, LC_EINVAL, fmt, ap);
    va_end(ap);
    if (key == NULL)
        return lc_err_wrap(p->errmsg, p->errlen, LC_EINVAL, "%s", parent);
    if (parent[0] == '\0')
        return lc_err_wrap(p->errmsg, p->errlen, LC_EINVAL, "%s", key);
    return lc_err_wrap(p->errmsg, p->errlen, LC_EINVAL, "%s.%s", parent, key);
}

int lc_jp_oom(lc_jp_t *p)
{
    return lc_errf(p->errmsg, p->errlen, LC_ENOMEM, "scenario: out of memory");
}

int lc_jp_dup(lc_jp_t *p, const char *text, char **out)
{
    *out = strdup(text);
    return *out == NULL ? lc_jp_oom(p) : 0;
}

/* Rejects any member of obj whose name is not in allowed (NULL-terminated). */
int lc_jp_fields(lc_jp_t *p, json_t *obj, const char *parent,
                        const char *const *allowed)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        size_t i = 0;
        while (allowed[i] != NULL && strcmp(allowed[i], key) != 0)
            i++;
        if (allowed[i] == NULL)
            return lc_jp_fail(p, parent, key, "unknown field");
    }
    return 0;
}

int lc_jp_string(lc_jp_t *p, json_t *obj, const char *parent, const char *key,
                      size_t min_len, size_t max_len, char **out)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL)
        return 0;
    if (!json_is_string(v))
        return lc_jp_fail(p, parent, key, "expected a string");
    size_t len = json_string_length(v);
    if (len < min_len || len > max_len)
        return lc_jp_fail(p, parent, key, "must be %zu to %zu characters long", min_len, max_len);
    return lc_jp_dup(p, json_string_value(v), out);
}

/* Refuses a control byte (0x00-0x1f, 0x7f) in text[0..len): in a request line
 * or a header, CR or LF would end the line and start one of the sender's
 * choosing; in a name, a log line or a report row. */
int lc_jp_controls(lc_jp_t *p, const char *parent, const char *key, const char *what,
                          const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c < 0x20 || c == 0x7f)
            return lc_jp_fail(p, parent, key, "%scontrol character 0x%02x at offset %zu", what, c, i);
    }
    return 0;
}

/* lc_jp_string for text without control bytes. */
int lc_jp_text(lc_jp_t *p, json_t *obj, const char *parent, const char *key,
                    size_t min_len, size_t max_len, char **out)
{
    json_t *v = json_object_get(obj, key);
    int rv = lc_jp_string(p, obj, parent, key, min_len, max_len, out);
    if (rv != 0 || v == NULL)
        return rv;
    return lc_jp_controls(p, parent, key, "", json_string_value(v), json_string_length(v));
}

int lc_jp_uint_value(lc_jp_t *p, json_t *v, const char *parent, const char *key,
                      uint64_t min, uint64_t max, uint64_t *out)
{
    if (!json_is_integer(v))
        return lc_jp_fail(p, parent, key, "expected an integer");
    json_int_t i = json_integer_value(v);
    if (i < 0 || (uint64_t)i < min || (uint64_t)i > max)
        return lc_jp_fail(p, parent, key, "must be between %llu and %llu", (unsigned long long)min,
                    (unsigned long long)max);
    *out = (uint64_t)i;
    return 0;
}

/* Leaves *out untouched (the default) when the field is absent. */
int lc_jp_uint(lc_jp_t *p, json_t *obj, const char *parent, const char *key,
                    uint32_t min, uint32_t max, uint32_t *out)
{
    json_t *v = json_object_get(obj, key);
    uint64_t u = 0;
    if (v == NULL)
        return 0;
    int rv = lc_jp_uint_value(p, v, parent, key, min, max, &u);
    if (rv == 0)
        *out = (uint32_t)u;
    return rv;
}

/* A number in [min, max], or in (min, max] when min_exclusive. */
int lc_jp_double(lc_jp_t *p, json_t *obj, const char *parent, const char *key,
                      double min, double max, bool min_exclusive, double *out)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL)
        return 0;
    if (!json_is_number(v))
        return lc_jp_fail(p, parent, key, "expected a number");
    double d = json_number_value(v);
    if (min_exclusive && (d <= min || d > max))
        return lc_jp_fail(p, parent, key, "must be greater than %g and at most %g", min, max);
    if (!min_exclusive && (d < min || d > max))
        return lc_jp_fail(p, parent, key, "must be between %g and %g", min, max);
    *out = d;
    return 0;
}

int lc_jp_bool(lc_jp_t *p, json_t *obj, const char *parent, const char *key, bool *out)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL)
        return 0;
    if (!json_is_boolean(v))
        return lc_jp_fail(p, parent, key, "expected true or false");
    *out = json_is_true(v);
    return 0;
}

/* An absent field is fine; a present one must be an object. */
int lc_jp_object(lc_jp_t *p, json_t *obj, const char *parent, const char *key,
                      json_t **out)
{
    *out = json_object_get(obj, key);
    if (*out != NULL && !json_is_object(*out))
        return lc_jp_fail(p, parent, key, "expected an object");
    return 0;
}

