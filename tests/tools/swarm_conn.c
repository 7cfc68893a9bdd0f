/* swarm_conn.c — lc_swarm's protocol side: each synthetic worker's connection (connect,
 * Challenge, Hello, Welcome, Redirect, reconnect with backoff), its heartbeats and stats
 * timer, the Assign, Stop and StatsAck it answers, and the replay of its outbox. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "lc_addr.h"
#include "lc_clock.h"
#include "lc_frame.h"
#include "lc_join.h"
#include "lc_protocol.h"
#include "swarm.h"

#define BACKOFF_MAX_MS 2000u
#define NEXT_MASTER_MS 20u
#define SAFETY_MARGIN_MS 30000u /* as loadworker: no Stop this long past the run's duration */

static void conn_close(worker_t *w, const char *why);

static bool loopback(const struct sockaddr_in *sa)
{
    return (ntohl(sa->sin_addr.s_addr) >> 24) == 127;
}

/* "host:port" → a loopback IPv4 address; false otherwise. */
bool swarm_parse_addr(const char *text, struct sockaddr_in *out)
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

void swarm_enqueue(worker_t *w)
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
    swarm_enqueue(w);
    swarm_pump(w->s);
}

/* Writes a copy of data (the outbox keeps the original). */
static void on_write(uv_write_t *req, int status)
{
    free(req->data);
    free(req);
    (void)status; /* a failed write shows up as a read error */
}

int swarm_write_copy(worker_t *w, const uint8_t *data, size_t len)
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
    int rv = swarm_write_copy(w, frame, len);
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
        swarm_cut_batch(w, r, w->s->locally_stopped || overdue);
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
        swarm_write_copy(w, e->frame, e->len);
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
    swarm_pump(s);
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
    const plan_t *p = swarm_plan_get(s, a->run, json, strlen(json));
    run_stat_t *st = swarm_run_stat(s, a->run);
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
        swarm_cut_batch(w, r, true);
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
        swarm_lat_push(s, (uv_hrtime() - e->sent_ns) / 1000);
    s->acked++;
    run_stat_t *st = swarm_run_stat(s, e->run);
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
        if (env->redirect->leader != NULL &&
            swarm_parse_addr(env->redirect->leader, &w->redirect)) {
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

void swarm_pump(swarm_t *s)
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
        swarm_enqueue(w);
    else
        uv_timer_start(&w->retry, on_retry, ms, 0);
    swarm_pump(s);
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
