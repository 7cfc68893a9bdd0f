/* fleet_net.c — the worker port :5557: the TCP listener, one framed protobuf
 * connection per worker (over TLS when configured), and the liveness timer.
 * It hands every decoded frame to fleet.c and knows nothing of messages. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet_internal.h"
#include "lc_clock.h"
#include "lc_err.h"
#include "lc_frame.h"
#include "lc_log.h"
#include "lc_protocol.h"

#define READ_BUF_SIZE (64u << 10)
#define MAX_WRITE_QUEUE (64u << 20) /* a worker this far behind is closed */

typedef struct fleet_net_s fleet_net_t;

/* One accepted socket; conn is fleet.c's side of it. */
typedef struct net_conn_s {
    uv_tcp_t tcp;
    fleet_net_t *net;
    fleet_conn_t *conn;      /* NULL if fleet_conn_open failed */
    lc_frame_reader_t reader;
    lc_tls_channel_t *tls;   /* NULL on a plaintext port */
    bool closing;
    char peer[64];
} net_conn_t;

struct fleet_net_s {
    uv_loop_t *loop;
    fleet_t *fleet;
    uv_tcp_t listener;
    uv_timer_t liveness;
    SSL_CTX *tls_ctx;
    uv_tcp_t spare;          /* accepts a connection only to close it */
    bool spare_busy;
    uint64_t refused_at_accept, refusal_logged_ms;
    size_t n_sockets;        /* accepted and not closed yet */
    bool closing;
    int pending_closes;      /* listener and timer */
    void (*on_closed)(void *arg);
    void *closed_arg;
    char read_buf[READ_BUF_SIZE];
};

static fleet_net_t *net_of(fleet_t *f)
{
    return fleet_transport(f)->arg;
}

static void maybe_finish_close(fleet_net_t *n)
{
    if (!n->closing || n->pending_closes > 0 || n->n_sockets > 0)
        return;
    fleet_free(n->fleet);
    void (*cb)(void *) = n->on_closed;
    void *arg = n->closed_arg;
    free(n);
    if (cb != NULL)
        cb(arg);
}

static void socket_closed_cb(uv_handle_t *h)
{
    net_conn_t *nc = h->data;
    fleet_net_t *n = nc->net;
    if (nc->conn != NULL)
        fleet_conn_gone(nc->conn);
    lc_frame_reader_close(&nc->reader);
    lc_tls_channel_free(nc->tls);
    free(nc);
    n->n_sockets--;
    maybe_finish_close(n);
}

/* fleet_transport_t.close */
static void transport_close(void *arg, void *conn_data)
{
    net_conn_t *nc = conn_data;
    if (nc->closing)
        return;
    nc->closing = true;
    uv_close((uv_handle_t *)&nc->tcp, socket_closed_cb);
}

/* Closes through fleet.c (which logs and lets the worker go) when it knows
 * the connection, directly otherwise. */
static void close_conn(net_conn_t *nc, const char *reason)
{
    if (nc->conn != NULL)
        fleet_conn_close(nc->conn, reason);
    else
        transport_close(nc->net, nc);
}

typedef struct write_req_s {
    uv_write_t req;
    uint8_t *frame;
} write_req_t;

static void write_cb(uv_write_t *req, int status)
{
    write_req_t *w = (write_req_t *)req;
    free(w->frame);
    free(w);
    (void)status; /* a failed write shows up as a read error and closes the connection */
}

/* Writes bytes for the socket (a frame, or TLS records); takes data. */
static int socket_write(net_conn_t *nc, uint8_t *data, size_t len)
{
    write_req_t *w = calloc(1, sizeof *w);
    if (w == NULL) {
        free(data);
        return LC_ENOMEM;
    }
    w->frame = data;
    uv_buf_t buf = uv_buf_init((char *)data, (unsigned)len);
    if (uv_write(&w->req, (uv_stream_t *)&nc->tcp, &buf, 1, write_cb) != 0) {
        free(data);
        free(w);
        close_conn(nc, "write failed");
        return LC_ECLOSED;
    }
    return 0;
}

static int tls_send(void *arg, uint8_t *buf, size_t len)
{
    net_conn_t *nc = arg;
    if (nc->closing) {
        free(buf);
        return LC_ECLOSED;
    }
    return socket_write(nc, buf, len);
}

/* fleet_transport_t.send */
static int transport_send(void *arg, void *conn_data, const Lc__Envelope *env)
{
    net_conn_t *nc = conn_data;
    if (nc->closing)
        return LC_ECLOSED;
    if (nc->tcp.write_queue_size > MAX_WRITE_QUEUE) {
        close_conn(nc, "write queue over 64 MiB: worker not reading");
        return LC_ECLOSED;
    }
    uint8_t *frame;
    size_t len;
    if (lc_frame_encode(env, &frame, &len) != 0)
        return LC_ENOMEM;
    if (nc->tls == NULL)
        return socket_write(nc, frame, len);
    int rv = lc_tls_channel_write(nc->tls, frame, len);
    free(frame);
    if (rv == LC_EPROTO)
        close_conn(nc, lc_tls_channel_error(nc->tls));
    return rv;
}

/* fleet_transport_t.joined: a joined worker's frames may be full size. */
static void transport_joined(void *arg, void *conn_data)
{
    net_conn_t *nc = conn_data;
    nc->reader.max = LC_FRAME_MAX;
}

/* fleet_transport_t.peer_is */
static bool transport_peer_is(void *arg, void *conn_data, const char *id)
{
    net_conn_t *nc = conn_data;
    return nc->tls != NULL && lc_tls_channel_peer_is(nc->tls, id);
}

/* fleet_transport_t.secured */
static bool transport_secured(void *arg, void *conn_data)
{
    net_conn_t *nc = conn_data;
    return nc->tls == NULL || lc_tls_channel_established(nc->tls);
}

static int on_frame(void *arg, const uint8_t *body, size_t len)
{
    net_conn_t *nc = arg;
    Lc__Envelope *env;
    char why[160];
    if (lc_frame_decode(body, len, &env, why, sizeof why) != 0) {
        close_conn(nc, why);
        return LC_EPROTO;
    }
    /* Non-zero stops the reader: the connection is closing. */
    return fleet_conn_receive(nc->conn, env, lc_mono_ms()) ? LC_ECLOSED : 0;
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    net_conn_t *nc = h->data;
    buf->base = nc->net->read_buf;
    buf->len = READ_BUF_SIZE;
    (void)suggested;
}

/* Plaintext bytes of the connection, TLS or not, to the frame reader. */
static int feed_frames(void *arg, const uint8_t *data, size_t len)
{
    net_conn_t *nc = arg;
    int rv = lc_frame_reader_feed(&nc->reader, data, len, on_frame, nc);
    if (rv == LC_EPROTO && !nc->closing)
        close_conn(nc, nc->reader.errmsg);
    else if (rv != 0 && !nc->closing)
        close_conn(nc, lc_strerror(rv));
    return nc->closing ? LC_ECLOSED : 0;
}

static void read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    net_conn_t *nc = s->data;
    if (nread == 0 || nc->closing)
        return;
    if (nread < 0) {
        char why[128];
        if (nread == UV_EOF && lc_frame_reader_pending(&nc->reader) > 0)
            snprintf(why, sizeof why, "connection closed inside a frame (%zu bytes pending)",
                     lc_frame_reader_pending(&nc->reader));
        else
            snprintf(why, sizeof why, "%s", nread == UV_EOF ? "worker closed the connection"
                                                           : uv_strerror((int)nread));
        close_conn(nc, why);
        return;
    }
    if (nc->tls == NULL) {
        feed_frames(nc, (const uint8_t *)buf->base, (size_t)nread);
        return;
    }
    bool was_established = lc_tls_channel_established(nc->tls);
    int rv = lc_tls_channel_feed(nc->tls, (const uint8_t *)buf->base, (size_t)nread);
    if (rv != 0 && !nc->closing)
        close_conn(nc, lc_tls_channel_error(nc->tls)[0] ? lc_tls_channel_error(nc->tls)
                                                         : lc_strerror(rv));
    else if (!was_established && lc_tls_channel_established(nc->tls))
        lc_debug("fleet", "msg=\"TLS established\" peer=%s subject=\"%s\"", nc->peer,
                 lc_tls_channel_peer(nc->tls));
}

static void peer_name(uv_tcp_t *tcp, char *out, size_t len)
{
    struct sockaddr_storage ss;
    int ss_len = sizeof ss;
    char host[64] = "?";
    int port = 0;
    if (uv_tcp_getpeername(tcp, (struct sockaddr *)&ss, &ss_len) == 0) {
        if (ss.ss_family == AF_INET) {
            uv_ip4_name((struct sockaddr_in *)&ss, host, sizeof host);
            port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
        } else {
            uv_ip6_name((struct sockaddr_in6 *)&ss, host, sizeof host);
            port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
        }
    }
    snprintf(out, len, "%s:%d", host, port);
}

static void on_connection(uv_stream_t *server, int status);

static void refused_closed_cb(uv_handle_t *h)
{
    fleet_net_t *n = h->data;
    n->pending_closes--;
    if (h == (uv_handle_t *)&n->spare) {
        n->spare_busy = false;
        /* A connection left queued while the spare was busy: libuv stops
         * reading the listener until it is taken. */
        if (!n->closing)
            on_connection((uv_stream_t *)&n->listener, 0);
    } else {
        free(h);
    }
    maybe_finish_close(n);
}

/* Takes the pending connection off the listen queue and closes it. Without
 * memory even for that, the spare handle does it: a connection left queued
 * would stop libuv from accepting any other. */
static void refuse_pending(fleet_net_t *n, uv_stream_t *server, const char *why)
{
    uv_tcp_t *h = malloc(sizeof *h);
    if (h == NULL) {
        if (n->spare_busy)
            return; /* taken when the spare is closed */
        h = &n->spare;
        n->spare_busy = true;
    }
    uv_tcp_init(n->loop, h);
    h->data = n;
    n->pending_closes++;
    uint64_t now = lc_mono_ms();
    n->refused_at_accept++;
    if (uv_accept(server, (uv_stream_t *)h) == 0 && now - n->refusal_logged_ms >= 10000) {
        n->refusal_logged_ms = now; /* a flood must not flood the log */
        lc_warn("fleet", "msg=\"worker connections refused at accept\" reason=\"%s\" total=%llu",
                why, (unsigned long long)n->refused_at_accept);
    }
    uv_close((uv_handle_t *)h, refused_closed_cb);
}

static void on_connection(uv_stream_t *server, int status)
{
    fleet_net_t *n = server->data;
    if (status != 0 || n->closing)
        return;
    if (!fleet_accepts_connection(n->fleet)) {
        refuse_pending(n, server, "too many connections without a Hello (or in all)");
        return;
    }
    net_conn_t *nc = calloc(1, sizeof *nc);
    if (nc == NULL) {
        refuse_pending(n, server, "out of memory");
        return;
    }
    nc->net = n;
    uv_tcp_init(n->loop, &nc->tcp);
    nc->tcp.data = nc;
    n->n_sockets++;
    /* Until its Hello is accepted a connection is nobody: small frames only. */
    lc_frame_reader_init(&nc->reader, LC_PROTOCOL_PREAUTH_FRAME_MAX);
    if (uv_accept(server, (uv_stream_t *)&nc->tcp) != 0) {
        lc_warn("fleet", "msg=\"accept failed\"");
        transport_close(n, nc);
        return;
    }
    uv_tcp_nodelay(&nc->tcp, 1);
    peer_name(&nc->tcp, nc->peer, sizeof nc->peer);
    if (n->tls_ctx != NULL) {
        lc_tls_io_t io = {.arg = nc, .send = tls_send, .receive = feed_frames};
        if (lc_tls_channel_new(&nc->tls, n->tls_ctx, NULL, &io) != 0) {
            lc_warn("fleet", "msg=\"out of memory for TLS\" peer=%s", nc->peer);
            transport_close(n, nc);
            return;
        }
    }
    nc->conn = fleet_conn_open(n->fleet, nc, nc->peer, lc_mono_ms());
    if (nc->conn == NULL) {
        lc_warn("fleet", "msg=\"out of memory for a worker connection\" peer=%s", nc->peer);
        transport_close(n, nc);
        return;
    }
    uv_read_start((uv_stream_t *)&nc->tcp, alloc_cb, read_cb);
}

static void liveness_cb(uv_timer_t *t)
{
    fleet_net_t *n = t->data;
    fleet_tick(n->fleet, lc_mono_ms());
}

static int listen_on(fleet_net_t *n, const fleet_config_t *cfg, char *errmsg, size_t errlen)
{
    struct sockaddr_storage addr;
    int rv = uv_ip4_addr(cfg->listen_host, cfg->listen_port, (struct sockaddr_in *)&addr);
    if (rv != 0)
        rv = uv_ip6_addr(cfg->listen_host, cfg->listen_port, (struct sockaddr_in6 *)&addr);
    if (rv == 0)
        rv = uv_tcp_bind(&n->listener, (struct sockaddr *)&addr, 0);
    if (rv == 0)
        rv = uv_listen((uv_stream_t *)&n->listener, 128, on_connection);
    if (rv != 0)
        snprintf(errmsg, errlen, "fleet: listen on %s:%u: %s", cfg->listen_host,
                 cfg->listen_port, uv_strerror(rv));
    return rv == 0 ? 0 : LC_EIO;
}

static void handle_closed_cb(uv_handle_t *h)
{
    fleet_net_t *n = h->data;
    n->pending_closes--;
    maybe_finish_close(n);
}

static void close_handles(fleet_net_t *n)
{
    n->closing = true;
    n->pending_closes += 2;
    uv_close((uv_handle_t *)&n->listener, handle_closed_cb);
    uv_close((uv_handle_t *)&n->liveness, handle_closed_cb);
}

int fleet_init(fleet_t **out, uv_loop_t *loop, const fleet_config_t *cfg,
               const fleet_events_t *events, char *errmsg, size_t errlen)
{
    fleet_net_t *n = calloc(1, sizeof *n);
    if (n == NULL)
        return LC_ENOMEM;
    n->loop = loop;
    n->tls_ctx = cfg->tls_ctx;
    fleet_transport_t t = {.arg = n,
                           .send = transport_send,
                           .close = transport_close,
                           .secured = transport_secured,
                           .peer_is = transport_peer_is,
                           .joined = transport_joined};
    if (fleet_new(&n->fleet, cfg, events, &t) != 0) {
        free(n);
        return LC_ENOMEM;
    }
    uv_tcp_init(loop, &n->listener);
    n->listener.data = n;
    uv_timer_init(loop, &n->liveness);
    n->liveness.data = n;
    if (listen_on(n, cfg, errmsg, errlen) != 0) {
        close_handles(n); /* frees n and the fleet once closed */
        return LC_EIO;
    }
    /* Checked 4 times per interval: a silent worker is lost 3 to 3.25
     * intervals after its last frame, not up to 4. */
    uint64_t check_ms = cfg->heartbeat_ms / 4 ? cfg->heartbeat_ms / 4 : 1;
    uv_timer_start(&n->liveness, liveness_cb, check_ms, check_ms);
    *out = n->fleet;
    return 0;
}

void fleet_close(fleet_t *f, void (*on_closed)(void *arg), void *arg)
{
    fleet_net_t *n = net_of(f);
    n->on_closed = on_closed;
    n->closed_arg = arg;
    fleet_close_connections(f, NULL);
    close_handles(n);
}
