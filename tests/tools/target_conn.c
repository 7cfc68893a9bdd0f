/* target_conn.c — lc_target's connections: llhttp parsing, per-request overrides, delayed and
 * stalled responses, and coalesced writes. App paths (target_app.c) are told apart by their URL
 * before the headers arrive, and only theirs are captured. */
#include <assert.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llhttp.h>
#include <uv.h>

#include "lc_err.h"
#include "target.h"
#include "target_h2.h"

/* The start of the HTTP/2 client preface; no HTTP/1.1 request starts so (llhttp refuses PRI). */
#define H2_PREFACE_START "PRI "
#define H2_PREFACE_START_LEN 4

typedef struct pending_s {
    struct pending_s *next;
    uint64_t due_ns;
    resp_t r;
} pending_t;

struct conn_s {
    uv_tcp_t tcp;
    uv_timer_t timer;
    uv_shutdown_t shutdown;
    llhttp_t parser;
    engine_t *e;
    conn_t *prev, *next;
    pending_t *head, *tail; /* delayed responses, answered strictly in order */
    int handles_open, reject_status;
    bool closing, draining, read_paused; /* draining: the last request has been parsed */
    size_t header_bytes, url_len, nheaders;
    uint64_t body_bytes;
    uint8_t route;  /* enum app_route of the request being parsed; APP_NONE for plain paths */
    uint8_t sniffed; /* --http2: bytes of H2_PREFACE_START seen; at its length, decided */
    app_req_t *app; /* what app paths capture; allocated on the connection's first one */
    h2_conn_t *h2;  /* --http2: the session, once the first bytes were the preface */
    char url[URL_MAX];
};

typedef struct wreq_s {
    uv_write_t req;
    char data[]; /* the unwritten tail of engine->out, which is reused */
} wreq_t;

static void out_flush(conn_t *c, size_t xlen);
static void on_timer(uv_timer_t *tm);
static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);

/* ---- response formatting and output ---- */

static const char *reason(int status)
{
    static const struct { int code; const char *text; } reasons[] = {
        {200, "OK"}, {201, "Created"}, {202, "Accepted"}, {204, "No Content"},
        {301, "Moved Permanently"}, {302, "Found"}, {303, "See Other"}, {304, "Not Modified"},
        {307, "Temporary Redirect"}, {308, "Permanent Redirect"}, {400, "Bad Request"},
        {401, "Unauthorized"}, {403, "Forbidden"}, {404, "Not Found"},
        {405, "Method Not Allowed"}, {408, "Request Timeout"}, {413, "Content Too Large"},
        {414, "URI Too Long"}, {429, "Too Many Requests"}, {431, "Request Header Fields Too Large"},
        {500, "Internal Server Error"}, {502, "Bad Gateway"}, {503, "Service Unavailable"},
        {504, "Gateway Timeout"}};
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
        if (reasons[i].code == status)
            return reasons[i].text;
    return "Status";
}

static bool bodyless(int status)
{
    return status == 204 || status == 304;
}

/* extra: further header lines (each ending in CRLF), elen bytes of them. */
static size_t format_head(char *buf, size_t cap, int status, const char *ctype, size_t clen,
                          const char *extra, size_t elen, int conn_hdr)
{
    static const char *const conn_line[] = {"", "Connection: close\r\n",
                                            "Connection: keep-alive\r\n"};
    int n;
    if (bodyless(status))
        n = snprintf(buf, cap, "HTTP/1.1 %d %s\r\nServer: lc_target\r\n%.*s%s\r\n", status,
                     reason(status), (int)elen, extra, conn_line[conn_hdr]);
    else
        n = snprintf(buf, cap,
                     "HTTP/1.1 %d %s\r\nServer: lc_target\r\nContent-Type: %s\r\n"
                     "Content-Length: %zu\r\n%.*s%s\r\n",
                     status, reason(status), ctype, clen, (int)elen, extra, conn_line[conn_hdr]);
    return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

static void out_append(conn_t *c, const char *data, size_t len)
{
    engine_t *e = c->e;
    while (len > 0 && !c->closing) {
        size_t n = OUT_BUF_SIZE - e->out_len < len ? OUT_BUF_SIZE - e->out_len : len;
        memcpy(e->out + e->out_len, data, n);
        e->out_len += n;
        data += n;
        len -= n;
        if (e->out_len == OUT_BUF_SIZE)
            out_flush(c, 0);
    }
}

/* Appends len bytes of 'x'; large bodies are written straight from the shared buffer. */
static void out_append_x(conn_t *c, size_t len)
{
    engine_t *e = c->e;
    if (len > OUT_BUF_SIZE - e->out_len) {
        out_flush(c, len);
        return;
    }
    memcpy(e->out + e->out_len, e->t->xbuf, len);
    e->out_len += len;
}

static void on_write(uv_write_t *req, int status)
{
    conn_t *c = req->handle->data;
    free(req);
    if (status < 0) {
        conn_close(c);
    } else if (c->read_paused && !c->closing &&
               c->tcp.write_queue_size < WRITE_HIGH_WATER / 2) {
        c->read_paused = false;
        if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0)
            conn_close(c);
    }
    if (c->h2 != NULL && !c->closing && c->tcp.write_queue_size < WRITE_HIGH_WATER / 2)
        h2_conn_drained(c->h2); /* it stops producing past the high water mark */
}

/* Queues what uv_try_write left over; only engine->out needs copying, 'x' bufs are static. */
static void write_rest(conn_t *c, uv_buf_t *bufs, size_t nb, size_t done)
{
    engine_t *e = c->e;
    size_t i = 0;
    while (done >= bufs[i].len)
        done -= bufs[i++].len;
    bufs[i].base += done;
    bufs[i].len -= done;
    bool copy = bufs[i].base >= e->out && bufs[i].base < e->out + OUT_BUF_SIZE;
    wreq_t *w = malloc(sizeof *w + (copy ? bufs[i].len : 0));
    if (w == NULL) {
        conn_close(c);
        return;
    }
    if (copy) {
        memcpy(w->data, bufs[i].base, bufs[i].len);
        bufs[i].base = w->data;
    }
    if (uv_write(&w->req, (uv_stream_t *)&c->tcp, bufs + i, (unsigned)(nb - i), on_write) != 0) {
        free(w);
        conn_close(c);
        return;
    }
    if (c->tcp.write_queue_size > WRITE_HIGH_WATER && !c->read_paused) {
        uv_read_stop((uv_stream_t *)&c->tcp); /* a client that does not read stops being read */
        c->read_paused = true;
    }
}

/* Hands engine->out plus xlen bytes of 'x' to the socket, without allocating when it can. */
static void out_flush(conn_t *c, size_t xlen)
{
    engine_t *e = c->e;
    uv_buf_t bufs[2 + RESP_SIZE_MAX / OUT_BUF_SIZE];
    size_t nb = 0, total = e->out_len + xlen;
    if (e->out_len > 0)
        bufs[nb++] = uv_buf_init(e->out, (unsigned)e->out_len);
    for (size_t left = xlen; left > 0;) {
        size_t n = left < OUT_BUF_SIZE ? left : OUT_BUF_SIZE;
        bufs[nb++] = uv_buf_init(e->t->xbuf, (unsigned)n);
        left -= n;
    }
    e->out_len = 0;
    if (nb == 0 || c->closing)
        return;
    int n = uv_try_write((uv_stream_t *)&c->tcp, bufs, (unsigned)nb);
    if (n < 0 && n != UV_EAGAIN) {
        conn_close(c);
        return;
    }
    if (n < 0 || (size_t)n < total)
        write_rest(c, bufs, nb, n < 0 ? 0 : (size_t)n);
}

#define LINGER_MS 2000u

static void on_linger(uv_timer_t *tm)
{
    conn_close(tm->data);
}

/* HTTP/2 lingers after its FIN, as nginx does (lingering_close): a client may still be sending
 * (streams it opened before our GOAWAY reached it), and closing at once would answer those
 * bytes with a TCP reset that throws away the responses it has not read yet. What comes is
 * discarded (on_read while draining) until its EOF, or LINGER_MS. */
static void on_shutdown(uv_shutdown_t *req, int status)
{
    conn_t *c = req->handle->data;
    if (status != 0 || c->h2 == NULL || c->closing ||
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0) {
        conn_close(c);
        return;
    }
    uv_timer_start(&c->timer, on_linger, LINGER_MS, 0);
}

/* After a Connection: close response: finish sending, then close. */
static void conn_shutdown(conn_t *c)
{
    out_flush(c, 0);
    if (c->closing)
        return;
    uv_read_stop((uv_stream_t *)&c->tcp);
    if (uv_shutdown(&c->shutdown, (uv_stream_t *)&c->tcp, on_shutdown) != 0)
        conn_close(c);
}

/* Writes a plain or control response: the head, then 'x' bytes or the stats JSON. */
static void write_generated(conn_t *c, const resp_t *r)
{
    target_t *t = c->e->t;
    char head[512], *json = NULL;
    size_t hlen, blen = r->size;
    if (r->kind == RESP_STATS || r->kind == RESP_RESET) {
        json = stats_json(t);
        blen = json ? strlen(json) : 0;
        if (r->kind == RESP_RESET)
            stats_reset(t);
    }
    if (r->kind == RESP_PLAIN && r->status == (int)t->cfg.status && r->size == t->cfg.body_size) {
        out_append(c, t->hdr[r->conn_hdr], t->hdr_len[r->conn_hdr]);
    } else {
        hlen = format_head(head, sizeof head, r->status, json ? "application/json" : "text/plain",
                           blen, "", 0, r->conn_hdr);
        out_append(c, head, hlen);
    }
    if (!r->head && !bodyless(r->status) && json != NULL)
        out_append(c, json, blen);
    else if (!r->head && !bodyless(r->status))
        out_append_x(c, blen);
    free(json);
}

/* Writes one response. A request is counted here, when its response is handed to the socket
 * (copied into the output that is flushed before this callback returns): requests whose
 * connection closed while their response was still delayed are never counted, so the counts
 * equal the answers clients could have seen. */
static void write_resp(conn_t *c, const resp_t *r)
{
    engine_t *e = c->e;
    if (c->closing) {
        free(r->data);
        return;
    }
    if (r->kind == RESP_APP)
        out_append(c, r->data, r->size);
    else
        write_generated(c, r);
    free(r->data);
    if (r->counted)
        atomic_fetch_add_explicit(r->slot >= 0 ? &e->by_path[r->slot] : &e->other, 1, RELAXED);
    else if (r->kind == RESP_REJECT)
        atomic_fetch_add_explicit(&e->rejected, 1, RELAXED);
    if (r->conn_hdr == CONN_HDR_CLOSE)
        conn_shutdown(c);
}

/* ---- delayed responses ---- */

static void arm_timer(conn_t *c, uint64_t now)
{
    uint64_t left = c->head->due_ns > now ? c->head->due_ns - now : 0;
    uv_timer_start(&c->timer, on_timer, (left + NS_PER_MS - 1) / NS_PER_MS, 0);
}

/* The timer may fire up to a millisecond early (the loop clock is coarse), so it re-checks. */
static void on_timer(uv_timer_t *tm)
{
    conn_t *c = tm->data;
    if (c->h2 != NULL) {
        h2_conn_on_timer(c->h2);
        return;
    }
    uint64_t now = uv_hrtime();
    while (c->head != NULL && c->head->due_ns <= now && !c->closing) {
        pending_t *pd = c->head;
        c->head = pd->next;
        if (c->head == NULL)
            c->tail = NULL;
        write_resp(c, &pd->r);
        free(pd);
    }
    out_flush(c, 0);
    if (c->head != NULL && !c->closing)
        arm_timer(c, now);
}

/* Answers now when nothing is queued ahead and it is due, else queues (the one allocation). */
static void emit(conn_t *c, const resp_t *r, uint64_t due_ns)
{
    if (c->head == NULL && (due_ns == 0 || due_ns <= uv_hrtime())) {
        write_resp(c, r);
        return;
    }
    pending_t *pd = malloc(sizeof *pd);
    if (pd == NULL) {
        free(r->data);
        conn_close(c);
        return;
    }
    *pd = (pending_t){.due_ns = due_ns, .r = *r};
    if (c->tail != NULL) {
        c->tail->next = pd;
    } else {
        c->head = pd;
        arm_timer(c, uv_hrtime());
    }
    c->tail = pd;
}

/* ---- requests ---- */

/* Answers an app path: its whole response in one allocation that the resp owns, due when a
 * plain response would be (--latency-ms, jitter, stall). */
static void handle_app(conn_t *c, resp_t *r, uint64_t due_ns)
{
    engine_t *e = c->e;
    app_resp_t a;
    int rv = app_serve(&e->t->app_key, c->route, c->parser.method, c->url, c->url_len, c->app, &a);
    if (rv != 0) {
        conn_close(c); /* out of memory */
        return;
    }
    size_t blen = r->head ? 0 : a.body.len, cap = 256 + a.headers.len + blen;
    char *data = malloc(cap);
    if (data == NULL) {
        app_resp_free(&a);
        conn_close(c);
        return;
    }
    size_t hlen = format_head(data, cap, a.status, a.content_type, a.body.len,
                              a.headers.data ? a.headers.data : "", a.headers.len, r->conn_hdr);
    assert(hlen + blen < cap);
    if (blen > 0)
        memcpy(data + hlen, a.body.data, blen);
    *r = (resp_t){.kind = RESP_APP, .conn_hdr = r->conn_hdr, .counted = true, .status = a.status,
                  .slot = stats_path_slot(e->t, a.stats_key, a.stats_key_len),
                  .size = hlen + blen, .data = data};
    app_resp_free(&a);
    emit(c, r, due_ns);
}

static void handle_request(conn_t *c)
{
    llhttp_t *p = &c->parser;
    resp_t r = {.head = p->method == HTTP_HEAD};
    uint64_t due_ns;
    if (!llhttp_should_keep_alive(p))
        r.conn_hdr = CONN_HDR_CLOSE;
    else if (p->http_major == 1 && p->http_minor == 0)
        r.conn_hdr = CONN_HDR_KEEPALIVE;
    plan_request(c->e, p->method, c->route, c->url, c->url_len, &r, &due_ns);
    if (r.kind == RESP_APP)
        handle_app(c, &r, due_ns);
    else
        emit(c, &r, due_ns);
    if (r.conn_hdr == CONN_HDR_CLOSE)
        c->draining = true;
}

/* Answers a request llhttp or our limits refused, after anything queued, and closes. */
static void reject(conn_t *c, int status)
{
    resp_t r = {.kind = RESP_REJECT, .conn_hdr = CONN_HDR_CLOSE, .status = status, .slot = -1};
    c->draining = true;
    emit(c, &r, 0);
}

/* ---- llhttp callbacks ---- */

static int refuse(conn_t *c, int status)
{
    c->reject_status = status;
    return -1;
}

/* An app capture's result: 0, or the refusal of a request past a limit or out of memory. */
static int app_refuse(conn_t *c, int rv, int too_big_status)
{
    return rv == 0 ? 0 : refuse(c, rv == LC_ETOOBIG ? too_big_status : 503);
}

static int on_message_begin(llhttp_t *p)
{
    conn_t *c = p->data;
    c->url_len = c->nheaders = c->header_bytes = 0;
    c->body_bytes = 0;
    c->route = APP_NONE;
    return 0;
}

static int on_url(llhttp_t *p, const char *at, size_t len)
{
    conn_t *c = p->data;
    if (len >= URL_MAX - c->url_len)
        return refuse(c, 414);
    memcpy(c->url + c->url_len, at, len);
    c->url_len += len;
    return 0;
}

/* The URL decides whether headers and body are kept: only app paths pay for that. */
static int on_url_complete(llhttp_t *p)
{
    conn_t *c = p->data;
    const char *q = memchr(c->url, '?', c->url_len);
    c->route = (uint8_t)app_route(c->url, q ? (size_t)(q - c->url) : c->url_len);
    if (c->route == APP_NONE)
        return 0;
    if (c->app == NULL && (c->app = calloc(1, sizeof *c->app)) == NULL)
        return refuse(c, 503);
    app_req_reset(c->app);
    return 0;
}

static int count_header_bytes(conn_t *c, size_t len)
{
    c->header_bytes += len;
    return c->header_bytes > HEADER_BYTES_MAX ? refuse(c, 431) : 0;
}

/* Counts a piece of a header name or value and, on app paths only, captures it. */
static int header_piece(conn_t *c, const char *at, size_t len,
                        int (*capture)(app_req_t *, const char *, size_t))
{
    int rv = count_header_bytes(c, len);
    if (rv != 0 || c->route == APP_NONE)
        return rv;
    return app_refuse(c, capture(c->app, at, len), 431);
}

static int on_header_field(llhttp_t *p, const char *at, size_t len)
{
    return header_piece(p->data, at, len, app_req_header_name);
}

static int on_header_value(llhttp_t *p, const char *at, size_t len)
{
    return header_piece(p->data, at, len, app_req_header_value);
}

static int on_header_field_complete(llhttp_t *p)
{
    conn_t *c = p->data;
    if (++c->nheaders > HEADERS_MAX)
        return refuse(c, 431);
    if (c->route != APP_NONE)
        app_req_header_name_end(c->app);
    return 0;
}

static int on_headers_complete(llhttp_t *p)
{
    conn_t *c = p->data;
    uint64_t max = c->route != APP_NONE ? APP_BODY_MAX : BODY_MAX;
    return p->content_length > max ? refuse(c, 413) : 0;
}

static int on_body(llhttp_t *p, const char *at, size_t len)
{
    conn_t *c = p->data;
    c->body_bytes += len; /* chunked bodies have no length up front */
    if (c->body_bytes > BODY_MAX)
        return refuse(c, 413);
    return c->route == APP_NONE ? 0 : app_refuse(c, app_req_body(c->app, at, len), 413);
}

/* Pauses the parser once the connection will close, so later pipelined bytes are ignored. */
static int on_message_complete(llhttp_t *p)
{
    conn_t *c = p->data;
    if (!c->closing)
        handle_request(c);
    return c->closing || c->draining ? HPE_PAUSED : 0;
}

static const llhttp_settings_t parser_settings = {
    .on_message_begin = on_message_begin,
    .on_url = on_url,
    .on_url_complete = on_url_complete,
    .on_header_field = on_header_field,
    .on_header_value = on_header_value,
    .on_header_field_complete = on_header_field_complete,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

/* ---- connections ---- */

static void on_conn_handle_closed(uv_handle_t *h)
{
    conn_t *c = h->data;
    if (--c->handles_open > 0)
        return;
    if (c->app != NULL)
        app_req_free(c->app);
    free(c->app);
    h2_conn_free(c->h2);
    free(c);
}

void conn_close(conn_t *c)
{
    if (c->closing)
        return;
    c->closing = true;
    while (c->head != NULL) {
        pending_t *pd = c->head;
        c->head = pd->next;
        free(pd->r.data);
        free(pd);
    }
    c->tail = NULL;
    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        c->e->conns = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    atomic_fetch_sub_explicit(&c->e->conns_now, 1, RELAXED);
    uv_close((uv_handle_t *)&c->timer, on_conn_handle_closed);
    uv_close((uv_handle_t *)&c->tcp, on_conn_handle_closed);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    conn_t *c = h->data;
    *buf = uv_buf_init(c->e->rbuf, READ_BUF_SIZE); /* parsing never outlives the read callback */
}

static void feed_h1(conn_t *c, const char *data, size_t len)
{
    enum llhttp_errno err = llhttp_execute(&c->parser, data, len);
    if (err != HPE_OK && err != HPE_PAUSED && !c->closing && !c->draining)
        reject(c, c->reject_status ? c->reject_status : 400);
}

/* --http2: a connection's first bytes say which protocol it speaks. Returns true once they
 * did (then c->h2 is set for HTTP/2, and the bytes held back until now were fed), false
 * while they are still a strict prefix of H2_PREFACE_START (they are that prefix: nothing
 * needs keeping but their count). */
static bool sniff(conn_t *c, const char *data, size_t len)
{
    size_t seen = c->sniffed, want = H2_PREFACE_START_LEN - seen, n = len < want ? len : want;
    assert(seen < H2_PREFACE_START_LEN);
    bool h2 = memcmp(data, H2_PREFACE_START + seen, n) == 0;
    if (h2 && n < want) {
        c->sniffed = (uint8_t)(seen + n);
        return false;
    }
    c->sniffed = H2_PREFACE_START_LEN;
    if (h2 && h2_conn_open(c, &c->h2) != 0) {
        conn_close(c);
        return true;
    }
    if (seen > 0 && h2)
        h2_conn_feed(c->h2, H2_PREFACE_START, seen);
    else if (seen > 0)
        feed_h1(c, H2_PREFACE_START, seen);
    return true;
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    conn_t *c = s->data;
    if (nread < 0) {
        conn_close(c); /* EOF or error: what is still delayed was never seen by the client */
        return;
    }
    if (nread == 0 || c->draining || c->closing)
        return; /* after a request that closes, reading goes on only to notice the client leave */
    atomic_fetch_add_explicit(&c->e->bytes_in, (uint64_t)nread, RELAXED);
    if (c->sniffed < H2_PREFACE_START_LEN && !sniff(c, buf->base, (size_t)nread))
        return;
    if (c->h2 != NULL)
        h2_conn_feed(c->h2, buf->base, (size_t)nread); /* it writes what it answers */
    else if (!c->closing && !c->draining)
        feed_h1(c, buf->base, (size_t)nread);
    out_flush(c, 0);
}

void conn_on_connection(uv_stream_t *server, int status)
{
    engine_t *e = server->data;
    conn_t *c;
    if (status < 0 || (c = malloc(sizeof *c)) == NULL)
        return;
    memset(c, 0, offsetof(conn_t, url));
    c->e = e;
    c->sniffed = e->t->cfg.http2 ? 0 : H2_PREFACE_START_LEN; /* without --http2, HTTP/1.1 only */
    uv_tcp_init(&e->loop, &c->tcp);
    uv_timer_init(&e->loop, &c->timer);
    c->tcp.data = c->timer.data = c;
    c->handles_open = 2;
    c->next = e->conns;
    if (e->conns != NULL)
        e->conns->prev = c;
    e->conns = c;
    atomic_fetch_add_explicit(&e->conns_now, 1, RELAXED);
    atomic_fetch_add_explicit(&e->conns_total, 1, RELAXED);
    llhttp_init(&c->parser, HTTP_REQUEST, &parser_settings);
    c->parser.data = c;
    if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0 ||
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0) {
        conn_close(c);
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
}

void conn_prepare_responses(target_t *t)
{
    memset(t->xbuf, 'x', sizeof t->xbuf);
    for (int h = CONN_HDR_NONE; h <= CONN_HDR_KEEPALIVE; h++)
        t->hdr_len[h] = format_head(t->hdr[h], sizeof t->hdr[h], (int)t->cfg.status, "text/plain",
                                    t->cfg.body_size, "", 0, h);
}

/* ---- for target_h2.c ---- */

engine_t *conn_engine(const conn_t *c)
{
    return c->e;
}

void conn_out(conn_t *c, const char *data, size_t len)
{
    out_append(c, data, len);
}

void conn_flush(conn_t *c)
{
    out_flush(c, 0);
}

bool conn_backlogged(const conn_t *c)
{
    return c->tcp.write_queue_size > WRITE_HIGH_WATER;
}

bool conn_closing(const conn_t *c)
{
    return c->closing || c->draining;
}

void conn_timer_start(conn_t *c, uint64_t ms)
{
    if (!c->closing)
        uv_timer_start(&c->timer, on_timer, ms, 0);
}

void conn_end(conn_t *c)
{
    if (c->closing || c->draining)
        return;
    c->draining = true;
    conn_shutdown(c);
}
