/* h2_request.c — our HTTP/1.1 rendering of a request as HTTP/2 header pairs. */
#include "h2_request.h"

#include <assert.h>
#include <string.h>
#include <strings.h>

#include "lc_err.h"

/* RFC 9113 8.2.2: these say something about one connection, which HTTP/2 has its own ways of
 * saying; a request that carries them is malformed. Host becomes :authority. */
static bool connection_specific(const char *name, size_t len)
{
    static const char *const names[] = {"connection", "keep-alive", "proxy-connection",
                                        "transfer-encoding", "upgrade", "host", NULL};
    for (size_t i = 0; names[i] != NULL; i++)
        if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0)
            return true;
    return false;
}

static int add(worker_h2_req_t *out, const char *name, size_t nlen, const char *value,
               size_t vlen)
{
    if (out->n_nv == WORKER_H2_NV_MAX)
        return LC_EINVAL;
    out->nv[out->n_nv++] = (nghttp2_nv){.name = (uint8_t *)name, .namelen = nlen,
                                        .value = (uint8_t *)value, .valuelen = vlen,
                                        .flags = NGHTTP2_NV_FLAG_NONE};
    return 0;
}

/* The end of the line at p (its CR), or NULL when there is no CRLF before end. */
static char *line_end(char *p, const char *end)
{
    for (; p + 1 < end; p++) {
        if (p[0] == '\r' && p[1] == '\n')
            return p;
        if (p[0] == '\n' || p[0] == '\r')
            return NULL; /* a bare LF or CR: not our rendering */
    }
    return NULL;
}

/* "METHOD SP target SP HTTP/1.1": :method, :scheme, then a slot for :authority, then :path. */
static int request_line(char *p, const char *eol, bool tls, worker_h2_req_t *out)
{
    char *sp1 = memchr(p, ' ', (size_t)(eol - p));
    char *sp2 = sp1 != NULL ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
    if (sp1 == NULL || sp2 == NULL || sp1 == p || sp2 == sp1 + 1)
        return LC_EINVAL;
    static const char scheme_https[] = "https", scheme_http[] = "http";
    int rv = add(out, ":method", 7, p, (size_t)(sp1 - p));
    if (rv == 0)
        rv = add(out, ":scheme", 7, tls ? scheme_https : scheme_http, tls ? 5 : 4);
    if (rv == 0)
        rv = add(out, ":authority", 10, "", 0); /* filled from Host */
    if (rv == 0)
        rv = add(out, ":path", 5, sp1 + 1, (size_t)(sp2 - sp1 - 1));
    return rv;
}

/* "Name: value" with the name lowercased in place; Host fills the :authority slot. */
static int header_line(char *p, const char *eol, worker_h2_req_t *out, bool *host)
{
    char *colon = memchr(p, ':', (size_t)(eol - p));
    if (colon == NULL || colon == p)
        return LC_EINVAL;
    size_t nlen = (size_t)(colon - p);
    for (size_t i = 0; i < nlen; i++)
        if (p[i] >= 'A' && p[i] <= 'Z')
            p[i] = (char)(p[i] | 0x20);
    const char *v = colon + 1;
    while (v < eol && (*v == ' ' || *v == '\t'))
        v++;
    size_t vlen = (size_t)(eol - v);
    while (vlen > 0 && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
        vlen--;
    if (nlen == 4 && memcmp(p, "host", 4) == 0) {
        if (*host || vlen == 0)
            return LC_EINVAL;
        *host = true;
        out->nv[2].value = (uint8_t *)v;
        out->nv[2].valuelen = vlen;
        return 0;
    }
    if (connection_specific(p, nlen))
        return 0;
    /* TE may only say "trailers" over HTTP/2 (RFC 9113 8.2.2). */
    if (nlen == 2 && memcmp(p, "te", 2) == 0 && !(vlen == 8 && strncasecmp(v, "trailers", 8) == 0))
        return 0;
    return add(out, p, nlen, v, vlen);
}

int worker_h2_req_translate(const char *req, size_t len, bool tls, lc_buf_t *copy,
                            worker_h2_req_t *out)
{
    assert(req != NULL && copy != NULL && out != NULL);
    out->n_nv = 0;
    out->body = NULL;
    out->body_len = 0;
    copy->len = 0;
    if (lc_buf_append(copy, req, len) != 0)
        return LC_ENOMEM;
    char *p = copy->data;
    const char *end = copy->data + copy->len;
    char *eol = line_end(p, end);
    bool host = false;
    int rv = eol != NULL ? request_line(p, eol, tls, out) : LC_EINVAL;
    if (rv != 0)
        return rv;
    for (p = eol + 2; rv == 0; p = eol + 2) {
        if ((eol = line_end(p, end)) == NULL)
            return LC_EINVAL; /* the blank line never came */
        if (eol == p)
            break;
        rv = header_line(p, eol, out, &host);
    }
    if (rv != 0)
        return rv;
    if (!host)
        return LC_EINVAL;
    p = eol + 2;
    if (p < end) {
        out->body = p;
        out->body_len = (size_t)(end - p);
    }
    return 0;
}
