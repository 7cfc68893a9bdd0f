/* h2_shared.h — engine thread: a run's HTTP/2 connections to its target shared by the
 * engine's users ("http2": {"pool": …}): connected on first use, each request given a stream
 * slot (h2_pool.h) or its user queued, sent on h2_mux.h; GOAWAY drains and reconnects, a lost
 * connection ends its streams exactly once, streams past the request timeout are reset. */
#ifndef WORKER_H2_SHARED_H
#define WORKER_H2_SHARED_H

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"
#include "h2_mux.h"
#include "h2_pool.h"

typedef struct worker_h2_shared_s worker_h2_shared_t;

/* A user's request through the pool: its place in the FIFO, then its stream. */
typedef struct worker_h2_preq_s {
    worker_h2_waiter_t waiter;
    worker_h2_stream_t st;
    worker_user_t *user;
    struct worker_h2_preq_s *later; /* ended, waiting to be told (inside a send) */
    uint64_t asked_ns;     /* when the user asked for a slot: its latency counts from here */
    uint64_t end_ns;
    uint32_t conn;
    int kind;              /* how it ended */
    bool in_flight;
} worker_h2_preq_t;

/* r's pool on this engine: its share of the scenario's connections (worker_h2_pool_share),
 * none connected yet; counts as one of r's handles. NULL when out of memory or handles. */
worker_h2_shared_t *worker_h2_shared_new(engine_run_t *r);
/* u's request (its task picked): sent now when a slot is free, else once the users queued
 * before it have theirs. The end comes through worker_user_pool_done (user_internal.h),
 * never from inside this call. Returns 0 or LC_ENOMEM (nothing queued). */
int worker_h2_shared_send(worker_h2_shared_t *p, worker_user_t *u);
/* u's queued request leaves the FIFO unsent (counted nowhere); false when it was in flight
 * (or u has none). */
bool worker_h2_shared_unqueue(worker_h2_shared_t *p, worker_user_t *u);
/* u's request in flight is reset; it ends as aborted (as a timeout when it is past its request
 * timeout: worker_h2_mux_cancel). */
void worker_h2_shared_abort(worker_h2_shared_t *p, worker_user_t *u);
/* How many of the pool's connections are up. */
uint32_t worker_h2_shared_connections(const worker_h2_shared_t *p);
/* No user is left: closes every connection; engine_run_pool_closed(r) follows. */
void worker_h2_shared_close(worker_h2_shared_t *p);

#endif
