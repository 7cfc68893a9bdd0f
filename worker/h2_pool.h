/* h2_pool.h — engine thread: the stream slots of an engine's shared HTTP/2 connections (no
 * I/O): which connection a request goes on, a FIFO of users waiting for a slot, each
 * connection's limit (max_streams and the server's SETTINGS_MAX_CONCURRENT_STREAMS), and
 * what a GOAWAY or a lost connection leaves to refuse and reconnect. */
#ifndef WORKER_H2_POOL_H
#define WORKER_H2_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A user waiting for a slot; embedded in the user, linked while it waits. */
typedef struct worker_h2_waiter_s {
    struct worker_h2_waiter_s *next;
    bool queued;
} worker_h2_waiter_t;

enum worker_h2_pconn_state {
    WORKER_H2_PCONN_DOWN,       /* to (re)connect, once the old TCP connection is closed */
    WORKER_H2_PCONN_CONNECTING,
    WORKER_H2_PCONN_UP,         /* takes new streams up to its limit */
    WORKER_H2_PCONN_DRAINING,   /* GOAWAY: the streams in flight finish, no new ones */
};

typedef struct worker_h2_pconn_s {
    uint32_t in_flight;
    uint32_t peer_max;          /* the server's SETTINGS_MAX_CONCURRENT_STREAMS */
    uint8_t state;
} worker_h2_pconn_t;

typedef struct worker_h2_slots_s {
    worker_h2_pconn_t *conns;
    uint32_t n_conns;
    uint32_t max_streams;       /* the scenario's, per connection */
    worker_h2_waiter_t *head, *tail;
    size_t n_waiting;
} worker_h2_slots_t;

/* An engine's share of a worker's connections: total split evenly, the first engines taking
 * one more, and never 0 (an engine with users needs one). */
uint32_t worker_h2_pool_share(uint32_t total, uint32_t n_engines, uint32_t engine);

/* n_conns DOWN connections of max_streams each (both >= 1). Returns 0 or LC_ENOMEM. */
int worker_h2_slots_init(worker_h2_slots_t *s, uint32_t n_conns, uint32_t max_streams);
void worker_h2_slots_free(worker_h2_slots_t *s);
/* Streams conn may carry at once: min(max_streams, the server's limit). */
uint32_t worker_h2_slots_limit(const worker_h2_slots_t *s, uint32_t conn);
/* A slot for w's request: the index of the least loaded UP connection with room, or -1 and
 * w waits at the FIFO's tail (also when others wait already: nobody jumps the queue). */
int worker_h2_slots_acquire(worker_h2_slots_t *s, worker_h2_waiter_t *w);
/* After a slot freed (release, up, a higher limit): the FIFO's head, given a slot on *conn
 * (already counted), or NULL when nobody waits or no slot is free. Call until NULL. */
worker_h2_waiter_t *worker_h2_slots_next(worker_h2_slots_t *s, uint32_t *conn);
/* The FIFO's head, taken out without a slot (its request fails), or NULL. */
worker_h2_waiter_t *worker_h2_slots_pop(worker_h2_slots_t *s);
/* A stream on conn ended (answered, reset or refused). */
void worker_h2_slots_release(worker_h2_slots_t *s, uint32_t conn);
/* w stops waiting (its user is stopped); a no-op when it does not wait. */
void worker_h2_slots_cancel(worker_h2_slots_t *s, worker_h2_waiter_t *w);
/* The next DOWN connection, now CONNECTING, or -1 when none is down. */
int worker_h2_slots_to_connect(worker_h2_slots_t *s);
/* conn (CONNECTING) is up; the server's limit is unknown (unbounded) until its SETTINGS. */
void worker_h2_slots_up(worker_h2_slots_t *s, uint32_t conn);
/* The server's SETTINGS_MAX_CONCURRENT_STREAMS for conn. */
void worker_h2_slots_peer_max(worker_h2_slots_t *s, uint32_t conn, uint32_t max);
/* GOAWAY on conn: no new streams; DOWN at once when none is in flight, else DRAINING until
 * the last release. */
void worker_h2_slots_goaway(worker_h2_slots_t *s, uint32_t conn);
/* conn's TCP connection is gone (or failed to connect): it is DOWN, and its streams in flight
 * are forgotten; returns how many there were (the caller ends each one exactly once). */
uint32_t worker_h2_slots_lost(worker_h2_slots_t *s, uint32_t conn);

#endif
