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
#include "lc_journey.h"
#include "session.h"

enum worker_user_phase {
    WORKER_USER_THINK,   /* waiting for the think timer (or about to start); open model: idle */
    WORKER_USER_CONNECT, /* connecting (or waiting for a close) before a request */
    WORKER_USER_REQUEST, /* request in flight */
    WORKER_USER_FINISH,  /* closing its handles */
};

/* A running loop (repeat, while, foreach) or group of a journey user. */
typedef struct worker_frame_s {
    uint32_t i, n;   /* loops: the pass and the bound */
    uint32_t op;     /* the loop's or group's op */
    uint32_t start;  /* groups: when it began, in µs since the run's t0 mod 2^32 (71 min:
                      * a group's duration is measured mod that) */
} worker_frame_t;

enum worker_section { WORKER_SECTION_START, WORKER_SECTION_STEPS, WORKER_SECTION_STOP,
                      WORKER_SECTION_DONE };

typedef struct worker_lua_user_s worker_lua_user_t;
typedef struct worker_oconn_s worker_oconn_t;

/* The state of a journey user (plan->program != NULL). */
typedef struct worker_journey_state_s {
    worker_session_t *session; /* NULL until a variable, cookie or row is held */
    worker_lua_user_t *lua;    /* NULL until the user first reaches a lua step (journey_lua.c) */
    uint64_t iter_start_ns;
    uint32_t pc;
    uint32_t req;              /* the program request in flight (or being rendered) */
    uint16_t journey;
    uint8_t section;           /* enum worker_section */
    uint8_t depth;             /* frames in use */
    uint8_t hops;              /* redirects followed by the request in flight */
    uint8_t origin;            /* the origin of the request in flight (or being rendered) */
    bool failed;               /* the iteration had a failure */
    bool fresh;                /* the next op begins an iteration (or on_start) */
    bool fed_user;             /* per-user feeder rows were taken */
    bool first_request;        /* open model: the iteration's first request is not sent yet */
    bool script_req;           /* the request in flight is a script's (journey_lua.c's) */
    bool redirect_get;         /* a redirect made the request in flight a GET without body */
    /* The target of the request in flight when it is not the step's own rendering (malloc'd):
     * a redirect's Location, or a rendering of a path that would not render alike again
     * (${uuid}…), kept for its cookies' default path. */
    char *target;
    /* The connections to the scenario's targets (origins 1, 2, …; user_conns.c): NULL until
     * a request goes to one, then one slot per origin, NULL while it has none. */
    worker_oconn_t **oconns;
    worker_frame_t frames[LC_JOURNEY_DEPTH_MAX];
} worker_journey_state_t;

struct worker_user_s {
    worker_user_t *prev, *next;
    engine_run_t *run;
    uint64_t id;          /* ${user_id} */
    uint64_t iteration;   /* ${iteration} */
    uint32_t task;
    uint8_t phase;
    uint8_t handles;
    bool retiring;
    uint8_t zero_pass;    /* the engine's pass of the user's last 0 ms wait */
    worker_user_t *idle_next; /* open model: the run's pool of idle users */
    uint64_t intended_ns; /* open model: when the request should have started (uv_hrtime) */
    uv_timer_t think;
    lc_buf_t req;     /* a journey request waiting for its connection (journey_http.c) */
    worker_conn_t conn;   /* to target; journeys' other origins: js->oconns */
    struct worker_h2_preq_s *preq; /* "http2" pool: the request queued or in flight */
    worker_journey_state_t *js; /* journeys: allocated with the user; NULL for tasks */
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

#endif
