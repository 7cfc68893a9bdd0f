/* config.c — loadmaster's flags, and this node's addresses from nodes.conf. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lc_addr.h"
#include "lc_err.h"
#include "lc_log.h"
#include "lc_scenario.h"

static const char usage[] =
    "usage: loadmaster [options]\n"
    "  --data-dir DIR             Raft log and snapshots (default ./loadcluster-data)\n"
    "  --id N|auto                this master's id (default 1); auto takes the\n"
    "                             ordinal of a host name like loadmaster-2 (+1 = 3)\n"
    "  --raft-addr IP:PORT        Raft listen address, IPv4 (default 127.0.0.1:5556)\n"
    "  --listen-workers HOST:PORT worker port (default 0.0.0.0:5557)\n"
    "  --advertise HOST:PORT      address workers use to reach this master\n"
    "                             (default: the worker listen address)\n"
    "  --listen-api HOST:PORT     HTTP API (default 0.0.0.0:8089)\n"
    "  --election-timeout-ms N    Raft election timeout (default 1000)\n"
    "  --heartbeat-timeout-ms N   Raft heartbeat (default 100)\n"
    "  --snapshot-threshold N     log entries between snapshots (default 1024)\n"
    "  --snapshot-trailing N      entries kept after a snapshot (default 128)\n"
    "  --worker-heartbeat-ms N    heartbeat interval asked of workers (default 1000)\n"
    "  --cluster FILE             nodes.conf of a multi-master quorum: this node's\n"
    "                             addresses come from its line (flags override)\n"
    "  --join-quorum              start empty and wait to be added to a running\n"
    "                             quorum (loadctl cluster add ID RAFT WORKERS API)\n"
    "  --admin-token-file PATH    the first admin API token; created (mode 0600)\n"
    "                             with a new token when missing. Without it the\n"
    "                             leader generates one and logs it once\n"
    "  --metrics-token-file PATH  a token that may read all of /metrics (for\n"
    "                             Prometheus); without a token /metrics shows the\n"
    "                             cluster's own series only\n"
    "  --api-max-conns N          API connections at once (default 1024; 32 more\n"
    "                             are kept for /healthz and /readyz)\n"
    "  --api-read-threads N       threads that render history, reports, run lists\n"
    "                             and /metrics off the event loop (default 2;\n"
    "                             0: on the loop)\n"
    "  --history-full AGE         a finished run keeps per-second history this\n"
    "                             long, then 10 s points (default 30d; 0: always)\n"
    "  --history-10s AGE          then 10 s points until this age, 1 min points\n"
    "                             after (default 90d; 0: never coarser than 10 s)\n"
    "  --history-max AGE          delete a run's history points at this age; its\n"
    "                             summary and totals stay (default 0: never)\n"
    "  --acks-keep AGE            drop a finished run's replay markers at this age\n"
    "                             (default 1h; later batches of it are refused)\n"
    "  --no-history-archive       keep finished runs' seconds in the replicated\n"
    "                             database (default: moved with the acks to\n"
    "                             <data-dir>/archive, out of Raft's snapshots)\n"
    "  --quota-active-runs N      per tenant: runs not over yet (default 0: no quota)\n"
    "  --quota-kept-runs N        per tenant: runs whose history is kept (not yet\n"
    "                             deleted by --history-max; default 0: no quota)\n"
    "  --quota-scenario-bytes N   per tenant: bytes of one scenario (default 0: the\n"
    "                             API's 1 MiB body limit only)\n"
    "  --join-secret-file PATH    workers must answer a challenge with this secret\n"
    "                             (HMAC-SHA256); without it any worker may join\n"
    "  --cluster-secret-file PATH masters prove this secret to each other before\n"
    "                             raft reads a byte (default: the join secret);\n"
    "                             without either the Raft port is unauthenticated\n"
    "  --tls-cert PATH            mutual TLS on the worker port: this master's\n"
    "                             certificate chain (PEM), given with --tls-key\n"
    "  --tls-key PATH             and --tls-ca (CAs workers' certificates chain to)\n"
    "  --tls-ca PATH\n"
    "  --tls-require-worker-id    with TLS: a worker's certificate must name its\n"
    "                             worker id (a DNS subjectAltName, or the CN)\n"
    "  --log-level LEVEL          debug, info, warn or error (default info)\n"
    "  --log-file PATH            append logs here instead of stderr; SIGHUP\n"
    "                             reopens it (after log rotation)\n"
    "  --version, --help\n";

static int parse_uint(const char *flag, const char *text, unsigned min, unsigned max,
                      unsigned *out)
{
    char *end;
    unsigned long v = strtoul(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v < min || v > max) {
        fprintf(stderr, "loadmaster: %s: expected an integer from %u to %u, got '%s'\n", flag,
                min, max, text);
        return -1;
    }
    *out = (unsigned)v;
    return 0;
}

static int parse_listen(const char *flag, const char *text, char *host, size_t host_len,
                        uint16_t *port)
{
    lc_hostport_t hp;
    char why[256];
    if (lc_hostport_parse(text, 0, &hp, why, sizeof why) != 0) {
        fprintf(stderr, "loadmaster: %s: %s\n", flag, why);
        return -1;
    }
    snprintf(host, host_len, "%s", hp.host);
    *port = hp.port;
    return 0;
}

/* A path flag into a PATH_MAX buffer. */
#define DAY_MS 86400000ull

/* An age like "30d", "12h" or "90s" (lc_duration_parse); "0" means never. */
static int parse_age(const char *flag, const char *text, uint64_t *out_ms)
{
    if (lc_duration_parse(text, out_ms) == 0)
        return 0;
    fprintf(stderr, "loadmaster: %s: expected an age like 30d, 12h or 90s, not '%s'\n", flag,
            text);
    return -1;
}

static int parse_path(const char *flag, const char *text, char out[PATH_MAX])
{
    if (text[0] == '\0' || strlen(text) >= PATH_MAX) {
        fprintf(stderr, "loadmaster: %s: expected a path\n", flag);
        return -1;
    }
    snprintf(out, PATH_MAX, "%s", text);
    return 0;
}

static void set_defaults(master_config_t *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->data_dir, sizeof c->data_dir, "./loadcluster-data");
    c->id = 1;
    snprintf(c->raft_address, sizeof c->raft_address, "127.0.0.1:5556");
    snprintf(c->worker_host, sizeof c->worker_host, "0.0.0.0");
    c->worker_port = 5557;
    snprintf(c->api_host, sizeof c->api_host, "0.0.0.0");
    c->api_port = 8089;
    c->election_timeout_ms = 1000;
    c->heartbeat_timeout_ms = 100;
    c->snapshot_threshold = 1024;
    c->snapshot_trailing = 128;
    c->worker_heartbeat_ms = 1000;
    c->stats_interval_ms = 1000;
    c->api_max_conns = 1024;
    c->api_read_threads = 2;
    c->retention = (master_retention_t){.full_ms = 30 * DAY_MS, .ten_s_ms = 90 * DAY_MS,
                                        .acks_ms = 3600000};
}

/* --id auto: the ordinal at the end of the host name (a StatefulSet pod
 * "loadmaster-2") plus one, so pods 0..N-1 are nodes 1..N. */
static int id_from_hostname(master_config_t *c)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    const char *dash = strrchr(host, '-');
    char *end;
    unsigned long ordinal = dash ? strtoul(dash + 1, &end, 10) : 0;
    if (dash == NULL || dash[1] == '\0' || *end != '\0' || ordinal >= 9000) {
        fprintf(stderr, "loadmaster: --id auto: host name '%s' does not end in -<ordinal> "
                        "(like loadmaster-2)\n", host);
        return -1;
    }
    c->id = ordinal + 1;
    return 0;
}

static int load_cluster(master_config_t *c, const char *path)
{
    char why[512];
    if (lc_nodes_conf_load(path, &c->nodes, why, sizeof why) != 0) {
        fprintf(stderr, "loadmaster: --cluster: %s\n", why);
        return -1;
    }
    c->clustered = true;
    return 0;
}

static int load_secret(const char *flag, const char *path, lc_join_secret_t *out)
{
    char why[512];
    if (lc_join_secret_load(path, out, why, sizeof why) != 0) {
        fprintf(stderr, "loadmaster: %s: %s\n", flag, why);
        return -1;
    }
    return 0;
}

/* Literal addresses are listened on as they are; names on every interface. */
static void listen_host_of(const lc_hostport_t *hp, char *out, size_t len)
{
    snprintf(out, len, "%s", lc_addr_is_ip_literal(hp->host) ? hp->host : "0.0.0.0");
}

/* Takes this node's raft, worker and API addresses from its nodes.conf line,
 * unless a flag set them. */
static int apply_cluster_node(master_config_t *c)
{
    const lc_node_t *self = lc_nodes_conf_find(&c->nodes, c->id);
    if (self == NULL) {
        fprintf(stderr, "loadmaster: --id %llu is not in the --cluster file (it lists", (unsigned long long)c->id);
        for (size_t i = 0; i < c->nodes.n; i++)
            fprintf(stderr, " %llu", (unsigned long long)c->nodes.nodes[i].id);
        fprintf(stderr, ")\n");
        return -1;
    }
    if (!c->set_raft)
        snprintf(c->raft_address, sizeof c->raft_address, "%s:%u", self->raft.host, self->raft.port);
    if (!c->set_workers) {
        listen_host_of(&self->worker, c->worker_host, sizeof c->worker_host);
        c->worker_port = self->worker.port;
    }
    if (!c->set_api) {
        listen_host_of(&self->api, c->api_host, sizeof c->api_host);
        c->api_port = self->api.port;
    }
    if (c->worker_advertise[0] == '\0')
        snprintf(c->worker_advertise, sizeof c->worker_advertise, "%s:%u", self->worker.host,
                 self->worker.port);
    return 0;
}

enum { OPT_DATA = 256, OPT_ID, OPT_RAFT, OPT_WORKERS, OPT_ADVERTISE, OPT_API, OPT_ELECTION,
       OPT_HEARTBEAT, OPT_SNAP_THRESHOLD, OPT_SNAP_TRAILING, OPT_WORKER_HB, OPT_CLUSTER,
       OPT_LOG, OPT_VERSION, OPT_HELP, OPT_JOIN_QUORUM, OPT_ADMIN_TOKEN,
       OPT_JOIN_SECRET, OPT_CLUSTER_SECRET, OPT_TLS_CERT, OPT_TLS_KEY, OPT_TLS_CA, OPT_LOG_FILE,
       OPT_TLS_REQUIRE_ID, OPT_METRICS_TOKEN, OPT_API_MAX_CONNS, OPT_HISTORY_FULL,
       OPT_HISTORY_10S, OPT_HISTORY_MAX, OPT_ACKS_KEEP, OPT_QUOTA_ACTIVE, OPT_QUOTA_KEPT,
       OPT_QUOTA_BYTES, OPT_API_READ_THREADS, OPT_NO_ARCHIVE };

static const struct option options[] = {
    {"data-dir", required_argument, NULL, OPT_DATA},
    {"id", required_argument, NULL, OPT_ID},
    {"raft-addr", required_argument, NULL, OPT_RAFT},
    {"listen-workers", required_argument, NULL, OPT_WORKERS},
    {"advertise", required_argument, NULL, OPT_ADVERTISE},
    {"listen-api", required_argument, NULL, OPT_API},
    {"election-timeout-ms", required_argument, NULL, OPT_ELECTION},
    {"heartbeat-timeout-ms", required_argument, NULL, OPT_HEARTBEAT},
    {"snapshot-threshold", required_argument, NULL, OPT_SNAP_THRESHOLD},
    {"snapshot-trailing", required_argument, NULL, OPT_SNAP_TRAILING},
    {"worker-heartbeat-ms", required_argument, NULL, OPT_WORKER_HB},
    {"cluster", required_argument, NULL, OPT_CLUSTER},
    {"join-quorum", no_argument, NULL, OPT_JOIN_QUORUM},
    {"join-secret-file", required_argument, NULL, OPT_JOIN_SECRET},
    {"cluster-secret-file", required_argument, NULL, OPT_CLUSTER_SECRET},
    {"admin-token-file", required_argument, NULL, OPT_ADMIN_TOKEN},
    {"metrics-token-file", required_argument, NULL, OPT_METRICS_TOKEN},
    {"api-max-conns", required_argument, NULL, OPT_API_MAX_CONNS},
    {"api-read-threads", required_argument, NULL, OPT_API_READ_THREADS},
    {"history-full", required_argument, NULL, OPT_HISTORY_FULL},
    {"history-10s", required_argument, NULL, OPT_HISTORY_10S},
    {"history-max", required_argument, NULL, OPT_HISTORY_MAX},
    {"acks-keep", required_argument, NULL, OPT_ACKS_KEEP},
    {"no-history-archive", no_argument, NULL, OPT_NO_ARCHIVE},
    {"quota-active-runs", required_argument, NULL, OPT_QUOTA_ACTIVE},
    {"quota-kept-runs", required_argument, NULL, OPT_QUOTA_KEPT},
    {"quota-scenario-bytes", required_argument, NULL, OPT_QUOTA_BYTES},
    {"tls-cert", required_argument, NULL, OPT_TLS_CERT},
    {"tls-key", required_argument, NULL, OPT_TLS_KEY},
    {"tls-ca", required_argument, NULL, OPT_TLS_CA},
    {"tls-require-worker-id", no_argument, NULL, OPT_TLS_REQUIRE_ID},
    {"log-level", required_argument, NULL, OPT_LOG},
    {"log-file", required_argument, NULL, OPT_LOG_FILE},
    {"version", no_argument, NULL, OPT_VERSION},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

/* Applies one flag; returns 0, 1 to exit successfully, -1 on a bad value. */
static int apply_flag(master_config_t *c, int opt, const char *arg)
{
    unsigned v;
    switch (opt) {
    case OPT_DATA: snprintf(c->data_dir, sizeof c->data_dir, "%s", arg); return 0;
    case OPT_ID:
        if (strcmp(arg, "auto") == 0) return id_from_hostname(c);
        if (parse_uint("--id", arg, 1, 9000, &v) != 0) return -1;
        c->id = v;
        return 0;
    case OPT_RAFT: snprintf(c->raft_address, sizeof c->raft_address, "%s", arg); c->set_raft = true; return 0;
    case OPT_WORKERS:
        c->set_workers = true;
        return parse_listen("--listen-workers", arg, c->worker_host, sizeof c->worker_host,
                            &c->worker_port);
    case OPT_ADVERTISE: snprintf(c->worker_advertise, sizeof c->worker_advertise, "%s", arg); return 0;
    case OPT_API: c->set_api = true; return parse_listen("--listen-api", arg, c->api_host, sizeof c->api_host, &c->api_port);
    case OPT_ELECTION: return parse_uint("--election-timeout-ms", arg, 50, 60000, &c->election_timeout_ms);
    case OPT_HEARTBEAT: return parse_uint("--heartbeat-timeout-ms", arg, 10, 10000, &c->heartbeat_timeout_ms);
    case OPT_SNAP_THRESHOLD: return parse_uint("--snapshot-threshold", arg, 2, 1u << 30, &c->snapshot_threshold);
    case OPT_SNAP_TRAILING: return parse_uint("--snapshot-trailing", arg, 1, 1u << 30, &c->snapshot_trailing);
    case OPT_WORKER_HB: return parse_uint("--worker-heartbeat-ms", arg, 100, 60000, &c->worker_heartbeat_ms);
    case OPT_CLUSTER: return load_cluster(c, arg);
    case OPT_JOIN_QUORUM: c->no_bootstrap = true; return 0;
    case OPT_JOIN_SECRET: return load_secret("--join-secret-file", arg, &c->join_secret);
    case OPT_CLUSTER_SECRET:
        return load_secret("--cluster-secret-file", arg, &c->cluster_secret);
    case OPT_ADMIN_TOKEN: return parse_path("--admin-token-file", arg, c->admin_token_file);
    case OPT_METRICS_TOKEN: return parse_path("--metrics-token-file", arg, c->metrics_token_file);
    case OPT_API_MAX_CONNS: return parse_uint("--api-max-conns", arg, 16, 1000000, &c->api_max_conns);
    case OPT_API_READ_THREADS: return parse_uint("--api-read-threads", arg, 0, 16, &c->api_read_threads);
    case OPT_HISTORY_FULL: return parse_age("--history-full", arg, &c->retention.full_ms);
    case OPT_HISTORY_10S: return parse_age("--history-10s", arg, &c->retention.ten_s_ms);
    case OPT_HISTORY_MAX: return parse_age("--history-max", arg, &c->retention.max_ms);
    case OPT_ACKS_KEEP: return parse_age("--acks-keep", arg, &c->retention.acks_ms);
    case OPT_NO_ARCHIVE: c->retention.no_archive = true; return 0;
    case OPT_QUOTA_ACTIVE:
        return parse_uint("--quota-active-runs", arg, 0, 1000000, &c->quota_active_runs);
    case OPT_QUOTA_KEPT:
        return parse_uint("--quota-kept-runs", arg, 0, 100000000, &c->quota_kept_runs);
    case OPT_QUOTA_BYTES:
        return parse_uint("--quota-scenario-bytes", arg, 0, 1u << 20, &c->quota_scenario_bytes);
    case OPT_LOG:
        if (lc_log_level_parse(arg) < 0) {
            fprintf(stderr, "loadmaster: --log-level: expected debug, info, warn or error\n");
            return -1;
        }
        lc_log_set_level((enum lc_log_level)lc_log_level_parse(arg));
        return 0;
    case OPT_TLS_CERT: c->worker_tls.cert = arg; return 0;
    case OPT_TLS_KEY: c->worker_tls.key = arg; return 0;
    case OPT_TLS_CA: c->worker_tls.ca = arg; return 0;
    case OPT_TLS_REQUIRE_ID: c->tls_require_worker_id = true; return 0;
    case OPT_LOG_FILE: return parse_path("--log-file", arg, c->log_file);
    case OPT_VERSION: printf("loadmaster %s\n", LC_VERSION); return 1;
    case OPT_HELP: fputs(usage, stdout); return 1;
    default: fputs(usage, stderr); return -1;
    }
}

int master_config_parse(int argc, char **argv, master_config_t *c)
{
    set_defaults(c);
    int opt;
    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
        int rv = apply_flag(c, opt, optarg);
        if (rv != 0)
            return rv;
    }
    if (optind < argc) {
        fprintf(stderr, "loadmaster: unexpected argument '%s'\n%s", argv[optind], usage);
        return -1;
    }
    char why[256];
    if (lc_tls_files_check(&c->worker_tls, why, sizeof why) == LC_EINVAL) {
        fprintf(stderr, "loadmaster: %s\n", why);
        return -1;
    }
    if (c->clustered && apply_cluster_node(c) != 0)
        return -1;
    if (c->cluster_secret.len == 0)
        c->cluster_secret = c->join_secret;
    if (c->worker_advertise[0] == '\0')
        snprintf(c->worker_advertise, sizeof c->worker_advertise, "%s:%u",
                 strcmp(c->worker_host, "0.0.0.0") == 0 ? "127.0.0.1" : c->worker_host,
                 c->worker_port);
    return 0;
}

