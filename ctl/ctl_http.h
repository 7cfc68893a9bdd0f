/* ctl_http.h — the small blocking HTTP/1.1 client loadctl uses to call the master API. */
#ifndef CTL_HTTP_H
#define CTL_HTTP_H

#include <stddef.h>

enum {
    CTL_HTTP_OK = 0,
    CTL_HTTP_EURL,   /* the master URL (or a redirect's Location) is unusable */
    CTL_HTTP_EREACH, /* resolve, connect, send or receive failed: the master is unreachable */
    CTL_HTTP_EPROTO, /* the answer is not valid HTTP, too big, or redirects too often */
    CTL_HTTP_ENOMEM,
    CTL_HTTP_EINTR   /* a signal interrupted a blocking call */
};

#define CTL_HTTP_MAX_BODY (64u << 20)
#define CTL_HTTP_MAX_REDIRECTS 3

typedef struct ctl_http_response_s {
    int status;
    char *body;      /* malloc'd, NUL-terminated (also when empty) */
    size_t body_len;
} ctl_http_response_t;

/* Checks that url is http://host[:port][/prefix]; 0 or CTL_HTTP_EURL (errmsg says why). */
int ctl_http_check_url(const char *url, char *errmsg, size_t errlen);

/* Sends method base_url+path with body (may be NULL) and Authorization:
 * Bearer token (when token is non-NULL), following 307/308 redirects up to
 * CTL_HTTP_MAX_REDIRECTS times: to another host or port only when GET
 * /api/v1/cluster of base_url lists it as a master's API (else
 * CTL_HTTP_EPROTO, and neither the token nor the body goes there). OUT: resp, freed with ctl_http_response_free
 * when this returns 0. Otherwise errmsg says why; for CTL_HTTP_EREACH it
 * reads "cannot reach <url>: <reason>". */
int ctl_http_request(const char *base_url, const char *token, const char *method,
                     const char *path, const char *body, size_t body_len,
                     ctl_http_response_t *resp, char *errmsg, size_t errlen);

/* ctl_http_request with the body's Content-Type: content_type is a constant
 * such as "application/yaml" (no CR or LF); NULL means application/json. */
int ctl_http_request_as(const char *base_url, const char *token, const char *method,
                        const char *path, const char *content_type, const char *body,
                        size_t body_len, ctl_http_response_t *resp, char *errmsg,
                        size_t errlen);

void ctl_http_response_free(ctl_http_response_t *resp);

#endif
