/* http_conn.c — HTTP client connections over a transport: HTTP/1.1 here, HTTP/2 through
 * h2_session.c. */
#include "http_conn.h"

#include <assert.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "busy_poll.h"
#include "h2_session.h"
#include "lc_err.h"
#include "stats.h"
#include "sysinfo.h"

static int on_message_begin(llhttp_t *p);
static int on_headers_complete(llhttp_t *p);
static int on_body(llhttp_t *p, const char *at, size_t len);
static int on_message_complete(llhttp_t *p);
static int on_header_field(llhttp_t *p, const char *at, size_t len);
static int on_header_field_complete(llhttp_t *p);
static int on_header_value(llhttp_t *p, const char *at, size_t len);
static int on_header_value_complete(llhttp_t *p);

static const llhttp_settings_t parser_settings = {
    .on_message_begin = on_message_begin,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

/* The same, keeping some headers: only requests that need headers pay for them. */
static const llhttp_settings_t header_settings = {
    .on_message_begin = on_message_begin,
    .on_header_field = on_header_field,
    .on_header_field_complete = on_header_field_complete,
    .on_header_value = on_header_value,
    .on_header_value_complete = on_header_value_complete,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

static void on_tcp_close(uv_handle_t *h);

int worker_conn_init(worker_conn_t *c, uv_loop_t *loop, char *rbuf, size_t rbuf_len,
                     const worker_conn_cbs_t *cbs, void *data)
{
    memset(c, 0, sizeof *c);
    c->cbs = cbs;
    c->data = data;
    c->rbuf = rbuf;
    c->rbuf_len = rbuf_len;
    c->transport = &worker_transport_plain;
    c->state = WORKER_CONN_CLOSED;
    llhttp_init(&c->parser, HTTP_RESPONSE, &parser_settings);
    c->parser.data = c;
    if (uv_timer_init(loop, &c->timer) != 0)
        return LC_EIO;
    c->timer.data = c;
    c->handles = 1;
    return 0;
}

void worker_conn_set_idle_timeout(worker_conn_t *c, uint32_t ms)
{
    c->idle_timeout_ms = ms;
}

static void on_timeout(uv_timer_t *t);

/* The connection is idle after its owner heard of it: the idle timeout starts. */
static void idle_from_now(worker_conn_t *c)
{
    if (c->state == WORKER_CONN_IDLE && c->idle_timeout_ms > 0 && !c->destroying)
        uv_timer_start(&c->timer, on_timeout, c->idle_timeout_ms, 0);
}

void worker_conn_idle(worker_conn_t *c)
{
    if (c->state != WORKER_CONN_IDLE)
        return;
    if (c->h2 != NULL)
        (void)worker_h2_idle(c);
    if (c->transport != NULL && c->transport->idle != NULL)
        c->transport->idle(c);
}

bool worker_conn_connected(const worker_conn_t *c)
{
    return c->state == WORKER_CONN_IDLE || c->state == WORKER_CONN_BUSY;
}

static void start_close(worker_conn_t *c)
{
    uv_timer_stop(&c->timer);
    if (c->transport->close != NULL && c->state != WORKER_CONN_CLOSING)
        c->transport->close(c);
    c->state = WORKER_CONN_CLOSING;
    uv_read_stop((uv_stream_t *)&c->tcp);
    uv_close((uv_handle_t *)&c->tcp, on_tcp_close);
}

void worker_conn_fail(worker_conn_t *c, int kind)
{
    if (c->state == WORKER_CONN_CLOSED || c->state == WORKER_CONN_CLOSING || !c->tcp_open)
        return; /* !tcp_open: a failed uv_tcp_init, reported by on_timeout */
    if (c->state == WORKER_CONN_BUSY || c->state == WORKER_CONN_CONNECTING) {
        c->result = (worker_conn_result_t){.kind = kind, .latency_us = WORKER_NO_LATENCY,
                                           .bytes = c->bytes};
        c->pending = true;
    }
    start_close(c);
}

void worker_conn_abort(worker_conn_t *c, int kind)
{
    worker_conn_fail(c, kind);
}

void worker_conn_set_pool(worker_conn_t *c, worker_bufpool_t *pool)
{
    c->pool = pool;
}

void worker_conn_release(worker_conn_t *c)
{
    worker_bufpool_give(c->pool, c->body);
    worker_bufpool_give(c->pool, c->hdrs);
    c->body = c->hdrs = NULL;
}

static void maybe_destroyed(worker_conn_t *c)
{
    if (c->handles > 0)
        return;
    worker_conn_release(c);
    c->cbs->destroyed(c);
}

static void on_tcp_close(uv_handle_t *h)
{
    worker_conn_t *c = h->data;
    c->handles--;
    c->tcp_open = false;
    c->state = WORKER_CONN_CLOSED;
    c->write_pending = false;
    if (c->h2 != NULL)
        worker_h2_close(c);
    if (c->transport->reset)
        c->transport->reset(c);
    llhttp_reset(&c->parser);
    if (c->destroying) {
        maybe_destroyed(c);
        return;
    }
    if (c->pending) {
        c->pending = false;
        worker_conn_result_t r = c->result;
        c->cbs->done(c, &r);
    } else {
        c->cbs->closed(c);
    }
}

static void on_timer_close(uv_handle_t *h)
{
    worker_conn_t *c = h->data;
    c->handles--;
    maybe_destroyed(c);
}

void worker_conn_destroy(worker_conn_t *c)
{
    c->destroying = true;
    c->pending = false;
    if (c->tcp_open && c->state != WORKER_CONN_CLOSING)
        start_close(c);
    uv_close((uv_handle_t *)&c->timer, on_timer_close);
}

static void finish(worker_conn_t *c, int kind, int status, bool keep);

/* HTTP/2: only the stream timed out. It is reset, and the connection carries the next
 * request, as the other streams of a shared one do (h2_shared.c). */
static void time_out_stream(worker_conn_t *c)
{
    if (!worker_h2_cancel(c)) {
        worker_conn_fail(c, WORKER_ERR_TIMEOUT);
        return;
    }
    finish(c, WORKER_ERR_TIMEOUT, 0, worker_h2_reusable(c));
}

static void on_timeout(uv_timer_t *t)
{
    worker_conn_t *c = t->data;
    if (c->state == WORKER_CONN_CONNECTING && !c->tcp_open) {
        /* uv_tcp_init failed in worker_conn_connect: report it from here. */
        c->state = WORKER_CONN_CLOSED;
        worker_conn_result_t r = c->result;
        c->cbs->done(c, &r);
        return;
    }
    if (c->state == WORKER_CONN_CONNECTING)
        worker_conn_fail(c, WORKER_ERR_CONNECT_TIMEOUT);
    else if (c->state == WORKER_CONN_BUSY && c->h2 != NULL)
        time_out_stream(c);
    else if (c->state == WORKER_CONN_BUSY)
        worker_conn_fail(c, WORKER_ERR_TIMEOUT);
    else if (c->state == WORKER_CONN_IDLE)
        start_close(c); /* idle too long: closed() follows */
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    worker_conn_t *c = h->data;
    buf->base = c->rbuf;
    buf->len = c->rbuf_len;
}

static void on_eof(worker_conn_t *c)
{
    if (c->h2 != NULL && c->state == WORKER_CONN_BUSY) {
        worker_conn_fail(c, WORKER_ERR_RESET); /* an HTTP/2 stream never ends with the TCP */
        return;
    }
    if (c->state != WORKER_CONN_BUSY) {
        /* The server closed an idle keep-alive connection. */
        start_close(c);
        return;
    }
    llhttp_finish(&c->parser);
    if (!c->msg_done) {
        worker_conn_fail(c, WORKER_ERR_RESET); /* closed before the response was complete */
        return;
    }
    /* A body delimited by EOF: complete, and the connection is gone. */
    uint64_t end = uv_hrtime();
    c->result = (worker_conn_result_t){
        .kind = WORKER_KIND_OK, .status = llhttp_get_status_code(&c->parser),
        .latency_us = (end - c->start_ns) / 1000, .sent_ns = c->start_ns, .bytes = c->bytes};
    if (c->capture && c->body != NULL) {
        c->result.body = c->body->data;
        c->result.body_len = c->body->len;
    }
    if (c->want != NULL && c->hdrs != NULL) {
        c->result.headers = c->hdrs->data;
        c->result.headers_len = c->hdrs->len;
    }
    c->pending = true;
    start_close(c);
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    worker_conn_t *c = s->data;
    worker_busy_poll_note_work();
    if (nread > 0)
        c->transport->read(c, buf->base, (size_t)nread);
    else if (nread == UV_EOF)
        on_eof(c);
    else if (nread < 0)
        worker_conn_fail(c, WORKER_ERR_RESET);
}

static void on_connect(uv_connect_t *req, int status)
{
    worker_conn_t *c = req->data;
    free(req);
    if (status == UV_ECANCELED || c->state != WORKER_CONN_CONNECTING)
        return;
    if (status < 0) {
        worker_conn_fail(c, status == UV_ETIMEDOUT ? WORKER_ERR_CONNECT_TIMEOUT
                                                   : WORKER_ERR_CONNECT_REFUSED);
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0) {
        worker_conn_fail(c, WORKER_ERR_RESET);
        return;
    }
    c->transport->start(c);
}

void worker_conn_connect(worker_conn_t *c, const struct sockaddr *addr, uint32_t timeout_ms)
{
    assert(c->state == WORKER_CONN_CLOSED && !c->tcp_open && !c->destroying);
    c->bytes = 0;
    c->proto = c->h2c ? WORKER_PROTO_H2C : WORKER_PROTO_H1;
    /* --source-addrs: a socket of the source's family, bound before connect. */
    const struct sockaddr *src = worker_source_addr_next(addr->sa_family);
    if (uv_tcp_init_ex(c->timer.loop, &c->tcp, src ? src->sa_family : AF_UNSPEC) != 0) {
        /* Nothing was opened: report through the timer so done() stays async. */
        c->state = WORKER_CONN_CONNECTING;
        c->result = (worker_conn_result_t){.kind = WORKER_ERR_CONNECT_REFUSED,
                                           .latency_us = WORKER_NO_LATENCY};
        uv_timer_start(&c->timer, on_timeout, 0, 0);
        return;
    }
    c->handles++;
    c->tcp_open = true;
    c->tcp.data = c;
    c->state = WORKER_CONN_CONNECTING;
    /* Allocated per connect, freed by on_connect: an idle connection holds none. */
    uv_connect_t *req = malloc(sizeof *req);
    int rv = req != NULL ? 0 : UV_ENOMEM;
    if (rv == 0 && src != NULL)
        rv = worker_source_bind(&c->tcp, src);
    if (rv == 0) {
        req->data = c;
        rv = uv_tcp_connect(req, &c->tcp, addr, on_connect);
    }
    if (rv != 0) {
        free(req);
        /* EMFILE, EADDRNOTAVAIL…: the connect never started. */
        worker_conn_fail(c, rv == UV_ETIMEDOUT ? WORKER_ERR_CONNECT_TIMEOUT
                                               : WORKER_ERR_CONNECT_REFUSED);
        return;
    }
    uv_timer_start(&c->timer, on_timeout, timeout_ms, 0);
}

void worker_conn_use_h2(worker_conn_t *c)
{
    assert(c->state == WORKER_CONN_CONNECTING);
    c->proto = WORKER_PROTO_H2TLS;
}

void worker_conn_set_h2c(worker_conn_t *c)
{
    assert(c->transport == &worker_transport_plain);
    c->h2c = true;
}

void worker_conn_ready(worker_conn_t *c)
{
    if (c->state != WORKER_CONN_CONNECTING)
        return;
    if (c->proto != WORKER_PROTO_H1 && c->cbs->bytes == NULL) {
        int kind = worker_h2_open(c, c->proto == WORKER_PROTO_H2TLS);
        if (kind != 0)
            worker_conn_fail(c, kind);
        if (c->state != WORKER_CONN_CONNECTING)
            return; /* failed, here or in the transport's write */
    }
    uv_timer_stop(&c->timer);
    c->state = WORKER_CONN_IDLE;
    c->cbs->ready(c);
    idle_from_now(c);
}

void worker_conn_send(worker_conn_t *c, const char *req, size_t len, bool head, bool capture,
                      uint32_t timeout_ms)
{
    assert(c->state == WORKER_CONN_IDLE);
    worker_busy_poll_note_work();
    c->state = WORKER_CONN_BUSY;
    c->head = head;
    c->capture = capture;
    c->msg_done = false;
    c->bytes = 0;
    if (c->body != NULL)
        c->body->len = 0;
    if (c->hdrs != NULL)
        c->hdrs->len = 0;
    c->parser.settings = (void *)(c->want != NULL ? &header_settings : &parser_settings);
    c->start_ns = uv_hrtime();
    uv_timer_start(&c->timer, on_timeout, timeout_ms, 0);
    if (c->h2 != NULL) {
        int kind = worker_h2_submit(c, req, len);
        if (kind != 0)
            worker_conn_fail(c, kind);
        return;
    }
    if (c->transport->write(c, req, len) != 0)
        worker_conn_fail(c, WORKER_ERR_RESET);
}

/* The request ended with kind (a complete response: WORKER_KIND_OK) and status; the
 * connection carries the next one when keep, else the result comes once it is closed. */
static void finish(worker_conn_t *c, int kind, int status, bool keep)
{
    uint64_t end = uv_hrtime();
    bool ok = kind == WORKER_KIND_OK;
    worker_conn_result_t r = {.kind = kind, .status = status,
                              .latency_us = ok ? (end - c->start_ns) / 1000 : WORKER_NO_LATENCY,
                              .sent_ns = c->start_ns, .bytes = c->bytes};
    if (ok && c->capture && c->body != NULL) {
        r.body = c->body->data;
        r.body_len = c->body->len;
    }
    if (ok && c->want != NULL && c->hdrs != NULL) {
        r.headers = c->hdrs->data;
        r.headers_len = c->hdrs->len;
    }
    uv_timer_stop(&c->timer);
    if (!keep) {
        c->result = r;
        c->pending = true;
        start_close(c);
        return;
    }
    c->state = WORKER_CONN_IDLE;
    c->cbs->done(c, &r);
    idle_from_now(c);
}

/* The response is complete; consumed bytes of this read belonged to it. Extra bytes, or a
 * request still being written, leave the stream in an unknown state: close rather than
 * reuse. */
static void complete(worker_conn_t *c, bool leftover)
{
    bool keep = llhttp_should_keep_alive(&c->parser) && !leftover && !c->write_pending;
    finish(c, WORKER_KIND_OK, llhttp_get_status_code(&c->parser), keep);
}

/* HTTP/2: every byte goes to the session, idle or not (SETTINGS, PING, GOAWAY); a stream
 * that ended is the request's result. */
static void feed_h2(worker_conn_t *c, const char *data, size_t len)
{
    if (c->state == WORKER_CONN_BUSY)
        c->bytes += len;
    int kind = worker_h2_feed(c, data, len), status;
    if (kind != 0) {
        worker_conn_fail(c, kind);
        return;
    }
    if (c->state == WORKER_CONN_BUSY && worker_h2_take_end(c, &kind, &status))
        finish(c, kind, status, worker_h2_reusable(c));
    else if (c->state == WORKER_CONN_IDLE && !worker_h2_reusable(c))
        start_close(c); /* GOAWAY: the next request opens a new connection */
}

void worker_conn_feed(worker_conn_t *c, const char *data, size_t len)
{
    if (c->cbs->bytes != NULL) {
        c->cbs->bytes(c, data, len);
        return;
    }
    if (c->h2 != NULL) {
        feed_h2(c, data, len);
        return;
    }
    if (c->state != WORKER_CONN_BUSY) {
        /* Bytes nobody asked for: the stream cannot be trusted any more. */
        if (c->state == WORKER_CONN_IDLE)
            start_close(c);
        return;
    }
    llhttp_errno_t err = llhttp_execute(&c->parser, data, len);
    if (err == HPE_PAUSED && c->msg_done) {
        size_t used = (size_t)(llhttp_get_error_pos(&c->parser) - data);
        if (used > len)
            used = len;
        c->bytes += used;
        llhttp_resume(&c->parser);
        complete(c, used < len);
        return;
    }
    c->bytes += len;
    if (err != HPE_OK)
        worker_conn_fail(c, WORKER_ERR_PARSE);
}

static int on_message_begin(llhttp_t *p)
{
    worker_conn_t *c = p->data;
    c->msg_done = false;
    c->hdr_skip = false;
    c->hdr_entry = 0;
    if (c->hdrs != NULL)
        c->hdrs->len = 0; /* an interim 1xx's headers are not the answer's */
    return 0;
}

static int on_headers_complete(llhttp_t *p)
{
    worker_conn_t *c = p->data;
    /* 1: the response has no body, whatever its headers say. */
    return c->head ? 1 : 0;
}

void worker_conn_capture_body(worker_conn_t *c, const char *at, size_t len)
{
    if (!c->capture)
        return;
    if (c->body == NULL && (c->body = worker_bufpool_take(c->pool)) == NULL)
        return;
    size_t room = WORKER_BODY_CAPTURE_MAX - c->body->len;
    if (c->body->len < WORKER_BODY_CAPTURE_MAX)
        lc_buf_append(c->body, at, len < room ? len : room);
}

static int on_body(llhttp_t *p, const char *at, size_t len)
{
    worker_conn_capture_body(p->data, at, len);
    return 0;
}

void worker_hdrs_keep(lc_buf_t **hdrs, worker_bufpool_t *pool, const worker_hdr_want_t *want,
                      const char *name, size_t nlen, const char *value, size_t vlen)
{
    bool wanted = want != NULL && want->all;
    for (size_t i = 0; want != NULL && !wanted && i < want->n; i++)
        wanted = want->lens[i] == nlen && memcmp(want->names[i], name, nlen) == 0;
    if (!wanted)
        return;
    if (*hdrs == NULL && (*hdrs = worker_bufpool_take(pool)) == NULL)
        return;
    lc_buf_t *b = *hdrs;
    if (b->len + nlen + vlen + 2 > WORKER_HEADERS_CAPTURE_MAX)
        return;
    size_t from = b->len;
    if (lc_buf_append(b, name, nlen) != 0 || lc_buf_append(b, "", 1) != 0 ||
        lc_buf_append(b, value, vlen) != 0 || lc_buf_append(b, "", 1) != 0)
        b->len = from;
}

void worker_conn_capture_header(worker_conn_t *c, const char *name, size_t nlen,
                                const char *value, size_t vlen)
{
    worker_hdrs_keep(&c->hdrs, c->pool, c->want, name, nlen, value, vlen);
}

void worker_conn_want_headers(worker_conn_t *c, const worker_hdr_want_t *want)
{
    assert(c->state != WORKER_CONN_BUSY);
    c->want = worker_hdr_want_some(want);
}

void worker_conn_send_out(worker_conn_t *c, const worker_req_out_t *out)
{
    worker_conn_want_headers(c, out->want);
    worker_conn_send(c, out->data, out->len, out->head, out->capture, out->timeout_ms);
}

/* Whether the header name so far, s[0..len) in any case, begins one of the names wanted:
 * the others are dropped at their first piece, without a copy. */
static bool may_be_wanted(const worker_hdr_want_t *w, const char *s, size_t len)
{
    if (w->all)
        return true;
    if (len == 0)
        return true; /* nothing to judge by yet */
    char first = (char)(s[0] >= 'A' && s[0] <= 'Z' ? s[0] | 0x20 : s[0]);
    for (size_t i = 0; i < w->n; i++)
        if (w->lens[i] >= len && w->names[i][0] == first && strncasecmp(w->names[i], s, len) == 0)
            return true;
    return false;
}

/* A wanted header's name arrives in pieces: they collect at hdrs[hdr_entry...], lowercased. */
static int on_header_field(llhttp_t *p, const char *at, size_t len)
{
    worker_conn_t *c = p->data;
    if (c->hdr_skip)
        return 0;
    size_t have = c->hdrs != NULL ? c->hdrs->len - c->hdr_entry : 0;
    if (have == 0 && !may_be_wanted(c->want, at, len)) {
        c->hdr_skip = true;
        return 0;
    }
    if (c->hdrs == NULL && (c->hdrs = worker_bufpool_take(c->pool)) == NULL) {
        c->hdr_skip = true;
        return 0;
    }
    size_t from = c->hdrs->len;
    if (from + len + 2 > WORKER_HEADERS_CAPTURE_MAX || lc_buf_append(c->hdrs, at, len) != 0) {
        c->hdr_skip = true;
        return 0;
    }
    for (size_t i = from; i < c->hdrs->len; i++)
        if (c->hdrs->data[i] >= 'A' && c->hdrs->data[i] <= 'Z')
            c->hdrs->data[i] = (char)(c->hdrs->data[i] | 0x20);
    if (!may_be_wanted(c->want, c->hdrs->data + c->hdr_entry, c->hdrs->len - c->hdr_entry))
        c->hdr_skip = true;
    return 0;
}

static int on_header_field_complete(llhttp_t *p)
{
    worker_conn_t *c = p->data;
    if (c->hdrs == NULL || c->hdr_skip)
        return 0;
    const char *name = c->hdrs->data + c->hdr_entry;
    size_t len = c->hdrs->len - c->hdr_entry;
    bool wanted = c->want->all; /* every piece began a wanted name: the whole is one when as long */
    for (size_t i = 0; !wanted && i < c->want->n; i++)
        wanted = c->want->lens[i] == len && memcmp(c->want->names[i], name, len) == 0;
    if (!wanted || lc_buf_append(c->hdrs, "", 1) != 0)
        c->hdr_skip = true;
    return 0;
}

static int on_header_value(llhttp_t *p, const char *at, size_t len)
{
    worker_conn_t *c = p->data;
    if (c->hdrs == NULL || c->hdr_skip)
        return 0;
    if (c->hdrs->len + len + 1 > WORKER_HEADERS_CAPTURE_MAX || lc_buf_append(c->hdrs, at, len) != 0)
        c->hdr_skip = true;
    return 0;
}

/* Ends one header: kept with its NUL, or dropped (unwanted, or over the bound). */
static int on_header_value_complete(llhttp_t *p)
{
    worker_conn_t *c = p->data;
    bool skip = c->hdr_skip;
    c->hdr_skip = false;
    if (c->hdrs == NULL)
        return 0;
    if (skip || lc_buf_append(c->hdrs, "", 1) != 0)
        c->hdrs->len = c->hdr_entry;
    c->hdr_entry = c->hdrs->len;
    return 0;
}

bool worker_conn_header_next(const worker_conn_result_t *r, size_t *pos, const char **name,
                             const char **value, size_t *value_len)
{
    if (r->headers == NULL || *pos >= r->headers_len)
        return false;
    *name = r->headers + *pos;
    *value = *name + strlen(*name) + 1;
    *value_len = strlen(*value);
    *pos = (size_t)(*value + *value_len + 1 - r->headers);
    return true;
}

static int on_message_complete(llhttp_t *p)
{
    worker_conn_t *c = p->data;
    /* llhttp takes any three digits: "000" is no status, and a parse error. */
    if (llhttp_get_status_code(p) < 100)
        return -1;
    /* Interim 1xx responses are not the answer: keep reading. */
    if (llhttp_get_status_code(p) / 100 == 1)
        return 0;
    c->msg_done = true;
    return HPE_PAUSED;
}

/* Plain TCP transport. */

static void plain_start(worker_conn_t *c)
{
    worker_conn_ready(c);
}

int worker_conn_write_async(worker_conn_t *c, const char *buf, size_t len, bool copy,
                            uv_write_cb cb)
{
    assert(c->tcp_open && len > 0 && len <= UINT_MAX);
    uv_write_t *req = malloc(sizeof *req + (copy ? len : 0));
    if (req == NULL)
        return UV_ENOMEM;
    char *data = (char *)buf;
    if (copy) {
        data = (char *)(req + 1);
        memcpy(data, buf, len);
    }
    uv_buf_t b = uv_buf_init(data, (unsigned)len);
    req->data = c;
    int rv = uv_write(req, (uv_stream_t *)&c->tcp, &b, 1, cb);
    if (rv != 0)
        free(req);
    return rv;
}

static void on_write(uv_write_t *req, int status)
{
    worker_conn_t *c = req->data;
    free(req); /* and the copy of the request's rest after it */
    c->write_pending = false;
    if (status < 0 && status != UV_ECANCELED && c->state == WORKER_CONN_BUSY)
        worker_conn_fail(c, WORKER_ERR_RESET);
}

static int plain_write(worker_conn_t *c, const char *buf, size_t len)
{
    uv_buf_t b = uv_buf_init((char *)buf, (unsigned)len);
    int n = uv_try_write((uv_stream_t *)&c->tcp, &b, 1);
    if (n >= 0 && (size_t)n == len)
        return 0;
    if (n < 0 && n != UV_EAGAIN)
        return n;
    size_t sent = n > 0 ? (size_t)n : 0;
    /* The caller's bytes are not ours to keep: the rest goes from a copy. */
    int rv = worker_conn_write_async(c, buf + sent, len - sent, true, on_write);
    if (rv == 0)
        c->write_pending = true;
    return rv;
}

static void plain_read(worker_conn_t *c, const char *buf, size_t len)
{
    worker_conn_feed(c, buf, len);
}

const worker_transport_ops_t worker_transport_plain = {
    .name = "tcp",
    .start = plain_start,
    .write = plain_write,
    .read = plain_read,
    .reset = NULL,
    .close = NULL,
};
