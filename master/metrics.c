/* metrics.c — Prometheus text format: requests and failures per run and
 * endpoint, active users, connected workers, Raft role. */
#include "metrics.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet.h"
#include "quorum.h"
#include "store.h"

typedef struct text_s {
    char *buf;
    size_t len, cap;
    bool failed;
} text_t;

static void appendf(text_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void appendf(text_t *t, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->buf ? t->buf + t->len : NULL, t->buf ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = true;
            return;
        }
        if (t->buf != NULL && t->len + (size_t)n < t->cap) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = (t->cap ? t->cap * 2 : 4096) + (size_t)n;
        char *grown = realloc(t->buf, cap);
        if (grown == NULL) {
            t->failed = true;
            return;
        }
        t->buf = grown;
        t->cap = cap;
    }
}

/* Label values: escape backslash, quote and newline as the format requires. */
static void label_escape(const char *in, char *out, size_t len)
{
    size_t j = 0;
    for (size_t i = 0; in[i] != '\0' && j + 2 < len; i++) {
        char c = in[i];
        if (c == '\\' || c == '"' || c == '\n') {
            out[j++] = '\\';
            c = c == '\n' ? 'n' : c;
        }
        out[j++] = c;
    }
    out[j] = '\0';
}

typedef struct endpoint_pass_s {
    text_t *t;
    bool failures; /* which counter this pass prints */
} endpoint_pass_t;

static void endpoint_row(void *arg, uint64_t run, const char *state, const char *endpoint,
                         const char *method, uint64_t count, uint64_t failures)
{
    endpoint_pass_t *p = arg;
    char name[256];
    label_escape(endpoint, name, sizeof name);
    appendf(p->t, "%s{run=\"%llu\",state=\"%s\",endpoint=\"%s\",method=\"%s\"} %llu\n",
            p->failures ? "loadcluster_failures_total" : "loadcluster_requests_total",
            (unsigned long long)run, state, name, method,
            (unsigned long long)(p->failures ? failures : count));
}

static void worker_lines(text_t *t, master_t *m)
{
    size_t n;
    fleet_worker_t **workers = fleet_connected(m->fleet, &n);
    uint64_t users = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < workers[i]->n_loads; j++)
            users += workers[i]->loads[j].users;
    appendf(t, "# HELP loadcluster_active_users Users running on connected workers.\n"
               "# TYPE loadcluster_active_users gauge\nloadcluster_active_users %llu\n",
            (unsigned long long)users);
    appendf(t, "# HELP loadcluster_workers_connected Workers connected to this master.\n"
               "# TYPE loadcluster_workers_connected gauge\nloadcluster_workers_connected %zu\n",
            n);
}

char *metrics_render(master_t *m)
{
    text_t t = {0};
    endpoint_pass_t pass = {&t, false};
    appendf(&t, "# HELP loadcluster_requests_total Requests completed, per run and endpoint.\n"
                "# TYPE loadcluster_requests_total counter\n");
    store_each_endpoint(m->store, endpoint_row, &pass);
    pass.failures = true;
    appendf(&t, "# HELP loadcluster_failures_total Failed requests, per run and endpoint.\n"
                "# TYPE loadcluster_failures_total counter\n");
    store_each_endpoint(m->store, endpoint_row, &pass);
    worker_lines(&t, m);
    appendf(&t, "# HELP loadcluster_raft_leader 1 when this master is the Raft leader.\n"
                "# TYPE loadcluster_raft_leader gauge\nloadcluster_raft_leader %d\n"
                "# HELP loadcluster_raft_term Current Raft term.\n"
                "# TYPE loadcluster_raft_term gauge\nloadcluster_raft_term %llu\n",
            quorum_is_leader(m->quorum) ? 1 : 0, (unsigned long long)quorum_term(m->quorum));
    if (t.failed) {
        free(t.buf);
        return NULL;
    }
    return t.buf;
}
