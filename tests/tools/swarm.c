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
 * SIGINT/SIGTERM print the summary so far.
 *
 * This file: the options, the summary and the clock of the whole swarm; the protocol is
 * spoken in swarm_conn.c, the statistics made in swarm_batch.c. */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "lc_hist.h"
#include "lc_join.h"
#include "lc_scenario.h"
#include "swarm.h"

#define GRACE_MS 10000u       /* after --duration: final batches and their acks */

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

void swarm_lat_push(swarm_t *s, uint64_t us)
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
                    swarm_cut_batch(&s->w[i], &s->w[i].runs[k], true);
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
        if (o->n_addrs == MAX_ADDRS || !swarm_parse_addr(tok, &o->addrs[o->n_addrs])) {
            fprintf(stderr, "lc_swarm: %s: not an IPv4 loopback host:port\n", tok);
            return -1;
        }
        o->addr_text[o->n_addrs++] = tok;
    }
    return o->n_addrs > 0 ? 0 : -1;
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
    swarm_fill_lat_table(s, &rng);
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
        swarm_enqueue(w);
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
    swarm_pump(s);
    uv_run(s->loop, UV_RUN_DEFAULT);
    if (!s->finished)
        print_summary(s);
    /* Sockets and timers end with the process. */
    return 0;
}
