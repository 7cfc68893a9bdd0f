/* target_h2.c — lc_target's HTTP/2 sessions: nghttp2's server callbacks, each request stream
 * planned like an HTTP/1.1 request and answered when due (the connection's timer), the
 * output written while the socket keeps up, GOAWAY after --h2-goaway-after streams. */
#include "target_h2.h"

#include <assert.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <llhttp.h>
#include <nghttp2/nghttp2.h>
#include <uv.h>

#include "lc_err.h"
#include "target_h2_stream.h"

/* Decoded header bytes past which a header block is an attack, not a big request: the
 * connection ends (HEADER_BYTES_MAX only earns a 431). */
#define H2_HEADER_BYTES_KILL (4 * HEADER_BYTES_MAX)

struct h2_conn_s {
    conn_t *c;
    engine_t *e;
    nghttp2_session *s;
    h2_stream_t *streams; /* every stream we hold, in no order */
    uint64_t opened;      /* request streams begun on this connection */
    uint64_t timer_due;   /* when the armed timer fires, uv_hrtime ns; 0 = not armed */
    int32_t last_accepted;
    bool goaway, fatal;   /* fatal: the session failed; end once its GOAWAY is out */
};

#define BUMP(h, field) atomic_fetch_add_explicit(&(h)->e->field, 1, RELAXED)

/* ---- streams ---- */

static h2_stream_t *stream_of(h2_conn_t *h, int32_t id)
{
    return nghttp2_session_get_stream_user_data(h->s, id);
}

static void stream_unlink(h2_conn_t *h, h2_stream_t *st)
{
    if (st->prev != NULL)
        st->prev->next = st->next;
    else
        h->streams = st->next;
    if (st->next != NULL)
        st->next->prev = st->prev;
}

static void reset_stream(h2_conn_t *h, h2_stream_t *st, uint32_t code)
{
    st->state = ST_DONE;
    (void)nghttp2_submit_rst_stream(h->s, NGHTTP2_FLAG_NONE, st->id, code);
}

/* Answers st now: a reset (?rst=), or its response, which is counted once its HEADERS frame
 * is handed to the socket (on_frame_send). */
static void answer(h2_conn_t *h, h2_stream_t *st)
{
    if (st->r.rst != RST_NONE) {
        bool refused = st->r.rst == RST_REFUSED;
        reset_stream(h, st, refused ? NGHTTP2_REFUSED_STREAM : NGHTTP2_INTERNAL_ERROR);
        if (refused)
            BUMP(h, h2_refused);
        else
            BUMP(h, h2_reset);
        return;
    }
    st->state = ST_SENT;
    if (h2_stream_submit(h->e, h->s, st) != 0)
        reset_stream(h, st, NGHTTP2_INTERNAL_ERROR);
}

static void arm_timer(h2_conn_t *h, uint64_t due, uint64_t now)
{
    h->timer_due = due;
    conn_timer_start(h->c, (due - now + NS_PER_MS - 1) / NS_PER_MS);
}

/* Answers st when due_ns comes (0 or past: now). */
static void schedule(h2_conn_t *h, h2_stream_t *st, uint64_t due_ns)
{
    uint64_t now = uv_hrtime();
    if (due_ns <= now) {
        answer(h, st);
        return;
    }
    st->state = ST_WAIT;
    st->due_ns = due_ns;
    if (h->timer_due == 0 || due_ns < h->timer_due)
        arm_timer(h, due_ns, now);
}

/* The request is complete (END_STREAM): plan its answer. */
static void request_complete(h2_conn_t *h, h2_stream_t *st)
{
    uint64_t due_ns = 0;
    if (st->reject == 0 && (st->method < 0 || st->url == NULL))
        st->reject = 400; /* CONNECT, or a method llhttp does not know */
    if (st->reject != 0) {
        h2_stream_plan_reject(st, st->reject);
    } else {
        st->r = (resp_t){.head = st->method == HTTP_HEAD};
        plan_request(h->e, st->method, st->route, st->url, st->url_len, &st->r, &due_ns);
        if (st->r.kind == RESP_APP && h2_stream_serve_app(h->e, st) != 0) {
            reset_stream(h, st, NGHTTP2_INTERNAL_ERROR); /* out of memory */
            return;
        }
    }
    schedule(h, st, due_ns);
}

/* After GOAWAY every further stream is refused: the client may send it again elsewhere. */
static void refuse_after_goaway(h2_conn_t *h, h2_stream_t *st)
{
    if (!h->goaway) {
        h->goaway = true;
        BUMP(h, h2_goaways);
        (void)nghttp2_submit_goaway(h->s, NGHTTP2_FLAG_NONE, h->last_accepted,
                                    NGHTTP2_NO_ERROR, NULL, 0);
    }
    reset_stream(h, st, NGHTTP2_REFUSED_STREAM);
    BUMP(h, h2_refused);
}

/* ---- nghttp2 callbacks (inside nghttp2_session_mem_recv and _mem_send) ---- */

static bool is_request(const nghttp2_frame *frame)
{
    return frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST;
}

static int on_begin_headers(nghttp2_session *s, const nghttp2_frame *frame, void *data)
{
    h2_conn_t *h = data;
    if (!is_request(frame))
        return 0;
    h2_stream_t *st = calloc(1, sizeof *st);
    if (st == NULL)
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* nghttp2 resets the stream */
    st->id = frame->hd.stream_id;
    st->method = -1;
    st->next = h->streams;
    if (h->streams != NULL)
        h->streams->prev = st;
    h->streams = st;
    if (nghttp2_session_set_stream_user_data(s, st->id, st) != 0) {
        stream_unlink(h, st);
        free(st);
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    }
    BUMP(h, h2_streams);
    unsigned long after = h->e->t->cfg.h2_goaway_after;
    if (after > 0 && ++h->opened > after)
        refuse_after_goaway(h, st);
    else
        h->last_accepted = st->id;
    return 0;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *frame, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                     void *data)
{
    (void)s, (void)flags;
    h2_conn_t *h = data;
    if (frame->hd.type != NGHTTP2_HEADERS)
        return 0;
    h2_stream_t *st = stream_of(h, frame->hd.stream_id);
    if (st == NULL)
        return 0;
    st->header_bytes += namelen + valuelen; /* trailers too: they are header bytes */
    if (st->header_bytes > H2_HEADER_BYTES_KILL)
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    if (st->state != ST_READ || st->reject != 0 || !is_request(frame))
        return 0;
    if (st->header_bytes > HEADER_BYTES_MAX) {
        st->reject = 431;
        return 0;
    }
    h2_stream_header(st, (const char *)name, namelen, (const char *)value, valuelen);
    return 0;
}

static int on_data_chunk(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *data,
                         size_t len, void *user)
{
    (void)s, (void)flags;
    h2_conn_t *h = user;
    h2_stream_t *st = stream_of(h, id);
    if (st == NULL || st->state != ST_READ || st->reject != 0)
        return 0;
    h2_stream_body(st, (const char *)data, len);
    if (st->reject == 413) {
        /* Answer now and, once that is out, ask the client to stop sending (RFC 9113 8.1). */
        h2_stream_plan_reject(st, 413);
        st->stop_after = true;
        answer(h, st);
    }
    return 0;
}

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *frame, void *data)
{
    (void)s;
    h2_conn_t *h = data;
    if ((frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) ||
        !(frame->hd.flags & NGHTTP2_FLAG_END_STREAM))
        return 0;
    h2_stream_t *st = stream_of(h, frame->hd.stream_id);
    if (st != NULL && st->state == ST_READ)
        request_complete(h, st);
    return 0;
}

static int on_frame_send(nghttp2_session *s, const nghttp2_frame *frame, void *data)
{
    (void)s;
    h2_conn_t *h = data;
    if (frame->hd.type != NGHTTP2_HEADERS)
        return 0;
    h2_stream_t *st = stream_of(h, frame->hd.stream_id);
    if (st == NULL || st->state != ST_SENT || st->tallied)
        return 0;
    st->tallied = true;
    if (st->r.counted)
        atomic_fetch_add_explicit(st->r.slot >= 0 ? &h->e->by_path[st->r.slot] : &h->e->other, 1,
                                  RELAXED);
    else if (st->r.kind == RESP_REJECT)
        BUMP(h, rejected);
    /* Not sooner: a submitted RST_STREAM makes nghttp2 drop the stream's pending HEADERS. */
    if (st->stop_after)
        (void)nghttp2_submit_rst_stream(h->s, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_NO_ERROR);
    return 0;
}

static int on_stream_close(nghttp2_session *s, int32_t id, uint32_t error_code, void *data)
{
    (void)error_code;
    h2_conn_t *h = data;
    h2_stream_t *st = stream_of(h, id);
    if (st == NULL)
        return 0;
    (void)nghttp2_session_set_stream_user_data(s, id, NULL);
    stream_unlink(h, st);
    h2_stream_free(st);
    return 0;
}

/* ---- the session ---- */

/* Writes what the session has while the socket keeps up; ends the connection once the
 * session is done (after a GOAWAY both ways, or a fatal error). */
static void flush(h2_conn_t *h)
{
    conn_t *c = h->c;
    while (!conn_closing(c) && !conn_backlogged(c)) {
        const uint8_t *data;
        ssize_t n = nghttp2_session_mem_send(h->s, &data);
        if (n < 0) {
            h->fatal = true; /* only NOMEM or a callback failure */
            break;
        }
        if (n == 0)
            break;
        conn_out(c, (const char *)data, (size_t)n);
    }
    conn_flush(c);
    bool done = !nghttp2_session_want_read(h->s) && !nghttp2_session_want_write(h->s);
    if (!conn_closing(c) && (done || h->fatal))
        conn_end(c); /* what is queued is still written, then the socket closes */
}

static int new_session(h2_conn_t *h)
{
    nghttp2_session_callbacks *cbs = NULL;
    nghttp2_option *opt = NULL;
    int rv = LC_ENOMEM;
    if (nghttp2_session_callbacks_new(&cbs) == 0 && nghttp2_option_new(&opt) == 0) {
        nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, on_begin_headers);
        nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, on_data_chunk);
        nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, on_frame_recv);
        nghttp2_session_callbacks_set_on_frame_send_callback(cbs, on_frame_send);
        nghttp2_session_callbacks_set_on_stream_close_callback(cbs, on_stream_close);
        /* Closed streams are not kept for priorities, so a client cannot make us hold them. */
        nghttp2_option_set_no_closed_streams(opt, 1);
        rv = nghttp2_session_server_new2(&h->s, cbs, h, opt) == 0 ? 0 : LC_ENOMEM;
    }
    nghttp2_option_del(opt); /* both take NULL */
    nghttp2_session_callbacks_del(cbs);
    return rv;
}

int h2_conn_open(conn_t *c, h2_conn_t **out)
{
    h2_conn_t *h = calloc(1, sizeof *h);
    if (h == NULL)
        return LC_ENOMEM;
    h->c = c;
    h->e = conn_engine(c);
    if (new_session(h) != 0) {
        free(h);
        return LC_ENOMEM;
    }
    const nghttp2_settings_entry settings[] = {
        {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, (uint32_t)h->e->t->cfg.h2_max_streams},
        {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, HEADER_BYTES_MAX + HEADERS_MAX * 32},
    };
    if (nghttp2_submit_settings(h->s, NGHTTP2_FLAG_NONE, settings,
                                sizeof settings / sizeof settings[0]) != 0) {
        nghttp2_session_del(h->s);
        free(h);
        return LC_ENOMEM;
    }
    BUMP(h, h2_conns);
    *out = h;
    return 0;
}

void h2_conn_feed(h2_conn_t *h, const char *data, size_t len)
{
    if (conn_closing(h->c))
        return;
    ssize_t n = nghttp2_session_mem_recv(h->s, (const uint8_t *)data, len);
    if (n < 0) {
        /* A bad preface, a flood, a header block past H2_HEADER_BYTES_KILL, no memory: say
         * so in a GOAWAY if the session still can, then end. */
        (void)nghttp2_session_terminate_session(h->s, NGHTTP2_PROTOCOL_ERROR);
        h->fatal = true;
    }
    flush(h);
}

void h2_conn_on_timer(h2_conn_t *h)
{
    uint64_t now = uv_hrtime(), next = 0;
    h->timer_due = 0;
    for (h2_stream_t *st = h->streams; st != NULL; st = st->next) {
        if (st->state != ST_WAIT)
            continue;
        if (st->due_ns <= now)
            answer(h, st); /* frees nothing: streams close in flush's mem_send */
        else if (next == 0 || st->due_ns < next)
            next = st->due_ns;
    }
    if (next != 0)
        arm_timer(h, next, now);
    flush(h);
}

void h2_conn_drained(h2_conn_t *h)
{
    if (!conn_closing(h->c))
        flush(h);
}

void h2_conn_free(h2_conn_t *h)
{
    if (h == NULL)
        return;
    /* nghttp2_session_del calls no stream-close callback: free ours here. */
    while (h->streams != NULL) {
        h2_stream_t *st = h->streams;
        h->streams = st->next;
        h2_stream_free(st);
    }
    nghttp2_session_del(h->s);
    free(h);
}
