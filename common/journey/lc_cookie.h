/* lc_cookie.h — one virtual user's cookie jar (an RFC 6265 subset) in one small block. */
#ifndef LC_COOKIE_H
#define LC_COOKIE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lc_buf.h"
#include "lc_value.h"

/* Limits; a store that would pass one returns LC_ETOOBIG and changes nothing. */
#define LC_COOKIE_MAX_HEADER 4096     /* one Set-Cookie value: name, value and attributes */
#define LC_COOKIE_MAX_PATH 1024       /* a cookie's path, given or defaulted from the request's */
#define LC_COOKIE_JAR_MAX_COUNT 50    /* cookies in one jar */
#define LC_COOKIE_JAR_MAX_BYTES 16384 /* one jar's records: each cookie's text plus 16 bytes */

/* A zeroed jar ({0}) is empty and holds no memory, so an idle user costs sizeof only.
 * The cookies live in one malloc'd block of packed records in creation order. */
typedef struct lc_cookie_jar_s {
    /* private */
    uint8_t *block;  /* the records, NULL while the jar holds no memory */
    uint16_t used;   /* bytes of block holding records */
    uint16_t cap;    /* bytes allocated */
    uint16_t count;  /* records */
    uint16_t unused; /* padding, kept 0 */
} lc_cookie_jar_t;

/* Frees the block; the jar is empty (and usable) again. */
void lc_cookie_jar_free(lc_cookie_jar_t *j);
/* Forgets every cookie but keeps the block for the ones the next iteration sets. */
void lc_cookie_jar_clear(lc_cookie_jar_t *j);

/* Stores the cookie of one Set-Cookie header value set_cookie[0..len) that answered a request
 * to host (a NUL-terminated name or IP address, IPv6 with or without brackets) and path (the
 * request's path; a '?' or '#' ends it). Attributes, case-insensitive: Path (else the default
 * path of RFC 6265 5.1.4), Domain (a leading '.' ignored; must domain-match host and have a dot
 * unless it is host; an IP host takes only its own address), Max-Age (wins over Expires;
 * <= 0 deletes), Expires (any RFC 6265 5.1.1 date; one that does not parse is ignored), Secure
 * (refused over http), HttpOnly; others (SameSite, ...) are ignored. The same (name, domain,
 * path) replaces a cookie and keeps its creation order; an expired one deletes it. Expired
 * cookies are purged here. Returns 0 (stored, replaced, deleted, or nothing to delete), or with
 * the cookies unchanged: LC_EINVAL when the header is malformed (no '=', a name that is not a
 * token, a control character other than HTAB anywhere) or refused (a Domain for another site
 * or a top-level domain, Secure over http, a __Secure- or __Host- name without what its prefix
 * needs), LC_ETOOBIG over a limit above, LC_ENOMEM. */
int lc_cookie_jar_store(lc_cookie_jar_t *j, const char *set_cookie, size_t len, const char *host,
                        const char *path, bool https, uint64_t now_ms);

/* Appends to out the Cookie header's value ("a=1; b=2", no name, no CRLF) for a request to
 * host and path: cookies whose domain and path match (RFC 6265 5.1.3, 5.1.4), Secure ones
 * only over https, none expired; longer paths first, then earlier created. OUT: *n, the
 * cookies appended (0: out unchanged). Returns 0, or LC_ENOMEM (out unchanged, *n = 0). */
int lc_cookie_jar_header(const lc_cookie_jar_t *j, const char *host, const char *path, bool https,
                         uint64_t now_ms, lc_buf_t *out, size_t *n);

/* Whether the next request to host and path (over https when https) sends a cookie named
 * name[0..name_len) (case-sensitive), and OUT: *out its value (LC_V_STRING, one pair of
 * surrounding DQUOTEs removed), pointing into the jar until its next store, clear or free.
 * Of several, the first the Cookie header would carry. */
bool lc_cookie_jar_get(const lc_cookie_jar_t *j, const char *name, size_t name_len,
                       const char *host, const char *path, bool https, uint64_t now_ms,
                       lc_value_t *out);

/* Bytes the jar holds on the heap (the block's size; the allocator's own overhead not counted). */
size_t lc_cookie_jar_bytes(const lc_cookie_jar_t *j);

/* Milliseconds since the Unix epoch of an RFC 6265 5.1.1 cookie-date (IMF-fixdate, RFC 850,
 * asctime and the variants that algorithm accepts), OUT: *ms (0 for dates before 1970).
 * Returns false when text[0..len) is not one. */
bool lc_cookie_date_parse(const char *text, size_t len, uint64_t *ms);

#endif
