/* user.h — engine thread: one virtual user; pick a task by weight, render and send
 * its request, check the response, record; then think and repeat (closed model)
 * or go back to the run's pool until the pacer gives it a start (open model). */
#ifndef WORKER_USER_H
#define WORKER_USER_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "engine.h"
#include "http_conn.h"
#include "lc_buf.h"

enum worker_user_phase {
    WORKER_USER_THINK,   /* waiting for the think timer (or about to start); open model: idle */
    WORKER_USER_CONNECT, /* connecting (or waiting for a close) before a request */
    WORKER_USER_REQUEST, /* request in flight */
    WORKER_USER_FINISH,  /* closing its handles */
};

struct worker_user_s {
    worker_user_t *prev, *next;
    engine_run_t *run;
    uint64_t id;          /* ${user_id} */
    uint64_t iteration;   /* ${iteration} */
    uint32_t task;
    uint8_t phase;
    uint8_t handles;
    bool retiring;
    worker_user_t *idle_next; /* open model: the run's pool of idle users */
    uint64_t intended_ns; /* open model: when the request should have started (uv_hrtime) */
    uv_timer_t think;
    lc_buf_t req;     /* rendering of templated requests */
    worker_conn_t conn;
};

/* Creates a user on r (linked at the head of r->users) and starts its first
 * iteration. Returns NULL when out of memory or handles. */
worker_user_t *worker_user_start(engine_run_t *r, uint64_t id);
/* Creates an idle user on r (open model): nothing starts until worker_user_begin. */
worker_user_t *worker_user_new(engine_run_t *r, uint64_t id);
/* Open model: one request, due at intended_ns, whence its latency is measured;
 * then the user goes back through engine_run_user_idle(). */
void worker_user_begin(worker_user_t *u, uint64_t intended_ns);
/* The user ends after its request in flight, or now when it has none. */
void worker_user_retire(worker_user_t *u);
/* The run is stopping: end now unless a request is in flight. */
void worker_user_stop(worker_user_t *u);
/* The stop deadline passed: a request in flight is counted as aborted. */
void worker_user_abort(worker_user_t *u);
/* Whether the user holds an open connection. */
bool worker_user_connected(const worker_user_t *u);

#endif
