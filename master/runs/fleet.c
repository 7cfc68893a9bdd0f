/* fleet.c — worker connections on :5557: framing, handshake, heartbeats,
 * liveness. */
#include "fleet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_addr.h"
#include "lc_clock.h"
#include "lc_err.h"
#include "lc_frame.h"
#include "lc_log.h"
#include "lc_protocol.h"

#define READ_BUF_SIZE (64u << 10)
#define MAX_WRITE_QUEUE (64u << 20) /* a worker this far behind is closed */
#define MISSED_HEARTBEATS 3
#define SATURATION_CPU 90.0   /* percent of its threads' time */
#define SATURATION_BEATS 3    /* heartbeats in a row to saturate, or to recover */
#define RECOVERY_CPU 75.0     /* below this a saturated worker regains capacity */
#define HELLO_TIMEOUT_MS 5000 /* from accept to Hello (TLS handshake included) */

struct fleet_conn_s {
    uv_tcp_t tcp;
    fleet_t *fleet;
    lc_frame_reader_t reader;
    fleet_worker_t *worker; /* NULL until Hello */
    char peer[64];
    bool closing;
    uint8_t nonce[LC_JOIN_NONCE_LEN]; /* this connection's Challenge */
    lc_tls_channel_t *tls;            /* NULL on a plaintext port */
    uint64_t accepted_ms;             /* monotonic; Hello is due HELLO_TIMEOUT_MS later */
    fleet_conn_t *prev, *next; /* every open connection, for shutdown */
};

struct fleet_s {
    uv_loop_t *loop;
    uv_tcp_t listener;
    uv_timer_t liveness;
    fleet_config_t cfg;
    char advertise[128];
    fleet_events_t events;
    bool accepting;
    uint64_t leader_id, term;
    fleet_worker_t **workers; /* known workers, join order */
    size_t n_workers, cap_workers;
    fleet_worker_t **connected_view;
    uint64_t saturation_epoch;
    fleet_conn_t *conns;      /* open connections */
    size_t n_conns;
    bool closing;
    int pending_closes;
    void (*on_closed)(void *arg);
    void *closed_arg;
    char read_buf[READ_BUF_SIZE];
};

static void maybe_finish_close(fleet_t *f)
{
    if (!f->closing || f->pending_closes > 0 || f->n_conns > 0)
        return;
    for (size_t i = 0; i < f->n_workers; i++)
        free(f->workers[i]);
    free(f->workers);
    free(f->connected_view);
    void (*cb)(void *) = f->on_closed;
    void *arg = f->closed_arg;
    free(f);
    if (cb != NULL)
        cb(arg);
}

static void conn_closed_cb(uv_handle_t *h)
{
    fleet_conn_t *c = h->data;
    fleet_t *f = c->fleet;
    lc_frame_reader_close(&c->reader);
    lc_tls_channel_free(c->tls);
    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        f->conns = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    free(c);
    f->n_conns--;
    maybe_finish_close(f);
}

static void conn_close(fleet_conn_t *c, const char *reason)
{
    if (c->closing)
        return;
    c->closing = true;
    if (reason != NULL)
        lc_warn("fleet", "msg=\"closing worker connection\" peer=%s worker=%s reason=\"%s\"", c->peer,
                c->worker ? c->worker->id : "-", reason);
    if (c->worker != NULL && c->worker->conn == c)
        c->worker->conn = NULL;
    c->worker = NULL;
    uv_close((uv_handle_t *)&c->tcp, conn_closed_cb);
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
static int conn_write(fleet_conn_t *c, uint8_t *data, size_t len)
{
    write_req_t *w = calloc(1, sizeof *w);
    if (w == NULL) {
        free(data);
        return LC_ENOMEM;
    }
    w->frame = data;
    uv_buf_t buf = uv_buf_init((char *)data, (unsigned)len);
    if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &buf, 1, write_cb) != 0) {
        free(data);
        free(w);
        conn_close(c, "write failed");
        return LC_ECLOSED;
    }
    return 0;
}

static int tls_send(void *arg, uint8_t *buf, size_t len)
{
    fleet_conn_t *c = arg;
    if (c->closing) {
        free(buf);
        return LC_ECLOSED;
    }
    return conn_write(c, buf, len);
}

static int conn_send(fleet_conn_t *c, const Lc__Envelope *env)
{
    if (c->closing)
        return LC_ECLOSED;
    if (c->tcp.write_queue_size > MAX_WRITE_QUEUE) {
        conn_close(c, "write queue over 64 MiB: worker not reading");
        return LC_ECLOSED;
    }
    uint8_t *frame;
    size_t len;
    if (lc_frame_encode(env, &frame, &len) != 0)
        return LC_ENOMEM;
    if (c->tls == NULL)
        return conn_write(c, frame, len);
    int rv = lc_tls_channel_write(c->tls, frame, len);
    free(frame);
    if (rv == LC_EPROTO)
        conn_close(c, lc_tls_channel_error(c->tls));
    return rv;
}

fleet_worker_t *fleet_find(fleet_t *f, const char *worker_id)
{
    for (size_t i = 0; i < f->n_workers; i++)
        if (strcmp(f->workers[i]->id, worker_id) == 0)
            return f->workers[i];
    return NULL;
}

int fleet_send(fleet_t *f, const char *worker_id, const Lc__Envelope *env)
{
    fleet_worker_t *w = fleet_find(f, worker_id);
    if (w == NULL)
        return LC_ENOTFOUND;
    if (w->conn == NULL)
        return LC_ECLOSED;
    return conn_send(w->conn, env);
}

static fleet_worker_t *worker_add(fleet_t *f, const char *id)
{
    if (f->n_workers == f->cap_workers) {
        size_t cap = f->cap_workers ? f->cap_workers * 2 : 16;
        fleet_worker_t **grown = realloc(f->workers, cap * sizeof *grown);
        fleet_worker_t **view = realloc(f->connected_view, cap * sizeof *view);
        if (grown != NULL)
            f->workers = grown;
        if (view != NULL)
            f->connected_view = view;
        if (grown == NULL || view == NULL)
            return NULL;
        f->cap_workers = cap;
    }
    fleet_worker_t *w = calloc(1, sizeof *w);
    if (w == NULL)
        return NULL;
    snprintf(w->id, sizeof w->id, "%s", id);
    f->workers[f->n_workers++] = w;
    return w;
}

static void worker_remove(fleet_t *f, fleet_worker_t *w)
{
    for (size_t i = 0; i < f->n_workers; i++) {
        if (f->workers[i] != w)
            continue;
        memmove(&f->workers[i], &f->workers[i + 1], (f->n_workers - i - 1) * sizeof *f->workers);
        f->n_workers--;
        free(w);
        return;
    }
}

static void copy_loads(fleet_worker_t *w, Lc__RunLoad **loads, size_t n)
{
    w->n_loads = n < FLEET_MAX_RUN_LOADS ? n : FLEET_MAX_RUN_LOADS;
    for (size_t i = 0; i < w->n_loads; i++) {
        w->loads[i].run = loads[i]->run;
        w->loads[i].generation = loads[i]->generation;
        w->loads[i].users = loads[i]->users;
        w->loads[i].connections = loads[i]->connections;
    }
}

static void send_welcome(fleet_t *f, fleet_conn_t *c)
{
    Lc__Welcome welcome = LC__WELCOME__INIT;
    char addresses[16][LC_HOST_MAX + 8], *masters[16];
    size_t n = f->events.master_addresses
                   ? f->events.master_addresses(f->events.arg, addresses, 16) : 0;
    for (size_t i = 0; i < n; i++)
        masters[i] = addresses[i];
    if (n == 0)
        masters[n++] = f->advertise;
    welcome.leader_id = f->leader_id;
    welcome.term = f->term;
    welcome.masters = masters;
    welcome.n_masters = n;
    welcome.heartbeat_ms = f->cfg.heartbeat_ms;
    welcome.stats_interval_ms = f->cfg.stats_interval_ms;
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_WELCOME;
    env.welcome = &welcome;
    conn_send(c, &env);
}

/* Validates a Hello; returns NULL or the reason it is refused. */
static const char *hello_problem(const fleet_t *f, const Lc__Hello *h)
{
    if (h->protocol_version != LC_PROTOCOL_VERSION)
        return "unsupported protocol version";
    size_t id_len = strlen(h->worker_id);
    if (id_len == 0 || id_len >= FLEET_ID_MAX)
        return "worker id must be 1 to 64 characters";
    for (size_t i = 0; i < id_len; i++)
        if (h->worker_id[i] <= ' ' || h->worker_id[i] == '"' || h->worker_id[i] > '~')
            return "worker id has characters other than printable ASCII";
    if (h->threads == 0 || h->threads > 4096)
        return "threads must be 1 to 4096";
    return NULL;
}

/* Every connection starts with a fresh nonce the worker answers in Hello. */
static void send_challenge(fleet_conn_t *c)
{
    if (lc_join_nonce(c->nonce) != 0) {
        conn_close(c, "no randomness for the join challenge");
        return;
    }
    Lc__Challenge ch = LC__CHALLENGE__INIT;
    ch.nonce.data = c->nonce;
    ch.nonce.len = sizeof c->nonce;
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_CHALLENGE;
    env.challenge = &ch;
    conn_send(c, &env);
}

/* With a join secret, the Hello must answer this connection's nonce. */
static bool join_allowed(fleet_t *f, fleet_conn_t *c, const Lc__Hello *h)
{
    const lc_join_secret_t *secret = f->cfg.join_secret;
    if (secret == NULL || secret->len == 0)
        return true;
    if (lc_join_verify(secret, c->nonce, sizeof c->nonce, h->join_proof.data, h->join_proof.len))
        return true;
    const char *why = h->join_proof.len == 0 ? "this cluster requires a join secret"
                                             : "join proof does not match the cluster's secret";
    Lc__JoinRefused refused = LC__JOIN_REFUSED__INIT;
    refused.reason = (char *)why;
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_JOIN_REFUSED;
    env.join_refused = &refused;
    conn_send(c, &env);
    conn_close(c, why);
    return false;
}

/* A follower sends the worker to the leader and closes. */
static void redirect(fleet_t *f, fleet_conn_t *c)
{
    char leader[LC_HOST_MAX + 8];
    if (f->events.leader_address == NULL ||
        !f->events.leader_address(f->events.arg, leader, sizeof leader)) {
        conn_close(c, "no leader known yet");
        return;
    }
    Lc__Redirect r = LC__REDIRECT__INIT;
    r.leader = leader;
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_REDIRECT;
    env.redirect = &r;
    conn_send(c, &env);
    lc_info("fleet", "msg=\"redirected worker to the leader\" peer=%s leader=%s", c->peer, leader);
    conn_close(c, NULL);
}

static void handle_hello(fleet_t *f, fleet_conn_t *c, const Lc__Hello *h)
{
    if (!f->accepting) {
        redirect(f, c);
        return;
    }
    if (!join_allowed(f, c, h))
        return;
    const char *problem = hello_problem(f, h);
    if (problem != NULL) {
        conn_close(c, problem);
        return;
    }
    fleet_worker_t *w = fleet_find(f, h->worker_id);
    if (w == NULL)
        w = worker_add(f, h->worker_id);
    if (w == NULL) {
        conn_close(c, "out of memory");
        return;
    }
    if (w->conn != NULL && w->conn != c)
        conn_close(w->conn, "replaced by a new connection of the same worker");
    w->conn = c;
    c->worker = w;
    snprintf(w->name, sizeof w->name, "%s", h->name);
    snprintf(w->address, sizeof w->address, "%s", c->peer);
    w->threads = h->threads;
    w->capacity = h->capacity;
    w->effective_capacity = h->capacity; /* a (re)joining worker starts unsaturated */
    w->saturated = false;
    w->hot_beats = w->cool_beats = 0;
    w->last_seen_ms = lc_mono_ms();
    copy_loads(w, h->running, h->n_running);
    lc_info("fleet", "msg=\"worker joined\" worker=%s name=\"%s\" peer=%s threads=%u capacity=%u",
            w->id, w->name, c->peer, w->threads, w->capacity);
    send_welcome(f, c);
    if (f->events.on_join != NULL)
        f->events.on_join(f->events.arg, w, h);
}

/* Saturation (fleet.h): a generator past 90 % CPU measures its own queueing,
 * so it sheds users until it is below again. Its effective capacity becomes
 * 90 % of the users it runs, rounded down, and never rises while saturated. */
/* A cooled worker gets capacity back a quarter at a time (of what it lacks,
 * at least 10 % of its capacity), so that users return in steps it can show
 * it carries, rather than all at once and straight back into saturation. */
static void recover_step(fleet_t *f, fleet_worker_t *w)
{
    uint32_t missing = w->capacity - w->effective_capacity;
    uint32_t step = missing / 4 > w->capacity / 10 ? missing / 4 : w->capacity / 10;
    w->effective_capacity = step >= missing || step == 0 ? w->capacity
                                                         : w->effective_capacity + step;
    w->saturated = w->effective_capacity < w->capacity;
    f->saturation_epoch++;
    if (w->saturated)
        lc_info("fleet", "msg=\"saturated worker recovering\" worker=%s cpu_percent=%.1f "
                "effective_capacity=%u capacity=%u", w->id, w->cpu_percent,
                w->effective_capacity, w->capacity);
    else
        lc_info("fleet", "msg=\"worker no longer saturated\" worker=%s cpu_percent=%.1f "
                "capacity=%u", w->id, w->cpu_percent, w->capacity);
}

static void note_cpu(fleet_t *f, fleet_worker_t *w)
{
    bool hot = w->cpu_percent > SATURATION_CPU, cool = w->cpu_percent < RECOVERY_CPU;
    w->hot_beats = hot ? w->hot_beats + 1 : 0;
    w->cool_beats = cool ? w->cool_beats + 1 : 0;
    if (hot && w->hot_beats >= SATURATION_BEATS) {
        w->hot_beats = 0; /* 3 more hot heartbeats shed another 10 % */
        uint64_t users = 0;
        for (size_t i = 0; i < w->n_loads; i++)
            users += w->loads[i].users;
        uint64_t eff = users * 9 / 10;
        if (eff > w->effective_capacity)
            eff = w->effective_capacity;
        if (w->saturated && eff == w->effective_capacity)
            return;
        w->saturated = true;
        w->effective_capacity = (uint32_t)eff;
        f->saturation_epoch++;
        lc_warn("fleet", "msg=\"worker saturated\" worker=%s cpu_percent=%.1f users=%llu "
                "effective_capacity=%u", w->id, w->cpu_percent, (unsigned long long)users,
                w->effective_capacity);
    } else if (cool && w->saturated && w->cool_beats >= SATURATION_BEATS) {
        w->cool_beats = 0;
        recover_step(f, w);
    }
}

uint64_t fleet_saturation_epoch(const fleet_t *f)
{
    return f->saturation_epoch;
}

/* Dispatches one decoded frame; returns non-zero when the connection closed. */
static int dispatch(fleet_t *f, fleet_conn_t *c, Lc__Envelope *env)
{
    if (c->worker == NULL && env->msg_case != LC__ENVELOPE__MSG_HELLO) {
        conn_close(c, "expected Hello as the first frame");
        lc__envelope__free_unpacked(env, NULL);
        return 1;
    }
    if (c->worker != NULL)
        c->worker->last_seen_ms = lc_mono_ms();
    switch (env->msg_case) {
    case LC__ENVELOPE__MSG_HELLO:
        handle_hello(f, c, env->hello);
        break;
    case LC__ENVELOPE__MSG_HEARTBEAT:
        c->worker->cpu_percent = env->heartbeat->cpu_percent;
        c->worker->rss_bytes = env->heartbeat->rss_bytes;
        copy_loads(c->worker, env->heartbeat->runs, env->heartbeat->n_runs);
        note_cpu(f, c->worker);
        break;
    case LC__ENVELOPE__MSG_STATS:
        if (strcmp(env->stats->worker_id, c->worker->id) != 0) {
            conn_close(c, "stats batch names another worker");
            break;
        }
        if (f->events.on_stats != NULL) {
            f->events.on_stats(f->events.arg, c->worker, env);
            return c->closing;
        }
        break;
    case LC__ENVELOPE__MSG_ASSIGN_REFUSED:
        lc_warn("fleet", "msg=\"assignment refused\" worker=%s run=%llu reason=\"%s\"",
                c->worker->id, (unsigned long long)env->assign_refused->run,
                env->assign_refused->reason);
        if (f->events.on_refused != NULL)
            f->events.on_refused(f->events.arg, c->worker, env->assign_refused);
        break;
    default:
        lc_warn("fleet", "msg=\"ignoring unexpected message\" worker=%s case=%d", c->worker->id,
                (int)env->msg_case);
        break;
    }
    lc__envelope__free_unpacked(env, NULL);
    return c->closing;
}

static int on_frame(void *arg, const uint8_t *body, size_t len)
{
    fleet_conn_t *c = arg;
    Lc__Envelope *env;
    char why[160];
    if (lc_frame_decode(body, len, &env, why, sizeof why) != 0) {
        conn_close(c, why);
        return LC_EPROTO;
    }
    return dispatch(c->fleet, c, env);
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    fleet_conn_t *c = h->data;
    buf->base = c->fleet->read_buf;
    buf->len = READ_BUF_SIZE;
    (void)suggested;
}

/* Plaintext bytes of the connection, TLS or not, to the frame reader. */
static int feed_frames(void *arg, const uint8_t *data, size_t len)
{
    fleet_conn_t *c = arg;
    int rv = lc_frame_reader_feed(&c->reader, data, len, on_frame, c);
    if (rv == LC_EPROTO && !c->closing)
        conn_close(c, c->reader.errmsg);
    else if (rv != 0 && !c->closing)
        conn_close(c, lc_strerror(rv));
    return c->closing ? LC_ECLOSED : 0;
}

static void read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    fleet_conn_t *c = s->data;
    if (nread < 0) {
        char why[128];
        if (nread == UV_EOF && lc_frame_reader_pending(&c->reader) > 0)
            snprintf(why, sizeof why, "connection closed inside a frame (%zu bytes pending)",
                     lc_frame_reader_pending(&c->reader));
        else
            snprintf(why, sizeof why, "%s", nread == UV_EOF ? "worker closed the connection"
                                                           : uv_strerror((int)nread));
        conn_close(c, why);
        return;
    }
    if (c->tls == NULL) {
        feed_frames(c, (const uint8_t *)buf->base, (size_t)nread);
        return;
    }
    bool was_established = lc_tls_channel_established(c->tls);
    int rv = lc_tls_channel_feed(c->tls, (const uint8_t *)buf->base, (size_t)nread);
    if (rv != 0 && !c->closing)
        conn_close(c, lc_tls_channel_error(c->tls)[0] ? lc_tls_channel_error(c->tls)
                                                       : lc_strerror(rv));
    else if (!was_established && lc_tls_channel_established(c->tls))
        lc_debug("fleet", "msg=\"TLS established\" peer=%s subject=\"%s\"", c->peer,
                 lc_tls_channel_peer(c->tls));
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

static void on_connection(uv_stream_t *server, int status)
{
    fleet_t *f = server->data;
    if (status != 0 || f->closing)
        return;
    fleet_conn_t *c = calloc(1, sizeof *c);
    if (c == NULL)
        return;
    c->fleet = f;
    c->accepted_ms = lc_mono_ms();
    uv_tcp_init(f->loop, &c->tcp);
    c->tcp.data = c;
    c->next = f->conns;
    if (f->conns != NULL)
        f->conns->prev = c;
    f->conns = c;
    f->n_conns++;
    lc_frame_reader_init(&c->reader, LC_FRAME_MAX);
    if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0) {
        conn_close(c, "accept failed");
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    peer_name(&c->tcp, c->peer, sizeof c->peer);
    if (f->cfg.tls_ctx != NULL) {
        lc_tls_io_t io = {.arg = c, .send = tls_send, .receive = feed_frames};
        if (lc_tls_channel_new(&c->tls, f->cfg.tls_ctx, NULL, &io) != 0) {
            conn_close(c, "out of memory for TLS");
            return;
        }
    }
    uv_read_start((uv_stream_t *)&c->tcp, alloc_cb, read_cb);
    send_challenge(c); /* over TLS: queued until the handshake ends */
}

/* Workers silent for MISSED_HEARTBEATS intervals are lost. */
/* A connection that never says Hello (a port scanner, a worker without TLS
 * on a TLS port) must not hold its slot forever. */
static void close_silent_conns(fleet_t *f, uint64_t now)
{
    for (fleet_conn_t *c = f->conns; c != NULL; c = c->next) {
        if (c->worker != NULL || c->closing || now - c->accepted_ms <= HELLO_TIMEOUT_MS)
            continue;
        if (c->tls != NULL && !lc_tls_channel_established(c->tls))
            conn_close(c, "no TLS handshake within 5 s (a worker without --tls-cert?)");
        else
            conn_close(c, "no Hello within 5 s");
    }
}

static void liveness_cb(uv_timer_t *t)
{
    fleet_t *f = t->data;
    uint64_t now = lc_mono_ms();
    close_silent_conns(f, now);
    uint64_t limit = (uint64_t)MISSED_HEARTBEATS * f->cfg.heartbeat_ms;
    for (size_t i = 0; i < f->n_workers;) {
        fleet_worker_t *w = f->workers[i];
        if (now - w->last_seen_ms <= limit) {
            i++;
            continue;
        }
        lc_warn("fleet", "msg=\"worker lost\" worker=%s silent_ms=%llu", w->id,
                (unsigned long long)(now - w->last_seen_ms));
        if (w->conn != NULL)
            conn_close(w->conn, "missed 3 heartbeats");
        if (f->events.on_lost != NULL)
            f->events.on_lost(f->events.arg, w);
        worker_remove(f, w);
    }
}

static int listen_on(fleet_t *f, char *errmsg, size_t errlen)
{
    struct sockaddr_storage addr;
    int rv = uv_ip4_addr(f->cfg.listen_host, f->cfg.listen_port, (struct sockaddr_in *)&addr);
    if (rv != 0)
        rv = uv_ip6_addr(f->cfg.listen_host, f->cfg.listen_port, (struct sockaddr_in6 *)&addr);
    if (rv == 0)
        rv = uv_tcp_bind(&f->listener, (struct sockaddr *)&addr, 0);
    if (rv == 0)
        rv = uv_listen((uv_stream_t *)&f->listener, 128, on_connection);
    if (rv != 0)
        snprintf(errmsg, errlen, "fleet: listen on %s:%u: %s", f->cfg.listen_host,
                 f->cfg.listen_port, uv_strerror(rv));
    return rv == 0 ? 0 : LC_EIO;
}

static void handle_closed_cb(uv_handle_t *h)
{
    fleet_t *f = h->data;
    f->pending_closes--;
    maybe_finish_close(f);
}

int fleet_init(fleet_t **out, uv_loop_t *loop, const fleet_config_t *cfg,
               const fleet_events_t *events, char *errmsg, size_t errlen)
{
    fleet_t *f = calloc(1, sizeof *f);
    if (f == NULL)
        return LC_ENOMEM;
    f->loop = loop;
    f->cfg = *cfg;
    snprintf(f->advertise, sizeof f->advertise, "%s", cfg->advertise);
    f->cfg.advertise = f->advertise;
    f->events = *events;
    uv_tcp_init(loop, &f->listener);
    f->listener.data = f;
    uv_timer_init(loop, &f->liveness);
    f->liveness.data = f;
    if (listen_on(f, errmsg, errlen) != 0) {
        f->closing = true;
        f->pending_closes = 2;
        uv_close((uv_handle_t *)&f->listener, handle_closed_cb);
        uv_close((uv_handle_t *)&f->liveness, handle_closed_cb);
        return LC_EIO;
    }
    /* Checked 4 times per interval: a silent worker is lost 3 to 3.25
     * intervals after its last frame, not up to 4. */
    uint64_t check_ms = cfg->heartbeat_ms / 4 ? cfg->heartbeat_ms / 4 : 1;
    uv_timer_start(&f->liveness, liveness_cb, check_ms, check_ms);
    *out = f;
    return 0;
}

void fleet_set_accepting(fleet_t *f, bool accepting, uint64_t leader_id, uint64_t term)
{
    bool deposed = f->accepting && !accepting;
    f->accepting = accepting;
    f->leader_id = leader_id;
    f->term = term;
    /* A master that lost leadership lets its workers go, so they look for the
     * new leader (or, with no quorum, count down their orphan timeout). */
    if (deposed)
        for (fleet_conn_t *c = f->conns; c != NULL; c = c->next)
            conn_close(c, "this master is no longer the leader");
}

fleet_worker_t **fleet_connected(fleet_t *f, size_t *n)
{
    *n = 0;
    for (size_t i = 0; i < f->n_workers; i++)
        if (f->workers[i]->conn != NULL)
            f->connected_view[(*n)++] = f->workers[i];
    return f->connected_view;
}

fleet_worker_t *const *fleet_known(const fleet_t *f, size_t *n)
{
    *n = f->n_workers;
    return f->workers;
}

size_t fleet_count_connected(fleet_t *f)
{
    size_t n;
    fleet_connected(f, &n);
    return n;
}

void fleet_set_assigned(fleet_t *f, const char *worker_id, uint64_t run, uint32_t users)
{
    fleet_worker_t *w = fleet_find(f, worker_id);
    if (w == NULL)
        return;
    size_t i = 0;
    while (i < w->n_assigned && w->assigned[i].run != run)
        i++;
    if (users == 0) {
        if (i < w->n_assigned)
            w->assigned[i] = w->assigned[--w->n_assigned];
        return;
    }
    if (i == w->n_assigned) {
        if (w->n_assigned == FLEET_MAX_RUN_LOADS)
            return;
        w->n_assigned++;
    }
    w->assigned[i] = (fleet_run_load_t){.run = run, .users = users};
}

void fleet_forget_run(fleet_t *f, uint64_t run)
{
    for (size_t i = 0; i < f->n_workers; i++)
        fleet_set_assigned(f, f->workers[i]->id, run, 0);
}

/* A worker's runs: what the scheduler assigned it, and what it reports. */
static json_t *worker_runs_json(const fleet_worker_t *w)
{
    json_t *runs = json_array();
    for (size_t j = 0; j < w->n_assigned; j++) {
        const fleet_run_load_t *a = &w->assigned[j];
        const fleet_run_load_t *l = NULL;
        for (size_t k = 0; k < w->n_loads && l == NULL; k++)
            l = w->loads[k].run == a->run ? &w->loads[k] : NULL;
        json_array_append_new(runs, json_pack("{s:I,s:i,s:i,s:i}", "run", (json_int_t)a->run,
                                              "users", (int)a->users, "running_users",
                                              l ? (int)l->users : 0, "connections",
                                              l ? (int)l->connections : 0));
    }
    for (size_t k = 0; k < w->n_loads; k++) {
        const fleet_run_load_t *l = &w->loads[k];
        bool assigned = false;
        for (size_t j = 0; j < w->n_assigned && !assigned; j++)
            assigned = w->assigned[j].run == l->run;
        if (!assigned)
            json_array_append_new(runs, json_pack("{s:I,s:i,s:i,s:i}", "run", (json_int_t)l->run,
                                                  "users", (int)l->users, "running_users",
                                                  (int)l->users, "connections",
                                                  (int)l->connections));
    }
    return runs;
}

json_t *fleet_workers_json(fleet_t *f)
{
    json_t *list = json_array();
    uint64_t now = lc_mono_ms();
    for (size_t i = 0; i < f->n_workers; i++) {
        const fleet_worker_t *w = f->workers[i];
        json_t *row = json_pack(
            "{s:s,s:s,s:s,s:i,s:i,s:i,s:b,s:f,s:I,s:b,s:I,s:o}", "id", w->id, "name", w->name,
            "address", w->address, "threads", (int)w->threads, "capacity", (int)w->capacity,
            "effective_capacity", (int)w->effective_capacity, "saturated", w->saturated,
            "cpu_percent", w->cpu_percent, "rss_bytes", (json_int_t)w->rss_bytes, "connected",
            w->conn != NULL, "last_seen_ms_ago", (json_int_t)(now - w->last_seen_ms), "runs",
            worker_runs_json(w));
        json_array_append_new(list, row);
    }
    return list;
}

void fleet_close(fleet_t *f, void (*on_closed)(void *arg), void *arg)
{
    f->closing = true;
    f->on_closed = on_closed;
    f->closed_arg = arg;
    f->pending_closes = 2;
    for (fleet_conn_t *c = f->conns; c != NULL; c = c->next)
        conn_close(c, NULL);
    uv_close((uv_handle_t *)&f->listener, handle_closed_cb);
    uv_close((uv_handle_t *)&f->liveness, handle_closed_cb);
}
