/* metrics.c — Prometheus text format: per run, tenant and endpoint request,
 * failure and error-kind counters and latency histograms; users, grants and dropped
 * starts per run; workers by state; Raft role, term and apply lag. Every
 * label value a tenant or worker named is escaped. */
#include "metrics.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batcher.h"
#include "fleet.h"
#include "lc_buf.h"
#include "lc_err.h"
#include "lc_scenario.h"
#include "lc_utf8.h"
#include "quorum.h"
#include "runs.h"
#include "store_metrics.h"

/* Upper bounds (seconds) of the latency histogram's buckets, besides +Inf. */
static const double latency_buckets_s[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                           0.25,  0.5,    1,     2.5,  5,     10,   30};
#define N_LATENCY_BUCKETS (sizeof latency_buckets_s / sizeof latency_buckets_s[0])

/* The page being written; one failed append fails the page, checked once at the end. */
typedef struct text_s {
    lc_buf_t b;
    bool failed;
} text_t;

static void appendf(text_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void appendf(text_t *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (!t->failed && lc_buf_vappendf(&t->b, fmt, ap) != 0)
        t->failed = true;
    va_end(ap);
}

static void family(text_t *t, const char *name, const char *type, const char *help)
{
    appendf(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Label values: valid UTF-8 (cut at a code point, invalid bytes replaced),
 * with backslash, double quote and newline escaped as the format requires,
 * so that a name cannot end its label and forge others. */
static void label_escape(const char *in, char *out, size_t len)
{
    size_t j = 0, n = strlen(in);
    for (size_t i = 0; i < n;) {
        size_t seq = lc_utf8_seq_len(in + i, n - i);
        const char *piece = seq ? in + i : "\xef\xbf\xbd";
        size_t plen = seq ? seq : 3;
        char esc[2] = {'\\', in[i] == '\n' ? 'n' : in[i]};
        if (seq == 1 && (in[i] == '\\' || in[i] == '"' || in[i] == '\n')) {
            piece = esc;
            plen = 2;
        }
        if (j + plen >= len)
            break;
        memcpy(out + j, piece, plen);
        j += plen;
        i += seq ? seq : 1;
    }
    out[j] = '\0';
}

/* The labels every run's series carry: run, tenant, state. */
static void run_labels(uint64_t run, const char *tenant, const char *state, char *out,
                       size_t len)
{
    char t[256], st[64];
    label_escape(tenant, t, sizeof t);
    label_escape(state, st, sizeof st);
    snprintf(out, len, "run=\"%llu\",tenant=\"%s\",state=\"%s\"", (unsigned long long)run, t,
             st);
}

/* The labels of one endpoint: run, tenant, endpoint, method; of a journey's iteration or
 * group series: run, tenant, journey or group (the series name without its prefix). */
static void endpoint_labels(const store_endpoint_metrics_t *e, char *out, size_t len)
{
    char tenant[256], endpoint[512], method[64];
    label_escape(e->tenant, tenant, sizeof tenant);
    if (lc_series_is_timer(e->method)) {
        bool iteration = strcmp(e->method, LC_SERIES_ITERATION) == 0;
        const char *colon = strchr(e->endpoint, ':');
        label_escape(colon ? colon + 1 : e->endpoint, endpoint, sizeof endpoint);
        snprintf(out, len, "run=\"%llu\",tenant=\"%s\",%s=\"%s\"", (unsigned long long)e->run,
                 tenant, iteration ? "journey" : "group", endpoint);
        return;
    }
    label_escape(e->endpoint, endpoint, sizeof endpoint);
    label_escape(e->method, method, sizeof method);
    snprintf(out, len, "run=\"%llu\",tenant=\"%s\",endpoint=\"%s\",method=\"%s\"",
             (unsigned long long)e->run, tenant, endpoint, method);
}

/* Whether the scraper may see a series of this tenant. */
static bool in_scope(const metrics_scope_t *scope, const char *tenant)
{
    return scope->tenant_series && (scope->tenant[0] == '\0' || strcmp(scope->tenant, tenant) == 0);
}

/* Values recorded at or below limit_us: whole buckets only, so a count is
 * off by at most the one bucket straddling the limit (1 % of its value). */
static uint64_t count_at_or_below(const lc_hist_t *h, uint64_t limit_us)
{
    uint64_t n = 0;
    for (uint32_t b = 0; b < LC_HIST_BUCKETS && lc_hist_bucket_high(b) <= limit_us; b++)
        n += h->counts[b];
    return n;
}

enum endpoint_pass { PASS_REQUESTS, PASS_FAILURES, PASS_LATENCY, PASS_ITERATIONS, PASS_GROUPS };

typedef struct endpoint_ctx_s {
    text_t *t;
    const metrics_scope_t *scope;
    enum endpoint_pass pass;
} endpoint_ctx_t;

static void latency_lines(text_t *t, const char *name, const char *labels, const lc_hist_t *h)
{
    for (size_t i = 0; i < N_LATENCY_BUCKETS; i++)
        appendf(t, "%s_bucket{%s,le=\"%g\"} %llu\n", name, labels, latency_buckets_s[i],
                (unsigned long long)count_at_or_below(h, (uint64_t)(latency_buckets_s[i] * 1e6)));
    appendf(t, "%s_bucket{%s,le=\"+Inf\"} %llu\n", name, labels, (unsigned long long)h->total);
    appendf(t, "%s_sum{%s} %.6f\n", name, labels, (double)h->sum / 1e6);
    appendf(t, "%s_count{%s} %llu\n", name, labels, (unsigned long long)h->total);
}

static void endpoint_row(void *arg, const store_endpoint_metrics_t *e)
{
    endpoint_ctx_t *ctx = arg;
    char labels[1024];
    bool timer = lc_series_is_timer(e->method);
    bool iteration = timer && strcmp(e->method, LC_SERIES_ITERATION) == 0;
    if (!in_scope(ctx->scope, e->tenant))
        return;
    if (timer != (ctx->pass == PASS_ITERATIONS || ctx->pass == PASS_GROUPS) ||
        (timer && iteration != (ctx->pass == PASS_ITERATIONS)))
        return; /* each family has its own series */
    endpoint_labels(e, labels, sizeof labels);
    if (timer)
        latency_lines(ctx->t, iteration ? "loadcluster_iteration_duration_seconds"
                                        : "loadcluster_group_duration_seconds",
                      labels, e->hist);
    else if (ctx->pass == PASS_REQUESTS)
        appendf(ctx->t, "loadcluster_requests_total{%s} %llu\n", labels,
                (unsigned long long)e->count);
    else if (ctx->pass == PASS_FAILURES)
        appendf(ctx->t, "loadcluster_failures_total{%s} %llu\n", labels,
                (unsigned long long)e->failures);
    else
        latency_lines(ctx->t, "loadcluster_request_duration_seconds", labels, e->hist);
}

static void endpoint_families(text_t *t, store_t *store, const metrics_scope_t *scope)
{
    endpoint_ctx_t ctx = {t, scope, PASS_REQUESTS};
    family(t, "loadcluster_requests_total", "counter",
           "Requests completed, per run, tenant and endpoint (newest 50 runs).");
    store_each_endpoint_metrics(store, endpoint_row, &ctx);
    ctx.pass = PASS_FAILURES;
    family(t, "loadcluster_failures_total", "counter",
           "Failed requests, per run, tenant and endpoint (newest 50 runs).");
    store_each_endpoint_metrics(store, endpoint_row, &ctx);
    ctx.pass = PASS_LATENCY;
    family(t, "loadcluster_request_duration_seconds", "histogram",
           "Request latency, per run, tenant and endpoint (newest 50 runs).");
    store_each_endpoint_metrics(store, endpoint_row, &ctx);
    ctx.pass = PASS_ITERATIONS;
    family(t, "loadcluster_iteration_duration_seconds", "histogram",
           "Journeys' iteration durations, per run, tenant and journey (newest 50 runs).");
    store_each_endpoint_metrics(store, endpoint_row, &ctx);
    ctx.pass = PASS_GROUPS;
    family(t, "loadcluster_group_duration_seconds", "histogram",
           "Journeys' group durations, per run, tenant and group (newest 50 runs).");
    store_each_endpoint_metrics(store, endpoint_row, &ctx);
}

/* Errors by kind: run, tenant, endpoint, kind (timeout, connect, status, extract, ...). */
static void error_row(void *arg, const store_error_metrics_t *e)
{
    const endpoint_ctx_t *ctx = arg;
    if (!in_scope(ctx->scope, e->tenant))
        return;
    char tenant[256], endpoint[512], kind[64];
    label_escape(e->tenant, tenant, sizeof tenant);
    label_escape(e->endpoint, endpoint, sizeof endpoint);
    label_escape(e->kind, kind, sizeof kind);
    appendf(ctx->t, "loadcluster_errors_total{run=\"%llu\",tenant=\"%s\",endpoint=\"%s\",kind=\"%s\"} %llu\n",
            (unsigned long long)e->run, tenant, endpoint, kind, (unsigned long long)e->count);
}

static void error_family(text_t *t, store_t *store, const metrics_scope_t *scope)
{
    endpoint_ctx_t ctx = {t, scope, PASS_FAILURES};
    family(t, "loadcluster_errors_total", "counter",
           "Errors by kind, per run, tenant and endpoint (newest 50 runs).");
    store_each_error_metrics(store, error_row, &ctx);
}

enum run_pass { RUN_USERS, RUN_REQUESTED, RUN_GRANTED, RUN_QUEUED, RUN_DROPPED, RUN_LOST, RUN_PASSES };

static const struct {
    const char *name, *type, *help;
} run_families[RUN_PASSES] = {
    {"loadcluster_run_active_users", "gauge", "Users running now on connected workers."},
    {"loadcluster_scheduler_requested_users", "gauge", "Users the run asks for."},
    {"loadcluster_scheduler_granted_users", "gauge", "Users the scheduler grants the run."},
    {"loadcluster_scheduler_queued", "gauge", "1 while the run waits for capacity."},
    {"loadcluster_run_dropped_starts_total", "counter",
     "Requests the open model could not start on time (no idle user)."},
    {"loadcluster_run_lost_requests_total", "counter",
     "Requests whose stats a worker had to drop (outbox overflow)."},
};

typedef struct run_ctx_s {
    text_t *t;
    const metrics_users_t *users;
    const metrics_scope_t *scope;
    enum run_pass pass;
} run_ctx_t;

int metrics_users_take(master_t *m, metrics_users_t *out)
{
    size_t n, cap = 0;
    fleet_worker_t **workers = fleet_connected(m->fleet, &n);
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < n; i++)
        cap += workers[i]->n_loads;
    if (cap == 0)
        return 0;
    if ((out->runs = calloc(cap, sizeof *out->runs)) == NULL)
        return LC_ENOMEM;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < workers[i]->n_loads; j++) {
            size_t k = 0;
            while (k < out->n && out->runs[k].run != workers[i]->loads[j].run)
                k++;
            if (k == out->n)
                out->runs[out->n++].run = workers[i]->loads[j].run;
            out->runs[k].users += workers[i]->loads[j].users;
        }
    return 0;
}

void metrics_users_free(metrics_users_t *u)
{
    free(u->runs);
    memset(u, 0, sizeof *u);
}

static uint64_t active_users(const metrics_users_t *u, uint64_t run)
{
    for (size_t k = 0; k < u->n; k++)
        if (u->runs[k].run == run)
            return u->runs[k].users;
    return 0;
}

static void run_row(void *arg, const store_run_metrics_t *r)
{
    run_ctx_t *ctx = arg;
    uint64_t v = 0;
    if (!in_scope(ctx->scope, r->tenant))
        return;
    switch (ctx->pass) {
    case RUN_USERS: v = active_users(ctx->users, r->run); break;
    case RUN_REQUESTED: v = r->users_requested; break;
    case RUN_GRANTED: v = r->users_granted; break;
    case RUN_QUEUED: v = r->queued; break;
    case RUN_DROPPED: v = r->dropped; break;
    case RUN_LOST: v = r->lost_requests; break;
    case RUN_PASSES: return;
    }
    char labels[512];
    run_labels(r->run, r->tenant, r->state, labels, sizeof labels);
    appendf(ctx->t, "%s{%s} %llu\n", run_families[ctx->pass].name, labels, (unsigned long long)v);
}

static void run_families_lines(text_t *t, store_t *store, const metrics_scope_t *scope,
                               const metrics_users_t *users)
{
    run_ctx_t ctx = {t, users, scope, RUN_USERS};
    for (ctx.pass = RUN_USERS; ctx.pass < RUN_PASSES; ctx.pass++) {
        family(t, run_families[ctx.pass].name, run_families[ctx.pass].type,
               run_families[ctx.pass].help);
        store_each_run_metrics(store, run_row, &ctx);
    }
}

static void worker_lines(text_t *t, master_t *m)
{
    size_t n, connected = 0, saturated = 0, users = 0;
    fleet_worker_t *const *workers = fleet_known(m->fleet, &n);
    for (size_t i = 0; i < n; i++) {
        connected += workers[i]->conn != NULL && !workers[i]->sat.saturated;
        saturated += workers[i]->conn != NULL && workers[i]->sat.saturated;
        for (size_t j = 0; workers[i]->conn != NULL && j < workers[i]->n_loads; j++)
            users += workers[i]->loads[j].users;
    }
    family(t, "loadcluster_active_users", "gauge", "Users running on connected workers.");
    appendf(t, "loadcluster_active_users %zu\n", users);
    family(t, "loadcluster_workers", "gauge",
           "Workers this master knows, by state (disconnected: not yet declared lost).");
    appendf(t, "loadcluster_workers{state=\"connected\"} %zu\n", connected);
    appendf(t, "loadcluster_workers{state=\"saturated\"} %zu\n", saturated);
    appendf(t, "loadcluster_workers{state=\"disconnected\"} %zu\n", n - connected - saturated);
    family(t, "loadcluster_workers_connected", "gauge", "Workers connected to this master.");
    appendf(t, "loadcluster_workers_connected %zu\n", connected + saturated);
    runs_refused_t refused = runs_refused(m->runs);
    family(t, "loadcluster_worker_messages_refused_total", "counter",
           "Worker messages refused since start: statistics, refusals, Hello claims and feed requests for runs "
           "or shares the worker was not given, or with counters the plan cannot have.");
    appendf(t, "loadcluster_worker_messages_refused_total{kind=\"stats\"} %llu\n",
            (unsigned long long)refused.stats);
    appendf(t, "loadcluster_worker_messages_refused_total{kind=\"refusal\"} %llu\n",
            (unsigned long long)refused.refusals);
    appendf(t, "loadcluster_worker_messages_refused_total{kind=\"claim\"} %llu\n",
            (unsigned long long)refused.claims);
    appendf(t, "loadcluster_worker_messages_refused_total{kind=\"feed\"} %llu\n",
            (unsigned long long)refused.feeds);
}

static void raft_lines(text_t *t, master_t *m)
{
    uint64_t commit = quorum_commit_index(m->quorum), applied = quorum_applied_index(m->quorum);
    family(t, "loadcluster_raft_leader", "gauge", "1 when this master is the Raft leader.");
    appendf(t, "loadcluster_raft_leader %d\n", quorum_is_leader(m->quorum) ? 1 : 0);
    family(t, "loadcluster_raft_term", "gauge", "Current Raft term.");
    appendf(t, "loadcluster_raft_term %llu\n", (unsigned long long)quorum_term(m->quorum));
    family(t, "loadcluster_raft_commit_index", "gauge", "Highest log entry known committed.");
    appendf(t, "loadcluster_raft_commit_index %llu\n", (unsigned long long)commit);
    family(t, "loadcluster_raft_applied_index", "gauge", "Highest log entry applied here.");
    appendf(t, "loadcluster_raft_applied_index %llu\n", (unsigned long long)applied);
    family(t, "loadcluster_raft_apply_lag", "gauge", "Committed entries not yet applied here.");
    appendf(t, "loadcluster_raft_apply_lag %llu\n",
            (unsigned long long)(commit > applied ? commit - applied : 0));
    family(t, "loadcluster_master_loop_lag_seconds", "gauge",
           "How late this master's event loop ran a timer: the worst of the last 10 s.");
    appendf(t, "loadcluster_master_loop_lag_seconds %.6f\n",
            (double)lc_loop_lag_recent_us(&m->loop_lag) / 1e6);
    family(t, "loadcluster_master_loop_lag_max_seconds", "gauge",
           "How late this master's event loop ran a timer: the worst since start.");
    appendf(t, "loadcluster_master_loop_lag_max_seconds %.6f\n",
            (double)lc_loop_lag_max_us(&m->loop_lag) / 1e6);
    family(t, "loadcluster_worker_heartbeat_delay_seconds", "gauge",
           "How much later than its connection's fastest one a worker heartbeat arrived here:"
           " the worst of the last 10 s.");
    appendf(t, "loadcluster_worker_heartbeat_delay_seconds %.3f\n",
            (double)lc_worst_recent(fleet_heartbeat_delay(m->fleet)) / 1e3);
    family(t, "loadcluster_outbox_replays_total", "counter",
           "Stats batches workers sent again after a lost acknowledgement (deduplicated).");
    appendf(t, "loadcluster_outbox_replays_total %llu\n",
            (unsigned long long)batcher_replays(m->batcher));
}

/* The page is appended to out; on failure out keeps what it had. */
static int finish(text_t *t, lc_buf_t *out)
{
    int rv = t->failed ? LC_ENOMEM : lc_buf_append(out, t->b.data ? t->b.data : "", t->b.len);
    lc_buf_free(&t->b);
    return rv;
}

int metrics_render_cluster(master_t *m, lc_buf_t *out)
{
    text_t t = {0};
    worker_lines(&t, m);
    raft_lines(&t, m);
    return finish(&t, out);
}

int metrics_render_tenant_series(store_t *reader, const metrics_scope_t *scope,
                                 const metrics_users_t *users, lc_buf_t *out)
{
    text_t t = {0};
    endpoint_families(&t, reader, scope);
    error_family(&t, reader, scope);
    run_families_lines(&t, reader, scope, users);
    return finish(&t, out);
}
