/* lc_origins.h — a scenario's origins: its "target" (named "default") and the named
 * "targets" beside it; parsing them, and telling which of them an absolute URL names. */
#ifndef LC_ORIGINS_H
#define LC_ORIGINS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "lc_addr.h"
#include "lc_json_fields.h"

#define LC_TARGETS_MAX 16u                 /* named origins beside target */
#define LC_ORIGINS_MAX (LC_TARGETS_MAX + 1) /* with target, origin 0 */
#define LC_ORIGIN_NAME_MAX 32u
#define LC_ORIGIN_DEFAULT "default"         /* the name of target */
#define LC_ORIGIN_TEXT_MAX (LC_HOST_MAX + 24) /* "https://[host]:port" */

typedef struct lc_origin_s {
    char *name;   /* [a-z0-9_-], 1..LC_ORIGIN_NAME_MAX; "default" for target */
    lc_url_t url; /* a named origin's base_path is "" (it is an origin, not a prefix) */
} lc_origin_t;

typedef struct lc_origins_s {
    lc_origin_t *at; /* at[0] is target; then "targets" in the order given */
    size_t n;        /* 1..LC_ORIGINS_MAX once parsed */
} lc_origins_t;

/* Fills *out with target (origin 0, already parsed) and root's "targets", an object of
 * name: "http(s)://host[:port]" (optional). Errors name the JSON path ("targets.auth: …"):
 * a bad name, a URL that is not an origin, two names for one origin, more than
 * LC_TARGETS_MAX. Returns 0, LC_EINVAL or LC_ENOMEM; free with lc_origins_free. */
int lc_origins_parse(lc_jp_t *p, json_t *root, const lc_url_t *target, lc_origins_t *out);
void lc_origins_free(lc_origins_t *o);

/* Index of the origin named name, or -1. */
int lc_origins_find(const lc_origins_t *o, const char *name);

/* The origin of the list an absolute URL names (index; scheme, host compared without case,
 * port with its default), or -1 (not an absolute http(s) URL, or an origin outside the list);
 * *rest: where its path, query or fragment begins (len when nothing follows the authority). */
int lc_origins_match(const lc_origins_t *o, const char *url, size_t len, size_t *rest);
/* Whether url[0..len) starts with "http://" or "https://" (any case). */
bool lc_origin_is_absolute(const char *url, size_t len);

/* Where a Location (or a script's URL) leads, as an origin of o and a request target: an
 * absolute URL of a listed origin (its path, "/" when it has none), a network-path reference
 * ("//host:port/x", with the scheme of origin cur) likewise, a path on cur, or a reference
 * relative to base (the answered request's path, starting with '/'; NULL: none allowed) on
 * cur. A fragment is dropped, dot segments removed (RFC 3986 5.2). Returns the origin's index
 * with the target in out (cap bytes), or -1: an unlisted origin, another scheme, relative to
 * nothing, or longer than cap. */
int lc_origins_locate(const lc_origins_t *o, unsigned cur, const char *base, const char *loc,
                      size_t len, char *out, size_t cap);

/* "https://host:port" (brackets around an IPv6 literal, the port always) into buf. */
void lc_origin_format(const lc_url_t *u, char *buf, size_t cap);

#endif
