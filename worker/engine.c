/* engine.c — engine threads: the loop, the inbox, and each run's users. */
#include "engine.h"

#include <stdlib.h>
#include <string.h>

#include "lc_err.h"
#include "lc_log.h"
#include "user.h"

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
        n += worker_user_connected(u);
    return n;
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
        uint64_t k = r->next_user++;
        r->spawned++;
        /* Ids interleave over engines as users were dealt round-robin. */
        if (worker_user_start(r, k * e->n_engines + e->index + 1) == NULL) {
            lc_error("engine", "msg=\"cannot start a user\" run=%llu", (unsigned long long)r->id);
            break;
        }
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
    /* Fewer users: the newest go first, each after its request in flight. */
    for (worker_user_t *u = r->users; u != NULL && r->active > r->target; u = u->next)
        worker_user_retire(u);
}

static void on_run_handle_close(uv_handle_t *h)
{
    engine_run_t *r = h->data;
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
    free(r);
    if (e->quitting && e->runs == NULL)
        worker_mailbox_close(&e->inbox, NULL);
}

void engine_run_user_gone(engine_run_t *r)
{
    if (!r->stopping || r->live > 0 || r->closing)
        return;
    r->closing = true;
    uv_close((uv_handle_t *)&r->spawn_timer, on_run_handle_close);
    uv_close((uv_handle_t *)&r->deadline_timer, on_run_handle_close);
}

static void on_deadline(uv_timer_t *t)
{
    engine_run_t *r = t->data;
    for (worker_user_t *u = r->users; u != NULL; u = u->next)
        worker_user_abort(u);
}

static void run_stop(engine_run_t *r, uint32_t deadline_ms)
{
    if (r->stopping)
        return;
    r->stopping = true;
    uv_timer_stop(&r->spawn_timer);
    for (worker_user_t *u = r->users; u != NULL; u = u->next)
        worker_user_stop(u);
    uv_timer_start(&r->deadline_timer, on_deadline, deadline_ms, 0);
    engine_run_user_gone(r); /* done at once when no user had anything in flight */
}

static void run_start(worker_engine_t *e, const worker_msg_t *m)
{
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
    uv_timer_init(&e->loop, &r->spawn_timer);
    uv_timer_init(&e->loop, &r->deadline_timer);
    r->spawn_timer.data = r->deadline_timer.data = r;
    r->handles = 2;
    r->next = e->runs;
    e->runs = r;
    run_scale(r, m->users, m->spawn_rate);
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
        worker_mailbox_close(&e->inbox, NULL);
        return;
    }
    /* Forced: users end now, nothing more is counted or reported. */
    for (engine_run_t *r = e->runs; r != NULL; r = r->next) {
        r->stopping = true;
        uv_timer_stop(&r->spawn_timer);
        for (worker_user_t *u = r->users; u != NULL; u = u->next) {
            worker_user_retire(u);
            worker_user_abort(u);
        }
        engine_run_user_gone(r);
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
            run_scale(r, m->users, m->spawn_rate);
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

static void engine_main(void *arg)
{
    worker_engine_t *e = arg;
    uv_run(&e->loop, UV_RUN_DEFAULT);
    uv_loop_close(&e->loop);
}

int worker_engine_start(worker_engine_t **out, unsigned index, unsigned n_engines,
                        uint64_t seed, worker_mailbox_t *to_control)
{
    worker_engine_t *e = calloc(1, sizeof *e);
    if (e == NULL)
        return LC_ENOMEM;
    e->index = index;
    e->n_engines = n_engines;
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
    worker_buf_free(&e->body_scratch);
    free(e);
}
