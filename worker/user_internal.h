/* user_internal.h — engine thread: what user.c lends the journey op machine (journey.c,
 * journey_http.c): waiting, connecting, ending. */
#ifndef WORKER_USER_INTERNAL_H
#define WORKER_USER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "user.h"

/* The shortest wait that gives the loop a turn. libuv 1.44 (Debian 12) runs a timer started
 * with 0 ms inside a timer callback again in the same pass of its timers, so a user that keeps
 * yielding with 0 ms (ops that never wait, a request that cannot be rendered) would hold the
 * loop: no I/O, no stop, no signal. */
#define WORKER_YIELD_MS 1u
/* A wait at least this long lets the user's connection drop its idle state (TLS record
 * buffers): shorter ones would pay for them again at once. */
#define WORKER_IDLE_CONN_MS 100u

/* What a user's connections call (every connection of a user has data == the user). */
extern const worker_conn_cbs_t worker_user_conn_cbs;

/* The user waits ms on its timer, then goes on (ending if the run stops meanwhile). */
void worker_user_wait(worker_user_t *u, uint64_t ms);
/* The same with another callback (t->data is the user). */
void worker_user_wait_cb(worker_user_t *u, uint64_t ms, uv_timer_cb cb);
/* The request is rendered into u->req: connect when needed, then send it. */
void worker_user_connect(worker_user_t *u);
/* Closes the user's handles; it is freed once they are closed. */
void worker_user_finish(worker_user_t *u);
/* The run stops or the user retires. */
bool worker_user_ending(const worker_user_t *u);
/* The stop deadline passed: nothing more may be sent. */
bool worker_user_ending_now(const worker_user_t *u);
/* Open model: back to the run's pool of idle users. */
void worker_user_idle(worker_user_t *u);
/* "http2" pool (h2_shared.c): how u's request ended. */
void worker_user_pool_done(worker_user_t *u, const worker_conn_result_t *r);
/* "http2" pool: u's request, now that it has a stream: a task's rendered (in the engine's
 * scratch buffer), a journey's as it waited in u->req. Returns 0 or LC_ENOMEM. */
int worker_user_pool_request(worker_user_t *u, worker_req_out_t *out);
/* "http2" pool: u's request is on its stream (or failed to start): what u kept of it goes. */
void worker_user_pool_sent(worker_user_t *u);

#endif
