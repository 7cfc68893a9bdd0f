/* swarm.h — what lc_swarm's parts share: its options, the synthetic workers and their runs
 * and outboxes, the whole swarm's state and counters (swarm.c), the protocol side
 * (swarm_conn.c) and the statistics side (swarm_batch.c). */
#ifndef LC_SWARM_H
#define LC_SWARM_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "lc_frame.h"
#include "lc_hist.h"
#include "lc_join.h"
#include "lc_protocol.h"
#include "lc_scenario.h"

#define MAX_ADDRS 16
#define MAX_RUNS 8            /* runs one synthetic worker holds at once */
#define MAX_PLANS 64          /* scenarios kept parsed, one per run */
#define MAX_RUN_STATS 64      /* runs counted in the summary */
#define LAT_TABLE 4096        /* precomputed latencies (lognormal), power of two */
#define READ_BUF (64u << 10)
#define BACKOFF_MIN_MS 100u

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

static inline uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static inline uint64_t now_ms(const swarm_t *s)
{
    return uv_now(s->loop);
}

/* swarm_conn.c: one connection a worker, speaking proto/cluster.proto. */

/* "host:port" → a loopback IPv4 address; false otherwise. */
bool swarm_parse_addr(const char *text, struct sockaddr_in *out);
/* Queues an idle worker for a handshake slot (swarm_pump starts it). */
void swarm_enqueue(worker_t *w);
/* Connects queued workers while fewer than --max-handshakes are in flight. */
void swarm_pump(swarm_t *s);
/* Writes a copy of data to w's connection (the caller keeps data); -1 when it cannot. */
int swarm_write_copy(worker_t *w, const uint8_t *data, size_t len);

/* swarm_batch.c: the plans, the tallies per run, and the batches. */

/* The tally of run, made on first use; NULL when MAX_RUN_STATS runs are counted. */
run_stat_t *swarm_run_stat(swarm_t *s, uint64_t run);
/* Run's plan, parsed from its scenario json on first use; NULL when it does not parse or
 * MAX_PLANS are kept. */
const plan_t *swarm_plan_get(swarm_t *s, uint64_t run, const char *json, size_t len);
/* Cuts one StatsBatch of r for the time since its last cut into the outbox,
 * and writes it when connected. */
void swarm_cut_batch(worker_t *w, wrun_t *r, bool final);
/* Latencies (µs) of a lognormal with a 20 ms median: realistic spreads over
 * a few dozen buckets per endpoint and second. */
void swarm_fill_lat_table(swarm_t *s, uint64_t *rng);

/* swarm.c: the summary. Records one send → ack time. */
void swarm_lat_push(swarm_t *s, uint64_t us);

#endif
