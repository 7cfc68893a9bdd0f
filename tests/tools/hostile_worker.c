/* hostile_worker.c — lc_hostile_worker, a worker impostor that plays one
 * attack on a master's worker port per invocation (issue 12) and prints one
 * line saying what the master did: "welcomed", "refused: <reason>",
 * "closed", "open", "acked", "not acked", ... Diagnostics go to stderr.
 * Every attack is bounded to a few seconds. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lc_addr.h"
#include "lc_err.h"
#include "lc_frame.h"
#include "lc_join.h"
#include "lc_protocol.h"
#include "lc_text.h"

static const char usage[] =
    "usage: lc_hostile_worker ATTACK --connect IP:PORT [--secret-file F] [--proof legacy|bound]\n"
    "                         [--capacity N] [options]\n"
    "attacks (one per invocation):\n"
    "  double-hello --id A --id2 B     join as A, send a second Hello as B, disconnect\n"
    "  stats --id A --run N --seq S [--requests K] [--failures F] [--endpoint NAME]\n"
    "        [--kind KIND] [--interval T] [--final] [--claim RUN:GEN:USERS]\n"
    "                                  send a forged StatsBatch: acked / not acked / closed\n"
    "  refuse --id A --run N [--gen G] --reason TEXT | --reason-hex HEX\n"
    "                                  send an AssignRefused\n"
    "  claim --id A --run N --gen G --users U [--hold S]\n"
    "                                  Hello claiming run N, heartbeats every second\n"
    "  heartbeat-nan --id A [--name-bytes N] [--hold S]\n"
    "                                  a non-UTF-8 name of N bytes (10240), NaN/Inf CPU\n"
    "  oversize                        a 16 MiB length prefix and 1 MiB before any Hello\n"
    "  silent --count N --hold S       N connections that send nothing\n"
    "  takeover --id A                 join as A while the worker A is connected\n"
    "  proof-for-other-id --id A --as B  the join proof made for B in a Hello as A\n";

/* ---- options -------------------------------------------------------------- */

typedef struct {
    const char *attack, *address, *secret_file, *proof, *id, *id2, *as, *endpoint, *kind;
    const char *reason, *reason_hex;
    uint64_t run, seq, requests, failures, gen, interval;
    uint32_t users, capacity, count, name_bytes;
    double hold;
    bool final, have_claim, have_gen;
    Lc__RunLoad claim;
    lc_join_secret_t secret;
} opts_t;

static opts_t o;

/* ---- time and output ------------------------------------------------------ */

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void diag(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "lc_hostile_worker %s: ", o.attack);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* A text from the master, printable: bytes outside ASCII as \xNN. */
static void print_text(const char *s)
{
    for (; s != NULL && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= ' ' && c < 0x7f)
            putchar(c);
        else
            printf("\\x%02x", c);
    }
}

/* ---- connections ---------------------------------------------------------- */

typedef struct frame_s {
    Lc__Envelope *env;
    struct frame_s *next;
} frame_t;

typedef struct {
    int fd;
    lc_frame_reader_t reader;
    frame_t *head, *tail;
    bool eof; /* closed by the master (or garbage from it) */
    uint8_t nonce[64];
    size_t nonce_len;
} conn_t;

typedef enum { GOT_FRAME, GOT_TIMEOUT, GOT_CLOSED } got_t;

static int dial(const char *address)
{
    lc_hostport_t hp;
    char why[128];
    struct sockaddr_in sa = {.sin_family = AF_INET};
    if (lc_hostport_parse(address, 0, &hp, why, sizeof why) != 0 ||
        inet_pton(AF_INET, hp.host, &sa.sin_addr) != 1)
        return -1;
    sa.sin_port = htons(hp.port);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static int queue_frame(void *arg, const uint8_t *body, size_t len)
{
    conn_t *c = arg;
    char why[128];
    Lc__Envelope *env = NULL;
    if (lc_frame_decode(body, len, &env, why, sizeof why) != 0) {
        diag("undecodable frame from the master: %s", why);
        return 1;
    }
    frame_t *f = calloc(1, sizeof *f);
    if (f == NULL) {
        lc__envelope__free_unpacked(env, NULL);
        return 1;
    }
    f->env = env;
    if (c->tail != NULL)
        c->tail->next = f;
    else
        c->head = f;
    c->tail = f;
    return 0;
}

static bool conn_open(conn_t *c)
{
    *c = (conn_t){.fd = dial(o.address)};
    lc_frame_reader_init(&c->reader, LC_FRAME_MAX);
    if (c->fd < 0)
        diag("cannot connect to %s: %s", o.address, strerror(errno));
    return c->fd >= 0;
}

static void conn_close(conn_t *c)
{
    while (c->head != NULL) {
        frame_t *f = c->head;
        c->head = f->next;
        lc__envelope__free_unpacked(f->env, NULL);
        free(f);
    }
    c->tail = NULL;
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    lc_frame_reader_close(&c->reader);
}

/* Reads what is there within timeout_ms (one read). */
static void conn_pump(conn_t *c, int timeout_ms)
{
    if (c->eof || c->fd < 0)
        return;
    struct pollfd p = {.fd = c->fd, .events = POLLIN};
    if (poll(&p, 1, timeout_ms < 0 ? 0 : timeout_ms) <= 0)
        return;
    uint8_t buf[16384];
    ssize_t n = read(c->fd, buf, sizeof buf);
    if (n <= 0 || lc_frame_reader_feed(&c->reader, buf, (size_t)n, queue_frame, c) != 0)
        c->eof = true;
}

/* The next envelope within timeout_ms (caller frees), or why there is none. */
static got_t conn_next(conn_t *c, int timeout_ms, Lc__Envelope **out)
{
    uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
    for (;;) {
        if (c->head != NULL) {
            frame_t *f = c->head;
            c->head = f->next;
            if (c->head == NULL)
                c->tail = NULL;
            *out = f->env;
            free(f);
            return GOT_FRAME;
        }
        if (c->eof)
            return GOT_CLOSED;
        uint64_t now = now_ms();
        if (now >= deadline)
            return GOT_TIMEOUT;
        conn_pump(c, (int)(deadline - now));
    }
}

/* Whether the master closed c within timeout_ms (frames meanwhile dropped). */
static bool conn_closed_within(conn_t *c, int timeout_ms)
{
    Lc__Envelope *env;
    uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
    for (;;) {
        uint64_t now = now_ms();
        got_t g = conn_next(c, now >= deadline ? 0 : (int)(deadline - now), &env);
        if (g == GOT_CLOSED)
            return true;
        if (g == GOT_TIMEOUT)
            return false;
        lc__envelope__free_unpacked(env, NULL);
    }
}

static bool conn_send(conn_t *c, const Lc__Envelope *env)
{
    uint8_t *frame;
    size_t len, off = 0;
    if (lc_frame_encode(env, &frame, &len) != 0) {
        diag("cannot encode a frame");
        return false;
    }
    while (off < len) {
        ssize_t n = send(c->fd, frame + off, len - off, MSG_NOSIGNAL);
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    free(frame);
    return off == len;
}

/* ---- the handshake -------------------------------------------------------- */

typedef enum { JOIN_WELCOMED, JOIN_REFUSED, JOIN_REDIRECTED, JOIN_CLOSED, JOIN_SILENT } join_t;

typedef struct {
    join_t how;
    char reason[512];
} join_result_t;

/* Waits for the master's Challenge and keeps its nonce. */
static bool wait_challenge(conn_t *c)
{
    Lc__Envelope *env = NULL;
    if (conn_next(c, 3000, &env) != GOT_FRAME)
        return false;
    bool ok = env->msg_case == LC__ENVELOPE__MSG_CHALLENGE &&
              env->challenge->nonce.len <= sizeof c->nonce;
    if (ok) {
        memcpy(c->nonce, env->challenge->nonce.data, env->challenge->nonce.len);
        c->nonce_len = env->challenge->nonce.len;
    }
    lc__envelope__free_unpacked(env, NULL);
    return ok;
}

/* The join proof for this connection's nonce, made for worker_id. */
static size_t make_proof(const conn_t *c, const char *worker_id, uint8_t *proof)
{
    if (o.secret.len == 0)
        return 0;
    int rv;
    if (strcmp(o.proof, "bound") == 0)
        rv = lc_join_proof_for(&o.secret, c->nonce, c->nonce_len, worker_id, proof);
    else
    {
        (void)worker_id; /* the legacy proof answers the nonce only */
        rv = lc_join_proof(&o.secret, c->nonce, c->nonce_len, proof);
    }
    return rv == 0 ? LC_JOIN_PROOF_LEN : 0;
}

typedef struct {
    const char *id;       /* worker_id in the Hello */
    const char *proof_id; /* the id the proof is made for (normally id) */
    const char *name;     /* NULL: id */
    size_t name_len;      /* for a name with NUL-free arbitrary bytes */
    Lc__RunLoad **running;
    size_t n_running;
} hello_t;

static bool send_hello(conn_t *c, const hello_t *h)
{
    uint8_t proof[LC_JOIN_PROOF_LEN];
    Lc__Hello hello = LC__HELLO__INIT;
    hello.protocol_version = LC_PROTOCOL_VERSION;
    hello.worker_id = (char *)h->id;
    hello.name = (char *)(h->name ? h->name : h->id);
    hello.threads = 1;
    hello.capacity = o.capacity;
    hello.join_proof.len = make_proof(c, h->proof_id ? h->proof_id : h->id, proof);
    hello.join_proof.data = proof;
    hello.running = h->running;
    hello.n_running = h->n_running;
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_HELLO;
    env.hello = &hello;
    return conn_send(c, &env);
}

/* What the master answers a Hello within timeout_ms. */
static join_result_t await_join(conn_t *c, int timeout_ms)
{
    join_result_t r = {.how = JOIN_SILENT};
    Lc__Envelope *env = NULL;
    uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
    for (;;) {
        uint64_t now = now_ms();
        got_t g = conn_next(c, now >= deadline ? 0 : (int)(deadline - now), &env);
        if (g == GOT_CLOSED)
            r.how = JOIN_CLOSED;
        if (g != GOT_FRAME)
            return r;
        switch (env->msg_case) {
        case LC__ENVELOPE__MSG_WELCOME:
            r.how = JOIN_WELCOMED;
            break;
        case LC__ENVELOPE__MSG_JOIN_REFUSED:
            r.how = JOIN_REFUSED;
            snprintf(r.reason, sizeof r.reason, "%s", env->join_refused->reason);
            break;
        case LC__ENVELOPE__MSG_REDIRECT:
            r.how = JOIN_REDIRECTED;
            snprintf(r.reason, sizeof r.reason, "%s", env->redirect->leader);
            break;
        default:
            diag("ignoring message %d while joining", (int)env->msg_case);
            lc__envelope__free_unpacked(env, NULL);
            continue;
        }
        lc__envelope__free_unpacked(env, NULL);
        return r;
    }
}

static void print_join(const join_result_t *r)
{
    switch (r->how) {
    case JOIN_WELCOMED: printf("welcomed"); break;
    case JOIN_REFUSED: printf("refused: "); print_text(r->reason); break;
    case JOIN_REDIRECTED: printf("redirected: "); print_text(r->reason); break;
    case JOIN_CLOSED: printf("closed"); break;
    case JOIN_SILENT: printf("open"); break; /* no answer, connection still open */
    }
}

/* Dials, answers the challenge and says Hello; the master's answer in *r. */
static bool join(conn_t *c, const hello_t *h, join_result_t *r)
{
    *r = (join_result_t){.how = JOIN_CLOSED};
    if (!conn_open(c))
        return false;
    if (!wait_challenge(c)) {
        diag("no Challenge from the master");
        return false;
    }
    if (!send_hello(c, h))
        return false;
    *r = await_join(c, 3000);
    return r->how == JOIN_WELCOMED;
}

/* Joins with the plain Hello of --id (and --claim); prints the answer and
 * returns false unless welcomed. */
static bool join_plain(conn_t *c)
{
    Lc__RunLoad *claims[1] = {&o.claim};
    hello_t h = {.id = o.id, .running = claims, .n_running = o.have_claim ? 1 : 0};
    join_result_t r;
    if (join(c, &h, &r))
        return true;
    print_join(&r);
    putchar('\n');
    return false;
}

static bool send_heartbeat(conn_t *c, double cpu, Lc__RunLoad **runs, size_t n_runs)
{
    Lc__Heartbeat hb = LC__HEARTBEAT__INIT;
    hb.time_ms = (uint64_t)time(NULL) * 1000u;
    hb.cpu_percent = cpu;
    hb.rss_bytes = 1u << 20;
    hb.runs = runs;
    hb.n_runs = n_runs;
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_HEARTBEAT;
    env.heartbeat = &hb;
    return conn_send(c, &env);
}

/* ---- attacks -------------------------------------------------------------- */

static int attack_double_hello(void)
{
    conn_t c;
    if (!join_plain(&c)) {
        conn_close(&c);
        return 0;
    }
    /* The same connection says Hello again, as someone else. */
    hello_t h = {.id = o.id2};
    send_hello(&c, &h);
    join_result_t r = await_join(&c, 1000);
    printf("second hello: ");
    print_join(&r);
    putchar('\n');
    conn_close(&c); /* and the connection goes away */
    return 0;
}

static int attack_stats(void)
{
    conn_t c;
    if (!join_plain(&c)) {
        conn_close(&c);
        return 0;
    }
    Lc__RunLoad *claims[1] = {&o.claim};
    send_heartbeat(&c, 1.0, claims, o.have_claim ? 1 : 0);
    Lc__EndpointStats ep = LC__ENDPOINT_STATS__INIT;
    ep.name = (char *)(o.endpoint ? o.endpoint : "forged");
    ep.method = "GET";
    ep.count = o.requests;
    ep.failures = o.failures;
    ep.bytes = 100;
    Lc__EndpointStats *eps[1] = {&ep};
    Lc__ErrorCount err = LC__ERROR_COUNT__INIT;
    err.endpoint = ep.name;
    err.kind = (char *)o.kind;
    err.count = o.failures ? o.failures : 1;
    Lc__ErrorCount *errs[1] = {&err};
    Lc__StatsBatch b = LC__STATS_BATCH__INIT;
    b.run = o.run;
    b.worker_id = (char *)o.id;
    b.seq = o.seq;
    b.interval = (uint32_t)o.interval;
    b.endpoints = eps;
    b.n_endpoints = 1;
    b.errors = errs;
    b.n_errors = o.kind ? 1 : 0;
    b.final = o.final;
    b.users = o.users;
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_STATS;
    env.stats = &b;
    conn_send(&c, &env);
    /* A StatsAck of this run and seq within 2 s. */
    bool acked = false, closed = false;
    uint64_t deadline = now_ms() + 2000;
    while (!acked && !closed) {
        uint64_t now = now_ms();
        Lc__Envelope *in = NULL;
        got_t g = conn_next(&c, now >= deadline ? 0 : (int)(deadline - now), &in);
        if (g == GOT_CLOSED)
            closed = true;
        if (g != GOT_FRAME)
            break;
        if (in->msg_case == LC__ENVELOPE__MSG_STATS_ACK && in->stats_ack->run == o.run &&
            in->stats_ack->seq >= o.seq)
            acked = true;
        else if (in->msg_case == LC__ENVELOPE__MSG_ASSIGN)
            diag("assigned run %" PRIu64 " generation %" PRIu64 " users %u", in->assign->run,
                 in->assign->generation, in->assign->users);
        else if (in->msg_case == LC__ENVELOPE__MSG_STOP)
            diag("told to stop run %" PRIu64 ": %s", in->stop->run, in->stop->reason);
        lc__envelope__free_unpacked(in, NULL);
    }
    printf("%s\n", acked ? "acked" : closed ? "not acked: closed" : "not acked");
    conn_close(&c);
    return 0;
}

/* HEX ("ff fe 41", spaces allowed) as a NUL-terminated malloc'd string. */
static char *unhex(const char *hex)
{
    char *out = calloc(strlen(hex) / 2 + 1, 1), *p = out;
    for (const char *s = hex; out != NULL && *s;) {
        if (*s == ' ' || *s == ':') {
            s++;
            continue;
        }
        int hi = lc_hex_digit(s[0]), lo = s[1] ? lc_hex_digit(s[1]) : -1;
        if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
            free(out);
            return NULL;
        }
        *p++ = (char)(hi << 4 | lo);
        s += 2;
    }
    return out;
}

static int attack_refuse(void)
{
    char *reason = o.reason_hex ? unhex(o.reason_hex) : strdup(o.reason ? o.reason : "");
    if (reason == NULL) {
        fprintf(stderr, "lc_hostile_worker: --reason-hex: pairs of hex digits, no 00\n");
        return 2;
    }
    conn_t c;
    if (join_plain(&c)) {
        Lc__AssignRefused ar = LC__ASSIGN_REFUSED__INIT;
        ar.run = o.run;
        ar.generation = o.have_gen ? o.gen : 1;
        ar.reason = reason;
        Lc__Envelope env = LC__ENVELOPE__INIT;
        env.msg_case = LC__ENVELOPE__MSG_ASSIGN_REFUSED;
        env.assign_refused = &ar;
        conn_send(&c, &env);
        printf("%s\n", conn_closed_within(&c, 1000) ? "sent: closed" : "sent: open");
    }
    conn_close(&c);
    free(reason);
    return 0;
}

/* Stays joined for --hold seconds with a heartbeat a second; the line says
 * whether the master closed the connection meanwhile. */
static void hold(conn_t *c, double cpu_a, double cpu_b, Lc__RunLoad **runs, size_t n_runs)
{
    uint64_t end = now_ms() + (uint64_t)(o.hold * 1000);
    unsigned beats = 0;
    bool closed = false;
    while (!closed && now_ms() < end) {
        send_heartbeat(c, beats % 2 ? cpu_b : cpu_a, runs, n_runs);
        beats++;
        uint64_t left = end - now_ms();
        closed = conn_closed_within(c, left < 1000 ? (int)left : 1000);
    }
    printf("welcomed, %u heartbeats, %s\n", beats, closed ? "then closed" : "still open");
}

static int attack_claim(void)
{
    Lc__RunLoad load = LC__RUN_LOAD__INIT;
    load.run = o.run;
    load.generation = o.gen;
    load.users = o.users;
    load.connections = o.users;
    o.claim = load;
    o.have_claim = true;
    conn_t c;
    if (join_plain(&c)) {
        Lc__RunLoad *runs[1] = {&o.claim};
        hold(&c, 1.0, 1.0, runs, 1);
    }
    conn_close(&c);
    return 0;
}

static int attack_heartbeat_nan(void)
{
    /* Invalid UTF-8 (lone continuation bytes, ff fe), a control byte, and
     * "\"" that a careless renderer would not escape. */
    size_t n = o.name_bytes ? o.name_bytes : 1;
    char *name = malloc(n + 1);
    if (name == NULL)
        return 1;
    static const char pattern[] = "\xff\xfe\x80\xc3\x28\x01\"\\n<>";
    for (size_t i = 0; i < n; i++)
        name[i] = pattern[i % (sizeof pattern - 1)];
    name[n] = '\0';
    conn_t c;
    hello_t h = {.id = o.id, .name = name};
    join_result_t r;
    if (join(&c, &h, &r))
        hold(&c, NAN, INFINITY, NULL, 0);
    else {
        print_join(&r);
        putchar('\n');
    }
    conn_close(&c);
    free(name);
    return 0;
}

static int attack_oversize(void)
{
    conn_t c;
    if (!conn_open(&c))
        return 1;
    wait_challenge(&c);
    /* varint32 of 16 MiB, then 1 MiB of the body it announces. */
    uint32_t announced = 16u << 20;
    uint8_t prefix[5];
    size_t plen = 0;
    for (uint32_t v = announced; ; v >>= 7) {
        prefix[plen++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        if (v <= 0x7f)
            break;
    }
    size_t body = 1u << 20, sent = 0;
    uint8_t *buf = malloc(body);
    if (buf == NULL)
        return 1;
    memset(buf, 0x0a, body); /* field 1, wire type 2: looks like a Hello's start */
    fcntl(c.fd, F_SETFL, fcntl(c.fd, F_GETFL) | O_NONBLOCK);
    uint64_t start = now_ms(), deadline = start + 3000;
    bool closed = send(c.fd, prefix, plen, MSG_NOSIGNAL) != (ssize_t)plen;
    while (!closed && sent < body && now_ms() < deadline) {
        struct pollfd p = {.fd = c.fd, .events = POLLOUT | POLLIN};
        if (poll(&p, 1, 100) <= 0)
            continue;
        if (p.revents & (POLLERR | POLLHUP))
            closed = true;
        else if (p.revents & POLLOUT) {
            ssize_t n = send(c.fd, buf + sent, body - sent, MSG_NOSIGNAL);
            if (n < 0 && errno != EAGAIN)
                closed = true;
            else if (n > 0)
                sent += (size_t)n;
        }
        if (!closed && (p.revents & POLLIN))
            conn_pump(&c, 0), closed = c.eof;
    }
    free(buf);
    fcntl(c.fd, F_SETFL, fcntl(c.fd, F_GETFL) & ~O_NONBLOCK);
    if (!closed) {
        uint64_t now = now_ms();
        closed = conn_closed_within(&c, now >= deadline ? 0 : (int)(deadline - now));
    }
    uint64_t took = now_ms() - start;
    if (closed)
        printf("closed after %" PRIu64 " ms, %zu of %zu body bytes sent\n", took, sent, body);
    else
        printf("open after %" PRIu64 " ms, %zu of %zu body bytes sent\n", took, sent, body);
    conn_close(&c);
    return 0;
}

static int attack_silent(void)
{
    uint32_t n = o.count;
    struct pollfd *p = calloc(n ? n : 1, sizeof *p);
    if (p == NULL)
        return 1;
    uint32_t opened = 0;
    for (uint32_t i = 0; i < n; i++) {
        p[i].fd = dial(o.address);
        p[i].events = POLLIN;
        if (p[i].fd >= 0)
            opened++;
    }
    uint64_t start = now_ms(), end = start + (uint64_t)(o.hold * 1000);
    uint32_t closed = 0;
    uint64_t last = 0;
    while (closed < opened && now_ms() < end) {
        if (poll(p, n, 100) <= 0)
            continue;
        for (uint32_t i = 0; i < n; i++) {
            if (p[i].fd < 0 || p[i].revents == 0)
                continue;
            char buf[4096];
            ssize_t got = read(p[i].fd, buf, sizeof buf); /* the Challenge, then EOF */
            if (got > 0)
                continue;
            close(p[i].fd);
            p[i].fd = -1;
            closed++;
            last = now_ms() - start;
        }
    }
    printf("%u of %u closed within %.1f s (last after %" PRIu64 " ms, %u not connected)\n", closed,
           opened, o.hold, last, n - opened);
    for (uint32_t i = 0; i < n; i++)
        if (p[i].fd >= 0)
            close(p[i].fd);
    free(p);
    return 0;
}

static int attack_takeover(void)
{
    conn_t c;
    hello_t h = {.id = o.id};
    join_result_t r;
    join(&c, &h, &r);
    print_join(&r);
    if (r.how == JOIN_WELCOMED) /* the master let us in: does it keep us? */
        printf(", %s", conn_closed_within(&c, 1500) ? "then closed" : "kept");
    putchar('\n');
    conn_close(&c);
    return 0;
}

static int attack_proof_for_other_id(void)
{
    conn_t c;
    hello_t h = {.id = o.id, .proof_id = o.as};
    join_result_t r;
    join(&c, &h, &r);
    print_join(&r);
    putchar('\n');
    conn_close(&c);
    return 0;
}

/* ---- main ----------------------------------------------------------------- */

static bool parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || s[0] == '-')
        return false;
    *out = v;
    return true;
}

static bool parse_claim(const char *s)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", s);
    char *run = strtok(buf, ":"), *gen = strtok(NULL, ":"), *users = strtok(NULL, ":");
    uint64_t r, g, u;
    if (run == NULL || gen == NULL || users == NULL || !parse_u64(run, &r) ||
        !parse_u64(gen, &g) || !parse_u64(users, &u) || u > UINT32_MAX)
        return false;
    o.claim = (Lc__RunLoad)LC__RUN_LOAD__INIT;
    o.claim.run = r;
    o.claim.generation = g;
    o.claim.users = (uint32_t)u;
    o.claim.connections = (uint32_t)u;
    o.have_claim = true;
    return true;
}

enum {
    OPT_CONNECT = 256, OPT_SECRET, OPT_PROOF, OPT_ID, OPT_ID2, OPT_AS, OPT_RUN, OPT_SEQ,
    OPT_REQUESTS, OPT_FAILURES, OPT_ENDPOINT, OPT_KIND, OPT_INTERVAL, OPT_FINAL, OPT_CLAIM,
    OPT_REASON, OPT_REASON_HEX, OPT_GEN, OPT_USERS, OPT_HOLD, OPT_COUNT, OPT_NAME_BYTES,
    OPT_CAPACITY,
};

static bool parse_option(int opt, const char *arg)
{
    uint64_t v = 0;
    switch (opt) {
    case OPT_CONNECT: o.address = arg; return true;
    case OPT_SECRET: o.secret_file = arg; return true;
    case OPT_PROOF: o.proof = arg; return strcmp(arg, "legacy") == 0 || strcmp(arg, "bound") == 0;
    case OPT_ID: o.id = arg; return true;
    case OPT_ID2: o.id2 = arg; return true;
    case OPT_AS: o.as = arg; return true;
    case OPT_ENDPOINT: o.endpoint = arg; return true;
    case OPT_KIND: o.kind = arg; return true;
    case OPT_REASON: o.reason = arg; return true;
    case OPT_REASON_HEX: o.reason_hex = arg; return true;
    case OPT_FINAL: o.final = true; return true;
    case OPT_CLAIM: return parse_claim(arg);
    case OPT_HOLD: o.hold = atof(arg); return o.hold > 0 && o.hold <= 60;
    default: break;
    }
    if (!parse_u64(arg, &v))
        return false;
    switch (opt) {
    case OPT_RUN: o.run = v; return true;
    case OPT_SEQ: o.seq = v; return true;
    case OPT_REQUESTS: o.requests = v; return true;
    case OPT_FAILURES: o.failures = v; return true;
    case OPT_INTERVAL: o.interval = v; return v <= UINT32_MAX;
    case OPT_GEN: o.gen = v; o.have_gen = true; return true;
    case OPT_USERS: o.users = (uint32_t)v; return v <= UINT32_MAX;
    case OPT_COUNT: o.count = (uint32_t)v; return v >= 1 && v <= 4000;
    case OPT_NAME_BYTES: o.name_bytes = (uint32_t)v; return v >= 1 && v <= (1u << 20);
    case OPT_CAPACITY: o.capacity = (uint32_t)v; return v <= UINT32_MAX;
    default: return false;
    }
}

static bool needs(bool ok, const char *what)
{
    if (!ok)
        fprintf(stderr, "lc_hostile_worker %s: needs %s\n", o.attack, what);
    return ok;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"connect", required_argument, NULL, OPT_CONNECT},
        {"secret-file", required_argument, NULL, OPT_SECRET},
        {"proof", required_argument, NULL, OPT_PROOF},
        {"id", required_argument, NULL, OPT_ID},
        {"id2", required_argument, NULL, OPT_ID2},
        {"as", required_argument, NULL, OPT_AS},
        {"run", required_argument, NULL, OPT_RUN},
        {"seq", required_argument, NULL, OPT_SEQ},
        {"requests", required_argument, NULL, OPT_REQUESTS},
        {"failures", required_argument, NULL, OPT_FAILURES},
        {"endpoint", required_argument, NULL, OPT_ENDPOINT},
        {"kind", required_argument, NULL, OPT_KIND},
        {"interval", required_argument, NULL, OPT_INTERVAL},
        {"final", no_argument, NULL, OPT_FINAL},
        {"claim", required_argument, NULL, OPT_CLAIM},
        {"reason", required_argument, NULL, OPT_REASON},
        {"reason-hex", required_argument, NULL, OPT_REASON_HEX},
        {"gen", required_argument, NULL, OPT_GEN},
        {"users", required_argument, NULL, OPT_USERS},
        {"hold", required_argument, NULL, OPT_HOLD},
        {"count", required_argument, NULL, OPT_COUNT},
        {"name-bytes", required_argument, NULL, OPT_NAME_BYTES},
        {"capacity", required_argument, NULL, OPT_CAPACITY},
        {NULL, 0, NULL, 0}};
    signal(SIGPIPE, SIG_IGN);
    setvbuf(stdout, NULL, _IOLBF, 0);
    o.proof = "bound";
    o.hold = 3;
    o.requests = 1;
    o.seq = 1;
    o.count = 1;
    o.name_bytes = 10240;
    if (argc < 2 || argv[1][0] == '-') {
        fputs(usage, stderr);
        return 2;
    }
    o.attack = argv[1];
    optind = 2;
    for (int opt; (opt = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        if (opt == '?' || !parse_option(opt, optarg)) {
            if (opt != '?')
                fprintf(stderr, "lc_hostile_worker: bad value for an option: %s\n", optarg);
            fputs(usage, stderr);
            return 2;
        }
    }
    if (optind != argc || !needs(o.address != NULL, "--connect"))
        return 2;
    char why[256];
    if (o.secret_file && lc_join_secret_load(o.secret_file, &o.secret, why, sizeof why) != 0) {
        fprintf(stderr, "lc_hostile_worker: %s\n", why);
        return 2;
    }
    const char *a = o.attack;
    if (strcmp(a, "double-hello") == 0)
        return needs(o.id && o.id2, "--id and --id2") ? attack_double_hello() : 2;
    if (strcmp(a, "stats") == 0)
        return needs(o.id && o.run, "--id and --run") ? attack_stats() : 2;
    if (strcmp(a, "refuse") == 0)
        return needs(o.id && o.run && (o.reason || o.reason_hex),
                     "--id, --run and --reason or --reason-hex") ? attack_refuse() : 2;
    if (strcmp(a, "claim") == 0)
        return needs(o.id && o.run && o.have_gen, "--id, --run and --gen") ? attack_claim() : 2;
    if (strcmp(a, "heartbeat-nan") == 0)
        return needs(o.id != NULL, "--id") ? attack_heartbeat_nan() : 2;
    if (strcmp(a, "oversize") == 0)
        return attack_oversize();
    if (strcmp(a, "silent") == 0)
        return attack_silent();
    if (strcmp(a, "takeover") == 0)
        return needs(o.id != NULL, "--id") ? attack_takeover() : 2;
    if (strcmp(a, "proof-for-other-id") == 0)
        return needs(o.id && o.as, "--id and --as") ? attack_proof_for_other_id() : 2;
    fprintf(stderr, "lc_hostile_worker: unknown attack %s\n", a);
    fputs(usage, stderr);
    return 2;
}
