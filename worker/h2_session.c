/* h2_session.c — one nghttp2 client session per TCP connection, one stream at a time. */
#include "h2_session.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nghttp2/nghttp2.h>

#include "h2_mem.h"
#include "h2_request.h"
#include "lc_err.h"
#include "page_pool.h"
#include "stats.h"

/* The highest stream id a client may open (RFC 9113 5.1.1): past it, a new connection. */
#define STREAM_ID_LAST ((1u << 31) - 1u)

struct worker_h2_s {
    nghttp2_session *s;
    worker_h2_mem_t mem;    /* the session's allocator's notes: its big blocks, its bytes */
    lc_buf_t req;           /* the request in flight, translated (h2_request.h); its body
                             * is sent from here; freed when its stream ends */
    size_t body_off, body_len;
    const char *body;       /* into req */
    int32_t stream;         /* the stream of the last submit; 0: none yet */
    int status;             /* its last :status (a 1xx first, perhaps) */
    int end_kind;           /* how it ended, once ended */
    bool tls;
    bool final_headers;     /* the final response's header block is complete */
    bool peer_reset;        /* the server sent RST_STREAM on it */
    bool ended;             /* it ended, and worker_h2_take_end has not said so yet */
};

static bool conn_open(const worker_conn_t *c)
{
    return c->state != WORKER_CONN_CLOSING && c->state != WORKER_CONN_CLOSED;
}

/* Frames up to this size are gathered on the stack into one write (HEADERS and
 * WINDOW_UPDATEs, a pool's many HEADERS); larger ones go alone. */
#define GATHER_MAX (16 * 1024)

int worker_h2_write_out(struct nghttp2_session *s, worker_conn_t *c)
{
    char gathered[GATHER_MAX];
    size_t len = 0;
    while (conn_open(c)) {
        const uint8_t *data;
        ssize_t n = nghttp2_session_mem_send(s, &data);
        if (n < 0)
            return n == NGHTTP2_ERR_NOMEM ? WORKER_ERR_ABORTED : WORKER_ERR_PARSE;
        if (len > 0 && (n == 0 || len + (size_t)n > sizeof gathered)) {
            if (c->transport->write(c, gathered, len) != 0)
                return WORKER_ERR_RESET;
            len = 0;
        }
        if (n == 0)
            return 0;
        if ((size_t)n <= sizeof gathered) { /* the session's buffer is valid until the next call */
            memcpy(gathered + len, data, (size_t)n);
            len += (size_t)n;
        } else if (c->transport->write(c, (const char *)data, (size_t)n) != 0) {
            return WORKER_ERR_RESET;
        }
    }
    return 0;
}

/* What the session has to send, to the transport. */
static int flush(worker_conn_t *c)
{
    return worker_h2_write_out(c->h2->s, c);
}

/* Callbacks (from inside nghttp2_session_mem_recv and _mem_send2) */

static int on_header(nghttp2_session *s, const nghttp2_frame *frame, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                     void *data)
{
    (void)s, (void)flags;
    worker_conn_t *c = data;
    worker_h2_t *h = c->h2;
    if (frame->hd.type != NGHTTP2_HEADERS || frame->hd.stream_id != h->stream ||
        h->final_headers)
        return 0; /* another stream's, or trailers */
    if (namelen == 7 && memcmp(name, ":status", 7) == 0) {
        /* nghttp2 checked it is three digits (its HTTP messaging checks are on). */
        h->status = valuelen == 3 ? (value[0] - '0') * 100 + (value[1] - '0') * 10 +
                                        (value[2] - '0')
                                  : 0;
        if (c->hdrs != NULL)
            c->hdrs->len = 0; /* an interim 1xx's headers are not the answer's */
        return 0;
    }
    if (c->want != NULL && name[0] != ':')
        worker_conn_capture_header(c, (const char *)name, namelen, (const char *)value,
                                   valuelen);
    return 0;
}

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *frame, void *data)
{
    (void)s;
    worker_conn_t *c = data;
    worker_h2_t *h = c->h2;
    if (frame->hd.stream_id != h->stream || h->stream == 0)
        return 0;
    if (frame->hd.type == NGHTTP2_HEADERS && h->status >= 200)
        h->final_headers = true;
    else if (frame->hd.type == NGHTTP2_RST_STREAM)
        h->peer_reset = true;
    return 0;
}

static int on_data_chunk(nghttp2_session *s, uint8_t flags, int32_t stream_id,
                         const uint8_t *data, size_t len, void *user)
{
    (void)s, (void)flags;
    worker_conn_t *c = user;
    if (stream_id == c->h2->stream)
        worker_conn_capture_body(c, (const char *)data, len);
    return 0;
}

int worker_h2_end_kind(uint32_t error_code, bool peer_reset, bool final_headers)
{
    if (error_code == NGHTTP2_REFUSED_STREAM)
        return WORKER_ERR_H2_REFUSED;
    if (peer_reset && !(error_code == NGHTTP2_NO_ERROR && final_headers))
        return WORKER_ERR_H2_RESET;
    if (error_code != NGHTTP2_NO_ERROR || !final_headers)
        return WORKER_ERR_PARSE;
    return WORKER_KIND_OK;
}

static int on_stream_close(nghttp2_session *s, int32_t stream_id, uint32_t error_code,
                           void *data)
{
    (void)s;
    worker_conn_t *c = data;
    worker_h2_t *h = c->h2;
    if (stream_id != h->stream)
        return 0;
    h->ended = true;
    h->end_kind = worker_h2_end_kind(error_code, h->peer_reset, h->final_headers);
    h->body = NULL;
    lc_buf_free(&h->req); /* nghttp2 holds no pointer into it once the stream is closed */
    return 0;
}

static ssize_t read_body(nghttp2_session *s, int32_t stream_id, uint8_t *buf,
                               size_t length, uint32_t *flags, nghttp2_data_source *src,
                               void *data)
{
    (void)s, (void)stream_id, (void)data;
    worker_h2_t *h = src->ptr;
    size_t left = h->body_len - h->body_off;
    size_t n = left < length ? left : length;
    if (n > 0)
        memcpy(buf, h->body + h->body_off, n);
    h->body_off += n;
    if (h->body_off == h->body_len)
        *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

/* The session */

static int new_session(worker_conn_t *c, worker_h2_t *h)
{
    nghttp2_session_callbacks *cbs;
    nghttp2_option *opt;
    if (nghttp2_session_callbacks_new(&cbs) != 0)
        return LC_ENOMEM;
    if (nghttp2_option_new(&opt) != 0) {
        nghttp2_session_callbacks_del(cbs);
        return LC_ENOMEM;
    }
    nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, on_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, on_data_chunk);
    nghttp2_session_callbacks_set_on_stream_close_callback(cbs, on_stream_close);
    /* A server may not push to a client that said ENABLE_PUSH 0; nor reserve streams. */
    nghttp2_option_set_max_reserved_remote_streams(opt, 0);
    nghttp2_option_set_max_deflate_dynamic_table_size(opt, WORKER_H2_HEADER_TABLE);
    int rv = worker_h2_mem_client_new(&h->s, cbs, c, opt, &h->mem);
    nghttp2_option_del(opt);
    nghttp2_session_callbacks_del(cbs);
    return rv == 0 ? 0 : LC_ENOMEM;
}

/* The connection's HTTP/2 state lives in one page from the page pool: worker_h2_t first,
 * then the room h2_mem carves the nghttp2 session struct and its small blocks from (h2_mem.h:
 * out of the heap, where a TLS handshake's freed memory would be pinned around them). */
#define HOME_HEAD ((sizeof(worker_h2_t) + 15u) & ~(size_t)15u)

int worker_h2_open(worker_conn_t *c, bool tls)
{
    assert(c->h2 == NULL);
    size_t page = worker_page_size();
    assert(HOME_HEAD < page);
    worker_h2_t *h = worker_page_pool_take(page); /* zeros */
    if (h == NULL)
        return WORKER_ERR_ABORTED;
    worker_h2_mem_init(&h->mem, (char *)h + HOME_HEAD, page - HOME_HEAD);
    h->tls = tls;
    c->h2 = h;
    if (new_session(c, h) != 0) {
        worker_h2_close(c);
        return WORKER_ERR_ABORTED;
    }
    static const nghttp2_settings_entry settings[] = {
        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, WORKER_H2_WINDOW},
        /* No table of the server's response headers (h2_session.h). */
        {NGHTTP2_SETTINGS_HEADER_TABLE_SIZE, WORKER_H2_HEADER_TABLE},
    };
    /* The client preface goes out with this first SETTINGS. */
    int rv = nghttp2_submit_settings(h->s, NGHTTP2_FLAG_NONE, settings,
                                     sizeof settings / sizeof settings[0]);
    if (rv == 0)
        rv = nghttp2_session_set_local_window_size(h->s, NGHTTP2_FLAG_NONE, 0,
                                                   (int32_t)WORKER_H2_WINDOW);
    if (rv != 0)
        return WORKER_ERR_ABORTED; /* only NOMEM can fail these; reset frees the session */
    return flush(c);
}

void worker_h2_close(worker_conn_t *c)
{
    worker_h2_t *h = c->h2;
    if (h == NULL)
        return;
    nghttp2_session_del(h->s);
    lc_buf_free(&h->req);
    worker_page_pool_give(h, worker_page_size());
    c->h2 = NULL;
}

int worker_h2_submit(worker_conn_t *c, const char *req, size_t len)
{
    worker_h2_t *h = c->h2;
    assert(h != NULL && c->state == WORKER_CONN_BUSY);
    worker_h2_req_t r; /* ~3 KiB of header pairs, on the stack: nghttp2 copies them */
    int rv = worker_h2_req_translate(req, len, h->tls, &h->req, &r);
    if (rv != 0)
        return rv == LC_ENOMEM ? WORKER_ERR_ABORTED : WORKER_ERR_TEMPLATE;
    h->body = r.body;
    h->body_len = r.body_len;
    h->body_off = 0;
    nghttp2_data_provider dp = {.source.ptr = h, .read_callback = read_body};
    int32_t id = nghttp2_submit_request(h->s, NULL, r.nv, r.n_nv, r.body_len > 0 ? &dp : NULL,
                                         NULL);
    if (id < 0)
        return id == NGHTTP2_ERR_NOMEM ? WORKER_ERR_ABORTED : WORKER_ERR_RESET;
    h->stream = id;
    h->status = 0;
    h->final_headers = h->peer_reset = h->ended = false;
    return flush(c);
}

int worker_h2_feed(worker_conn_t *c, const char *data, size_t len)
{
    worker_h2_t *h = c->h2;
    assert(h != NULL);
    ssize_t n = nghttp2_session_mem_recv(h->s, (const uint8_t *)data, len);
    if (n < 0) {
        (void)flush(c); /* best effort: the GOAWAY nghttp2 queued says why */
        return n == NGHTTP2_ERR_NOMEM ? WORKER_ERR_ABORTED : WORKER_ERR_PARSE;
    }
    int kind = flush(c);
    /* nghttp2 ends a session on a protocol error (after its GOAWAY) without closing the
     * streams it leaves: the one in flight would wait for the timeout. */
    bool dead = !nghttp2_session_want_read(h->s) && !nghttp2_session_want_write(h->s);
    if (kind == 0 && dead && c->state == WORKER_CONN_BUSY && !h->ended)
        kind = WORKER_ERR_PARSE;
    return kind;
}

bool worker_h2_cancel(worker_conn_t *c)
{
    worker_h2_t *h = c->h2;
    assert(h != NULL && c->state == WORKER_CONN_BUSY && h->stream != 0);
    if (h->ended) { /* it ended in the same turn: the reset has nothing to close */
        h->ended = false;
        return true;
    }
    if (nghttp2_submit_rst_stream(h->s, NGHTTP2_FLAG_NONE, h->stream, NGHTTP2_CANCEL) != 0)
        return false;
    /* Sending the reset closes the stream (on_stream_close: the request buffer freed). */
    if (flush(c) != 0 || !conn_open(c) || !h->ended)
        return false;
    h->ended = false; /* its end is the timeout, not what on_stream_close made of it */
    return true;
}

bool worker_h2_take_end(worker_conn_t *c, int *kind, int *status)
{
    worker_h2_t *h = c->h2;
    if (h == NULL || !h->ended)
        return false;
    h->ended = false;
    *kind = h->end_kind;
    *status = h->status;
    return true;
}

size_t worker_h2_idle(worker_conn_t *c)
{
    worker_h2_t *h = c->h2;
    assert(h != NULL);
    /* Nothing to send means the last frame was taken whole: the frame buffer is dead. The
     * client preface and first SETTINGS went out with worker_h2_open's flush. */
    if (c->state != WORKER_CONN_IDLE || nghttp2_session_want_write(h->s))
        return 0;
    return worker_h2_mem_release(&h->mem, h->s);
}

size_t worker_h2_held_bytes(const worker_conn_t *c)
{
    assert(c->h2 != NULL);
    return c->h2->mem.live;
}

bool worker_h2_reusable(const worker_conn_t *c)
{
    const worker_h2_t *h = c->h2;
    return h != NULL && nghttp2_session_check_request_allowed(h->s) != 0 &&
           nghttp2_session_want_read(h->s) != 0 &&
           nghttp2_session_get_next_stream_id(h->s) <= STREAM_ID_LAST;
}
