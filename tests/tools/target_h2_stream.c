/* target_h2_stream.c — an HTTP/2 request stream of lc_target: capture within the HTTP/1.1
 * limits, and the response as nghttp2 wants it. */
#include "target_h2_stream.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llhttp.h>

#include "lc_err.h"

/* ---- the request ---- */

static bool name_is(const char *name, size_t len, const char *lit)
{
    return len == strlen(lit) && memcmp(name, lit, len) == 0;
}

/* llhttp's code of a method name, so the app sees what an HTTP/1.1 request would give it;
 * -1 for a name llhttp does not know (which HTTP/1.1 refuses with 400 too). */
static int method_code(const char *v, size_t n)
{
#define METHOD_IS(num, name, string)                                                         \
    if (n == sizeof #string - 1 && memcmp(v, #string, n) == 0)                               \
        return num;
    HTTP_METHOD_MAP(METHOD_IS)
#undef METHOD_IS
    return -1;
}

static void set_path(h2_stream_t *st, const char *value, size_t vlen)
{
    if (vlen >= URL_MAX) {
        st->reject = 414;
        return;
    }
    if (st->url != NULL || (st->url = malloc(vlen + 1)) == NULL) {
        st->reject = st->url != NULL ? 400 : 503; /* nghttp2 refuses a second :path itself */
        return;
    }
    memcpy(st->url, value, vlen);
    st->url[vlen] = '\0';
    st->url_len = vlen;
    const char *q = memchr(st->url, '?', vlen);
    st->route = (uint8_t)app_route(st->url, q ? (size_t)(q - st->url) : vlen);
    if (st->route == APP_NONE)
        return; /* as for HTTP/1.1, only app paths keep headers and body */
    if ((st->app = calloc(1, sizeof *st->app)) == NULL) {
        st->reject = 503;
        return;
    }
    app_req_reset(st->app);
}

void h2_stream_header(h2_stream_t *st, const char *name, size_t nlen, const char *value,
                      size_t vlen)
{
    assert(st->state == ST_READ && st->reject == 0);
    if (nlen > 0 && name[0] == ':') {
        if (name_is(name, nlen, ":method"))
            st->method = method_code(value, vlen);
        else if (name_is(name, nlen, ":path"))
            set_path(st, value, vlen);
        return;
    }
    if (++st->nheaders > HEADERS_MAX) {
        st->reject = 431;
        return;
    }
    if (st->app == NULL)
        return;
    int rv = app_req_header_name(st->app, name, nlen);
    if (rv == 0) {
        app_req_header_name_end(st->app);
        if (vlen > 0)
            rv = app_req_header_value(st->app, value, vlen);
    }
    if (rv != 0)
        st->reject = rv == LC_ETOOBIG ? 431 : 503;
}

void h2_stream_body(h2_stream_t *st, const char *data, size_t len)
{
    assert(st->state == ST_READ && st->reject == 0);
    st->body_bytes += len;
    if (st->app != NULL) {
        int rv = app_req_body(st->app, data, len);
        if (rv != 0)
            st->reject = rv == LC_ETOOBIG ? 413 : 503;
    } else if (st->body_bytes > BODY_MAX) {
        st->reject = 413;
    }
}

void h2_stream_plan_reject(h2_stream_t *st, int status)
{
    st->r = (resp_t){.kind = RESP_REJECT, .status = status, .slot = -1};
}

int h2_stream_serve_app(engine_t *e, h2_stream_t *st)
{
    assert(st->r.kind == RESP_APP && st->app != NULL && !st->has_a);
    int rv = app_serve(&e->t->app_key, st->route, st->method, st->url, st->url_len, st->app,
                       &st->a);
    if (rv != 0)
        return rv;
    st->has_a = true;
    st->r.status = st->a.status;
    st->r.slot = stats_path_slot(e->t, st->a.stats_key, st->a.stats_key_len);
    return 0;
}

/* ---- the response ---- */

static bool bodyless(int status)
{
    return status == 204 || status == 304;
}

static bool connection_specific(const char *name, size_t len)
{
    return name_is(name, len, "connection") || name_is(name, len, "keep-alive") ||
           name_is(name, len, "transfer-encoding") || name_is(name, len, "upgrade") ||
           name_is(name, len, "proxy-connection");
}

/* The app's extra header lines ("Name: value\r\n"…) as pairs into nv (at most max), with
 * names lowercased in lower (a copy of text, len bytes) as HTTP/2 requires. */
static size_t extra_headers(const char *text, size_t len, char *lower, nghttp2_nv *nv,
                            size_t max)
{
    size_t n = 0;
    memcpy(lower, text, len);
    for (size_t i = 0; i < len && n < max;) {
        char *line = lower + i, *end = memchr(line, '\n', len - i);
        size_t llen = end ? (size_t)(end - line) : len - i;
        i += llen + 1;
        if (llen > 0 && line[llen - 1] == '\r')
            llen--;
        char *colon = memchr(line, ':', llen);
        if (colon == NULL || colon == line)
            continue;
        size_t nlen = (size_t)(colon - line), vlen = llen - nlen - 1;
        for (size_t k = 0; k < nlen; k++)
            line[k] = (char)(line[k] >= 'A' && line[k] <= 'Z' ? line[k] + 32 : line[k]);
        char *v = colon + 1;
        while (vlen > 0 && *v == ' ')
            v++, vlen--;
        if (!connection_specific(line, nlen))
            nv[n++] = (nghttp2_nv){(uint8_t *)line, (uint8_t *)v, nlen, vlen,
                                   NGHTTP2_NV_FLAG_NONE};
    }
    return n;
}

static ssize_t read_body(nghttp2_session *s, int32_t id, uint8_t *buf, size_t length,
                         uint32_t *flags, nghttp2_data_source *src, void *user)
{
    (void)s, (void)id, (void)user;
    h2_stream_t *st = src->ptr;
    size_t left = st->body_len - st->body_off, n = left < length ? left : length;
    if (st->body != NULL)
        memcpy(buf, st->body + st->body_off, n);
    else
        memset(buf, 'x', n);
    st->body_off += n;
    if (st->body_off == st->body_len)
        *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

#define NV_LIT(name, value, vlen)                                                            \
    ((nghttp2_nv){(uint8_t *)(name), (uint8_t *)(value), sizeof(name) - 1, (vlen),          \
                  NGHTTP2_NV_FLAG_NONE})

/* Submits :status, server, content-type and -length (unless bodyless), the extra lines, and
 * the body st->body..body_len (none for HEAD). nghttp2 copies the pairs. */
static int submit_response(nghttp2_session *s, h2_stream_t *st, const char *ctype,
                           const char *extra, size_t elen)
{
    size_t lines = 0, n = 0;
    for (size_t i = 0; i < elen; i++)
        lines += extra[i] == '\n';
    nghttp2_nv *nv = malloc((4 + lines) * sizeof *nv);
    char *lower = elen > 0 ? malloc(elen) : NULL;
    if (nv == NULL || (elen > 0 && lower == NULL)) {
        free(nv);
        free(lower);
        return LC_ENOMEM;
    }
    char status[16], clen[24];
    bool none = bodyless(st->r.status);
    int slen = snprintf(status, sizeof status, "%d", st->r.status);
    int llen = snprintf(clen, sizeof clen, "%zu", st->body_len);
    nv[n++] = NV_LIT(":status", status, (size_t)slen);
    nv[n++] = NV_LIT("server", "lc_target", 9);
    if (!none) {
        nv[n++] = NV_LIT("content-type", ctype, strlen(ctype));
        nv[n++] = NV_LIT("content-length", clen, (size_t)llen);
    }
    if (elen > 0)
        n += extra_headers(extra, elen, lower, nv + n, lines);
    nghttp2_data_provider dp = {.source.ptr = st, .read_callback = read_body};
    bool data = !st->r.head && !none && st->body_len > 0;
    int rv = nghttp2_submit_response(s, st->id, nv, n, data ? &dp : NULL);
    free(nv);
    free(lower);
    return rv;
}

int h2_stream_submit(engine_t *e, nghttp2_session *s, h2_stream_t *st)
{
    const char *ctype = "text/plain", *extra = NULL;
    size_t elen = 0;
    st->body = NULL;
    st->body_off = st->body_len = 0;
    switch (st->r.kind) {
    case RESP_APP:
        assert(st->has_a);
        ctype = st->a.content_type;
        st->body = st->a.body.data ? st->a.body.data : "";
        st->body_len = st->a.body.len;
        extra = st->a.headers.data;
        elen = extra != NULL ? st->a.headers.len : 0;
        break;
    case RESP_STATS:
    case RESP_RESET:
        st->owned = stats_json(e->t);
        if (st->r.kind == RESP_RESET)
            stats_reset(e->t);
        st->body = st->owned ? st->owned : "";
        st->body_len = st->owned ? strlen(st->owned) : 0;
        ctype = st->owned ? "application/json" : ctype;
        break;
    case RESP_PLAIN:
        st->body_len = st->r.size; /* 'x' bytes */
        break;
    default:
        break; /* RESP_REJECT: no body */
    }
    return submit_response(s, st, ctype, extra, elen);
}

void h2_stream_free(h2_stream_t *st)
{
    free(st->url);
    if (st->app != NULL)
        app_req_free(st->app);
    free(st->app);
    if (st->has_a)
        app_resp_free(&st->a);
    free(st->owned);
    free(st);
}
