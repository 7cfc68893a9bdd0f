/* engine.c — engine threads: the loop, the inbox, each run's users under its workload model. */
#include "engine.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "h2_shared.h"
#include "journey_lua.h"
#include "lc_err.h"
#include "lc_extract.h"
#include "lc_log.h"
#include "user.h"
#include "user_conns.h"
#include "user_ids.h"

#define LAG_TICK_MS 100u

/* After QUIT with no run left: the loop ends once these are closed. */
static void close_loop_handles(worker_engine_t *e)
{
    uv_close((uv_handle_t *)&e->lag_timer, NULL);
    uv_close((uv_handle_t *)&e->pass_check, NULL);
    worker_mailbox_close(&e->inbox, NULL);
}

static void post_to_control(worker_engine_t *e, worker_msg_t *m)
{
    m->engine = e->index;
    worker_mailbox_post(e->to_control, m);
}

static engine_run_t *find_run(worker_engine_t *e, uint64_t id)
{
    for (engine_run_t *r = e->runs; r != NULL; r = r->next)
        if (r->id == id && !r->closing)
            return r;
    return NULL;
}

static uint32_t count_connections(const engine_run_t *r)
{
    uint32_t n = 0;
    for (const worker_user_t *u = r->users; u != NULL; u = u->next)
        n += worker_user_connections(u);
    if (r->h2pool != NULL)
        n += worker_h2_shared_connections(r->h2pool);
    return n;
}

/* Starts one closed-model user; false when it cannot start (logged), or not yet: a retiring
 * user still holds the last free ${user_id} (the spawn or ramp timer tries again). */
static bool start_user(engine_run_t *r)
{
    uint64_t id;
    if (!worker_user_ids_take(&r->ids, &id))
        return false;
    if (worker_user_start(r, id) != NULL)
        return true;
    lc_error("engine", "msg=\"cannot start a user\" run=%llu", (unsigned long long)r->id);
    return false;
}

/* Fewer users: the newest go first, each after its request in flight. */
static void retire_down(engine_run_t *r)
{
    for (worker_user_t *u = r->users; u != NULL && r->active > r->target; u = u->next)
        worker_user_retire(u);
}

/* Where the run's timeline stands (ms) at uv_hrtime now_ns. */
static double run_time_ms(const engine_run_t *r, uint64_t now_ns)
{
    return r->t0_ms + (double)(now_ns - r->t0_ns) / 1e6;
}

/* Spawning: users start at spawn_rate per second from spawn_t0 until target. */

static void spawn_tick(uv_timer_t *t)
{
    engine_run_t *r = t->data;
    worker_engine_t *e = r->engine;
    if (r->stopping)
        return;
    uint64_t due = UINT64_MAX;
    if (r->spawn_rate > 0)
        due = (uint64_t)((double)(uv_now(&e->loop) - r->spawn_t0) * r->spawn_rate / 1000.0) + 1;
    while (r->active < r->target && r->spawned < due) {
        r->spawned++;
        if (!start_user(r))
            break;
    }
    if (r->active >= r->target)
        uv_timer_stop(&r->spawn_timer);
}

static void run_scale(engine_run_t *r, uint32_t users, double spawn_rate)
{
    r->target = users;
    if (r->active < r->target) {
        r->spawn_rate = spawn_rate;
        r->spawn_t0 = uv_now(&r->engine->loop);
        r->spawned = 0;
        uint64_t period = spawn_rate > 0 ? (uint64_t)(1000.0 / spawn_rate) : 1;
        period = period < 1 ? 1 : period > 1000 ? 1000 : period;
        uv_timer_start(&r->spawn_timer, spawn_tick, 0, period);
        return;
    }
    uv_timer_stop(&r->spawn_timer);
    retire_down(r);
}

/* Closed model with stages (k6 ramping-vus): every RAMP_TICK_MS the users
 * are set to the ramp's value, scaled to this engine's share; spawn_rate does
 * not apply, the ramp is the spawn schedule. After the last stage it holds. */

#define RAMP_TICK_MS 10u

static void ramp_tick(uv_timer_t *t)
{
    engine_run_t *r = t->data;
    worker_engine_t *e = r->engine;
    const lc_scenario_t *sc = &r->plan->scenario;
    if (r->stopping)
        return;
    double now = run_time_ms(r, uv_hrtime()), end = 0;
    r->target = worker_stages_share(worker_stages_at(sc->stages, sc->n_stages, now), r->share,
                                    e->index, e->n_engines);
    while (r->active < r->target)
        if (!start_user(r))
            break;
    retire_down(r);
    for (size_t i = 0; i < sc->n_stages; i++)
        end += (double)sc->stages[i].duration_ms;
    if (now >= end)
        uv_timer_stop(&r->spawn_timer);
}

/* Open model: the pacer says when each start is due; a start takes an idle
 * user, or creates one while the pool is below its bound, or is dropped. */

static uint64_t intended_ns(const engine_run_t *r, double t_ms)
{
    double d = (t_ms - r->t0_ms) * 1e6;
    return r->t0_ns + (d > 0 ? (uint64_t)d : 0);
}

static worker_user_t *take_user(engine_run_t *r)
{
    worker_user_t *u = r->idle;
    if (u != NULL) {
        r->idle = u->idle_next;
        u->idle_next = NULL;
        return u;
    }
    uint64_t id;
    if (r->active >= r->target || !worker_user_ids_take(&r->ids, &id))
        return NULL; /* a full pool, or retiring users hold the ids: starts are dropped */
    if ((u = worker_user_new(r, id)) == NULL && !r->create_failed) {
        r->create_failed = true; /* once: its starts are counted as dropped */
        lc_error("engine", "msg=\"cannot create a user: starts dropped\" run=%llu",
                 (unsigned long long)r->id);
    }
    return u;
}

/* uv timers tick in whole ms of a coarse clock: a timer wakes up to 1 ms
 * either side of a start's time. Starts up to PACE_LEAD_MS ahead go out with
 * the tick rather than 1–2 ms late (the rate is unchanged: each start keeps
 * its slot), and a late one is timed from its intended start anyway. */
#define PACE_LEAD_MS 1.0

static void pace_tick(uv_timer_t *t);

/* Arms the timer for the start due at due_ms (never for a rate that stays 0:
 * a rescale rearms it); never 0 for a start still ahead, which would spin. */
static void pace_arm(engine_run_t *r, double due_ms)
{
    if (isinf(due_ms)) {
        uv_timer_stop(&r->spawn_timer);
        return;
    }
    uv_loop_t *loop = &r->engine->loop;
    uv_update_time(loop);
    uint64_t fire = intended_ns(r, due_ms) / 1000000u, now = uv_now(loop);
    uv_timer_start(&r->spawn_timer, pace_tick, fire > now ? fire - now : 1, 0);
}

/* Issues every start whose time has passed (or comes within the lead), each
 * with its own intended time (a late tick catches up), then arms the timer
 * for the next one. */
static void pace_tick(uv_timer_t *t)
{
    engine_run_t *r = t->data;
    if (r->stopping)
        return;
    double now = run_time_ms(r, uv_hrtime()), due;
    while ((due = worker_pacer_due(&r->pacer)) <= now + PACE_LEAD_MS) {
        worker_user_t *u = take_user(r);
        if (u == NULL) {
            /* No user is free and none can be added before the next loop
             * iteration: every start due by now is dropped. */
            uint64_t n = worker_pacer_pending(&r->pacer, now);
            if (n == 0)
                break; /* within the lead: it may find a user at its time */
            r->stats->dropped += n;
            worker_pacer_skip(&r->pacer, n);
            continue;
        }
        worker_pacer_advance(&r->pacer);
        worker_user_begin(u, intended_ns(r, due));
    }
    pace_arm(r, due);
}

/* users: the pool's bound; rate: this engine's requests/s (of arrival_rate). */
static void open_scale(engine_run_t *r, uint32_t users, double rate, bool first)
{
    const lc_scenario_t *sc = &r->plan->scenario;
    worker_engine_t *e = r->engine;
    /* Stage targets are the scenario's requests/s: scale them by our part. */
    double scale = sc->n_stages > 0 ? rate / sc->arrival_rate : rate;
    r->target = users;
    if (first) {
        worker_pacer_init(&r->pacer, sc->stages, sc->n_stages, scale,
                          (double)e->index / e->n_engines, r->t0_ms);
    } else {
        pace_tick(&r->spawn_timer); /* what was due goes out at the old rate */
        worker_pacer_rescale(&r->pacer, run_time_ms(r, uv_hrtime()), scale);
    }
    /* A smaller pool: idle users beyond it go now, busy ones after their request. */
    while (r->active > r->target && r->idle != NULL) {
        worker_user_t *u = r->idle;
        r->idle = u->idle_next;
        worker_user_retire(u);
    }
    uv_timer_start(&r->spawn_timer, pace_tick, 0, 0);
}

void engine_run_user_idle(engine_run_t *r, worker_user_t *u)
{
    assert(r->open && u->run == r && !r->stopping); /* open-model users, between requests */
    if (r->active > r->target) {
        worker_user_retire(u);
        return;
    }
    u->idle_next = r->idle;
    r->idle = u;
}

/* The share's ${user_id}s: a new share numbers its users afresh (from its base on), a rescale
 * changes how many this engine may hand out; either way the ids of the users still running
 * (retiring, or kept by a rescale) stay theirs. */
static void share_ids(engine_run_t *r, const worker_msg_t *m)
{
    if (worker_user_ids_share(&r->ids, m->user_base, m->users) != 0) {
        lc_error("engine", "msg=\"out of memory for user ids: the share keeps its old ones\" "
                 "run=%llu", (unsigned long long)r->id);
        return;
    }
    for (const worker_user_t *u = r->users; u != NULL; u = u->next)
        worker_user_ids_hold(&r->ids, u->id);
}

/* Applies a start or a rescale under the run's model. */
static void run_apply(engine_run_t *r, const worker_msg_t *m, bool first)
{
    const lc_scenario_t *sc = &r->plan->scenario;
    share_ids(r, m);
    if (r->open) {
        open_scale(r, m->users, m->rate, first);
    } else if (r->ramped) {
        r->share = sc->users > 0 ? (double)m->users / sc->users : 0;
        uv_timer_start(&r->spawn_timer, ramp_tick, 0, RAMP_TICK_MS);
    } else {
        run_scale(r, m->users, m->spawn_rate);
    }
}

/* One of r's handles (or its pool) is closed; the last one ends the run here. */
static void run_handle_gone(engine_run_t *r)
{
    if (--r->handles > 0)
        return;
    worker_engine_t *e = r->engine;
    engine_run_t **pp = &e->runs;
    while (*pp != r)
        pp = &(*pp)->next;
    *pp = r->next;
    if (!e->quitting) {
        worker_msg_t *m = worker_msg_new(WORKER_MSG_RUN_DONE);
        if (m != NULL) {
            m->run = r->id;
            m->stats = r->stats;
            r->stats = NULL;
            post_to_control(e, m);
        } else {
            lc_error("engine", "msg=\"out of memory: final counters lost\" run=%llu",
                     (unsigned long long)r->id);
        }
    }
    worker_stats_free(r->stats);
    worker_lua_run_close(r);
    worker_user_ids_free(&r->ids);
    free(r);
    if (e->quitting && e->runs == NULL)
        close_loop_handles(e);
}

static void on_run_handle_close(uv_handle_t *h)
{
    run_handle_gone(h->data);
}

void engine_run_pool_closed(engine_run_t *r)
{
    r->h2pool = NULL;
    run_handle_gone(r);
}

void engine_run_exhausted(engine_run_t *r, uint32_t f)
{
    if (r->exhausted_told)
        return;
    worker_msg_t *m = worker_msg_new(WORKER_MSG_RUN_EXHAUSTED);
    if (m == NULL) {
        lc_error("engine", "msg=\"out of memory: a feeder's end not told\" run=%llu",
                 (unsigned long long)r->id);
        return;
    }
    r->exhausted_told = true;
    m->run = r->id;
    m->feeder = f;
    post_to_control(r->engine, m);
}

/* A stopping run whose last user is gone closes. */
static void run_close_when_empty(engine_run_t *r)
{
    if (!r->stopping || r->live > 0 || r->closing)
        return;
    r->closing = true;
    if (r->h2pool != NULL)
        worker_h2_shared_close(r->h2pool);
    uv_close((uv_handle_t *)&r->spawn_timer, on_run_handle_close);
    uv_close((uv_handle_t *)&r->deadline_timer, on_run_handle_close);
}

void engine_run_user_gone(engine_run_t *r, uint64_t id)
{
    worker_user_ids_give(&r->ids, id);
    run_close_when_empty(r);
}

static void on_deadline(uv_timer_t *t)
{
    engine_run_t *r = t->data;
    r->deadline_passed = true;
    for (worker_user_t *u = r->users; u != NULL; u = u->next)
        worker_user_abort(u);
}

static void run_stop(engine_run_t *r, uint32_t deadline_ms)
{
    if (r->stopping)
        return;
    r->stopping = true;
    uv_timer_stop(&r->spawn_timer);
    r->idle = NULL; /* idle users end with the others */
    for (worker_user_t *u = r->users; u != NULL; u = u->next)
        worker_user_stop(u);
    uv_timer_start(&r->deadline_timer, on_deadline, deadline_ms, 0);
    run_close_when_empty(r); /* done at once when no user had anything in flight */
}

/* The run's sandbox: the one the control thread loaded off this loop, else (it could not)
 * loaded here. */
static void run_lua(engine_run_t *r, worker_msg_t *m)
{
    if (m->lua != NULL) {
        worker_lua_run_attach(r, m->lua);
        m->lua = NULL;
        return;
    }
    lc_warn("engine", "msg=\"the run's script loads on the engine's loop\" run=%llu",
            (unsigned long long)r->id);
    if (worker_lua_run_open(r) != 0)
        lc_error("engine", "msg=\"out of memory for the run's script: its lua steps fail\" "
                 "run=%llu", (unsigned long long)r->id);
}

static void run_start(worker_engine_t *e, worker_msg_t *m)
{
    assert(m->plan != NULL);
    engine_run_t *r = calloc(1, sizeof *r);
    if (r == NULL || (r->stats = worker_stats_new(m->plan->n_endpoints)) == NULL) {
        free(r);
        lc_error("engine", "msg=\"out of memory starting a run\" run=%llu",
                 (unsigned long long)m->run);
        return;
    }
    r->engine = e;
    r->id = m->run;
    r->plan = m->plan;
    worker_user_ids_init(&r->ids, e->index, e->n_engines);
    r->t0_ns = uv_hrtime();
    r->t0_ms = (double)m->plan->offset_ms;
    r->open = m->plan->scenario.arrival_rate > 0;
    r->ramped = !r->open && m->plan->scenario.n_stages > 0;
    uv_timer_init(&e->loop, &r->spawn_timer);
    uv_timer_init(&e->loop, &r->deadline_timer);
    r->spawn_timer.data = r->deadline_timer.data = r;
    r->handles = 2;
    r->next = e->runs;
    e->runs = r;
    if (m->plan->scenario.script != NULL)
        run_lua(r, m);
    if (m->plan->scenario.h2_pool.connections > 0 && (r->h2pool = worker_h2_shared_new(r)) == NULL)
        lc_error("engine", "msg=\"cannot open the run's HTTP/2 pool: its requests fail\" run=%llu",
                 (unsigned long long)r->id);
    run_apply(r, m, true);
}

/* Hands every run's counters to the control thread and starts fresh ones. */
static void collect(worker_engine_t *e, uint64_t round)
{
    for (engine_run_t *r = e->runs; r != NULL; r = r->next) {
        if (r->closing)
            continue;
        worker_stats_t *fresh = worker_stats_new(r->stats->n);
        worker_msg_t *m = worker_msg_new(WORKER_MSG_RUN_STATS);
        if (fresh == NULL || m == NULL) {
            /* Keep counting into the old block: it goes out with a later round. */
            worker_stats_free(fresh);
            worker_msg_free(m);
            continue;
        }
        m->run = r->id;
        m->stats = r->stats;
        m->users = r->stopping ? 0 : r->active;
        m->connections = count_connections(r);
        r->stats = fresh;
        post_to_control(e, m);
    }
    worker_msg_t *end = worker_msg_new(WORKER_MSG_ROUND_END);
    if (end != NULL) {
        end->round = round;
        post_to_control(e, end);
    }
}

static void quit(worker_engine_t *e)
{
    e->quitting = true;
    if (e->runs == NULL) {
        close_loop_handles(e);
        return;
    }
    /* Forced: users end now, nothing more is counted or reported. */
    for (engine_run_t *r = e->runs; r != NULL; r = r->next) {
        r->stopping = true;
        uv_timer_stop(&r->spawn_timer);
        r->idle = NULL;
        for (worker_user_t *u = r->users; u != NULL; u = u->next) {
            worker_user_retire(u);
            worker_user_abort(u);
        }
        run_close_when_empty(r);
    }
}

static void handle(worker_engine_t *e, worker_msg_t *m)
{
    engine_run_t *r = m->type == WORKER_MSG_RUN_SCALE || m->type == WORKER_MSG_RUN_STOP
                          ? find_run(e, m->run)
                          : NULL;
    switch (m->type) {
    case WORKER_MSG_RUN_START:
        run_start(e, m);
        break;
    case WORKER_MSG_RUN_SCALE:
        if (r != NULL && !r->stopping)
            run_apply(r, m, false);
        break;
    case WORKER_MSG_RUN_STOP:
        if (r != NULL)
            run_stop(r, m->deadline_ms);
        break;
    case WORKER_MSG_COLLECT:
        collect(e, m->round);
        break;
    case WORKER_MSG_QUIT:
        quit(e);
        break;
    default:
        break;
    }
}

static void on_inbox(uv_async_t *a)
{
    worker_engine_t *e = a->loop->data;
    worker_msg_t *m = worker_mailbox_take(&e->inbox);
    while (m != NULL && !e->quitting) {
        worker_msg_t *next = m->next;
        handle(e, m);
        worker_msg_free(m);
        m = next;
    }
    while (m != NULL) { /* after QUIT nothing else is handled */
        worker_msg_t *next = m->next;
        worker_msg_free(m);
        m = next;
    }
}

/* A timer due every LAG_TICK_MS: how late it runs is how long a callback
 * waited behind others, which is also how late requests start. It also lets a quiet run's
 * script sandbox collect its garbage (worker_lua_run_tick). */
static void lag_tick(uv_timer_t *t)
{
    worker_engine_t *e = t->loop->data;
    uint64_t now = uv_hrtime();
    if (now > e->lag_due_ns) {
        uint64_t lag_us = (now - e->lag_due_ns) / 1000u;
        if (lag_us > atomic_load_explicit(&e->lag_max_us, memory_order_relaxed))
            atomic_store_explicit(&e->lag_max_us, lag_us, memory_order_relaxed);
    }
    e->lag_due_ns = now + LAG_TICK_MS * 1000000ull;
    for (engine_run_t *r = e->runs; r != NULL; r = r->next)
        worker_lua_run_tick(r->lua, uv_now(t->loop));
}

uint64_t worker_engine_take_lag_us(worker_engine_t *e)
{
    return atomic_exchange_explicit(&e->lag_max_us, 0, memory_order_relaxed);
}

static void on_pass(uv_check_t *c)
{
    worker_engine_t *e = c->data;
    e->pass++;
}

static void engine_main(void *arg)
{
    worker_engine_t *e = arg;
    uv_check_init(&e->loop, &e->pass_check);
    e->pass_check.data = e;
    uv_unref((uv_handle_t *)&e->pass_check);
    uv_check_start(&e->pass_check, on_pass);
    uv_timer_init(&e->loop, &e->lag_timer);
    uv_unref((uv_handle_t *)&e->lag_timer); /* never what keeps the loop alive */
    e->lag_due_ns = uv_hrtime() + LAG_TICK_MS * 1000000ull;
    uv_timer_start(&e->lag_timer, lag_tick, LAG_TICK_MS, LAG_TICK_MS);
    worker_busy_poll_run(&e->loop, &e->busy_poll);
    uv_loop_close(&e->loop);
    lc_extract_thread_cleanup(); /* this thread's PCRE2 match data and JIT stack */
}

uint64_t worker_engine_polled_ns(worker_engine_t *e)
{
    return atomic_load_explicit(&e->busy_poll.polled_ns, memory_order_relaxed);
}

int worker_engine_start(worker_engine_t **out, unsigned index, const worker_engines_conf_t *conf,
                        uint64_t seed, worker_mailbox_t *to_control)
{
    assert(conf != NULL && index < conf->count);
    worker_engine_t *e = calloc(1, sizeof *e);
    if (e == NULL)
        return LC_ENOMEM;
    e->index = index;
    e->n_engines = conf->count;
    worker_busy_poll_init(&e->busy_poll, conf->busy_poll_us);
    e->rng = seed ? seed : 1;
    e->to_control = to_control;
    if (uv_loop_init(&e->loop) != 0) {
        free(e);
        return LC_EIO;
    }
    e->loop.data = e;
    if (worker_mailbox_init(&e->inbox, &e->loop, on_inbox) != 0)
        goto err_after_loop;
    if (uv_thread_create(&e->thread, engine_main, e) != 0)
        goto err_after_mailbox;
    *out = e;
    return 0;
err_after_mailbox:
    worker_mailbox_close(&e->inbox, NULL);
    uv_run(&e->loop, UV_RUN_DEFAULT);
    worker_mailbox_destroy(&e->inbox);
err_after_loop:
    uv_loop_close(&e->loop);
    free(e);
    return LC_EIO;
}

void worker_engine_post(worker_engine_t *e, worker_msg_t *m)
{
    worker_mailbox_post(&e->inbox, m);
}

void worker_engine_stop(worker_engine_t *e)
{
    worker_msg_t *m = worker_msg_new(WORKER_MSG_QUIT);
    if (m == NULL) {
        lc_error("engine", "msg=\"out of memory stopping an engine\"");
        abort();
    }
    worker_engine_post(e, m);
    uv_thread_join(&e->thread);
    worker_mailbox_destroy(&e->inbox);
    worker_engine_free_buffers(e);
    free(e);
}

void worker_engine_free_buffers(worker_engine_t *e)
{
    lc_buf_free(&e->body_scratch);
    lc_buf_free(&e->req_scratch);
    worker_bufpool_free(&e->pool);
}
