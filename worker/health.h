/* health.h — control thread: the worker's --health-addr HTTP endpoint, /healthz
 * for probes and /metrics (Prometheus text) with CPU, memory, users and connections. */
#ifndef WORKER_HEALTH_H
#define WORKER_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

/* What the endpoint reports, filled by its owner on each request. */
typedef struct worker_health_view_s {
    const char *worker_id;
    bool joined;           /* welcomed by a leader right now */
    double cpu_percent;    /* of the engine threads' time, as last heartbeat said */
    uint64_t rss_bytes;
    uint32_t capacity;
    uint32_t users;        /* running, over every run */
    uint32_t connections;  /* open, over every run */
    uint32_t runs;         /* runs with users on this worker */
    size_t outbox_bytes;   /* stats not yet acknowledged by the leader */
    uint64_t loop_lag_us;  /* worst engine event-loop lag since the last scrape */
} worker_health_view_t;

typedef void (*worker_health_fill_cb)(void *arg, worker_health_view_t *out);

typedef struct worker_health_s worker_health_t;

/* Listens on addr ("host:port"). Returns 0, or LC_EINVAL / LC_EIO with
 * errmsg. */
int worker_health_start(worker_health_t **out, uv_loop_t *loop, const char *addr,
                        worker_health_fill_cb fill, void *arg, char *errmsg, size_t errlen);
/* Closes the listener and its connections; NULL is a no-op. */
void worker_health_close(worker_health_t *h);

/* The /metrics text of view (Prometheus 0.0.4), malloc'd; NULL without memory. */
char *worker_health_metrics(const worker_health_view_t *view);

#endif
