/* fleet.h — the workers' side of the master: who the workers are, the
 * Hello/Welcome handshake, heartbeats, liveness and every message to and
 * from a worker. fleet.c dispatches decoded messages without touching a
 * socket; fleet_net.c carries them over the TCP :5557 listener (TLS or
 * plaintext); fleet_send.c builds each outgoing message. */
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
#include "lc_worst.h"
#include "saturation.h"

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
 * the loss timeout. Other modules read it; only fleet.c writes it. */
typedef struct fleet_worker_s {
    char id[FLEET_ID_MAX];
    char name[128];
    char address[64];      /* peer address of its connection */
    uint32_t threads;
    saturation_t sat;      /* capacity from Hello, and what saturation leaves of it */
    double cpu_percent;
    uint64_t rss_bytes;
    uint64_t last_seen_ms; /* monotonic ms of the last frame */
    int64_t hb_offset_min_ms; /* least (arrival - sent) of this connection's heartbeats */
    bool hb_offset_known;
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
    /* The worker asks for a run's end (its data ran out); reason is cleaned text. */
    void (*on_run_done)(void *arg, fleet_worker_t *w, uint64_t run, const char *reason);
    /* The worker asks for rows of a sequential feeder (runs_on_feed_request judges it). */
    void (*on_feed_request)(void *arg, fleet_worker_t *w, const Lc__FeedRequest *req);
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
    /* With TLS: a worker's certificate must name its worker id. */
    bool tls_require_worker_id;
    /* Connections without an accepted Hello at once (0: 256); more are
     * closed at accept. All connections at once (0: no cap): keep file
     * descriptors for Raft and the API. */
    size_t max_unjoined;
    size_t max_connections;
} fleet_config_t;

/* Starts listening. Returns 0 or LC_EIO with errmsg. */
int fleet_init(fleet_t **out, uv_loop_t *loop, const fleet_config_t *cfg,
               const fleet_events_t *events, char *errmsg, size_t errlen);
/* Hello is answered with Welcome only while accepting is true (the leader);
 * otherwise with Redirect to the leader when one is known, and the
 * connection is closed. Losing leadership closes every worker connection. */
void fleet_set_accepting(fleet_t *f, bool accepting, uint64_t leader_id, uint64_t term);

/* Messages to a worker, each built only in fleet_send.c. They return 0, or
 * LC_ENOTFOUND / LC_ECLOSED when the worker is unknown or disconnected (an
 * Assign is still recorded then: the worker gets it again when it is back). */
typedef struct fleet_assign_s {
    uint64_t run, generation;
    uint32_t users;            /* its users (closed model) or user pool (open model) */
    double spawn_rate, rate;   /* its part of the run's */
    const char *scenario_json;
    uint64_t elapsed_ms;       /* of the run, for its stages */
    uint64_t user_base;        /* its users' ${user_id}s follow this */
} fleet_assign_t;
/* Also records the share for fleet_workers_json (users 0 forgets it). */
int fleet_send_assign(fleet_t *f, const char *worker_id, const fleet_assign_t *a);
int fleet_send_stop(fleet_t *f, const char *worker_id, uint64_t run, const char *reason);
int fleet_send_ack(fleet_t *f, const char *worker_id, uint64_t run, uint64_t seq);
/* Rows of a feeder for the worker's FeedRequest seq: tickets [start, start + count). */
typedef struct fleet_feed_lease_s {
    uint64_t run;
    uint32_t feeder;
    uint64_t seq, start;
    uint32_t count;
    bool exhausted;
} fleet_feed_lease_t;
int fleet_send_feed_lease(fleet_t *f, const char *worker_id, const fleet_feed_lease_t *l);

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
/* Heartbeats' delay in ms: how much later than the fastest heartbeat of its connection each
 * arrived (clock offsets cancel out), as the worst per second; what the loop's lag and the
 * network add to a worker's liveness signal. */
const lc_worst_t *fleet_heartbeat_delay(const fleet_t *f);

/* Records the scheduler's share of a run on a worker without sending it (a
 * share adopted from the worker's Hello; users 0 forgets it), for
 * fleet_workers_json; fleet_forget_run drops the run everywhere. */
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


/* ---- The seam under fleet_init: a fleet without sockets ------------------
 * fleet_net.c drives it with real connections; tests/unit/test_fleet.c with
 * a transport that records frames. conn_data is the transport's own handle
 * of one connection. */
typedef struct fleet_transport_s {
    void *arg;
    /* Encodes env and writes it to the connection; 0 or an LC_ error. */
    int (*send)(void *arg, void *conn_data, const Lc__Envelope *env);
    /* Starts closing the connection; the transport calls fleet_conn_gone
     * once it is closed (at once, or from a later callback). */
    void (*close)(void *arg, void *conn_data);
    /* Optional: false while the connection's TLS handshake has not ended. */
    bool (*secured)(void *arg, void *conn_data);
    /* Optional: whether the connection's TLS peer certificate names id. */
    bool (*peer_is)(void *arg, void *conn_data, const char *id);
    /* Optional: the connection's Hello was accepted (its frames may now be
     * as large as LC_FRAME_MAX, not LC_PROTOCOL_PREAUTH_FRAME_MAX). */
    void (*joined)(void *arg, void *conn_data);
} fleet_transport_t;

int fleet_new(fleet_t **out, const fleet_config_t *cfg, const fleet_events_t *events,
              const fleet_transport_t *transport);
/* Frees the fleet; every connection must be gone (fleet_conn_count 0). */
void fleet_free(fleet_t *f);
/* A new connection: sends it the join Challenge. NULL when out of memory. */
fleet_conn_t *fleet_conn_open(fleet_t *f, void *conn_data, const char *peer, uint64_t now_ms);
/* Dispatches one decoded frame (takes env). Returns true once c is closing. */
bool fleet_conn_receive(fleet_conn_t *c, Lc__Envelope *env, uint64_t now_ms);
/* Closes c for reason (logged; NULL: quietly); its worker is disconnected. */
void fleet_conn_close(fleet_conn_t *c, const char *reason);
bool fleet_conn_closing(const fleet_conn_t *c);
/* The transport closed c: frees it. */
void fleet_conn_gone(fleet_conn_t *c);
/* Closes every connection (shutdown). */
void fleet_close_connections(fleet_t *f, const char *reason);
size_t fleet_conn_count(const fleet_t *f);
/* Whether another connection may be accepted now (the caps of fleet_config_t). */
bool fleet_accepts_connection(const fleet_t *f);
/* Liveness, called 4 times per heartbeat interval: closes connections that
 * sent no Hello within 5 s, and loses workers silent for 3 intervals. */
void fleet_tick(fleet_t *f, uint64_t now_ms);
/* A follower has just learnt who leads: Hellos parked for want of a leader
 * are sent on now rather than at the next tick. */
void fleet_leader_known(fleet_t *f, uint64_t now_ms);
/* This master has just become leader: Hellos it parked while the election
 * ran are sent to address (its own worker address) to say Hello again. */
void fleet_send_parked_to(fleet_t *f, const char *address);

#endif
