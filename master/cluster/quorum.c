/* quorum.c — canonical/raft 0.15 setup, proposals and role polling. */
#include "quorum.h"

#include <assert.h>
#include <stddef.h>
#include <arpa/inet.h>
#include <errno.h>
#include <raft.h>
#include <raft/uv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "aio_destroy.h"
#include "fsm.h"
#include "leader_watch.h"
#include "transport.h"
#include "lc_addr.h"
#include "lc_err.h"
#include "lc_log.h"

/* raft 0.15 has no state-change callback: poll raft_state() this often. */
#define ROLE_POLL_MS 50

/* quorum_drain waits for the leader's log writes in flight, polling this
 * often, for at most CLOSE_DRAIN_MAX_MS. */
#define CLOSE_DRAIN_POLL_MS 2
#define CLOSE_DRAIN_MAX_MS 2000

struct quorum_s {
    struct raft raft;
    struct raft_io io;
    cluster_transport_t transport;
    leader_watch_t leader_watch;
    fsm_t fsm;
    uv_timer_t role_timer;
    bool leader;             /* what on_role was last told */
    bool raft_leader;        /* what raft_state() said at the last poll */
    struct raft_barrier *barrier; /* in flight while becoming leader */
    quorum_role_cb on_role;
    void *role_arg;
    quorum_leader_cb on_leader; /* a follower's news of its leader */
    void *leader_arg;
    void (*on_closed)(void *arg);
    void *closed_arg;
    int pending_closes;
    void (*uv_close)(struct raft_io *io, raft_io_close_cb cb); /* raft_uv's own */
    raft_io_close_cb raft_io_closed; /* raft's callback, passed on only once */
    bool io_closed;
    bool closing;            /* draining or closed: no new proposals */
    uint64_t drain_started_ms;
    void (*on_drained)(void *arg);
    void *drained_arg;
    struct raft_transfer transfer;
    void (*step_down_done)(void *arg, uint64_t new_leader);
    void *step_down_arg;
};

typedef struct proposal_s {
    struct raft_apply req;
    quorum_applied_cb cb;
    void *arg;
} proposal_t;

static void announce(quorum_t *q, bool leader)
{
    if (leader == q->leader)
        return;
    q->leader = leader;
    lc_info("quorum", "msg=\"role changed\" role=%s term=%llu", leader ? "leader" : "follower",
            (unsigned long long)q->raft.current_term);
    if (q->on_role != NULL)
        q->on_role(q->role_arg, leader);
}

/* A new leader's database may lag its log: it acts as leader only once a
 * barrier has committed, i.e. every earlier entry has been applied. */
static void barrier_cb(struct raft_barrier *req, int status)
{
    quorum_t *q = req->data;
    free(req);
    if (q == NULL)
        return; /* closed meanwhile */
    q->barrier = NULL;
    if (status == 0 && raft_state(&q->raft) == RAFT_LEADER)
        announce(q, true);
}

static void role_poll_cb(uv_timer_t *t)
{
    quorum_t *q = t->data;
    leader_watch_poll(&q->leader_watch);
    bool leader = raft_state(&q->raft) == RAFT_LEADER;
    if (leader == q->raft_leader)
        return;
    q->raft_leader = leader;
    if (!leader) {
        announce(q, false);
        return;
    }
    struct raft_barrier *req = calloc(1, sizeof *req);
    if (req == NULL)
        return;
    req->data = q;
    if (raft_barrier(&q->raft, req, barrier_cb) != 0) {
        free(req);
        q->raft_leader = false; /* try again at the next poll */
        return;
    }
    q->barrier = req;
}

static void leader_event(void *arg, uint64_t id, bool gone)
{
    quorum_t *q = arg;
    if (q->on_leader != NULL)
        q->on_leader(q->leader_arg, id, gone);
}

void quorum_on_leader(quorum_t *q, quorum_leader_cb cb, void *arg)
{
    q->on_leader = cb;
    q->leader_arg = arg;
}

static int bootstrap_if_new(quorum_t *q, const quorum_config_t *cfg, char *errmsg, size_t errlen)
{
    struct raft_configuration conf;
    char address[LC_HOST_MAX + 8];
    int rv = 0;
    raft_configuration_init(&conf);
    if (cfg->nodes == NULL) {
        rv = raft_configuration_add(&conf, cfg->id, cfg->raft_address, RAFT_VOTER);
    } else {
        for (size_t i = 0; rv == 0 && i < cfg->nodes->n; i++) {
            const lc_node_t *n = &cfg->nodes->nodes[i];
            snprintf(address, sizeof address, "%s:%u", n->raft.host, n->raft.port);
            rv = raft_configuration_add(&conf, n->id, address, RAFT_VOTER);
        }
    }
    if (rv == 0)
        rv = raft_bootstrap(&q->raft, &conf);
    raft_configuration_close(&conf);
    if (rv != 0 && rv != RAFT_CANTBOOTSTRAP)
        return lc_errf(errmsg, errlen, LC_EIO, "quorum: bootstrap: %s", raft_errmsg(&q->raft));
    return 0;
}

static quorum_t *quorum_of_io(struct raft_io *io)
{
    return (quorum_t *)((char *)io - offsetof(quorum_t, io));
}

/* raft_uv 0.15 may fire its close callback twice: an open segment's writer
 * that finishes closing after everything else calls uvMaybeFireCloseCb again,
 * and raft's ioCloseCb then frees the same memory twice (the "double free or
 * corruption" CI saw at shutdown; cowsql/raft#45 removed that call). raft's
 * callback is therefore passed on once, and quorum_free releases the raft_uv
 * state only after the loop ended, when that late callback has run. */
static void io_closed_once(struct raft_io *io)
{
    quorum_t *q = quorum_of_io(io);
    if (q->io_closed) {
        lc_debug("quorum", "msg=\"raft_uv fired its close callback again; ignored\"");
        return;
    }
    q->io_closed = true;
    q->raft_io_closed(io);
}

static void close_io_once(struct raft_io *io, raft_io_close_cb cb)
{
    quorum_t *q = quorum_of_io(io);
    assert(q->raft_io_closed == NULL && cb != NULL);
    q->raft_io_closed = cb;
    q->uv_close(io, io_closed_once);
}

/* When this node's raft address is a host name, listen on every interface
 * at its port (the transport binds only IPv4 literals). */
static const char *bind_address_for(const char *address, char *buf, size_t len)
{
    lc_hostport_t hp;
    char why[128];
    struct in_addr literal;
    if (lc_hostport_parse(address, 0, &hp, why, sizeof why) != 0 ||
        inet_pton(AF_INET, hp.host, &literal) == 1)
        return NULL;
    snprintf(buf, len, "0.0.0.0:%u", hp.port);
    return buf;
}

/* A TLS peer may take part as id from address when the configuration has
 * that server there; before this node has a configuration (it waits to be
 * added), any peer whose certificate fits. */
static bool admit_member(void *arg, raft_id id, const char *address)
{
    const quorum_t *q = arg;
    const struct raft_configuration *conf = &q->raft.configuration;
    if (conf->n == 0)
        return true;
    for (unsigned i = 0; i < conf->n; i++)
        if (conf->servers[i].id == id && strcmp(conf->servers[i].address, address) == 0)
            return true;
    return false;
}

static int start_raft(quorum_t *q, uv_loop_t *loop, const quorum_config_t *cfg, char *errmsg,
                      size_t errlen)
{
    if (mkdir(cfg->data_dir, 0750) != 0 && errno != EEXIST)
        return lc_errf(errmsg, errlen, LC_EIO, "quorum: create %s: %s", cfg->data_dir,
                       strerror(errno));
    char bind_buf[32];
    cluster_transport_config_t tc = {
        .bind_address = bind_address_for(cfg->raft_address, bind_buf, sizeof bind_buf),
        .secret = cfg->cluster_secret,
        .tls_server = cfg->tls_server,
        .tls_client = cfg->tls_client,
        .admit = admit_member,
        .admit_arg = q};
    if (cluster_transport_init(&q->transport, loop, &tc) != 0) {
        return lc_errf(errmsg, errlen, LC_EIO, "quorum: init raft transport for %s",
                       cfg->raft_address);
    }
    aio_destroy_off_loop(); /* raft_uv's segment writers destroy their AIO contexts on the loop */
    if (raft_uv_init(&q->io, loop, cfg->data_dir, &q->transport.outer) != 0) {
        snprintf(errmsg, errlen, "quorum: open %s: %s", cfg->data_dir, q->io.errmsg);
        cluster_transport_close(&q->transport);
        return LC_EIO;
    }
    /* raft_uv of 0.15 has async_work but still says version 1, which makes
     * raft_init refuse the asynchronous snapshots of fsm version 3 (raft
     * fixed it in 0.17.1, commit 269e541 "uv: set io version to 2"). */
    if (q->io.version < 2 && q->io.async_work != NULL)
        q->io.version = 2;
    q->uv_close = q->io.close;
    q->io.close = close_io_once;
    if (raft_init(&q->raft, &q->io, &q->fsm.raft, cfg->id, cfg->raft_address) != 0) {
        snprintf(errmsg, errlen, "quorum: init raft: %s", raft_errmsg(&q->raft));
        raft_uv_close(&q->io);
        cluster_transport_close(&q->transport);
        return LC_EIO;
    }
    leader_watch_init(&q->leader_watch, &q->raft, &q->transport, leader_event, q);
    raft_set_election_timeout(&q->raft, cfg->election_timeout_ms);
    raft_set_heartbeat_timeout(&q->raft, cfg->heartbeat_timeout_ms);
    raft_set_snapshot_threshold(&q->raft, cfg->snapshot_threshold);
    raft_set_snapshot_trailing(&q->raft, cfg->snapshot_trailing);
    /* A master back from a partition with a higher term must not unseat a
     * working leader: it first asks whether it could win. */
    raft_set_pre_vote(&q->raft, true);
    int rv = cfg->no_bootstrap ? 0 : bootstrap_if_new(q, cfg, errmsg, errlen);
    if (rv == 0 && raft_start(&q->raft) != 0) {
        snprintf(errmsg, errlen, "quorum: start raft on %s: %s", cfg->raft_address,
                 raft_errmsg(&q->raft));
        rv = LC_EIO;
    }
    return rv;
}

int quorum_init(quorum_t **out, uv_loop_t *loop, store_t *store, const quorum_config_t *cfg,
                quorum_role_cb on_role, void *role_arg, char *errmsg, size_t errlen)
{
    quorum_t *q = calloc(1, sizeof *q);
    if (q == NULL)
        return LC_ENOMEM;
    q->on_role = on_role;
    q->role_arg = role_arg;
    fsm_init(&q->fsm, store);
    int rv = start_raft(q, loop, cfg, errmsg, errlen);
    if (rv != 0) {
        /* raft_init succeeded only if the raft struct has its io set. */
        free(q);
        return rv;
    }
    uv_timer_init(loop, &q->role_timer);
    q->role_timer.data = q;
    uv_timer_start(&q->role_timer, role_poll_cb, 0, ROLE_POLL_MS);
    *out = q;
    return 0;
}

bool quorum_is_leader(quorum_t *q)
{
    return !q->closing && q->leader && raft_state(&q->raft) == RAFT_LEADER;
}

uint64_t quorum_term(quorum_t *q)
{
    return q->raft.current_term;
}

uint64_t quorum_id(quorum_t *q)
{
    return q->raft.id;
}

cluster_transport_t *quorum_transport(quorum_t *q)
{
    return &q->transport;
}

uint64_t quorum_leader_id(quorum_t *q)
{
    raft_id id = 0;
    const char *address = NULL;
    raft_leader(&q->raft, &id, &address);
    return id;
}

uint64_t quorum_commit_index(quorum_t *q)
{
    return q->raft.commit_index;
}

uint64_t quorum_applied_index(quorum_t *q)
{
    return raft_last_applied(&q->raft);
}

static void transfer_cb(struct raft_transfer *req)
{
    quorum_t *q = req->data;
    uint64_t leader = quorum_leader_id(q);
    void (*done)(void *, uint64_t) = q->step_down_done;
    q->step_down_done = NULL;
    if (done != NULL)
        done(q->step_down_arg, leader == q->raft.id ? 0 : leader);
}

int quorum_step_down(quorum_t *q, void (*done)(void *arg, uint64_t new_leader), void *arg)
{
    if (raft_state(&q->raft) != RAFT_LEADER || q->step_down_done != NULL)
        return LC_ESTATE;
    q->transfer.data = q;
    q->step_down_done = done;
    q->step_down_arg = arg;
    int rv = raft_transfer(&q->raft, &q->transfer, 0, transfer_cb);
    if (rv != 0) {
        q->step_down_done = NULL;
        lc_info("quorum", "msg=\"no leadership transfer\" reason=\"%s\"", raft_strerror(rv));
        return LC_ESTATE;
    }
    lc_info("quorum", "msg=\"handing leadership over\" term=%llu",
            (unsigned long long)q->raft.current_term);
    return 0;
}

static void apply_cb(struct raft_apply *req, int status, void *result)
{
    proposal_t *p = (proposal_t *)req;
    if (p->cb != NULL) {
        if (status == 0)
            p->cb(p->arg, 0, fsm_result_code(result));
        else
            p->cb(p->arg, status == RAFT_NOTLEADER || status == RAFT_LEADERSHIPLOST ? LC_ENOTLEADER
                                                                                    : LC_EIO,
                  0);
    }
    free(p);
}

int quorum_propose(quorum_t *q, const Lc__Command *cmd, quorum_applied_cb cb, void *arg)
{
    assert(q != NULL && cmd != NULL && cmd->cmd_case != LC__COMMAND__CMD__NOT_SET);
    if (!quorum_is_leader(q))
        return LC_ENOTLEADER;
    proposal_t *p = calloc(1, sizeof *p);
    struct raft_buffer buf = {0};
    if (p == NULL || fsm_encode_command(cmd, &buf) != 0) {
        free(p);
        return LC_ENOMEM;
    }
    p->req.data = p;
    p->cb = cb;
    p->arg = arg;
    int rv = raft_apply(&q->raft, &p->req, &buf, 1, apply_cb);
    if (rv != 0) {
        lc_warn("quorum", "msg=\"proposal refused\" error=\"%s\"", raft_strerror(rv));
        raft_free(buf.base);
        free(p);
        return rv == RAFT_NOTLEADER ? LC_ENOTLEADER : LC_EIO;
    }
    return 0;
}

size_t quorum_servers(quorum_t *q, quorum_server_t *out, size_t max)
{
    size_t n = 0;
    for (unsigned i = 0; i < q->raft.configuration.n && n < max; i++, n++) {
        const struct raft_server *srv = &q->raft.configuration.servers[i];
        out[n].id = srv->id;
        snprintf(out[n].address, sizeof out[n].address, "%s", srv->address);
        out[n].voter = srv->role == RAFT_VOTER;
    }
    return n;
}

typedef struct change_s {
    struct raft_change req;
    quorum_t *q;
    uint64_t id;
    bool promoting; /* added as a spare; next: make it a voter */
    quorum_change_cb cb;
    void *arg;
} change_t;

static void change_cb(struct raft_change *req, int status)
{
    change_t *c = (change_t *)req;
    if (status == 0 && c->promoting) {
        c->promoting = false;
        status = raft_assign(&c->q->raft, &c->req, c->id, RAFT_VOTER, change_cb);
        if (status == 0)
            return;
    }
    char why[256] = "";
    if (status != 0)
        snprintf(why, sizeof why, "%s", raft_strerror(status));
    c->cb(c->arg, status == 0 ? 0 : status == RAFT_NOTLEADER ? LC_ENOTLEADER : LC_EIO, why);
    free(c);
}

static change_t *new_change(quorum_t *q, uint64_t id, quorum_change_cb cb, void *arg)
{
    change_t *c = calloc(1, sizeof *c);
    if (c != NULL)
        *c = (change_t){.q = q, .id = id, .cb = cb, .arg = arg};
    return c;
}

int quorum_add_voter(quorum_t *q, uint64_t id, const char *raft_address, quorum_change_cb cb,
                     void *arg)
{
    if (!quorum_is_leader(q))
        return LC_ENOTLEADER;
    change_t *c = new_change(q, id, cb, arg);
    if (c == NULL)
        return LC_ENOMEM;
    c->promoting = true;
    int rv = raft_add(&q->raft, &c->req, id, raft_address, change_cb);
    if (rv != 0) {
        free(c);
        return rv == RAFT_DUPLICATEID || rv == RAFT_DUPLICATEADDRESS ? LC_ESTATE : LC_EIO;
    }
    return 0;
}

int quorum_remove(quorum_t *q, uint64_t id, quorum_change_cb cb, void *arg)
{
    if (!quorum_is_leader(q))
        return LC_ENOTLEADER;
    change_t *c = new_change(q, id, cb, arg);
    if (c == NULL)
        return LC_ENOMEM;
    int rv = raft_remove(&q->raft, &c->req, id, change_cb);
    if (rv != 0) {
        free(c);
        return rv == RAFT_BADID ? LC_ENOTFOUND : LC_EIO;
    }
    return 0;
}

static void maybe_finish_close(quorum_t *q)
{
    if (--q->pending_closes > 0)
        return;
    void (*on_closed)(void *) = q->on_closed;
    q->on_closed = NULL;
    if (on_closed != NULL)
        on_closed(q->closed_arg);
}

static void raft_closed_cb(struct raft *r)
{
    maybe_finish_close(r->data);
}

static void timer_closed_cb(uv_handle_t *h)
{
    maybe_finish_close(h->data);
}

/* raft 0.15 crashes in raft_close when two or more of the leader's log writes
 * are still in flight: the first cancelled write truncates the log under the
 * second (canonical/raft#338, fixed in 0.17); a follower's do not. So a
 * shutdown drains first: no new proposals, then a bounded wait until
 * everything appended is on disk. */
static bool log_writes_in_flight(quorum_t *q)
{
    if (raft_state(&q->raft) != RAFT_LEADER)
        return false; /* a follower's cancelled writes truncate nothing */
    return q->raft.last_stored < raft_last_index(&q->raft);
}

static void drained(quorum_t *q)
{
    uv_timer_stop(&q->role_timer);
    void (*on_drained)(void *) = q->on_drained;
    q->on_drained = NULL;
    on_drained(q->drained_arg);
}

static void drain_poll_cb(uv_timer_t *t)
{
    quorum_t *q = t->data;
    if (!log_writes_in_flight(q)) {
        drained(q);
        return;
    }
    if (uv_now(t->loop) - q->drain_started_ms < CLOSE_DRAIN_MAX_MS)
        return;
    lc_warn("quorum", "msg=\"stopping with log writes still in flight\" last_stored=%llu "
            "last_index=%llu", (unsigned long long)q->raft.last_stored,
            (unsigned long long)raft_last_index(&q->raft));
    drained(q);
}

void quorum_drain(quorum_t *q, void (*on_drained)(void *arg), void *arg)
{
    assert(!q->closing && on_drained != NULL);
    q->closing = true;
    q->on_drained = on_drained;
    q->drained_arg = arg;
    q->drain_started_ms = uv_now(q->role_timer.loop);
    uv_timer_stop(&q->role_timer);
    uv_timer_start(&q->role_timer, drain_poll_cb, 0, CLOSE_DRAIN_POLL_MS);
}

void quorum_close(quorum_t *q, void (*on_closed)(void *arg), void *arg)
{
    assert(q != NULL && !q->io_closed);
    assert(q->on_drained == NULL);
    q->closing = true;
    q->on_closed = on_closed;
    q->closed_arg = arg;
    q->pending_closes = 2;
    q->raft.data = q;
    if (q->barrier != NULL)
        q->barrier->data = NULL; /* its callback runs during raft_close */
    uv_close((uv_handle_t *)&q->role_timer, timer_closed_cb);
    raft_close(&q->raft, raft_closed_cb);
}

void quorum_free(quorum_t *q)
{
    if (q == NULL)
        return;
    assert(q->io_closed && q->pending_closes == 0);
    raft_uv_close(&q->io);
    cluster_transport_close(&q->transport);
    free(q);
}
