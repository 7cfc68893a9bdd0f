/* control.c — the run table on the control thread. */
#include "control.h"

#include <assert.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_clock.h"
#include "lc_err.h"
#include "lc_log.h"
#include "lc_scenario.h"
#include "lua_load.h"
#include "sysinfo.h"

#define SAFETY_MARGIN_MS 30000u

static void on_inbox(uv_async_t *a);
static void on_stats_timer(uv_timer_t *t);

static worker_run_t *find_run(worker_control_t *ctl, uint64_t id)
{
    for (worker_run_t *r = ctl->runs; r != NULL; r = r->next)
        if (r->id == id)
            return r;
    return NULL;
}

int worker_control_init(worker_control_t *ctl, uv_loop_t *loop,
                        const worker_engines_conf_t *engines, bool batches, const char *worker_id,
                        const worker_control_hooks_t *hooks, void *hooks_arg)
{
    memset(ctl, 0, sizeof *ctl);
    ctl->loop = loop;
    ctl->worker_id = worker_id;
    ctl->batches = batches;
    ctl->safety_net = batches;
    ctl->hooks = hooks;
    ctl->hooks_arg = hooks_arg;
    ctl->stats_interval_ms = 1000;
    assert(engines != NULL && engines->count > 0);
    unsigned n_engines = engines->count;
    if ((ctl->engines = calloc(n_engines, sizeof *ctl->engines)) == NULL)
        return LC_ENOMEM;
    if (worker_mailbox_init(&ctl->inbox, loop, on_inbox) != 0) {
        free(ctl->engines);
        return LC_EIO;
    }
    ctl->inbox.async.data = ctl;
    uv_timer_init(loop, &ctl->stats_timer);
    ctl->stats_timer.data = ctl;
    ctl->handles = 2;
    if (batches) { /* leased feeders exist only under a master */
        worker_control_feed_start(ctl);
        ctl->handles++;
    }
    uint64_t entropy = uv_hrtime() ^ ((uint64_t)uv_os_getpid() << 32);
    for (unsigned i = 0; i < n_engines; i++) {
        int rv = worker_engine_start(&ctl->engines[i], i, engines,
                                     entropy * 0x9E3779B97F4A7C15ULL + i, &ctl->inbox);
        if (rv != 0) {
            lc_error("control", "msg=\"cannot start engine thread\" engine=%u", i);
            return rv; /* the caller closes: engines started so far are stopped */
        }
        ctl->n_engines++;
    }
    if (batches || hooks->interval != NULL)
        uv_timer_start(&ctl->stats_timer, on_stats_timer, ctl->stats_interval_ms,
                       ctl->stats_interval_ms);
    return 0;
}

/* Users of engine i: users dealt round-robin over the engines. */
static uint32_t engine_share(uint32_t users, unsigned n, unsigned i)
{
    return users / n + (i < users % n ? 1 : 0);
}

static void post_shares(worker_control_t *ctl, worker_run_t *r, enum worker_msg_type type)
{
    for (unsigned i = 0; i < ctl->n_engines; i++) {
        worker_msg_t *m = worker_msg_new(type);
        if (m == NULL) {
            lc_error("control", "msg=\"out of memory posting to an engine\" run=%llu",
                     (unsigned long long)r->id);
            continue;
        }
        m->run = r->id;
        m->plan = r->plan;
        m->users = engine_share(r->users, ctl->n_engines, i);
        m->user_base = r->user_base;
        /* Both rates split like the users (the open model's user pool). */
        m->spawn_rate = r->users ? r->spawn_rate * m->users / r->users : 0;
        m->rate = r->users ? r->rate * m->users / r->users : 0;
        if (type == WORKER_MSG_RUN_START && r->lua_load != NULL)
            m->lua = worker_lua_load_take(r->lua_load, i);
        worker_engine_post(ctl->engines[i], m);
    }
    if (type == WORKER_MSG_RUN_START) { /* the sandboxes are the engines' now */
        worker_lua_load_free(r->lua_load);
        r->lua_load = NULL;
    }
}

/* Cuts the merged counters into one StatsBatch and hands it over, with the
 * losses not yet reported. */
/* The second of the run (not of this worker's part in it) that ends at
 * now: a worker that joined late, or came back, files its counts where the
 * run stands, as the others do. */
static uint32_t run_second(const worker_run_t *r, uint64_t now)
{
    if (r->started_ms == 0)
        return 0;
    uint64_t run_ms = r->plan->offset_ms + (now - r->started_ms);
    return (uint32_t)((run_ms + 999) / 1000);
}

static void cut_batch(worker_control_t *ctl, worker_run_t *r, bool final)
{
    if (!ctl->batches)
        return;
    /* A final run's loss report belongs to the second it finished in. */
    uint64_t now = r->state == WORKER_RUN_FINAL ? r->finished_ms : uv_now(ctl->loop);
    uint32_t users = 0;
    for (unsigned i = 0; i < ctl->n_engines; i++)
        users += r->eng_users[i];
    uint64_t requests = 0;
    for (size_t i = 0; i < r->acc->n; i++)
        requests += r->acc->ep[i].count;
    worker_batch_meta_t meta = {
        .run = r->id, .worker_id = ctl->worker_id, .seq = ctl->last_seq + 1,
        .interval = run_second(r, now),
        .users = final ? 0 : users, .final = final, .requests = requests,
        .lost_batches = r->lost_batches, .lost_requests = r->lost_requests};
    uint8_t *frame;
    size_t len;
    worker_stats_notes_once(r->acc, r->notes_sent);
    int rv = worker_stats_encode_batch(r->acc, r->plan->endpoints, &meta, &frame, &len);
    if (rv != 0) {
        /* The counters stay in acc and go out with the next batch. */
        lc_error("control", "msg=\"cannot encode stats batch\" run=%llu err=\"%s\"",
                 (unsigned long long)r->id, lc_strerror(rv));
        return;
    }
    r->seq = ctl->last_seq = meta.seq;
    r->n_batches++;
    r->lost_batches = r->lost_requests = 0;
    worker_stats_reset(r->acc);
    ctl->hooks->batch(ctl->hooks_arg, &meta, frame, len);
}

static void restart_run(worker_control_t *ctl, worker_run_t *r);

static void finish_run(worker_control_t *ctl, worker_run_t *r)
{
    r->finished_ms = uv_now(ctl->loop);
    uv_timer_stop(&r->safety_timer);
    cut_batch(ctl, r, true);
    r->final_seq = r->seq;
    r->state = WORKER_RUN_FINAL;
    lc_info("control", "msg=\"run finished\" run=%llu batches=%llu", (unsigned long long)r->id,
            (unsigned long long)r->n_batches);
    if (ctl->hooks->run_finished)
        ctl->hooks->run_finished(ctl->hooks_arg, r);
    if (r->again && !ctl->closing)
        restart_run(ctl, r);
}

/* Drops one reference (a handle or the resolution); the last frees the run. */
static void run_unref(worker_run_t *r)
{
    if (--r->handles > 0)
        return;
    worker_plan_free(r->plan);
    worker_stats_free(r->acc);
    free(r->notes_sent);
    free(r->eng_users);
    free(r->eng_conns);
    free(r);
}

static void on_run_handle_close(uv_handle_t *h)
{
    run_unref(h->data);
}

/* Unlinks and frees a run that no engine references any more. */
static void remove_run(worker_control_t *ctl, worker_run_t *r)
{
    worker_run_t **pp = &ctl->runs;
    while (*pp != r)
        pp = &(*pp)->next;
    *pp = r->next;
    r->removed = true;
    if (r->resolving)
        uv_cancel((uv_req_t *)&r->gai); /* its callback drops the last reference */
    if (r->lua_load != NULL && !worker_lua_load_ready(r->lua_load)) {
        worker_lua_load_cancel(r->lua_load); /* its callback frees it */
    } else {
        worker_lua_load_free(r->lua_load);
        r->lua_load = NULL;
    }
    uv_close((uv_handle_t *)&r->start_timer, on_run_handle_close);
    uv_close((uv_handle_t *)&r->safety_timer, on_run_handle_close);
}

static void fail_run(worker_control_t *ctl, worker_run_t *r, const char *why)
{
    lc_error("control", "msg=\"run cannot start\" run=%llu reason=\"%s\"",
             (unsigned long long)r->id, why);
    uint64_t id = r->id;
    remove_run(ctl, r); /* first: the hook may close the whole control thread */
    if (ctl->hooks->run_failed)
        ctl->hooks->run_failed(ctl->hooks_arg, id, why);
}

static void on_safety(uv_timer_t *t)
{
    worker_run_t *r = t->data;
    lc_warn("control", "msg=\"no Stop came: stopping the run by itself\" run=%llu",
            (unsigned long long)r->id);
    worker_control_stop_self(r->ctl, r->id, r->plan->scenario.request_timeout_ms);
}

static void start_engines(uv_timer_t *t);

/* The pool is done loading the run's sandboxes: the load's reference goes, and the run
 * starts if its time came meanwhile. */
static void on_lua_loaded(worker_lua_load_t *l, void *arg)
{
    worker_run_t *r = arg;
    assert(r->lua_load == l);
    bool due = r->start_due && !r->removed;
    r->start_due = false;
    if (r->removed) {
        worker_lua_load_free(l);
        r->lua_load = NULL;
    }
    run_unref(r);
    if (due)
        start_engines(&r->start_timer);
}

/* Starts loading the run's sandboxes off the engines' loops (a run with a script, none
 * loaded or loading). When it cannot be queued the engines load their own, as before. */
static void begin_lua_load(worker_control_t *ctl, worker_run_t *r)
{
    if (r->plan->scenario.script == NULL || r->lua_load != NULL)
        return;
    int rv = worker_lua_load_start(&r->lua_load, ctl->loop, r->plan, r->id, ctl->n_engines,
                                   on_lua_loaded, r);
    if (rv != 0) {
        r->lua_load = NULL;
        lc_warn("control", "msg=\"cannot load the run's script off the engines: they load it\" "
                "run=%llu error=\"%s\"", (unsigned long long)r->id, lc_strerror(rv));
        return;
    }
    r->handles++; /* the pool reads the plan until on_lua_loaded */
}

/* True when the engines may start the run: no script, its sandboxes loaded, or no load
 * possible. Else start_engines runs again once they are in. */
static bool lua_ready(worker_control_t *ctl, worker_run_t *r)
{
    begin_lua_load(ctl, r);
    if (r->lua_load == NULL || worker_lua_load_ready(r->lua_load))
        return true;
    r->start_due = true;
    return false;
}

static void start_engines(uv_timer_t *t)
{
    worker_run_t *r = t->data;
    worker_control_t *ctl = r->ctl;
    if (!lua_ready(ctl, r))
        return;
    r->state = WORKER_RUN_RUNNING;
    r->started_ms = uv_now(ctl->loop);
    /* An adopted run's stages and arrivals go on from where the run stands. */
    r->plan->offset_ms = r->elapsed_ms ? r->elapsed_ms + (r->started_ms - r->assigned_ms) : 0;
    post_shares(ctl, r, WORKER_MSG_RUN_START);
    lc_info("control",
            "msg=\"run started\" run=%llu generation=%llu users=%u spawn_rate=%g rate=%g",
            (unsigned long long)r->id, (unsigned long long)r->generation, r->users,
            r->spawn_rate, r->rate);
    if (ctl->hooks->run_started)
        ctl->hooks->run_started(ctl->hooks_arg, r);
    uint64_t duration = r->plan->scenario.duration_ms;
    if (ctl->safety_net) {
        uint64_t left = duration > r->elapsed_ms ? duration - r->elapsed_ms : 0;
        uv_timer_start(&r->safety_timer, on_safety, left + SAFETY_MARGIN_MS, 0);
    }
}

static int resolve(worker_control_t *ctl, worker_run_t *r);

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
    worker_run_t *r = req->data;
    worker_control_t *ctl = r->ctl;
    r->resolving = false;
    if (r->removed) { /* cancelled, or finished after the run was removed */
        uv_freeaddrinfo(res);
        run_unref(r);
        return;
    }
    run_unref(r); /* the resolution's reference; the timers hold the others */
    worker_origin_t *o = &r->plan->origins[r->resolved];
    if (status != 0 || res == NULL) {
        char why[320];
        snprintf(why, sizeof why, "cannot resolve %s: %s", o->def->url.hp.host,
                 uv_strerror(status));
        uv_freeaddrinfo(res);
        fail_run(ctl, r, why);
        return;
    }
    memcpy(&o->addr, res->ai_addr, res->ai_addrlen);
    o->addr_len = (socklen_t)res->ai_addrlen;
    uv_freeaddrinfo(res);
    if (r->stop_early) {
        finish_run(ctl, r);
        return;
    }
    if (++r->resolved < r->plan->n_origins) { /* the next origin, once per run each */
        int rv = resolve(ctl, r);
        if (rv != 0) {
            char why[320];
            snprintf(why, sizeof why, "cannot resolve %s: %s",
                     r->plan->origins[r->resolved].def->url.hp.host, uv_strerror(rv));
            fail_run(ctl, r, why);
        }
        return;
    }
    begin_lua_load(ctl, r); /* meanwhile: the start delay is time the load need not add */
    uint64_t spent = uv_now(ctl->loop) - r->assigned_ms;
    uint64_t delay = r->start_delay_ms > spent ? r->start_delay_ms - spent : 0;
    uv_timer_start(&r->start_timer, start_engines, delay, 0);
}

/* Resolves origin r->resolved of the run's plan (the target first, then its targets). */
static int resolve(worker_control_t *ctl, worker_run_t *r)
{
    char port[8];
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    assert(r->resolved < r->plan->n_origins);
    const lc_hostport_t *hp = &r->plan->origins[r->resolved].def->url.hp;
    snprintf(port, sizeof port, "%u", hp->port);
    r->gai.data = r;
    int rv = uv_getaddrinfo(ctl->loop, &r->gai, on_resolved, hp->host, port, &hints);
    if (rv != 0)
        return rv;
    r->resolving = true;
    r->handles++;
    return 0;
}

/* Open model: the Assign's requests/s; a master that sends none gets the
 * share of arrival_rate that its users are of max_users. */
static double assigned_rate(const worker_assign_t *a, const lc_scenario_t *sc)
{
    if (sc->arrival_rate <= 0)
        return 0;
    if (a->rate > 0)
        return a->rate;
    return sc->max_users ? sc->arrival_rate * a->users / sc->max_users : 0;
}

static worker_run_t *new_run(worker_control_t *ctl, const worker_assign_t *a, worker_plan_t *p)
{
    worker_run_t *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->acc = worker_stats_new(p->n_endpoints);
    r->eng_users = calloc(ctl->n_engines, sizeof *r->eng_users);
    r->eng_conns = calloc(ctl->n_engines, sizeof *r->eng_conns);
    r->notes_sent = calloc((p->n_endpoints * WORKER_ERR_KINDS + 7) / 8 + 1, 1);
    if (r->acc == NULL || r->eng_users == NULL || r->eng_conns == NULL || r->notes_sent == NULL) {
        worker_stats_free(r->acc);
        free(r->notes_sent);
        free(r->eng_users);
        free(r->eng_conns);
        free(r);
        return NULL;
    }
    r->ctl = ctl;
    r->id = a->run;
    /* Sequence numbers must never repeat for (worker, run), even after this
     * process restarts with the same worker id: the master drops a batch
     * whose seq it has seen. Each start has its own persisted epoch (not the
     * clock, which may be stepped back). */
    r->seq = ctl->last_seq;
    r->generation = a->generation;
    r->users = a->users;
    r->user_base = a->user_base;
    r->spawn_rate = a->spawn_rate > 0 ? a->spawn_rate : p->scenario.spawn_rate;
    r->rate = assigned_rate(a, &p->scenario);
    r->plan = p;
    worker_plan_slice_feeds(p, a->user_base, a->users);
    r->assigned_ms = uv_now(ctl->loop);
    r->elapsed_ms = a->elapsed_ms;
    r->start_delay_ms = a->start_delay_ms;
    uv_timer_init(ctl->loop, &r->start_timer);
    uv_timer_init(ctl->loop, &r->safety_timer);
    r->start_timer.data = r->safety_timer.data = r;
    r->handles = 2;
    r->next = ctl->runs;
    ctl->runs = r;
    return r;
}

/* A self-stopped run assigned anew starts again on its final counters: same
 * plan and resolved address, seqs going on, the new share and timeline. */
static void restart_run(worker_control_t *ctl, worker_run_t *r)
{
    const worker_assign_t *a = &r->again_as;
    r->again = r->self_stopped = r->stop_early = false;
    r->generation = a->generation;
    r->users = a->users;
    r->user_base = a->user_base;
    if (a->spawn_rate > 0)
        r->spawn_rate = a->spawn_rate;
    r->rate = assigned_rate(a, &r->plan->scenario);
    r->assigned_ms = r->again_ms;
    r->elapsed_ms = a->elapsed_ms;
    r->start_delay_ms = a->start_delay_ms;
    r->started_ms = r->finished_ms = 0;
    r->engines_done = 0;
    memset(r->eng_users, 0, ctl->n_engines * sizeof *r->eng_users);
    memset(r->eng_conns, 0, ctl->n_engines * sizeof *r->eng_conns);
    r->state = WORKER_RUN_PREPARING;
    begin_lua_load(ctl, r); /* the engines closed the last run's sandboxes */
    lc_info("control", "msg=\"run assigned again after this worker stopped it: starting it "
                       "again\" run=%llu generation=%llu users=%u",
            (unsigned long long)r->id, (unsigned long long)r->generation, r->users);
    uint64_t spent = uv_now(ctl->loop) - r->assigned_ms;
    uint64_t delay = r->start_delay_ms > spent ? r->start_delay_ms - spent : 0;
    uv_timer_start(&r->start_timer, start_engines, delay, 0);
}

static int rescale(worker_control_t *ctl, worker_run_t *r, const worker_assign_t *a)
{
    if (r->self_stopped && r->state != WORKER_RUN_RUNNING) { /* stopping, final or stop_early */
        /* The master wants it running again. Generations are not compared: a
         * new leader numbers them from what Hello reported, and a run this
         * worker stopped is not reported. */
        r->again = true;
        r->again_ms = uv_now(ctl->loop);
        r->again_as = *a;
        r->again_as.scenario_json = NULL;
        r->again_as.scenario_len = 0;
        if (r->state == WORKER_RUN_FINAL)
            restart_run(ctl, r);
        return 0;
    }
    if (r->state == WORKER_RUN_STOPPING || r->state == WORKER_RUN_FINAL) {
        lc_info("control", "msg=\"assignment of a stopped run ignored\" run=%llu",
                (unsigned long long)r->id);
        return 0;
    }
    if (a->generation <= r->generation)
        return 0; /* a replay of what we run already */
    r->generation = a->generation;
    r->users = a->users;
    r->user_base = a->user_base;
    if (a->spawn_rate > 0)
        r->spawn_rate = a->spawn_rate;
    r->rate = assigned_rate(a, &r->plan->scenario);
    lc_info("control", "msg=\"run rescaled\" run=%llu generation=%llu users=%u",
            (unsigned long long)r->id, (unsigned long long)r->generation, r->users);
    if (r->state == WORKER_RUN_RUNNING)
        post_shares(ctl, r, WORKER_MSG_RUN_SCALE);
    return 0;
}

/* Refuses what the open-file limit cannot hold (one connection per user, the
 * other runs' users included): better one clear reason than EMFILE storms. */
/* Whether a's users fit the open-file limit beside the other runs', each user holding up to
 * one connection per origin of its run (conns_per_user for a's). */
static int check_fd_room(const worker_control_t *ctl, const worker_assign_t *a,
                         size_t conns_per_user, char *errmsg, size_t errlen)
{
    uint64_t others = 0, room = worker_fd_room(), need = (uint64_t)a->users * conns_per_user;
    for (const worker_run_t *r = ctl->runs; r != NULL; r = r->next)
        if (r->id != a->run && r->state != WORKER_RUN_FINAL)
            others += (uint64_t)r->users * r->plan->n_origins;
    if (need + others <= room)
        return 0;
    uint64_t left = room > others ? room - others : 0;
    snprintf(errmsg, errlen,
             "%u users need %llu connections (%zu origin%s each) but the open-file limit allows "
             "%llu%s; raise it with ulimit -n or LimitNOFILE",
             a->users, (unsigned long long)need, conns_per_user, conns_per_user == 1 ? "" : "s",
             (unsigned long long)left, others ? " (other runs hold the rest)" : "");
    return LC_ETOOBIG;
}

int worker_control_assign(worker_control_t *ctl, const worker_assign_t *a, char *errmsg,
                          size_t errlen)
{
    worker_run_t *r = find_run(ctl, a->run);
    if (r != NULL)
        return check_fd_room(ctl, a, r->plan->n_origins, errmsg, errlen) != 0
                   ? LC_ETOOBIG
                   : rescale(ctl, r, a);
    lc_scenario_t sc;
    char why[512];
    int rv = lc_scenario_parse(a->scenario_json, a->scenario_len, &sc, why, sizeof why);
    if (rv != 0)
        return lc_errf(errmsg, errlen, LC_EINVAL, "scenario.json: %s", why);
    worker_plan_t *p;
    if ((rv = worker_plan_build(&p, &sc, why, sizeof why)) != 0) {
        lc_scenario_free(&sc);
        snprintf(errmsg, errlen, "scenario.json: %s", why);
        return rv;
    }
    if (check_fd_room(ctl, a, p->n_origins, errmsg, errlen) != 0) {
        worker_plan_free(p);
        return LC_ETOOBIG;
    }
    p->trace = ctl->trace;
    if (worker_control_feed_plan(ctl, p) != 0 || (r = new_run(ctl, a, p)) == NULL) {
        worker_plan_free(p);
        return lc_errf(errmsg, errlen, LC_ENOMEM, "out of memory");
    }
    if ((rv = resolve(ctl, r)) != 0) {
        snprintf(errmsg, errlen, "cannot resolve %s: %s", p->scenario.url.hp.host,
                 uv_strerror(rv));
        remove_run(ctl, r);
        return LC_EINVAL;
    }
    return 0;
}

void worker_control_stop(worker_control_t *ctl, uint64_t run, uint32_t deadline_ms)
{
    worker_run_t *r = find_run(ctl, run);
    if (r != NULL && r->again) {
        lc_info("control", "msg=\"stopped again before it restarted\" run=%llu",
                (unsigned long long)run);
        r->again = false;
    }
    if (r == NULL || r->state == WORKER_RUN_STOPPING || r->state == WORKER_RUN_FINAL)
        return;
    /* Requests in flight never get longer than their own timeout. */
    if (deadline_ms > r->plan->scenario.request_timeout_ms)
        deadline_ms = r->plan->scenario.request_timeout_ms;
    lc_info("control", "msg=\"stopping run\" run=%llu deadline_ms=%u", (unsigned long long)run,
            deadline_ms);
    if (r->state == WORKER_RUN_PREPARING) {
        uv_timer_stop(&r->start_timer);
        r->start_due = false; /* a load under way finishes unused (kept for a restart) */
        if (r->resolving)
            r->stop_early = true; /* finished once the resolution returns */
        else
            finish_run(ctl, r);
        return;
    }
    r->state = WORKER_RUN_STOPPING;
    r->stop_deadline_ms = deadline_ms;
    for (unsigned i = 0; i < ctl->n_engines; i++) {
        worker_msg_t *m = worker_msg_new(WORKER_MSG_RUN_STOP);
        if (m == NULL)
            continue; /* that engine then stops the run on QUIT */
        m->run = run;
        m->deadline_ms = deadline_ms;
        worker_engine_post(ctl->engines[i], m);
    }
}

void worker_control_stop_self(worker_control_t *ctl, uint64_t run, uint32_t deadline_ms)
{
    worker_run_t *r = find_run(ctl, run);
    if (r == NULL || (r->state != WORKER_RUN_PREPARING && r->state != WORKER_RUN_RUNNING))
        return;
    r->self_stopped = true;
    worker_control_stop(ctl, run, deadline_ms);
}

void worker_control_stop_all(worker_control_t *ctl, uint32_t deadline_ms)
{
    for (worker_run_t *r = ctl->runs, *next; r != NULL; r = next) {
        next = r->next;
        worker_control_stop(ctl, r->id, deadline_ms);
    }
}

void worker_control_acked(worker_control_t *ctl, uint64_t run, uint64_t seq)
{
    worker_run_t *r = find_run(ctl, run);
    /* Kept while a loss waits for its report (the next round cuts it). */
    if (r != NULL && r->state == WORKER_RUN_FINAL && seq >= r->final_seq && !r->lost_batches &&
        !r->lost_requests) {
        lc_debug("control", "msg=\"final batch acknowledged\" run=%llu", (unsigned long long)run);
        remove_run(ctl, r);
    }
}

bool worker_control_lost(worker_control_t *ctl, uint64_t run, uint64_t batches,
                         uint64_t requests)
{
    worker_run_t *r = find_run(ctl, run);
    if (r == NULL)
        return false;
    r->lost_batches += batches;
    r->lost_requests += requests;
    return true;
}

void worker_control_set_seq_epoch(worker_control_t *ctl, uint64_t epoch)
{
    assert(ctl->runs == NULL && epoch < UINT32_MAX);
    ctl->last_seq = epoch << 32;
    ctl->feed_seq = epoch << 32; /* a restart's requests come after every earlier one */
}

void worker_control_set_interval(worker_control_t *ctl, uint32_t ms)
{
    if (ms == 0 || ms == ctl->stats_interval_ms)
        return;
    ctl->stats_interval_ms = ms;
    if (ctl->batches && !ctl->closing)
        uv_timer_start(&ctl->stats_timer, on_stats_timer, ms, ms);
}

void worker_control_collect_now(worker_control_t *ctl)
{
    if (!ctl->batches || ctl->closing || ctl->runs == NULL)
        return;
    uv_timer_start(&ctl->stats_timer, on_stats_timer, ctl->stats_interval_ms,
                   ctl->stats_interval_ms);
    on_stats_timer(&ctl->stats_timer);
}

size_t worker_control_active(const worker_control_t *ctl)
{
    size_t n = 0;
    for (const worker_run_t *r = ctl->runs; r != NULL; r = r->next)
        n += r->state != WORKER_RUN_FINAL;
    return n;
}

size_t worker_control_loads(const worker_control_t *ctl, Lc__RunLoad *out, size_t max,
                            bool assigned_users)
{
    size_t n = 0;
    for (const worker_run_t *r = ctl->runs; r != NULL && n < max; r = r->next) {
        if (r->state != WORKER_RUN_PREPARING && r->state != WORKER_RUN_RUNNING)
            continue;
        Lc__RunLoad *l = &out[n++];
        lc__run_load__init(l);
        l->run = r->id;
        l->generation = r->generation;
        l->users = assigned_users ? r->users : 0;
        for (unsigned i = 0; i < ctl->n_engines; i++) {
            l->users += assigned_users ? 0 : r->eng_users[i];
            l->connections += r->eng_conns[i];
        }
    }
    return n;
}

uint64_t worker_control_polled_ns(const worker_control_t *ctl)
{
    uint64_t ns = 0;
    for (unsigned i = 0; i < ctl->n_engines; i++)
        ns += worker_engine_polled_ns(ctl->engines[i]);
    return ns;
}

static void on_stats_timer(uv_timer_t *t)
{
    worker_control_t *ctl = t->data;
    (void)worker_heap_trim_tick(&ctl->heap_trim);
    if (ctl->round_pending > 0 || ctl->runs == NULL)
        return; /* the previous round is still being answered */
    ctl->round++;
    for (unsigned i = 0; i < ctl->n_engines; i++) {
        worker_msg_t *m = worker_msg_new(WORKER_MSG_COLLECT);
        if (m == NULL)
            continue;
        m->round = ctl->round;
        ctl->round_pending++;
        worker_engine_post(ctl->engines[i], m);
    }
}

static void round_complete(worker_control_t *ctl)
{
    for (worker_run_t *r = ctl->runs; r != NULL; r = r->next) {
        if (r->state == WORKER_RUN_RUNNING && ctl->hooks->interval != NULL)
            ctl->hooks->interval(ctl->hooks_arg, r);
        if (r->state == WORKER_RUN_RUNNING || r->state == WORKER_RUN_STOPPING) {
            cut_batch(ctl, r, false);
        } else if (r->state == WORKER_RUN_FINAL && (r->lost_batches || r->lost_requests)) {
            /* No batch left to carry the loss (maybe the final one was lost):
             * a new final batch reports it, and is the one awaited. */
            cut_batch(ctl, r, true);
            r->final_seq = r->seq;
        }
    }
}

/* A stop_run feeder ran out on an engine: told to the hook once per run. */
static void run_exhausted(worker_control_t *ctl, worker_run_t *r, uint32_t f)
{
    char reason[200];
    if (r == NULL || r->exhausted || r->plan->program == NULL || f >= r->plan->program->n_feeders)
        return;
    r->exhausted = true;
    snprintf(reason, sizeof reason, "feeder %s has no rows left (on_exhausted stop_run)",
             r->plan->program->feeders[f].name);
    lc_info("control", "msg=\"feeder exhausted: asking for the run's end\" run=%llu reason=\"%s\"",
            (unsigned long long)r->id, reason);
    if (ctl->hooks->run_exhausted != NULL)
        ctl->hooks->run_exhausted(ctl->hooks_arg, r, reason);
}

static void handle(worker_control_t *ctl, worker_msg_t *m)
{
    worker_run_t *r = find_run(ctl, m->run);
    switch (m->type) {
    case WORKER_MSG_RUN_STATS:
        /* Each engine reports a run before its RUN_DONE, and the run ends after the last. */
        assert(r != NULL && r->state != WORKER_RUN_FINAL);
        if (r == NULL || r->state == WORKER_RUN_FINAL)
            break;
        assert(m->engine < ctl->n_engines);
        worker_stats_merge(r->acc, m->stats);
        r->eng_users[m->engine] = m->users;
        r->eng_conns[m->engine] = m->connections;
        break;
    case WORKER_MSG_RUN_EXHAUSTED:
        run_exhausted(ctl, r, m->feeder);
        break;
    case WORKER_MSG_ROUND_END:
        if (m->round == ctl->round && ctl->round_pending > 0 && --ctl->round_pending == 0)
            round_complete(ctl);
        break;
    case WORKER_MSG_RUN_DONE:
        if (r == NULL || r->state != WORKER_RUN_STOPPING)
            break;
        assert(m->engine < ctl->n_engines);
        worker_stats_merge(r->acc, m->stats);
        r->eng_users[m->engine] = r->eng_conns[m->engine] = 0;
        if (++r->engines_done == ctl->n_engines)
            finish_run(ctl, r);
        break;
    default:
        break;
    }
}

static void on_inbox(uv_async_t *a)
{
    worker_control_t *ctl = a->data;
    worker_msg_t *m = worker_mailbox_take(&ctl->inbox);
    while (m != NULL) {
        worker_msg_t *next = m->next;
        handle(ctl, m);
        worker_msg_free(m);
        m = next;
    }
}

static void on_ctl_handle_close(uv_handle_t *h)
{
    worker_control_t *ctl = h->data;
    if (--ctl->handles > 0)
        return;
    worker_mailbox_destroy(&ctl->inbox);
    free(ctl->engines);
    ctl->engines = NULL;
    if (ctl->closed_cb)
        ctl->closed_cb(ctl);
}

void worker_control_close(worker_control_t *ctl, void (*closed_cb)(worker_control_t *))
{
    ctl->closing = true;
    ctl->closed_cb = closed_cb;
    /* Engines first: once joined, nothing references a plan any more. */
    for (unsigned i = 0; i < ctl->n_engines; i++)
        worker_engine_stop(ctl->engines[i]);
    ctl->n_engines = 0;
    while (ctl->runs != NULL)
        remove_run(ctl, ctl->runs);
    uv_close((uv_handle_t *)&ctl->stats_timer, on_ctl_handle_close);
    if (ctl->batches)
        uv_close((uv_handle_t *)&ctl->feed_timer, on_ctl_handle_close);
    worker_mailbox_close(&ctl->inbox, on_ctl_handle_close);
}
