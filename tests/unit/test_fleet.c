/* test_fleet.c — the fleet through its transport seam (fleet.h): the
 * handshake (Challenge, Hello, Welcome, Redirect, JoinRefused), heartbeats
 * and saturation, stats and refusals, the messages to a worker, liveness and
 * losing leadership, with a fake transport that records every frame sent and
 * every close, and calls fleet_conn_gone later, as libuv's close callback does. */
#include <setjmp.h>
#include <stdarg.h>
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

static int setup(void **state)
{
    fixture_t *fx = calloc(1, sizeof *fx);
    if (fx == NULL)
        return -1;
    fx->saved_stderr = -1;
    new_fleet(fx, false);
    *state = fx;
    return 0;
}

static int setup_secret(void **state)
{
    fixture_t *fx = calloc(1, sizeof *fx);
    if (fx == NULL)
        return -1;
    fx->saved_stderr = -1;
    new_fleet(fx, true);
    *state = fx;
    return 0;
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

static const uint8_t *nonce_of(const fake_conn_t *fc)
{
    const Lc__Envelope *env = sent(fc, 0, LC__ENVELOPE__MSG_CHALLENGE);
    assert_int_equal(env->challenge->nonce.len, LC_JOIN_NONCE_LEN);
    return env->challenge->nonce.data;
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

static bool stats_batch(fake_conn_t *fc, const char *worker_id, uint64_t run, uint64_t seq)
{
    Lc__StatsBatch sb = LC__STATS_BATCH__INIT;
    sb.run = run;
    sb.worker_id = (char *)worker_id;
    sb.seq = seq;
    sb.interval = 1;
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_STATS;
    env.stats = &sb;
    return receive(fc, &env, 10);
}

/* The state of a connection the fleet refused before any worker existed. */
static void assert_refused_no_worker(fixture_t *fx, const fake_conn_t *fc)
{
    assert_int_equal(fc->closes, 1);
    assert_true(fleet_conn_closing(fc->c));
    size_t n;
    fleet_known(fx->f, &n);
    assert_int_equal(n, 0);
    assert_int_equal(fleet_count_connected(fx->f), 0);
    assert_int_equal(fx->joins, 0);
}

static json_t *worker_json(fixture_t *fx, json_t *list, const char *id)
{
    size_t i;
    json_t *row;
    json_array_foreach(list, i, row)
        if (strcmp(json_string_value(json_object_get(row, "id")), id) == 0)
            return row;
    fail_msg("no worker %s in fleet_workers_json", id);
    return NULL;
}

/* ---- the handshake ------------------------------------------------------- */

static void test_open_sends_challenge(void **state)
{
    fixture_t *fx = *state;
    fake_conn_t *a = open_conn(fx, 0), *b = open_conn(fx, 0);
    assert_int_equal(a->n_sent, 1);
    assert_int_equal(b->n_sent, 1);
    assert_int_equal(fleet_conn_count(fx->f), 2);
    assert_false(fleet_conn_closing(a->c));
    /* each connection its own nonce */
    assert_memory_not_equal(nonce_of(a), nonce_of(b), LC_JOIN_NONCE_LEN);
}

static void test_first_frame_not_hello_closes(void **state)
{
    fixture_t *fx = *state;
    fleet_set_accepting(fx->f, true, 1, 7);
    fake_conn_t *fc = open_conn(fx, 0);
    log_begin(fx);
    bool closing = heartbeat(fc, 10.0, 1, 1, 5);
    const char *log = log_end(fx);
    assert_true(closing);
    assert_logged(log, "expected Hello as the first frame");
    assert_int_equal(fc->n_sent, 1); /* the Challenge only */
    assert_refused_no_worker(fx, fc);
    /* frames already read after the close are dropped (and freed) */
    assert_true(hello(fc, "w1", 6));
    assert_int_equal(fc->n_sent, 1);
    assert_int_equal(fx->joins, 0);
    flush_closes(fx);
    assert_int_equal(fleet_conn_count(fx->f), 0);
}

static void assert_welcome(const fake_conn_t *fc, size_t i, const char *const *masters, size_t n)
{
    const Lc__Welcome *w = sent(fc, i, LC__ENVELOPE__MSG_WELCOME)->welcome;
    assert_int_equal(w->leader_id, 1);
    assert_int_equal(w->term, 7);
    assert_int_equal(w->heartbeat_ms, HEARTBEAT_MS);
    assert_int_equal(w->stats_interval_ms, STATS_MS);
    assert_int_equal(w->n_masters, n);
    for (size_t j = 0; j < n; j++)
        assert_string_equal(w->masters[j], masters[j]);
}

static void test_hello_while_accepting_welcomes(void **state)
{
    fixture_t *fx = *state;
    fx->masters[0] = "10.0.0.100:5557";
    fx->masters[1] = "10.0.0.101:5557";
    fx->masters[2] = "10.0.0.102:5557";
    fx->n_masters = 3;
    fleet_set_accepting(fx->f, true, 1, 7);
    fake_conn_t *fc = open_conn(fx, 0);
    Lc__RunLoad load = LC__RUN_LOAD__INIT, *running[] = {&load};
    load.run = 5;
    load.generation = 2;
    load.users = 10;
    load.connections = 3;
    Lc__Hello h = hello_for("w1");
    h.threads = 4;
    h.capacity = 250;
    h.running = running;
    h.n_running = 1;
    assert_false(hello_send(fc, &h, 42));

    assert_int_equal(fc->n_sent, 2);
    assert_welcome(fc, 1, fx->masters, 3);
    assert_int_equal(fc->closes, 0);
    assert_int_equal(fx->joins, 1);
    assert_int_equal(fx->joined_running, 1);
    fleet_worker_t *w = fleet_find(fx->f, "w1");
    assert_non_null(w);
    assert_ptr_equal(fx->joined, w);
    assert_ptr_equal(w->conn, fc->c);
    assert_string_equal(w->name, "host-a");
    assert_string_equal(w->address, "10.0.0.1:40000");
    assert_int_equal(w->threads, 4);
    assert_int_equal(w->sat.capacity, 250);
    assert_int_equal(w->sat.effective_capacity, 250);
    assert_false(w->sat.saturated);
    assert_int_equal(w->last_seen_ms, 42);
    assert_int_equal(w->n_loads, 1);
    assert_int_equal(w->loads[0].run, 5);
    assert_int_equal(w->loads[0].generation, 2);
    assert_int_equal(w->loads[0].users, 10);
    assert_int_equal(w->loads[0].connections, 3);
    size_t n;
    fleet_worker_t **connected = fleet_connected(fx->f, &n);
    assert_int_equal(n, 1);
    assert_ptr_equal(connected[0], w);
    assert_null(fleet_find(fx->f, "w2"));

    /* no master list from the event: the advertise address */
    fx->n_masters = 0;
    fake_conn_t *fc2 = open_conn(fx, 50);
    assert_false(hello(fc2, "w2", 50));
    const char *advertise[] = {"10.0.0.100:5557"};
    assert_welcome(fc2, 1, advertise, 1);
    assert_int_equal(fx->joins, 2);
    connected = fleet_connected(fx->f, &n);
    assert_int_equal(n, 2);
    assert_string_equal(connected[0]->id, "w1"); /* join order */
    assert_string_equal(connected[1]->id, "w2");
}

static void test_hello_while_not_accepting_redirects(void **state)
{
    fixture_t *fx = *state;
    fleet_set_accepting(fx->f, false, 2, 8);
    fx->leader = "10.0.0.102:5557";
    fake_conn_t *fc = open_conn(fx, 0);
    assert_true(hello(fc, "w1", 1));
    assert_int_equal(fc->n_sent, 2);
    assert_string_equal(sent(fc, 1, LC__ENVELOPE__MSG_REDIRECT)->redirect->leader,
                        "10.0.0.102:5557");
    assert_refused_no_worker(fx, fc);

    /* During an election: the Hello waits for a leader instead of being closed... */
    fx->leader = NULL;
    fake_conn_t *fc2 = open_conn(fx, 0), *fc3 = open_conn(fx, 0);
    assert_false(hello(fc2, "w1", 10));
    assert_false(hello(fc3, "w2", 10));
    fleet_tick(fx->f, 1000);
    assert_int_equal(fc2->closes, 0);
    assert_int_equal(fc2->n_sent, 1); /* the Challenge only */
    assert_int_equal(fx->joins, 0);
    /* ...and is sent on at the first tick that knows one. */
    fx->leader = "10.0.0.103:5557";
    fleet_tick(fx->f, 1250);
    assert_string_equal(sent(fc2, 1, LC__ENVELOPE__MSG_REDIRECT)->redirect->leader,
                        "10.0.0.103:5557");
    assert_refused_no_worker(fx, fc2);
    assert_refused_no_worker(fx, fc3);

    /* With no leader for PARK_MAX_MS (3 s), it is closed and the worker backs off. */
    fx->leader = NULL;
    fake_conn_t *fc4 = open_conn(fx, 2000);
    assert_false(hello(fc4, "w1", 2000));
    fleet_tick(fx->f, 5000);
    assert_int_equal(fc4->closes, 0);
    log_begin(fx);
    fleet_tick(fx->f, 5001);
    const char *log = log_end(fx);
    assert_logged(log, "no leader known yet");
    assert_int_equal(fc4->n_sent, 1); /* no Redirect */
    assert_refused_no_worker(fx, fc4);
}

/* At most 128 Hellos wait for a leader at once; the next is closed at once. */
static void test_parked_hellos_bounded(void **state)
{
    fixture_t *fx = *state;
    fleet_set_accepting(fx->f, false, 2, 8);
    fx->leader = NULL;
    for (int i = 0; i < 128; i++) {
        char id[16];
        snprintf(id, sizeof id, "w%d", i);
        assert_false(hello(open_conn(fx, 0), id, 1));
    }
    fake_conn_t *extra = open_conn(fx, 0);
    log_begin(fx);
    assert_true(hello(extra, "w-extra", 1));
    assert_logged(log_end(fx), "no leader known yet");
}

static void test_bad_hellos_close(void **state)
{
    fixture_t *fx = *state;
    fleet_set_accepting(fx->f, true, 1, 7);
    char id65[66];
    memset(id65, 'x', 65);
    id65[65] = '\0';
    struct {
        const char *id;
        uint32_t version, threads;
        const char *reason;
    } cases[] = {
        {"w1", LC_PROTOCOL_VERSION + 1, 2, "unsupported protocol version"},
        {"w1", 0, 2, "unsupported protocol version"},
        {"", LC_PROTOCOL_VERSION, 2, "worker id must be 1 to 64 characters"},
        {id65, LC_PROTOCOL_VERSION, 2, "worker id must be 1 to 64 characters"},
        {"a b", LC_PROTOCOL_VERSION, 2, "worker id has characters other than printable ASCII"},
        {"a\"b", LC_PROTOCOL_VERSION, 2, "worker id has characters other than printable ASCII"},
        {"a\x7f", LC_PROTOCOL_VERSION, 2, "worker id has characters other than printable ASCII"},
        {"w1", LC_PROTOCOL_VERSION, 0, "threads must be 1 to 4096"},
    };
    _Static_assert(sizeof cases / sizeof cases[0] <= MAX_CONNS, "one connection per case");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fake_conn_t *fc = open_conn(fx, 0);
        Lc__Hello h = hello_for(cases[i].id);
        h.protocol_version = cases[i].version;
        h.threads = cases[i].threads;
        log_begin(fx);
        bool closing = hello_send(fc, &h, 1);
        const char *log = log_end(fx);
        assert_true(closing);
        assert_logged(log, cases[i].reason);
        assert_int_equal(fc->n_sent, 1); /* neither Welcome nor JoinRefused */
        assert_refused_no_worker(fx, fc);
        flush_closes(fx);
    }
    assert_int_equal(fleet_conn_count(fx->f), 0);
}

/* The limits themselves are accepted: a 64-character id, 4096 threads. */
static void test_hello_limits_accepted(void **state)
{
    fixture_t *fx = *state;
    fleet_set_accepting(fx->f, true, 1, 7);
    char id64[65];
    memset(id64, 'x', 64);
    id64[64] = '\0';
    fake_conn_t *fc = open_conn(fx, 0);
    Lc__Hello h = hello_for(id64);
    h.threads = 4096;
    assert_false(hello_send(fc, &h, 1));
    sent(fc, 1, LC__ENVELOPE__MSG_WELCOME);
    assert_non_null(fleet_find(fx->f, id64));

    fake_conn_t *fc2 = open_conn(fx, 0);
    h = hello_for("w2");
    h.threads = 4097;
    assert_true(hello_send(fc2, &h, 1));
    assert_null(fleet_find(fx->f, "w2"));
}

static void test_join_secret(void **state)
{
    fixture_t *fx = *state;
    fleet_set_accepting(fx->f, true, 1, 7);

    fake_conn_t *none = open_conn(fx, 0);
    assert_true(hello(none, "w1", 1));
    assert_int_equal(none->n_sent, 2);
    assert_string_equal(sent(none, 1, LC__ENVELOPE__MSG_JOIN_REFUSED)->join_refused->reason,
                        "this cluster requires a join secret");
    assert_refused_no_worker(fx, none);

    uint8_t wrong[LC_JOIN_PROOF_LEN] = {0};
    fake_conn_t *bad = open_conn(fx, 0);
    Lc__Hello h = hello_for("w1");
    h.join_proof.data = wrong;
    h.join_proof.len = sizeof wrong;
    assert_true(hello_send(bad, &h, 1));
    assert_string_equal(sent(bad, 1, LC__ENVELOPE__MSG_JOIN_REFUSED)->join_refused->reason,
                        "join proof does not match the cluster's secret");
    assert_refused_no_worker(fx, bad);

    /* the right proof for another connection's nonce is a replay */
    fake_conn_t *good = open_conn(fx, 0), *replay = open_conn(fx, 0);
    uint8_t proof[LC_JOIN_PROOF_LEN];
    assert_int_equal(
        lc_join_proof_for(&fx->secret, nonce_of(good), LC_JOIN_NONCE_LEN, "w1", proof), 0);
    h.join_proof.data = proof;
    h.join_proof.len = sizeof proof;
    assert_true(hello_send(replay, &h, 1));
    sent(replay, 1, LC__ENVELOPE__MSG_JOIN_REFUSED);
    assert_refused_no_worker(fx, replay);

    /* a proof of the wrong length */
    fake_conn_t *shortp = open_conn(fx, 0);
    uint8_t short_proof[LC_JOIN_PROOF_LEN];
    assert_int_equal(
        lc_join_proof_for(&fx->secret, nonce_of(shortp), LC_JOIN_NONCE_LEN, "w1", short_proof), 0);
    h.join_proof.data = short_proof;
    h.join_proof.len = sizeof short_proof - 1;
    assert_true(hello_send(shortp, &h, 1));
    sent(shortp, 1, LC__ENVELOPE__MSG_JOIN_REFUSED);
    assert_refused_no_worker(fx, shortp);

    /* the right nonce, but the proof made for another worker id */
    fake_conn_t *other = open_conn(fx, 0);
    uint8_t other_proof[LC_JOIN_PROOF_LEN];
    assert_int_equal(
        lc_join_proof_for(&fx->secret, nonce_of(other), LC_JOIN_NONCE_LEN, "w2", other_proof), 0);
    h.join_proof.data = other_proof;
    assert_true(hello_send(other, &h, 1));
    assert_string_equal(sent(other, 1, LC__ENVELOPE__MSG_JOIN_REFUSED)->join_refused->reason,
                        "join proof does not match the cluster's secret");
    assert_refused_no_worker(fx, other);

    h.join_proof.data = proof;
    h.join_proof.len = sizeof proof;
    assert_false(hello_send(good, &h, 1));
    assert_int_equal(good->n_sent, 2);
    sent(good, 1, LC__ENVELOPE__MSG_WELCOME);
    assert_int_equal(good->closes, 0);
    assert_int_equal(fx->joins, 1);
    assert_ptr_equal(fleet_find(fx->f, "w1")->conn, good->c);
}

/* A live worker keeps its id: a second connection claiming it is refused.
 * One silent for a heartbeat interval (restarted, half-open) is replaced. */
static void test_same_worker_id_replaces_connection(void **state)
{
    fixture_t *fx = *state;
    fleet_set_accepting(fx->f, true, 1, 7);
    fake_conn_t *first = open_conn(fx, 0), *thief = open_conn(fx, 0), *second = open_conn(fx, 0);
    assert_false(hello(first, "w1", 1));
    fleet_worker_t *w = fleet_find(fx->f, "w1");
    assert_ptr_equal(w->conn, first->c);
    log_begin(fx);
    assert_true(hello(thief, "w1", 1 + HEARTBEAT_MS));
    const char *log = log_end(fx);
    assert_logged(log, "worker id already connected and alive");
    assert_string_equal(sent(thief, 1, LC__ENVELOPE__MSG_JOIN_REFUSED)->join_refused->reason,
                        "this worker id is connected from another address");
    assert_int_equal(first->closes, 0);
    assert_ptr_equal(w->conn, first->c);
    log_begin(fx);
    bool closing = hello(second, "w1", 2 + HEARTBEAT_MS);
    log = log_end(fx);
    assert_false(closing);
    assert_logged(log, "replaced by a new connection of the same worker");
    assert_int_equal(first->closes, 1);
    assert_int_equal(second->closes, 0);
    sent(second, 1, LC__ENVELOPE__MSG_WELCOME);
    assert_ptr_equal(fleet_find(fx->f, "w1"), w); /* the same worker, not a second one */
    assert_ptr_equal(w->conn, second->c);
    assert_int_equal(w->last_seen_ms, 2 + HEARTBEAT_MS);
    assert_int_equal(fx->joins, 2);
    /* the first connection's close callback does not disconnect the worker */
    flush_closes(fx);
    assert_ptr_equal(w->conn, second->c);
    size_t n;
    fleet_known(fx->f, &n);
    assert_int_equal(n, 1);
    assert_int_equal(fleet_count_connected(fx->f), 1);
    assert_int_equal(fleet_conn_count(fx->f), 1);
}

/* An attacker (or a confused worker) says Hello as A and then as B on one
 * connection; after the disconnect A must not keep a pointer to it. */
static void test_second_hello_other_id_same_conn(void **state)
{
    fixture_t *fx = *state;
    /* Issue 12: this was a heap-use-after-free (A->conn left pointing at the
     * freed connection). A connection now speaks for one worker id. */
    fleet_set_accepting(fx->f, true, 1, 7);
    fake_conn_t *fc = open_conn(fx, 0);
    assert_false(hello(fc, "A", 1));
    log_begin(fx);
    assert_true(hello(fc, "B", 2));
    assert_logged(log_end(fx), "a second Hello on a joined connection");
    assert_null(fleet_find(fx->f, "B"));
    fleet_conn_close(fc->c, "test: disconnect");
    flush_closes(fx);
    fleet_tick(fx->f, 2 + 3 * HEARTBEAT_MS + 1);
    size_t n;
    fleet_known(fx->f, &n);
    json_t *list = fleet_workers_json(fx->f);
    assert_non_null(list);
    assert_int_equal(json_array_size(list), n);
    json_decref(list);
    /* whatever the fix (refuse the second Hello, or move the connection),
     * both are silent past the limit and gone, and nothing is connected */
    assert_int_equal(n, 0);
    assert_int_equal(fleet_count_connected(fx->f), 0);
    assert_false(fx->lost_had_conn);
}

/* fleet.h allows a transport to call fleet_conn_gone from close "at once":
 * the loops that close several connections survive it. */
static void test_gone_at_once_from_tick_and_leadership(void **state)
{
    fixture_t *fx = *state;
    fx->gone_at_once = true;
    fleet_set_accepting(fx->f, true, 1, 7);
    fake_conn_t *silent1 = open_conn(fx, 0), *silent2 = open_conn(fx, 0);
    fake_conn_t *a = open_conn(fx, 0), *b = open_conn(fx, 0), *c = open_conn(fx, 0);
    assert_false(hello(a, "A", 0));
    assert_false(hello(b, "B", 0));
    assert_false(hello(c, "C", 0));
    /* replacing B's connection frees the old one at once */
    fake_conn_t *b2 = open_conn(fx, 0);
    assert_false(hello(b2, "B", HEARTBEAT_MS + 1)); /* B silent for an interval */
    assert_true(b->gone);
    assert_ptr_equal(fleet_find(fx->f, "B")->conn, b2->c);
    heartbeat(c, 1.0, 1, 0, 5000);
    heartbeat(b2, 1.0, 1, 0, 5000);
    fleet_tick(fx->f, 5001); /* two silent connections and A, all freed in the loop */
    assert_true(silent1->gone && silent2->gone && a->gone);
    assert_int_equal(fx->lost, 1);
    assert_string_equal(fx->lost_id, "A");
    assert_int_equal(fleet_conn_count(fx->f), 2);
    fleet_set_accepting(fx->f, false, 2, 8);
    assert_true(c->gone && b2->gone);
    assert_int_equal(fleet_conn_count(fx->f), 0);
    size_t n;
    fleet_known(fx->f, &n);
    assert_int_equal(n, 2);
}

/* ...but a frame that makes fleet_conn_receive close its connection does not. */
static void test_gone_at_once_from_receive(void **state)
{
    fixture_t *fx = *state;
    /* This was a heap-use-after-free (fleet_conn_receive read c after the
     * close it caused freed it); the free now waits for the dispatch's end. */
    fx->gone_at_once = true;
    fleet_set_accepting(fx->f, true, 1, 7);
    fake_conn_t *fc = open_conn(fx, 0);
    assert_true(heartbeat(fc, 1.0, 1, 0, 1)); /* not Hello: closed */
    assert_true(fc->gone);
    assert_int_equal(fleet_conn_count(fx->f), 0);
}

/* ---- heartbeats, stats, refusals ----------------------------------------- */

static void test_heartbeat_updates_and_saturates(void **state)
{
    fixture_t *fx = *state;
    fleet_set_accepting(fx->f, true, 1, 7);
    fake_conn_t *fc = open_conn(fx, 0);
    assert_false(hello(fc, "w1", 0));
    fleet_worker_t *w = fleet_find(fx->f, "w1");
    assert_int_equal(fleet_saturation_epoch(fx->f), 0);

    assert_false(heartbeat(fc, 42.5, 123456789, 60, 1000));
    assert_true(w->cpu_percent == 42.5);
    assert_int_equal(w->rss_bytes, 123456789);
    assert_int_equal(w->last_seen_ms, 1000);
    assert_int_equal(w->n_loads, 1);
    assert_int_equal(w->loads[0].run, 5);
    assert_int_equal(w->loads[0].generation, 1);
    assert_int_equal(w->loads[0].users, 60);
    assert_int_equal(w->loads[0].connections, 120);
    assert_int_equal(fleet_saturation_epoch(fx->f), 0);

    assert_false(heartbeat(fc, 95.0, 1, 80, 2000));
    assert_false(heartbeat(fc, 95.0, 1, 80, 3000));
    assert_int_equal(fleet_saturation_epoch(fx->f), 0);
    assert_int_equal(w->sat.effective_capacity, 100);
    assert_false(heartbeat(fc, 95.0, 1, 80, 4000));
    assert_int_equal(fleet_saturation_epoch(fx->f), 1);
    assert_true(w->sat.saturated);
    assert_int_equal(w->sat.effective_capacity, 72); /* 90 % of the 80 users it runs */
    json_t *list = fleet_workers_json(fx->f);
    json_t *row = worker_json(fx, list, "w1");
    assert_int_equal(json_integer_value(json_object_get(row, "effective_capacity")), 72);
    assert_int_equal(json_integer_value(json_object_get(row, "capacity")), 100);
    assert_true(json_is_true(json_object_get(row, "saturated")));
    json_decref(list);

    /* warm heartbeats change nothing; cool ones give a step back */
    for (int i = 0; i < 5; i++)
        heartbeat(fc, 80.0, 1, 72, 5000 + (uint64_t)i);
    assert_int_equal(fleet_saturation_epoch(fx->f), 1);
    for (int i = 0; i < 3; i++)
        heartbeat(fc, 10.0, 1, 72, 6000 + (uint64_t)i);
    assert_int_equal(fleet_saturation_epoch(fx->f), 2);
    assert_int_equal(w->sat.effective_capacity, 82); /* 72 + max(28 / 4, 10) */
    assert_int_equal(fx->joins, 1);
    assert_int_equal(fc->n_sent, 2); /* a heartbeat is not answered */
}

static void test_stats_batch(void **state)
{
    fixture_t *fx = *state;
    fleet_set_accepting(fx->f, true, 1, 7);
    fake_conn_t *c1 = open_conn(fx, 0), *c2 = open_conn(fx, 0);
    assert_false(hello(c1, "w1", 0));
    assert_false(hello(c2, "w2", 0));
    assert_false(stats_batch(c1, "w1", 9, 4));
    assert_int_equal(fx->stats, 1);
    assert_ptr_equal(fx->stats_worker, fleet_find(fx->f, "w1"));
    assert_int_equal(fx->stats_run, 9);
    assert_int_equal(fx->stats_seq, 4);
    assert_int_equal(fleet_find(fx->f, "w1")->last_seen_ms, 10);

    log_begin(fx);
    bool closing = stats_batch(c2, "w1", 9, 5);
    const char *log = log_end(fx);
    assert_true(closing);
    assert_logged(log, "stats batch names another worker");
    assert_int_equal(fx->stats, 1);
    assert_int_equal(c2->closes, 1);
    assert_null(fleet_find(fx->f, "w2")->conn);
    assert_ptr_equal(fleet_find(fx->f, "w1")->conn, c1->c);
    assert_int_equal(fleet_count_connected(fx->f), 1);
}

static void test_assign_refused(void **state)
{
    fixture_t *fx = *state;
    fleet_set_accepting(fx->f, true, 1, 7);
    fake_conn_t *fc = open_conn(fx, 0);
    assert_false(hello(fc, "w1", 0));
    Lc__AssignRefused r = LC__ASSIGN_REFUSED__INIT;
    r.run = 9;
    r.generation = 3;
    r.reason = "scenario needs a feature this worker lacks";
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_ASSIGN_REFUSED;
    env.assign_refused = &r;
    assert_false(receive(fc, &env, 5));
    assert_int_equal(fx->refused, 1);
    assert_ptr_equal(fx->refused_worker, fleet_find(fx->f, "w1"));
    assert_int_equal(fx->refused_run, 9);
    assert_int_equal(fx->refused_generation, 3);
    assert_string_equal(fx->refused_reason, "scenario needs a feature this worker lacks");
    assert_int_equal(fc->closes, 0);
}

/* ---- messages to a worker ------------------------------------------------ */

static void test_send_to_connected_worker(void **state)
{
    fixture_t *fx = *state;
    fleet_set_accepting(fx->f, true, 1, 7);
    fake_conn_t *fc = open_conn(fx, 0);
    assert_false(hello(fc, "w1", 0));
    fleet_assign_t a = {.run = 11, .generation = 2, .users = 30, .spawn_rate = 2.5,
                        .rate = 7.25, .scenario_json = "{\"tasks\":[]}", .elapsed_ms = 1500};
    assert_int_equal(fleet_send_assign(fx->f, "w1", &a), 0);
    const Lc__Assign *as = sent(fc, 2, LC__ENVELOPE__MSG_ASSIGN)->assign;
    assert_int_equal(as->run, 11);
    assert_int_equal(as->generation, 2);
    assert_int_equal(as->users, 30);
    assert_true(as->spawn_rate == 2.5);
    assert_true(as->rate == 7.25);
    assert_string_equal(as->scenario_json, "{\"tasks\":[]}");
    assert_int_equal(as->elapsed_ms, 1500);

    assert_int_equal(fleet_send_stop(fx->f, "w1", 11, "stopped by user"), 0);
    const Lc__Stop *st = sent(fc, 3, LC__ENVELOPE__MSG_STOP)->stop;
    assert_int_equal(st->run, 11);
    assert_string_equal(st->reason, "stopped by user");

    assert_int_equal(fleet_send_ack(fx->f, "w1", 11, 77), 0);
    const Lc__StatsAck *ack = sent(fc, 4, LC__ENVELOPE__MSG_STATS_ACK)->stats_ack;
    assert_int_equal(ack->run, 11);
    assert_int_equal(ack->seq, 77);
    assert_int_equal(fc->n_sent, 5);

    json_t *list = fleet_workers_json(fx->f);
    json_t *runs = json_object_get(worker_json(fx, list, "w1"), "runs");
    assert_int_equal(json_array_size(runs), 1);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(runs, 0), "run")), 11);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(runs, 0), "users")), 30);
    assert_true(json_is_true(json_object_get(worker_json(fx, list, "w1"), "connected")));
    json_decref(list);
}

static void test_send_to_unknown_or_disconnected(void **state)
{
    fixture_t *fx = *state;
    fleet_set_accepting(fx->f, true, 1, 7);
    fleet_assign_t a = {.run = 12, .generation = 1, .users = 25, .scenario_json = "{}"};
    assert_int_equal(fleet_send_assign(fx->f, "nobody", &a), LC_ENOTFOUND);
    assert_int_equal(fleet_send_stop(fx->f, "nobody", 12, "x"), LC_ENOTFOUND);
    assert_int_equal(fleet_send_ack(fx->f, "nobody", 12, 1), LC_ENOTFOUND);
    assert_null(fleet_find(fx->f, "nobody")); /* the assign did not create it */

    fake_conn_t *fc = open_conn(fx, 0);
    assert_false(hello(fc, "w1", 0));
    fleet_conn_close(fc->c, NULL);
    /* disconnected as soon as the close starts, before the transport is done */
    assert_int_equal(fleet_send_stop(fx->f, "w1", 12, "x"), LC_ECLOSED);
    flush_closes(fx);
    assert_int_equal(fleet_send_assign(fx->f, "w1", &a), LC_ECLOSED);
    assert_int_equal(fleet_send_stop(fx->f, "w1", 12, "x"), LC_ECLOSED);
    assert_int_equal(fleet_send_ack(fx->f, "w1", 12, 1), LC_ECLOSED);
    assert_int_equal(fc->n_sent, 2); /* Challenge and Welcome only */

    json_t *list = fleet_workers_json(fx->f);
    json_t *row = worker_json(fx, list, "w1");
    assert_true(json_is_false(json_object_get(row, "connected")));
    json_t *runs = json_object_get(row, "runs");
    assert_int_equal(json_array_size(runs), 1);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(runs, 0), "run")), 12);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(runs, 0), "users")), 25);
    assert_int_equal(
        json_integer_value(json_object_get(json_array_get(runs, 0), "running_users")), 0);
    json_decref(list);

    /* users 0 forgets the share */
    a.users = 0;
    assert_int_equal(fleet_send_assign(fx->f, "w1", &a), LC_ECLOSED);
    assert_int_equal(fleet_find(fx->f, "w1")->n_assigned, 0);
}

/* ---- liveness and leadership --------------------------------------------- */

static void test_no_hello_within_5s(void **state)
{
    fixture_t *fx = *state;
    fleet_set_accepting(fx->f, true, 1, 7);
    fake_conn_t *plain = open_conn(fx, 1000), *tls = open_conn(fx, 1000);
    fake_conn_t *worker = open_conn(fx, 1000);
    tls->secured = false;
    assert_false(hello(worker, "w1", 1000));
    heartbeat(worker, 1.0, 1, 0, 5500);
    fleet_tick(fx->f, 6000); /* 5 s exactly: still in time */
    assert_int_equal(plain->closes, 0);
    assert_int_equal(tls->closes, 0);
    log_begin(fx);
    fleet_tick(fx->f, 6001);
    const char *log = log_end(fx);
    assert_int_equal(plain->closes, 1);
    assert_int_equal(tls->closes, 1);
    assert_int_equal(worker->closes, 0);
    assert_logged(log, "peer=10.0.0.1:40000 worker=- reason=\"no Hello within 5 s\"");
    assert_logged(log, "peer=10.0.0.2:40000 worker=- reason=\"no TLS handshake within 5 s");
    flush_closes(fx);
    assert_int_equal(fleet_conn_count(fx->f), 1);
    assert_int_equal(fleet_count_connected(fx->f), 1);
}

static void test_silent_worker_is_lost(void **state)
{
    fixture_t *fx = *state;
    fleet_set_accepting(fx->f, true, 1, 7);
    fake_conn_t *a = open_conn(fx, 0), *b = open_conn(fx, 0);
    assert_false(hello(a, "A", 0));
    assert_false(hello(b, "B", 0));
    heartbeat(b, 1.0, 1, 0, 2500);
    fleet_tick(fx->f, 3 * HEARTBEAT_MS); /* 3 intervals exactly: still alive */
    assert_int_equal(fx->lost, 0);
    log_begin(fx);
    fleet_tick(fx->f, 3 * HEARTBEAT_MS + 1);
    const char *log = log_end(fx);
    assert_logged(log, "reason=\"missed 3 heartbeats\"");
    assert_int_equal(fx->lost, 1);
    assert_string_equal(fx->lost_id, "A");
    assert_false(fx->lost_had_conn); /* closed before on_lost */
    assert_int_equal(a->closes, 1);
    assert_int_equal(b->closes, 0);
    assert_null(fleet_find(fx->f, "A"));
    size_t n;
    fleet_worker_t *const *known = fleet_known(fx->f, &n);
    assert_int_equal(n, 1);
    assert_string_equal(known[0]->id, "B");
    flush_closes(fx);
    fleet_tick(fx->f, 3 * HEARTBEAT_MS + 2);
    assert_int_equal(fx->lost, 1); /* once */

    /* a disconnected worker is lost the same way, on its last frame's clock */
    fleet_conn_close(b->c, NULL);
    flush_closes(fx);
    fleet_tick(fx->f, 2500 + 3 * HEARTBEAT_MS);
    assert_int_equal(fx->lost, 1);
    assert_non_null(fleet_find(fx->f, "B"));
    fleet_tick(fx->f, 2500 + 3 * HEARTBEAT_MS + 1);
    assert_int_equal(fx->lost, 2);
    assert_string_equal(fx->lost_id, "B");
    fleet_known(fx->f, &n);
    assert_int_equal(n, 0);
}

static void test_losing_leadership_closes_everything(void **state)
{
    fixture_t *fx = *state;
    fake_conn_t *early = open_conn(fx, 0);
    fleet_set_accepting(fx->f, false, 2, 6); /* not the leader, and was not */
    assert_int_equal(early->closes, 0);
    fleet_set_accepting(fx->f, true, 1, 7);
    assert_int_equal(early->closes, 0);
    fake_conn_t *a = open_conn(fx, 0), *b = open_conn(fx, 0);
    assert_false(hello(a, "A", 0));
    assert_false(hello(b, "B", 0));
    fleet_set_accepting(fx->f, true, 1, 7); /* still the leader: nothing */
    assert_int_equal(a->closes, 0);
    log_begin(fx);
    fleet_set_accepting(fx->f, false, 3, 8);
    const char *log = log_end(fx);
    assert_logged(log, "this master is no longer the leader");
    assert_int_equal(early->closes, 1);
    assert_int_equal(a->closes, 1);
    assert_int_equal(b->closes, 1);
    assert_int_equal(fleet_count_connected(fx->f), 0);
    size_t n;
    fleet_known(fx->f, &n);
    assert_int_equal(n, 2); /* disconnected, not lost */
    flush_closes(fx);
    assert_int_equal(fleet_conn_count(fx->f), 0);
    /* a new Hello now gets a Redirect */
    fx->leader = "10.0.0.103:5557";
    fake_conn_t *again = open_conn(fx, 10);
    assert_true(hello(again, "A", 10));
    sent(again, 1, LC__ENVELOPE__MSG_REDIRECT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_open_sends_challenge, setup, teardown),
        cmocka_unit_test_setup_teardown(test_first_frame_not_hello_closes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hello_while_accepting_welcomes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hello_while_not_accepting_redirects, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parked_hellos_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_hellos_close, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hello_limits_accepted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_join_secret, setup_secret, teardown),
        cmocka_unit_test_setup_teardown(test_same_worker_id_replaces_connection, setup, teardown),
        cmocka_unit_test_setup_teardown(test_second_hello_other_id_same_conn, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gone_at_once_from_tick_and_leadership, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_gone_at_once_from_receive, setup, teardown),
        cmocka_unit_test_setup_teardown(test_heartbeat_updates_and_saturates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stats_batch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_assign_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_send_to_connected_worker, setup, teardown),
        cmocka_unit_test_setup_teardown(test_send_to_unknown_or_disconnected, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_hello_within_5s, setup, teardown),
        cmocka_unit_test_setup_teardown(test_silent_worker_is_lost, setup, teardown),
        cmocka_unit_test_setup_teardown(test_losing_leadership_closes_everything, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
