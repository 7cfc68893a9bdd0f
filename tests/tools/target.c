/* target.c — lc_target, the fast libuv HTTP/1.1 server the tests, benchmarks and demo load. */
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <jansson.h>
#include <llhttp.h>
#include <uv.h>

#include "lc_addr.h"
#include "lc_err.h"

#define READ_BUF_SIZE (64 * 1024)
#define OUT_BUF_SIZE (64 * 1024) /* also the size of the shared 'x' body buffer */
#define URL_MAX 4096
#define HEADER_BYTES_MAX (16 * 1024)
#define HEADERS_MAX 64
#define BODY_MAX (16ull * 1024 * 1024)
#define RESP_SIZE_MAX (16ul * 1024 * 1024)
#define PATHS_MAX 1000
#define PATH_SLOTS 2048 /* power of two, comfortably above PATHS_MAX */
#define THREADS_MAX 64
#define LATENCY_MAX_MS 3600000ul
#define WRITE_HIGH_WATER (4u * 1024 * 1024)
#define NS_PER_MS 1000000ull
#define RELAXED memory_order_relaxed

typedef struct config_s {
    lc_hostport_t listen;
    unsigned long latency_ms, jitter_ms, stall_at_ms, stall_ms; /* stall_ms 0 = no stall */
    unsigned long status, body_size, threads;
    const char *port_file;
    bool quiet;
} config_t;

typedef struct target_s target_t;
typedef struct conn_s conn_t;

/* One loop thread. Its counters are written only by its own thread but read and reset by the
 * thread answering /__stats, hence atomics; keeping them per engine avoids cache-line bouncing. */
typedef struct engine_s {
    target_t *t;
    uv_loop_t loop;
    uv_tcp_t listener;
    uv_async_t stop;
    pthread_t thread;
    conn_t *conns; /* open connections, closed on shutdown */
    uint64_t rng;
    size_t out_len;
    atomic_uint_fast64_t bytes_in, rejected, conns_now, conns_total;
    /* Served requests per path; "requests" is their sum, so the two always agree. */
    atomic_uint_fast64_t by_path[PATH_SLOTS], other;
    char rbuf[READ_BUF_SIZE];
    char out[OUT_BUF_SIZE]; /* responses of one callback, coalesced into one write */
} engine_t;

enum conn_hdr { CONN_HDR_NONE, CONN_HDR_CLOSE, CONN_HDR_KEEPALIVE };
enum resp_kind { RESP_PLAIN, RESP_STATS, RESP_RESET, RESP_REJECT };

struct target_s {
    config_t cfg;
    unsigned nengines;
    engine_t *engines[THREADS_MAX];
    _Atomic(char *) path_keys[PATH_SLOTS]; /* set once, never changed until exit */
    atomic_uint path_count;
    atomic_uint_fast64_t first_ns; /* arrival of the first served request; 0 = none yet */
    char hdr[3][256];              /* preformatted default response head per conn_hdr */
    size_t hdr_len[3];
    char xbuf[OUT_BUF_SIZE];
    uv_loop_t loop;
    uv_signal_t sigterm, sigint;
};

typedef struct resp_s {
    uint8_t kind, conn_hdr;
    bool head, counted;
    int status;
    int slot; /* by_path slot, -1 = "(other)" */
    size_t size;
} resp_t;

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
    char url[URL_MAX];
};

typedef struct wreq_s {
    uv_write_t req;
    char data[]; /* the unwritten tail of engine->out, which is reused */
} wreq_t;

static void conn_close(conn_t *c);
static void out_flush(conn_t *c, size_t xlen);
static void on_timer(uv_timer_t *tm);
static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);

/* ---- served-request accounting ---- */

/* Finds or adds the by_path slot of a path, lock-free so every thread can use one table.
 * Returns -1 once PATHS_MAX distinct paths exist: those are counted into "(other)". */
static int path_slot(target_t *t, const char *path, size_t len)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    char *fresh = NULL;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)path[i]) * 16777619u;
    for (size_t i = 0; i < PATH_SLOTS; i++) {
        size_t idx = (h + i) & (PATH_SLOTS - 1);
        char *k = atomic_load_explicit(&t->path_keys[idx], memory_order_acquire);
        if (k == NULL) {
            if (fresh == NULL) {
                if (atomic_fetch_add(&t->path_count, 1) >= PATHS_MAX ||
                    (fresh = strndup(path, len)) == NULL) {
                    atomic_fetch_sub(&t->path_count, 1);
                    return -1;
                }
            }
            if (atomic_compare_exchange_strong(&t->path_keys[idx], &k, fresh))
                return (int)idx;
        }
        if (strncmp(k, path, len) == 0 && k[len] == '\0') {
            if (fresh != NULL) {
                free(fresh);
                atomic_fetch_sub(&t->path_count, 1);
            }
            return (int)idx;
        }
    }
    free(fresh);
    return -1;
}

static uint64_t sum(target_t *t, size_t offset)
{
    uint64_t total = 0;
    for (unsigned i = 0; i < t->nengines; i++)
        total += atomic_load_explicit(
            (atomic_uint_fast64_t *)((char *)t->engines[i] + offset), RELAXED);
    return total;
}

#define SUM(t, field) sum((t), offsetof(engine_t, field))

/* Returns the stats as a compact JSON string the caller frees, or NULL when out of memory. */
static char *stats_json(target_t *t)
{
    json_t *by = json_object();
    uint64_t other = SUM(t, other), requests = other;
    for (size_t s = 0; s < PATH_SLOTS; s++) {
        char *k = atomic_load_explicit(&t->path_keys[s], memory_order_acquire);
        uint64_t n = k ? sum(t, offsetof(engine_t, by_path) + s * sizeof(atomic_uint_fast64_t)) : 0;
        requests += n;
        if (n > 0 && json_object_set_new(by, k, json_integer((json_int_t)n)) != 0)
            other += n; /* a key that is not valid UTF-8 */
    }
    if (other > 0)
        json_object_set_new(by, "(other)", json_integer((json_int_t)other));
    json_t *root = json_pack("{s:I, s:o, s:I, s:I, s:I, s:I}",
                             "requests", (json_int_t)requests, "by_path", by,
                             "bytes_in", (json_int_t)SUM(t, bytes_in),
                             "connections", (json_int_t)SUM(t, conns_now),
                             "connections_total", (json_int_t)SUM(t, conns_total),
                             "rejected", (json_int_t)SUM(t, rejected));
    char *text = root ? json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(root);
    return text;
}

/* Zeroes every counter but the current-connections gauge; distinct paths keep their slots. */
static void stats_reset(target_t *t)
{
    for (unsigned i = 0; i < t->nengines; i++) {
        engine_t *e = t->engines[i];
        atomic_store(&e->bytes_in, 0);
        atomic_store(&e->rejected, 0);
        atomic_store(&e->conns_total, 0);
        atomic_store(&e->other, 0);
        for (size_t s = 0; s < PATH_SLOTS; s++)
            atomic_store_explicit(&e->by_path[s], 0, RELAXED);
    }
    atomic_store(&t->first_ns, 0);
}

/* ---- response formatting and output ---- */

static const char *reason(int status)
{
    static const struct { int code; const char *text; } reasons[] = {
        {200, "OK"}, {201, "Created"}, {202, "Accepted"}, {204, "No Content"},
        {301, "Moved Permanently"}, {302, "Found"}, {304, "Not Modified"}, {400, "Bad Request"},
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

static size_t format_head(char *buf, size_t cap, int status, const char *ctype, size_t clen,
                          int conn_hdr)
{
    static const char *const conn_line[] = {"", "Connection: close\r\n",
                                            "Connection: keep-alive\r\n"};
    int n;
    if (bodyless(status))
        n = snprintf(buf, cap, "HTTP/1.1 %d %s\r\nServer: lc_target\r\n%s\r\n", status,
                     reason(status), conn_line[conn_hdr]);
    else
        n = snprintf(buf, cap,
                     "HTTP/1.1 %d %s\r\nServer: lc_target\r\nContent-Type: %s\r\n"
                     "Content-Length: %zu\r\n%s\r\n",
                     status, reason(status), ctype, clen, conn_line[conn_hdr]);
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

static void on_shutdown(uv_shutdown_t *req, int status)
{
    conn_close(req->handle->data);
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

/* Writes one response. A request is counted here, when its response is handed to the socket
 * (copied into the output that is flushed before this callback returns): requests whose
 * connection closed while their response was still delayed are never counted, so the counts
 * equal the answers clients could have seen. */
static void write_resp(conn_t *c, const resp_t *r)
{
    engine_t *e = c->e;
    target_t *t = e->t;
    char head[512], *json = NULL;
    size_t hlen, blen = r->size;
    if (c->closing)
        return;
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
                           blen, r->conn_hdr);
        out_append(c, head, hlen);
    }
    if (!r->head && !bodyless(r->status))
        json ? out_append(c, json, blen) : out_append_x(c, blen);
    free(json);
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

static uint64_t next_rand(engine_t *e)
{
    e->rng ^= e->rng >> 12;
    e->rng ^= e->rng << 25;
    e->rng ^= e->rng >> 27;
    return e->rng * 2685821657736338717ull;
}

/* When a served request's response is due, in uv_hrtime nanoseconds; 0 means now. */
static uint64_t due_time(engine_t *e, long latency_override)
{
    const config_t *cfg = &e->t->cfg;
    if (latency_override < 0 && cfg->latency_ms == 0 && cfg->jitter_ms == 0 && cfg->stall_ms == 0)
        return 0;
    uint64_t now = uv_hrtime(), ms;
    if (latency_override >= 0)
        ms = (uint64_t)latency_override;
    else
        ms = cfg->latency_ms + (cfg->jitter_ms ? next_rand(e) % (cfg->jitter_ms + 1) : 0);
    uint64_t due = now + ms * NS_PER_MS;
    if (cfg->stall_ms > 0) {
        uint64_t t0 = 0;
        if (!atomic_compare_exchange_strong(&e->t->first_ns, &t0, now) && t0 != 0)
            now = t0;
        uint64_t from = now + cfg->stall_at_ms * NS_PER_MS, until = from + cfg->stall_ms * NS_PER_MS;
        if (due >= from && due < until)
            due = until;
    }
    return due;
}

/* ---- requests ---- */

static bool parse_digits(const char *s, size_t n, unsigned long max, unsigned long *out)
{
    unsigned long v = 0;
    if (n == 0 || n > 10)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (unsigned long)(s[i] - '0');
    }
    *out = v;
    return v <= max;
}

static bool param_is(const char *p, size_t n, const char *name, const char **val, size_t *vlen)
{
    size_t k = strlen(name);
    if (n <= k || memcmp(p, name, k) != 0 || p[k] != '=')
        return false;
    *val = p + k + 1;
    *vlen = n - k - 1;
    return true;
}

/* Applies ?status= ?latency_ms= ?close=1 ?size=; returns false when a value is invalid. */
static bool apply_query(resp_t *r, long *latency, const char *q, size_t len)
{
    while (len > 0) {
        const char *amp = memchr(q, '&', len), *v;
        size_t n = amp ? (size_t)(amp - q) : len, vlen;
        unsigned long x;
        if (param_is(q, n, "status", &v, &vlen)) {
            if (!parse_digits(v, vlen, 599, &x) || x < 200)
                return false;
            r->status = (int)x;
        } else if (param_is(q, n, "latency_ms", &v, &vlen)) {
            if (!parse_digits(v, vlen, LATENCY_MAX_MS, &x))
                return false;
            *latency = (long)x;
        } else if (param_is(q, n, "size", &v, &vlen)) {
            if (!parse_digits(v, vlen, RESP_SIZE_MAX, &x))
                return false;
            r->size = x;
        } else if (param_is(q, n, "close", &v, &vlen) && vlen == 1 && v[0] == '1') {
            r->conn_hdr = CONN_HDR_CLOSE;
        }
        q += amp ? n + 1 : n;
        len -= amp ? n + 1 : n;
    }
    return true;
}

static bool path_eq(const char *path, size_t len, const char *lit)
{
    return len == strlen(lit) && memcmp(path, lit, len) == 0;
}

/* Turns /__stats and /__reset into their uncounted control responses; false for other paths. */
static bool control_request(resp_t *r, const char *path, size_t len, int method)
{
    bool stats = path_eq(path, len, "/__stats"), reset = path_eq(path, len, "/__reset");
    if (!stats && !reset)
        return false;
    r->counted = false;
    if (stats && (method == HTTP_GET || method == HTTP_HEAD))
        r->kind = RESP_STATS;
    else if (reset && method == HTTP_POST)
        r->kind = RESP_RESET;
    else
        r->status = 405, r->size = 0;
    return true;
}

static void handle_request(conn_t *c)
{
    engine_t *e = c->e;
    llhttp_t *p = &c->parser;
    resp_t r = {.kind = RESP_PLAIN, .counted = true, .status = (int)e->t->cfg.status,
                .size = e->t->cfg.body_size, .slot = -1};
    const char *url = c->url, *q = memchr(url, '?', c->url_len);
    size_t plen = q ? (size_t)(q - url) : c->url_len;
    long latency = -1;
    unsigned long code;
    r.head = p->method == HTTP_HEAD;
    if (!llhttp_should_keep_alive(p))
        r.conn_hdr = CONN_HDR_CLOSE;
    else if (p->http_major == 1 && p->http_minor == 0)
        r.conn_hdr = CONN_HDR_KEEPALIVE;
    if (control_request(&r, url, plen, p->method)) {
        emit(c, &r, 0);
    } else {
        if (plen > 8 && memcmp(url, "/status/", 8) == 0 &&
            parse_digits(url + 8, plen - 8, 599, &code) && code >= 200)
            r.status = (int)code;
        if (q != NULL && !apply_query(&r, &latency, q + 1, c->url_len - plen - 1))
            r.status = 400, r.size = 0, latency = 0;
        r.slot = path_slot(e->t, url, plen);
        emit(c, &r, due_time(e, latency));
    }
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

static int on_message_begin(llhttp_t *p)
{
    conn_t *c = p->data;
    c->url_len = c->nheaders = c->header_bytes = 0;
    c->body_bytes = 0;
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

static int on_header_data(llhttp_t *p, const char *at, size_t len)
{
    conn_t *c = p->data;
    c->header_bytes += len;
    return c->header_bytes > HEADER_BYTES_MAX ? refuse(c, 431) : 0;
}

static int on_header_field_complete(llhttp_t *p)
{
    conn_t *c = p->data;
    return ++c->nheaders > HEADERS_MAX ? refuse(c, 431) : 0;
}

static int on_headers_complete(llhttp_t *p)
{
    return p->content_length > BODY_MAX ? refuse(p->data, 413) : 0;
}

static int on_body(llhttp_t *p, const char *at, size_t len)
{
    conn_t *c = p->data;
    c->body_bytes += len; /* chunked bodies have no length up front */
    return c->body_bytes > BODY_MAX ? refuse(c, 413) : 0;
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
    .on_header_field = on_header_data,
    .on_header_value = on_header_data,
    .on_header_field_complete = on_header_field_complete,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

/* ---- connections ---- */

static void on_conn_handle_closed(uv_handle_t *h)
{
    conn_t *c = h->data;
    if (--c->handles_open == 0)
        free(c);
}

/* Closes at once, dropping (and so not counting) responses still delayed. */
static void conn_close(conn_t *c)
{
    if (c->closing)
        return;
    c->closing = true;
    while (c->head != NULL) {
        pending_t *pd = c->head;
        c->head = pd->next;
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
    enum llhttp_errno err = llhttp_execute(&c->parser, buf->base, (size_t)nread);
    if (err != HPE_OK && err != HPE_PAUSED && !c->closing && !c->draining)
        reject(c, c->reject_status ? c->reject_status : 400);
    out_flush(c, 0);
}

static void on_connection(uv_stream_t *server, int status)
{
    engine_t *e = server->data;
    conn_t *c;
    if (status < 0 || (c = malloc(sizeof *c)) == NULL)
        return;
    memset(c, 0, offsetof(conn_t, url));
    c->e = e;
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

/* ---- engines ---- */

static void on_stop(uv_async_t *a)
{
    engine_t *e = a->data;
    while (e->conns != NULL)
        conn_close(e->conns);
    uv_close((uv_handle_t *)&e->listener, NULL);
    uv_close((uv_handle_t *)&e->stop, NULL);
}

static void *engine_run(void *arg)
{
    engine_t *e = arg;
    uv_run(&e->loop, UV_RUN_DEFAULT);
    return NULL;
}

/* Sets up a loop with a listener on sa (SO_REUSEPORT when several engines share the port). */
static int engine_init(engine_t *e, target_t *t, const struct sockaddr *sa, char *errmsg,
                       size_t errlen)
{
    int rv, on = 1;
    uv_os_fd_t fd;
    e->t = t;
    e->rng = uv_hrtime() ^ (uintptr_t)e;
    if ((rv = uv_loop_init(&e->loop)) != 0)
        goto err;
    if ((rv = uv_tcp_init_ex(&e->loop, &e->listener, sa->sa_family)) != 0)
        goto err_after_loop;
    e->listener.data = e;
    if (t->cfg.threads > 1 && (uv_fileno((uv_handle_t *)&e->listener, &fd) != 0 ||
                               setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof on) != 0)) {
        rv = uv_translate_sys_error(errno);
        goto err_after_listener;
    }
    if ((rv = uv_tcp_bind(&e->listener, sa, 0)) != 0 ||
        (rv = uv_listen((uv_stream_t *)&e->listener, 4096, on_connection)) != 0)
        goto err_after_listener;
    if ((rv = uv_async_init(&e->loop, &e->stop, on_stop)) != 0)
        goto err_after_listener;
    e->stop.data = e;
    return 0;
err_after_listener:
    uv_close((uv_handle_t *)&e->listener, NULL);
    uv_run(&e->loop, UV_RUN_DEFAULT);
err_after_loop:
    uv_loop_close(&e->loop);
err:
    snprintf(errmsg, errlen, "listen on %s:%u: %s", t->cfg.listen.host, t->cfg.listen.port,
             uv_strerror(rv));
    return LC_EIO;
}

/* Turns the --listen host, a numeric IPv4 or IPv6 address, into out. */
static int resolve(const lc_hostport_t *hp, struct sockaddr_storage *out, char *errmsg,
                   size_t errlen)
{
    if (uv_ip4_addr(hp->host, hp->port, (struct sockaddr_in *)out) == 0 ||
        uv_ip6_addr(hp->host, hp->port, (struct sockaddr_in6 *)out) == 0)
        return 0;
    snprintf(errmsg, errlen, "--listen %s: expected a numeric IPv4 or IPv6 address", hp->host);
    return LC_EINVAL;
}

static int bound_port(engine_t *e)
{
    struct sockaddr_storage ss;
    int len = sizeof ss;
    if (uv_tcp_getsockname(&e->listener, (struct sockaddr *)&ss, &len) != 0)
        return 0;
    return ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                          : ((struct sockaddr_in *)&ss)->sin_port);
}

/* Starts every engine; with port 0 the first picks a port and the others join it. */
static int engines_start(target_t *t, char *errmsg, size_t errlen)
{
    struct sockaddr_storage ss;
    int rv = resolve(&t->cfg.listen, &ss, errmsg, errlen);
    for (unsigned i = 0; rv == 0 && i < t->cfg.threads; i++) {
        engine_t *e = calloc(1, sizeof *e);
        if (e == NULL) {
            snprintf(errmsg, errlen, "out of memory");
            return LC_ENOMEM;
        }
        if ((rv = engine_init(e, t, (struct sockaddr *)&ss, errmsg, errlen)) != 0) {
            free(e);
            return rv;
        }
        t->engines[t->nengines++] = e;
        t->cfg.listen.port = (uint16_t)bound_port(e);
        if (ss.ss_family == AF_INET6)
            ((struct sockaddr_in6 *)&ss)->sin6_port = htons(t->cfg.listen.port);
        else
            ((struct sockaddr_in *)&ss)->sin_port = htons(t->cfg.listen.port);
    }
    return rv;
}

/* ---- process ---- */

static void on_signal(uv_signal_t *s, int signum)
{
    target_t *t = s->data;
    for (unsigned i = 0; i < t->nengines; i++)
        uv_async_send(&t->engines[i]->stop);
    uv_close((uv_handle_t *)&t->sigterm, NULL);
    uv_close((uv_handle_t *)&t->sigint, NULL);
}

/* Writes the port to a temporary file renamed into place, so readers never see half of it. */
static int write_port_file(const char *path, unsigned port, char *errmsg, size_t errlen)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL || fprintf(f, "%u\n", port) < 0 || fclose(f) != 0 || rename(tmp, path) != 0) {
        snprintf(errmsg, errlen, "port file %s: %s", path, strerror(errno));
        return LC_EIO;
    }
    return 0;
}

static void usage(FILE *out)
{
    fputs("usage: lc_target [options]\n"
          "  --listen HOST:PORT       address to serve (default 127.0.0.1:8080; port 0 = any)\n"
          "  --latency-ms N           fixed delay before each response (default 0)\n"
          "  --latency-jitter-ms N    extra uniform delay 0..N\n"
          "  --status CODE            response status, 200..599 (default 200)\n"
          "  --body-size BYTES        response body of 'x' (default 64, at most 16 MiB)\n"
          "  --threads N              loop threads sharing the port via SO_REUSEPORT (default 1)\n"
          "  --stall-at-ms T          with --stall-ms D: responses due between T and T+D ms\n"
          "  --stall-ms D               after the first request are held until T+D\n"
          "  --port-file PATH         write the bound port to PATH once listening\n"
          "  --quiet                  no startup line on stderr\n"
          "  --help                   this text\n"
          "Per request: ?status=N ?latency_ms=N ?size=N ?close=1, /status/NNN.\n"
          "Control: GET /__stats (JSON counters), POST /__reset. SIGTERM/SIGINT print the stats.\n",
          out);
}

static int number_arg(const char *name, const char *text, unsigned long min, unsigned long max,
                      unsigned long *out)
{
    if (parse_digits(text, strlen(text), max, out) && *out >= min)
        return 0;
    fprintf(stderr, "lc_target: --%s: expected a number from %lu to %lu, got '%s'\n", name, min,
            max, text);
    return LC_EINVAL;
}

/* lc_hostport_parse refuses port 0, which we accept to mean "any free port". */
static int listen_arg(const char *text, lc_hostport_t *out)
{
    char buf[LC_HOST_MAX + 16], errmsg[256];
    size_t n = strlen(text);
    bool any = n >= 2 && strcmp(text + n - 2, ":0") == 0 && n < sizeof buf;
    if (any) {
        memcpy(buf, text, n + 1);
        buf[n - 1] = '1';
    }
    if (lc_hostport_parse(any ? buf : text, 0, out, errmsg, sizeof errmsg) != 0) {
        fprintf(stderr, "lc_target: --listen: %s\n", errmsg);
        return LC_EINVAL;
    }
    if (any)
        out->port = 0;
    return 0;
}

static int apply_option(config_t *cfg, int opt, const char *arg)
{
    switch (opt) {
    case 'l': return listen_arg(arg, &cfg->listen);
    case 'L': return number_arg("latency-ms", arg, 0, LATENCY_MAX_MS, &cfg->latency_ms);
    case 'J': return number_arg("latency-jitter-ms", arg, 0, LATENCY_MAX_MS, &cfg->jitter_ms);
    case 'S': return number_arg("status", arg, 200, 599, &cfg->status);
    case 'B': return number_arg("body-size", arg, 0, RESP_SIZE_MAX, &cfg->body_size);
    case 'T': return number_arg("threads", arg, 1, THREADS_MAX, &cfg->threads);
    case 'a': return number_arg("stall-at-ms", arg, 0, LATENCY_MAX_MS, &cfg->stall_at_ms);
    case 'd': return number_arg("stall-ms", arg, 0, LATENCY_MAX_MS, &cfg->stall_ms);
    case 'p': cfg->port_file = arg; return 0;
    case 'q': cfg->quiet = true; return 0;
    default: return LC_EINVAL;
    }
}

/* Returns 0 to run, 1 after --help, or LC_EINVAL (the message already printed). */
static int parse_args(int argc, char **argv, config_t *cfg)
{
    static const struct option opts[] = {
        {"listen", required_argument, NULL, 'l'},       {"latency-ms", required_argument, NULL, 'L'},
        {"latency-jitter-ms", required_argument, NULL, 'J'}, {"status", required_argument, NULL, 'S'},
        {"body-size", required_argument, NULL, 'B'},    {"threads", required_argument, NULL, 'T'},
        {"stall-at-ms", required_argument, NULL, 'a'},  {"stall-ms", required_argument, NULL, 'd'},
        {"port-file", required_argument, NULL, 'p'},    {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},               {NULL, 0, NULL, 0}};
    bool stall_at = false;
    int opt;
    *cfg = (config_t){.status = 200, .body_size = 64, .threads = 1};
    if (listen_arg("127.0.0.1:8080", &cfg->listen) != 0)
        return LC_EINVAL;
    while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (opt == 'h')
            return 1;
        stall_at |= opt == 'a';
        if (opt == '?' || apply_option(cfg, opt, optarg) != 0)
            return LC_EINVAL;
    }
    if (optind < argc) {
        fprintf(stderr, "lc_target: unexpected argument '%s'\n", argv[optind]);
        return LC_EINVAL;
    }
    if (stall_at != (cfg->stall_ms > 0)) {
        fprintf(stderr, "lc_target: --stall-at-ms and --stall-ms (> 0) go together\n");
        return LC_EINVAL;
    }
    return 0;
}

static void prepare_responses(target_t *t)
{
    memset(t->xbuf, 'x', sizeof t->xbuf);
    for (int h = CONN_HDR_NONE; h <= CONN_HDR_KEEPALIVE; h++)
        t->hdr_len[h] = format_head(t->hdr[h], sizeof t->hdr[h], (int)t->cfg.status, "text/plain",
                                    t->cfg.body_size, h);
}

/* Runs the engines until SIGTERM/SIGINT, then joins them. */
static int serve(target_t *t, char *errmsg, size_t errlen)
{
    int rv = uv_loop_init(&t->loop);
    if (rv == 0 && (rv = uv_signal_init(&t->loop, &t->sigterm)) == 0 &&
        (rv = uv_signal_init(&t->loop, &t->sigint)) == 0) {
        t->sigterm.data = t->sigint.data = t;
        uv_signal_start(&t->sigterm, on_signal, SIGTERM);
        uv_signal_start(&t->sigint, on_signal, SIGINT);
    }
    for (unsigned i = 0; rv == 0 && i < t->nengines; i++)
        rv = pthread_create(&t->engines[i]->thread, NULL, engine_run, t->engines[i]);
    if (rv != 0) {
        snprintf(errmsg, errlen, "start: %s", rv > 0 ? strerror(rv) : uv_strerror(rv));
        return LC_EIO; /* main exits; the kernel reclaims the rest */
    }
    uv_run(&t->loop, UV_RUN_DEFAULT);
    uv_loop_close(&t->loop);
    for (unsigned i = 0; i < t->nengines; i++)
        pthread_join(t->engines[i]->thread, NULL);
    return 0;
}

static void target_free(target_t *t)
{
    for (unsigned i = 0; i < t->nengines; i++) {
        uv_loop_close(&t->engines[i]->loop);
        free(t->engines[i]);
    }
    for (size_t s = 0; s < PATH_SLOTS; s++)
        free(atomic_load(&t->path_keys[s]));
    free(t);
}

int main(int argc, char **argv)
{
    char errmsg[512];
    target_t *t = calloc(1, sizeof *t);
    if (t == NULL)
        return 1;
    int rv = parse_args(argc, argv, &t->cfg);
    if (rv != 0) {
        rv == 1 ? usage(stdout) : (void)fputs("lc_target: try --help\n", stderr);
        free(t);
        return rv == 1 ? 0 : 2;
    }
    signal(SIGPIPE, SIG_IGN);
    prepare_responses(t);
    if ((rv = engines_start(t, errmsg, sizeof errmsg)) != 0 ||
        (t->cfg.port_file != NULL &&
         (rv = write_port_file(t->cfg.port_file, t->cfg.listen.port, errmsg, sizeof errmsg)) != 0)) {
        fprintf(stderr, "lc_target: %s\n", errmsg);
        return rv == LC_EINVAL ? 2 : 1; /* a bad --listen address is a usage error */
    }
    if (!t->cfg.quiet)
        fprintf(stderr, "lc_target: listening on %s:%u threads=%lu\n", t->cfg.listen.host,
                t->cfg.listen.port, t->cfg.threads);
    if (serve(t, errmsg, sizeof errmsg) != 0) {
        fprintf(stderr, "lc_target: %s\n", errmsg);
        return 1;
    }
    char *json = stats_json(t);
    printf("%s\n", json ? json : "{}");
    fflush(stdout);
    free(json);
    target_free(t);
    return 0;
}
