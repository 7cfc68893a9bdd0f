/* fleet.c — the worker registry and the dispatch of every message a worker
 * sends: the handshake (Challenge, Hello, Welcome or Redirect), heartbeats
 * and saturation, stats and refusals handed to the events, liveness. No
 * socket here: connections come from a fleet_transport_t (fleet_net.c). */
#include "fleet.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "fleet_internal.h"
#include "lc_clock.h"
#include "lc_err.h"
#include "lc_log.h"
#include "lc_protocol.h"
#include "lc_text.h"

#define MISSED_HEARTBEATS 3
/* A heartbeat delay is noted up to this (a worker's clock may jump, or lie). */
#define HEARTBEAT_DELAY_CAP_MS 3600000u
#define HELLO_TIMEOUT_MS 5000 /* from accept to Hello (TLS handshake included) */
#define PARK_MAX_MS 3000      /* a Hello waits this long on a follower for a leader to exist */
#define PARKED_MAX 128        /* Hellos waiting at once; more are closed at once */
#define WELCOME_MASTERS_MAX 16
#define DEFAULT_MAX_UNJOINED 256

struct fleet_conn_s {
    fleet_t *fleet;
    void *data;             /* the transport's handle */
    fleet_worker_t *worker; /* NULL until Hello */
    char peer[64];
    bool closing;
    bool joined;            /* its Hello was accepted: it speaks for worker_id only */
    bool dispatching;       /* inside fleet_conn_receive: freeing waits for its end */
    bool gone;              /* the transport let it go while dispatching */
    char worker_id[FLEET_ID_MAX];
    uint8_t nonce[LC_JOIN_NONCE_LEN]; /* this connection's Challenge */
    uint64_t accepted_ms;             /* monotonic; Hello is due HELLO_TIMEOUT_MS later */
    uint64_t parked_ms;               /* monotonic; 0: not parked (see park()) */
    fleet_conn_t *prev, *next;        /* every open connection */
};

struct fleet_s {
    fleet_config_t cfg;
    char advertise[128];
    fleet_events_t events;
    fleet_transport_t transport;
    bool accepting;
    uint64_t leader_id, term;
    fleet_worker_t **workers; /* known workers, join order */
    size_t n_workers, cap_workers;
    fleet_worker_t **connected_view;
    uint64_t saturation_epoch;
    lc_worst_t heartbeat_delay_ms; /* fleet_heartbeat_delay() */
    fleet_conn_t *conns;      /* open connections */
    size_t n_conns;
    size_t n_joined;          /* of them, with an accepted Hello */
};

/* ---- connections --------------------------------------------------------- */

int fleet_conn_send(fleet_conn_t *c, const Lc__Envelope *env)
{
    if (c->closing)
        return LC_ECLOSED;
    const fleet_transport_t *t = &c->fleet->transport;
    return t->send(t->arg, c->data, env);
}

void *fleet_conn_data(const fleet_conn_t *c)
{
    return c->data;
}

const fleet_transport_t *fleet_transport(const fleet_t *f)
{
    return &f->transport;
}

bool fleet_conn_closing(const fleet_conn_t *c)
{
    return c->closing;
}

void fleet_conn_close(fleet_conn_t *c, const char *reason)
{
    if (c->closing)
        return;
    c->closing = true;
    if (reason != NULL)
        lc_warn("fleet", "msg=\"closing worker connection\" peer=%s worker=%s reason=\"%s\"", c->peer,
                c->worker ? c->worker->id : "-", reason);
    if (c->worker != NULL && c->worker->conn == c)
        c->worker->conn = NULL;
    c->worker = NULL;
    c->fleet->transport.close(c->fleet->transport.arg, c->data);
}

fleet_conn_t *fleet_conn_open(fleet_t *f, void *conn_data, const char *peer, uint64_t now_ms)
{
    fleet_conn_t *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->fleet = f;
    c->data = conn_data;
    c->accepted_ms = now_ms;
    snprintf(c->peer, sizeof c->peer, "%s", peer);
    c->next = f->conns;
    if (f->conns != NULL)
        f->conns->prev = c;
    f->conns = c;
    f->n_conns++;
    /* Every connection starts with a fresh nonce the worker answers in Hello;
     * over TLS it is queued until the handshake ends. */
    if (lc_join_nonce(c->nonce) != 0)
        fleet_conn_close(c, "no randomness for the join challenge");
    else
        fleet_send_challenge(c, c->nonce, sizeof c->nonce);
    return c;
}

void fleet_conn_gone(fleet_conn_t *c)
{
    fleet_t *f = c->fleet;
    assert(f->n_conns > 0);
    if (c->dispatching) {
        c->gone = true; /* fleet_conn_receive frees it once its handlers return */
        return;
    }
    if (c->joined) {
        assert(f->n_joined > 0);
        f->n_joined--;
    }
    if (c->worker != NULL && c->worker->conn == c)
        c->worker->conn = NULL;
    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        f->conns = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    f->n_conns--;
    free(c);
}

void fleet_close_connections(fleet_t *f, const char *reason)
{
    for (fleet_conn_t *c = f->conns, *next; c != NULL; c = next) {
        next = c->next; /* a transport may free c from close */
        fleet_conn_close(c, reason);
    }
}

size_t fleet_conn_count(const fleet_t *f)
{
    return f->n_conns;
}

bool fleet_accepts_connection(const fleet_t *f)
{
    size_t max_unjoined = f->cfg.max_unjoined ? f->cfg.max_unjoined : DEFAULT_MAX_UNJOINED;
    if (f->cfg.max_connections != 0 && f->n_conns >= f->cfg.max_connections)
        return false;
    return f->n_conns - f->n_joined < max_unjoined;
}

/* ---- the registry ------------------------------------------------------- */

fleet_worker_t *fleet_find(fleet_t *f, const char *worker_id)
{
    for (size_t i = 0; i < f->n_workers; i++)
        if (strcmp(f->workers[i]->id, worker_id) == 0)
            return f->workers[i];
    return NULL;
}

static fleet_worker_t *worker_add(fleet_t *f, const char *id)
{
    if (f->n_workers == f->cap_workers) {
        size_t cap = f->cap_workers ? f->cap_workers * 2 : 16;
        fleet_worker_t **grown = realloc(f->workers, cap * sizeof *grown);
        fleet_worker_t **view = realloc(f->connected_view, cap * sizeof *view);
        if (grown != NULL)
            f->workers = grown;
        if (view != NULL)
            f->connected_view = view;
        if (grown == NULL || view == NULL)
            return NULL;
        f->cap_workers = cap;
    }
    fleet_worker_t *w = calloc(1, sizeof *w);
    if (w == NULL)
        return NULL;
    snprintf(w->id, sizeof w->id, "%s", id);
    f->workers[f->n_workers++] = w;
    return w;
}

static void worker_remove(fleet_t *f, fleet_worker_t *w)
{
    assert(w->conn == NULL); /* a lost worker's connection was closed first */
    for (size_t i = 0; i < f->n_workers; i++) {
        if (f->workers[i] != w)
            continue;
        memmove(&f->workers[i], &f->workers[i + 1], (f->n_workers - i - 1) * sizeof *f->workers);
        f->n_workers--;
        free(w);
        return;
    }
}

static void copy_loads(fleet_worker_t *w, Lc__RunLoad **loads, size_t n)
{
    w->n_loads = n < FLEET_MAX_RUN_LOADS ? n : FLEET_MAX_RUN_LOADS;
    for (size_t i = 0; i < w->n_loads; i++) {
        w->loads[i].run = loads[i]->run;
        w->loads[i].generation = loads[i]->generation;
        w->loads[i].users = loads[i]->users;
        w->loads[i].connections = loads[i]->connections;
    }
}

/* ---- the handshake ------------------------------------------------------ */

static void welcome(fleet_t *f, fleet_conn_t *c)
{
    char addresses[WELCOME_MASTERS_MAX][LC_HOST_MAX + 8], *masters[WELCOME_MASTERS_MAX];
    size_t n = f->events.master_addresses
                   ? f->events.master_addresses(f->events.arg, addresses, WELCOME_MASTERS_MAX)
                   : 0;
    for (size_t i = 0; i < n; i++)
        masters[i] = addresses[i];
    if (n == 0)
        masters[n++] = f->advertise;
    fleet_welcome_t w = {.leader_id = f->leader_id, .term = f->term, .masters = masters,
                         .n_masters = n, .heartbeat_ms = f->cfg.heartbeat_ms,
                         .stats_interval_ms = f->cfg.stats_interval_ms};
    fleet_send_welcome(c, &w);
}

/* Validates a Hello; returns NULL or the reason it is refused. */
static const char *hello_problem(const Lc__Hello *h)
{
    if (h->protocol_version != LC_PROTOCOL_VERSION)
        return "unsupported protocol version";
    size_t id_len = strlen(h->worker_id);
    if (id_len == 0 || id_len >= FLEET_ID_MAX)
        return "worker id must be 1 to 64 characters";
    for (size_t i = 0; i < id_len; i++)
        if (h->worker_id[i] <= ' ' || h->worker_id[i] == '"' || h->worker_id[i] > '~')
            return "worker id has characters other than printable ASCII";
    if (h->threads == 0 || h->threads > 4096)
        return "threads must be 1 to 4096";
    if (h->n_running > LC_PROTOCOL_MAX_RUN_LOADS)
        return "Hello lists more than 64 running runs";
    return NULL;
}

/* With a join secret, the Hello must answer this connection's nonce. */
static bool join_allowed(fleet_t *f, fleet_conn_t *c, const Lc__Hello *h)
{
    const lc_join_secret_t *secret = f->cfg.join_secret;
    if (secret == NULL || secret->len == 0)
        return true;
    if (lc_join_verify_for(secret, c->nonce, sizeof c->nonce, h->worker_id, h->join_proof.data,
                           h->join_proof.len))
        return true;
    const char *why = h->join_proof.len == 0 ? "this cluster requires a join secret"
                                             : "join proof does not match the cluster's secret";
    fleet_send_join_refused(c, why);
    fleet_conn_close(c, why);
    return false;
}

static size_t parked_count(const fleet_t *f)
{
    size_t n = 0;
    for (const fleet_conn_t *c = f->conns; c != NULL; c = c->next)
        n += c->parked_ms != 0 && !c->closing;
    return n;
}

static bool leader_known(fleet_t *f, char *leader, size_t len)
{
    return f->events.leader_address != NULL &&
           f->events.leader_address(f->events.arg, leader, len);
}

/* A follower sends the worker to the leader and closes. During an election no leader is
 * known: the Hello waits (up to PARK_MAX_MS, fleet_tick looks again) instead of sending the
 * worker into its backoff, so it reaches the new leader as soon as this master knows it. */
static void redirect(fleet_t *f, fleet_conn_t *c, uint64_t now_ms)
{
    char leader[LC_HOST_MAX + 8];
    if (!leader_known(f, leader, sizeof leader)) {
        if (c->parked_ms == 0 && parked_count(f) < PARKED_MAX)
            c->parked_ms = now_ms ? now_ms : 1;
        else
            fleet_conn_close(c, "no leader known yet");
        return;
    }
    fleet_send_redirect(c, leader);
    lc_info("fleet", "msg=\"redirected worker to the leader\" peer=%s leader=%s", c->peer, leader);
    fleet_conn_close(c, NULL);
}

/* With --tls-require-worker-id, the certificate must name the worker id. */
static bool identity_allowed(fleet_t *f, fleet_conn_t *c, const Lc__Hello *h)
{
    const fleet_transport_t *t = &f->transport;
    if (!f->cfg.tls_require_worker_id || f->cfg.tls_ctx == NULL)
        return true;
    if (t->peer_is != NULL && t->peer_is(t->arg, c->data, h->worker_id))
        return true;
    fleet_send_join_refused(c, "the worker's TLS certificate does not name its worker id");
    fleet_conn_close(c, "TLS certificate does not name the worker id of its Hello");
    return false;
}

/* A live worker keeps its id: a second connection claiming it is refused
 * unless the first has been silent for a heartbeat interval (a worker that
 * restarted, or whose old connection is half-open). */
static bool takes_over(fleet_t *f, fleet_conn_t *c, fleet_worker_t *w, uint64_t now_ms)
{
    if (w->conn == NULL || w->conn == c)
        return true;
    if (now_ms - w->last_seen_ms > f->cfg.heartbeat_ms) {
        fleet_conn_close(w->conn, "replaced by a new connection of the same worker");
        return true;
    }
    fleet_send_join_refused(c, "this worker id is connected from another address");
    fleet_conn_close(c, "worker id already connected and alive");
    return false;
}

static void handle_hello(fleet_t *f, fleet_conn_t *c, const Lc__Hello *h, uint64_t now_ms)
{
    if (c->joined) {
        fleet_conn_close(c, "a second Hello on a joined connection");
        return;
    }
    if (!f->accepting) {
        redirect(f, c, now_ms);
        return;
    }
    const char *problem = hello_problem(h);
    if (problem != NULL) {
        fleet_conn_close(c, problem);
        return;
    }
    if (!join_allowed(f, c, h) || !identity_allowed(f, c, h))
        return;
    fleet_worker_t *w = fleet_find(f, h->worker_id);
    if (w == NULL)
        w = worker_add(f, h->worker_id);
    if (w == NULL) {
        fleet_conn_close(c, "out of memory");
        return;
    }
    if (!takes_over(f, c, w, now_ms))
        return;
    w->conn = c;
    c->worker = w;
    c->joined = true;
    f->n_joined++;
    snprintf(c->worker_id, sizeof c->worker_id, "%s", w->id);
    if (f->transport.joined != NULL)
        f->transport.joined(f->transport.arg, c->data);
    lc_text_clean(w->name, sizeof w->name, h->name);
    snprintf(w->address, sizeof w->address, "%s", c->peer);
    w->threads = h->threads;
    w->sat = saturation_start(h->capacity); /* a (re)joining worker starts unsaturated */
    w->last_seen_ms = now_ms;
    w->hb_offset_known = false; /* a new connection: its clock offset is measured afresh */
    copy_loads(w, h->running, h->n_running);
    lc_info("fleet", "msg=\"worker joined\" worker=%s name=\"%s\" peer=%s threads=%u capacity=%u",
            w->id, w->name, c->peer, w->threads, w->sat.capacity);
    welcome(f, c);
    if (f->events.on_join != NULL)
        f->events.on_join(f->events.arg, w, h);
}

/* ---- heartbeats and saturation ------------------------------------------ */

static void log_saturation(const fleet_worker_t *w, saturation_change_t change, uint64_t users)
{
    const saturation_t *s = &w->sat;
    if (change == SATURATION_SHED)
        lc_warn("fleet", "msg=\"worker saturated\" worker=%s cpu_percent=%.1f users=%llu "
                "effective_capacity=%u", w->id, w->cpu_percent, (unsigned long long)users,
                s->effective_capacity);
    else if (change == SATURATION_RECOVERING)
        lc_info("fleet", "msg=\"saturated worker recovering\" worker=%s cpu_percent=%.1f "
                "effective_capacity=%u capacity=%u", w->id, w->cpu_percent,
                s->effective_capacity, s->capacity);
    else if (change == SATURATION_RECOVERED)
        lc_info("fleet", "msg=\"worker no longer saturated\" worker=%s cpu_percent=%.1f "
                "capacity=%u", w->id, w->cpu_percent, s->capacity);
}

/* How much later than its fastest heartbeat this one arrived: arrival minus the worker's
 * send time, less the smallest such difference of this connection (the clocks' offset and
 * the network's least delay). Bounded: a worker's time_ms is its word. */
static void note_heartbeat_delay(fleet_t *f, fleet_worker_t *w, uint64_t sent_wall_ms)
{
    int64_t diff = (int64_t)(lc_wall_ms() - sent_wall_ms);
    if (!w->hb_offset_known || diff < w->hb_offset_min_ms) {
        w->hb_offset_min_ms = diff;
        w->hb_offset_known = true;
    }
    uint64_t delay = (uint64_t)(diff - w->hb_offset_min_ms);
    lc_worst_note(&f->heartbeat_delay_ms,
                  delay < HEARTBEAT_DELAY_CAP_MS ? delay : HEARTBEAT_DELAY_CAP_MS);
}

static void handle_heartbeat(fleet_t *f, fleet_worker_t *w, const Lc__Heartbeat *hb)
{
    note_heartbeat_delay(f, w, hb->time_ms);
    /* NaN or Inf would make the worker's JSON and /metrics unrenderable. */
    double cpu = hb->cpu_percent;
    w->cpu_percent = isfinite(cpu) && cpu > 0 ? (cpu < 100 ? cpu : 100) : 0;
    w->rss_bytes = hb->rss_bytes;
    copy_loads(w, hb->runs, hb->n_runs);
    uint64_t users = 0;
    for (size_t i = 0; i < w->n_loads; i++)
        users += w->loads[i].users;
    saturation_change_t change = saturation_note(&w->sat, w->cpu_percent, users);
    if (change != SATURATION_UNCHANGED)
        f->saturation_epoch++;
    log_saturation(w, change, users);
}

const lc_worst_t *fleet_heartbeat_delay(const fleet_t *f)
{
    return &f->heartbeat_delay_ms;
}

uint64_t fleet_saturation_epoch(const fleet_t *f)
{
    return f->saturation_epoch;
}

/* ---- dispatch ----------------------------------------------------------- */

/* Hands a StatsBatch to on_stats, which takes env; returns whether it did. */
static bool handle_stats(fleet_t *f, fleet_conn_t *c, Lc__Envelope *env)
{
    if (strcmp(env->stats->worker_id, c->worker->id) != 0) {
        fleet_conn_close(c, "stats batch names another worker");
        return false;
    }
    if (f->events.on_stats == NULL)
        return false;
    f->events.on_stats(f->events.arg, c->worker, env);
    return true;
}

/* The reason is a worker's text: valid UTF-8 and bounded before anyone
 * stores or shows it. */
static void handle_refused(fleet_t *f, fleet_conn_t *c, Lc__AssignRefused *refused)
{
    char reason[LC_PROTOCOL_REASON_MAX + 1], *received = refused->reason;
    lc_text_clean(reason, sizeof reason, received);
    refused->reason = reason;
    lc_warn("fleet", "msg=\"assignment refused\" worker=%s run=%llu reason=\"%s\"", c->worker->id,
            (unsigned long long)refused->run, reason);
    if (f->events.on_refused != NULL)
        f->events.on_refused(f->events.arg, c->worker, refused);
    refused->reason = received; /* the envelope frees what it decoded */
}

static void handle_run_done(fleet_t *f, fleet_conn_t *c, const Lc__RunDone *done)
{
    char reason[LC_PROTOCOL_REASON_MAX + 1];
    lc_text_clean(reason, sizeof reason, done->reason);
    lc_info("fleet", "msg=\"worker asks for the run's end\" worker=%s run=%llu reason=\"%s\"",
            c->worker->id, (unsigned long long)done->run, reason);
    if (f->events.on_run_done != NULL)
        f->events.on_run_done(f->events.arg, c->worker, done->run, reason);
}

bool fleet_conn_receive(fleet_conn_t *c, Lc__Envelope *env, uint64_t now_ms)
{
    assert(c != NULL && env != NULL && !c->dispatching);
    fleet_t *f = c->fleet;
    bool taken = false;
    c->dispatching = true;
    if (c->closing) {
        /* frames read in the same chunk as the one that closed it */
    } else if (c->worker == NULL && env->msg_case != LC__ENVELOPE__MSG_HELLO) {
        fleet_conn_close(c, "expected Hello as the first frame");
    } else {
        if (c->worker != NULL)
            c->worker->last_seen_ms = now_ms;
        switch (env->msg_case) {
        case LC__ENVELOPE__MSG_HELLO:
            handle_hello(f, c, env->hello, now_ms);
            break;
        case LC__ENVELOPE__MSG_HEARTBEAT:
            handle_heartbeat(f, c->worker, env->heartbeat);
            break;
        case LC__ENVELOPE__MSG_STATS:
            taken = handle_stats(f, c, env);
            break;
        case LC__ENVELOPE__MSG_ASSIGN_REFUSED:
            handle_refused(f, c, env->assign_refused);
            break;
        case LC__ENVELOPE__MSG_RUN_DONE:
            handle_run_done(f, c, env->run_done);
            break;
        case LC__ENVELOPE__MSG_FEED_REQUEST:
            if (f->events.on_feed_request != NULL)
                f->events.on_feed_request(f->events.arg, c->worker, env->feed_request);
            break;
        default:
            lc_warn("fleet", "msg=\"ignoring unexpected message\" worker=%s case=%d",
                    c->worker->id, (int)env->msg_case);
            break;
        }
    }
    if (!taken)
        lc__envelope__free_unpacked(env, NULL);
    bool closing = c->closing;
    c->dispatching = false;
    if (c->gone)
        fleet_conn_gone(c);
    return closing;
}

/* ---- liveness ------------------------------------------------------------ */

/* A connection that never says Hello (a port scanner, a worker without TLS
 * on a TLS port) must not hold its slot forever; a Hello parked for want of a
 * leader is sent on once one is known, or closed after PARK_MAX_MS. */
static void close_silent_conns(fleet_t *f, uint64_t now)
{
    const fleet_transport_t *t = &f->transport;
    char leader[LC_HOST_MAX + 8];
    bool known = leader_known(f, leader, sizeof leader);
    for (fleet_conn_t *c = f->conns, *next; c != NULL; c = next) {
        next = c->next;
        if (c->parked_ms != 0 && !c->closing) {
            if (known || now - c->parked_ms > PARK_MAX_MS)
                redirect(f, c, now);
            continue;
        }
        if (c->worker != NULL || c->closing || now - c->accepted_ms <= HELLO_TIMEOUT_MS)
            continue;
        if (t->secured != NULL && !t->secured(t->arg, c->data))
            fleet_conn_close(c, "no TLS handshake within 5 s (a worker without --tls-cert?)");
        else
            fleet_conn_close(c, "no Hello within 5 s");
    }
}

void fleet_send_parked_to(fleet_t *f, const char *address)
{
    assert(address != NULL && address[0] != '\0');
    for (fleet_conn_t *c = f->conns, *next; c != NULL; c = next) {
        next = c->next;
        if (c->parked_ms == 0 || c->closing)
            continue;
        fleet_send_redirect(c, address);
        fleet_conn_close(c, NULL);
    }
}

void fleet_leader_known(fleet_t *f, uint64_t now_ms)
{
    char leader[LC_HOST_MAX + 8];
    if (!leader_known(f, leader, sizeof leader))
        return;
    for (fleet_conn_t *c = f->conns, *next; c != NULL; c = next) {
        next = c->next;
        if (c->parked_ms != 0 && !c->closing)
            redirect(f, c, now_ms);
    }
}

/* Workers silent for MISSED_HEARTBEATS intervals are lost. */
void fleet_tick(fleet_t *f, uint64_t now_ms)
{
    close_silent_conns(f, now_ms);
    uint64_t limit = (uint64_t)MISSED_HEARTBEATS * f->cfg.heartbeat_ms;
    for (size_t i = 0; i < f->n_workers;) {
        fleet_worker_t *w = f->workers[i];
        if (now_ms - w->last_seen_ms <= limit) {
            i++;
            continue;
        }
        lc_warn("fleet", "msg=\"worker lost\" worker=%s silent_ms=%llu", w->id,
                (unsigned long long)(now_ms - w->last_seen_ms));
        if (w->conn != NULL)
            fleet_conn_close(w->conn, "missed 3 heartbeats");
        if (f->events.on_lost != NULL)
            f->events.on_lost(f->events.arg, w);
        worker_remove(f, w);
    }
}

/* ---- life ---------------------------------------------------------------- */

int fleet_new(fleet_t **out, const fleet_config_t *cfg, const fleet_events_t *events,
              const fleet_transport_t *transport)
{
    assert(transport != NULL && transport->send != NULL && transport->close != NULL);
    fleet_t *f = calloc(1, sizeof *f);
    if (f == NULL)
        return LC_ENOMEM;
    f->cfg = *cfg;
    snprintf(f->advertise, sizeof f->advertise, "%s", cfg->advertise ? cfg->advertise : "");
    f->cfg.advertise = f->advertise;
    f->events = *events;
    f->transport = *transport;
    *out = f;
    return 0;
}

void fleet_free(fleet_t *f)
{
    assert(f->n_conns == 0);
    for (size_t i = 0; i < f->n_workers; i++)
        free(f->workers[i]);
    free(f->workers);
    free(f->connected_view);
    free(f);
}

void fleet_set_accepting(fleet_t *f, bool accepting, uint64_t leader_id, uint64_t term)
{
    bool deposed = f->accepting && !accepting;
    f->accepting = accepting;
    f->leader_id = leader_id;
    f->term = term;
    /* A master that lost leadership lets its workers go, so they look for the
     * new leader (or, with no quorum, count down their orphan timeout). */
    if (deposed)
        fleet_close_connections(f, "this master is no longer the leader");
}
fleet_worker_t **fleet_connected(fleet_t *f, size_t *n)
{
    *n = 0;
    for (size_t i = 0; i < f->n_workers; i++)
        if (f->workers[i]->conn != NULL)
            f->connected_view[(*n)++] = f->workers[i];
    return f->connected_view;
}

fleet_worker_t *const *fleet_known(const fleet_t *f, size_t *n)
{
    *n = f->n_workers;
    return f->workers;
}

size_t fleet_count_connected(fleet_t *f)
{
    size_t n;
    fleet_connected(f, &n);
    return n;
}

void fleet_set_assigned(fleet_t *f, const char *worker_id, uint64_t run, uint32_t users)
{
    fleet_worker_t *w = fleet_find(f, worker_id);
    if (w == NULL)
        return;
    size_t i = 0;
    while (i < w->n_assigned && w->assigned[i].run != run)
        i++;
    if (users == 0) {
        if (i < w->n_assigned)
            w->assigned[i] = w->assigned[--w->n_assigned];
        return;
    }
    if (i == w->n_assigned) {
        if (w->n_assigned == FLEET_MAX_RUN_LOADS)
            return;
        w->n_assigned++;
    }
    w->assigned[i] = (fleet_run_load_t){.run = run, .users = users};
}

void fleet_forget_run(fleet_t *f, uint64_t run)
{
    for (size_t i = 0; i < f->n_workers; i++)
        fleet_set_assigned(f, f->workers[i]->id, run, 0);
}

/* A worker's runs: what the scheduler assigned it, and what it reports. */
static json_t *worker_runs_json(const fleet_worker_t *w)
{
    json_t *runs = json_array();
    for (size_t j = 0; j < w->n_assigned; j++) {
        const fleet_run_load_t *a = &w->assigned[j];
        const fleet_run_load_t *l = NULL;
        for (size_t k = 0; k < w->n_loads && l == NULL; k++)
            l = w->loads[k].run == a->run ? &w->loads[k] : NULL;
        json_array_append_new(runs, json_pack("{s:I,s:i,s:i,s:i}", "run", (json_int_t)a->run,
                                              "users", (int)a->users, "running_users",
                                              l ? (int)l->users : 0, "connections",
                                              l ? (int)l->connections : 0));
    }
    for (size_t k = 0; k < w->n_loads; k++) {
        const fleet_run_load_t *l = &w->loads[k];
        bool assigned = false;
        for (size_t j = 0; j < w->n_assigned && !assigned; j++)
            assigned = w->assigned[j].run == l->run;
        if (!assigned)
            json_array_append_new(runs, json_pack("{s:I,s:i,s:i,s:i}", "run", (json_int_t)l->run,
                                                  "users", (int)l->users, "running_users",
                                                  (int)l->users, "connections",
                                                  (int)l->connections));
    }
    return runs;
}

json_t *fleet_workers_json(fleet_t *f)
{
    json_t *list = json_array();
    uint64_t now = lc_mono_ms();
    for (size_t i = 0; i < f->n_workers; i++) {
        const fleet_worker_t *w = f->workers[i];
        json_t *row = json_pack(
            "{s:s,s:s,s:s,s:i,s:i,s:i,s:b,s:f,s:I,s:b,s:I,s:o}", "id", w->id, "name", w->name,
            "address", w->address, "threads", (int)w->threads, "capacity", (int)w->sat.capacity,
            "effective_capacity", (int)w->sat.effective_capacity, "saturated", w->sat.saturated,
            "cpu_percent", w->cpu_percent, "rss_bytes", (json_int_t)w->rss_bytes, "connected",
            w->conn != NULL, "last_seen_ms_ago", (json_int_t)(now - w->last_seen_ms), "runs",
            worker_runs_json(w));
        json_array_append_new(list, row);
    }
    return list;
}

