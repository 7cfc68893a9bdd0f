/* engine.h — engine thread: one engine, a thread with its own uv loop that owns
 * its share of every run's users, their connections, timers and counters; the
 * control thread starts, posts to and stops it, only through mailboxes. */
#ifndef WORKER_ENGINE_H
#define WORKER_ENGINE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "bufpool.h"
#include "busy_poll.h"
#include "lc_buf.h"
#include "mailbox.h"
#include "pacer.h"
#include "plan.h"
#include "stats.h"
#include "user_ids.h"

#define WORKER_ENGINE_RBUF (64u * 1024u)

typedef struct worker_user_s worker_user_t;
typedef struct worker_engine_s worker_engine_t;

/* What every engine of a worker is started with. */
typedef struct {
    unsigned count;        /* engines (threads) */
    uint32_t busy_poll_us; /* the longest polling window of a loop (busy_poll.h); 0: none */
} worker_engines_conf_t;

/* This engine's part of one run. */
typedef struct engine_run_s {
    struct engine_run_s *next;
    worker_engine_t *engine;
    uint64_t id;
    const worker_plan_t *plan; /* shared, read-only, owned by the control thread */
    worker_stats_t *stats;     /* counters since the last collect */
    worker_user_t *users;      /* every user not yet freed, newest first */
    uint32_t active;           /* users not retiring: the ones "running" (open: the pool) */
    uint32_t live;             /* users not yet freed */
    uint32_t target;           /* users this engine should run (open: the pool's bound) */
    worker_user_ids_t ids;     /* the ${user_id}s this engine hands its users (user_ids.h;
                                * ids.base is the share's Assign.user_base) */
    double spawn_rate;         /* users/s for this engine; <= 0: all at once */
    uint64_t spawn_t0;         /* loop time spawning (re)started */
    uint32_t spawned;          /* users spawned since spawn_t0 */
    bool open;                 /* open model: the pacer starts requests */
    bool ramped;               /* closed model with stages: users follow the ramp */
    double share;              /* ramp or rate scale: this engine's part of the scenario's */
    uint64_t t0_ns;            /* uv_hrtime when this engine started the run */
    double t0_ms;              /* the run's timeline then (> 0 for an adopted run) */
    worker_user_t *idle;       /* open model: idle users, a stack */
    bool create_failed;        /* open model: a user could not be created (logged once) */
    worker_pacer_t pacer;      /* open model */
    uv_timer_t spawn_timer;    /* spawning, the stage ramp's ticks, or the pacer's */
    uv_timer_t deadline_timer; /* stop: in-flight requests are aborted when it fires */
    uint8_t handles;
    bool stopping;
    bool deadline_passed;      /* in-flight requests were aborted; journeys skip on_stop */
    bool exhausted_told;       /* RUN_EXHAUSTED was posted */
    bool closing;
    struct worker_lua_run_s *lua; /* a script's sandbox on this engine (journey_lua.c), or NULL */
    struct worker_h2_shared_s *h2pool; /* "http2": {"pool"}: the shared connections, or NULL */
} engine_run_t;

struct worker_engine_s {
    unsigned index;
    unsigned n_engines;
    uv_loop_t loop;
    uv_thread_t thread;
    worker_mailbox_t inbox;
    worker_mailbox_t *to_control;
    engine_run_t *runs;
    uint64_t rng;
    bool quitting;
    bool loop_ok;
    uv_timer_t lag_timer;      /* ticks to measure how late callbacks run */
    uint64_t lag_due_ns;       /* when its next tick is due (uv_hrtime) */
    _Atomic uint64_t lag_max_us; /* worst lateness since the last take */
    uv_check_t pass_check;     /* counts the loop's passes (after each poll) */
    worker_busy_poll_t busy_poll; /* how the loop waits between bursts of work */
    uint8_t pass;              /* which pass this is, mod 256: see worker_user_wait_cb */
    lc_buf_t body_scratch; /* request bodies are rendered here first */
    lc_buf_t req_scratch;  /* templated requests are rendered here, sent from here */
    worker_bufpool_t pool;     /* capture buffers lent to connections (bufpool.h) */
    char rbuf[WORKER_ENGINE_RBUF]; /* the read buffer of every connection */
};

/* Allocates engine index of conf->count and starts its thread. Returns 0 or an LC_ error. */
int worker_engine_start(worker_engine_t **out, unsigned index, const worker_engines_conf_t *conf,
                        uint64_t seed, worker_mailbox_t *to_control);
/* Posts a message to the engine (any thread). */
void worker_engine_post(worker_engine_t *e, worker_msg_t *m);
/* Posts QUIT, waits for the thread and frees the engine. */
void worker_engine_stop(worker_engine_t *e);
/* Frees the engine's scratch buffers and capture pool, once its loop ran its last pass
 * (worker_engine_stop does; tests that run an engine's loop themselves too). */
void worker_engine_free_buffers(worker_engine_t *e);

/* How long the engine's loop has polled without finding work, in ns (any thread): idle
 * time, though it burns CPU (busy_poll.h). */
uint64_t worker_engine_polled_ns(worker_engine_t *e);

/* The engine's worst event-loop lag (how late a timer ran) since the last
 * call, in microseconds; any thread. */
uint64_t worker_engine_take_lag_us(worker_engine_t *e);

/* Called by journey users: feeder f (on_exhausted stop_run) ran out; the control thread
 * hears it once per engine and run. */
void engine_run_exhausted(engine_run_t *r, uint32_t f);
/* Called by the HTTP/2 pool (h2_shared.c): its handles are closed. */
void engine_run_pool_closed(engine_run_t *r);
/* Called by users: the user with ${user_id} id was freed; its id goes back to the engine's
 * share for the next user started (the run may be finished). */
void engine_run_user_gone(engine_run_t *r, uint64_t id);
/* Called by open-model users after a request: back to the pool (or retired
 * when the pool shrank). */
void engine_run_user_idle(engine_run_t *r, worker_user_t *u);

#endif
