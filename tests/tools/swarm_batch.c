/* swarm_batch.c — lc_swarm's statistics side: the runs' plans and tallies, the synthetic
 * latency histograms (lc_hist_record, lc_hist_encode) and the StatsBatches it cuts into a
 * worker's outbox. */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "lc_frame.h"
#include "lc_hist.h"
#include "lc_protocol.h"
#include "lc_scenario.h"
#include "swarm.h"

#define HIST_SAMPLES_MAX 512  /* values recorded per endpoint and batch; more are weighted */

run_stat_t *swarm_run_stat(swarm_t *s, uint64_t run)
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

const plan_t *swarm_plan_get(swarm_t *s, uint64_t run, const char *json, size_t len)
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
void swarm_cut_batch(worker_t *w, wrun_t *r, bool final)
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
        swarm_write_copy(w, ent->frame, ent->len);
    }
}

/* Latencies (µs) of a lognormal with a 20 ms median: realistic spreads over
 * a few dozen buckets per endpoint and second. */
void swarm_fill_lat_table(swarm_t *s, uint64_t *rng)
{
    for (size_t i = 0; i < LAT_TABLE; i++) {
        double u1 = ((double)(rng_next(rng) >> 11) + 1.0) / 9007199254740993.0;
        double u2 = (double)(rng_next(rng) >> 11) / 9007199254740992.0;
        double z = sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
        double v = 20000.0 * exp(0.35 * z);
        s->lat_table[i] = v < 200 ? 200 : v > 5e6 ? 5000000 : (uint32_t)v;
    }
}
