/* link_send.h — control thread: every message the worker sends the master, each built by
 * one function here (the worker_link_encode_* half touches no socket and runs on any thread). */
#ifndef WORKER_LINK_SEND_H
#define WORKER_LINK_SEND_H

#include <stddef.h>
#include <stdint.h>

#include "cluster.pb-c.h"
#include "lc_join.h"

#define WORKER_LINK_MAX_LOADS 256 /* runs named in one Hello or Heartbeat */

typedef struct worker_link_s worker_link_t;

/* What a Hello says about this worker. */
typedef struct worker_hello_s {
    const char *worker_id;          /* required */
    const char *name;               /* required */
    uint32_t threads;
    uint32_t capacity;
    const lc_join_secret_t *secret; /* NULL or empty: no join proof */
    const Lc__RunLoad *running;     /* the runs it carries into this connection */
    size_t n_running;               /* at most WORKER_LINK_MAX_LOADS */
} worker_hello_t;

/* What a Heartbeat reports. */
typedef struct worker_heartbeat_s {
    uint64_t time_ms; /* wall clock */
    double cpu_percent;
    uint64_t rss_bytes;
    const Lc__RunLoad *runs;
    size_t n_runs;    /* at most WORKER_LINK_MAX_LOADS */
} worker_heartbeat_t;

/* Each encoder writes one length-prefixed Envelope frame into a malloc'd
 * buffer (OUT: *out, *out_len). Returns 0 or an LC_ error. */

/* Hello answering the Challenge's nonce with HMAC-SHA256(secret, nonce). */
int worker_link_encode_hello(const worker_hello_t *h, const uint8_t *nonce, size_t nonce_len,
                             uint8_t **out, size_t *out_len);
int worker_link_encode_heartbeat(const worker_heartbeat_t *hb, uint8_t **out, size_t *out_len);
int worker_link_encode_refused(uint64_t run, uint64_t generation, const char *reason,
                               uint8_t **out, size_t *out_len);
/* The envelope of a StatsBatch that stats.c built. */
int worker_link_encode_stats(const Lc__StatsBatch *batch, uint8_t **out, size_t *out_len);

/* Each sender encodes and sends now (connected only). Returns 0, LC_ECLOSED or an LC_ error. */
int worker_link_send_hello(worker_link_t *l, const worker_hello_t *h, const uint8_t *nonce,
                           size_t nonce_len);
int worker_link_send_heartbeat(worker_link_t *l, const worker_heartbeat_t *hb);
/* Tells the master this worker cannot run its share of run (reason is shown to people). */
int worker_link_send_refused(worker_link_t *l, uint64_t run, uint64_t generation,
                             const char *reason);
/* Asks the leader to end run: its data ran out here (reason is shown to people). */
int worker_link_send_run_done(worker_link_t *l, uint64_t run, const char *reason);
/* Asks the leader for count rows of the run's leased feeder (FeedRequest seq); not kept in
 * the outbox: the control thread asks again until answered. */
int worker_link_send_feed_request(worker_link_t *l, uint64_t run, uint32_t feeder, uint64_t seq,
                                  uint32_t count);

#endif
