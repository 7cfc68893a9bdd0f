/* hostile_conn.c — lc_hostile_worker's connections to the master (blocking sockets, frames
 * queued as they are read) and the worker's side of the handshake, made to be misused. */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hostile_worker.h"
#include "lc_addr.h"
#include "lc_frame.h"
#include "lc_join.h"
#include "lc_protocol.h"

/* Monotonic milliseconds. */
uint64_t hw_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void hw_diag(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "lc_hostile_worker %s: ", hw.attack);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* A text from the master, printable: bytes outside ASCII as \xNN. */
void hw_print_text(const char *s)
{
    for (; s != NULL && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= ' ' && c < 0x7f)
            putchar(c);
        else
            printf("\\x%02x", c);
    }
}

int hw_dial(const char *address)
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
    hw_conn_t *c = arg;
    char why[128];
    Lc__Envelope *env = NULL;
    if (lc_frame_decode(body, len, &env, why, sizeof why) != 0) {
        hw_diag("undecodable frame from the master: %s", why);
        return 1;
    }
    hw_frame_t *f = calloc(1, sizeof *f);
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

bool hw_conn_open(hw_conn_t *c)
{
    *c = (hw_conn_t){.fd = hw_dial(hw.address)};
    lc_frame_reader_init(&c->reader, LC_FRAME_MAX);
    if (c->fd < 0)
        hw_diag("cannot connect to %s: %s", hw.address, strerror(errno));
    return c->fd >= 0;
}

void hw_conn_close(hw_conn_t *c)
{
    while (c->head != NULL) {
        hw_frame_t *f = c->head;
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
void hw_conn_pump(hw_conn_t *c, int timeout_ms)
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
hw_got_t hw_conn_next(hw_conn_t *c, int timeout_ms, Lc__Envelope **out)
{
    uint64_t deadline = hw_now_ms() + (uint64_t)timeout_ms;
    for (;;) {
        if (c->head != NULL) {
            hw_frame_t *f = c->head;
            c->head = f->next;
            if (c->head == NULL)
                c->tail = NULL;
            *out = f->env;
            free(f);
            return HW_GOT_FRAME;
        }
        if (c->eof)
            return HW_GOT_CLOSED;
        uint64_t now = hw_now_ms();
        if (now >= deadline)
            return HW_GOT_TIMEOUT;
        hw_conn_pump(c, (int)(deadline - now));
    }
}

/* Whether the master closed c within timeout_ms (frames meanwhile dropped). */
bool hw_conn_closed_within(hw_conn_t *c, int timeout_ms)
{
    Lc__Envelope *env;
    uint64_t deadline = hw_now_ms() + (uint64_t)timeout_ms;
    for (;;) {
        uint64_t now = hw_now_ms();
        hw_got_t g = hw_conn_next(c, now >= deadline ? 0 : (int)(deadline - now), &env);
        if (g == HW_GOT_CLOSED)
            return true;
        if (g == HW_GOT_TIMEOUT)
            return false;
        lc__envelope__free_unpacked(env, NULL);
    }
}

bool hw_conn_send(hw_conn_t *c, const Lc__Envelope *env)
{
    uint8_t *frame;
    size_t len, off = 0;
    if (lc_frame_encode(env, &frame, &len) != 0) {
        hw_diag("cannot encode a frame");
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

/* Waits for the master's Challenge and keeps its nonce. */
bool hw_wait_challenge(hw_conn_t *c)
{
    Lc__Envelope *env = NULL;
    if (hw_conn_next(c, 3000, &env) != HW_GOT_FRAME)
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
static size_t make_proof(const hw_conn_t *c, const char *worker_id, uint8_t *proof)
{
    if (hw.secret.len == 0)
        return 0;
    int rv;
    if (strcmp(hw.proof, "bound") == 0)
        rv = lc_join_proof_for(&hw.secret, c->nonce, c->nonce_len, worker_id, proof);
    else
    {
        (void)worker_id; /* the legacy proof answers the nonce only */
        rv = lc_join_proof(&hw.secret, c->nonce, c->nonce_len, proof);
    }
    return rv == 0 ? LC_JOIN_PROOF_LEN : 0;
}

bool hw_send_hello(hw_conn_t *c, const hw_hello_t *h)
{
    uint8_t proof[LC_JOIN_PROOF_LEN];
    Lc__Hello hello = LC__HELLO__INIT;
    hello.protocol_version = LC_PROTOCOL_VERSION;
    hello.worker_id = (char *)h->id;
    hello.name = (char *)(h->name ? h->name : h->id);
    hello.threads = 1;
    hello.capacity = hw.capacity;
    hello.join_proof.len = make_proof(c, h->proof_id ? h->proof_id : h->id, proof);
    hello.join_proof.data = proof;
    hello.running = h->running;
    hello.n_running = h->n_running;
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_HELLO;
    env.hello = &hello;
    return hw_conn_send(c, &env);
}

/* What the master answers a Hello within timeout_ms. */
hw_join_result_t hw_await_join(hw_conn_t *c, int timeout_ms)
{
    hw_join_result_t r = {.how = HW_JOIN_SILENT};
    Lc__Envelope *env = NULL;
    uint64_t deadline = hw_now_ms() + (uint64_t)timeout_ms;
    for (;;) {
        uint64_t now = hw_now_ms();
        hw_got_t g = hw_conn_next(c, now >= deadline ? 0 : (int)(deadline - now), &env);
        if (g == HW_GOT_CLOSED)
            r.how = HW_JOIN_CLOSED;
        if (g != HW_GOT_FRAME)
            return r;
        switch (env->msg_case) {
        case LC__ENVELOPE__MSG_WELCOME:
            r.how = HW_JOIN_WELCOMED;
            break;
        case LC__ENVELOPE__MSG_JOIN_REFUSED:
            r.how = HW_JOIN_REFUSED;
            snprintf(r.reason, sizeof r.reason, "%s", env->join_refused->reason);
            break;
        case LC__ENVELOPE__MSG_REDIRECT:
            r.how = HW_JOIN_REDIRECTED;
            snprintf(r.reason, sizeof r.reason, "%s", env->redirect->leader);
            break;
        default:
            hw_diag("ignoring message %d while joining", (int)env->msg_case);
            lc__envelope__free_unpacked(env, NULL);
            continue;
        }
        lc__envelope__free_unpacked(env, NULL);
        return r;
    }
}

void hw_print_join(const hw_join_result_t *r)
{
    switch (r->how) {
    case HW_JOIN_WELCOMED: printf("welcomed"); break;
    case HW_JOIN_REFUSED: printf("refused: "); hw_print_text(r->reason); break;
    case HW_JOIN_REDIRECTED: printf("redirected: "); hw_print_text(r->reason); break;
    case HW_JOIN_CLOSED: printf("closed"); break;
    case HW_JOIN_SILENT: printf("open"); break; /* no answer, connection still open */
    }
}

/* Dials, answers the challenge and says Hello; the master's answer in *r. */
bool hw_join(hw_conn_t *c, const hw_hello_t *h, hw_join_result_t *r)
{
    *r = (hw_join_result_t){.how = HW_JOIN_CLOSED};
    if (!hw_conn_open(c))
        return false;
    if (!hw_wait_challenge(c)) {
        hw_diag("no Challenge from the master");
        return false;
    }
    if (!hw_send_hello(c, h))
        return false;
    *r = hw_await_join(c, 3000);
    return r->how == HW_JOIN_WELCOMED;
}

/* Joins with the plain Hello of --id (and --claim); prints the answer and
 * returns false unless welcomed. */
bool hw_join_plain(hw_conn_t *c)
{
    Lc__RunLoad *claims[1] = {&hw.claim};
    hw_hello_t h = {.id = hw.id, .running = claims, .n_running = hw.have_claim ? 1 : 0};
    hw_join_result_t r;
    if (hw_join(c, &h, &r))
        return true;
    hw_print_join(&r);
    putchar('\n');
    return false;
}

bool hw_send_heartbeat(hw_conn_t *c, double cpu, Lc__RunLoad **runs, size_t n_runs)
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
    return hw_conn_send(c, &env);
}

