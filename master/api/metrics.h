/* metrics.h — the Prometheus text exposition of the master's state. */
#ifndef MASTER_METRICS_H
#define MASTER_METRICS_H

#include <stdbool.h>

#include "lc_buf.h"
#include "master.h"
#include "store.h"

/* Which series a scraper may read: the cluster's own (workers, Raft) always;
 * runs', tenants' and endpoints' only when tenant_series is set, and then
 * only tenant's when it is not "". */
typedef struct metrics_scope_s {
    bool tenant_series;
    char tenant[128];
} metrics_scope_t;

/* Users running now per run on connected workers, as the loop knows them:
 * taken on the loop for a render on another thread. */
typedef struct metrics_users_s {
    size_t n;
    struct {
        uint64_t run, users;
    } *runs; /* malloc'd */
} metrics_users_t;
int metrics_users_take(master_t *m, metrics_users_t *out);
void metrics_users_free(metrics_users_t *u);

/* The cluster's own series (workers, refusals, Raft), from the loop's
 * state: cheap, on the loop. Appends to out; returns 0 or LC_ENOMEM. */
int metrics_render_cluster(master_t *m, lc_buf_t *out);
/* The runs', tenants' and endpoints' series in scope (scope->tenant_series
 * set) from the database, on any thread with a reader of the store.
 * Appends to out; returns 0 or LC_ENOMEM. */
int metrics_render_tenant_series(store_t *reader, const metrics_scope_t *scope,
                                 const metrics_users_t *users, lc_buf_t *out);

#endif
