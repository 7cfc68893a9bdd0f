/* lc_http_server.c — HTTP/1.1 API server on libuv + llhttp: one exchange in flight per connection. */
#include "lc_http_server.h"

#include <assert.h>
#include <llhttp.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lc_buf.h"
#include "lc_err.h"
#include "lc_log.h"

#include "lc_http_server_internal.h"

static const char *const why_text[WHY_COUNT] = {
    "request headers not complete within the deadline",
    "request body not complete within the deadline",
    "answer not read within the deadline",
    "too many connections",
};


void ex_free(lc_http_exchange_t *ex)
{
    if (!ex)
        return;
    for (int i = 0; i < B_COUNT; i++)
        lc_buf_free(&ex->bufs[i]);
    free(ex);
}

/* ---- responses ---- */

static const struct {
    int status;
    const char *reason;
} reasons[] = {
    {100, "Continue"}, {200, "OK"}, {201, "Created"}, {202, "Accepted"},
    {204, "No Content"}, {301, "Moved Permanently"}, {302, "Found"},
    {304, "Not Modified"}, {307, "Temporary Redirect"}, {400, "Bad Request"},
    {401, "Unauthorized"}, {403, "Forbidden"}, {404, "Not Found"},
    {405, "Method Not Allowed"}, {408, "Request Timeout"}, {409, "Conflict"},
    {413, "Payload Too Large"}, {414, "URI Too Long"}, {415, "Unsupported Media Type"}, {429, "Too Many Requests"},
    {431, "Request Header Fields Too Large"}, {500, "Internal Server Error"},
    {501, "Not Implemented"}, {503, "Service Unavailable"},
};

static const char *reason_phrase(int status)
{
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
        if (reasons[i].status == status)
            return reasons[i].reason;
    return "Unknown";
}

/* Builds a whole response in one malloc'd buffer (only its head when body
 * is NULL: the body follows from a file); NULL when out of memory. */
static char *build_response(int status, const char *ctype, const char *body, size_t body_len,
                            const char *headers, int flags, size_t *out_len)
{
    lc_buf_t b = {0};
    int no_body = status == 204 || status == 304 || status < 200;
    int rv = lc_buf_appendf(&b, "HTTP/1.1 %d %s\r\n", status, reason_phrase(status));
    if (ctype && !no_body)
        rv |= lc_buf_appendf(&b, "Content-Type: %s\r\n", ctype);
    if (!no_body)
        rv |= lc_buf_appendf(&b, "Content-Length: %zu\r\n", body_len);
    if (flags & RESP_CLOSE)
        rv |= lc_buf_appendf(&b, "Connection: close\r\n");
    else if (flags & RESP_KEEP_ALIVE)
        rv |= lc_buf_appendf(&b, "Connection: keep-alive\r\n");
    rv |= lc_buf_appendf(&b, "%s\r\n", headers ? headers : "");
    if (!no_body && !(flags & RESP_HEAD) && body != NULL)
        rv |= lc_buf_append(&b, body, body_len);
    if (rv != 0) {
        lc_buf_free(&b);
        return NULL;
    }
    *out_len = b.len;
    return b.data;
}

static void on_write(uv_write_t *req, int status);

void parts_release(const lc_http_part_t *parts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (parts[i].release != NULL)
            parts[i].release(parts[i].arg);
}

/* Queues data (taken) then n parts; writes complete in order. */
void conn_write_parts(conn_t *c, char *data, size_t len, const lc_http_part_t *parts, size_t n)
{
    assert(n <= LC_HTTP_PARTS_MAX);
    write_req_t *w = malloc(sizeof *w);
    uv_buf_t b[1 + LC_HTTP_PARTS_MAX];
    b[0] = uv_buf_init(data, (unsigned)len);
    for (size_t i = 0; i < n; i++)
        b[1 + i] = uv_buf_init((char *)parts[i].data, (unsigned)parts[i].len);
    if (w) {
        w->conn = c;
        w->data = data;
        w->nparts = n;
        for (size_t i = 0; i < n; i++)
            w->parts[i] = parts[i];
    }
    if (!w || uv_write(&w->req, (uv_stream_t *)&c->tcp, b, (unsigned)(1 + n), on_write) != 0) {
        free(data);
        free(w);
        parts_release(parts, n);
        conn_close(c);
        return;
    }
    c->writes++;
}

void conn_write(conn_t *c, char *data, size_t len)
{
    conn_write_parts(c, data, len, NULL, 0);
}

void conn_read_stop(conn_t *c)
{
    if (c->reading) {
        uv_read_stop((uv_stream_t *)&c->tcp);
        c->reading = 0;
    }
}

/* Whether an answer carries its body (not a 1xx, 204, 304, nor one to HEAD). */
static bool answer_has_body(int status, int flags)
{
    return status >= 200 && status != 204 && status != 304 && !(flags & RESP_HEAD);
}

/* Sends the head, then body: either body_len bytes copied from body, or
 * the n parts (taken) when body is NULL. */
static void send_answer(conn_t *c, int status, const char *ctype, const char *body,
                        size_t body_len, const lc_http_part_t *parts, size_t n,
                        const char *headers, int flags)
{
    size_t len = 0;
    if (c->closing) {
        parts_release(parts, n);
        return;
    }
    char *out = build_response(status, ctype, body, body_len, headers, flags, &len);
    if (!out) {
        parts_release(parts, n);
        conn_close(c);
        return;
    }
    if (flags & RESP_CLOSE) {
        c->close_after_write = 1;
        conn_read_stop(c);
    }
    if (!answer_has_body(status, flags)) {
        parts_release(parts, n);
        n = 0;
    }
    conn_write_parts(c, out, len, parts, n);
    if (!c->closing)
        conn_deadline(c, PH_SENDING, c->srv->limits.body_timeout_ms);
}

static void send_response(conn_t *c, int status, const char *ctype, const char *body,
                          size_t body_len, const char *headers, int flags)
{
    send_answer(c, status, ctype, body, body_len, NULL, 0, headers, flags);
}

/* Answers a request that never reached the handler, then closes. */
static void send_error(conn_t *c, int status, const char *what, const char *reason)
{
    char body[512];
    size_t n = (size_t)snprintf(body, sizeof body, "{\"error\":\"%s", what);
    for (const char *p = reason; p && *p && n < sizeof body - 8; p++) {
        unsigned char ch = (unsigned char)*p;
        if (ch == '"' || ch == '\\')
            body[n++] = '\\';
        body[n++] = ch < 0x20 ? ' ' : (char)ch;
    }
    n += (size_t)snprintf(body + n, sizeof body - n, "\"}");
    send_response(c, status, "application/json", body, n, NULL, RESP_CLOSE);
}

/* ---- connection lifetime ---- */

static void maybe_free_server(lc_http_server_t *s)
{
    if (s->closing && s->listener_closed && !s->conns)
        free(s);
}

static void on_conn_handle_closed(uv_handle_t *h)
{
    conn_t *c = h->data;
    if (--c->handles_open > 0)
        return;
    lc_http_server_t *s = c->srv;
    if (c->prev)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    s->nconns--;
    free(c->in);
    free(c);
    maybe_free_server(s);
}

/* A connection closing or lingering (both bounded) no longer takes a slot:
 * 408s sent to slow clients must free theirs at once. */
static void file_body_end(conn_t *c);

static void conn_uncount(conn_t *c)
{
    if (c->counted) {
        c->counted = 0;
        c->srv->nactive--;
    }
}

/* ---- answers whose body is a file ---- */

static void fs_close_done(uv_fs_t *req)
{
    uv_fs_req_cleanup(req);
    free(req);
}

/* Closes a body's file on libuv's thread pool: the last close of an unlinked spool file
 * frees its page cache, milliseconds for a report of many MB that the loop need not wait
 * for. Inline when the request cannot be made. */
static void close_off_loop(uv_loop_t *loop, int fd)
{
    uv_fs_t *req = malloc(sizeof *req);
    if (req == NULL || uv_fs_close(loop, req, fd, fs_close_done) != 0) {
        free(req);
        close(fd);
    }
}

static void file_body_end(conn_t *c)
{
    if (c->file.fd >= 0)
        close_off_loop(c->srv->loop, c->file.fd);
    c->file.fd = -1;
    c->file.left = 0;
}

/* Keeps FILE_WRITES chunks of the file in flight; a short read (the file
 * changed under us) closes the connection, since the length is promised. */
static void file_body_pump(conn_t *c)
{
    while (c->file.left > 0 && c->writes < FILE_WRITES && !c->closing) {
        size_t n = c->file.left < FILE_CHUNK ? (size_t)c->file.left : FILE_CHUNK;
        char *chunk = malloc(n);
        ssize_t got = chunk ? pread(c->file.fd, chunk, n, (off_t)c->file.off) : -1;
        if (got != (ssize_t)n) {
            free(chunk);
            lc_warn("http", "msg=\"answer body file cut short\" port=%u", c->srv->port);
            conn_close(c);
            return;
        }
        c->file.off += n;
        c->file.left -= n;
        conn_write(c, chunk, n);
    }
    if (c->file.left == 0)
        file_body_end(c);
}

/* Starts closing; the struct lives until both handles' close callbacks ran. */
void conn_close(conn_t *c)
{
    if (c->closing)
        return;
    c->closing = 1;
    conn_uncount(c);
    if (c->active) {
        c->active->conn = NULL; /* the handler still owns it; answering frees it */
        c->active = NULL;
    }
    ex_free(c->building);
    c->building = NULL;
    file_body_end(c);
    uv_close((uv_handle_t *)&c->timer, on_conn_handle_closed);
    uv_close((uv_handle_t *)&c->tcp, on_conn_handle_closed);
}

/* One line per reason every LOG_EVERY_MS at most: an attack must not become
 * a flood of log lines. */
static void note_forced_close(lc_http_server_t *s, int why, uint64_t limit)
{
    uint64_t now = uv_now(s->loop);
    s->closed[why].count++;
    if (s->closed[why].logged && now - s->closed[why].logged_at < LOG_EVERY_MS)
        return;
    lc_warn("http", "msg=\"closed connections: %s\" port=%u count=%llu limit=%llu",
            why_text[why], s->port, (unsigned long long)s->closed[why].count,
            (unsigned long long)limit);
    s->closed[why].count = 0;
    s->closed[why].logged_at = now;
    s->closed[why].logged = 1;
}

static uint64_t header_timeout(const conn_t *c)
{
    uint64_t ms = c->srv->limits.header_timeout_ms;
    return c->probe_slot && ms > LC_HTTP_PROBE_TIMEOUT_MS ? LC_HTTP_PROBE_TIMEOUT_MS : ms;
}

/* A request not complete by its deadline: 408, then the connection closes. */
static void expire_request(conn_t *c, int why, uint64_t limit)
{
    note_forced_close(c->srv, why, limit);
    ex_free(c->building);
    c->building = NULL;
    c->in_off = c->in_len = 0;
    send_error(c, 408, why_text[why], NULL);
}

static void on_timer(uv_timer_t *t)
{
    conn_t *c = t->data;
    lc_http_server_t *s = c->srv;
    if (c->phase == PH_HEADERS && (c->building != NULL || c->in_off < c->in_len)) {
        expire_request(c, WHY_HEADERS, header_timeout(c));
        return;
    }
    if (c->phase == PH_BODY) {
        expire_request(c, WHY_BODY, s->limits.body_timeout_ms);
        return;
    }
    if (c->phase == PH_SENDING)
        note_forced_close(s, WHY_SENDING, s->limits.body_timeout_ms);
    /* Otherwise a keep-alive connection left idle, or the end of a linger. */
    conn_close(c);
}

/* Counts down to a phase's absolute deadline; bytes arriving do not move it. */
void conn_deadline(conn_t *c, enum phase ph, uint64_t ms)
{
    c->phase = ph;
    uv_timer_start(&c->timer, on_timer, ms, 0);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    if (status < 0)
        conn_close(req->data);
}

/* ---- reading ---- */

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    conn_t *c = h->data;
    if (c->lingering)
        c->in_len = c->in_off = 0;
    if (c->in_cap - c->in_len < READ_CHUNK) {
        size_t cap = c->in_len + 4 * READ_CHUNK;
        char *p = realloc(c->in, cap);
        if (!p) {
            *buf = uv_buf_init(NULL, 0); /* libuv reports UV_ENOBUFS */
            return;
        }
        c->in = p;
        c->in_cap = cap;
    }
    *buf = uv_buf_init(c->in + c->in_len, (unsigned)(c->in_cap - c->in_len));
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    conn_t *c = stream->data;
    if (nread == 0 || c->closing)
        return;
    if (nread < 0) {
        /* A half-closing peer still gets the answer already being written. */
        if (nread == UV_EOF && !c->active && c->writes > 0 && !c->lingering) {
            c->peer_eof = c->close_after_write = 1;
            conn_read_stop(c);
            return;
        }
        conn_close(c);
        return;
    }
    if (c->lingering)
        return; /* drained and discarded */
    c->in_len += (size_t)nread;
    if (c->active || c->writes > 0) {
        if (c->in_len - c->in_off >= IN_CAP)
            conn_read_stop(c);
        return;
    }
    process_input(c);
}

void conn_read_start(conn_t *c)
{
    if (c->reading || c->closing)
        return;
    if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0)
        conn_close(c);
    else
        c->reading = 1;
}

/* After a closing response: send FIN, then drain what the peer still sends so
 * that our close does not turn into a reset that destroys the response. */
static void conn_linger(conn_t *c)
{
    if (c->peer_eof) {
        conn_close(c);
        return;
    }
    c->lingering = 1;
    conn_uncount(c);
    c->in_len = c->in_off = 0;
    c->shutdown.data = c;
    if (uv_shutdown(&c->shutdown, (uv_stream_t *)&c->tcp, on_shutdown) != 0) {
        conn_close(c);
        return;
    }
    conn_deadline(c, PH_LINGER, LINGER_MS);
    conn_read_start(c);
}

static void on_write(uv_write_t *req, int status)
{
    write_req_t *w = (write_req_t *)req;
    conn_t *c = w->conn;
    free(w->data);
    parts_release(w->parts, w->nparts);
    free(w);
    c->writes--;
    if (c->closing)
        return;
    if (status < 0) {
        conn_close(c);
        return;
    }
    if (c->file.fd >= 0) {
        /* The client reads: the answer's deadline starts again. */
        conn_deadline(c, PH_SENDING, c->srv->limits.body_timeout_ms);
        file_body_pump(c);
    }
    if (c->writes > 0 || c->closing)
        return;
    if (c->close_after_write) {
        conn_linger(c);
        return;
    }
    /* An answer is out: the next request's headers are due from now. (A
     * 100 Continue written while the body comes keeps the body's deadline.) */
    if (c->phase == PH_SENDING)
        conn_deadline(c, PH_HEADERS, header_timeout(c));
    process_input(c);
}

/* ---- parsing ---- */

static void fail_request(conn_t *c, llhttp_errno_t e)
{
    int status = c->m.err_status ? c->m.err_status : 400;
    ex_free(c->building);
    c->building = NULL;
    c->in_off = c->in_len;
    if (c->m.answered)
        return; /* the headers hook refused it and has answered */
    const char *reason = llhttp_get_error_reason(&c->parser);
    if (status == 400)
        send_error(c, 400, "bad request: ", reason ? reason : llhttp_errno_name(e));
    else
        send_error(c, status, status == 413   ? "request body too large"
                              : status == 431 ? "request header fields too large"
                              : status == 503 ? "server busy: too many connections, only "
                                                "health checks are answered now"
                                              : "internal error",
                   NULL);
}

/* Parses buffered input until a request is handed out, more bytes are needed,
 * or the connection must close. */
void process_input(conn_t *c)
{
    while (!c->closing && !c->close_after_write && !c->active && c->writes == 0
           && c->in_off < c->in_len) {
        const char *p = c->in + c->in_off;
        size_t n = c->in_len - c->in_off;
        llhttp_errno_t e = llhttp_execute(&c->parser, p, n);
        if (c->closing)
            break;
        if (e == HPE_OK) {
            c->in_off = c->in_len;
            c->m.hdr_raw += c->m.in_headers ? n : 0;
            if (c->m.hdr_raw > LC_HTTP_MAX_HEADER_BYTES) {
                c->m.err_status = 431;
                fail_request(c, HPE_USER);
            }
        } else if (e == HPE_PAUSED) {
            c->in_off += (size_t)(llhttp_get_error_pos(&c->parser) - p);
            llhttp_resume(&c->parser);
            uv_timer_stop(&c->timer); /* the handler owes the answer now */
            c->phase = PH_HANDLER;
            c->srv->handler(c->srv->arg, c->active, &c->active->req);
        } else if (e == HPE_PAUSED_UPGRADE) {
            c->in_off = c->in_len; /* upgrades are answered and then closed */
        } else {
            fail_request(c, e);
        }
    }
    if (c->closing || c->lingering)
        return;
    if (c->in_off > 0) {
        memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
        c->in_len -= c->in_off;
        c->in_off = 0;
    }
    if (c->close_after_write || c->in_len >= IN_CAP)
        conn_read_stop(c);
    else
        conn_read_start(c);
}

/* ---- accepting ---- */

static void on_connection(uv_stream_t *listener, int status)
{
    lc_http_server_t *s = listener->data;
    if (status < 0 || s->closing)
        return;
    conn_t *c = calloc(1, sizeof *c);
    if (!c)
        return;
    if (uv_tcp_init(s->loop, &c->tcp) != 0) {
        free(c);
        return;
    }
    uv_timer_init(s->loop, &c->timer);
    c->tcp.data = c->timer.data = c;
    c->handles_open = 2;
    c->srv = s;
    c->file.fd = -1;
    c->next = s->conns;
    if (s->conns)
        s->conns->prev = c;
    s->conns = c;
    /* Probe slots rather than a probe listener: Kubernetes and systemd probe
     * the API port they already know, and a slot that must name a probe path
     * within LC_HTTP_PROBE_TIMEOUT_MS and closes after one answer cannot be
     * held by slow clients the way an ordinary one can. */
    unsigned total = s->limits.max_conns + s->limits.probe_conns;
    int over = s->nactive >= total;
    c->probe_slot = s->nactive >= s->limits.max_conns;
    s->nconns++;
    s->nactive++;
    c->counted = 1;
    if (uv_accept(listener, (uv_stream_t *)&c->tcp) != 0 || over) {
        if (over)
            note_forced_close(s, WHY_FULL, total);
        conn_close(c); /* beyond the cap: accepted only to be closed */
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    llhttp_init(&c->parser, HTTP_REQUEST, &s->settings);
    c->parser.data = c;
    conn_deadline(c, PH_HEADERS, header_timeout(c));
    conn_read_start(c);
}

static void on_listener_closed(uv_handle_t *h)
{
    lc_http_server_t *s = h->data;
    s->listener_closed = 1;
    maybe_free_server(s);
}

/* Fills addr from an IP literal, or the first address a name resolves to (IPv4 preferred). */
static int resolve(uv_loop_t *loop, const char *host, uint16_t port,
                   struct sockaddr_storage *addr, char *errmsg, size_t errlen)
{
    if (!host || !*host)
        host = "0.0.0.0";
    if (uv_ip4_addr(host, port, (struct sockaddr_in *)addr) == 0
        || uv_ip6_addr(host, port, (struct sockaddr_in6 *)addr) == 0)
        return 0;
    uv_getaddrinfo_t req;
    char service[8];
    snprintf(service, sizeof service, "%u", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICSERV};
    int rv = uv_getaddrinfo(loop, &req, NULL, host, service, &hints);
    if (rv != 0)
        return lc_errf(errmsg, errlen, LC_EIO, "http: resolve %s: %s", host, uv_strerror(rv));
    struct addrinfo *pick = req.addrinfo;
    for (struct addrinfo *ai = req.addrinfo; ai; ai = ai->ai_next)
        if (ai->ai_family == AF_INET) {
            pick = ai;
            break;
        }
    memcpy(addr, pick->ai_addr, pick->ai_addrlen);
    uv_freeaddrinfo(req.addrinfo);
    return 0;
}

static uint16_t bound_port(uv_tcp_t *t)
{
    struct sockaddr_storage ss;
    int len = sizeof ss;
    if (uv_tcp_getsockname(t, (struct sockaddr *)&ss, &len) != 0)
        return 0;
    if (ss.ss_family == AF_INET)
        return ntohs(((struct sockaddr_in *)&ss)->sin_port);
    return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
}

/* ---- public API ---- */

int lc_http_server_init(lc_http_server_t **out, uv_loop_t *loop, const char *host,
                        uint16_t port, size_t max_body, lc_http_handler_cb handler,
                        void *arg, char *errmsg, size_t errlen)
{
    struct sockaddr_storage addr;
    memset(&addr, 0, sizeof addr);
    *out = NULL;
    if (resolve(loop, host, port, &addr, errmsg, errlen) != 0)
        return LC_EIO;
    lc_http_server_t *s = calloc(1, sizeof *s);
    if (!s)
        return lc_errf(errmsg, errlen, LC_EIO, "http: out of memory");
    s->loop = loop;
    s->handler = handler;
    s->arg = arg;
    s->max_body = max_body;
    s->limits = (lc_http_limits_t){.header_timeout_ms = LC_HTTP_HEADER_TIMEOUT_MS,
                                   .body_timeout_ms = LC_HTTP_BODY_TIMEOUT_MS,
                                   .max_conns = LC_HTTP_MAX_CONNS};
    lc_http_parse_settings(&s->settings);
    int rv = uv_tcp_init(loop, &s->listener);
    if (rv != 0) {
        snprintf(errmsg, errlen, "http: tcp init: %s", uv_strerror(rv));
        free(s);
        return LC_EIO;
    }
    s->listener.data = s;
    /* libuv sets SO_REUSEADDR on every TCP bind on Unix. */
    rv = uv_tcp_bind(&s->listener, (const struct sockaddr *)&addr, 0);
    if (rv == 0)
        rv = uv_listen((uv_stream_t *)&s->listener, BACKLOG, on_connection);
    if (rv != 0) {
        snprintf(errmsg, errlen, "http: listen %s:%u: %s", host ? host : "", port,
                 uv_strerror(rv));
        goto err_after_tcp_init;
    }
    s->port = bound_port(&s->listener);
    *out = s;
    return 0;

err_after_tcp_init:
    s->closing = 1; /* freed in the close callback */
    uv_close((uv_handle_t *)&s->listener, on_listener_closed);
    return LC_EIO;
}

void lc_http_server_set_limits(lc_http_server_t *s, const lc_http_limits_t *limits)
{
    if (limits->header_timeout_ms != 0)
        s->limits.header_timeout_ms = limits->header_timeout_ms;
    if (limits->body_timeout_ms != 0)
        s->limits.body_timeout_ms = limits->body_timeout_ms;
    if (limits->max_conns != 0)
        s->limits.max_conns = limits->max_conns;
    s->limits.probe_conns = limits->probe_conns;
    s->limits.probe_paths = limits->probe_paths;
}

void lc_http_server_on_headers(lc_http_server_t *s, lc_http_headers_cb cb)
{
    s->on_headers = cb;
}

uint16_t lc_http_server_port(const lc_http_server_t *s)
{
    return s->port;
}

void lc_http_server_close(lc_http_server_t *s)
{
    if (!s || s->closing)
        return;
    s->closing = 1;
    for (conn_t *c = s->conns; c; c = c->next)
        conn_close(c);
    uv_close((uv_handle_t *)&s->listener, on_listener_closed);
}

void lc_http_exchange_respond(lc_http_exchange_t *ex, int status, const char *content_type,
                              const char *body, size_t body_len, const char *headers)
{
    conn_t *c = ex->conn; /* NULL when the client or the server went away */
    if (c && !c->closing) {
        /* The body may point into the request: build the response before freeing it. */
        c->active = NULL;
        c->m.answered |= ex->in_hook;
        send_response(c, status, content_type, body, body_len, headers, ex->flags);
    }
    ex_free(ex);
}

void lc_http_exchange_respond_parts(lc_http_exchange_t *ex, int status, const char *content_type,
                                    const lc_http_part_t *parts, size_t n, const char *headers)
{
    assert(n >= 1 && n <= LC_HTTP_PARTS_MAX);
    conn_t *c = ex->conn;
    if (c && !c->closing) {
        size_t total = 0;
        for (size_t i = 0; i < n; i++)
            total += parts[i].len;
        c->active = NULL;
        c->m.answered |= ex->in_hook;
        send_answer(c, status, content_type, NULL, total, parts, n, headers, ex->flags);
    } else {
        parts_release(parts, n);
    }
    ex_free(ex);
}

void lc_http_exchange_respond_fd(lc_http_exchange_t *ex, int status, const char *content_type,
                                 int fd, uint64_t len, const char *headers)
{
    assert(fd >= 0);
    conn_t *c = ex->conn;
    if (c && !c->closing) {
        c->active = NULL;
        c->m.answered |= ex->in_hook;
        send_response(c, status, content_type, NULL, (size_t)len, headers, ex->flags);
    }
    if (c && !c->closing && answer_has_body(status, ex->flags) && len > 0) {
        c->file.fd = fd;
        c->file.off = 0;
        c->file.left = len;
        file_body_pump(c);
    } else if (c != NULL) {
        close_off_loop(c->srv->loop, fd);
    } else {
        close(fd); /* the connection is gone, and with it the way to the loop */
    }
    ex_free(ex);
}

const lc_http_request_t *lc_http_exchange_request(const lc_http_exchange_t *ex)
{
    return &ex->req;
}
