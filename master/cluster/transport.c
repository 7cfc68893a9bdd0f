/* transport.c — the Raft port: listen, mutual TLS, the cluster secret's
 * challenge, then raft's handshake, and only then the stream is raft's (over
 * TLS: a socket pair to a relay); or a watch, which stays ours. Outgoing
 * connects are in transport_connect.c. */
#include "transport.h"
#include "transport_internal.h"

#include <arpa/inet.h>
#include <assert.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_addr.h"
#include "lc_buf.h"
#include "lc_err.h"
#include "lc_log.h"
#include "peer_auth.h"

#define LISTEN_BACKLOG 64
#define EARLY_MAX (1024u * 1024u) /* TLS: raft's bytes that may come with the handshake */
#define WATCHERS_MAX 16u          /* incoming watches held at once */

typedef struct conn_write_s {
    uv_write_t req;
    peer_conn_t *c;
    uint8_t data[];
} conn_write_t;

static void advance(peer_conn_t *c);
static void expect(peer_conn_t *c, phase_t phase, size_t want);
static bool conn_send(peer_conn_t *c, const uint8_t *data, size_t len);
static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
static void read_cb(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf);

/* ---- raft's handshake ------------------------------------------------ */

/* Writes raft's handshake (or a watch's, by protocol) for (id, address)
 * into out; returns its length. */
static size_t handshake_encode(uint64_t protocol, raft_id id, const char *address,
                               uint8_t out[PREAMBLE_LEN + ADDRESS_MAX])
{
    size_t padded = (strlen(address) + 1 + 7) / 8 * 8;
    assert(padded <= ADDRESS_MAX);
    transport_put_u64(out, protocol);
    transport_put_u64(out + 8, id);
    transport_put_u64(out + 16, padded);
    memset(out + PREAMBLE_LEN, 0, padded);
    memcpy(out + PREAMBLE_LEN, address, strlen(address));
    return PREAMBLE_LEN + padded;
}

/* ---- one connection ---------------------------------------------------- */

static void refusal_log(peer_conn_t *c, const char *why)
{
    cluster_transport_t *t = c->t;
    /* Per direction: a peer we keep failing to reach must not hide intruders. */
    int d = c->outgoing;
    uint64_t now = uv_now(t->loop);
    if (now < t->log_next_ms[d]) {
        t->log_suppressed[d]++;
        return;
    }
    lc_warn("transport",
            "msg=\"raft connection refused\" direction=%s peer=%s reason=\"%s\" suppressed=%u",
            d ? "outgoing" : "incoming", c->peer, why, t->log_suppressed[d]);
    t->log_next_ms[d] = now + 1000;
    t->log_suppressed[d] = 0;
}

/* Frees c once it failed or is raft's, its handles are closed and its
 * writes called back. */
static void maybe_free(peer_conn_t *c)
{
    bool over = c->failed || c->tcp == NULL;
    if (!over || c->closes > 0 || c->writes > 0)
        return;
    cluster_transport_t *t = c->t;
    for (peer_conn_t **link = &t->conns; *link != NULL; link = &(*link)->next)
        if (*link == c) {
            *link = c->next;
            break;
        }
    if (c->in_handshake)
        t->incoming--;
    if (c->watch && !c->outgoing && c->phase == PHASE_WATCHING)
        t->watchers--;
    if (c->watch && c->outgoing && c->watch_gen == t->watch_gen && !t->closing &&
        t->watch_lost != NULL)
        t->watch_lost(t->watch_arg, c->peer_id, c->phase == PHASE_WATCHING || c->refused);
    if (c->failed && c->notify)
        c->cb(c->req, NULL, t->closing ? RAFT_CANCELED : RAFT_NOCONNECTION);
    if (c->failed && c->archive_cb != NULL)
        c->archive_cb(c->archive_arg, NULL);
    raft_free(c->tcp); /* NULL once handed to raft */
    lc_tls_channel_free(c->tls);
    lc_buf_free(&c->early);
    free(c);
    transport_maybe_closed(t);
}

static void conn_closed_cb(uv_handle_t *h)
{
    peer_conn_t *c = h->data;
    assert(c->closes > 0);
    c->closes--;
    maybe_free(c);
}

/* Closes c for why (NULL: not worth a warning, as a reachability probe's
 * connect-and-close, or a peer that is down). */
void transport_conn_fail(peer_conn_t *c, const char *why)
{
    if (c->failed || c->tcp == NULL)
        return; /* closing already, or raft's */
    c->failed = true;
    if (why != NULL && !c->t->closing)
        refusal_log(c, why);
    c->closes = 2;
    uv_close((uv_handle_t *)c->tcp, conn_closed_cb);
    uv_close((uv_handle_t *)&c->deadline, conn_closed_cb);
}

static void write_cb(uv_write_t *req, int status)
{
    conn_write_t *w = (conn_write_t *)req;
    peer_conn_t *c = w->c;
    free(w);
    assert(c->writes > 0);
    c->writes--;
    if (!c->failed && status != 0)
        transport_conn_fail(c, uv_strerror(status));
    else if (!c->failed)
        advance(c);
    maybe_free(c);
}

static int conn_write(peer_conn_t *c, const uint8_t *data, size_t len)
{
    if (len == 0)
        return 0;
    conn_write_t *w = malloc(sizeof *w + len);
    if (w == NULL)
        return UV_ENOMEM;
    w->c = c;
    memcpy(w->data, data, len);
    uv_buf_t buf = uv_buf_init((char *)w->data, (unsigned)len);
    int rv = uv_write(&w->req, (uv_stream_t *)c->tcp, &buf, 1, write_cb);
    if (rv != 0) {
        free(w);
        return rv;
    }
    c->writes++;
    return 0;
}

/* Over TLS, raft gets a socket pair's end and a relay takes the connection.
 * Returns raft's stream, or NULL when c failed. */
static uv_stream_t *relay_for_raft(peer_conn_t *c)
{
    uv_stream_t *stream;
    uv_read_stop((uv_stream_t *)c->tcp); /* the relay reads from here on */
    int rv = tls_relay_start(&c->t->relays, c->t->loop, c->tcp, c->tls,
                             (const uint8_t *)c->early.data, c->early.len, c->peer, &stream);
    if (rv != 0) {
        transport_conn_fail(c, uv_strerror(rv));
        return NULL;
    }
    c->tls = NULL; /* the relay's, with the TCP handle */
    lc_buf_free(&c->early);
    return stream;
}

/* ---- the watch (transport.h) ------------------------------------------ */

static void watch_read(peer_conn_t *c)
{
    int rv = uv_read_start((uv_stream_t *)c->tcp, alloc_cb, read_cb);
    if (rv != 0 && rv != UV_EALREADY)
        transport_conn_fail(c, uv_strerror(rv));
}

/* Both sides now only wait for the other's end: no deadline, one byte of
 * room to notice a violation. */
static void watch_up(peer_conn_t *c)
{
    uv_timer_stop(&c->deadline);
    expect(c, PHASE_WATCHING, 1);
    lc_debug("transport", "msg=\"watch up\" direction=%s id=%llu peer=%s",
             c->outgoing ? "outgoing" : "incoming", (unsigned long long)c->peer_id, c->peer);
}

/* A watch's handshake is out (outgoing) or in (incoming): the acceptor answers. */
static void watch_begin(peer_conn_t *c)
{
    cluster_transport_t *t = c->t;
    if (c->early.len > 0) {
        transport_conn_fail(c, "data after a watch's handshake");
        return;
    }
    if (c->outgoing) {
        expect(c, PHASE_WATCH_ACK, WATCH_ACK_LEN);
        watch_read(c);
        return;
    }
    if (t->watchers >= WATCHERS_MAX) {
        transport_conn_fail(c, "too many watch connections");
        return;
    }
    t->watchers++;
    c->in_handshake = false;
    t->incoming--;
    watch_up(c);
    uint8_t ack[WATCH_ACK_LEN];
    transport_put_u64(ack, WATCH_PROTOCOL);
    if (conn_send(c, ack, sizeof ack))
        watch_read(c);
}

static void watch_acked(peer_conn_t *c)
{
    if (transport_get_u64(c->in) != WATCH_PROTOCOL) {
        transport_conn_fail(c, "malformed answer to a watch");
        return;
    }
    watch_up(c);
}

/* Hands c's stream to raft once the last of our writes is out. */
static void advance(peer_conn_t *c)
{
    if (c->failed || c->phase != PHASE_READY || c->writes > 0)
        return;
    cluster_transport_t *t = c->t;
    uv_stream_t *stream;
    if (c->watch) {
        watch_begin(c);
        return;
    }
    if (c->archive && !c->outgoing && t->archive_serve == NULL) {
        transport_conn_fail(c, "archive streams are not served here");
        return;
    }
    if (c->tls != NULL) {
        if ((stream = relay_for_raft(c)) == NULL)
            return;
    } else {
        stream = (uv_stream_t *)c->tcp;
        stream->data = NULL;
    }
    c->tcp = NULL;
    uv_timer_stop(&c->deadline);
    c->closes = 1;
    uv_close((uv_handle_t *)&c->deadline, conn_closed_cb);
    if (c->archive) {
        cluster_transport_stream_cb cb = c->archive_cb;
        c->archive_cb = NULL; /* called here, not again when c is freed */
        if (c->outgoing)
            cb(c->archive_arg, stream);
        else
            t->archive_serve(t->archive_serve_arg, c->peer_id, stream);
    } else if (c->outgoing) {
        c->cb(c->req, stream, 0);
    } else {
        lc_debug("transport", "msg=\"raft peer connected\" id=%llu peer=%s",
                 (unsigned long long)c->peer_id, c->peer);
        t->accept_cb(&t->outer, c->peer_id, (const char *)c->in, stream);
    }
}

static void deadline_cb(uv_timer_t *timer)
{
    peer_conn_t *c = timer->data;
    transport_conn_fail(c, c->phase == PHASE_TLS    ? "timeout during the TLS handshake"
                 : c->phase == PHASE_AUTH ? "timeout during authentication"
                 : c->phase == PHASE_WATCH_ACK ? "timeout waiting for the watch's answer"
                                          : "timeout during raft's handshake");
}

static void expect(peer_conn_t *c, phase_t phase, size_t want)
{
    c->phase = phase;
    c->have = 0;
    c->want = want;
}

/* Sends bytes of the session (the challenge, raft's handshake): through
 * the TLS channel when there is one. Returns false when c failed. */
static bool conn_send(peer_conn_t *c, const uint8_t *data, size_t len)
{
    int rv = c->tls != NULL ? lc_tls_channel_write(c->tls, data, len) : conn_write(c, data, len);
    if (rv != 0 && !c->failed)
        transport_conn_fail(c, c->tls != NULL ? lc_tls_channel_error(c->tls) : uv_strerror(rv));
    return rv == 0;
}

/* Writes raft's handshake: the outgoing side is then done. */
static void send_handshake(peer_conn_t *c)
{
    uint8_t hs[PREAMBLE_LEN + ADDRESS_MAX];
    uint64_t protocol = c->watch ? WATCH_PROTOCOL : c->archive ? ARCHIVE_PROTOCOL
                                                               : HANDSHAKE_PROTOCOL;
    size_t len = handshake_encode(protocol, c->t->id, c->t->address, hs);
    c->phase = PHASE_READY;
    conn_send(c, hs, len);
}

static void auth_step(peer_conn_t *c, size_t n)
{
    uint8_t out[PEER_AUTH_MSG_MAX];
    size_t out_len = 0;
    peer_auth_verdict_t v = peer_auth_feed(&c->auth, c->in, n, out, &out_len);
    if (v == PEER_AUTH_FAIL) {
        transport_conn_fail(c, c->auth.why);
        return;
    }
    if (out_len > 0 && !conn_send(c, out, out_len))
        return;
    if (v == PEER_AUTH_AGAIN) {
        expect(c, PHASE_AUTH, peer_auth_want(&c->auth));
    } else if (c->outgoing) {
        uv_read_stop((uv_stream_t *)c->tcp);
        send_handshake(c);
    } else {
        expect(c, PHASE_PREAMBLE, PREAMBLE_LEN);
    }
}

static void preamble_step(peer_conn_t *c)
{
    uint64_t protocol = transport_get_u64(c->in), id = transport_get_u64(c->in + 8), len = transport_get_u64(c->in + 16);
    if ((protocol != HANDSHAKE_PROTOCOL && protocol != WATCH_PROTOCOL &&
         protocol != ARCHIVE_PROTOCOL) || id == 0 || len == 0 || len > ADDRESS_MAX) {
        transport_conn_fail(c, "malformed raft handshake");
        return;
    }
    c->peer_id = id;
    c->watch = protocol == WATCH_PROTOCOL;
    c->archive = protocol == ARCHIVE_PROTOCOL;
    expect(c, PHASE_ADDRESS, (size_t)len);
}

/* Over TLS: the peer's certificate must name the host of the raft address
 * it claims, and that id at that address must be a member. */
static bool may_claim(peer_conn_t *c, const char *address)
{
    cluster_transport_t *t = c->t;
    lc_hostport_t hp;
    char why[320];
    if (lc_hostport_parse(address, 0, &hp, why, sizeof why) != 0) {
        transport_conn_fail(c, "the raft address in its handshake is not host:port");
        return false;
    }
    if (!lc_tls_channel_peer_is(c->tls, hp.host)) {
        snprintf(why, sizeof why, "its certificate (%.60s) does not name %.60s, the host it claims",
                 lc_tls_channel_peer(c->tls), hp.host);
        transport_conn_fail(c, why);
        return false;
    }
    if (t->admit != NULL && !t->admit(t->admit_arg, c->peer_id, address)) {
        snprintf(why, sizeof why, "server %llu at %.80s is not in the Raft configuration",
                 (unsigned long long)c->peer_id, address);
        transport_conn_fail(c, why);
        return false;
    }
    return true;
}

static void address_step(peer_conn_t *c)
{
    if (memchr(c->in, '\0', c->have) == NULL) {
        transport_conn_fail(c, "malformed raft handshake");
        return;
    }
    if (c->tls != NULL && !may_claim(c, (const char *)c->in))
        return;
    /* Not one byte more: what follows is raft's (over TLS, kept in early). */
    uv_read_stop((uv_stream_t *)c->tcp);
    c->phase = PHASE_READY;
    advance(c);
}

/* c->in holds c->have bytes of the current message: act on it. */
static void session_step(peer_conn_t *c)
{
    assert(c->have <= c->want);
    if (c->phase == PHASE_AUTH) {
        /* peer_auth keeps partial messages itself. */
        size_t n = c->have;
        c->have = 0;
        auth_step(c, n);
        return;
    }
    if (c->phase == PHASE_WATCHING) {
        transport_conn_fail(c, "data on a watch connection");
        return;
    }
    if (c->have < c->want)
        return;
    if (c->phase == PHASE_WATCH_ACK) {
        watch_acked(c);
        return;
    }
    if (c->phase == PHASE_PREAMBLE)
        preamble_step(c);
    else
        address_step(c);
}

/* The session proper, once TCP (and TLS) is up: the challenge, or with no
 * secret raft's handshake. */
static void session_start(peer_conn_t *c)
{
    cluster_transport_t *t = c->t;
    if (t->secret == NULL) {
        if (c->outgoing)
            send_handshake(c);
        else
            expect(c, PHASE_PREAMBLE, PREAMBLE_LEN);
        return;
    }
    uint8_t nonce[PEER_AUTH_NONCE_LEN], out[PEER_AUTH_MSG_MAX];
    size_t out_len;
    if (lc_join_nonce(nonce) != 0) {
        transport_conn_fail(c, "no random nonce");
        return;
    }
    peer_auth_start(&c->auth, c->outgoing ? PEER_AUTH_CONNECTOR : PEER_AUTH_ACCEPTOR, t->secret,
                    nonce, out, &out_len);
    expect(c, PHASE_AUTH, peer_auth_want(&c->auth));
    if (out_len > 0)
        conn_send(c, out, out_len);
}

/* ---- TLS before raft's -------------------------------------------------- */

static int tls_send_cb(void *arg, uint8_t *buf, size_t len)
{
    int rv = conn_write(arg, buf, len);
    free(buf);
    return rv != 0 ? LC_EIO : 0;
}

/* Plaintext from the peer: the session's messages, exactly, and raft's
 * bytes after them kept for raft. */
static int tls_receive_cb(void *arg, const uint8_t *data, size_t len)
{
    peer_conn_t *c = arg;
    if (c->phase == PHASE_TLS)
        session_start(c); /* the handshake ended with this very feed */
    while (len > 0 && !c->failed) {
        if (c->phase == PHASE_READY) {
            if (c->early.len + len > EARLY_MAX || lc_buf_append(&c->early, data, len) != 0)
                transport_conn_fail(c, "too much data before raft took the connection");
            break;
        }
        size_t n = len < c->want - c->have ? len : c->want - c->have;
        memcpy(c->in + c->have, data, n);
        c->have += n;
        data += n;
        len -= n;
        session_step(c);
    }
    return c->failed ? LC_ECLOSED : 0;
}

static void tls_feed(peer_conn_t *c, size_t n)
{
    int rv = lc_tls_channel_feed(c->tls, c->cipher, n);
    if (c->failed)
        return;
    if (rv != 0) {
        const char *why = lc_tls_channel_error(c->tls);
        transport_conn_fail(c, why[0] != '\0' ? why : lc_strerror(rv));
        return;
    }
    if (c->phase == PHASE_TLS && lc_tls_channel_established(c->tls))
        session_start(c);
}

/* ---- reading ------------------------------------------------------------ */

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    peer_conn_t *c = h->data;
    (void)suggested;
    if (c->tls != NULL) {
        *buf = uv_buf_init((char *)c->cipher, sizeof c->cipher);
        return;
    }
    /* Plain: exactly what the current message lacks, never raft's bytes. */
    assert(c->want > c->have && c->want <= sizeof c->in);
    *buf = uv_buf_init((char *)c->in + c->have, (unsigned)(c->want - c->have));
}

static void read_cb(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    peer_conn_t *c = stream->data;
    (void)buf;
    if (nread == 0 || c->failed)
        return;
    if (nread < 0) {
        /* A probe connects and closes without a word: no warning for that. */
        transport_conn_fail(c, c->watch || (c->received == 0 && !c->outgoing) ? NULL
                     : nread == UV_EOF                ? "peer closed the connection"
                                                      : uv_strerror((int)nread));
        return;
    }
    c->received += (size_t)nread;
    if (c->tls != NULL) {
        tls_feed(c, (size_t)nread);
        return;
    }
    c->have += (size_t)nread;
    session_step(c);
}

/* Allocates a connection with its TCP handle and deadline timer initialized. */
peer_conn_t *transport_conn_new(cluster_transport_t *t, bool outgoing)
{
    peer_conn_t *c = calloc(1, sizeof *c);
    uv_tcp_t *tcp = raft_malloc(sizeof *tcp);
    if (c == NULL || tcp == NULL) {
        free(c);
        raft_free(tcp);
        return NULL;
    }
    c->t = t;
    c->tcp = tcp;
    c->outgoing = outgoing;
    c->in_handshake = !outgoing;
    uv_tcp_init(t->loop, c->tcp);
    uv_timer_init(t->loop, &c->deadline);
    c->tcp->data = c;
    c->deadline.data = c;
    c->next = t->conns;
    t->conns = c;
    if (!outgoing)
        t->incoming++;
    return c;
}

/* Starts TLS on c (the session follows once it is up). */
static void tls_start(peer_conn_t *c)
{
    cluster_transport_t *t = c->t;
    lc_tls_io_t io = {.arg = c, .send = tls_send_cb, .receive = tls_receive_cb};
    c->phase = PHASE_TLS;
    int rv = lc_tls_channel_new(&c->tls, c->outgoing ? t->tls_client : t->tls_server,
                                c->outgoing ? c->host : NULL, &io);
    if (rv != 0 && !c->failed)
        transport_conn_fail(c, c->tls != NULL ? lc_tls_channel_error(c->tls) : lc_strerror(rv));
}

/* The TCP connection is up (either direction): TLS first when configured,
 * then the session. */
void transport_conn_start(peer_conn_t *c)
{
    cluster_transport_t *t = c->t;
    uv_timer_start(&c->deadline, deadline_cb, t->deadline_ms, 0);
    if (t->tls_server != NULL)
        tls_start(c);
    else
        session_start(c);
    if (!c->failed && c->phase != PHASE_READY) {
        int rv = uv_read_start((uv_stream_t *)c->tcp, alloc_cb, read_cb);
        if (rv != 0)
            transport_conn_fail(c, uv_strerror(rv));
    }
}

/* ---- listening --------------------------------------------------------- */

static void name_peer(peer_conn_t *c)
{
    struct sockaddr_storage ss;
    int len = sizeof ss;
    char ip[INET6_ADDRSTRLEN] = "?";
    uint16_t port = 0;
    if (uv_tcp_getpeername(c->tcp, (struct sockaddr *)&ss, &len) == 0 && ss.ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;
        uv_ip4_name(in, ip, sizeof ip);
        port = ntohs(in->sin_port);
    }
    snprintf(c->peer, sizeof c->peer, "%s:%u", ip, port);
}

static void listen_cb(uv_stream_t *server, int status)
{
    cluster_transport_t *t = server->data;
    if (status != 0 || t->closing)
        return;
    peer_conn_t *c = transport_conn_new(t, false);
    if (c == NULL) {
        /* Accept and drop it, so the backlog does not keep waking us. */
        uv_tcp_t *drop = malloc(sizeof *drop);
        if (drop != NULL) {
            uv_tcp_init(t->loop, drop);
            uv_accept(server, (uv_stream_t *)drop);
            uv_close((uv_handle_t *)drop, (uv_close_cb)free);
        }
        return;
    }
    if (uv_accept(server, (uv_stream_t *)c->tcp) != 0) {
        transport_conn_fail(c, NULL);
        return;
    }
    name_peer(c);
    if (t->incoming > CLUSTER_TRANSPORT_INCOMING_MAX) {
        transport_conn_fail(c, "too many connections in handshake");
        return;
    }
    transport_conn_start(c);
}

static int outer_init(struct raft_uv_transport *outer, raft_id id, const char *address)
{
    cluster_transport_t *t = transport_of_outer(outer);
    if (strlen(address) + 1 > ADDRESS_MAX || strlen(address) >= sizeof t->address) {
        snprintf(outer->errmsg, sizeof outer->errmsg, "raft address too long: %.200s", address);
        return RAFT_INVALID;
    }
    t->id = id;
    snprintf(t->address, sizeof t->address, "%s", address);
    return 0;
}

static int outer_listen(struct raft_uv_transport *outer, raft_uv_accept_cb cb)
{
    cluster_transport_t *t = transport_of_outer(outer);
    const char *bind = t->bind_address[0] != '\0' ? t->bind_address : t->address;
    lc_hostport_t hp;
    char why[128];
    struct sockaddr_in addr;
    if (lc_hostport_parse(bind, 0, &hp, why, sizeof why) != 0 ||
        uv_ip4_addr(hp.host, hp.port, &addr) != 0) {
        snprintf(outer->errmsg, sizeof outer->errmsg, "listen on %.200s: not an IPv4 ip:port", bind);
        return RAFT_INVALID;
    }
    t->accept_cb = cb;
    uv_tcp_init(t->loop, &t->listener);
    t->listener.data = t;
    t->listener_state = 1;
    int rv = uv_tcp_bind(&t->listener, (const struct sockaddr *)&addr, 0);
    if (rv == 0)
        rv = uv_listen((uv_stream_t *)&t->listener, LISTEN_BACKLOG, listen_cb);
    if (rv != 0) {
        snprintf(outer->errmsg, sizeof outer->errmsg, "listen on %.200s: %s", bind, uv_strerror(rv));
        return RAFT_IOERR; /* the listener is closed with the transport */
    }
    return 0;
}

/* ---- closing ----------------------------------------------------------- */

/* The close callback fires once the listener is closed, no lookup is pending
 * and no connection is in handshake (their connect callbacks ran first). */
void transport_maybe_closed(cluster_transport_t *t)
{
    if (!t->closing || t->pending != NULL || t->conns != NULL || t->relays.head != NULL ||
        t->listener_state == 2 || t->close_cb == NULL)
        return;
    raft_uv_transport_close_cb cb = t->close_cb;
    t->close_cb = NULL;
    cb(&t->outer);
}

static void listener_closed_cb(uv_handle_t *h)
{
    cluster_transport_t *t = h->data;
    t->listener_state = 3;
    transport_maybe_closed(t);
}

static void outer_close(struct raft_uv_transport *outer, raft_uv_transport_close_cb cb)
{
    cluster_transport_t *t = transport_of_outer(outer);
    assert(!t->closing);
    t->closing = 1;
    t->close_cb = cb;
    if (t->listener_state == 1) {
        t->listener_state = 2;
        uv_close((uv_handle_t *)&t->listener, listener_closed_cb);
    }
    for (pending_resolve_t *p = t->pending; p != NULL; p = p->next)
        uv_cancel((uv_req_t *)&p->gai);
    for (peer_conn_t *c = t->conns; c != NULL; c = c->next)
        transport_conn_fail(c, NULL);
    tls_relays_close_all(&t->relays);
    transport_maybe_closed(t);
}

static void relays_empty_cb(void *arg)
{
    transport_maybe_closed(arg);
}

int cluster_transport_init(cluster_transport_t *t, uv_loop_t *loop,
                           const cluster_transport_config_t *cfg)
{
    memset(t, 0, sizeof *t);
    if ((cfg->tls_server == NULL) != (cfg->tls_client == NULL))
        return RAFT_INVALID;
    const char *bind_address = cfg->bind_address;
    t->loop = loop;
    t->secret = cfg->secret != NULL && cfg->secret->len > 0 ? cfg->secret : NULL;
    t->tls_server = cfg->tls_server;
    t->tls_client = cfg->tls_client;
    t->admit = cfg->admit;
    t->admit_arg = cfg->admit_arg;
    t->relays.on_empty = relays_empty_cb;
    t->relays.arg = t;
    t->deadline_ms = CLUSTER_TRANSPORT_DEADLINE_MS;
    if (bind_address != NULL) {
        struct sockaddr_in addr;
        lc_hostport_t hp;
        char why[128];
        if (strlen(bind_address) >= sizeof t->bind_address ||
            lc_hostport_parse(bind_address, 0, &hp, why, sizeof why) != 0 ||
            uv_ip4_addr(hp.host, hp.port, &addr) != 0)
            return RAFT_INVALID;
        snprintf(t->bind_address, sizeof t->bind_address, "%s", bind_address);
    }
    t->outer.impl = t;
    t->outer.init = outer_init;
    t->outer.listen = outer_listen;
    t->outer.connect = transport_outer_connect;
    t->outer.close = outer_close;
    return 0;
}

void cluster_transport_close(cluster_transport_t *t)
{
    /* Everything t holds is inside it; raft's close released the handles. */
    assert(t->conns == NULL && t->pending == NULL && t->relays.head == NULL);
    (void)t;
}
