/* metrics.h — the Prometheus text exposition of the master's state. */
#ifndef MASTER_METRICS_H
#define MASTER_METRICS_H

#include <stdbool.h>

#include "master.h"

/* Which series a scraper may read: the cluster's own (workers, Raft) always;
 * runs', tenants' and endpoints' only when tenant_series is set, and then
 * only tenant's when it is not "". */
typedef struct metrics_scope_s {
    bool tenant_series;
    char tenant[128];
} metrics_scope_t;

/* Renders /metrics for scope; malloc'd text, NULL when out of memory. */
char *metrics_render(master_t *m, const metrics_scope_t *scope);

#endif
