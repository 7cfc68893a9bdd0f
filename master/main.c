/* main.c — loadmaster: flags, wiring of the master's modules, signals. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregator.h"
#include "api.h"
#include "fleet.h"
#include "lc_addr.h"
#include "lc_err.h"
#include "lc_log.h"
#include "master.h"
#include "quorum.h"
#include "runs.h"
#include "store.h"

static const char usage[] =
    "usage: loadmaster [options]\n"
    "  --data-dir DIR             Raft log and snapshots (default ./loadcluster-data)\n"
    "  --id N                     this master's id (default 1)\n"
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
    "  --cluster FILE             nodes.conf of a multi-master quorum (not built yet)\n"
    "  --log-level LEVEL          debug, info, warn or error (default info)\n"
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
}

enum { OPT_DATA = 256, OPT_ID, OPT_RAFT, OPT_WORKERS, OPT_ADVERTISE, OPT_API, OPT_ELECTION,
       OPT_HEARTBEAT, OPT_SNAP_THRESHOLD, OPT_SNAP_TRAILING, OPT_WORKER_HB, OPT_CLUSTER,
       OPT_LOG, OPT_VERSION, OPT_HELP };

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
    {"log-level", required_argument, NULL, OPT_LOG},
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
        if (parse_uint("--id", arg, 1, 9000, &v) != 0) return -1;
        c->id = v;
        return 0;
    case OPT_RAFT: snprintf(c->raft_address, sizeof c->raft_address, "%s", arg); return 0;
    case OPT_WORKERS:
        return parse_listen("--listen-workers", arg, c->worker_host, sizeof c->worker_host,
                            &c->worker_port);
    case OPT_ADVERTISE: snprintf(c->worker_advertise, sizeof c->worker_advertise, "%s", arg); return 0;
    case OPT_API: return parse_listen("--listen-api", arg, c->api_host, sizeof c->api_host, &c->api_port);
    case OPT_ELECTION: return parse_uint("--election-timeout-ms", arg, 50, 60000, &c->election_timeout_ms);
    case OPT_HEARTBEAT: return parse_uint("--heartbeat-timeout-ms", arg, 10, 10000, &c->heartbeat_timeout_ms);
    case OPT_SNAP_THRESHOLD: return parse_uint("--snapshot-threshold", arg, 2, 1u << 30, &c->snapshot_threshold);
    case OPT_SNAP_TRAILING: return parse_uint("--snapshot-trailing", arg, 1, 1u << 30, &c->snapshot_trailing);
    case OPT_WORKER_HB: return parse_uint("--worker-heartbeat-ms", arg, 100, 60000, &c->worker_heartbeat_ms);
    case OPT_CLUSTER:
        fprintf(stderr, "loadmaster: --cluster: multi-master quorums are not built yet; "
                        "run without --cluster for a one-node quorum\n");
        return -1;
    case OPT_LOG:
        if (lc_log_level_parse(arg) < 0) {
            fprintf(stderr, "loadmaster: --log-level: expected debug, info, warn or error\n");
            return -1;
        }
        lc_log_set_level((enum lc_log_level)lc_log_level_parse(arg));
        return 0;
    case OPT_VERSION: printf("loadmaster %s\n", LC_VERSION); return 1;
    case OPT_HELP: fputs(usage, stdout); return 1;
    default: fputs(usage, stderr); return -1;
    }
}

static int parse_flags(int argc, char **argv, master_config_t *c)
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
    if (c->worker_advertise[0] == '\0')
        snprintf(c->worker_advertise, sizeof c->worker_advertise, "%s:%u",
                 strcmp(c->worker_host, "0.0.0.0") == 0 ? "127.0.0.1" : c->worker_host,
                 c->worker_port);
    return 0;
}

static void on_role(void *arg, bool leader)
{
    master_t *m = arg;
    fleet_set_accepting(m->fleet, leader, m->cfg.id, quorum_term(m->quorum));
    if (!leader)
        aggregator_reset(m->agg);
    runs_on_leader(m->runs, leader);
}

static void on_join(void *arg, fleet_worker_t *w, const Lc__Hello *hello)
{
    master_t *m = arg;
    runs_on_worker_join(m->runs, w, hello);
}

static void on_lost(void *arg, fleet_worker_t *w)
{
    master_t *m = arg;
    runs_on_worker_lost(m->runs, w);
}

static void on_stats(void *arg, fleet_worker_t *w, Lc__Envelope *env)
{
    master_t *m = arg;
    aggregator_add(m->agg, w, env);
}

static void on_refused(void *arg, fleet_worker_t *w, const Lc__AssignRefused *refused)
{
    master_t *m = arg;
    runs_on_assign_refused(m->runs, w, refused->run, refused->reason);
}

static void store_close_cb(void *arg)
{
    master_t *m = arg;
    store_close(m->store);
    m->store = NULL;
}

static void signal_cb(uv_signal_t *s, int signum)
{
    master_t *m = s->data;
    if (m->stopping)
        return;
    m->stopping = true;
    lc_info("master", "msg=\"shutting down\" signal=%d", signum);
    uv_close((uv_handle_t *)&m->sigint, NULL);
    uv_close((uv_handle_t *)&m->sigterm, NULL);
    lc_http_server_close(m->api);
    runs_close(m->runs);
    aggregator_close(m->agg);
    fleet_close(m->fleet, NULL, NULL);
    quorum_close(m->quorum, store_close_cb, m);
}

static int start(master_t *m, char *errmsg, size_t errlen)
{
    int rv = store_open(&m->store, errmsg, errlen);
    if (rv == 0)
        rv = runs_init(&m->runs, m);
    if (rv == 0)
        rv = aggregator_init(&m->agg, m);
    fleet_config_t fc = {m->cfg.worker_host, m->cfg.worker_port, m->cfg.worker_advertise,
                         m->cfg.worker_heartbeat_ms, m->cfg.stats_interval_ms};
    fleet_events_t ev = {m, on_join, on_lost, on_stats, on_refused};
    if (rv == 0)
        rv = fleet_init(&m->fleet, m->loop, &fc, &ev, errmsg, errlen);
    if (rv == 0)
        rv = api_init(m, errmsg, errlen);
    quorum_config_t qc = {m->cfg.data_dir, m->cfg.id, m->cfg.raft_address,
                          m->cfg.election_timeout_ms, m->cfg.heartbeat_timeout_ms,
                          m->cfg.snapshot_threshold, m->cfg.snapshot_trailing};
    if (rv == 0)
        rv = quorum_init(&m->quorum, m->loop, m->store, &qc, on_role, m, errmsg, errlen);
    return rv;
}

int main(int argc, char **argv)
{
    master_t m;
    memset(&m, 0, sizeof m);
    int rv = parse_flags(argc, argv, &m.cfg);
    if (rv != 0)
        return rv > 0 ? 0 : 2;
    signal(SIGPIPE, SIG_IGN);
    m.loop = uv_default_loop();
    char errmsg[512] = "";
    if (start(&m, errmsg, sizeof errmsg) != 0) {
        lc_error("master", "msg=\"cannot start\" error=\"%s\"", errmsg);
        return 1;
    }
    uv_signal_init(m.loop, &m.sigint);
    uv_signal_init(m.loop, &m.sigterm);
    m.sigint.data = m.sigterm.data = &m;
    uv_signal_start(&m.sigint, signal_cb, SIGINT);
    uv_signal_start(&m.sigterm, signal_cb, SIGTERM);
    lc_info("master", "msg=\"started\" id=%llu api=%s:%u workers=%s:%u raft=%s data=%s",
            (unsigned long long)m.cfg.id, m.cfg.api_host, m.cfg.api_port, m.cfg.worker_host,
            m.cfg.worker_port, m.cfg.raft_address, m.cfg.data_dir);
    uv_run(m.loop, UV_RUN_DEFAULT);
    uv_loop_close(m.loop);
    return 0;
}
