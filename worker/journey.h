/* journey.h — engine thread: runs a journey user's ops (the program lc_journey.h compiles):
 * steps until one waits (a request, a think time), iterations, on_start and on_stop. */
#ifndef WORKER_JOURNEY_H
#define WORKER_JOURNEY_H

#include <stdbool.h>

#include "http_conn.h"
#include "user.h"

/* Allocates u's journey state and picks its journey. Returns 0 or LC_ENOMEM. */
int worker_journey_init(worker_user_t *u);
void worker_journey_free(worker_user_t *u);
/* Runs ops from the user's position until one waits or the user ends. */
void worker_journey_resume(worker_user_t *u);
/* The connection is ready for the request the user is waiting to send. */
void worker_journey_send(worker_user_t *u);
/* The request in flight (a step's or a script's) as it goes out: u->req when it waited for
 * its connection or goes through the HTTP/2 pool, else the rendering just made. */
void worker_journey_out(worker_user_t *u, worker_req_out_t *out);
/* The request in flight ended with r. */
void worker_journey_done(worker_user_t *u, const worker_conn_result_t *r);
/* The run stops or the user retires: on_stop runs (unless the stop deadline passed), then
 * the user ends. */
void worker_journey_wind_down(worker_user_t *u);

#endif
