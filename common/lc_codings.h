/* lc_codings.h — the content codings a scenario asks responses in ("compression": ["gzip",
 * "br"]): parsing that list, and the Accept-Encoding header it makes the engine send. */
#ifndef LC_CODINGS_H
#define LC_CODINGS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "lc_json_fields.h"

#define LC_CODINGS_MAX 3          /* gzip, deflate, br */
#define LC_CODINGS_HEADER_MAX 64  /* bytes of the longest Accept-Encoding line, NUL included */

enum lc_coding { LC_CODING_GZIP = 1, LC_CODING_DEFLATE, LC_CODING_BR };

typedef struct lc_codings_s {
    uint8_t n;                    /* 0: no Accept-Encoding is sent */
    uint8_t list[LC_CODINGS_MAX]; /* enum lc_coding, in the order given (the preference) */
} lc_codings_t;

/* obj's member key, when present, into *out (absent: *out is left as it is, the default): an
 * array of distinct "gzip", "deflate", "br"; [] asks for none. Returns 0, or LC_EINVAL with
 * "<parent>.<key>[i]: ..." in p's errmsg. */
int lc_codings_parse(lc_jp_t *p, json_t *obj, const char *parent, const char *key,
                     lc_codings_t *out);

/* "Accept-Encoding: gzip, br\r\n" into buf[LC_CODINGS_HEADER_MAX], NUL-terminated; returns its
 * length, 0 (and an empty buf) when c asks for none. */
size_t lc_codings_header(const lc_codings_t *c, char buf[LC_CODINGS_HEADER_MAX]);

#endif
