/* local.c — `loadworker --local`: one run on this machine, no master, and
 * the same report the master gives. */
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <uv.h>

#include "control.h"
#include "lc_err.h"
#include "lc_file.h"
#include "lc_log.h"
#include "lc_report.h"
#include "lc_run_state.h"
#include "local_verdict.h"
#include "lc_scenario.h"
#include "opts.h"

/* As k6 (and loadctl run --wait): a failed threshold. */
#define LOCAL_EXIT_THRESHOLDS 99

/* Users running at one moment of the run, and the engines' worst loop lag in the second
 * before it, for the JSON report's timeline. */
typedef struct local_sample_s {
    double t_s;
    uint32_t users;
    uint64_t lag_us;
} local_sample_t;

typedef struct local_s {
    const worker_opts_t *opts;
    local_sample_t *samples; /* one per stats interval (1 s) */
    size_t n_samples, cap_samples;
    uv_loop_t loop;
    worker_control_t ctl;
    uv_timer_t duration_timer;
    uv_signal_t sigint, sigterm;
    uint64_t duration_ms;
    int exit_code;
    bool ended;
    worker_trace_t trace;    /* --trace */
    uv_timer_t trace_timer;  /* --trace: looks for the traced user's end */
} local_t;

static json_t *latency_json(const lc_hist_t *h)
{
    if (h->total == 0) /* no percentiles of nothing: nulls, as the master's API */
        return json_pack("{s:n,s:n,s:n,s:n,s:n,s:n,s:n}", "min", "mean", "p50", "p90", "p95",
                         "p99", "max");
    lc_report_latency_t l;
    lc_report_latency_from_hist(h, &l);
    return json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "min", l.min, "mean", l.mean, "p50", l.p50,
                     "p90", l.p90, "p95", l.p95, "p99", l.p99, "max", l.max);
}

static json_t *counts_json(const worker_ep_stats_t *e, double secs)
{
    return json_pack("{s:I,s:I,s:I,s:f,s:o}", "requests", (json_int_t)e->count, "failures",
                     (json_int_t)e->failures, "bytes", (json_int_t)e->bytes, "rps",
                     secs > 0 ? (double)e->count / secs : 0.0, "latency_ms",
                     latency_json(&e->hist));
}

/* Scripts' check(cond, name) counts, by name. */
static json_t *checks_json(const worker_checks_t *cs)
{
    json_t *arr = json_array();
    for (size_t i = 0; cs != NULL && i < cs->n; i++)
        json_array_append_new(arr, json_pack("{s:s,s:I,s:I}", "name", cs->c[i].name, "passed",
                                             (json_int_t)cs->c[i].passed, "failed",
                                             (json_int_t)cs->c[i].failed));
    return arr;
}

/* One (endpoint, kind) of the errors, with its first message when one was kept. */
static json_t *error_json(const worker_stats_t *s, size_t ep, int kind, const char *name)
{
    json_t *e = json_pack("{s:s,s:s,s:I}", "endpoint", name, "kind", worker_err_kind_name(kind),
                          "count", (json_int_t)s->ep[ep].errors[kind]);
    const char *msg = worker_stats_note(s, ep, kind);
    if (e != NULL && msg != NULL)
        json_object_set_new(e, "first_message", json_string(msg));
    return e;
}

static void print_json(const worker_run_t *r, double secs, const local_t *lc, json_t *thresholds,
                       const char *verdict)
{
    const worker_stats_t *s = r->acc;
    json_t *timeline = json_array();
    uint64_t lag_max_us = 0;
    for (size_t i = 0; i < lc->n_samples; i++) {
        const local_sample_t *sm = &lc->samples[i];
        json_array_append_new(timeline, json_pack("{s:f,s:i,s:f}", "t_s", sm->t_s, "users",
                                                  (int)sm->users, "loop_lag_ms",
                                                  (double)sm->lag_us / 1000.0));
        lag_max_us = sm->lag_us > lag_max_us ? sm->lag_us : lag_max_us;
    }
    worker_ep_stats_t total;
    worker_stats_total(s, worker_plan_requests(r->plan), &total);
    json_t *eps = json_array(), *errs = json_array();
    for (size_t i = 0; i < s->n; i++) {
        json_t *e = counts_json(&s->ep[i], secs);
        json_object_set_new(e, "name", json_string(r->plan->endpoints[i].name));
        json_object_set_new(e, "method", json_string(r->plan->endpoints[i].method));
        json_array_append_new(eps, e);
        for (int k = 0; k < WORKER_ERR_KINDS; k++)
            if (s->ep[i].errors[k] > 0)
                json_array_append_new(errs, error_json(s, i, k, r->plan->endpoints[i].name));
    }
    json_t *totals = counts_json(&total, secs);
    json_object_set_new(totals, "dropped", json_integer((json_int_t)s->dropped));
    json_object_set_new(totals, "tls_handshakes", json_integer((json_int_t)s->tls_handshakes));
    json_object_set_new(totals, "tls_resumed", json_integer((json_int_t)s->tls_resumed));
    json_t *root = json_pack("{s:s,s:s,s:f,s:o,s:o,s:o,s:o}", "name", r->plan->scenario.name,
                             "state", lc_run_state_name(LC_RUN_FINISHED), "duration_s", secs,
                             "totals", totals, "endpoints", eps, "errors", errs, "timeline",
                             timeline);
    json_object_set_new(root, "verdict", json_string(verdict));
    json_object_set_new(root, "engine_loop_lag_ms_max", json_real((double)lag_max_us / 1000.0));
    /* CPU the engines spent polling for work that had not come (busy_poll.h): idle time. */
    json_object_set_new(root, "engine_polled_s",
                        json_real((double)worker_control_polled_ns(&lc->ctl) / 1e9));
    if (r->plan->scenario.script != NULL)
        json_object_set_new(root, "checks", checks_json(s->checks));
    json_object_set_new(root, "thresholds", thresholds ? json_incref(thresholds) : json_array());
    char *text = json_dumps(root, JSON_INDENT(2));
    if (text != NULL)
        printf("%s\n", text);
    free(text);
    json_decref(root);
}

static void print_table(const worker_run_t *r, double secs)
{
    const worker_stats_t *s = r->acc;
    lc_report_row_t *rows = calloc(s->n ? s->n : 1, sizeof *rows);
    lc_report_error_t *errs = calloc((s->n ? s->n : 1) * WORKER_ERR_KINDS, sizeof *errs);
    lc_report_check_t *checks = calloc(WORKER_CHECKS_MAX, sizeof *checks);
    worker_ep_stats_t total;
    char title[300];
    if (rows == NULL || errs == NULL || checks == NULL)
        goto out;
    lc_report_t rep = {.title = title, .duration_s = secs, .rows = rows, .n_rows = s->n,
                       .errors = errs, .dropped = s->dropped,
                       .tls_handshakes = s->tls_handshakes, .tls_resumed = s->tls_resumed};
    snprintf(title, sizeof title, "local run %s: finished", r->plan->scenario.name);
    for (size_t i = 0; i < s->n; i++) {
        const worker_ep_stats_t *e = &s->ep[i];
        rows[i] = (lc_report_row_t){.name = r->plan->endpoints[i].name,
                                    .method = r->plan->endpoints[i].method,
                                    .requests = e->count, .failures = e->failures,
                                    .rps = secs > 0 ? (double)e->count / secs : 0};
        lc_report_latency_from_hist(&e->hist, &rows[i].latency);
        for (int k = 0; k < WORKER_ERR_KINDS; k++)
            if (e->errors[k] > 0)
                errs[rep.n_errors++] = (lc_report_error_t){
                    .endpoint = r->plan->endpoints[i].name,
                    .kind = worker_err_kind_name(k), .count = e->errors[k],
                    .message = worker_stats_note(s, i, k)};
    }
    worker_stats_total(s, worker_plan_requests(r->plan), &total);
    rep.total = (lc_report_row_t){.name = "Total", .method = "", .requests = total.count,
                                  .failures = total.failures,
                                  .rps = secs > 0 ? (double)total.count / secs : 0};
    lc_report_latency_from_hist(&total.hist, &rep.total.latency);
    for (size_t i = 0; s->checks != NULL && i < s->checks->n; i++)
        checks[rep.n_checks++] = (lc_report_check_t){
            s->checks->c[i].name, s->checks->c[i].passed, s->checks->c[i].failed};
    rep.checks = checks;
    lc_report_print(stdout, &rep);
out:
    free(rows);
    free(errs);
    free(checks);
}

static void on_closed(worker_control_t *ctl) {}

static void end(local_t *lc)
{
    if (lc->ended)
        return;
    lc->ended = true;
    uv_close((uv_handle_t *)&lc->duration_timer, NULL);
    uv_close((uv_handle_t *)&lc->trace_timer, NULL);
    uv_close((uv_handle_t *)&lc->sigint, NULL);
    uv_close((uv_handle_t *)&lc->sigterm, NULL);
    worker_control_close(&lc->ctl, on_closed);
}

static void on_finished(void *arg, worker_run_t *r)
{
    local_t *lc = arg;
    double secs = (double)(r->finished_ms - r->started_ms) / 1000.0;
    bool passed = true;
    json_t *thresholds = local_verdict(r, secs, &passed);
    const char *verdict = json_array_size(thresholds) == 0 ? "" : passed ? "pass" : "fail";
    if (lc->opts->json) {
        print_json(r, secs, lc, thresholds, verdict);
    } else {
        print_table(r, secs);
        local_verdict_print(stdout, thresholds);
    }
    fflush(stdout);
    json_decref(thresholds);
    if (!passed)
        lc->exit_code = LOCAL_EXIT_THRESHOLDS;
    end(lc);
}

static void on_failed(void *arg, uint64_t run, const char *why)
{
    local_t *lc = arg;
    fprintf(stderr, "loadworker: %s\n", why);
    lc->exit_code = 1;
    end(lc);
}

static void on_duration(uv_timer_t *t)
{
    local_t *lc = t->data;
    worker_control_stop_all(&lc->ctl, UINT32_MAX);
}

/* Once a second: how many users the engines run and how late their loops ran a 100 ms
 * probe at worst since the last second (the JSON's timeline). */
static void on_interval(void *arg, worker_run_t *r)
{
    local_t *lc = arg;
    if (lc->n_samples == lc->cap_samples) {
        size_t cap = lc->cap_samples ? lc->cap_samples * 2 : 64;
        local_sample_t *grown = realloc(lc->samples, cap * sizeof *grown);
        if (grown == NULL)
            return; /* the timeline is best effort */
        lc->samples = grown;
        lc->cap_samples = cap;
    }
    uint32_t users = 0;
    uint64_t lag_us = 0;
    for (unsigned i = 0; i < lc->ctl.n_engines; i++) {
        uint64_t lag = worker_engine_take_lag_us(lc->ctl.engines[i]);
        users += r->eng_users[i];
        lag_us = lag > lag_us ? lag : lag_us;
    }
    lc->samples[lc->n_samples++] = (local_sample_t){
        .t_s = (double)(uv_now(&lc->loop) - r->started_ms) / 1000.0, .users = users,
        .lag_us = lag_us};
}

static void on_started(void *arg, worker_run_t *r)
{
    local_t *lc = arg;
    uv_timer_start(&lc->duration_timer, on_duration, lc->duration_ms, 0);
}

/* --trace: the one user ended (its on_stop too): the dry run is over. */
static void on_trace_tick(uv_timer_t *t)
{
    local_t *lc = t->data;
    if (!atomic_load(&lc->trace.done))
        return;
    uv_timer_stop(t);
    worker_control_stop_all(&lc->ctl, UINT32_MAX);
}

static void on_signal(uv_signal_t *s, int signum)
{
    local_t *lc = s->data;
    lc_info("local", "msg=\"signal: stopping the run\" signal=%d", signum);
    worker_control_stop_all(&lc->ctl, UINT32_MAX);
}

/* A stop_run feeder ran out: the local run ends. */
static void on_run_exhausted(void *arg, worker_run_t *r, const char *reason)
{
    local_t *lc = arg;
    lc_info("local", "msg=\"the run ends\" run=%llu reason=\"%s\"", (unsigned long long)r->id,
            reason);
    worker_control_stop_all(&lc->ctl, UINT32_MAX);
}

static const worker_control_hooks_t local_hooks = {
    .run_exhausted = on_run_exhausted,
    .run_started = on_started,
    .run_finished = on_finished,
    .run_failed = on_failed,
    .interval = on_interval,
};

/* Reads and validates the scenario: 0, or the exit code after printing why. */
static int load_scenario(const char *path, bool trace, char **json, size_t *len,
                         lc_scenario_t *sc)
{
    char why[600];
    if (lc_file_read(path, LC_SCENARIO_MAX_BYTES, json, len, why, sizeof why) != 0) {
        fprintf(stderr, "loadworker: %s\n", why);
        return 2;
    }
    if (lc_scenario_parse(*json, *len, sc, why, sizeof why) != 0) {
        fprintf(stderr, "loadworker: %s: %s\n", path, why);
        free(*json);
        return 2;
    }
    if (trace && sc->program == NULL) {
        fprintf(stderr, "loadworker: %s: --trace follows journeys; this scenario has only tasks "
                        "(put them in \"journeys\", or add one)\n", path);
        lc_scenario_free(sc);
        free(*json);
        return 2;
    }
    return 0;
}

static int start(local_t *lc, const char *json, size_t len, const lc_scenario_t *sc)
{
    char why[600];
    worker_engines_conf_t engines = {.count = lc->opts->trace ? 1 : lc->opts->threads,
                                     .busy_poll_us = lc->opts->busy_poll_us};
    int rv = worker_control_init(&lc->ctl, &lc->loop, &engines, false, "local", &local_hooks,
                                 lc);
    uv_timer_init(&lc->loop, &lc->trace_timer);
    lc->trace_timer.data = lc;
    if (rv == 0 && lc->opts->trace) {
        worker_trace_init(&lc->trace, stdout);
        lc->ctl.trace = &lc->trace;
        uv_timer_start(&lc->trace_timer, on_trace_tick, 20, 20);
    }
    uv_timer_init(&lc->loop, &lc->duration_timer);
    lc->duration_timer.data = lc;
    uv_signal_init(&lc->loop, &lc->sigint);
    uv_signal_init(&lc->loop, &lc->sigterm);
    lc->sigint.data = lc->sigterm.data = lc;
    uv_signal_start(&lc->sigint, on_signal, SIGINT);
    uv_signal_start(&lc->sigterm, on_signal, SIGTERM);
    if (rv != 0) {
        fprintf(stderr, "loadworker: cannot start engines: %s\n", lc_strerror(rv));
        return 1;
    }
    /* The whole scenario: in the open model, all of max_users and arrival_rate. */
    uint32_t users = sc->arrival_rate > 0 ? sc->max_users : sc->users;
    worker_assign_t a = {.run = 1, .generation = 1,
                         .users = lc->opts->trace ? 1 : users,
                         .spawn_rate = sc->spawn_rate, .rate = sc->arrival_rate,
                         .scenario_json = json, .scenario_len = len};
    if (worker_control_assign(&lc->ctl, &a, why, sizeof why) != 0) {
        fprintf(stderr, "loadworker: %s\n", why);
        return 1;
    }
    return 0;
}

int worker_local_main(const worker_opts_t *o)
{
    local_t lc = {.opts = o};
    char *json;
    size_t len;
    lc_scenario_t sc;
    int rv = load_scenario(o->local, o->trace, &json, &len, &sc);
    if (rv != 0)
        return rv;
    lc.duration_ms = sc.duration_ms;
    if (uv_loop_init(&lc.loop) != 0) {
        fprintf(stderr, "loadworker: cannot create an event loop\n");
        lc_scenario_free(&sc);
        free(json);
        return 1;
    }
    if ((rv = start(&lc, json, len, &sc)) != 0) {
        lc.exit_code = rv;
        end(&lc);
    }
    lc_scenario_free(&sc);
    free(json);
    uv_run(&lc.loop, UV_RUN_DEFAULT);
    uv_loop_close(&lc.loop);
    free(lc.samples);
    return lc.exit_code;
}
