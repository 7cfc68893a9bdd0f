/* lc_http_parse.c — the llhttp callbacks of lc_http_server: a request's
 * line and headers kept within their limits, the headers hook, the body,
 * and the exchange handed to the handler at the message's end. */
#include <assert.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lc_http_server_internal.h"

static int user_error(llhttp_t *p, int status, const char *reason)
{
    conn_t *c = p->data;
    c->m.err_status = status;
    llhttp_set_error_reason(p, reason);
    return HPE_USER;
}

static int count_header_bytes(llhttp_t *p, size_t n)
{
    conn_t *c = p->data;
    c->m.hdr_bytes += n;
    if (c->m.hdr_bytes > LC_HTTP_MAX_HEADER_BYTES)
        return user_error(p, 431, "headers too large");
    return 0;
}

static int on_message_begin(llhttp_t *p)
{
    conn_t *c = p->data;
    ex_free(c->building);
    c->building = calloc(1, sizeof *c->building);
    if (!c->building)
        return user_error(p, 500, "out of memory");
    memset(&c->m, 0, sizeof c->m);
    c->m.hdr_bytes = 4; /* request line: two spaces and CRLF */
    c->m.in_headers = 1;
    return 0;
}

/* Counts a request-line or header span, appending it to dst when we keep it. */
static int keep_span(llhttp_t *p, lc_buf_t *dst, const char *at, size_t len)
{
    if (count_header_bytes(p, len) != 0)
        return HPE_USER;
    if (dst && lc_buf_append(dst, at, len) != 0)
        return user_error(p, 500, "out of memory");
    return 0;
}

static int on_span_counted(llhttp_t *p, const char *at, size_t len)
{
    return keep_span(p, NULL, at, len);
}

static int on_url(llhttp_t *p, const char *at, size_t len)
{
    conn_t *c = p->data;
    return keep_span(p, &c->building->bufs[B_URL], at, len);
}

static int on_header_field(llhttp_t *p, const char *at, size_t len)
{
    conn_t *c = p->data;
    if (count_header_bytes(p, len) != 0)
        return HPE_USER;
    if (c->m.hdr_name_len + len < sizeof c->m.hdr_name)
        memcpy(c->m.hdr_name + c->m.hdr_name_len, at, len);
    c->m.hdr_name_len += len; /* past the buffer: a name we never keep */
    return 0;
}

static int on_header_field_complete(llhttp_t *p)
{
    static const struct {
        const char *name;
        int buf;
    } kept[] = {{"authorization", B_AUTH}, {"content-type", B_CTYPE}, {"host", B_HOST},
                {"expect", B_EXPECT}};
    conn_t *c = p->data;
    lc_http_exchange_t *ex = c->building;
    if (++c->m.nheaders > LC_HTTP_MAX_HEADERS)
        return user_error(p, 431, "too many headers");
    if (count_header_bytes(p, 4) != 0) /* ": " and CRLF */
        return HPE_USER;
    c->m.hdr_target = NULL;
    int too_long = c->m.hdr_name_len >= sizeof c->m.hdr_name;
    c->m.hdr_name[too_long ? 0 : c->m.hdr_name_len] = '\0';
    c->m.hdr_name_len = 0; /* the next header's name starts fresh */
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) {
        if (strcasecmp(c->m.hdr_name, kept[i].name) == 0) {
            c->m.hdr_target = &ex->bufs[kept[i].buf];
            c->m.hdr_target->len = 0; /* a repeated header: the last one wins */
            ex->present |= 1u << kept[i].buf;
        }
    }
    return 0;
}

static int on_header_value(llhttp_t *p, const char *at, size_t len)
{
    conn_t *c = p->data;
    return keep_span(p, c->m.hdr_target, at, len);
}

static const char *header_or_null(const lc_http_exchange_t *ex, int i)
{
    return (ex->present & (1u << i)) ? buf_str(&ex->bufs[i]) : NULL;
}

/* Fills the request from its line and headers; the body comes at the end. */
static void request_fill_head(llhttp_t *p, lc_http_exchange_t *ex)
{
    lc_http_request_t *r = &ex->req;
    r->method = llhttp_method_name((llhttp_method_t)p->method);
    char *url = ex->bufs[B_URL].data, *q = url ? strchr(url, '?') : NULL;
    if (q)
        *q = '\0';
    r->path = buf_str(&ex->bufs[B_URL]);
    r->query = q ? q + 1 : "";
    r->authorization = header_or_null(ex, B_AUTH);
    r->content_type = header_or_null(ex, B_CTYPE);
    r->host = header_or_null(ex, B_HOST);
    r->body = "";
    r->body_len = 0;
}

static bool is_probe_path(const lc_http_server_t *s, const char *path)
{
    for (const char *const *p = s->limits.probe_paths; p != NULL && *p != NULL; p++)
        if (strcmp(*p, path) == 0)
            return true;
    return false;
}

/* Runs the headers hook; true when it refused the request (its answer, sent
 * with Connection: close, freed the exchange). */
static bool headers_refused(conn_t *c, lc_http_exchange_t *ex)
{
    ex->conn = c;
    ex->in_hook = 1;
    ex->flags = RESP_CLOSE | (c->parser.method == HTTP_HEAD ? RESP_HEAD : 0);
    c->building = NULL; /* an answer frees ex */
    bool refused = c->srv->on_headers(c->srv->arg, ex, &ex->req);
    assert(refused == (c->m.answered != 0)); /* true exactly when it answered */
    (void)refused; /* only the assert reads it */
    if (c->m.answered)
        return true;
    ex->conn = NULL;
    ex->in_hook = 0;
    ex->flags = 0;
    c->building = ex;
    return false;
}

static int on_headers_complete(llhttp_t *p)
{
    conn_t *c = p->data;
    lc_http_exchange_t *ex = c->building;
    c->m.in_headers = 0;
    request_fill_head(p, ex);
    if (c->probe_slot && !is_probe_path(c->srv, ex->req.path))
        return user_error(p, 503, "busy");
    /* Before the body and before 413: a caller the hook refuses learns nothing more. */
    if (c->srv->on_headers != NULL && headers_refused(c, ex))
        return HPE_USER;
    if ((p->flags & F_CONTENT_LENGTH) && p->content_length > c->srv->max_body)
        return user_error(p, 413, "body too large");
    /* Clients that wait for permission before sending a body get it now. */
    if (strcasecmp(buf_str(&ex->bufs[B_EXPECT]), "100-continue") == 0
        && p->http_major == 1 && p->http_minor >= 1) {
        static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
        char *msg = strdup(cont);
        if (!msg)
            return user_error(p, 500, "out of memory");
        conn_write(c, msg, sizeof cont - 1);
        if (c->closing)
            return user_error(p, 500, "write failed");
    }
    conn_deadline(c, PH_BODY, c->srv->limits.body_timeout_ms);
    return 0;
}

static int on_body(llhttp_t *p, const char *at, size_t len)
{
    conn_t *c = p->data;
    lc_http_exchange_t *ex = c->building;
    if (ex->bufs[B_BODY].len + len > c->srv->max_body)
        return user_error(p, 413, "body too large");
    if (lc_buf_append(&ex->bufs[B_BODY], at, len) != 0)
        return user_error(p, 500, "out of memory");
    return 0;
}

/* Completes the request and pauses the parser until it has been answered. */
static int on_message_complete(llhttp_t *p)
{
    conn_t *c = p->data;
    lc_http_exchange_t *ex = c->building;
    lc_http_request_t *r = &ex->req;
    c->building = NULL;
    ex->conn = c;
    /* A probe slot serves one request, so that it is free for the next probe. */
    if (!llhttp_should_keep_alive(p) || p->upgrade || c->probe_slot)
        ex->flags |= RESP_CLOSE;
    else if (p->http_major == 1 && p->http_minor == 0)
        ex->flags |= RESP_KEEP_ALIVE; /* HTTP/1.0 keep-alive must be confirmed */
    if (p->method == HTTP_HEAD)
        ex->flags |= RESP_HEAD;
    r->body = buf_str(&ex->bufs[B_BODY]);
    r->body_len = ex->bufs[B_BODY].len;
    c->active = ex;
    return HPE_PAUSED;
}

void lc_http_parse_settings(llhttp_settings_t *st)
{
    llhttp_settings_init(st);
    st->on_message_begin = on_message_begin;
    st->on_method = on_span_counted;
    st->on_version = on_span_counted;
    st->on_url = on_url;
    st->on_header_field = on_header_field;
    st->on_header_field_complete = on_header_field_complete;
    st->on_header_value = on_header_value;
    st->on_headers_complete = on_headers_complete;
    st->on_body = on_body;
    st->on_message_complete = on_message_complete;
}

