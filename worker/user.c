/* user.c — the user cycle: closed model (think, repeat) and open model (one start at a time). */
#include "user.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "h2_shared.h"
#include "journey.h"
#include "lc_log.h"
#include "response_body.h"
#include "rng.h"
#include "stats.h"
#include "user_conns.h"
#include "user_internal.h"

static void user_next(worker_user_t *u);
static void user_finish(worker_user_t *u);
static void on_ready(worker_conn_t *c);
static void on_done(worker_conn_t *c, const worker_conn_result_t *r);
static void on_closed(worker_conn_t *c);
static void on_conn_destroyed(worker_conn_t *c);
static void on_think(uv_timer_t *t);

const worker_conn_cbs_t worker_user_conn_cbs = {
    .ready = on_ready,
    .done = on_done,
    .closed = on_closed,
    .destroyed = on_conn_destroyed,
};

#define OOM_RETRY_MS 1000

/* "http2": {"pool"}: the user's requests go through the engine's shared connections. */
static bool pooled(const worker_user_t *u)
{
    return u->run->plan->scenario.h2_pool.connections > 0;
}

/* Whether the request u is making goes through the pool: the pool's connections are the
 * target's, so a journey's requests to its other origins keep connections of their own. */
static bool through_pool(const worker_user_t *u)
{
    return pooled(u) && (u->js == NULL || u->js->origin == 0);
}

static bool ending(const worker_user_t *u)
{
    return u->retiring || u->run->stopping;
}

static void unlink_user(worker_user_t *u)
{
    engine_run_t *r = u->run;
    if (u->prev)
        u->prev->next = u->next;
    else
        r->users = u->next;
    if (u->next)
        u->next->prev = u->prev;
}

static void maybe_free(worker_user_t *u)
{
    if (u->handles > 0)
        return;
    engine_run_t *r = u->run;
    uint64_t id = u->id;
    unlink_user(u);
    lc_buf_free(&u->req);
    worker_journey_free(u);
    free(u);
    r->live--;
    engine_run_user_gone(r, id);
}

static void on_think_close(uv_handle_t *h)
{
    worker_user_t *u = h->data;
    u->handles--;
    maybe_free(u);
}

static void on_conn_destroyed(worker_conn_t *c)
{
    worker_user_t *u = c->data;
    u->handles--;
    worker_user_conn_destroyed(u, c);
    maybe_free(u);
}

/* A journey user's callback from a connection that is not the one its request waits for
 * (a connect it stopped waiting for, before a request to another origin). */
static bool stray(const worker_user_t *u, const worker_conn_t *c)
{
    return u->js != NULL && c != worker_user_conn(u);
}

worker_user_t *worker_user_new(engine_run_t *r, uint64_t id)
{
    worker_engine_t *e = r->engine;
    worker_user_t *u = calloc(1, sizeof *u);
    if (u == NULL)
        return NULL;
    u->run = r;
    u->id = id;
    if ((r->plan->program != NULL && worker_journey_init(u) != 0) ||
        uv_timer_init(&e->loop, &u->think) != 0) {
        worker_journey_free(u);
        free(u);
        engine_run_user_gone(r, id); /* the id is given back wherever a user is freed */
        return NULL;
    }
    u->think.data = u;
    u->handles = 1;
    (void)worker_user_conn_setup(u, &u->conn, 0); /* a failure leaves handles at 1: below */
    u->next = r->users;
    if (r->users)
        r->users->prev = u;
    r->users = u;
    r->live++;
    r->active++;
    if (u->handles < 2) {
        /* The conn timer failed to initialize: unwind through the normal path. */
        u->retiring = true;
        r->active--;
        u->phase = WORKER_USER_FINISH;
        uv_close((uv_handle_t *)&u->think, on_think_close);
        return NULL;
    }
    return u;
}

worker_user_t *worker_user_start(engine_run_t *r, uint64_t id)
{
    worker_user_t *u = worker_user_new(r, id);
    if (u != NULL)
        user_next(u);
    return u;
}

static void user_finish(worker_user_t *u)
{
    if (u->phase == WORKER_USER_FINISH)
        return;
    u->phase = WORKER_USER_FINISH;
    uv_timer_stop(&u->think);
    uv_close((uv_handle_t *)&u->think, on_think_close);
    worker_conn_destroy(&u->conn);
    worker_user_conns_destroy(u);
}

/* A journey user between requests winds down (on_stop); a connect in progress is left to
 * finish unheard. */
static void journey_wind_down(worker_user_t *u)
{
    if (u->js->section >= WORKER_SECTION_STOP && u->phase != WORKER_USER_CONNECT)
        return; /* on_stop is running: it goes on */
    if (u->phase == WORKER_USER_CONNECT) {
        u->phase = WORKER_USER_THINK;
        lc_buf_free(&u->req);
    }
    worker_journey_wind_down(u);
}

void worker_user_retire(worker_user_t *u)
{
    if (u->retiring || u->phase == WORKER_USER_FINISH)
        return;
    u->retiring = true;
    u->run->active--;
    if (u->phase != WORKER_USER_REQUEST && u->js != NULL)
        journey_wind_down(u);
    else if (u->phase != WORKER_USER_REQUEST)
        user_finish(u);
}

/* Takes back u's request through the pool when it has not gone out: queued for a slot, or
 * waiting to fail because the pool could not take it (on_pool_unavailable); nothing is
 * counted then. False when it is in flight (it ends as usual) or u has none. */
static bool pool_take_back(worker_user_t *u)
{
    if (!through_pool(u) || u->phase != WORKER_USER_REQUEST)
        return false;
    if (u->preq == NULL) { /* refused by the pool: its timer is the only thing pending */
        uv_timer_stop(&u->think);
        return true;
    }
    return u->run->h2pool != NULL && worker_h2_shared_unqueue(u->run->h2pool, u);
}

void worker_user_stop(worker_user_t *u)
{
    if (u->js != NULL) {
        /* Nothing sent through the pool yet: as with a connect in progress. */
        if (pool_take_back(u))
            u->phase = WORKER_USER_CONNECT;
        if (u->phase != WORKER_USER_REQUEST && u->phase != WORKER_USER_FINISH)
            journey_wind_down(u);
        return;
    }
    /* A connect in progress has sent nothing yet; but a connection that is
     * closing with a result pending (e.g. after Connection: close) still owes
     * that result to the counters. */
    if (pooled(u)) {
        /* Not sent yet: nothing is counted. In flight: it ends. */
        if (u->phase != WORKER_USER_REQUEST || pool_take_back(u))
            user_finish(u);
        return;
    }
    if (u->phase != WORKER_USER_REQUEST ||
        !(worker_conn_connected(&u->conn) || u->conn.pending))
        user_finish(u);
}

void worker_user_abort(worker_user_t *u)
{
    if (through_pool(u) && u->phase == WORKER_USER_REQUEST) {
        if (pool_take_back(u))
            user_finish(u);
        else if (u->run->h2pool != NULL)
            worker_h2_shared_abort(u->run->h2pool, u);
        return;
    }
    worker_conn_t *c = worker_user_conn(u);
    if (u->phase == WORKER_USER_REQUEST && c != NULL)
        worker_conn_abort(c, WORKER_ERR_ABORTED);
}

/* A task's request, rendered into the engine's scratch buffer (the iteration counted). */
static int task_out(worker_user_t *u, worker_req_out_t *out)
{
    worker_engine_t *e = u->run->engine;
    const worker_plan_t *p = u->run->plan;
    const worker_task_plan_t *tp = &p->tasks[u->task];
    worker_tpl_vars_t vars = {.user_id = u->id, .iteration = u->iteration, .rng = &e->rng};
    /* A body checked is read as its Content-Encoding says. */
    static const char *const coding_name[] = {"content-encoding"};
    static const size_t coding_len[] = {16};
    static const worker_hdr_want_t coding = {.names = coding_name, .lens = coding_len, .n = 1};
    bool capture = tp->task->expect_body_contains != NULL;
    u->iteration++;
    *out = (worker_req_out_t){.head = tp->head,
                              .capture = capture,
                              .timeout_ms = p->scenario.request_timeout_ms,
                              .want = capture ? &coding : NULL};
    return worker_plan_render(p, u->task, &vars, &e->body_scratch, &e->req_scratch, &out->data,
                              &out->len);
}

static void send_request(worker_user_t *u)
{
    assert(u->phase == WORKER_USER_CONNECT);
    u->phase = WORKER_USER_REQUEST;
    if (u->js != NULL) {
        worker_journey_send(u);
        return;
    }
    worker_req_out_t out;
    if (task_out(u, &out) != 0) {
        /* Nothing was sent, so nothing is counted; the user tries again a
         * second later rather than stalling (the connection stays open). */
        lc_error("engine", "msg=\"out of memory rendering a request\" run=%llu",
                 (unsigned long long)u->run->id);
        u->phase = WORKER_USER_THINK;
        uv_timer_start(&u->think, on_think, OOM_RETRY_MS, 0);
        return;
    }
    worker_conn_send_out(&u->conn, &out);
}

/* The pool could not take the request: it fails as aborted, a second later rather than in a
 * spin. */
static void on_pool_unavailable(uv_timer_t *t)
{
    static const worker_conn_result_t aborted = {.kind = WORKER_ERR_ABORTED,
                                                 .latency_us = WORKER_NO_LATENCY};
    worker_user_pool_done(t->data, &aborted);
}

/* Through the engine's HTTP/2 pool: the request is rendered (task) or taken (journey, from
 * u->req) once it has a stream (worker_user_pool_request). Without a pool (it could not open:
 * logged) or out of memory, the request fails as aborted a second later. */
static void pool_send(worker_user_t *u)
{
    engine_run_t *r = u->run;
    u->phase = WORKER_USER_REQUEST;
    if (r->h2pool != NULL && worker_h2_shared_send(r->h2pool, u) == 0)
        return;
    if (r->h2pool != NULL)
        lc_error("engine", "msg=\"out of memory queueing a request\" run=%llu",
                 (unsigned long long)r->id);
    uv_timer_start(&u->think, on_pool_unavailable, OOM_RETRY_MS, 0);
}

static void journey_next(worker_user_t *u)
{
    if (worker_user_ending_now(u))
        user_finish(u);
    else if (ending(u) && u->js->section < WORKER_SECTION_STOP)
        worker_journey_wind_down(u);
    else
        worker_journey_resume(u);
}

static void user_next(worker_user_t *u)
{
    assert(u->phase == WORKER_USER_THINK); /* a new user, or one done thinking or idle */
    if (u->js != NULL) {
        journey_next(u);
        return;
    }
    if (ending(u)) {
        user_finish(u);
        return;
    }
    u->task = (uint32_t)worker_plan_pick(u->run->plan, &u->run->engine->rng);
    worker_user_connect(u);
}

static void on_think(uv_timer_t *t)
{
    user_next(t->data);
}

void worker_user_begin(worker_user_t *u, uint64_t intended_ns)
{
    u->intended_ns = intended_ns;
    user_next(u);
}

static void think(worker_user_t *u)
{
    const lc_scenario_t *sc = &u->run->plan->scenario;
    u->phase = WORKER_USER_THINK;
    uint64_t ms = sc->think_max_ms > sc->think_min_ms
                      ? worker_rng_range(&u->run->engine->rng, sc->think_min_ms, sc->think_max_ms)
                      : sc->think_min_ms;
    if (ms == 0)
        user_next(u);
    else
        worker_user_wait(u, ms); /* a long think lets the connection drop its idle state */
}

/* Whether the user may not issue anything new: a journey's on_stop still may, until the
 * stop deadline. */
static bool blocked(const worker_user_t *u)
{
    if (u->js != NULL && u->js->section == WORKER_SECTION_STOP)
        return u->run->deadline_passed;
    return ending(u);
}

static void on_ready(worker_conn_t *c)
{
    worker_user_t *u = c->data;
    if (stray(u, c))
        return; /* it stays open, idle, until its origin's next request or its idle timeout */
    if (u->js != NULL && blocked(u) && u->phase == WORKER_USER_CONNECT)
        journey_wind_down(u);
    else if (blocked(u))
        user_finish(u); /* connected, but nothing new may be issued any more */
    else if (u->phase == WORKER_USER_CONNECT)
        send_request(u);
}

static void on_closed(worker_conn_t *c)
{
    worker_user_t *u = c->data;
    if (stray(u, c) || u->phase != WORKER_USER_CONNECT) {
        worker_user_conn_idle_closed(u, c); /* another origin's: freed until it is used again */
        return;
    }
    if (u->js != NULL && blocked(u)) {
        journey_wind_down(u);
        return;
    }
    if (blocked(u)) {
        user_finish(u);
        return;
    }
    worker_conn_connect(c, worker_user_addr(u), u->run->plan->scenario.connect_timeout_ms);
}

/* Whether the body, decoded, holds text: WORKER_KIND_OK, or kind expect or parse. */
static int body_contains(worker_user_t *u, const char *text, const worker_conn_result_t *r)
{
    worker_body_t b;
    const char *data, *why;
    size_t len;
    worker_body_open(&b, r, &u->run->engine->pool);
    int kind = worker_body_decoded(&b, &data, &len, &why) != 0 ? WORKER_ERR_PARSE
               : memmem(data, len, text, strlen(text)) == NULL ? WORKER_ERR_EXPECT
                                                              : WORKER_KIND_OK;
    worker_body_close(&b);
    return kind;
}

/* Success, or the kind of failure, of a complete response. */
static int classify(worker_user_t *u, const lc_task_t *t, const worker_conn_result_t *r)
{
    if (r->kind != WORKER_KIND_OK)
        return r->kind;
    if (t->n_expect_status > 0) {
        size_t i = 0;
        while (i < t->n_expect_status && t->expect_status[i] != r->status)
            i++;
        if (i == t->n_expect_status)
            return WORKER_ERR_STATUS;
    } else if (r->status >= 400) {
        return WORKER_ERR_STATUS;
    }
    if (t->expect_body_contains != NULL)
        return body_contains(u, t->expect_body_contains, r);
    return WORKER_KIND_OK;
}

/* The open model times a request from its intended start, not from the write,
 * so a stall also counts against the requests that queued behind it (wrk2's
 * coordinated-omission correction). The latency counts from r->sent_ns: the write, or
 * through the HTTP/2 pool the ask (a wait for a stream is in it already). */
static uint64_t latency_of(const worker_user_t *u, const worker_conn_result_t *r)
{
    if (!u->run->open || r->latency_us == WORKER_NO_LATENCY)
        return r->latency_us;
    uint64_t sent = r->sent_ns;
    return r->latency_us + (sent > u->intended_ns ? (sent - u->intended_ns) / 1000u : 0);
}

/* Open model: the request ended; the user waits in the pool for a start. */
static void go_idle(worker_user_t *u)
{
    u->phase = WORKER_USER_THINK;
    engine_run_user_idle(u->run, u);
}

static void task_done(worker_user_t *u, const worker_conn_result_t *r);

static void on_done(worker_conn_t *c, const worker_conn_result_t *r)
{
    worker_user_t *u = c->data;
    if (u->js != NULL) {
        if (stray(u, c) && c->state == WORKER_CONN_CLOSED)
            worker_user_conn_idle_closed(u, c);
        if (u->phase == WORKER_USER_THINK || stray(u, c))
            return; /* a connect the user stopped waiting for (it wound down) */
        u->phase = WORKER_USER_THINK;
        worker_journey_done(u, r);
        return;
    }
    /* A result comes for a connect or a request; a finishing user gets none. */
    assert(u->phase == WORKER_USER_CONNECT || u->phase == WORKER_USER_REQUEST);
    task_done(u, r);
}

/* A task's request ended (over the user's connection or the pool): counted, then the next. */
static void task_done(worker_user_t *u, const worker_conn_result_t *r)
{
    engine_run_t *run = u->run;
    assert(u->task < run->plan->n_tasks);
    const worker_task_plan_t *tp = &run->plan->tasks[u->task];
    worker_stats_record(run->stats, tp->endpoint, classify(u, tp->task, r), latency_of(u, r),
                        r->bytes);
    if (ending(u))
        user_finish(u);
    else if (run->open)
        go_idle(u);
    else
        think(u);
}

/* What journey.c and journey_http.c borrow (user_internal.h). */

void worker_user_wait_cb(worker_user_t *u, uint64_t ms, uv_timer_cb cb)
{
    assert(u->phase != WORKER_USER_FINISH);
    if (ms == 0) {
        /* A second 0 ms wait in one pass of the loop came from a timer callback: libuv 1.44
         * would run it in this pass again (see WORKER_YIELD_MS), and a journey whose
         * iterations never wait on I/O would hold the loop for good. */
        uint8_t pass = u->run->engine->pass;
        if (u->zero_pass == pass)
            ms = WORKER_YIELD_MS;
        u->zero_pass = pass;
    }
    u->phase = WORKER_USER_THINK;
    uv_timer_start(&u->think, cb, ms, 0);
    if (ms < WORKER_IDLE_CONN_MS)
        return;
    /* A long wait: the target's connection and the current step's drop their idle state. */
    worker_conn_t *c = worker_user_conn(u);
    worker_conn_idle(&u->conn);
    if (c != NULL && c != &u->conn)
        worker_conn_idle(c);
}

void worker_user_wait(worker_user_t *u, uint64_t ms)
{
    worker_user_wait_cb(u, ms, on_think);
}

void worker_user_connect(worker_user_t *u)
{
    if (through_pool(u)) {
        pool_send(u);
        return;
    }
    worker_conn_t *c = worker_user_conn(u);
    assert(c != NULL); /* worker_user_conn_open made it */
    u->phase = WORKER_USER_CONNECT;
    switch (c->state) {
    case WORKER_CONN_IDLE:
        send_request(u);
        break;
    case WORKER_CONN_CLOSED:
        worker_conn_connect(c, worker_user_addr(u), u->run->plan->scenario.connect_timeout_ms);
        break;
    default:
        break; /* closing: on_closed connects */
    }
}

void worker_user_finish(worker_user_t *u)
{
    user_finish(u);
}

bool worker_user_ending(const worker_user_t *u)
{
    return ending(u);
}

bool worker_user_ending_now(const worker_user_t *u)
{
    return u->run->deadline_passed;
}

void worker_user_idle(worker_user_t *u)
{
    go_idle(u);
}

void worker_user_pool_done(worker_user_t *u, const worker_conn_result_t *r)
{
    assert(u->phase == WORKER_USER_REQUEST);
    if (u->js != NULL) {
        u->phase = WORKER_USER_THINK;
        worker_journey_done(u, r);
        return;
    }
    task_done(u, r);
}

int worker_user_pool_request(worker_user_t *u, worker_req_out_t *out)
{
    assert(u->phase == WORKER_USER_REQUEST);
    if (u->js == NULL)
        return task_out(u, out);
    /* A journey's request waited in u->req: its own connection is never idle with a pool,
     * so send_now copied it there. */
    assert(u->req.data != NULL);
    worker_journey_out(u, out);
    return 0;
}

void worker_user_pool_sent(worker_user_t *u)
{
    lc_buf_free(&u->req); /* the stream has its own copy; a redirect renders anew */
}
