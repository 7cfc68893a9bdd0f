/* target_app_req.h — the headers and body of a request to an app path, captured while llhttp
 * parses it, and lookups in it: a header, a cookie, a query parameter, percent-decoding. */
#ifndef LC_TARGET_APP_REQ_H
#define LC_TARGET_APP_REQ_H

#include <stdbool.h>
#include <stddef.h>

#include "lc_buf.h"

#define APP_BODY_MAX (64 * 1024)
#define APP_HEADERS_MAX 64

/* One header of a captured request, as offsets into app_req_t's text. */
typedef struct app_header_s {
    size_t name_off, name_len, value_off, value_len;
} app_header_t;

/* A connection allocates one (zeroed, then app_req_reset) on its first app request and reuses
 * it for the next ones. */
typedef struct app_req_s {
    /* read-only: written by the capture functions */
    lc_buf_t text; /* header names and values, back to back */
    app_header_t headers[APP_HEADERS_MAX];
    size_t nheaders;
    lc_buf_t body;
    /* private */
    bool name_next; /* the next name piece starts a new header */
} app_req_t;

/* A piece of text that lives in a request (not NUL-terminated). */
typedef struct app_span_s {
    const char *at;
    size_t len;
} app_span_t;

/* Empties r for the next request, keeping only small buffers so idle connections stay light. */
void app_req_reset(app_req_t *r);
/* Frees what r holds (not r itself). */
void app_req_free(app_req_t *r);

/* Capture pieces of a header name, the name's end, and pieces of its value (none for an empty
 * value), in llhttp's order. Return 0, LC_ENOMEM, or LC_ETOOBIG past APP_HEADERS_MAX headers. */
int app_req_header_name(app_req_t *r, const char *at, size_t len);
void app_req_header_name_end(app_req_t *r);
int app_req_header_value(app_req_t *r, const char *at, size_t len);
/* Captures a piece of the body. Returns 0, LC_ENOMEM, or LC_ETOOBIG past APP_BODY_MAX bytes. */
int app_req_body(app_req_t *r, const char *at, size_t len);

app_span_t app_req_name(const app_req_t *r, size_t i);
app_span_t app_req_value(const app_req_t *r, size_t i);
/* The first header called name (any case); false when there is none. */
bool app_req_header(const app_req_t *r, const char *name, app_span_t *out);
/* The first cookie called name (exact case) in any Cookie header; false when there is none. */
bool app_req_cookie(const app_req_t *r, const char *name, app_span_t *out);

/* Splits the next "name=value" off *list (separated by sep, spaces around pairs trimmed when
 * trim) and advances it; false at the end. A pair without '=' has an empty value. */
bool app_pair_next(app_span_t *list, char sep, bool trim, app_span_t *name, app_span_t *value);
/* The raw value of the first query (or form) parameter called name; false when absent. */
bool app_query_get(app_span_t query, const char *name, app_span_t *out);
/* Percent-decodes in ('+' becomes a space) onto the end of out. Returns 0, LC_EINVAL for a
 * '%' not followed by two hex digits, or LC_ENOMEM. */
int app_url_decode(app_span_t in, lc_buf_t *out);

#endif
