/* user_conns.h — engine thread: the connection a user's request goes on: target's, inline in
 * the user, or one per other origin of the scenario ("targets"), allocated on first use,
 * closed once idle past the scenario's idle_timeout_ms and then freed. */
#ifndef WORKER_USER_CONNS_H
#define WORKER_USER_CONNS_H

#include <stdbool.h>
#include <sys/socket.h>

#include "user.h"

/* Initializes c, a connection of u to origin (0: target) of the run: the engine's buffers
 * and pool, TLS for https (the origin's client), h2c for http with "http2": true; a
 * connection to another origin than target (to target too with close_idle_target) closes
 * when idle past idle_timeout_ms. Counts
 * as one of u's handles on success. Returns 0 or LC_EIO. */
int worker_user_conn_setup(worker_user_t *u, worker_conn_t *c, unsigned origin);
/* Makes sure u has a connection to origin (allocated on first use); 0 or LC_ENOMEM. */
int worker_user_conn_open(worker_user_t *u, unsigned origin);
/* The connection of the origin of u's request in flight (a journey's js->origin; target's
 * for tasks), or NULL when that origin has none. */
worker_conn_t *worker_user_conn(const worker_user_t *u);
/* The address of that origin. */
const struct sockaddr *worker_user_addr(const worker_user_t *u);
/* c (one of u's) closed while nobody waits for it: a connection to another origin than
 * target is freed (the next request to it opens a new one); true when so. */
bool worker_user_conn_idle_closed(worker_user_t *u, worker_conn_t *c);
/* c's handles are closed: one to another origin is freed. */
void worker_user_conn_destroyed(worker_user_t *u, worker_conn_t *c);
/* Closes u's connections to other origins than target (they are freed once closed). */
void worker_user_conns_destroy(worker_user_t *u);
/* How many of u's connections are up. */
unsigned worker_user_connections(const worker_user_t *u);

#endif
