/* target_app_req.c — capturing an app request's headers and body, and finding things in them. */
#include "target_app_req.h"

#include <assert.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lc_err.h"

/* Buffers larger than this are freed between requests rather than kept for the next one. */
#define KEEP_CAP (8 * 1024)

static void buf_empty(lc_buf_t *b)
{
    if (b->cap > KEEP_CAP) {
        lc_buf_free(b);
        return;
    }
    b->len = 0;
    if (b->data != NULL)
        b->data[0] = '\0';
}

void app_req_reset(app_req_t *r)
{
    buf_empty(&r->text);
    buf_empty(&r->body);
    r->nheaders = 0;
    r->name_next = true;
}

void app_req_free(app_req_t *r)
{
    lc_buf_free(&r->text);
    lc_buf_free(&r->body);
    r->nheaders = 0;
}

int app_req_header_name(app_req_t *r, const char *at, size_t len)
{
    if (r->name_next) {
        if (r->nheaders == APP_HEADERS_MAX)
            return LC_ETOOBIG;
        r->headers[r->nheaders++] = (app_header_t){.name_off = r->text.len,
                                                   .value_off = r->text.len};
        r->name_next = false;
    }
    app_header_t *h = &r->headers[r->nheaders - 1];
    assert(h->value_len == 0); /* llhttp hands over a whole name before its value */
    if (lc_buf_append(&r->text, at, len) != 0)
        return LC_ENOMEM;
    h->name_len += len;
    h->value_off = r->text.len;
    return 0;
}

void app_req_header_name_end(app_req_t *r)
{
    assert(!r->name_next && r->nheaders > 0);
    r->name_next = true;
}

int app_req_header_value(app_req_t *r, const char *at, size_t len)
{
    assert(r->nheaders > 0); /* llhttp calls for a name first */
    app_header_t *h = &r->headers[r->nheaders - 1];
    if (lc_buf_append(&r->text, at, len) != 0)
        return LC_ENOMEM;
    h->value_len += len;
    return 0;
}

int app_req_body(app_req_t *r, const char *at, size_t len)
{
    if (len > APP_BODY_MAX - r->body.len)
        return LC_ETOOBIG;
    return lc_buf_append(&r->body, at, len) == 0 ? 0 : LC_ENOMEM;
}

app_span_t app_req_name(const app_req_t *r, size_t i)
{
    assert(i < r->nheaders);
    return (app_span_t){r->text.data + r->headers[i].name_off, r->headers[i].name_len};
}

app_span_t app_req_value(const app_req_t *r, size_t i)
{
    assert(i < r->nheaders);
    return (app_span_t){r->text.data + r->headers[i].value_off, r->headers[i].value_len};
}

bool app_req_header(const app_req_t *r, const char *name, app_span_t *out)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < r->nheaders; i++) {
        app_span_t k = app_req_name(r, i);
        if (k.len == n && strncasecmp(k.at, name, n) == 0) {
            *out = app_req_value(r, i);
            return true;
        }
    }
    return false;
}

static bool span_is(app_span_t s, const char *lit)
{
    return s.len == strlen(lit) && memcmp(s.at, lit, s.len) == 0;
}

bool app_req_cookie(const app_req_t *r, const char *name, app_span_t *out)
{
    for (size_t i = 0; i < r->nheaders; i++) {
        app_span_t k = app_req_name(r, i), list = app_req_value(r, i), cn, cv;
        if (k.len != 6 || strncasecmp(k.at, "cookie", 6) != 0)
            continue;
        while (app_pair_next(&list, ';', true, &cn, &cv))
            if (span_is(cn, name)) {
                *out = cv;
                return true;
            }
    }
    return false;
}

static app_span_t trimmed(const char *at, size_t len)
{
    while (len > 0 && (at[0] == ' ' || at[0] == '\t'))
        at++, len--;
    while (len > 0 && (at[len - 1] == ' ' || at[len - 1] == '\t'))
        len--;
    return (app_span_t){at, len};
}

bool app_pair_next(app_span_t *list, char sep, bool trim, app_span_t *name, app_span_t *value)
{
    while (list->len > 0) {
        const char *end = memchr(list->at, sep, list->len);
        size_t n = end ? (size_t)(end - list->at) : list->len;
        app_span_t pair = trim ? trimmed(list->at, n) : (app_span_t){list->at, n};
        list->at += end ? n + 1 : n;
        list->len -= end ? n + 1 : n;
        if (pair.len == 0)
            continue; /* "a=1;;b=2" and a trailing separator */
        const char *eq = memchr(pair.at, '=', pair.len);
        size_t nlen = eq ? (size_t)(eq - pair.at) : pair.len;
        *name = trim ? trimmed(pair.at, nlen) : (app_span_t){pair.at, nlen};
        *value = eq ? (app_span_t){eq + 1, pair.len - nlen - 1} : (app_span_t){pair.at, 0};
        if (trim)
            *value = trimmed(value->at, value->len);
        return true;
    }
    return false;
}

bool app_query_get(app_span_t query, const char *name, app_span_t *out)
{
    app_span_t k, v;
    while (app_pair_next(&query, '&', false, &k, &v))
        if (span_is(k, name)) {
            *out = v;
            return true;
        }
    return false;
}

int app_url_decode(app_span_t in, lc_buf_t *out)
{
    if (lc_buf_reserve(out, in.len) != 0)
        return LC_ENOMEM; /* decoding never grows the text */
    for (size_t i = 0; i < in.len; i++) {
        char c = in.at[i];
        if (c == '+') {
            c = ' ';
        } else if (c == '%') {
            if (i + 2 >= in.len || !isxdigit((unsigned char)in.at[i + 1]) ||
                !isxdigit((unsigned char)in.at[i + 2])) {
                out->data[out->len] = '\0';
                return LC_EINVAL;
            }
            char hex[3] = {in.at[i + 1], in.at[i + 2], '\0'};
            c = (char)strtol(hex, NULL, 16);
            i += 2;
        }
        out->data[out->len++] = c;
    }
    out->data[out->len] = '\0';
    return 0;
}
