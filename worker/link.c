/* link.c — the master connection, its backoff and the outbox. */
#include "link.h"

#include <assert.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_addr.h"
#include "lc_err.h"
#include "lc_log.h"
#include "rng.h"

/* What on_frame returns to stop lc_frame_reader_feed (distinct from LC_ codes). */
#define LINK_STOP 1000

static void connect_next(worker_link_t *l);
static void try_addr(worker_link_t *l);

typedef struct link_write_s {
    uv_write_t req;
    uint8_t *data; /* owned */
} link_write_t;

static void free_masters(worker_link_t *l)
{
    for (size_t i = 0; i < l->n_masters; i++)
        free(l->masters[i]);
    free(l->masters);
    l->masters = NULL;
    l->n_masters = 0;
}

/* Replaces the master list with n addresses. */
static int set_masters(worker_link_t *l, char *const *addrs, size_t n)
{
    char **list = calloc(n, sizeof *list);
    if (list == NULL)
        return LC_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        if ((list[i] = strdup(addrs[i])) == NULL) {
            while (i-- > 0)
                free(list[i]);
            free(list);
            return LC_ENOMEM;
        }
    }
    free_masters(l);
    l->masters = list;
    l->n_masters = n;
    l->cur = 0;
    return 0;
}

static int parse_join(worker_link_t *l, const char *join, char *errmsg, size_t errlen)
{
    char *copy = strdup(join), *save = NULL, *items[64];
    size_t n = 0;
    if (copy == NULL)
        return LC_ENOMEM;
    for (char *tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        lc_hostport_t hp;
        char sub[200];
        if (n == 64 || lc_hostport_parse(tok, 0, &hp, sub, sizeof sub) != 0) {
            snprintf(errmsg, errlen, "--join: %s", n == 64 ? "at most 64 addresses" : sub);
            free(copy);
            return LC_EINVAL;
        }
        items[n++] = tok;
    }
    int rv = n == 0 ? LC_EINVAL : set_masters(l, items, n);
    if (n == 0)
        snprintf(errmsg, errlen, "--join: expected host:port[,host:port…]");
    free(copy);
    return rv;
}

static void on_retry(uv_timer_t *t)
{
    connect_next(t->data);
}

/* Waits ms (with ±25 % jitter when jitter) and connects again. */
static void schedule_retry(worker_link_t *l, uint32_t ms, bool jitter)
{
    l->state = WORKER_LINK_IDLE;
    if (l->shutting_down)
        return;
    if (jitter && ms > 0)
        ms = (uint32_t)worker_rng_range(&l->rng, ms * 3 / 4, ms * 5 / 4);
    uv_timer_start(&l->retry_timer, on_retry, ms, 0);
}

/* The next master is tried at once; only after a whole round of the list
 * failed does the worker wait, and that wait doubles per round up to the
 * cap: during a failover the new leader is found as soon as it exists. */
static void backoff_retry(worker_link_t *l)
{
    if (l->n_masters > 1) {
        l->cur = (l->cur + 1) % l->n_masters;
        if (l->cur != 0) {
            schedule_retry(l, WORKER_LINK_NEXT_MASTER_MS, false);
            return;
        }
    }
    uint32_t ms = l->backoff_ms;
    l->backoff_ms = l->backoff_ms * 2 > WORKER_LINK_BACKOFF_MAX_MS ? WORKER_LINK_BACKOFF_MAX_MS
                                                                   : l->backoff_ms * 2;
    schedule_retry(l, ms, true);
}

static void on_tcp_close(uv_handle_t *h)
{
    worker_link_t *l = h->data;
    l->tcp_open = false;
    l->handles--;
    /* Here, not in close_tcp: a frame callback may be the one closing. */
    lc_frame_reader_close(&l->reader);
    lc_tls_channel_free(l->tls);
    l->tls = NULL;
    if (l->shutting_down) {
        if (l->handles == 0 && !l->gai_pending && l->closed_cb)
            l->closed_cb(l);
        return;
    }
    if (l->state == WORKER_LINK_CONNECTING && l->next_addr != NULL) {
        try_addr(l); /* that address failed: the next one of the same name */
        return;
    }
    if (l->addrs) {
        uv_freeaddrinfo(l->addrs);
        l->addrs = l->next_addr = NULL;
    }
    if (l->redirect[0] != '\0' && l->redirects <= 3)
        schedule_retry(l, 0, false);
    else
        backoff_retry(l);
}

static void close_tcp(worker_link_t *l)
{
    uv_read_stop((uv_stream_t *)&l->tcp);
    uv_close((uv_handle_t *)&l->tcp, on_tcp_close);
}

/* Ends the connection with a logged reason; reconnects after a backoff. */
static void link_fail(worker_link_t *l, const char *reason)
{
    if (l->state == WORKER_LINK_CLOSING || l->state == WORKER_LINK_IDLE)
        return;
    lc_warn("link", "msg=\"closing master connection\" reason=\"%s\" master=\"%s\"", reason,
            l->target);
    bool was_ready = l->state == WORKER_LINK_READY;
    l->state = WORKER_LINK_CLOSING;
    if (was_ready) {
        /* Batches dropped while on this connection's wire: delivery unknown. */
        worker_outbox_conn_lost(&l->outbox, l->conn_seq);
        if (l->cbs->disconnected)
            l->cbs->disconnected(l->arg);
    }
    if (l->addrs) { /* do not try the other addresses of a master that answered */
        uv_freeaddrinfo(l->addrs);
        l->addrs = l->next_addr = NULL;
    }
    close_tcp(l);
}

static void on_write(uv_write_t *req, int status)
{
    link_write_t *w = (link_write_t *)req;
    worker_link_t *l = req->data;
    free(w->data);
    free(w);
    if (status < 0 && status != UV_ECANCELED) {
        char why[128];
        snprintf(why, sizeof why, "write: %s", uv_strerror(status));
        link_fail(l, why);
    }
}

/* Writes bytes for the socket (frames, or TLS records); takes data. */
static int write_owned(worker_link_t *l, uint8_t *data, size_t len)
{
    link_write_t *w = malloc(sizeof *w);
    if (w == NULL) {
        free(data);
        return LC_ENOMEM;
    }
    w->data = data;
    w->req.data = l;
    uv_buf_t b = uv_buf_init((char *)data, (unsigned)len);
    int rv = uv_write(&w->req, (uv_stream_t *)&l->tcp, &b, 1, on_write);
    if (rv != 0) {
        free(data);
        free(w);
        link_fail(l, uv_strerror(rv));
        return LC_EIO;
    }
    return 0;
}

static int tls_send(void *arg, uint8_t *buf, size_t len)
{
    return write_owned(arg, buf, len);
}

static int send_bytes(worker_link_t *l, const uint8_t *data, size_t len)
{
    if (l->state != WORKER_LINK_HELLO && l->state != WORKER_LINK_READY)
        return LC_ECLOSED;
    if (l->tls != NULL) {
        int rv = lc_tls_channel_write(l->tls, data, len);
        if (rv == LC_EPROTO)
            link_fail(l, lc_tls_channel_error(l->tls));
        return rv;
    }
    /* A private copy: the outbox may drop its entry before the write completes. */
    uint8_t *copy = malloc(len);
    if (copy == NULL)
        return LC_ENOMEM;
    memcpy(copy, data, len);
    return write_owned(l, copy, len);
}

int worker_link_send_frame(worker_link_t *l, const uint8_t *frame, size_t len)
{
    return send_bytes(l, frame, len);
}

bool worker_link_ready(const worker_link_t *l)
{
    return l->state == WORKER_LINK_READY;
}

void worker_link_queue(worker_link_t *l, const worker_batch_meta_t *meta, uint8_t *frame,
                       size_t len)
{
    uint64_t live = l->state == WORKER_LINK_READY ? l->conn_seq : 0;
    worker_outbox_entry_t *e = worker_outbox_push(&l->outbox, meta, frame, len, live);
    if (e != NULL && live != 0) {
        e->sent_on = live;
        send_bytes(l, e->frame, e->len);
    }
}

size_t worker_link_outbox_len(const worker_link_t *l)
{
    return l->outbox.len;
}

static void outbox_resend(worker_link_t *l)
{
    for (worker_outbox_entry_t *e = l->outbox.head; e != NULL && l->state == WORKER_LINK_READY;
         e = e->next) {
        if (e->frame == NULL)
            continue; /* cannot happen: such entries end with their connection */
        e->sent_on = l->conn_seq;
        send_bytes(l, e->frame, e->len);
    }
}

static void on_outbox_lost(void *arg, const worker_outbox_batch_t *b)
{
    worker_link_t *l = arg;
    if (l->cbs->lost)
        l->cbs->lost(l->arg, b);
}

static void on_welcome(worker_link_t *l, const Lc__Welcome *w)
{
    l->state = WORKER_LINK_READY;
    l->conn_seq++;
    l->backoff_ms = WORKER_LINK_BACKOFF_MIN_MS;
    l->redirects = 0;
    if (w->n_masters > 0 && set_masters(l, w->masters, w->n_masters) != 0)
        lc_warn("link", "msg=\"out of memory keeping the master list\"");
    lc_info("link", "msg=\"welcomed by master\" master=\"%s\" leader_id=%llu term=%llu "
                    "masters=%zu unacked=%zu",
            l->target, (unsigned long long)w->leader_id, (unsigned long long)w->term,
            l->n_masters, l->outbox.len);
    if (l->cbs->welcome)
        l->cbs->welcome(l->arg, w);
    outbox_resend(l);
}

static void on_redirect(worker_link_t *l, const Lc__Redirect *r)
{
    snprintf(l->redirect, sizeof l->redirect, "%s", r->leader);
    l->redirects++;
    lc_info("link", "msg=\"redirected to the leader\" from=\"%s\" to=\"%s\"", l->target,
            l->redirect);
    if (l->state == WORKER_LINK_READY) {
        /* A master that welcomed us and then redirects lost leadership: the
         * connection ends as any other would (outbox, disconnected hook). */
        link_fail(l, "redirected after Welcome");
        return;
    }
    l->state = WORKER_LINK_CLOSING;
    close_tcp(l);
}

/* What the worker cannot act on closes the connection, with a reason;
 * defaults are filled in here so that no callback repeats them. */
static const char *check_message(Lc__Envelope *env)
{
    lc_hostport_t hp;
    char sub[200];
    switch (env->msg_case) {
    case LC__ENVELOPE__MSG_WELCOME:
        if (env->welcome->heartbeat_ms == 0)
            env->welcome->heartbeat_ms = WORKER_LINK_DEFAULT_INTERVAL_MS;
        if (env->welcome->stats_interval_ms == 0)
            env->welcome->stats_interval_ms = WORKER_LINK_DEFAULT_INTERVAL_MS;
        return NULL;
    case LC__ENVELOPE__MSG_REDIRECT:
        if (env->redirect->leader == NULL ||
            lc_hostport_parse(env->redirect->leader, 0, &hp, sub, sizeof sub) != 0)
            return "redirect to a malformed address";
        return NULL;
    default:
        return NULL;
    }
}

/* The one place a message from the master is validated and routed. */
static int dispatch(worker_link_t *l, Lc__Envelope *env)
{
    const char *bad = check_message(env);
    if (bad != NULL) {
        link_fail(l, bad);
        return LINK_STOP;
    }
    switch (env->msg_case) {
    case LC__ENVELOPE__MSG_CHALLENGE:
        l->challenged = true;
        l->cbs->connected(l->arg, env->challenge->nonce.data, env->challenge->nonce.len);
        return 0;
    case LC__ENVELOPE__MSG_JOIN_REFUSED: {
        char why[300];
        snprintf(why, sizeof why, "master refused the join: %s", env->join_refused->reason);
        lc_error("link", "msg=\"join refused\" master=\"%s\" reason=\"%s\"", l->target,
                 env->join_refused->reason);
        link_fail(l, why);
        return LINK_STOP;
    }
    case LC__ENVELOPE__MSG_WELCOME:
        on_welcome(l, env->welcome);
        return 0;
    case LC__ENVELOPE__MSG_REDIRECT:
        on_redirect(l, env->redirect);
        return LINK_STOP; /* the connection is closing: stop feeding */
    case LC__ENVELOPE__MSG_ASSIGN:
        l->cbs->assign(l->arg, env->assign);
        return 0;
    case LC__ENVELOPE__MSG_STOP:
        l->cbs->stop(l->arg, env->stop);
        return 0;
    case LC__ENVELOPE__MSG_STATS_ACK:
        worker_outbox_ack(&l->outbox, env->stats_ack->run, env->stats_ack->seq);
        l->cbs->acked(l->arg, env->stats_ack->run, env->stats_ack->seq);
        return 0;
    case LC__ENVELOPE__MSG_FEED_LEASE:
        if (l->cbs->feed_lease != NULL)
            l->cbs->feed_lease(l->arg, env->feed_lease);
        return 0;
    default:
        link_fail(l, "unexpected message from master");
        return LINK_STOP;
    }
}

static int on_frame(void *arg, const uint8_t *body, size_t len)
{
    worker_link_t *l = arg;
    Lc__Envelope *env;
    char why[200];
    if (lc_frame_decode(body, len, &env, why, sizeof why) != 0) {
        link_fail(l, why);
        return LINK_STOP;
    }
    int rv = dispatch(l, env);
    lc__envelope__free_unpacked(env, NULL);
    return rv != 0 || l->state == WORKER_LINK_CLOSING ? LINK_STOP : 0;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    worker_link_t *l = h->data;
    buf->base = l->rbuf;
    buf->len = sizeof l->rbuf;
}

/* Plaintext from the master, TLS or not, to the frame reader. */
static int feed_frames(void *arg, const uint8_t *data, size_t len)
{
    worker_link_t *l = arg;
    int rv = lc_frame_reader_feed(&l->reader, data, len, on_frame, l);
    if (rv != 0 && rv != LINK_STOP && l->state != WORKER_LINK_CLOSING) {
        char why[240];
        snprintf(why, sizeof why, "bad frame: %s", l->reader.errmsg[0] ? l->reader.errmsg
                                                                       : lc_strerror(rv));
        link_fail(l, why);
    }
    return l->state == WORKER_LINK_CLOSING ? LINK_STOP : 0;
}

static void feed_tls(worker_link_t *l, const uint8_t *data, size_t len)
{
    int rv = lc_tls_channel_feed(l->tls, data, len);
    if (rv != 0 && rv != LINK_STOP && l->state != WORKER_LINK_CLOSING)
        link_fail(l, lc_tls_channel_error(l->tls)[0] ? lc_tls_channel_error(l->tls)
                                                    : lc_strerror(rv));
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    worker_link_t *l = s->data;
    char why[240];
    if (nread > 0) {
        if (l->tls != NULL)
            feed_tls(l, (const uint8_t *)buf->base, (size_t)nread);
        else
            feed_frames(l, (const uint8_t *)buf->base, (size_t)nread);
    } else if (nread == UV_EOF) {
        link_fail(l, lc_frame_reader_pending(&l->reader) ? "truncated frame at EOF"
                     : !l->challenged ? "connection closed by master before its challenge "
                                        "(does it require mutual TLS? see --tls-cert)"
                                      : "connection closed by master");
    } else if (nread < 0) {
        snprintf(why, sizeof why, "read: %s", uv_strerror((int)nread));
        link_fail(l, why);
    }
}

static void on_connect(uv_connect_t *req, int status)
{
    worker_link_t *l = req->data;
    if (status == UV_ECANCELED || l->state != WORKER_LINK_CONNECTING)
        return;
    if (status < 0) {
        if (l->next_addr == NULL) {
            char why[160];
            snprintf(why, sizeof why, "connect: %s", uv_strerror(status));
            lc_warn("link", "msg=\"closing master connection\" reason=\"%s\" master=\"%s\"",
                    why, l->target);
        }
        uv_close((uv_handle_t *)&l->tcp, on_tcp_close); /* tries the next address */
        return;
    }
    l->state = WORKER_LINK_HELLO;
    l->challenged = false;
    uv_freeaddrinfo(l->addrs);
    l->addrs = l->next_addr = NULL;
    uv_tcp_nodelay(&l->tcp, 1);
    uv_tcp_keepalive(&l->tcp, 1, 1); /* probes an idle link; the user timeout bounds them */
    lc_frame_reader_init(&l->reader, LC_FRAME_MAX);
    uv_read_start((uv_stream_t *)&l->tcp, on_alloc, on_read);
    lc_info("link", "msg=\"connected to master\" master=\"%s\" tls=%s", l->target,
            l->tls_ctx != NULL ? "mutual" : "off");
    if (l->tls_ctx != NULL) {
        lc_tls_io_t io = {.arg = l, .send = tls_send, .receive = feed_frames};
        if (lc_tls_channel_new(&l->tls, l->tls_ctx, l->target_host, &io) != 0)
            link_fail(l, l->tls != NULL ? lc_tls_channel_error(l->tls) : "out of memory for TLS");
    }
    /* Hello follows the master's Challenge (see dispatch). */
}

/* A master cut off the network must not hold the worker: connecting and any
 * unacknowledged write (heartbeats go out every second) give up after this. */
static void set_user_timeout(uv_tcp_t *tcp)
{
    uv_os_fd_t fd;
    unsigned int ms = WORKER_LINK_TCP_TIMEOUT_MS;
    if (uv_fileno((uv_handle_t *)tcp, &fd) == 0)
        setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof ms);
}

static void try_addr(worker_link_t *l)
{
    struct addrinfo *ai = l->next_addr;
    l->next_addr = ai->ai_next;
    /* With the socket made now its timeout applies to the SYN too; should that
     * fail (no descriptor left), connect creates it and reports the error. */
    if (uv_tcp_init_ex(l->loop, &l->tcp, (unsigned)ai->ai_family) == 0)
        set_user_timeout(&l->tcp);
    else
        uv_tcp_init(l->loop, &l->tcp);
    l->tcp.data = l;
    l->tcp_open = true;
    l->handles++;
    l->connect_req.data = l;
    int rv = uv_tcp_connect(&l->connect_req, &l->tcp, ai->ai_addr, on_connect);
    if (rv != 0) {
        if (l->next_addr == NULL)
            lc_warn("link", "msg=\"closing master connection\" reason=\"connect: %s\" "
                            "master=\"%s\"", uv_strerror(rv), l->target);
        uv_close((uv_handle_t *)&l->tcp, on_tcp_close);
    }
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
    worker_link_t *l = req->data;
    l->gai_pending = false;
    if (l->shutting_down) {
        uv_freeaddrinfo(res);
        if (l->handles == 0 && l->closed_cb)
            l->closed_cb(l);
        return;
    }
    if (status != 0 || res == NULL) {
        lc_warn("link", "msg=\"closing master connection\" reason=\"resolve: %s\" master=\"%s\"",
                uv_strerror(status), l->target);
        uv_freeaddrinfo(res);
        backoff_retry(l);
        return;
    }
    l->addrs = l->next_addr = res;
    l->state = WORKER_LINK_CONNECTING;
    try_addr(l);
}

static void connect_next(worker_link_t *l)
{
    lc_hostport_t hp;
    char sub[200], port[8];
    if (l->redirect[0] != '\0') {
        snprintf(l->target, sizeof l->target, "%s", l->redirect);
        l->redirect[0] = '\0';
    } else {
        snprintf(l->target, sizeof l->target, "%s", l->masters[l->cur]);
    }
    if (lc_hostport_parse(l->target, 0, &hp, sub, sizeof sub) != 0) {
        lc_warn("link", "msg=\"bad master address\" master=\"%s\"", l->target);
        backoff_retry(l);
        return;
    }
    snprintf(port, sizeof port, "%u", hp.port);
    snprintf(l->target_host, sizeof l->target_host, "%s", hp.host);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    l->gai.data = l;
    l->state = WORKER_LINK_RESOLVING;
    int rv = uv_getaddrinfo(l->loop, &l->gai, on_resolved, hp.host, port, &hints);
    if (rv != 0) {
        lc_warn("link", "msg=\"closing master connection\" reason=\"resolve: %s\" master=\"%s\"",
                uv_strerror(rv), l->target);
        backoff_retry(l);
        return;
    }
    l->gai_pending = true;
}

int worker_link_start(worker_link_t *l, uv_loop_t *loop, const char *join, size_t outbox_max,
                      SSL_CTX *tls_ctx, const worker_link_cbs_t *cbs, void *arg, char *errmsg,
                      size_t errlen)
{
    assert(cbs != NULL && cbs->connected && cbs->assign && cbs->stop && cbs->acked);
    memset(l, 0, sizeof *l);
    l->tls_ctx = tls_ctx;
    worker_outbox_init(&l->outbox, outbox_max, on_outbox_lost, l);
    l->loop = loop;
    l->cbs = cbs;
    l->arg = arg;
    l->backoff_ms = WORKER_LINK_BACKOFF_MIN_MS;
    l->rng = worker_rng_seed(uv_hrtime(), 77);
    int rv = parse_join(l, join, errmsg, errlen);
    if (rv != 0)
        return rv;
    uv_timer_init(loop, &l->retry_timer);
    l->retry_timer.data = l;
    l->handles = 1;
    connect_next(l);
    return 0;
}

static void on_timer_close(uv_handle_t *h)
{
    worker_link_t *l = h->data;
    if (--l->handles == 0 && !l->gai_pending && l->closed_cb)
        l->closed_cb(l);
}

void worker_link_close(worker_link_t *l, void (*closed_cb)(worker_link_t *l))
{
    l->shutting_down = true;
    l->closed_cb = closed_cb;
    if (l->gai_pending)
        uv_cancel((uv_req_t *)&l->gai);
    if (l->tcp_open && !uv_is_closing((uv_handle_t *)&l->tcp))
        close_tcp(l);
    l->state = WORKER_LINK_CLOSING;
    uv_close((uv_handle_t *)&l->retry_timer, on_timer_close);
    worker_outbox_clear(&l->outbox);
    if (l->addrs)
        uv_freeaddrinfo(l->addrs);
    l->addrs = l->next_addr = NULL;
    free_masters(l);
}
