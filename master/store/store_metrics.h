/* store_metrics.h — what /metrics reads from the store: per-endpoint counters,
 * histograms and errors by kind, and per-run users, grants and dropped starts, of the newest
 * runs only (a long history must not become unbounded series). */
#ifndef MASTER_STORE_METRICS_H
#define MASTER_STORE_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "lc_hist.h"
#include "store.h"

/* Runs exported: the newest this many by id. */
#define STORE_METRICS_MAX_RUNS 50

typedef struct store_endpoint_metrics_s {
    uint64_t run;
    const char *tenant, *state, *endpoint, *method;
    uint64_t count, failures, bytes;
    const lc_hist_t *hist; /* latencies, microseconds */
} store_endpoint_metrics_t;

typedef struct store_run_metrics_s {
    uint64_t run;
    const char *tenant, *state;
    uint32_t users_requested, users_granted;
    bool queued;
    uint64_t dropped, lost_batches, lost_requests;
} store_run_metrics_t;

typedef struct store_error_metrics_s {
    uint64_t run;
    const char *tenant, *state, *endpoint, *kind;
    uint64_t count;
} store_error_metrics_t;

/* Calls fn once per (run, endpoint), ordered by run then endpoint. Returns 0
 * or LC_EIO / LC_ENOMEM. */
int store_each_endpoint_metrics(store_t *s, void (*fn)(void *arg, const store_endpoint_metrics_t *e),
                                void *arg);
/* Calls fn once per (run, endpoint, error kind) counted, ordered by run, endpoint, kind.
 * Returns 0 or LC_EIO. */
int store_each_error_metrics(store_t *s, void (*fn)(void *arg, const store_error_metrics_t *e),
                             void *arg);
/* Calls fn once per run, newest first. Returns 0 or LC_EIO. */
int store_each_run_metrics(store_t *s, void (*fn)(void *arg, const store_run_metrics_t *r),
                           void *arg);

#endif
