/* h2_mux.c — one nghttp2 client session, many streams; ends are told after nghttp2 returns. */
#include "h2_mux.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include <nghttp2/nghttp2.h>

#include "h2_request.h"
#include "h2_session.h"
#include "lc_err.h"
#include "stats.h"

#define STREAM_ID_LAST ((1u << 31) - 1u)

struct worker_h2_mux_s {
    nghttp2_session *s;
    worker_conn_t *c;
    const worker_h2_mux_cbs_t *cbs;
    void *data;
    worker_bufpool_t *pool;
    worker_h2_stream_t *live;  /* submitted, not ended */
    worker_h2_stream_t *ended; /* ended inside nghttp2, told once it returns */
    bool tls;
    bool settings_seen;        /* a SETTINGS (not an ack) came since the last tell */
    bool flush_due;            /* frames wait for worker_h2_mux_flush (cbs->flush_due) */
};

static void unlink_live(worker_h2_mux_t *m, worker_h2_stream_t *st)
{
    if (st->prev != NULL)
        st->prev->next = st->next;
    else
        m->live = st->next;
    if (st->next != NULL)
        st->next->prev = st->prev;
    st->prev = st->next = NULL;
}

static void link_live(worker_h2_mux_t *m, worker_h2_stream_t *st)
{
    st->prev = NULL;
    st->next = m->live;
    if (m->live != NULL)
        m->live->prev = st;
    m->live = st;
}

/* st ended with kind: off the live list, onto the list told after nghttp2 returns. */
static void end_later(worker_h2_mux_t *m, worker_h2_stream_t *st, int kind)
{
    unlink_live(m, st);
    st->end_kind = kind;
    st->next = m->ended;
    m->ended = st;
}

/* Tells the SETTINGS and the ends gathered inside nghttp2 (oldest end first). */
static void tell(worker_h2_mux_t *m)
{
    if (m->settings_seen) {
        m->settings_seen = false;
        m->cbs->settings(m, nghttp2_session_get_remote_settings(
                                m->s, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS));
    }
    worker_h2_stream_t *rev = NULL;
    while (m->ended != NULL) {
        worker_h2_stream_t *st = m->ended;
        m->ended = st->next;
        st->next = rev;
        rev = st;
    }
    while (rev != NULL) {
        worker_h2_stream_t *st = rev;
        rev = st->next;
        st->next = NULL;
        int kind = st->end_kind;
        lc_buf_free(&st->req);
        m->cbs->stream_end(m, st, kind);
    }
}

/* Hands what the session has to send to the transport, gathered (h2_session.c); 0 or a
 * kind. */
static int flush(worker_h2_mux_t *m)
{
    m->flush_due = false;
    return worker_h2_write_out(m->s, m->c);
}

/* Now, or (with an owner that gathers writes) once the loop's turn ends. */
static int flush_soon(worker_h2_mux_t *m)
{
    if (m->cbs->flush_due == NULL)
        return flush(m);
    if (!m->flush_due) {
        m->flush_due = true;
        m->cbs->flush_due(m);
    }
    return 0;
}

int worker_h2_mux_flush(worker_h2_mux_t *m)
{
    int kind = m->flush_due ? flush(m) : 0;
    tell(m);
    return kind;
}

static worker_h2_stream_t *stream_of(nghttp2_session *s, int32_t id)
{
    return id > 0 ? nghttp2_session_get_stream_user_data(s, id) : NULL;
}

/* Callbacks (inside nghttp2_session_mem_recv and _mem_send) */

static int on_header(nghttp2_session *s, const nghttp2_frame *frame, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                     void *data)
{
    (void)flags;
    worker_h2_stream_t *st = stream_of(s, frame->hd.stream_id);
    if (frame->hd.type != NGHTTP2_HEADERS || st == NULL || st->final_headers)
        return 0;
    st->bytes += namelen + valuelen;
    if (namelen == 7 && memcmp(name, ":status", 7) == 0) {
        st->status = valuelen == 3 ? (value[0] - '0') * 100 + (value[1] - '0') * 10 +
                                         (value[2] - '0')
                                   : 0;
        if (st->hdrs != NULL)
            st->hdrs->len = 0; /* an interim 1xx's headers are not the answer's */
    } else if (st->want != NULL && name[0] != ':') { /* nghttp2 checked: lowercase */
        worker_h2_mux_t *m = data;
        worker_hdrs_keep(&st->hdrs, m->pool, st->want, (const char *)name, namelen,
                         (const char *)value, valuelen);
    }
    return 0;
}

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *frame, void *data)
{
    worker_h2_mux_t *m = data;
    if (frame->hd.type == NGHTTP2_SETTINGS && !(frame->hd.flags & NGHTTP2_FLAG_ACK)) {
        m->settings_seen = true;
        return 0;
    }
    worker_h2_stream_t *st = stream_of(s, frame->hd.stream_id);
    if (st == NULL)
        return 0;
    if (frame->hd.type == NGHTTP2_HEADERS && st->status >= 200)
        st->final_headers = true;
    else if (frame->hd.type == NGHTTP2_RST_STREAM)
        st->peer_reset = true;
    return 0;
}

static int on_frame_send(nghttp2_session *s, const nghttp2_frame *frame, void *data)
{
    (void)data;
    worker_h2_stream_t *st = stream_of(s, frame->hd.stream_id);
    if (st != NULL && frame->hd.type == NGHTTP2_HEADERS)
        st->sent = true;
    return 0;
}

/* A request's HEADERS nghttp2 could not send (a GOAWAY came first): the stream never opened
 * and no close follows, so it ends here, not processed. */
static int on_frame_not_send(nghttp2_session *s, const nghttp2_frame *frame, int error,
                             void *data)
{
    (void)error;
    worker_h2_stream_t *st = stream_of(s, frame->hd.stream_id);
    if (st != NULL && frame->hd.type == NGHTTP2_HEADERS && !st->sent) {
        nghttp2_session_set_stream_user_data(s, frame->hd.stream_id, NULL);
        end_later(data, st, st->cancelled ? st->cancel_kind : WORKER_ERR_H2_REFUSED);
    }
    return 0;
}

static int on_data_chunk(nghttp2_session *s, uint8_t flags, int32_t stream_id,
                         const uint8_t *data, size_t len, void *user)
{
    (void)flags;
    worker_h2_mux_t *m = user;
    worker_h2_stream_t *st = stream_of(s, stream_id);
    if (st == NULL)
        return 0;
    st->bytes += len;
    if (!st->capture)
        return 0;
    if (st->captured == NULL && (st->captured = worker_bufpool_take(m->pool)) == NULL)
        return 0;
    size_t room = WORKER_BODY_CAPTURE_MAX - st->captured->len;
    if (st->captured->len < WORKER_BODY_CAPTURE_MAX)
        lc_buf_append(st->captured, (const char *)data, len < room ? len : room);
    return 0;
}

/* As worker_h2_end_kind says; a stream we reset ends as why we did. */
static int end_kind(const worker_h2_stream_t *st, uint32_t error_code)
{
    return st->cancelled ? st->cancel_kind
                         : worker_h2_end_kind(error_code, st->peer_reset, st->final_headers);
}

static int on_stream_close(nghttp2_session *s, int32_t stream_id, uint32_t error_code,
                           void *data)
{
    worker_h2_stream_t *st = stream_of(s, stream_id);
    if (st != NULL) {
        nghttp2_session_set_stream_user_data(s, stream_id, NULL);
        end_later(data, st, end_kind(st, error_code));
    }
    return 0;
}

static ssize_t read_body(nghttp2_session *s, int32_t stream_id, uint8_t *buf, size_t length,
                         uint32_t *flags, nghttp2_data_source *src, void *data)
{
    (void)s, (void)stream_id, (void)data;
    worker_h2_stream_t *st = src->ptr;
    size_t left = st->body_len - st->body_off;
    size_t n = left < length ? left : length;
    if (n > 0)
        memcpy(buf, st->body + st->body_off, n);
    st->body_off += n;
    if (st->body_off == st->body_len)
        *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

/* The session */

static int new_session(worker_h2_mux_t *m)
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
    nghttp2_session_callbacks_set_on_frame_send_callback(cbs, on_frame_send);
    nghttp2_session_callbacks_set_on_frame_not_send_callback(cbs, on_frame_not_send);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, on_data_chunk);
    nghttp2_session_callbacks_set_on_stream_close_callback(cbs, on_stream_close);
    nghttp2_option_set_max_reserved_remote_streams(opt, 0);
    int rv = nghttp2_session_client_new2(&m->s, cbs, m, opt);
    nghttp2_option_del(opt);
    nghttp2_session_callbacks_del(cbs);
    return rv == 0 ? 0 : LC_ENOMEM;
}

int worker_h2_mux_open(worker_conn_t *c, bool tls, const worker_h2_mux_cbs_t *cbs, void *data,
                       worker_bufpool_t *pool, worker_h2_mux_t **out)
{
    assert(c != NULL && cbs != NULL && out != NULL);
    *out = NULL;
    worker_h2_mux_t *m = calloc(1, sizeof *m);
    if (m == NULL)
        return WORKER_ERR_ABORTED;
    *m = (worker_h2_mux_t){.c = c, .cbs = cbs, .data = data, .pool = pool, .tls = tls};
    if (new_session(m) != 0) {
        free(m);
        return WORKER_ERR_ABORTED;
    }
    static const nghttp2_settings_entry settings[] = {
        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, WORKER_H2_WINDOW},
    };
    int rv = nghttp2_submit_settings(m->s, NGHTTP2_FLAG_NONE, settings,
                                     sizeof settings / sizeof settings[0]);
    if (rv == 0)
        rv = nghttp2_session_set_local_window_size(m->s, NGHTTP2_FLAG_NONE, 0,
                                                   (int32_t)WORKER_H2_WINDOW);
    int kind = rv == 0 ? flush(m) : WORKER_ERR_ABORTED;
    if (kind != 0) {
        nghttp2_session_del(m->s);
        free(m);
        return kind;
    }
    *out = m;
    return 0;
}

void worker_h2_mux_close(worker_h2_mux_t *m)
{
    if (m == NULL)
        return;
    worker_h2_stream_t *st;
    while ((st = m->live) != NULL) {
        if (st->id > 0)
            nghttp2_session_set_stream_user_data(m->s, st->id, NULL);
        /* Sent and unanswered: the server may have acted on it. Never sent: not processed. */
        end_later(m, st, st->cancelled ? st->cancel_kind
                         : st->sent    ? WORKER_ERR_RESET
                                       : WORKER_ERR_H2_REFUSED);
    }
    m->settings_seen = false;
    tell(m);
    nghttp2_session_del(m->s);
    free(m);
}

void *worker_h2_mux_data(const worker_h2_mux_t *m)
{
    return m->data;
}

int worker_h2_mux_submit(worker_h2_mux_t *m, worker_h2_stream_t *st, const char *req,
                         size_t len)
{
    assert(m != NULL && st != NULL);
    worker_h2_req_t r; /* ~3 KiB of header pairs, on the stack: nghttp2 copies them */
    int rv = worker_h2_req_translate(req, len, m->tls, &st->req, &r);
    if (rv != 0) {
        lc_buf_free(&st->req);
        return rv == LC_ENOMEM ? WORKER_ERR_ABORTED : WORKER_ERR_TEMPLATE;
    }
    st->body = r.body;
    st->body_len = r.body_len;
    st->body_off = 0;
    st->status = 0;
    st->final_headers = st->peer_reset = st->sent = st->cancelled = false;
    nghttp2_data_provider dp = {.source.ptr = st, .read_callback = read_body};
    int32_t id = nghttp2_submit_request(m->s, NULL, r.nv, r.n_nv, r.body_len > 0 ? &dp : NULL,
                                        st);
    if (id < 0) {
        lc_buf_free(&st->req);
        return id == NGHTTP2_ERR_NOMEM ? WORKER_ERR_ABORTED : WORKER_ERR_H2_REFUSED;
    }
    st->id = id;
    link_live(m, st);
    int kind = flush_soon(m);
    tell(m); /* a send may end streams (ours reset, a refusal) */
    return kind;
}

int worker_h2_mux_feed(worker_h2_mux_t *m, const char *data, size_t len)
{
    ssize_t n = nghttp2_session_mem_recv(m->s, (const uint8_t *)data, len);
    int kind = n < 0 ? (n == NGHTTP2_ERR_NOMEM ? WORKER_ERR_ABORTED : WORKER_ERR_PARSE) : 0;
    /* What the read made nghttp2 answer (SETTINGS acks, window updates) may wait for the
     * requests this turn submits; a protocol error's GOAWAY goes now. */
    int sent = n < 0 ? flush(m) : flush_soon(m);
    if (kind == 0)
        kind = sent;
    /* A session nghttp2 ended (after its GOAWAY) leaves its streams open: the connection is
     * unusable, and closing it ends them. */
    if (kind == 0 && !nghttp2_session_want_read(m->s) && !nghttp2_session_want_write(m->s))
        kind = WORKER_ERR_PARSE;
    tell(m);
    return kind;
}

int worker_h2_mux_cancel(worker_h2_mux_t *m, worker_h2_stream_t *st, int kind, uint64_t now_ns)
{
    assert(st->id > 0);
    if (st->cancelled)
        return 0;
    st->cancelled = true;
    st->cancel_kind = st->deadline_ns <= now_ns ? WORKER_ERR_TIMEOUT : kind;
    int rv = nghttp2_submit_rst_stream(m->s, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_CANCEL) == 0
                 ? flush(m)
                 : WORKER_ERR_ABORTED;
    tell(m);
    return rv;
}

int worker_h2_mux_expire(worker_h2_mux_t *m, uint64_t now_ns)
{
    bool any = false;
    for (worker_h2_stream_t *st = m->live; st != NULL; st = st->next) {
        if (st->cancelled || st->deadline_ns > now_ns)
            continue;
        st->cancelled = true;
        st->cancel_kind = WORKER_ERR_TIMEOUT;
        any |= nghttp2_submit_rst_stream(m->s, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_CANCEL) == 0;
    }
    int rv = any ? flush(m) : 0;
    tell(m);
    return rv;
}

bool worker_h2_mux_open_for_streams(const worker_h2_mux_t *m)
{
    return nghttp2_session_check_request_allowed(m->s) != 0 &&
           nghttp2_session_want_read(m->s) != 0 &&
           nghttp2_session_get_next_stream_id(m->s) <= STREAM_ID_LAST;
}

bool worker_h2_mux_busy(const worker_h2_mux_t *m)
{
    return m->live != NULL;
}
