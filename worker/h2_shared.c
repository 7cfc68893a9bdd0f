/* h2_shared.c — an engine's shared HTTP/2 connections for one run, and its users' requests. */
#include "h2_shared.h"

#include <assert.h>
#include <stddef.h>
#include <stdlib.h>

#include "lc_err.h"
#include "lc_log.h"
#include "tls.h"
#include "user.h"
#include "user_internal.h"

#define SWEEP_MS 50u /* how often streams are checked against the request timeout */

typedef struct pconn_s {
    worker_conn_t conn;
    worker_h2_shared_t *p;
    worker_h2_mux_t *mux;
    uint32_t i;
    int why;    /* the kind a connection that closes before it is up fails its waiters with */
} pconn_t;

struct worker_h2_shared_s {
    engine_run_t *r;
    worker_h2_slots_t slots;
    pconn_t *pc;
    uv_timer_t sweep, later_timer;
    uv_check_t flusher;   /* after the loop's I/O: each connection's frames in one write */
    uv_idle_t no_wait;    /* active while frames wait: the loop polls without blocking */
    worker_h2_preq_t *later_head, *later_tail;
    uint32_t handles;
    int sending;      /* inside a send or a pump: ends are told from later_timer */
    bool closing;
};

static void on_ready(worker_conn_t *c);
static void on_done(worker_conn_t *c, const worker_conn_result_t *r);
static void on_closed(worker_conn_t *c);
static void on_destroyed(worker_conn_t *c);
static void on_bytes(worker_conn_t *c, const char *data, size_t len);

static const worker_conn_cbs_t conn_cbs = {
    .ready = on_ready, .done = on_done, .closed = on_closed, .destroyed = on_destroyed,
    .bytes = on_bytes,
};

static void on_settings(worker_h2_mux_t *m, uint32_t max_streams);
static void on_stream_end(worker_h2_mux_t *m, worker_h2_stream_t *st, int kind);
static void on_flush_due(worker_h2_mux_t *m);

static const worker_h2_mux_cbs_t mux_cbs = {.settings = on_settings,
                                            .stream_end = on_stream_end,
                                            .flush_due = on_flush_due};

static worker_h2_preq_t *preq_of_waiter(worker_h2_waiter_t *w)
{
    return (worker_h2_preq_t *)((char *)w - offsetof(worker_h2_preq_t, waiter));
}

static worker_h2_preq_t *preq_of_stream(worker_h2_stream_t *st)
{
    return (worker_h2_preq_t *)((char *)st - offsetof(worker_h2_preq_t, st));
}

/* Telling users */

/* The user hears how its request ended; the captured buffers go back after. */
static void tell_user(worker_h2_shared_t *p, worker_h2_preq_t *q)
{
    worker_user_t *u = q->user;
    worker_bufpool_t *pool = &p->r->engine->pool;
    bool ok = q->kind == WORKER_KIND_OK;
    worker_conn_result_t res = {
        .kind = q->kind, .status = q->st.status, .bytes = q->st.bytes,
        .latency_us = ok ? (q->end_ns - q->asked_ns) / 1000u : WORKER_NO_LATENCY,
        .sent_ns = q->asked_ns};
    if (ok && q->st.captured != NULL) {
        res.body = q->st.captured->data;
        res.body_len = q->st.captured->len;
    }
    if (ok && q->st.hdrs != NULL) {
        res.headers = q->st.hdrs->data;
        res.headers_len = q->st.hdrs->len;
    }
    assert(u->preq == q);
    u->preq = NULL;
    worker_user_pool_done(u, &res);
    worker_bufpool_give(pool, q->st.captured);
    worker_bufpool_give(pool, q->st.hdrs);
    free(q);
}

static void on_later(uv_timer_t *t)
{
    worker_h2_shared_t *p = t->data;
    while (p->later_head != NULL) {
        worker_h2_preq_t *q = p->later_head;
        p->later_head = q->later;
        if (p->later_head == NULL)
            p->later_tail = NULL;
        tell_user(p, q);
    }
}

/* q ended with kind: told now, or (inside a send, whose caller must not hear it from there)
 * on the next turn of the loop. */
static void deliver(worker_h2_shared_t *p, worker_h2_preq_t *q, int kind)
{
    q->kind = kind;
    q->end_ns = uv_hrtime();
    q->in_flight = false;
    if (p->sending == 0) {
        tell_user(p, q);
        return;
    }
    q->later = NULL;
    if (p->later_tail != NULL)
        p->later_tail->later = q;
    else
        p->later_head = q;
    p->later_tail = q;
    uv_timer_start(&p->later_timer, on_later, WORKER_YIELD_MS, 0);
}

/* Streams */

/* Starts q's request (as its user gives it, now: worker_user_pool_request) on connection i,
 * whose slot it holds. */
static void start_stream(worker_h2_shared_t *p, worker_h2_preq_t *q, uint32_t i)
{
    worker_req_out_t out;
    q->conn = i;
    q->st.owner = q;
    int kind = worker_user_pool_request(q->user, &out) != 0 ? WORKER_ERR_ABORTED : 0;
    if (kind == 0) {
        q->st.capture = out.capture;
        q->st.want = worker_hdr_want_some(out.want);
        q->st.deadline_ns = uv_hrtime() + out.timeout_ms * 1000000ull;
        kind = worker_h2_mux_submit(p->pc[i].mux, &q->st, out.data, out.len);
    }
    worker_user_pool_sent(q->user);
    if (q->st.id > 0) { /* linked: it ends through on_stream_end, whatever kind says */
        q->in_flight = true;
        if (kind != 0)
            worker_conn_abort(&p->pc[i].conn, kind);
        return;
    }
    worker_h2_slots_release(&p->slots, i);
    deliver(p, q, kind);
}

/* Connections that are down (and closed) connect again; only while someone waits. */
static void connect_down(worker_h2_shared_t *p)
{
    if (p->closing || p->slots.n_waiting == 0)
        return;
    const worker_plan_t *plan = p->r->plan;
    for (uint32_t i = 0; i < p->slots.n_conns; i++) {
        pconn_t *pc = &p->pc[i];
        if (p->slots.conns[i].state != WORKER_H2_PCONN_DOWN || pc->conn.state != WORKER_CONN_CLOSED)
            continue;
        p->slots.conns[i].state = WORKER_H2_PCONN_CONNECTING;
        pc->why = WORKER_ERR_RESET;
        worker_conn_connect(&pc->conn, (const struct sockaddr *)&plan->origins[0].addr,
                            plan->scenario.connect_timeout_ms);
    }
}

/* Slots freed: the FIFO's users go, in order. */
static void pump(worker_h2_shared_t *p)
{
    worker_h2_waiter_t *w;
    uint32_t i;
    p->sending++;
    while ((w = worker_h2_slots_next(&p->slots, &i)) != NULL)
        start_stream(p, preq_of_waiter(w), i);
    p->sending--;
    connect_down(p);
}

/* A GOAWAY (or no stream ids left) ends pc's new streams before its ends are told: a slot
 * freed by a refused stream must not go to a connection that takes none. */
static void note_goaway(pconn_t *pc)
{
    worker_h2_shared_t *p = pc->p;
    if (pc->mux == NULL || worker_h2_mux_open_for_streams(pc->mux) ||
        p->slots.conns[pc->i].state != WORKER_H2_PCONN_UP)
        return;
    worker_h2_slots_goaway(&p->slots, pc->i); /* its streams finish, none start */
    if (p->slots.conns[pc->i].state == WORKER_H2_PCONN_DOWN)
        worker_conn_abort(&pc->conn, WORKER_ERR_RESET); /* then it reconnects */
}

static void on_settings(worker_h2_mux_t *m, uint32_t max_streams)
{
    pconn_t *pc = worker_h2_mux_data(m);
    worker_h2_shared_t *p = pc->p;
    if (p->slots.conns[pc->i].state == WORKER_H2_PCONN_CONNECTING)
        worker_h2_slots_up(&p->slots, pc->i); /* up once the server said its limits */
    worker_h2_slots_peer_max(&p->slots, pc->i, max_streams);
    pump(p);
}

static void on_stream_end(worker_h2_mux_t *m, worker_h2_stream_t *st, int kind)
{
    pconn_t *pc = worker_h2_mux_data(m);
    worker_h2_shared_t *p = pc->p;
    /* A closing session's streams (conn_lost detached it) hold no slot any more. */
    if (m == pc->mux) {
        note_goaway(pc);
        worker_h2_slots_release(&p->slots, pc->i);
        /* The last stream of a connection that had a GOAWAY: close it (then reconnect). */
        if (p->slots.conns[pc->i].state == WORKER_H2_PCONN_DOWN)
            worker_conn_abort(&pc->conn, WORKER_ERR_RESET);
    }
    deliver(p, preq_of_stream(st), kind);
    pump(p);
}

/* Connections */

/* pc's TCP connection is gone: its slots are forgotten, its session's streams end (each once,
 * as h2_mux_close says), and whoever waits gets a connection again. Before the server's
 * SETTINGS it failed to come up: the user at the FIFO's head fails with why, as its own
 * connect would have (one failed connect, one failed request), rather than everyone waiting
 * on a server that cannot serve; the others wait for the next attempt. */
static void conn_lost(pconn_t *pc, int why)
{
    worker_h2_shared_t *p = pc->p;
    bool never_up = p->slots.conns[pc->i].state == WORKER_H2_PCONN_CONNECTING;
    (void)worker_h2_slots_lost(&p->slots, pc->i);
    worker_h2_mux_t *m = pc->mux;
    pc->mux = NULL;
    worker_h2_mux_close(m);
    worker_h2_waiter_t *w;
    if (never_up && !p->closing && (w = worker_h2_slots_pop(&p->slots)) != NULL)
        deliver(p, preq_of_waiter(w), why);
    pump(p);
}

static void on_ready(worker_conn_t *c)
{
    pconn_t *pc = c->data;
    worker_h2_shared_t *p = pc->p;
    if (p->closing) {
        worker_conn_abort(c, WORKER_ERR_ABORTED);
        return;
    }
    if (c->proto == WORKER_PROTO_H1) { /* ALPN settled on HTTP/1.1: no streams here */
        pc->why = WORKER_ERR_TLS;
        worker_conn_abort(c, WORKER_ERR_TLS);
        return;
    }
    int kind = worker_h2_mux_open(c, c->proto == WORKER_PROTO_H2TLS, &mux_cbs, pc,
                                  &p->r->engine->pool, &pc->mux);
    if (kind != 0) {
        pc->why = kind;
        worker_conn_abort(c, kind);
    }
    /* Up (slots to take) once the server's SETTINGS come: on_settings. */
}

static void on_bytes(worker_conn_t *c, const char *data, size_t len)
{
    pconn_t *pc = c->data;
    if (pc->mux == NULL || c->state != WORKER_CONN_IDLE)
        return;
    int kind = worker_h2_mux_feed(pc->mux, data, len);
    if (kind != 0) {
        pc->why = kind;
        worker_conn_abort(c, kind);
        return;
    }
    note_goaway(pc);
}

/* A connect failed (refused, timed out, TLS): as a close before it came up. */
static void on_done(worker_conn_t *c, const worker_conn_result_t *r)
{
    conn_lost(c->data, r->kind);
}

static void on_closed(worker_conn_t *c)
{
    pconn_t *pc = c->data;
    conn_lost(pc, pc->why);
}

static void handle_gone(worker_h2_shared_t *p)
{
    if (--p->handles > 0)
        return;
    engine_run_t *r = p->r;
    worker_h2_slots_free(&p->slots);
    free(p->pc);
    free(p);
    engine_run_pool_closed(r);
}

static void on_destroyed(worker_conn_t *c)
{
    pconn_t *pc = c->data;
    worker_h2_mux_close(pc->mux); /* no stream is left: every user is gone */
    pc->mux = NULL;
    handle_gone(pc->p);
}

static void on_handle_closed(uv_handle_t *h)
{
    handle_gone(h->data);
}

/* Writing: the streams users started in one turn of the loop leave together, a write per
 * connection (h2load's batching) instead of one per request. */

static void on_no_wait(uv_idle_t *h)
{
    (void)h; /* its being active is what counts: the poll does not block */
}

static void on_flush(uv_check_t *h)
{
    worker_h2_shared_t *p = h->data;
    uv_check_stop(&p->flusher);
    uv_idle_stop(&p->no_wait);
    p->sending++; /* ends that writing makes reach their users on the next turn */
    for (uint32_t i = 0; i < p->slots.n_conns; i++) {
        pconn_t *pc = &p->pc[i];
        int kind = pc->mux != NULL ? worker_h2_mux_flush(pc->mux) : 0;
        if (kind != 0)
            worker_conn_abort(&pc->conn, kind);
    }
    p->sending--;
}

static void on_flush_due(worker_h2_mux_t *m)
{
    pconn_t *pc = worker_h2_mux_data(m);
    worker_h2_shared_t *p = pc->p;
    if (p->closing)
        return;
    uv_check_start(&p->flusher, on_flush);
    uv_idle_start(&p->no_wait, on_no_wait);
}

/* Streams past the request timeout are reset; they end as timeouts. */
static void on_sweep(uv_timer_t *t)
{
    worker_h2_shared_t *p = t->data;
    uint64_t now = uv_hrtime();
    for (uint32_t i = 0; i < p->slots.n_conns; i++) {
        pconn_t *pc = &p->pc[i];
        if (pc->mux == NULL || !worker_h2_mux_busy(pc->mux))
            continue;
        int kind = worker_h2_mux_expire(pc->mux, now);
        if (kind != 0)
            worker_conn_abort(&pc->conn, kind);
    }
}

/* The pool */

static int init_conn(worker_h2_shared_t *p, uint32_t i)
{
    engine_run_t *r = p->r;
    worker_engine_t *e = r->engine;
    pconn_t *pc = &p->pc[i];
    pc->p = p;
    pc->i = i;
    if (worker_conn_init(&pc->conn, &e->loop, e->rbuf, sizeof e->rbuf, &conn_cbs, pc) != 0)
        return LC_EIO;
    worker_conn_set_pool(&pc->conn, &e->pool);
    if (r->plan->origins[0].tls != NULL)
        worker_tls_attach(&pc->conn, r->plan->origins[0].tls, e->index, &r->stats);
    else
        worker_conn_set_h2c(&pc->conn);
    return 0;
}

worker_h2_shared_t *worker_h2_shared_new(engine_run_t *r)
{
    worker_engine_t *e = r->engine;
    const lc_scenario_t *sc = &r->plan->scenario;
    assert(sc->h2_pool.connections > 0 && sc->h2_pool.max_streams > 0);
    uint32_t n = worker_h2_pool_share(sc->h2_pool.connections, e->n_engines, e->index);
    worker_h2_shared_t *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    p->r = r;
    if ((p->pc = calloc(n, sizeof *p->pc)) == NULL ||
        worker_h2_slots_init(&p->slots, n, sc->h2_pool.max_streams) != 0) {
        worker_h2_slots_free(&p->slots);
        free(p->pc);
        free(p);
        return NULL;
    }
    uv_timer_init(&e->loop, &p->sweep); /* libuv's timer, check and idle inits cannot fail */
    uv_timer_init(&e->loop, &p->later_timer);
    uv_check_init(&e->loop, &p->flusher);
    uv_idle_init(&e->loop, &p->no_wait);
    p->sweep.data = p->later_timer.data = p->flusher.data = p->no_wait.data = p;
    p->handles = 4;
    uint32_t i = 0;
    while (i < n && init_conn(p, i) == 0)
        i++;
    p->handles += i;
    r->handles++;
    if (i < n) { /* out of handles: close what opened, through the normal path */
        lc_error("engine", "msg=\"cannot open the run's HTTP/2 pool\" run=%llu",
                 (unsigned long long)r->id);
        p->slots.n_conns = i;
        worker_h2_shared_close(p);
        return NULL;
    }
    uv_timer_start(&p->sweep, on_sweep, SWEEP_MS, SWEEP_MS);
    return p;
}

int worker_h2_shared_send(worker_h2_shared_t *p, worker_user_t *u)
{
    assert(p != NULL && u->preq == NULL && !p->closing);
    worker_h2_preq_t *q = calloc(1, sizeof *q);
    if (q == NULL)
        return LC_ENOMEM;
    q->user = u;
    q->asked_ns = uv_hrtime();
    u->preq = q;
    p->sending++;
    int i = worker_h2_slots_acquire(&p->slots, &q->waiter);
    if (i >= 0)
        start_stream(p, q, (uint32_t)i);
    p->sending--;
    connect_down(p);
    return 0;
}

bool worker_h2_shared_unqueue(worker_h2_shared_t *p, worker_user_t *u)
{
    worker_h2_preq_t *q = u->preq;
    if (q == NULL || !q->waiter.queued)
        return false;
    worker_h2_slots_cancel(&p->slots, &q->waiter);
    u->preq = NULL;
    free(q);
    return true;
}

void worker_h2_shared_abort(worker_h2_shared_t *p, worker_user_t *u)
{
    worker_h2_preq_t *q = u->preq;
    if (q == NULL || !q->in_flight)
        return;
    pconn_t *pc = &p->pc[q->conn];
    /* One past its request timeout that the sweep (every SWEEP_MS) has not reached yet ends
     * as a timeout: the mux tells by the clock. */
    int kind = worker_h2_mux_cancel(pc->mux, &q->st, WORKER_ERR_ABORTED, uv_hrtime());
    if (kind != 0)
        worker_conn_abort(&pc->conn, kind);
}

uint32_t worker_h2_shared_connections(const worker_h2_shared_t *p)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->slots.n_conns; i++)
        n += worker_conn_connected(&p->pc[i].conn) ? 1u : 0u;
    return n;
}

void worker_h2_shared_close(worker_h2_shared_t *p)
{
    assert(!p->closing && p->slots.n_waiting == 0 && p->later_head == NULL);
    p->closing = true;
    for (uint32_t i = 0; i < p->slots.n_conns; i++)
        worker_conn_destroy(&p->pc[i].conn);
    uv_close((uv_handle_t *)&p->sweep, on_handle_closed);
    uv_close((uv_handle_t *)&p->later_timer, on_handle_closed);
    uv_close((uv_handle_t *)&p->flusher, on_handle_closed);
    uv_close((uv_handle_t *)&p->no_wait, on_handle_closed);
}
