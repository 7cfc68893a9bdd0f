/* join.c — `loadworker --join`: wires the master link to the control thread,
 * says when Hello and Heartbeats go out (link_send.c builds them), and shuts
 * down gracefully on SIGINT/SIGTERM. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "control.h"
#include "health.h"
#include "lc_clock.h"
#include "lc_err.h"
#include "lc_protocol.h"
#include "lc_log.h"
#include "lc_notify.h"
#include "link.h"
#include "link_send.h"
#include "opts.h"
#include "sysinfo.h"

#define STOP_BOUND_MS 5000u
#define FLUSH_BOUND_MS 2000u

enum join_phase { JOIN_SERVING, JOIN_STOPPING, JOIN_FLUSHING, JOIN_CLOSING };

typedef struct join_s {
    const worker_opts_t *opts;
    uv_loop_t loop;
    worker_control_t ctl;
    worker_link_t link;
    uv_timer_t heartbeat_timer;
    uv_timer_t phase_timer;       /* bounds stopping and flushing */
    uv_timer_t orphan_timer;      /* fires --orphan-timeout after the leader went */
    uint64_t orphan_since_ms;     /* loop time the welcomed connection ended */
    bool orphaned;                /* no welcomed connection since then */
    uv_signal_t sigint, sigterm, sighup;
    worker_cpu_t cpu;
    double last_cpu_percent;      /* what the last heartbeat reported */
    SSL_CTX *tls_ctx;             /* mutual TLS with the masters; NULL: plaintext */
    worker_health_t *health;      /* --health-addr; NULL: none */
    bool ready_notified;          /* READY=1 sent to systemd */
    char worker_id[33];
    char name[256];
    uint32_t heartbeat_ms;
    enum join_phase phase;
    bool link_started;
    int exit_code;
} join_t;

static void close_all(join_t *j);

static void send_hello(void *arg, const uint8_t *nonce, size_t nonce_len)
{
    join_t *j = arg;
    Lc__RunLoad loads[WORKER_LINK_MAX_LOADS];
    worker_hello_t hello = {.worker_id = j->worker_id, .name = j->name,
                            .threads = j->opts->threads, .capacity = j->opts->capacity,
                            .secret = &j->opts->join_secret, .running = loads};
    /* The most runs a master accepts in a Hello (it refuses the Hello otherwise); a master
     * told of that many cannot tell which the worker left out, and keeps their shares. */
    hello.n_running = worker_control_loads(&j->ctl, loads, LC_PROTOCOL_MAX_RUN_LOADS, true);
    worker_link_send_hello(&j->link, &hello, nonce, nonce_len);
}

static void on_heartbeat(uv_timer_t *t)
{
    join_t *j = t->data;
    if (!worker_link_ready(&j->link))
        return;
    Lc__RunLoad loads[WORKER_LINK_MAX_LOADS];
    worker_heartbeat_t hb = {.time_ms = lc_wall_ms(),
                             .cpu_percent = worker_cpu_percent(&j->cpu, j->opts->threads,
                                                              worker_control_polled_ns(&j->ctl)),
                             .rss_bytes = worker_rss_bytes(), .runs = loads};
    j->last_cpu_percent = hb.cpu_percent;
    hb.n_runs = worker_control_loads(&j->ctl, loads, WORKER_LINK_MAX_LOADS, false);
    worker_link_send_heartbeat(&j->link, &hb);
}

static void on_orphan_timeout(uv_timer_t *t)
{
    join_t *j = t->data;
    if (j->phase != JOIN_SERVING)
        return;
    for (worker_run_t *r = j->ctl.runs, *next; r != NULL; r = next) {
        next = r->next;
        if (r->state != WORKER_RUN_PREPARING && r->state != WORKER_RUN_RUNNING)
            continue;
        lc_warn("worker", "msg=\"no leader for %u s: stopping run %llu (orphan timeout)\" "
                          "run=%llu",
                j->opts->orphan_timeout_s, (unsigned long long)r->id, (unsigned long long)r->id);
        worker_control_stop_self(&j->ctl, r->id, UINT32_MAX);
    }
}

/* The welcomed connection ended: runs go on until a leader takes them back or
 * the orphan timeout stops them (never runaway load). */
static void start_orphan(join_t *j)
{
    if (j->orphaned || j->phase != JOIN_SERVING)
        return;
    j->orphaned = true;
    j->orphan_since_ms = uv_now(&j->loop);
    size_t active = worker_control_active(&j->ctl);
    if (j->opts->orphan_timeout_s == 0) {
        lc_warn("worker", "msg=\"no leader reachable: runs go on (orphan timeout disabled)\" "
                          "runs=%zu", active);
        return;
    }
    lc_warn("worker", "msg=\"no leader reachable: runs go on for up to %u s (orphan timeout)\" "
                      "runs=%zu",
            j->opts->orphan_timeout_s, active);
    uv_timer_start(&j->orphan_timer, on_orphan_timeout, (uint64_t)j->opts->orphan_timeout_s * 1000,
                   0);
}

static void end_orphan(join_t *j)
{
    if (!j->orphaned)
        return;
    j->orphaned = false;
    uv_timer_stop(&j->orphan_timer);
    worker_control_collect_now(&j->ctl);
    lc_info("worker", "msg=\"leader reachable again\" orphaned_ms=%llu runs=%zu",
            (unsigned long long)(uv_now(&j->loop) - j->orphan_since_ms),
            worker_control_active(&j->ctl));
}

static void on_welcome(void *arg, const Lc__Welcome *w)
{
    join_t *j = arg;
    end_orphan(j);
    j->heartbeat_ms = w->heartbeat_ms;
    worker_control_set_interval(&j->ctl, w->stats_interval_ms);
    worker_cpu_init(&j->cpu, worker_control_polled_ns(&j->ctl));
    uv_timer_start(&j->heartbeat_timer, on_heartbeat, j->heartbeat_ms, j->heartbeat_ms);
    if (!j->ready_notified) {
        char status[360];
        snprintf(status, sizeof status, "joined %s", j->link.target);
        lc_notify_ready(status);
        j->ready_notified = true;
    }
}

static void on_disconnected(void *arg)
{
    join_t *j = arg;
    uv_timer_stop(&j->heartbeat_timer);
    start_orphan(j);
}

static void on_assign(void *arg, const Lc__Assign *a)
{
    join_t *j = arg;
    char why[600];
    if (j->phase != JOIN_SERVING) {
        lc_info("control", "msg=\"assignment ignored: shutting down\" run=%llu",
                (unsigned long long)a->run);
        return;
    }
    worker_assign_t wa = {.run = a->run, .generation = a->generation, .users = a->users,
                          .spawn_rate = a->spawn_rate, .rate = a->rate,
                          .scenario_json = a->scenario_json,
                          .scenario_len = a->scenario_json ? strlen(a->scenario_json) : 0,
                          .start_delay_ms = a->start_delay_ms, .elapsed_ms = a->elapsed_ms,
                          .user_base = a->user_base};
    if (worker_control_assign(&j->ctl, &wa, why, sizeof why) != 0) {
        lc_error("control", "msg=\"assignment refused\" run=%llu reason=\"%s\"",
                 (unsigned long long)a->run, why);
        /* The master fails the run with our reason rather than wait for stats. */
        worker_link_send_refused(&j->link, a->run, a->generation, why);
    }
}

static void on_stop(void *arg, const Lc__Stop *s)
{
    join_t *j = arg;
    lc_info("control", "msg=\"stop from master\" run=%llu reason=\"%s\"",
            (unsigned long long)s->run, s->reason ? s->reason : "");
    worker_control_stop(&j->ctl, s->run, UINT32_MAX);
}

static void maybe_flushed(join_t *j)
{
    if (j->phase == JOIN_FLUSHING && worker_link_outbox_len(&j->link) == 0)
        close_all(j);
}

static void on_acked(void *arg, uint64_t run, uint64_t seq)
{
    join_t *j = arg;
    worker_control_acked(&j->ctl, run, seq);
    maybe_flushed(j);
}

static void on_batch(void *arg, const worker_batch_meta_t *meta, uint8_t *frame, size_t len)
{
    join_t *j = arg;
    worker_link_queue(&j->link, meta, frame, len);
}

static void on_lost(void *arg, const worker_outbox_batch_t *b)
{
    join_t *j = arg;
    /* What the lost batch reported is lost with it: carried over. */
    if (!worker_control_lost(&j->ctl, b->run, 1 + b->lost_batches,
                             b->requests + b->lost_requests))
        lc_warn("worker", "msg=\"stats batch of a finished run lost: not reported\" run=%llu "
                          "seq=%llu requests=%llu",
                (unsigned long long)b->run, (unsigned long long)b->seq,
                (unsigned long long)b->requests);
}

static void on_phase_timeout(uv_timer_t *t);

static void start_flushing(join_t *j)
{
    j->phase = JOIN_FLUSHING;
    lc_info("worker", "msg=\"flushing stats\" unacked=%zu", worker_link_outbox_len(&j->link));
    uv_timer_start(&j->phase_timer, on_phase_timeout, FLUSH_BOUND_MS, 0);
    maybe_flushed(j);
}

static void on_phase_timeout(uv_timer_t *t)
{
    join_t *j = t->data;
    if (j->phase == JOIN_STOPPING) {
        lc_warn("worker", "msg=\"runs did not stop in time\"");
        start_flushing(j);
    } else if (j->phase == JOIN_FLUSHING) {
        lc_warn("worker", "msg=\"exiting with unacknowledged stats\" unacked=%zu",
                worker_link_outbox_len(&j->link));
        close_all(j);
    }
}

static void on_run_finished(void *arg, worker_run_t *r)
{
    join_t *j = arg;
    if (j->phase == JOIN_STOPPING && worker_control_active(&j->ctl) == 0)
        start_flushing(j);
}

static void on_signal(uv_signal_t *s, int signum)
{
    join_t *j = s->data;
    if (j->phase != JOIN_SERVING) {
        close_all(j); /* a second signal: no more waiting */
        return;
    }
    lc_notify_stopping();
    lc_info("worker", "msg=\"signal: stopping runs\" signal=%d", signum);
    j->phase = JOIN_STOPPING;
    uv_timer_start(&j->phase_timer, on_phase_timeout, STOP_BOUND_MS + 500, 0);
    worker_control_stop_all(&j->ctl, STOP_BOUND_MS);
    if (worker_control_active(&j->ctl) == 0)
        start_flushing(j);
}

static void on_link_closed(worker_link_t *l) {}
static void on_control_closed(worker_control_t *c) {}

static void close_all(join_t *j)
{
    if (j->phase == JOIN_CLOSING)
        return;
    j->phase = JOIN_CLOSING;
    uv_close((uv_handle_t *)&j->heartbeat_timer, NULL);
    uv_close((uv_handle_t *)&j->phase_timer, NULL);
    uv_close((uv_handle_t *)&j->orphan_timer, NULL);
    uv_close((uv_handle_t *)&j->sigint, NULL);
    uv_close((uv_handle_t *)&j->sigterm, NULL);
    uv_close((uv_handle_t *)&j->sighup, NULL);
    /* Closing them restored the default actions: a signal now (a supervisor that sends TERM
     * to the process and again to its group, as timeout(1) does) would kill the process in
     * the middle of its last close instead of letting it exit. */
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    worker_health_close(j->health);
    j->health = NULL;
    if (j->link_started)
        worker_link_close(&j->link, on_link_closed);
    worker_control_close(&j->ctl, on_control_closed);
}

static void on_feed_lease(void *arg, const Lc__FeedLease *l)
{
    join_t *j = arg;
    worker_control_feed_lease(&j->ctl, l);
}

static const worker_link_cbs_t link_cbs = {
    .connected = send_hello,
    .welcome = on_welcome,
    .assign = on_assign,
    .stop = on_stop,
    .acked = on_acked,
    .disconnected = on_disconnected,
    .lost = on_lost,
    .feed_lease = on_feed_lease,
};

/* The run's data ran out here: the leader ends it for every worker. */
static void on_run_exhausted(void *arg, worker_run_t *r, const char *reason)
{
    join_t *j = arg;
    if (worker_link_send_run_done(&j->link, r->id, reason) != 0)
        lc_warn("control", "msg=\"could not ask the leader to end the run\" run=%llu",
                (unsigned long long)r->id);
}

/* Not queued while no leader is reachable: the control thread asks again. */
static void on_feed_request(void *arg, uint64_t run, uint32_t feeder, uint64_t seq,
                            uint32_t count)
{
    join_t *j = arg;
    if (worker_link_send_feed_request(&j->link, run, feeder, seq, count) != 0)
        lc_debug("control", "msg=\"feed request not sent: no leader now\" run=%llu feeder=%u",
                 (unsigned long long)run, feeder);
}

static const worker_control_hooks_t control_hooks = {
    .batch = on_batch,
    .feed_request = on_feed_request,
    .run_finished = on_run_finished,
    .run_exhausted = on_run_exhausted,
};

/* SIGHUP: reopen --log-file (after logrotate moved it). */
static void on_sighup(uv_signal_t *s, int signum)
{
    join_t *j = s->data;
    char why[300];
    if (j->opts->log_file == NULL)
        return;
    if (lc_log_open_file(j->opts->log_file, why, sizeof why) != 0)
        lc_error("worker", "msg=\"cannot reopen the log file\" error=\"%s\"", why);
    else
        lc_info("worker", "msg=\"log file reopened\" path=\"%s\"", j->opts->log_file);
}

static void init_handles(join_t *j)
{
    uv_timer_init(&j->loop, &j->heartbeat_timer);
    uv_timer_init(&j->loop, &j->phase_timer);
    uv_timer_init(&j->loop, &j->orphan_timer);
    uv_signal_init(&j->loop, &j->sigint);
    uv_signal_init(&j->loop, &j->sigterm);
    j->heartbeat_timer.data = j->phase_timer.data = j->orphan_timer.data = j;
    j->sigint.data = j->sigterm.data = j;
    uv_signal_start(&j->sigint, on_signal, SIGINT);
    uv_signal_start(&j->sigterm, on_signal, SIGTERM);
    uv_signal_init(&j->loop, &j->sighup);
    j->sighup.data = j;
    uv_signal_start(&j->sighup, on_sighup, SIGHUP);
}

static void fill_health(void *arg, worker_health_view_t *v)
{
    join_t *j = arg;
    Lc__RunLoad loads[WORKER_LINK_MAX_LOADS];
    size_t n = worker_control_loads(&j->ctl, loads, WORKER_LINK_MAX_LOADS, false);
    v->worker_id = j->worker_id;
    v->joined = worker_link_ready(&j->link);
    v->cpu_percent = j->last_cpu_percent;
    v->rss_bytes = worker_rss_bytes();
    v->capacity = j->opts->capacity;
    v->outbox_bytes = j->link.outbox.bytes;
    for (unsigned i = 0; i < j->ctl.n_engines; i++) {
        uint64_t lag = worker_engine_take_lag_us(j->ctl.engines[i]);
        v->loop_lag_us = lag > v->loop_lag_us ? lag : v->loop_lag_us;
    }
    for (size_t i = 0; i < n; i++) {
        v->users += loads[i].users;
        v->connections += loads[i].connections;
        v->runs += loads[i].users > 0;
    }
}

/* The optional pieces: mutual TLS and the health endpoint. */
static int start_extras(join_t *j, const worker_opts_t *o, char *why, size_t whylen)
{
    int rv = 0;
    if (o->tls.cert != NULL)
        rv = lc_tls_context_new(&j->tls_ctx, false, &o->tls, why, whylen);
    if (rv == 0 && o->health_addr != NULL)
        rv = worker_health_start(&j->health, &j->loop, o->health_addr, fill_health, j, why,
                                 whylen);
    return rv;
}

static int serve(join_t *j, const worker_opts_t *o)
{
    char why[600];
    j->opts = o;
    if (worker_id_load(o->data_dir, j->worker_id, why, sizeof why) != 0) {
        fprintf(stderr, "loadworker: worker id: %s\n", why);
        return 1;
    }
    uint64_t epoch = 0;
    if (worker_seq_epoch_next(o->data_dir, &epoch, why, sizeof why) != 0) {
        fprintf(stderr, "loadworker: batch epoch: %s\n", why);
        return 1;
    }
    snprintf(j->name, sizeof j->name, "%s", o->name ? o->name : "");
    if (o->name == NULL && gethostname(j->name, sizeof j->name - 1) != 0)
        snprintf(j->name, sizeof j->name, "worker");
    if (uv_loop_init(&j->loop) != 0)
        return 1;
    init_handles(j);
    worker_engines_conf_t engines = {.count = o->threads, .busy_poll_us = o->busy_poll_us};
    int rv = worker_control_init(&j->ctl, &j->loop, &engines, true, j->worker_id,
                                 &control_hooks, j);
    if (rv == 0)
        worker_control_set_seq_epoch(&j->ctl, epoch);
    if (rv == 0 && (rv = start_extras(j, o, why, sizeof why)) != 0)
        fprintf(stderr, "loadworker: %s\n", why);
    if (rv == 0) {
        rv = worker_link_start(&j->link, &j->loop, o->join, o->outbox_max_bytes, j->tls_ctx,
                               &link_cbs, j, why, sizeof why);
        j->link_started = rv == 0;
        if (rv != 0)
            fprintf(stderr, "loadworker: %s\n", why);
    }
    if (rv != 0) {
        j->exit_code = rv == LC_EINVAL ? 2 : 1;
        close_all(j);
    } else {
        lc_notify_status("connecting to the masters");
        lc_info("worker", "msg=\"worker started\" id=%s name=\"%s\" threads=%u capacity=%u "
                          "join=\"%s\" orphan_timeout_s=%u outbox_max_bytes=%zu",
                j->worker_id, j->name, o->threads, o->capacity, o->join, o->orphan_timeout_s,
                o->outbox_max_bytes);
    }
    uv_run(&j->loop, UV_RUN_DEFAULT);
    uv_loop_close(&j->loop);
    SSL_CTX_free(j->tls_ctx);
    return j->exit_code;
}

int worker_join_main(const worker_opts_t *o)
{
    join_t *j = calloc(1, sizeof *j); /* large: holds the link's read buffer */
    if (j == NULL)
        return 1;
    int rv = serve(j, o);
    free(j);
    return rv;
}
