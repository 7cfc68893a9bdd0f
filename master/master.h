/* master.h — the master process's one state struct, passed explicitly to the
 * modules that coordinate others (runs, batcher, api, metrics). */
#ifndef MASTER_MASTER_H
#define MASTER_MASTER_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "lc_addr.h"
#include "lc_http_server.h"
#include "lc_join.h"
#include "lc_loop_lag.h"
#include "lc_nodes_conf.h"
#include "lc_tls_channel.h"

typedef struct store_s store_t;
typedef struct quorum_s quorum_t;
typedef struct fleet_s fleet_t;
typedef struct runs_s runs_t;
typedef struct batcher_s batcher_t;
typedef struct read_pool_s read_pool_t;
typedef struct metrics_cache_s metrics_cache_t;
typedef struct peers_s peers_t;
typedef struct retention_s retention_t;
typedef struct archiver_s archiver_t;
typedef struct archive_net_s archive_net_t;

/* --history-full, --history-10s, --history-max, --acks-keep in ms (0: never);
 * the same fields as store_retention_policy_t. */
typedef struct master_retention_s {
    uint64_t full_ms, ten_s_ms, max_ms, acks_ms;
    bool no_archive; /* --no-history-archive */
} master_retention_t;

typedef struct master_config_s {
    char data_dir[PATH_MAX];
    uint64_t id;
    char raft_address[LC_HOST_MAX + 8]; /* host:port of this node's raft */
    char worker_host[LC_HOST_MAX]; /* listen address for workers */
    uint16_t worker_port;
    char worker_advertise[LC_HOST_MAX + 8]; /* how workers reach this master */
    char api_host[LC_HOST_MAX];
    uint16_t api_port;
    unsigned election_timeout_ms;
    unsigned heartbeat_timeout_ms;
    unsigned snapshot_threshold;
    unsigned snapshot_trailing;
    uint32_t worker_heartbeat_ms;
    uint32_t stats_interval_ms;
    bool clustered;           /* --cluster given: nodes holds every master */
    lc_nodes_conf_t nodes;
    bool set_raft, set_workers, set_api; /* flags that override nodes.conf */
    lc_join_secret_t join_secret; /* --join-secret-file; len 0 when none */
    lc_join_secret_t cluster_secret; /* --cluster-secret-file, else the join secret; len 0: none */
    bool no_bootstrap;        /* --join-quorum: wait to be added by `loadctl cluster add` */
    char admin_token_file[PATH_MAX]; /* --admin-token-file; "" when not given */
    char metrics_token_file[PATH_MAX]; /* --metrics-token-file; "" when not given */
    unsigned api_max_conns;     /* --api-max-conns */
    unsigned api_read_threads;  /* --api-read-threads: 0 renders reads on the loop */
    lc_tls_files_t worker_tls;  /* --tls-cert/--tls-key/--tls-ca (argv); NULLs: plaintext */
    bool tls_require_worker_id; /* --tls-require-worker-id */
    master_retention_t retention;
    /* Per-tenant quotas (0: none): --quota-active-runs, --quota-kept-runs,
     * --quota-scenario-bytes. */
    unsigned quota_active_runs, quota_kept_runs, quota_scenario_bytes;
    char log_file[PATH_MAX];    /* --log-file; "" logs to stderr */
} master_config_t;

typedef struct master_s {
    uv_loop_t *loop;
    master_config_t cfg;
    store_t *store;
    quorum_t *quorum;
    fleet_t *fleet;
    runs_t *runs;
    batcher_t *batcher;
    lc_http_server_t *api;
    read_pool_t *reads;       /* the API's reads off the loop */
    lc_loop_lag_t loop_lag;   /* how late this master's loop runs */
    metrics_cache_t *metrics_cache; /* /metrics tenant series, a second per scope */
    peers_t *peers;
    retention_t *retention;
    archiver_t *archiver;       /* <data-dir>/archive in step with the state */
    archive_net_t *archive_net; /* archives to and from the other masters */
    uint8_t admin_hash[32];   /* SHA-256 of --admin-token-file's token */
    bool admin_hash_set;
    uint8_t metrics_hash[32]; /* SHA-256 of --metrics-token-file's token */
    bool metrics_hash_set;
    SSL_CTX *worker_tls;      /* mutual TLS server side: the worker port and the Raft port */
    SSL_CTX *raft_tls_client; /* mutual TLS client side, to the other masters */
    uv_signal_t sigint, sigterm, sighup;
    uv_timer_t ready_timer;   /* until a leader is known: then READY=1 to systemd */
    uv_timer_t stop_timer;    /* bounds the leadership hand-over at shutdown */
    bool ready_notified;
    bool stopping;
    bool shutting_down; /* shut_down ran: it may be reached twice (hand-over and its timeout) */
} master_t;

#endif
