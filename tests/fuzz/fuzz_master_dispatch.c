/* fuzz_master_dispatch.c — the master's dispatch of workers' messages
 * (master/runs/fleet.c) through the transport seam of fleet.h, with no
 * socket: a fake transport keeps the last Challenge nonce of each connection
 * and drops every other send; its close calls fleet_conn_gone at once or
 * after the frame, as the input's first byte says.
 *
 * Input: a flags byte, then records of a control byte (connection 0..2,
 * close-after bit, clock step) and a frame (varint length + Envelope body).
 * Flags: a join secret or none; leader or follower; whether the harness
 * answers a Hello's challenge with the right proof (a fuzzer cannot compute
 * an HMAC); whether closes complete at once (fleet.h allows both;
 * LC_FUZZ_IGNORE=gone-at-once fuzzes only the later one). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fleet.h"
#include "fuzz_util.h"
#include "lc_frame.h"
#include "lc_join.h"

#define N_CONNS 3
#define MAX_FRAMES 128
/* fake_conn_t.c while fleet_conn_open runs. */
#define OPENING ((fleet_conn_t *)&opening_marker)
static char opening_marker;

enum {
    FLAG_SECRET = 1,
    FLAG_FOLLOWER = 2,
    FLAG_PROVE = 4,
    FLAG_GONE_AT_ONCE = 8,
};

typedef struct fake_conn_s {
    fleet_conn_t *c;     /* NULL: no connection in this slot */
    uint8_t nonce[LC_JOIN_NONCE_LEN];
    size_t nonce_len;
    bool close_asked;    /* closed by the fleet, gone not yet reported */
} fake_conn_t;

typedef struct harness_s {
    fake_conn_t conns[N_CONNS];
    bool gone_at_once;
    size_t sends, stats;
} harness_t;

static lc_join_secret_t secret = {.bytes = "fuzzing-join-secret-0123456789", .len = 30};

static int fake_send(void *arg, void *conn_data, const Lc__Envelope *env)
{
    harness_t *h = arg;
    fake_conn_t *fc = conn_data;
    h->sends++;
    uint8_t *frame = NULL;
    size_t len = 0;
    /* Every message must encode: fleet_net.c writes nothing else. */
    FUZZ_CHECK(lc_frame_encode(env, &frame, &len) == 0, "an outgoing message does not encode");
    free(frame);
    if (env->msg_case == LC__ENVELOPE__MSG_CHALLENGE && env->challenge->nonce.len <= sizeof fc->nonce) {
        memcpy(fc->nonce, env->challenge->nonce.data, env->challenge->nonce.len);
        fc->nonce_len = env->challenge->nonce.len;
    }
    return 0;
}

static void fake_close(void *arg, void *conn_data)
{
    harness_t *h = arg;
    fake_conn_t *fc = conn_data;
    FUZZ_CHECK(fc->c != NULL && !fc->close_asked, "a connection closed twice");
    fc->close_asked = true;
    /* Closed inside fleet_conn_open: its fleet_conn_t is not known yet. */
    if (h->gone_at_once && fc->c != OPENING) {
        fleet_conn_t *c = fc->c;
        fc->c = NULL;
        fc->close_asked = false;
        fleet_conn_gone(c);
    }
}

/* The transport's later close callbacks. */
static void reap(harness_t *h)
{
    for (size_t i = 0; i < N_CONNS; i++) {
        fake_conn_t *fc = &h->conns[i];
        if (fc->c != NULL && fc->close_asked) {
            fleet_conn_t *c = fc->c;
            fc->c = NULL;
            fc->close_asked = false;
            fleet_conn_gone(c);
        }
    }
}

static void on_join(void *arg, fleet_worker_t *w, const Lc__Hello *hello) {}
static void on_lost(void *arg, fleet_worker_t *w) {}

static void on_stats(void *arg, fleet_worker_t *w, Lc__Envelope *env)
{
    harness_t *h = arg;
    h->stats++;
    lc__envelope__free_unpacked(env, NULL);
}

static bool leader_address(void *arg, char *buf, size_t len)
{
    snprintf(buf, len, "127.0.0.2:5557");
    return true;
}

static size_t master_addresses(void *arg, char (*out)[LC_HOST_MAX + 8], size_t max)
{
    if (max < 2)
        return 0;
    snprintf(out[0], sizeof out[0], "127.0.0.1:5557");
    snprintf(out[1], sizeof out[1], "[::1]:5557");
    return 2;
}

static void on_refused(void *arg, fleet_worker_t *w, const Lc__AssignRefused *refused) {}
static void on_feed_request(void *arg, fleet_worker_t *w, const Lc__FeedRequest *req) {}

/* A Hello gets the proof of its connection's challenge when asked to. */
static void prove(const fake_conn_t *fc, Lc__Envelope *env, uint8_t proof[LC_JOIN_PROOF_LEN])
{
    if (env->msg_case != LC__ENVELOPE__MSG_HELLO || fc->nonce_len == 0)
        return;
    if (lc_join_proof(&secret, fc->nonce, fc->nonce_len, proof) != 0)
        return;
    /* The envelope's own bytes go with free_unpacked; point at ours. */
    Lc__Hello *hello = env->hello;
    free(hello->join_proof.data);
    hello->join_proof.data = malloc(LC_JOIN_PROOF_LEN);
    if (hello->join_proof.data == NULL)
        abort();
    memcpy(hello->join_proof.data, proof, LC_JOIN_PROOF_LEN);
    hello->join_proof.len = LC_JOIN_PROOF_LEN;
}

static void open_conn(fleet_t *f, harness_t *h, size_t i, uint64_t now)
{
    static const char *const peers[N_CONNS] = {"10.0.0.1:40001", "10.0.0.2:40002", "[fd00::3]:1"};
    fake_conn_t *fc = &h->conns[i];
    memset(fc, 0, sizeof *fc);
    fc->c = OPENING; /* fleet_conn_open may close it before it returns */
    fc->c = fleet_conn_open(f, fc, peers[i], now);
    if (fc->c == NULL)
        fc->close_asked = false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet_log();
    fuzz_in_t in = {data, size};
    uint8_t flags = fuzz_u8(&in);
    static int gone_later = -1;
    if (gone_later < 0)
        gone_later = fuzz_ignored("gone-at-once");
    harness_t h = {.gone_at_once = (flags & FLAG_GONE_AT_ONCE) && !gone_later};
    fleet_config_t cfg = {.listen_host = "127.0.0.1", .listen_port = 5557,
                          .advertise = "127.0.0.1:5557", .heartbeat_ms = 1000,
                          .stats_interval_ms = 1000,
                          .join_secret = flags & FLAG_SECRET ? &secret : NULL};
    fleet_events_t ev = {.arg = &h, .on_join = on_join, .on_lost = on_lost, .on_stats = on_stats,
                         .leader_address = leader_address, .master_addresses = master_addresses,
                         .on_refused = on_refused, .on_feed_request = on_feed_request};
    fleet_transport_t tr = {.arg = &h, .send = fake_send, .close = fake_close};
    fleet_t *f;
    if (fleet_new(&f, &cfg, &ev, &tr) != 0)
        abort();
    fleet_set_accepting(f, !(flags & FLAG_FOLLOWER), 1, 3);
    uint64_t now = 1000000;
    for (size_t i = 0; i < N_CONNS; i++)
        open_conn(f, &h, i, now);

    const uint8_t *body;
    size_t len;
    for (int frames = 0; frames < MAX_FRAMES; frames++) {
        uint8_t ctl = fuzz_u8(&in);
        if (!fuzz_record(&in, &body, &len))
            break;
        now += (uint64_t)(ctl >> 3) * 250;
        size_t i = (ctl & 3) % N_CONNS;
        if (h.conns[i].c == NULL)
            open_conn(f, &h, i, now); /* a worker reconnecting */
        fake_conn_t *fc = &h.conns[i];
        Lc__Envelope *env;
        char err[160];
        if (fc->c == NULL || fc->close_asked)
            continue;
        if (lc_frame_decode(body, len, &env, err, sizeof err) != 0) {
            fleet_conn_close(fc->c, "bad frame"); /* as fleet_net.c does */
        } else {
            uint8_t proof[LC_JOIN_PROOF_LEN];
            if (flags & FLAG_PROVE)
                prove(fc, env, proof);
            bool closing = fleet_conn_receive(fc->c, env, now);
            FUZZ_CHECK(!closing || fc->c == NULL || fc->close_asked,
                       "receive says closing but the transport was not asked to close");
            if (fc->c != NULL && !fc->close_asked && (ctl & 4))
                fleet_conn_close(fc->c, "closed by the fuzzer");
        }
        reap(&h);
        if ((ctl & 0xf8) == 0xf8)
            fleet_tick(f, now);
    }
    json_decref(fleet_workers_json(f));
    size_t n;
    fleet_connected(f, &n);
    fleet_known(f, &n);
    fleet_send_ack(f, "w1", 1, 1);
    fleet_assign_t a = {.run = 1, .generation = 1, .users = 5, .spawn_rate = 1,
                        .scenario_json = "{}"};
    fleet_send_assign(f, "w1", &a);
    fleet_send_stop(f, "w1", 1, "fuzz");
    fleet_forget_run(f, 1);
    /* Liveness with an advancing clock: past the Hello deadline, then past
     * three missed heartbeats. */
    for (int step = 0; step < 4; step++) {
        now += 2500;
        fleet_tick(f, now);
        reap(&h);
    }
    fleet_close_connections(f, "fuzz input done");
    reap(&h);
    FUZZ_CHECK(fleet_conn_count(f) == 0, "%zu connections left", fleet_conn_count(f));
    fleet_free(f);
    return 0;
}
