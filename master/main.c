/* main.c — loadmaster: flags, wiring of the master's modules, signals. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "batcher.h"
#include "auth.h"
#include "config.h"
#include "api.h"
#include "fleet.h"
#include "lc_addr.h"
#include "lc_clock.h"
#include "lc_err.h"
#include "lc_log.h"
#include "lc_notify.h"
#include "master.h"
#include "members.h"
#include "peers.h"
#include "quorum.h"
#include "archive_net.h"
#include "archiver.h"
#include "retention.h"
#include "store_archive.h"
#include "runs.h"
#include "store.h"

/* How often the leader looks for history due for compaction or deletion;
 * one step (at most 10 minutes of one run) per look. */
#define RETENTION_CHECK_MS 200

static void on_role(void *arg, bool leader)
{
    master_t *m = arg;
    fleet_set_accepting(m->fleet, leader, m->cfg.id, quorum_term(m->quorum));
    lc_node_t self;
    if (leader && members_find(m, m->cfg.id, &self) && self.worker.port != 0) {
        char address[LC_HOST_MAX + 8];
        lc_hostport_format(&self.worker, address, sizeof address);
        fleet_send_parked_to(m->fleet, address);
    }
    if (leader) {
        members_register_self(m);
        auth_on_leader(m);
    }
    if (!leader)
        batcher_reset(m->batcher);
    runs_on_leader(m->runs, leader);
    retention_on_leader(m->retention, leader);
}

/* A follower's news of its leader: a dead one gets no more workers, a new
 * one gets the Hellos that waited for it. */
static void on_leader(void *arg, uint64_t leader_id, bool gone)
{
    master_t *m = arg;
    if (gone)
        peers_note_down(m->peers, leader_id);
    else
        fleet_leader_known(m->fleet, lc_mono_ms());
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
    batcher_add(m->batcher, w, env);
}

static void on_refused(void *arg, fleet_worker_t *w, const Lc__AssignRefused *refused)
{
    master_t *m = arg;
    runs_on_assign_refused(m->runs, w, refused->run, refused->reason);
}

static void on_run_done(void *arg, fleet_worker_t *w, uint64_t run, const char *reason)
{
    master_t *m = arg;
    runs_on_worker_done(m->runs, w, run, reason);
}

static void on_feed_request(void *arg, fleet_worker_t *w, const Lc__FeedRequest *req)
{
    master_t *m = arg;
    runs_on_feed_request(m->runs, w, req);
}

static bool leader_address(void *arg, char *buf, size_t len)
{
    master_t *m = arg;
    uint64_t leader = quorum_leader_id(m->quorum);
    lc_node_t node;
    /* A leader that stopped answering probes is likely gone: say "no leader"
     * rather than send the worker to a dead address. */
    if (leader == 0 || leader == m->cfg.id || !members_find(m, leader, &node) ||
        node.worker.port == 0 || peers_seems_down(m->peers, leader))
        return false;
    lc_hostport_format(&node.worker, buf, len);
    return true;
}

static size_t master_addresses(void *arg, char (*out)[LC_HOST_MAX + 8], size_t max)
{
    master_t *m = arg;
    lc_node_t nodes[LC_NODES_MAX];
    size_t n = members_list(m, nodes, LC_NODES_MAX), written = 0;
    for (size_t i = 0; i < n && written < max; i++)
        if (nodes[i].worker.port != 0)
            lc_hostport_format(&nodes[i].worker, out[written++], LC_HOST_MAX + 8);
    return written;
}

static size_t list_members(void *arg, lc_node_t *out, size_t max)
{
    return members_list(arg, out, max);
}

static void store_close_cb(void *arg)
{
    master_t *m = arg;
    store_close(m->store);
    m->store = NULL;
}

/* The second step of a shutdown: raft has no write in flight that its close
 * could trip over (quorum_drain), so everything else closes, raft last. */
static void drained_cb(void *arg)
{
    master_t *m = arg;
    runs_close(m->runs);
    m->runs = NULL;
    retention_close(m->retention);
    archiver_close(m->archiver);
    archive_net_close(m->archive_net);
    batcher_close(m->batcher);
    fleet_close(m->fleet, NULL, NULL);
    peers_close(m->peers);
    quorum_close(m->quorum, store_close_cb, m);
}

/* The first step: no new requests or proposals; those in flight finish. */
static void shut_down(master_t *m)
{
    if (m->shutting_down)
        return;
    m->shutting_down = true;
    uv_close((uv_handle_t *)&m->sigint, NULL);
    uv_close((uv_handle_t *)&m->sigterm, NULL);
    uv_close((uv_handle_t *)&m->sighup, NULL);
    uv_close((uv_handle_t *)&m->ready_timer, NULL);
    uv_close((uv_handle_t *)&m->stop_timer, NULL);
    api_close(m);
    lc_loop_lag_close(&m->loop_lag);
    quorum_drain(m->quorum, drained_cb, m);
}

static void stepped_down(void *arg, uint64_t new_leader)
{
    master_t *m = arg;
    if (new_leader != 0)
        lc_info("master", "msg=\"leadership handed over\" leader=%llu",
                (unsigned long long)new_leader);
    else
        lc_warn("master", "msg=\"leadership hand-over did not finish; stopping anyway\"");
    shut_down(m);
}

static void stop_timeout_cb(uv_timer_t *t)
{
    master_t *m = t->data;
    lc_warn("master", "msg=\"leadership hand-over took too long; stopping anyway\"");
    shut_down(m);
}

/* SIGTERM and SIGINT: a leader hands over first, so that the quorum does not
 * wait an election timeout to notice it is gone. */
static void stop_cb(uv_signal_t *s, int signum)
{
    master_t *m = s->data;
    if (m->stopping)
        return;
    m->stopping = true;
    lc_notify_stopping();
    lc_info("master", "msg=\"shutting down\" signal=%d", signum);
    if (quorum_step_down(m->quorum, stepped_down, m) != 0) {
        shut_down(m);
        return;
    }
    /* raft gives up after an election timeout; this only guards against a hang. */
    uv_timer_start(&m->stop_timer, stop_timeout_cb, 2ull * m->cfg.election_timeout_ms + 1000, 0);
}

/* SIGHUP: reopen --log-file (after logrotate moved it). */
static void reopen_logs_cb(uv_signal_t *s, int signum)
{
    master_t *m = s->data;
    char why[300];
    if (m->cfg.log_file[0] == '\0')
        return;
    if (lc_log_open_file(m->cfg.log_file, why, sizeof why) != 0)
        lc_error("master", "msg=\"cannot reopen the log file\" error=\"%s\"", why);
    else
        lc_info("master", "msg=\"log file reopened\" path=\"%s\"", m->cfg.log_file);
}

/* Tells systemd (Type=notify) READY=1 once this node knows a leader. */
static void ready_poll_cb(uv_timer_t *t)
{
    master_t *m = t->data;
    uint64_t leader = quorum_leader_id(m->quorum);
    if (leader == 0 || m->ready_notified)
        return;
    char status[64];
    snprintf(status, sizeof status, "leader %llu, term %llu", (unsigned long long)leader,
             (unsigned long long)quorum_term(m->quorum));
    lc_notify_ready(status);
    m->ready_notified = true;
    uv_timer_stop(t);
}

static void start_signals(master_t *m)
{
    uv_signal_init(m->loop, &m->sigint);
    uv_signal_init(m->loop, &m->sigterm);
    uv_signal_init(m->loop, &m->sighup);
    m->sigint.data = m->sigterm.data = m->sighup.data = m;
    uv_signal_start(&m->sigint, stop_cb, SIGINT);
    uv_signal_start(&m->sigterm, stop_cb, SIGTERM);
    uv_signal_start(&m->sighup, reopen_logs_cb, SIGHUP);
    uv_timer_init(m->loop, &m->ready_timer);
    uv_timer_init(m->loop, &m->stop_timer);
    m->ready_timer.data = m->stop_timer.data = m;
    uv_timer_start(&m->ready_timer, ready_poll_cb, 100, 100);
}

/* Descriptors the worker port may use: the open-file limit (raised to its
 * hard limit) less the API's connections and a reserve for Raft, the store
 * and logs, so a flood of worker connections cannot starve them. */
#define FD_RESERVE 256
static size_t worker_connection_budget(unsigned api_max_conns)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 0;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur == RLIM_INFINITY)
        return 0;
    uint64_t others = FD_RESERVE + (uint64_t)api_max_conns + 32; /* 32: the API's probe slots */
    return rl.rlim_cur > others + FD_RESERVE ? (size_t)(rl.rlim_cur - others) : FD_RESERVE;
}

#define LOOP_LAG_PROBE_MS 20 /* the loop-lag probe's period */

/* The state database, <data-dir>/state.db, beside Raft's files (which are
 * what an operator backs up: the database is rebuilt from them at start). */
static int open_state(master_t *m, char *errmsg, size_t errlen)
{
    char path[PATH_MAX];
    if (mkdir(m->cfg.data_dir, 0750) != 0 && errno != EEXIST)
        return lc_errf(errmsg, errlen, LC_EIO, "create %s: %s", m->cfg.data_dir, strerror(errno));
    if ((size_t)snprintf(path, sizeof path, "%s/state.db", m->cfg.data_dir) >= sizeof path)
        return lc_errf(errmsg, errlen, LC_EINVAL, "--data-dir is too long");
    return store_open_file(&m->store, path, errmsg, errlen);
}

/* Every master keeps its archive directory in step with the state, whether or not this
 * one proposes archiving (--no-history-archive): the leader's policy decides. */
static int start_archives(master_t *m, char *errmsg, size_t errlen)
{
    char path[PATH_MAX];
    int rv = store_file_path(m->store, path, sizeof path);
    if (rv == 0)
        rv = archive_net_init(&m->archive_net, m->loop, m->quorum, path);
    archiver_io_t io = m->archive_net ? archive_net_io(m->archive_net) : (archiver_io_t){0};
    if (rv == 0)
        rv = archiver_init(&m->archiver, m->loop, m->store, &io);
    return rv != 0 ? lc_errf(errmsg, errlen, rv, "cannot set up %s/archive",
                             m->cfg.data_dir) : 0;
}

static int start(master_t *m, char *errmsg, size_t errlen)
{
    bool created;
    int rv = 0;
    if (m->cfg.admin_token_file[0] != '\0') {
        rv = auth_token_file_load(m->cfg.admin_token_file, m->admin_hash, &created, errmsg, errlen);
        m->admin_hash_set = rv == 0;
    }
    if (rv == 0)
        rv = open_state(m, errmsg, errlen);
    if (rv == 0)
        lc_loop_lag_start(&m->loop_lag, m->loop, LOOP_LAG_PROBE_MS);
    runs_io_t runs_io = runs_io_master(m);
    if (rv == 0)
        rv = runs_init(&m->runs, m->loop, m->store, &runs_io, m->cfg.worker_heartbeat_ms);
    if (rv == 0)
        rv = batcher_init(&m->batcher, m, &runs_io.commands);
    const master_retention_t *keep = &m->cfg.retention;
    store_retention_policy_t policy = {.full_ms = keep->full_ms, .ten_s_ms = keep->ten_s_ms,
                                       .max_ms = keep->max_ms, .acks_ms = keep->acks_ms,
                                       .archive = !keep->no_archive};
    if (rv == 0)
        rv = retention_init(&m->retention, m->loop, m->store, &runs_io.commands, &policy,
                            RETENTION_CHECK_MS);
    if (rv == 0)
        rv = peers_init(&m->peers, m->loop, m->cfg.id, list_members, m);
    if (rv == 0 && m->cfg.worker_tls.cert != NULL)
        rv = lc_tls_context_new(&m->worker_tls, true, &m->cfg.worker_tls, errmsg, errlen);
    if (rv == 0 && m->cfg.worker_tls.cert != NULL)
        rv = lc_tls_context_new(&m->raft_tls_client, false, &m->cfg.worker_tls, errmsg, errlen);
    fleet_config_t fc = {.listen_host = m->cfg.worker_host,
                         .listen_port = m->cfg.worker_port,
                         .advertise = m->cfg.worker_advertise,
                         .heartbeat_ms = m->cfg.worker_heartbeat_ms,
                         .stats_interval_ms = m->cfg.stats_interval_ms,
                         .join_secret = &m->cfg.join_secret,
                         .tls_ctx = m->worker_tls,
                         .tls_require_worker_id = m->cfg.tls_require_worker_id,
                         .max_connections = worker_connection_budget(m->cfg.api_max_conns)};
    fleet_events_t ev = {.arg = m,
                         .on_join = on_join,
                         .on_lost = on_lost,
                         .on_stats = on_stats,
                         .leader_address = leader_address,
                         .master_addresses = master_addresses,
                         .on_refused = on_refused, .on_run_done = on_run_done,
                         .on_feed_request = on_feed_request};
    if (rv == 0)
        rv = fleet_init(&m->fleet, m->loop, &fc, &ev, errmsg, errlen);
    if (rv == 0)
        rv = api_init(m, errmsg, errlen);
    quorum_config_t qc = {.data_dir = m->cfg.data_dir,
                          .id = m->cfg.id,
                          .raft_address = m->cfg.raft_address,
                          .nodes = m->cfg.clustered ? &m->cfg.nodes : NULL,
                          .election_timeout_ms = m->cfg.election_timeout_ms,
                          .heartbeat_timeout_ms = m->cfg.heartbeat_timeout_ms,
                          .snapshot_threshold = m->cfg.snapshot_threshold,
                          .snapshot_trailing = m->cfg.snapshot_trailing,
                          .no_bootstrap = m->cfg.no_bootstrap,
                          .cluster_secret = &m->cfg.cluster_secret,
                          .tls_server = m->worker_tls,
                          .tls_client = m->raft_tls_client};
    if (rv == 0 && m->cfg.cluster_secret.len == 0 && m->worker_tls == NULL)
        lc_warn("master", "msg=\"the Raft port is unauthenticated: anyone who reaches %s can "
                "take part in the quorum; give --tls-cert/--tls-key/--tls-ca (mutual TLS), "
                "--cluster-secret-file or --join-secret-file\"",
                m->cfg.raft_address);
    if (rv == 0)
        rv = quorum_init(&m->quorum, m->loop, m->store, &qc, on_role, m, errmsg, errlen);
    if (rv == 0)
        quorum_on_leader(m->quorum, on_leader, m);
    if (rv == 0)
        rv = start_archives(m, errmsg, errlen);
    return rv;
}

int main(int argc, char **argv)
{
    master_t m;
    memset(&m, 0, sizeof m);
    int rv = master_config_parse(argc, argv, &m.cfg);
    if (rv != 0)
        return rv > 0 ? 0 : 2;
    signal(SIGPIPE, SIG_IGN);
    signal(SIGHUP, SIG_IGN); /* a reload during start must not end the process */
    m.loop = uv_default_loop();
    char errmsg[512] = "";
    if (m.cfg.log_file[0] != '\0' && lc_log_open_file(m.cfg.log_file, errmsg, sizeof errmsg) != 0) {
        fprintf(stderr, "loadmaster: --log-file: %s\n", errmsg);
        return 2;
    }
    if (start(&m, errmsg, sizeof errmsg) != 0) {
        lc_error("master", "msg=\"cannot start\" error=\"%s\"", errmsg);
        return 1;
    }
    start_signals(&m);
    lc_notify_status(m.cfg.no_bootstrap ? "waiting to be added to the quorum"
                                        : "waiting for a leader");
    lc_info("master", "msg=\"started\" id=%llu api=%s:%u workers=%s:%u raft=%s data=%s",
            (unsigned long long)m.cfg.id, m.cfg.api_host, m.cfg.api_port, m.cfg.worker_host,
            m.cfg.worker_port, m.cfg.raft_address, m.cfg.data_dir);
    uv_run(m.loop, UV_RUN_DEFAULT);
    quorum_free(m.quorum); /* only now: raft_uv may call back until the loop ends */
    uv_loop_close(m.loop);
    SSL_CTX_free(m.worker_tls);
    SSL_CTX_free(m.raft_tls_client);
    return 0;
}
