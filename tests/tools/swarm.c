/* swarm.c — lc_swarm: N synthetic workers on one libuv loop, for measuring a
 * master with many workers (issue 13, `make -f Makefile.ci bench-master`).
 *
 * Each worker speaks the real protocol (proto/cluster.proto) on its own
 * connection: Hello with the join proof bound to its id, a Heartbeat every
 * heartbeat_ms from Welcome, and for every run the leader Assigned it a
 * StatsBatch every stats_interval_ms with the plan's tasks (names and
 * methods from the Assign's scenario), synthetic counts, ~1 % failures and
 * a sparse histogram (lc_hist_record, lc_hist_encode); a final batch on
 * Stop. It runs no HTTP load. Batches stay in a per-connection outbox until
 * their StatsAck and are replayed after a reconnect; Redirect is followed,
 * (a run no Stop came for ends by itself 30 s past its duration, as in
 * loadworker),
 * other closes reconnect with backoff. Handshakes in flight are bounded
 * (--max-handshakes) so that the master's cap on connections without a
 * Hello (256) is not the thing measured.
 *
 * Counts: per endpoint and second, users x --rps-per-user requests (each
 * user hits every task at that rate). Seqs start at a random 32-bit epoch
 * << 32 per worker and grow over all its runs, so they never repeat for
 * (worker, run), even when a run is assigned again after its final batch.
 *
 * At the end one JSON line on stdout: workers joined, batches sent, acked,
 * replayed, requests reported per run, and the p50/p99/max of the time from
 * (last) sending a batch to its ack. Progress goes to stderr. Loopback only;
 * it exits once every run it was given is over and acknowledged, or at
 * --duration (final batches for what still runs) + 10 s at the latest;
 * SIGINT/SIGTERM print the summary so far. */
#include <arpa/inet.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "lc_addr.h"
#include "lc_clock.h"
#include "lc_frame.h"
#include "lc_hist.h"
#include "lc_join.h"
#include "lc_protocol.h"
#include "lc_scenario.h"

#define MAX_ADDRS 16
#define MAX_RUNS 8            /* runs one synthetic worker holds at once */
#define MAX_PLANS 64          /* scenarios kept parsed, one per run */
#define MAX_RUN_STATS 64      /* runs counted in the summary */
#define HIST_SAMPLES_MAX 512  /* values recorded per endpoint and batch; more are weighted */
#define LAT_TABLE 4096        /* precomputed latencies (lognormal), power of two */
#define READ_BUF (64u << 10)
#define BACKOFF_MIN_MS 100u
#define BACKOFF_MAX_MS 2000u
#define NEXT_MASTER_MS 20u
#define GRACE_MS 10000u       /* after --duration: final batches and their acks */
#define SAFETY_MARGIN_MS 30000u /* as loadworker: no Stop this long past the run's duration */

static const char usage[] =
    "usage: lc_swarm --connect HOST:PORT[,HOST:PORT...] [options]\n"
    "  --workers N          synthetic workers, one connection each (100)\n"
    "  --endpoints E        tasks expected per run (20); the plan's tasks are reported\n"
    "  --secret-file F      the cluster's join secret\n"
    "  --capacity C         users each worker offers (100)\n"
    "  --rps-per-user R     requests per second per user and endpoint (10)\n"
    "  --duration S         seconds until every run still held is stopped locally (60);\n"
    "                       exits then +10 s at the latest\n"
    "  --id-prefix P        worker ids are P0001... (swarm-)\n"
    "  --max-handshakes H   connections between connect and Welcome at once (64)\n"
    "  --seed N             deterministic statistics (default: random)\n"
    "Addresses must be IPv4 loopback (127.0.0.0/8).\n";

typedef struct opts_s {
    char *addr_text[MAX_ADDRS];
    struct sockaddr_in addrs[MAX_ADDRS];
    size_t n_addrs;
    unsigned workers, endpoints, capacity, max_handshakes;
    double rps_per_user;
    unsigned duration_s;
    const char *id_prefix;
    const char *secret_file;
    uint64_t seed;
} opts_t;

/* A run's scenario, parsed once for every worker that is assigned it. */
typedef struct plan_s {
    uint64_t run;
    lc_scenario_t sc;
} plan_t;

/* What the swarm reported for one run, over all its workers. */
typedef struct run_stat_s {
    uint64_t run;
    uint64_t requests, failures, batches;       /* in batches cut */
    uint64_t acked_requests, acked_batches;     /* in batches acknowledged */
    unsigned workers_assigned, finals, finals_acked;
} run_stat_t;

/* One StatsBatch kept until its ack. */
typedef struct entry_s {
    struct entry_s *prev, *next;
    uint64_t run, seq, requests;
    bool final;
    bool sent;        /* written at least once */
    uint64_t sent_ns; /* monotonic, of the last write */
    uint8_t *frame;
    size_t len;
} entry_t;

typedef struct wrun_s {
    bool used;
    uint64_t id, generation;
    uint32_t users;
    const plan_t *plan;
    run_stat_t *stat;
    uint64_t assigned_ms;    /* monotonic */
    uint64_t elapsed_ms;     /* run time at the Assign */
    uint64_t last_cut_ms;
    bool stopped;            /* final batch cut */
} wrun_t;

typedef enum { W_IDLE, W_QUEUED, W_CONNECTING, W_HELLO, W_READY, W_CLOSING } wstate_t;

typedef struct swarm_s swarm_t;

typedef struct worker_s {
    swarm_t *s;
    unsigned index;
    char id[64];
    wstate_t state;
    uv_tcp_t tcp;
    uv_connect_t creq;
    uv_timer_t retry, heartbeat, stats;
    bool stats_running;
    bool handshaking;        /* counted in swarm.handshaking */
    bool challenged;
    lc_frame_reader_t reader;
    size_t cur;              /* index into opts.addrs */
    struct sockaddr_in redirect;
    bool have_redirect;
    unsigned redirects_in_row;
    uint32_t backoff_ms;
    bool ever_joined;
    uint32_t heartbeat_ms, stats_ms;
    uint64_t epoch;
    uint64_t seq;            /* last seq of any run: a run assigned again after its
                              * final batch (a new leader) goes on, never repeats */
    uint64_t rng;
    wrun_t runs[MAX_RUNS];
    entry_t *ob_head, *ob_tail;
    size_t ob_len;
    struct worker_s *qnext;
} worker_t;

struct swarm_s {
    opts_t o;
    uv_loop_t *loop;
    lc_join_secret_t secret;
    worker_t *w;
    worker_t *q_head, *q_tail; /* waiting for a handshake slot */
    unsigned handshaking;
    plan_t plans[MAX_PLANS];
    size_t n_plans;
    run_stat_t stats[MAX_RUN_STATS];
    size_t n_stats;
    uint64_t start_ms, all_joined_ms;
    unsigned joined, ready;
    uint64_t connects, welcomes, redirects, join_refused, disconnects, closed_before_challenge;
    uint64_t batches_cut, batches_written, acked, replayed, acks_unmatched, assigns,
        assigns_ignored, stops, self_stopped, heartbeats, hist_buckets, hist_count, batch_bytes, frames_in;
    uint64_t active_runs, outbox_total;
    bool locally_stopped, finished;
    uint32_t *lat_us;          /* send → ack, one per ack */
    size_t n_lat, cap_lat;
    uint32_t lat_table[LAT_TABLE];
    lc_hist_t scratch;         /* zero between uses */
    uv_timer_t tick;
    uv_signal_t sigint, sigterm;
    uint64_t last_progress_ms;
    char read_buf[READ_BUF];
};

/* ---- small helpers ------------------------------------------------------- */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static uint64_t now_ms(const swarm_t *s)
{
    return uv_now(s->loop);
}

static bool loopback(const struct sockaddr_in *sa)
{
    return (ntohl(sa->sin_addr.s_addr) >> 24) == 127;
}

/* "host:port" → a loopback IPv4 address; false otherwise. */
static bool parse_addr(const char *text, struct sockaddr_in *out)
{
    lc_hostport_t hp;
    char why[160];
    if (lc_hostport_parse(text, 0, &hp, why, sizeof why) != 0)
        return false;
    const char *host = strcmp(hp.host, "localhost") == 0 ? "127.0.0.1" : hp.host;
    if (uv_ip4_addr(host, hp.port, out) != 0)
        return false;
    return loopback(out);
}

static run_stat_t *run_stat(swarm_t *s, uint64_t run)
{
    for (size_t i = 0; i < s->n_stats; i++)
        if (s->stats[i].run == run)
            return &s->stats[i];
    if (s->n_stats == MAX_RUN_STATS)
        return NULL;
    run_stat_t *st = &s->stats[s->n_stats++];
    memset(st, 0, sizeof *st);
    st->run = run;
    return st;
}

static const plan_t *plan_get(swarm_t *s, uint64_t run, const char *json, size_t len)
{
    for (size_t i = 0; i < s->n_plans; i++)
        if (s->plans[i].run == run)
            return &s->plans[i];
    if (s->n_plans == MAX_PLANS)
        return NULL;
    plan_t *p = &s->plans[s->n_plans];
    char why[512];
    if (lc_scenario_parse(json, len, &p->sc, why, sizeof why) != 0) {
        fprintf(stderr, "lc_swarm: run %" PRIu64 ": scenario does not parse: %s\n", run, why);
        return NULL;
    }
    p->run = run;
    s->n_plans++;
    if (p->sc.n_tasks != s->o.endpoints)
        fprintf(stderr, "lc_swarm: run %" PRIu64 " has %zu tasks (--endpoints %u): reporting "
                "the plan's\n", run, p->sc.n_tasks, s->o.endpoints);
    return p;
}

static void lat_push(swarm_t *s, uint64_t us)
{
    if (s->n_lat == s->cap_lat) {
        size_t cap = s->cap_lat ? s->cap_lat * 2 : 65536;
        uint32_t *grown = realloc(s->lat_us, cap * sizeof *grown);
        if (grown == NULL)
            return;
        s->lat_us = grown;
        s->cap_lat = cap;
    }
    s->lat_us[s->n_lat++] = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
}

/* ---- connection ------------------------------------------------------------ */

static void pump(swarm_t *s);
static void conn_close(worker_t *w, const char *why);
static void cut_batch(worker_t *w, wrun_t *r, bool final);

static void enqueue(worker_t *w)
{
    swarm_t *s = w->s;
    if (s->finished || w->state != W_IDLE)
        return;
    w->state = W_QUEUED;
    w->qnext = NULL;
    if (s->q_tail != NULL)
        s->q_tail->qnext = w;
    else
        s->q_head = w;
    s->q_tail = w;
}

static void on_retry(uv_timer_t *t)
{
    worker_t *w = t->data;
    enqueue(w);
    pump(w->s);
}

/* Writes a copy of data (the outbox keeps the original). */
static void on_write(uv_write_t *req, int status)
{
    free(req->data);
    free(req);
    (void)status; /* a failed write shows up as a read error */
}

static int write_copy(worker_t *w, const uint8_t *data, size_t len)
{
    uv_write_t *req = malloc(sizeof *req);
    uint8_t *copy = malloc(len);
    if (req == NULL || copy == NULL) {
        free(req);
        free(copy);
        return -1;
    }
    memcpy(copy, data, len);
    req->data = copy;
    uv_buf_t buf = uv_buf_init((char *)copy, (unsigned)len);
    if (uv_write(req, (uv_stream_t *)&w->tcp, &buf, 1, on_write) != 0) {
        free(copy);
        free(req);
        conn_close(w, "write failed");
        return -1;
    }
    return 0;
}

static int send_env(worker_t *w, Lc__Envelope *env)
{
    uint8_t *frame;
    size_t len;
    if (lc_frame_encode(env, &frame, &len) != 0)
        return -1;
    int rv = write_copy(w, frame, len);
    free(frame);
    return rv;
}

/* The runs this worker holds and has not stopped, as RunLoads. */
static size_t run_loads(worker_t *w, Lc__RunLoad *loads, Lc__RunLoad **ptrs)
{
    size_t n = 0;
    for (size_t i = 0; i < MAX_RUNS; i++) {
        const wrun_t *r = &w->runs[i];
        if (!r->used || r->stopped)
            continue;
        lc__run_load__init(&loads[n]);
        loads[n].run = r->id;
        loads[n].generation = r->generation;
        loads[n].users = r->users;
        loads[n].connections = r->users;
        ptrs[n] = &loads[n];
        n++;
    }
    return n;
}

static void send_hello(worker_t *w, const uint8_t *nonce, size_t nonce_len)
{
    swarm_t *s = w->s;
    Lc__RunLoad loads[MAX_RUNS], *ptrs[MAX_RUNS];
    uint8_t proof[LC_JOIN_PROOF_LEN];
    Lc__Hello hello = LC__HELLO__INIT;
    hello.protocol_version = LC_PROTOCOL_VERSION;
    hello.worker_id = w->id;
    hello.name = w->id;
    hello.threads = 1;
    hello.capacity = s->o.capacity;
    if (s->secret.len > 0 &&
        lc_join_proof_for(&s->secret, nonce, nonce_len, w->id, proof) == 0) {
        hello.join_proof.data = proof;
        hello.join_proof.len = sizeof proof;
    }
    hello.n_running = run_loads(w, loads, ptrs);
    hello.running = ptrs;
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_HELLO;
    env.hello = &hello;
    send_env(w, &env);
}

static void on_heartbeat(uv_timer_t *t)
{
    worker_t *w = t->data;
    if (w->state != W_READY)
        return;
    Lc__RunLoad loads[MAX_RUNS], *ptrs[MAX_RUNS];
    Lc__Heartbeat hb = LC__HEARTBEAT__INIT;
    hb.time_ms = lc_wall_ms();
    hb.cpu_percent = 4.0 + (double)(rng_next(&w->rng) % 200) / 100.0; /* ~5 % */
    hb.rss_bytes = 48u << 20;
    hb.n_runs = run_loads(w, loads, ptrs);
    hb.runs = ptrs;
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_HEARTBEAT;
    env.heartbeat = &hb;
    if (send_env(w, &env) == 0)
        w->s->heartbeats++;
}

static void on_stats_timer(uv_timer_t *t)
{
    worker_t *w = t->data;
    uint64_t now = now_ms(w->s);
    for (size_t i = 0; i < MAX_RUNS; i++) {
        wrun_t *r = &w->runs[i];
        if (!r->used || r->stopped)
            continue;
        /* Like loadworker's safety net: a run no Stop came for ends by itself. */
        bool overdue = r->elapsed_ms + (now - r->assigned_ms) >=
                       r->plan->sc.duration_ms + SAFETY_MARGIN_MS;
        w->s->self_stopped += overdue;
        cut_batch(w, r, w->s->locally_stopped || overdue);
    }
}

/* Sends (again) every batch of the outbox: after Welcome. */
static void outbox_send_all(worker_t *w)
{
    uint64_t now = uv_hrtime();
    for (entry_t *e = w->ob_head; e != NULL && w->state == W_READY; e = e->next) {
        if (e->sent)
            w->s->replayed++;
        e->sent = true;
        e->sent_ns = now;
        w->s->batches_written++;
        write_copy(w, e->frame, e->len);
    }
}

static void handshake_done(worker_t *w)
{
    if (w->handshaking) {
        w->handshaking = false;
        w->s->handshaking--;
    }
}

static void on_welcome(worker_t *w, const Lc__Welcome *wel)
{
    swarm_t *s = w->s;
    handshake_done(w);
    w->state = W_READY;
    w->backoff_ms = BACKOFF_MIN_MS;
    w->redirects_in_row = 0;
    s->welcomes++;
    s->ready++;
    if (!w->ever_joined) {
        w->ever_joined = true;
        if (++s->joined == s->o.workers)
            s->all_joined_ms = now_ms(s);
    }
    w->heartbeat_ms = wel->heartbeat_ms ? wel->heartbeat_ms : 1000;
    uint32_t stats_ms = wel->stats_interval_ms ? wel->stats_interval_ms : 1000;
    uv_timer_start(&w->heartbeat, on_heartbeat, w->heartbeat_ms, w->heartbeat_ms);
    if (!w->stats_running || stats_ms != w->stats_ms) {
        w->stats_ms = stats_ms;
        w->stats_running = true;
        uv_timer_start(&w->stats, on_stats_timer, stats_ms, stats_ms);
    }
    outbox_send_all(w);
    pump(s);
}

static wrun_t *find_run(worker_t *w, uint64_t run)
{
    for (size_t i = 0; i < MAX_RUNS; i++)
        if (w->runs[i].used && w->runs[i].id == run)
            return &w->runs[i];
    return NULL;
}

static void send_refused(worker_t *w, const Lc__Assign *a, const char *why)
{
    Lc__AssignRefused refused = LC__ASSIGN_REFUSED__INIT;
    refused.run = a->run;
    refused.generation = a->generation;
    refused.reason = (char *)why;
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_ASSIGN_REFUSED;
    env.assign_refused = &refused;
    send_env(w, &env);
}

static void on_assign(worker_t *w, const Lc__Assign *a)
{
    swarm_t *s = w->s;
    s->assigns++;
    wrun_t *r = find_run(w, a->run);
    if (r != NULL) {
        if (r->stopped || a->generation <= r->generation) {
            s->assigns_ignored++;
            return;
        }
        r->generation = a->generation;
        r->users = a->users;
        return;
    }
    if (s->locally_stopped) {
        send_refused(w, a, "lc_swarm is past its --duration");
        return;
    }
    const char *json = a->scenario_json ? a->scenario_json : "";
    const plan_t *p = plan_get(s, a->run, json, strlen(json));
    run_stat_t *st = run_stat(s, a->run);
    for (size_t i = 0; i < MAX_RUNS && r == NULL; i++)
        r = w->runs[i].used ? NULL : &w->runs[i];
    if (p == NULL || st == NULL || r == NULL) {
        send_refused(w, a, p == NULL ? "scenario does not parse" : "lc_swarm: too many runs");
        return;
    }
    memset(r, 0, sizeof *r);
    r->used = true;
    r->id = a->run;
    r->generation = a->generation;
    r->users = a->users;
    r->plan = p;
    r->stat = st;
    r->assigned_ms = r->last_cut_ms = now_ms(s);
    r->elapsed_ms = a->elapsed_ms;
    st->workers_assigned++;
    s->active_runs++;
}

static void on_stop(worker_t *w, const Lc__Stop *st)
{
    w->s->stops++;
    wrun_t *r = find_run(w, st->run);
    if (r != NULL && !r->stopped)
        cut_batch(w, r, true);
}

static void on_ack(worker_t *w, const Lc__StatsAck *ack)
{
    swarm_t *s = w->s;
    entry_t *e = w->ob_head;
    while (e != NULL && !(e->run == ack->run && e->seq == ack->seq))
        e = e->next;
    if (e == NULL) {
        s->acks_unmatched++;
        return;
    }
    if (e->sent)
        lat_push(s, (uv_hrtime() - e->sent_ns) / 1000);
    s->acked++;
    run_stat_t *st = run_stat(s, e->run);
    if (st != NULL) {
        st->acked_requests += e->requests;
        st->acked_batches++;
    }
    if (e->final) {
        wrun_t *r = find_run(w, e->run);
        if (st != NULL)
            st->finals_acked++;
        if (r != NULL) {
            r->used = false;
            s->active_runs--;
        }
    }
    if (e->prev != NULL)
        e->prev->next = e->next;
    else
        w->ob_head = e->next;
    if (e->next != NULL)
        e->next->prev = e->prev;
    else
        w->ob_tail = e->prev;
    w->ob_len--;
    s->outbox_total--;
    free(e->frame);
    free(e);
}

static int on_frame(void *arg, const uint8_t *body, size_t len)
{
    worker_t *w = arg;
    swarm_t *s = w->s;
    Lc__Envelope *env;
    char why[160];
    s->frames_in++;
    if (lc_frame_decode(body, len, &env, why, sizeof why) != 0) {
        conn_close(w, why);
        return 1;
    }
    int stop = 0;
    switch (env->msg_case) {
    case LC__ENVELOPE__MSG_CHALLENGE:
        w->challenged = true;
        w->state = W_HELLO;
        send_hello(w, env->challenge->nonce.data, env->challenge->nonce.len);
        break;
    case LC__ENVELOPE__MSG_WELCOME:
        on_welcome(w, env->welcome);
        break;
    case LC__ENVELOPE__MSG_REDIRECT:
        s->redirects++;
        if (env->redirect->leader != NULL && parse_addr(env->redirect->leader, &w->redirect)) {
            w->have_redirect = true;
            w->redirects_in_row++;
        } else {
            fprintf(stderr, "lc_swarm: %s: redirect to a non-loopback or bad address \"%s\"\n",
                    w->id, env->redirect->leader ? env->redirect->leader : "");
        }
        conn_close(w, NULL);
        stop = 1;
        break;
    case LC__ENVELOPE__MSG_JOIN_REFUSED:
        if (s->join_refused++ < 5)
            fprintf(stderr, "lc_swarm: %s: join refused: %s\n", w->id,
                    env->join_refused->reason);
        conn_close(w, NULL);
        stop = 1;
        break;
    case LC__ENVELOPE__MSG_ASSIGN:
        on_assign(w, env->assign);
        break;
    case LC__ENVELOPE__MSG_STOP:
        on_stop(w, env->stop);
        break;
    case LC__ENVELOPE__MSG_STATS_ACK:
        on_ack(w, env->stats_ack);
        break;
    default:
        conn_close(w, "unexpected message from the master");
        stop = 1;
        break;
    }
    lc__envelope__free_unpacked(env, NULL);
    return stop;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    worker_t *w = h->data;
    buf->base = w->s->read_buf;
    buf->len = READ_BUF;
    (void)suggested;
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
    worker_t *w = st->data;
    if (nread == 0 || w->state == W_CLOSING)
        return;
    if (nread < 0) {
        if (!w->challenged)
            w->s->closed_before_challenge++;
        conn_close(w, nread == UV_EOF ? (w->state == W_READY ? "master closed the connection"
                                                             : NULL)
                                      : uv_strerror((int)nread));
        return;
    }
    int rv = lc_frame_reader_feed(&w->reader, (const uint8_t *)buf->base, (size_t)nread,
                                  on_frame, w);
    if (rv != 0 && w->state != W_CLOSING)
        conn_close(w, w->reader.errmsg[0] ? w->reader.errmsg : "frame error");
}

static void on_connect(uv_connect_t *req, int status)
{
    worker_t *w = req->data;
    if (w->state != W_CONNECTING)
        return; /* closed meanwhile (UV_ECANCELED) */
    if (status != 0) {
        conn_close(w, NULL);
        return;
    }
    uv_tcp_nodelay(&w->tcp, 1);
    w->state = W_HELLO; /* waiting for the Challenge, then Welcome */
    uv_read_start((uv_stream_t *)&w->tcp, on_alloc, on_read);
}

static void start_connect(worker_t *w)
{
    swarm_t *s = w->s;
    const struct sockaddr_in *addr = w->have_redirect ? &w->redirect : &s->o.addrs[w->cur];
    w->have_redirect = false;
    w->challenged = false;
    w->state = W_CONNECTING;
    w->handshaking = true;
    s->handshaking++;
    s->connects++;
    lc_frame_reader_init(&w->reader, LC_FRAME_MAX);
    uv_tcp_init(s->loop, &w->tcp);
    w->tcp.data = w;
    w->creq.data = w;
    if (uv_tcp_connect(&w->creq, &w->tcp, (const struct sockaddr *)addr, on_connect) != 0)
        conn_close(w, NULL);
}

static void pump(swarm_t *s)
{
    while (!s->finished && s->q_head != NULL && s->handshaking < s->o.max_handshakes) {
        worker_t *w = s->q_head;
        s->q_head = w->qnext;
        if (s->q_head == NULL)
            s->q_tail = NULL;
        w->state = W_IDLE;
        start_connect(w);
    }
}

static void on_closed(uv_handle_t *h)
{
    worker_t *w = h->data;
    swarm_t *s = w->s;
    lc_frame_reader_close(&w->reader);
    w->state = W_IDLE;
    if (s->finished)
        return;
    uint32_t ms;
    if (w->have_redirect && w->redirects_in_row <= 3) {
        ms = 0;
    } else {
        w->have_redirect = false;
        w->cur = (w->cur + 1) % s->o.n_addrs;
        if (w->cur != 0) {
            ms = NEXT_MASTER_MS;
        } else {
            uint32_t b = w->backoff_ms;
            ms = (uint32_t)(b * 3 / 4 + rng_next(&w->rng) % (b / 2 + 1));
            w->backoff_ms = b * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : b * 2;
        }
    }
    if (ms == 0)
        enqueue(w);
    else
        uv_timer_start(&w->retry, on_retry, ms, 0);
    pump(s);
}

static void conn_close(worker_t *w, const char *why)
{
    swarm_t *s = w->s;
    if (w->state != W_CONNECTING && w->state != W_HELLO && w->state != W_READY)
        return;
    static unsigned logged;
    if (why != NULL && logged++ < 30)
        fprintf(stderr, "lc_swarm: %s: closing: %s\n", w->id, why);
    if (w->state == W_READY) {
        s->disconnects++;
        s->ready--;
    }
    handshake_done(w);
    uv_timer_stop(&w->heartbeat);
    w->state = W_CLOSING;
    uv_read_stop((uv_stream_t *)&w->tcp);
    uv_close((uv_handle_t *)&w->tcp, on_closed);
}

/* ---- statistics ------------------------------------------------------------ */

/* Adds weight values of value_us to the scratch histogram, remembering the
 * bucket so that only touched buckets are cleared afterwards. */
static void hist_add(lc_hist_t *h, uint64_t v, uint64_t weight)
{
    if (weight == 1) {
        lc_hist_record(h, v);
        return;
    }
    if (v < LC_HIST_MIN_US)
        v = LC_HIST_MIN_US;
    if (v > LC_HIST_MAX_US)
        v = LC_HIST_MAX_US;
    h->counts[lc_hist_bucket_of(v)] += weight;
    h->total += weight;
    h->sum += v * weight;
    if (v < h->min)
        h->min = v;
    if (v > h->max)
        h->max = v;
}

/* Fills the scratch histogram with count synthetic latencies for endpoint
 * ep (each endpoint has its own median), encodes it, clears it. */
static int endpoint_hist(worker_t *w, size_t ep, uint64_t count, uint8_t **out, size_t *len)
{
    swarm_t *s = w->s;
    lc_hist_t *h = &s->scratch;
    uint32_t touched[HIST_SAMPLES_MAX];
    uint64_t n = count < HIST_SAMPLES_MAX ? count : HIST_SAMPLES_MAX;
    uint64_t base = n ? count / n : 0, rem = n ? count % n : 0;
    double scale = 0.5 + 0.25 * (double)(ep % 7);
    for (uint64_t k = 0; k < n; k++) {
        uint64_t v = (uint64_t)(s->lat_table[rng_next(&w->rng) & (LAT_TABLE - 1)] * scale);
        if (v < LC_HIST_MIN_US)
            v = LC_HIST_MIN_US;
        touched[k] = lc_hist_bucket_of(v);
        hist_add(h, v, base + (k < rem));
    }
    int rv = lc_hist_encode(h, out, len);
    s->hist_count++;
    for (uint64_t k = 0; k < n; k++) {
        if (h->counts[touched[k]] != 0)
            s->hist_buckets++;
        h->counts[touched[k]] = 0;
    }
    h->total = h->sum = h->max = 0;
    h->min = UINT64_MAX;
    return rv;
}

/* Cuts one StatsBatch of r for the time since its last cut into the outbox,
 * and writes it when connected. */
static void cut_batch(worker_t *w, wrun_t *r, bool final)
{
    swarm_t *s = w->s;
    const lc_scenario_t *sc = &r->plan->sc;
    uint64_t now = now_ms(s);
    uint64_t dt = now - r->last_cut_ms;
    r->last_cut_ms = now;
    static Lc__EndpointStats eps[LC_SCENARIO_MAX_TASKS];
    static Lc__EndpointStats *ep_ptrs[LC_SCENARIO_MAX_TASKS];
    static Lc__ErrorCount errs[2 * LC_SCENARIO_MAX_TASKS];
    static Lc__ErrorCount *err_ptrs[2 * LC_SCENARIO_MAX_TASKS];
    Lc__StatsBatch b = LC__STATS_BATCH__INIT;
    b.run = r->id;
    b.worker_id = w->id;
    b.seq = w->seq + 1;
    uint64_t run_ms = r->elapsed_ms + (now - r->assigned_ms);
    b.interval = (uint32_t)((run_ms + 999) / 1000);
    b.final = final;
    b.users = final ? 0 : r->users;
    b.endpoints = ep_ptrs;
    b.errors = err_ptrs;
    uint64_t per_ep = (uint64_t)llround((double)r->users * s->o.rps_per_user * (double)dt / 1000.0);
    uint64_t requests = 0, failures = 0;
    int rv = 0;
    for (size_t i = 0; i < sc->n_tasks && rv == 0; i++) {
        /* ±10 % per endpoint and batch, so the counters are not all alike */
        uint64_t count = per_ep ? per_ep * 9 / 10 + rng_next(&w->rng) % (per_ep / 5 + 1) : 0;
        if (count == 0)
            continue;
        Lc__EndpointStats *e = &eps[b.n_endpoints];
        lc__endpoint_stats__init(e);
        e->name = sc->tasks[i].name;
        e->method = sc->tasks[i].method;
        e->count = count;
        e->failures = (count + rng_next(&w->rng) % 100) / 100; /* ~1 % */
        e->bytes = count * 512;
        size_t len = 0;
        rv = endpoint_hist(w, i, count, &e->hist.data, &len);
        e->hist.len = len;
        ep_ptrs[b.n_endpoints++] = e;
        requests += count;
        failures += e->failures;
        uint64_t timeouts = e->failures / 5, statuses = e->failures - timeouts;
        for (int k = 0; k < 2; k++) {
            uint64_t n = k ? timeouts : statuses;
            if (n == 0)
                continue;
            Lc__ErrorCount *ec = &errs[b.n_errors];
            lc__error_count__init(ec);
            ec->endpoint = sc->tasks[i].name;
            ec->kind = (char *)lc_protocol_error_kinds[k ? 3 : 6]; /* "timeout", "status" */
            ec->count = n;
            err_ptrs[b.n_errors++] = ec;
        }
    }
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_STATS;
    env.stats = &b;
    entry_t *ent = rv == 0 ? calloc(1, sizeof *ent) : NULL;
    if (ent != NULL && lc_frame_encode(&env, &ent->frame, &ent->len) != 0) {
        free(ent);
        ent = NULL;
    }
    for (size_t i = 0; i < b.n_endpoints; i++)
        free(eps[i].hist.data);
    if (ent == NULL) {
        fprintf(stderr, "lc_swarm: %s: cannot build a batch (out of memory)\n", w->id);
        return; /* the counts of this interval are simply not reported */
    }
    w->seq++;
    if (final)
        r->stopped = true;
    ent->run = r->id;
    ent->seq = b.seq;
    ent->requests = requests;
    ent->final = final;
    ent->prev = w->ob_tail;
    if (w->ob_tail != NULL)
        w->ob_tail->next = ent;
    else
        w->ob_head = ent;
    w->ob_tail = ent;
    w->ob_len++;
    s->outbox_total++;
    s->batches_cut++;
    s->batch_bytes += ent->len;
    r->stat->requests += requests;
    r->stat->failures += failures;
    r->stat->batches++;
    if (final)
        r->stat->finals++;
    if (w->state == W_READY) {
        ent->sent = true;
        ent->sent_ns = uv_hrtime();
        s->batches_written++;
        write_copy(w, ent->frame, ent->len);
    }
}

/* ---- the whole swarm ------------------------------------------------------- */

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static double pct_ms(const uint32_t *sorted, size_t n, double p)
{
    if (n == 0)
        return 0;
    size_t i = (size_t)ceil(p / 100.0 * (double)n);
    i = i == 0 ? 0 : i - 1;
    return sorted[i < n ? i : n - 1] / 1000.0;
}

static void print_summary(swarm_t *s)
{
    qsort(s->lat_us, s->n_lat, sizeof *s->lat_us, cmp_u32);
    double elapsed = (double)(now_ms(s) - s->start_ms) / 1000.0;
    printf("{\"workers\":%u,\"joined\":%u,\"connected_at_end\":%u,\"join_s\":",
           s->o.workers, s->joined, s->ready);
    if (s->all_joined_ms)
        printf("%.2f", (double)(s->all_joined_ms - s->start_ms) / 1000.0);
    else
        printf("null");
    printf(",\"elapsed_s\":%.2f,\"connects\":%" PRIu64 ",\"welcomes\":%" PRIu64
           ",\"redirects\":%" PRIu64 ",\"join_refused\":%" PRIu64 ",\"disconnects\":%" PRIu64
           ",\"closed_before_challenge\":%" PRIu64 ",\"assigns\":%" PRIu64 ",\"stops\":%" PRIu64
           ",\"self_stopped\":%" PRIu64 ",\"heartbeats\":%" PRIu64 ",\"batches_sent\":%" PRIu64
           ",\"batches_written\":%" PRIu64
           ",\"acked\":%" PRIu64 ",\"replayed\":%" PRIu64 ",\"acks_unmatched\":%" PRIu64
           ",\"unacked_at_exit\":%" PRIu64 ",\"avg_batch_bytes\":%.0f,\"avg_hist_buckets\":%.1f",
           elapsed, s->connects, s->welcomes, s->redirects, s->join_refused, s->disconnects,
           s->closed_before_challenge, s->assigns, s->stops, s->self_stopped, s->heartbeats,
           s->batches_cut, s->batches_written, s->acked, s->replayed, s->acks_unmatched, s->outbox_total,
           s->batches_cut ? (double)s->batch_bytes / (double)s->batches_cut : 0.0,
           s->hist_count ? (double)s->hist_buckets / (double)s->hist_count : 0.0);
    printf(",\"ack_ms\":{\"n\":%zu,\"p50\":%.1f,\"p99\":%.1f,\"max\":%.1f}", s->n_lat,
           pct_ms(s->lat_us, s->n_lat, 50), pct_ms(s->lat_us, s->n_lat, 99),
           s->n_lat ? s->lat_us[s->n_lat - 1] / 1000.0 : 0.0);
    printf(",\"runs\":{");
    for (size_t i = 0; i < s->n_stats; i++) {
        const run_stat_t *st = &s->stats[i];
        printf("%s\"%" PRIu64 "\":{\"requests\":%" PRIu64 ",\"failures\":%" PRIu64
               ",\"batches\":%" PRIu64 ",\"acked_requests\":%" PRIu64 ",\"acked_batches\":%" PRIu64
               ",\"assignments\":%u,\"finals\":%u,\"finals_acked\":%u}",
               i ? "," : "", st->run, st->requests, st->failures, st->batches, st->acked_requests,
               st->acked_batches, st->workers_assigned, st->finals, st->finals_acked);
    }
    printf("}}\n");
    fflush(stdout);
}

static void finish(swarm_t *s)
{
    if (s->finished)
        return;
    s->finished = true;
    print_summary(s);
    uv_stop(s->loop);
}

/* SIGINT / SIGTERM: the summary of what happened so far, then exit. */
static void on_signal(uv_signal_t *h, int signum)
{
    swarm_t *s = h->data;
    fprintf(stderr, "lc_swarm: signal %d: stopping with %" PRIu64 " batches unacknowledged\n",
            signum, s->outbox_total);
    finish(s);
}

static void on_tick(uv_timer_t *t)
{
    swarm_t *s = t->data;
    uint64_t now = now_ms(s), since = now - s->start_ms;
    if (!s->locally_stopped && since >= (uint64_t)s->o.duration_s * 1000) {
        s->locally_stopped = true;
        fprintf(stderr, "lc_swarm: --duration reached: final batches for %" PRIu64 " runs held\n",
                s->active_runs);
        for (unsigned i = 0; i < s->o.workers; i++)
            for (size_t k = 0; k < MAX_RUNS; k++)
                if (s->w[i].runs[k].used && !s->w[i].runs[k].stopped)
                    cut_batch(&s->w[i], &s->w[i].runs[k], true);
    }
    if (now - s->last_progress_ms >= 5000) {
        s->last_progress_ms = now;
        fprintf(stderr, "lc_swarm: t=%.0fs joined=%u connected=%u handshaking=%u runs=%" PRIu64
                " batches=%" PRIu64 " acked=%" PRIu64 " unacked=%" PRIu64 " replayed=%" PRIu64
                " redirects=%" PRIu64 "\n", since / 1000.0, s->joined, s->ready, s->handshaking,
                s->active_runs, s->batches_cut, s->acked, s->outbox_total, s->replayed,
                s->redirects);
    }
    bool done = s->n_stats > 0 && s->active_runs == 0 && s->outbox_total == 0;
    if (done || since >= (uint64_t)s->o.duration_s * 1000 + GRACE_MS)
        finish(s);
}

static int parse_opts(int argc, char **argv, opts_t *o)
{
    static const struct option opts[] = {
        {"connect", required_argument, NULL, 'c'},     {"workers", required_argument, NULL, 'n'},
        {"endpoints", required_argument, NULL, 'e'},   {"secret-file", required_argument, NULL, 's'},
        {"capacity", required_argument, NULL, 'C'},    {"rps-per-user", required_argument, NULL, 'r'},
        {"duration", required_argument, NULL, 'd'},    {"id-prefix", required_argument, NULL, 'p'},
        {"max-handshakes", required_argument, NULL, 'H'}, {"seed", required_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},              {NULL, 0, NULL, 0}};
    *o = (opts_t){.workers = 100, .endpoints = 20, .capacity = 100, .max_handshakes = 64,
                  .rps_per_user = 10, .duration_s = 60, .id_prefix = "swarm-"};
    char *connect = NULL;
    for (int opt; (opt = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        char *end = NULL;
        unsigned long v = optarg ? strtoul(optarg, &end, 10) : 0;
        bool num_ok = optarg && end != optarg && *end == '\0';
        switch (opt) {
        case 'c': connect = optarg; break;
        case 'n': if (!num_ok || v == 0 || v > 100000) return -1; o->workers = (unsigned)v; break;
        case 'e': if (!num_ok || v == 0 || v > LC_SCENARIO_MAX_TASKS) return -1; o->endpoints = (unsigned)v; break;
        case 's': o->secret_file = optarg; break;
        case 'C': if (!num_ok || v == 0 || v > 1000000) return -1; o->capacity = (unsigned)v; break;
        case 'r': o->rps_per_user = strtod(optarg, &end);
                  if (*end != '\0' || !(o->rps_per_user >= 0) || o->rps_per_user > 1e6) return -1;
                  break;
        case 'd': if (!num_ok || v == 0 || v > 86400) return -1; o->duration_s = (unsigned)v; break;
        case 'p': if (strlen(optarg) > 40) return -1; o->id_prefix = optarg; break;
        case 'H': if (!num_ok || v == 0 || v > 10000) return -1; o->max_handshakes = (unsigned)v; break;
        case 'S': if (!num_ok) return -1; o->seed = v; break;
        default: return -1;
        }
    }
    if (connect == NULL || optind != argc)
        return -1;
    for (char *save = NULL, *tok = strtok_r(connect, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        if (o->n_addrs == MAX_ADDRS || !parse_addr(tok, &o->addrs[o->n_addrs])) {
            fprintf(stderr, "lc_swarm: %s: not an IPv4 loopback host:port\n", tok);
            return -1;
        }
        o->addr_text[o->n_addrs++] = tok;
    }
    return o->n_addrs > 0 ? 0 : -1;
}

/* Latencies (µs) of a lognormal with a 20 ms median: realistic spreads over
 * a few dozen buckets per endpoint and second. */
static void fill_lat_table(swarm_t *s, uint64_t *rng)
{
    for (size_t i = 0; i < LAT_TABLE; i++) {
        double u1 = ((double)(rng_next(rng) >> 11) + 1.0) / 9007199254740993.0;
        double u2 = (double)(rng_next(rng) >> 11) / 9007199254740992.0;
        double z = sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
        double v = 20000.0 * exp(0.35 * z);
        s->lat_table[i] = v < 200 ? 200 : v > 5e6 ? 5000000 : (uint32_t)v;
    }
}

int main(int argc, char **argv)
{
    static swarm_t sw;
    swarm_t *s = &sw;
    if (parse_opts(argc, argv, &s->o) != 0) {
        fputs(usage, stderr);
        return 2;
    }
    /* A master that closes a connection must not kill the whole swarm. */
    signal(SIGPIPE, SIG_IGN);
    char why[512];
    if (s->o.secret_file != NULL &&
        lc_join_secret_load(s->o.secret_file, &s->secret, why, sizeof why) != 0) {
        fprintf(stderr, "lc_swarm: %s\n", why);
        return 2;
    }
    uint64_t seed = s->o.seed;
    if (seed == 0 && uv_random(NULL, NULL, &seed, sizeof seed, 0, NULL) != 0)
        seed = uv_hrtime();
    seed = seed ? seed : 0x9E3779B97F4A7C15ULL;
    uint64_t rng = seed;
    fill_lat_table(s, &rng);
    lc_hist_init(&s->scratch);
    s->loop = uv_default_loop();
    s->w = calloc(s->o.workers, sizeof *s->w);
    if (s->w == NULL) {
        fprintf(stderr, "lc_swarm: out of memory\n");
        return 1;
    }
    for (unsigned i = 0; i < s->o.workers; i++) {
        worker_t *w = &s->w[i];
        w->s = s;
        w->index = i;
        snprintf(w->id, sizeof w->id, "%s%04u", s->o.id_prefix, i + 1);
        w->cur = i % s->o.n_addrs;
        w->backoff_ms = BACKOFF_MIN_MS;
        w->rng = (seed ^ (0x9E3779B97F4A7C15ULL * (i + 1))) | 1;
        /* A random 32-bit epoch per worker and process start (--seed: derived). */
        uint32_t epoch = 0;
        if (s->o.seed != 0 || uv_random(NULL, NULL, &epoch, sizeof epoch, 0, NULL) != 0)
            epoch = (uint32_t)(rng_next(&w->rng) >> 32);
        w->epoch = epoch ? epoch : 1;
        w->seq = w->epoch << 32;
        uv_timer_init(s->loop, &w->retry);
        uv_timer_init(s->loop, &w->heartbeat);
        uv_timer_init(s->loop, &w->stats);
        w->retry.data = w->heartbeat.data = w->stats.data = w;
        enqueue(w);
    }
    s->start_ms = s->last_progress_ms = now_ms(s);
    uv_timer_init(s->loop, &s->tick);
    s->tick.data = s;
    uv_timer_start(&s->tick, on_tick, 250, 250);
    uv_signal_init(s->loop, &s->sigint);
    uv_signal_init(s->loop, &s->sigterm);
    s->sigint.data = s->sigterm.data = s;
    uv_signal_start(&s->sigint, on_signal, SIGINT);
    uv_signal_start(&s->sigterm, on_signal, SIGTERM);
    fprintf(stderr, "lc_swarm: %u workers to %zu master(s), capacity %u, %.3g requests/s per "
            "user and endpoint, duration %u s, at most %u handshakes at once\n",
            s->o.workers, s->o.n_addrs, s->o.capacity, s->o.rps_per_user, s->o.duration_s,
            s->o.max_handshakes);
    pump(s);
    uv_run(s->loop, UV_RUN_DEFAULT);
    if (!s->finished)
        print_summary(s);
    /* Sockets and timers end with the process. */
    return 0;
}
