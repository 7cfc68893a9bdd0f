/* plan.h — any thread (built by the control thread, then read-only): the per-run
 * plan that a run's engines share; the parsed scenario, each task's pre-rendered
 * request or compiled templates, task weights, endpoints, the resolved target
 * address and, for https, the TLS context. */
#ifndef WORKER_PLAN_H
#define WORKER_PLAN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "feed_stock.h"
#include "http_conn.h"
#include "lc_scenario.h"
#include "stats.h"
#include "template.h"
#include "tls.h"
#include "trace.h"

typedef struct worker_task_plan_s {
    const lc_task_t *task;
    size_t endpoint;          /* index into the plan's endpoints */
    bool head;                /* HEAD: the response has no body */
    bool dynamic;             /* path or body holds templates */
    lc_buf_t fixed;       /* the whole request, when not dynamic */
    lc_buf_t head1;       /* "METHOD <base path>" */
    worker_tpl_t path;
    lc_buf_t head2;       /* " HTTP/1.1\r\n" + headers, without the blank line */
    bool has_body;
    worker_tpl_t body;
} worker_task_plan_t;

/* What the engine keeps per journey request: the response headers it needs (Set-Cookie,
 * Location, extracted ones, and Content-Encoding when it reads the body), the Accept-Encoding
 * line it sends. */
typedef struct worker_jreq_plan_s {
    const char *want_names[LC_JOURNEY_EXTRACTS_MAX + 3];
    size_t want_lens[LC_JOURNEY_EXTRACTS_MAX + 3];
    worker_hdr_want_t want;
    bool sets_user_agent;
    char accept[LC_CODINGS_HEADER_MAX]; /* "Accept-Encoding: …\r\n", or "" */
    size_t accept_len;
} worker_jreq_plan_t;

/* This worker's rows of a feeder: [first, first + count), taken in turn by its users; or,
 * for a leased feeder under a master (lc_feeder_leased), the leases in stock. */
typedef struct worker_feed_s {
    _Atomic uint64_t next;    /* rows taken so far, by every engine */
    uint32_t first, count;
    uint32_t *perm;           /* order shuffle: the order rows are taken in; else NULL */
    worker_stock_t *stock;    /* leased: the rows the leader gave this worker; else NULL */
} worker_feed_t;

/* One origin of the run (the scenario's target, then its targets), resolved once per run. */
typedef struct worker_origin_s {
    const lc_origin_t *def;       /* the scenario's origins.at[i] */
    struct sockaddr_storage addr; /* filled in by the control thread before the engines start */
    socklen_t addr_len;
    worker_tls_t *tls;            /* https: its TLS client (SNI and the name verified are its
                                   * host's); NULL for http */
    lc_buf_t host_line;           /* "Host: …\r\n" */
} worker_origin_t;

typedef struct worker_plan_s {
    lc_scenario_t scenario;   /* owned */
    worker_task_plan_t *tasks;
    size_t n_tasks;
    uint64_t *cum_weights;    /* cum_weights[i] = sum of weights of tasks 0..i */
    uint64_t total_weight;
    worker_endpoint_t *endpoints; /* one per distinct task name */
    size_t n_endpoints;
    worker_origin_t *origins;     /* one per scenario origin; origins[0] is target */
    size_t n_origins;
    /* Where the run's timeline (stages, arrivals) stands when the engines
     * start: 0, or the time already run when this worker adopts a run. Set
     * by the control thread before the engines start. */
    uint64_t offset_ms;
    /* Journeys (scenario.program != NULL): */
    const lc_program_t *program;
    worker_jreq_plan_t *jreqs;  /* one per program request */
    size_t first_timer;         /* the endpoints index of the program's first timer */
    worker_feed_t *feeds;       /* one per program feeder */
    worker_trace_t *trace;      /* the dry run's trace (--local --trace), or NULL */
    /* A script (scenario.script != NULL), checked in the sandbox when the plan is built:
     * its modules as each engine's sandbox takes them (pointing into the scenario). */
    struct lc_lua_module_s *lua_modules; /* lc_lua_module_t (common/script/lc_lua_sandbox.h) */
    size_t n_lua_modules;
} worker_plan_t;

/* Builds a plan from a parsed scenario, taking ownership of its contents (sc
 * is zeroed). Returns 0, LC_ENOMEM or LC_EINVAL with errmsg (e.g. a
 * tls.ca_file that cannot be loaded, or a script that does not load in the sandbox or lacks
 * a function a lua step names: the run cannot start). */
int worker_plan_build(worker_plan_t **out, lc_scenario_t *sc, char *errmsg, size_t errlen);
void worker_plan_free(worker_plan_t *p);

/* Per-iteration and fed rows: this worker takes the part of each feeder's rows its share
 * of the run's users stands for (the share's users from user_base on), so two workers do
 * not take one row in sequential order. Called before the engines start. */
void worker_plan_slice_feeds(worker_plan_t *p, uint64_t user_base, uint32_t users);
/* Under a master: each leased feeder (lc_feeder_leased) takes its rows from a stock the
 * leader fills (FeedRequest, FeedLease) instead of a slice. Before the engines start.
 * Returns 0 or LC_ENOMEM. */
int worker_plan_lease_feeds(worker_plan_t *p);

/* How many of the endpoints count requests (the rest are journeys' iterations and groups). */
size_t worker_plan_requests(const worker_plan_t *p);

/* Picks a task index by weight. */
size_t worker_plan_pick(const worker_plan_t *p, uint64_t *rng);

/* Renders the request of task i: either the pre-rendered bytes, or a
 * rendering into out (scratch holds the body meanwhile). Returns 0 or
 * LC_ENOMEM; *req and *len point at the bytes to send. */
int worker_plan_render(const worker_plan_t *p, size_t i, const worker_tpl_vars_t *vars,
                       lc_buf_t *scratch, lc_buf_t *out, const char **req,
                       size_t *len);

#endif
