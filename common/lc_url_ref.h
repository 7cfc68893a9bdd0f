/* lc_url_ref.h — a redirect's relative reference ("next", "../a?b") made a request target on
 * the same origin (RFC 3986 5.2: merged with the request's path, dot segments removed). */
#ifndef LC_URL_REF_H
#define LC_URL_REF_H

#include <stdbool.h>
#include <stddef.h>

/* Whether ref[0..len) is a relative-path reference: no scheme, not "//host", not "/path". */
bool lc_url_ref_is_relative(const char *ref, size_t len);

/* The target for ref[0..len) (a path, absolute or relative, with its query; a fragment is
 * dropped) requested from base_path (the answered request's path, starting with '/', without
 * its query), into out (cap bytes, NUL-terminated). Returns false when it does not fit. */
bool lc_url_ref_resolve(const char *base_path, const char *ref, size_t len, char *out, size_t cap);

#endif
