/* fleet.h — the workers' side of the master: the TCP :5557 listener, one
 * framed protobuf connection per worker, its Hello/Welcome handshake,
 * heartbeats and liveness. Other modules see workers and send them frames. */
#ifndef MASTER_FLEET_H
#define MASTER_FLEET_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "cluster.pb-c.h"
#include "lc_addr.h"
#include "lc_join.h"
#include "lc_tls_channel.h"

#define FLEET_ID_MAX 65
#define FLEET_MAX_RUN_LOADS 64

typedef struct fleet_s fleet_t;
typedef struct fleet_conn_s fleet_conn_t;

typedef struct fleet_run_load_s {
    uint64_t run;
    uint64_t generation;
    uint32_t users;
    uint32_t connections;
} fleet_run_load_t;

/* A worker the master knows: connected now, or disconnected for less than
 * the loss timeout. */
typedef struct fleet_worker_s {
    char id[FLEET_ID_MAX];
    char name[128];
    char address[64];      /* peer address of its connection */
    uint32_t threads;
    uint32_t capacity;
    /* Saturation: above 90 % CPU for 3 heartbeats in a row the worker may
     * carry only 90 % of the users it runs (again after each further 3);
     * each 3 heartbeats below 75 % give back part of its capacity, until
     * all of it is back. */
    uint32_t effective_capacity;
    bool saturated;
    uint32_t hot_beats, cool_beats;
    double cpu_percent;
    uint64_t rss_bytes;
    uint64_t last_seen_ms; /* monotonic ms of the last frame */
    fleet_run_load_t loads[FLEET_MAX_RUN_LOADS];      /* as its heartbeat reports them */
    size_t n_loads;
    fleet_run_load_t assigned[FLEET_MAX_RUN_LOADS];   /* as the leader's scheduler set them */
    size_t n_assigned;
    fleet_conn_t *conn;    /* NULL while disconnected */
} fleet_worker_t;

typedef struct fleet_events_s {
    void *arg;
    /* A worker completed its handshake (new, or back after a disconnect).
     * hello->running lists what it already runs. */
    void (*on_join)(void *arg, fleet_worker_t *w, const Lc__Hello *hello);
    /* A worker missed 3 heartbeat intervals: it is forgotten after this. */
    void (*on_lost)(void *arg, fleet_worker_t *w);
    /* A StatsBatch arrived; the callee owns env (free with
     * lc__envelope__free_unpacked). */
    void (*on_stats)(void *arg, fleet_worker_t *w, Lc__Envelope *env);
    /* While this master is not the leader: writes the leader's worker
     * address ("host:port") into buf and returns true when one is known. */
    bool (*leader_address)(void *arg, char *buf, size_t len);
    /* Every master's worker address, for Welcome; returns how many were
     * written (0: just advertise). */
    size_t (*master_addresses)(void *arg, char (*out)[LC_HOST_MAX + 8], size_t max);
    /* The worker cannot run an assignment it was sent. */
    void (*on_refused)(void *arg, fleet_worker_t *w, const Lc__AssignRefused *refused);
} fleet_events_t;

typedef struct fleet_config_s {
    const char *listen_host;
    uint16_t listen_port;
    const char *advertise;   /* worker address of this master */
    uint32_t heartbeat_ms;
    uint32_t stats_interval_ms;
    /* When its len > 0, a worker's Hello must carry HMAC-SHA256(secret, the
     * connection's Challenge nonce); otherwise the worker is refused. */
    const lc_join_secret_t *join_secret;
    /* Mutual TLS (lc_tls_channel.h) on every connection; NULL: plaintext. */
    SSL_CTX *tls_ctx;
} fleet_config_t;

/* Starts listening. Returns 0 or LC_EIO with errmsg. */
int fleet_init(fleet_t **out, uv_loop_t *loop, const fleet_config_t *cfg,
               const fleet_events_t *events, char *errmsg, size_t errlen);
/* Hello is answered with Welcome only while accepting is true (the leader);
 * otherwise with Redirect to the leader when one is known, and the
 * connection is closed. Losing leadership closes every worker connection. */
void fleet_set_accepting(fleet_t *f, bool accepting, uint64_t leader_id, uint64_t term);

/* Sends one frame to a worker. Returns 0, LC_ENOTFOUND / LC_ECLOSED when it
 * is unknown or disconnected. */
int fleet_send(fleet_t *f, const char *worker_id, const Lc__Envelope *env);

fleet_worker_t *fleet_find(fleet_t *f, const char *worker_id);
/* Connected workers, in join order; *n set to their count. The array is
 * valid until the next return to the event loop. */
fleet_worker_t **fleet_connected(fleet_t *f, size_t *n);
size_t fleet_count_connected(fleet_t *f);
/* Every known worker, connected or not yet lost; valid until the next
 * return to the event loop. */
fleet_worker_t *const *fleet_known(const fleet_t *f, size_t *n);

/* Changes whenever a worker becomes saturated, sheds more, or recovers: the
 * run controller reschedules when it sees a new value. */
uint64_t fleet_saturation_epoch(const fleet_t *f);

/* Records the scheduler's share of a run on a worker (users 0 forgets it),
 * for fleet_workers_json; fleet_forget_run drops the run everywhere. */
void fleet_set_assigned(fleet_t *f, const char *worker_id, uint64_t run, uint32_t users);
void fleet_forget_run(fleet_t *f, uint64_t run);

/* [{"id","name","address","threads","capacity","effective_capacity",
 *   "saturated","cpu_percent","rss_bytes","connected","last_seen_ms_ago",
 *   "runs":[{"run","users","running_users","connections"}]}]: users is the
 * scheduler's share (the reported one for a run it has not assigned there),
 * running_users what the worker's last heartbeat reported. */
json_t *fleet_workers_json(fleet_t *f);

/* Closes the listener and every connection; on_closed(arg) after all are
 * closed and f is freed. */
void fleet_close(fleet_t *f, void (*on_closed)(void *arg), void *arg);

#endif
