/* hostile_attacks.c — lc_hostile_worker's attacks on a master's worker port, one per
 * invocation, each bounded to a few seconds and ending with one line saying what the master did. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hostile_worker.h"
#include "lc_protocol.h"
#include "lc_text.h"

int hw_attack_double_hello(void)
{
    hw_conn_t c;
    if (!hw_join_plain(&c)) {
        hw_conn_close(&c);
        return 0;
    }
    /* The same connection says Hello again, as someone else. */
    hw_hello_t h = {.id = hw.id2};
    hw_send_hello(&c, &h);
    hw_join_result_t r = hw_await_join(&c, 1000);
    printf("second hello: ");
    hw_print_join(&r);
    putchar('\n');
    hw_conn_close(&c); /* and the connection goes away */
    return 0;
}

int hw_attack_stats(void)
{
    hw_conn_t c;
    if (!hw_join_plain(&c)) {
        hw_conn_close(&c);
        return 0;
    }
    Lc__RunLoad *claims[1] = {&hw.claim};
    hw_send_heartbeat(&c, 1.0, claims, hw.have_claim ? 1 : 0);
    Lc__EndpointStats ep = LC__ENDPOINT_STATS__INIT;
    ep.name = (char *)(hw.endpoint ? hw.endpoint : "forged");
    ep.method = "GET";
    ep.count = hw.requests;
    ep.failures = hw.failures;
    ep.bytes = 100;
    Lc__EndpointStats *eps[1] = {&ep};
    Lc__ErrorCount err = LC__ERROR_COUNT__INIT;
    err.endpoint = ep.name;
    err.kind = (char *)hw.kind;
    err.count = hw.failures ? hw.failures : 1;
    Lc__ErrorCount *errs[1] = {&err};
    Lc__StatsBatch b = LC__STATS_BATCH__INIT;
    b.run = hw.run;
    b.worker_id = (char *)hw.id;
    b.seq = hw.seq;
    b.interval = (uint32_t)hw.interval;
    b.endpoints = eps;
    b.n_endpoints = 1;
    b.errors = errs;
    b.n_errors = hw.kind ? 1 : 0;
    b.final = hw.final;
    b.users = hw.users;
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_STATS;
    env.stats = &b;
    hw_conn_send(&c, &env);
    /* A StatsAck of this run and seq within 2 s. */
    bool acked = false, closed = false;
    uint64_t deadline = hw_now_ms() + 2000;
    while (!acked && !closed) {
        uint64_t now = hw_now_ms();
        Lc__Envelope *in = NULL;
        hw_got_t g = hw_conn_next(&c, now >= deadline ? 0 : (int)(deadline - now), &in);
        if (g == HW_GOT_CLOSED)
            closed = true;
        if (g != HW_GOT_FRAME)
            break;
        if (in->msg_case == LC__ENVELOPE__MSG_STATS_ACK && in->stats_ack->run == hw.run &&
            in->stats_ack->seq >= hw.seq)
            acked = true;
        else if (in->msg_case == LC__ENVELOPE__MSG_ASSIGN)
            hw_diag("assigned run %" PRIu64 " generation %" PRIu64 " users %u", in->assign->run,
                    in->assign->generation, in->assign->users);
        else if (in->msg_case == LC__ENVELOPE__MSG_STOP)
            hw_diag("told to stop run %" PRIu64 ": %s", in->stop->run, in->stop->reason);
        lc__envelope__free_unpacked(in, NULL);
    }
    printf("%s\n", acked ? "acked" : closed ? "not acked: closed" : "not acked");
    hw_conn_close(&c);
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

int hw_attack_refuse(void)
{
    char *reason = hw.reason_hex ? unhex(hw.reason_hex) : strdup(hw.reason ? hw.reason : "");
    if (reason == NULL) {
        fprintf(stderr, "lc_hostile_worker: --reason-hex: pairs of hex digits, no 00\n");
        return 2;
    }
    hw_conn_t c;
    if (hw_join_plain(&c)) {
        Lc__AssignRefused ar = LC__ASSIGN_REFUSED__INIT;
        ar.run = hw.run;
        ar.generation = hw.have_gen ? hw.gen : 1;
        ar.reason = reason;
        Lc__Envelope env = LC__ENVELOPE__INIT;
        env.msg_case = LC__ENVELOPE__MSG_ASSIGN_REFUSED;
        env.assign_refused = &ar;
        hw_conn_send(&c, &env);
        printf("%s\n", hw_conn_closed_within(&c, 1000) ? "sent: closed" : "sent: open");
    }
    hw_conn_close(&c);
    free(reason);
    return 0;
}

/* Stays joined for --hold seconds with a heartbeat a second; the line says
 * whether the master closed the connection meanwhile. */
static void hold(hw_conn_t *c, double cpu_a, double cpu_b, Lc__RunLoad **runs, size_t n_runs)
{
    uint64_t end = hw_now_ms() + (uint64_t)(hw.hold * 1000);
    unsigned beats = 0;
    bool closed = false;
    while (!closed && hw_now_ms() < end) {
        hw_send_heartbeat(c, beats % 2 ? cpu_b : cpu_a, runs, n_runs);
        beats++;
        uint64_t left = end - hw_now_ms();
        closed = hw_conn_closed_within(c, left < 1000 ? (int)left : 1000);
    }
    printf("welcomed, %u heartbeats, %s\n", beats, closed ? "then closed" : "still open");
}

int hw_attack_claim(void)
{
    Lc__RunLoad load = LC__RUN_LOAD__INIT;
    load.run = hw.run;
    load.generation = hw.gen;
    load.users = hw.users;
    load.connections = hw.users;
    hw.claim = load;
    hw.have_claim = true;
    hw_conn_t c;
    if (hw_join_plain(&c)) {
        Lc__RunLoad *runs[1] = {&hw.claim};
        hold(&c, 1.0, 1.0, runs, 1);
    }
    hw_conn_close(&c);
    return 0;
}

int hw_attack_heartbeat_nan(void)
{
    /* Invalid UTF-8 (lone continuation bytes, ff fe), a control byte, and
     * "\"" that a careless renderer would not escape. */
    size_t n = hw.name_bytes ? hw.name_bytes : 1;
    char *name = malloc(n + 1);
    if (name == NULL)
        return 1;
    static const char pattern[] = "\xff\xfe\x80\xc3\x28\x01\"\\n<>";
    for (size_t i = 0; i < n; i++)
        name[i] = pattern[i % (sizeof pattern - 1)];
    name[n] = '\0';
    hw_conn_t c;
    hw_hello_t h = {.id = hw.id, .name = name};
    hw_join_result_t r;
    if (hw_join(&c, &h, &r))
        hold(&c, NAN, INFINITY, NULL, 0);
    else {
        hw_print_join(&r);
        putchar('\n');
    }
    hw_conn_close(&c);
    free(name);
    return 0;
}

int hw_attack_oversize(void)
{
    hw_conn_t c;
    if (!hw_conn_open(&c))
        return 1;
    hw_wait_challenge(&c);
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
    uint64_t start = hw_now_ms(), deadline = start + 3000;
    bool closed = send(c.fd, prefix, plen, MSG_NOSIGNAL) != (ssize_t)plen;
    while (!closed && sent < body && hw_now_ms() < deadline) {
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
            hw_conn_pump(&c, 0), closed = c.eof;
    }
    free(buf);
    fcntl(c.fd, F_SETFL, fcntl(c.fd, F_GETFL) & ~O_NONBLOCK);
    if (!closed) {
        uint64_t now = hw_now_ms();
        closed = hw_conn_closed_within(&c, now >= deadline ? 0 : (int)(deadline - now));
    }
    uint64_t took = hw_now_ms() - start;
    if (closed)
        printf("closed after %" PRIu64 " ms, %zu of %zu body bytes sent\n", took, sent, body);
    else
        printf("open after %" PRIu64 " ms, %zu of %zu body bytes sent\n", took, sent, body);
    hw_conn_close(&c);
    return 0;
}

int hw_attack_silent(void)
{
    uint32_t n = hw.count;
    struct pollfd *p = calloc(n ? n : 1, sizeof *p);
    if (p == NULL)
        return 1;
    uint32_t opened = 0;
    for (uint32_t i = 0; i < n; i++) {
        p[i].fd = hw_dial(hw.address);
        p[i].events = POLLIN;
        if (p[i].fd >= 0)
            opened++;
    }
    uint64_t start = hw_now_ms(), end = start + (uint64_t)(hw.hold * 1000);
    uint32_t closed = 0;
    uint64_t last = 0;
    while (closed < opened && hw_now_ms() < end) {
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
            last = hw_now_ms() - start;
        }
    }
    printf("%u of %u closed within %.1f s (last after %" PRIu64 " ms, %u not connected)\n", closed,
           opened, hw.hold, last, n - opened);
    for (uint32_t i = 0; i < n; i++)
        if (p[i].fd >= 0)
            close(p[i].fd);
    free(p);
    return 0;
}

int hw_attack_takeover(void)
{
    hw_conn_t c;
    hw_hello_t h = {.id = hw.id};
    hw_join_result_t r;
    hw_join(&c, &h, &r);
    hw_print_join(&r);
    if (r.how == HW_JOIN_WELCOMED) /* the master let us in: does it keep us? */
        printf(", %s", hw_conn_closed_within(&c, 1500) ? "then closed" : "kept");
    putchar('\n');
    hw_conn_close(&c);
    return 0;
}

int hw_attack_proof_for_other_id(void)
{
    hw_conn_t c;
    hw_hello_t h = {.id = hw.id, .proof_id = hw.as};
    hw_join_result_t r;
    hw_join(&c, &h, &r);
    hw_print_join(&r);
    putchar('\n');
    hw_conn_close(&c);
    return 0;
}
