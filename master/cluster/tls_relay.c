/* tls_relay.c — a socket pair between raft and a TLS channel, with
 * backpressure both ways. */
#include "tls_relay.h"

#include <assert.h>
#include <raft.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lc_err.h"
#include "lc_log.h"

#define RELAY_READ_CHUNK (64u * 1024u)

struct tls_relay_s {
    tls_relays_t *set;
    uv_tcp_t *tcp;          /* ciphertext to and from the peer */
    uv_pipe_t pipe;         /* our end of the socket pair; raft holds the other */
    lc_tls_channel_t *tls;
    size_t to_tcp, to_pipe; /* bytes written and not yet called back */
    bool tcp_paused, pipe_paused; /* reading stopped for backpressure */
    bool closing;
    unsigned closes;        /* handles still closing */
    unsigned writes;        /* write requests in flight */
    char peer[64];
    uint8_t chunk[RELAY_READ_CHUNK]; /* the read in progress (one at a time) */
    tls_relay_t *next, **link;
};

typedef struct relay_write_s {
    uv_write_t req;
    tls_relay_t *r;
    bool to_tcp;
    size_t len;
    uint8_t *data; /* owned */
} relay_write_t;

static void tcp_read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);
static void pipe_read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);

static void maybe_free(tls_relay_t *r)
{
    if (!r->closing || r->closes > 0 || r->writes > 0)
        return;
    tls_relays_t *set = r->set;
    *r->link = r->next;
    if (r->next != NULL)
        r->next->link = r->link;
    set->count--;
    lc_tls_channel_free(r->tls);
    raft_free(r->tcp);
    free(r);
    if (set->head == NULL && set->on_empty != NULL)
        set->on_empty(set->arg);
}

static void closed_cb(uv_handle_t *h)
{
    tls_relay_t *r = h->data;
    assert(r->closes > 0);
    r->closes--;
    maybe_free(r);
}

/* Ends the relay: raft reads EOF on its end and drops the connection. why
 * NULL: an orderly end not worth a line. */
static void relay_close(tls_relay_t *r, const char *why)
{
    if (r->closing)
        return;
    r->closing = true;
    if (why != NULL)
        lc_info("transport", "msg=\"raft TLS connection closed\" peer=%s reason=\"%s\"", r->peer,
                why);
    r->closes = 2;
    uv_close((uv_handle_t *)r->tcp, closed_cb);
    uv_close((uv_handle_t *)&r->pipe, closed_cb);
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    tls_relay_t *r = h->data;
    (void)suggested;
    *buf = uv_buf_init((char *)r->chunk, sizeof r->chunk);
}

/* Reads the side opposite to the queue that just drained below low water. */
static void resume(tls_relay_t *r, bool tcp_side)
{
    bool *paused = tcp_side ? &r->tcp_paused : &r->pipe_paused;
    if (!*paused || r->closing)
        return;
    *paused = false;
    int rv = tcp_side ? uv_read_start((uv_stream_t *)r->tcp, alloc_cb, tcp_read_cb)
                      : uv_read_start((uv_stream_t *)&r->pipe, alloc_cb, pipe_read_cb);
    if (rv != 0)
        relay_close(r, uv_strerror(rv));
}

static void write_cb(uv_write_t *req, int status)
{
    relay_write_t *w = (relay_write_t *)req;
    tls_relay_t *r = w->r;
    size_t *queued = w->to_tcp ? &r->to_tcp : &r->to_pipe;
    assert(*queued >= w->len && r->writes > 0);
    *queued -= w->len;
    r->writes--;
    bool to_tcp = w->to_tcp;
    free(w->data);
    free(w);
    if (status != 0)
        relay_close(r, status == UV_ECANCELED ? NULL : uv_strerror(status));
    else if (*queued < TLS_RELAY_LOW_WATER)
        resume(r, !to_tcp); /* the pipe's queue drained: read the TCP side again, and so on */
    maybe_free(r);
}

/* Writes data (owned, freed in every case) to one side; stops reading the
 * other side while this one's queue is over high water. */
static int relay_write(tls_relay_t *r, bool to_tcp, uint8_t *data, size_t len)
{
    relay_write_t *w = malloc(sizeof *w);
    if (w == NULL || r->closing) {
        free(w);
        free(data);
        return r->closing ? LC_ECLOSED : LC_ENOMEM;
    }
    *w = (relay_write_t){.r = r, .to_tcp = to_tcp, .len = len, .data = data};
    uv_buf_t buf = uv_buf_init((char *)data, (unsigned)len);
    uv_stream_t *dst = to_tcp ? (uv_stream_t *)r->tcp : (uv_stream_t *)&r->pipe;
    int rv = uv_write(&w->req, dst, &buf, 1, write_cb);
    if (rv != 0) {
        free(data);
        free(w);
        return LC_EIO;
    }
    r->writes++;
    size_t *queued = to_tcp ? &r->to_tcp : &r->to_pipe;
    *queued += len;
    bool *paused = to_tcp ? &r->pipe_paused : &r->tcp_paused;
    if (*queued > TLS_RELAY_HIGH_WATER && !*paused) {
        *paused = true;
        uv_read_stop(to_tcp ? (uv_stream_t *)&r->pipe : (uv_stream_t *)r->tcp);
    }
    return 0;
}

/* The channel's ciphertext goes to the peer. */
static int tls_send(void *arg, uint8_t *buf, size_t len)
{
    return relay_write(arg, true, buf, len);
}

/* The peer's plaintext goes to raft. */
static int tls_receive(void *arg, const uint8_t *data, size_t len)
{
    uint8_t *copy = malloc(len);
    if (copy == NULL)
        return LC_ENOMEM;
    memcpy(copy, data, len);
    return relay_write(arg, false, copy, len);
}

static void tcp_read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    tls_relay_t *r = s->data;
    (void)buf;
    if (nread == 0 || r->closing)
        return;
    if (nread < 0) {
        relay_close(r, nread == UV_EOF ? "peer closed the connection" : uv_strerror((int)nread));
        return;
    }
    int rv = lc_tls_channel_feed(r->tls, r->chunk, (size_t)nread);
    if (rv != 0)
        relay_close(r, lc_tls_channel_error(r->tls)[0] != '\0' ? lc_tls_channel_error(r->tls)
                                                                : lc_strerror(rv));
}

static void pipe_read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    tls_relay_t *r = s->data;
    (void)buf;
    if (nread == 0 || r->closing)
        return;
    if (nread < 0) {
        relay_close(r, NULL); /* raft dropped the connection */
        return;
    }
    int rv = lc_tls_channel_write(r->tls, r->chunk, (size_t)nread);
    if (rv != 0)
        relay_close(r, lc_tls_channel_error(r->tls)[0] != '\0' ? lc_tls_channel_error(r->tls)
                                                                : lc_strerror(rv));
}

static void free_relay_cb(uv_handle_t *h)
{
    free(h->data);
}

/* raft's end of a new socket pair, and ours opened in r->pipe. On failure
 * r is freed once its pipe handle closed (when it was opened at all). */
static int open_pair(tls_relay_t *r, uv_loop_t *loop, uv_stream_t **raft_stream)
{
    uv_os_sock_t fds[2];
    int rv = uv_socketpair(SOCK_STREAM, 0, fds, UV_NONBLOCK_PIPE, UV_NONBLOCK_PIPE);
    if (rv != 0) {
        free(r);
        return rv;
    }
    uv_pipe_t *theirs = raft_malloc(sizeof *theirs);
    if (theirs != NULL)
        uv_pipe_init(loop, theirs, 0);
    if (theirs == NULL || (rv = uv_pipe_open(theirs, fds[0])) != 0) {
        if (theirs != NULL)
            uv_close((uv_handle_t *)theirs, (uv_close_cb)raft_free);
        close(fds[0]);
        close(fds[1]);
        free(r);
        return theirs == NULL ? UV_ENOMEM : rv;
    }
    /* theirs owns fds[0] now. */
    uv_pipe_init(loop, &r->pipe, 0);
    r->pipe.data = r;
    if ((rv = uv_pipe_open(&r->pipe, fds[1])) != 0) {
        close(fds[1]);
        uv_close((uv_handle_t *)theirs, (uv_close_cb)raft_free);
        uv_close((uv_handle_t *)&r->pipe, free_relay_cb);
        return rv;
    }
    *raft_stream = (uv_stream_t *)theirs;
    return 0;
}

int tls_relay_start(tls_relays_t *set, uv_loop_t *loop, uv_tcp_t *tcp, lc_tls_channel_t *tls,
                    const uint8_t *early, size_t len, const char *peer,
                    uv_stream_t **raft_stream)
{
    assert(lc_tls_channel_established(tls));
    tls_relay_t *r = calloc(1, sizeof *r);
    if (r == NULL)
        return UV_ENOMEM;
    int rv = open_pair(r, loop, raft_stream);
    if (rv != 0)
        return rv; /* r is freed */
    r->set = set;
    r->tcp = tcp;
    r->tls = tls;
    tcp->data = r;
    snprintf(r->peer, sizeof r->peer, "%s", peer);
    r->next = set->head;
    if (r->next != NULL)
        r->next->link = &r->next;
    r->link = &set->head;
    set->head = r;
    set->count++;
    lc_tls_channel_set_io(tls, &(lc_tls_io_t){.arg = r, .send = tls_send, .receive = tls_receive});
    uint8_t *copy = len > 0 ? malloc(len) : NULL;
    if (len > 0 && copy != NULL)
        memcpy(copy, early, len);
    if ((len > 0 && (copy == NULL || relay_write(r, false, copy, len) != 0)) ||
        uv_read_start((uv_stream_t *)tcp, alloc_cb, tcp_read_cb) != 0 ||
        uv_read_start((uv_stream_t *)&r->pipe, alloc_cb, pipe_read_cb) != 0)
        relay_close(r, "cannot start relaying"); /* raft sees EOF on its new stream */
    return 0;
}

void tls_relays_close_all(tls_relays_t *set)
{
    for (tls_relay_t *r = set->head; r != NULL; r = r->next)
        relay_close(r, NULL);
}
