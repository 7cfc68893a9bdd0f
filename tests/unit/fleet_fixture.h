/* fleet_fixture.h — what test_fleet and test_fleet_traffic share: a fleet (fleet.h) on a
 * fake transport that records every frame sent and every close, and calls fleet_conn_gone
 * later, as libuv's close callback does; its events' answers; the log capture; and the
 * frames a worker sends (Hello, Heartbeat). */
#ifndef TESTS_UNIT_FLEET_FIXTURE_H
#define TESTS_UNIT_FLEET_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fleet.h"
#include "lc_err.h"
#include "lc_join.h"
#include "lc_protocol.h"

#define MAX_CONNS 160 /* test_parked_hellos_bounded opens 129 */
#define MAX_SENT 16
#define HEARTBEAT_MS 1000
#define STATS_MS 2000

typedef struct fixture_s fixture_t;

/* One connection as the fake transport sees it. */
typedef struct fake_conn_s {
    fixture_t *fx;
    fleet_conn_t *c;
    Lc__Envelope *sent[MAX_SENT]; /* heap copies (packed and unpacked again) */
    size_t n_sent;
    int closes;   /* transport close calls */
    bool gone;    /* fleet_conn_gone called */
    bool secured; /* what the transport's secured() answers */
} fake_conn_t;

struct fixture_s {
    fleet_t *f;
    fleet_config_t cfg;
    lc_join_secret_t secret;
    fake_conn_t conns[MAX_CONNS];
    size_t n_conns;
    bool gone_at_once; /* close calls fleet_conn_gone before it returns */
    /* what the events were asked, and what they answer */
    int joins, lost, stats, refused;
    fleet_worker_t *joined;
    size_t joined_running;
    char lost_id[FLEET_ID_MAX];
    bool lost_had_conn;
    fleet_worker_t *stats_worker;
    uint64_t stats_run, stats_seq;
    fleet_worker_t *refused_worker;
    uint64_t refused_run, refused_generation;
    char refused_reason[64];
    const char *leader;        /* NULL: no leader known */
    const char *masters[4];
    size_t n_masters;
    /* log capture */
    FILE *log_file;
    int saved_stderr;
    char log[16384];
};

/* ---- the fake transport -------------------------------------------------- */

static Lc__Envelope *heap_copy(const Lc__Envelope *env)
{
    size_t len = lc__envelope__get_packed_size(env);
    uint8_t *buf = malloc(len + 1);
    assert_non_null(buf);
    assert_int_equal(lc__envelope__pack(env, buf), len);
    Lc__Envelope *copy = lc__envelope__unpack(NULL, len, buf);
    free(buf);
    assert_non_null(copy);
    return copy;
}

static int fake_send(void *arg, void *conn_data, const Lc__Envelope *env)
{
    fake_conn_t *fc = conn_data;
    assert_ptr_equal(arg, fc->fx);
    assert_false(fc->gone);
    assert_int_equal(fc->closes, 0); /* fleet_conn_send refuses a closing connection */
    assert_true(fc->n_sent < MAX_SENT);
    fc->sent[fc->n_sent++] = heap_copy(env);
    return 0;
}

static void fake_close(void *arg, void *conn_data)
{
    fake_conn_t *fc = conn_data;
    assert_false(fc->gone);
    fc->closes++;
    if (fc->fx->gone_at_once) {
        fc->gone = true;
        fleet_conn_gone(fc->c);
    }
}

static bool fake_secured(void *arg, void *conn_data)
{
    return ((fake_conn_t *)conn_data)->secured;
}

/* The loop's turn: every closed connection's close callback runs. */
static void flush_closes(fixture_t *fx)
{
    for (size_t i = 0; i < fx->n_conns; i++) {
        fake_conn_t *fc = &fx->conns[i];
        if (fc->closes > 0 && !fc->gone) {
            fc->gone = true;
            fleet_conn_gone(fc->c);
        }
    }
}

/* ---- the events ---------------------------------------------------------- */

static void on_join(void *arg, fleet_worker_t *w, const Lc__Hello *hello)
{
    fixture_t *fx = arg;
    fx->joins++;
    fx->joined = w;
    fx->joined_running = hello->n_running;
    assert_string_equal(w->id, hello->worker_id);
}

static void on_lost(void *arg, fleet_worker_t *w)
{
    fixture_t *fx = arg;
    fx->lost++;
    snprintf(fx->lost_id, sizeof fx->lost_id, "%s", w->id);
    fx->lost_had_conn = w->conn != NULL;
}

static void on_stats(void *arg, fleet_worker_t *w, Lc__Envelope *env)
{
    fixture_t *fx = arg;
    fx->stats++;
    fx->stats_worker = w;
    assert_int_equal(env->msg_case, LC__ENVELOPE__MSG_STATS);
    fx->stats_run = env->stats->run;
    fx->stats_seq = env->stats->seq;
    lc__envelope__free_unpacked(env, NULL);
}

static bool leader_address(void *arg, char *buf, size_t len)
{
    fixture_t *fx = arg;
    if (fx->leader == NULL)
        return false;
    snprintf(buf, len, "%s", fx->leader);
    return true;
}

static size_t master_addresses(void *arg, char (*out)[LC_HOST_MAX + 8], size_t max)
{
    fixture_t *fx = arg;
    size_t n = fx->n_masters < max ? fx->n_masters : max;
    for (size_t i = 0; i < n; i++)
        snprintf(out[i], sizeof out[i], "%s", fx->masters[i]);
    return n;
}

static void on_refused(void *arg, fleet_worker_t *w, const Lc__AssignRefused *refused)
{
    fixture_t *fx = arg;
    fx->refused++;
    fx->refused_worker = w;
    fx->refused_run = refused->run;
    fx->refused_generation = refused->generation;
    snprintf(fx->refused_reason, sizeof fx->refused_reason, "%s", refused->reason);
}

/* ---- fixture ------------------------------------------------------------- */

static void new_fleet(fixture_t *fx, bool with_secret)
{
    fx->cfg = (fleet_config_t){.listen_host = "127.0.0.1", .listen_port = 5557,
                               .advertise = "10.0.0.100:5557", .heartbeat_ms = HEARTBEAT_MS,
                               .stats_interval_ms = STATS_MS};
    if (with_secret) {
        static const char secret[] = "a join secret of some length";
        memcpy(fx->secret.bytes, secret, sizeof secret - 1);
        fx->secret.len = sizeof secret - 1;
        fx->cfg.join_secret = &fx->secret;
    }
    fleet_events_t events = {.arg = fx, .on_join = on_join, .on_lost = on_lost,
                             .on_stats = on_stats, .leader_address = leader_address,
                             .master_addresses = master_addresses, .on_refused = on_refused};
    fleet_transport_t transport = {.arg = fx, .send = fake_send, .close = fake_close,
                                   .secured = fake_secured};
    assert_int_equal(fleet_new(&fx->f, &fx->cfg, &events, &transport), 0);
}

/* A fixture with a fleet, with or without a join secret, in *state. */
static int setup_with(void **state, bool with_secret)
{
    fixture_t *fx = calloc(1, sizeof *fx);
    if (fx == NULL)
        return -1;
    fx->saved_stderr = -1;
    new_fleet(fx, with_secret);
    *state = fx;
    return 0;
}

static int setup(void **state)
{
    return setup_with(state, false);
}

/* Every test ends with every connection gone and the fleet freed, so that
 * ASan's leak check covers the fleet's own memory. */
static int teardown(void **state)
{
    fixture_t *fx = *state;
    fleet_close_connections(fx->f, NULL);
    flush_closes(fx);
    assert_int_equal(fleet_conn_count(fx->f), 0);
    fleet_free(fx->f);
    for (size_t i = 0; i < fx->n_conns; i++)
        for (size_t j = 0; j < fx->conns[i].n_sent; j++)
            lc__envelope__free_unpacked(fx->conns[i].sent[j], NULL);
    free(fx);
    return 0;
}

/* ---- helpers ------------------------------------------------------------- */

/* The close reasons are only in the log: capture stderr around a call. */
static void log_begin(fixture_t *fx)
{
    fflush(stderr);
    fx->log_file = tmpfile();
    assert_non_null(fx->log_file);
    fx->saved_stderr = dup(STDERR_FILENO);
    assert_true(fx->saved_stderr >= 0);
    assert_true(dup2(fileno(fx->log_file), STDERR_FILENO) >= 0);
}

/* Returns what was logged since log_begin (also echoed to the real stderr). */
static const char *log_end(fixture_t *fx)
{
    fflush(stderr);
    assert_true(dup2(fx->saved_stderr, STDERR_FILENO) >= 0);
    close(fx->saved_stderr);
    fx->saved_stderr = -1;
    rewind(fx->log_file);
    size_t n = fread(fx->log, 1, sizeof fx->log - 1, fx->log_file);
    fx->log[n] = '\0';
    fclose(fx->log_file);
    fx->log_file = NULL;
    fputs(fx->log, stderr);
    return fx->log;
}

#define assert_logged(log, text)                                                              \
    do {                                                                                      \
        if (strstr((log), (text)) == NULL)                                                    \
            fail_msg("expected the log to contain \"%s\"; it was:\n%s", (text), (log));      \
    } while (0)

static fake_conn_t *open_conn(fixture_t *fx, uint64_t now_ms)
{
    assert_true(fx->n_conns < MAX_CONNS);
    fake_conn_t *fc = &fx->conns[fx->n_conns];
    fc->fx = fx;
    fc->secured = true;
    char peer[32];
    snprintf(peer, sizeof peer, "10.0.0.%zu:40000", fx->n_conns + 1);
    fx->n_conns++;
    fc->c = fleet_conn_open(fx->f, fc, peer, now_ms);
    assert_non_null(fc->c);
    return fc;
}

static const Lc__Envelope *sent(const fake_conn_t *fc, size_t i, Lc__Envelope__MsgCase msg_case)
{
    assert_true(i < fc->n_sent);
    assert_int_equal(fc->sent[i]->msg_case, msg_case);
    return fc->sent[i];
}

/* A valid Hello; tests change fields before hello_send. */
static Lc__Hello hello_for(const char *id)
{
    Lc__Hello h = LC__HELLO__INIT;
    h.protocol_version = LC_PROTOCOL_VERSION;
    h.worker_id = (char *)id;
    h.name = "host-a";
    h.threads = 2;
    h.capacity = 100;
    return h;
}

/* Hands the fleet a heap copy of env (it takes and frees it). */
static bool receive(fake_conn_t *fc, const Lc__Envelope *env, uint64_t now_ms)
{
    return fleet_conn_receive(fc->c, heap_copy(env), now_ms);
}

static bool hello_send(fake_conn_t *fc, Lc__Hello *h, uint64_t now_ms)
{
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_HELLO;
    env.hello = h;
    return receive(fc, &env, now_ms);
}

static bool hello(fake_conn_t *fc, const char *id, uint64_t now_ms)
{
    Lc__Hello h = hello_for(id);
    return hello_send(fc, &h, now_ms);
}

/* A heartbeat reporting users on run 5 (and 0 on no other). */
static bool heartbeat(fake_conn_t *fc, double cpu, uint64_t rss, uint32_t users, uint64_t now_ms)
{
    Lc__RunLoad load = LC__RUN_LOAD__INIT, *loads[] = {&load};
    load.run = 5;
    load.generation = 1;
    load.users = users;
    load.connections = users * 2;
    Lc__Heartbeat hb = LC__HEARTBEAT__INIT;
    hb.time_ms = now_ms;
    hb.cpu_percent = cpu;
    hb.rss_bytes = rss;
    hb.runs = loads;
    hb.n_runs = 1;
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_HEARTBEAT;
    env.heartbeat = &hb;
    return receive(fc, &env, now_ms);
}

#endif
