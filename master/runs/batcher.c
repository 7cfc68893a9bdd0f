/* batcher.c — StatsBatch queueing, RunSeconds proposals, StatsAck after
 * commit. It only bundles batches: the FSM's SQL (store_stats.c) merges them
 * per second and endpoint. Deduplication by (worker, run, seq) happens here (cheaply, for
 * batches already applied or in flight) and again in the FSM (exactly). */
#include "batcher.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "lc_err.h"
#include "lc_log.h"
#include "runs.h"
#include "store.h"

#define MAX_BATCHES_PER_PROPOSAL 256
/* Queued batches are proposed this often: short enough that a batch waits
 * little (acks and failover recovery are quicker), long enough that the
 * batches of several workers for one second usually share an entry. */
#define FLUSH_INTERVAL_MS 200
/* A worker's final batch is proposed within this long: the run waits for it,
 * and the finals of a run's workers, which come together, share an entry
 * (proposed one by one, 1,000 finals held every master's loop ~450 ms). */
#define FINAL_FLUSH_MS 20
/* A batch whose entry committed but did not apply is proposed again this
 * often; then it is left to its worker's outbox (replayed on reconnect). */
#define MAX_FAILED_APPLIES 3

typedef struct queued_s {
    Lc__Envelope *env; /* its stats field is the batch */
    uint64_t key;      /* batch_key() of it */
    unsigned failed_applies;
    struct queued_s *next;
} queued_t;

typedef struct proposal_s {
    batcher_t *batcher; /* NULL once the batcher closed */
    uint64_t run;
    queued_t *batches;
    struct proposal_s *prev, *next;
} proposal_t;

struct batcher_s {
    master_t *m;
    command_sink_t commands;  /* RunSeconds go here: the quorum, or a test's sink */
    uv_timer_t flush_timer;
    queued_t *queue_head, *queue_tail;
    proposal_t *in_flight;
    uint64_t replays; /* batches a worker sent again (after a lost ack) */
};

static void free_batches(queued_t *q)
{
    while (q != NULL) {
        queued_t *next = q->next;
        lc__envelope__free_unpacked(q->env, NULL);
        free(q);
        q = next;
    }
}

static void committed(master_t *m, const Lc__StatsBatch *b)
{
    /* A disconnected worker replays the batch and is acknowledged then. */
    fleet_send_ack(m->fleet, b->worker_id, b->run, b->seq);
    if (b->final)
        runs_on_final_committed(m->runs, b->run, b->worker_id);
}

/* (worker, run, seq) folded into 64 bits (FNV-1a), so that seen() compares strings only
 * on a match: every worker's seqs start alike, and hundreds of batches are queued or in
 * flight when each one arrives. */
static uint64_t batch_key(const Lc__StatsBatch *b)
{
    uint64_t h = 14695981039346656037ull;
    for (const unsigned char *p = (const unsigned char *)b->worker_id; *p != '\0'; p++)
        h = (h ^ *p) * 1099511628211ull;
    return (h ^ b->run) * 1099511628211ull ^ b->seq;
}

static bool same_batch(const queued_t *q, uint64_t key, const Lc__StatsBatch *y)
{
    const Lc__StatsBatch *x = q->env->stats;
    return q->key == key && x->run == y->run && x->seq == y->seq &&
           strcmp(x->worker_id, y->worker_id) == 0;
}

static bool seen(const batcher_t *a, uint64_t key, const Lc__StatsBatch *b)
{
    for (const queued_t *q = a->queue_head; q != NULL; q = q->next)
        if (same_batch(q, key, b))
            return true;
    for (const proposal_t *p = a->in_flight; p != NULL; p = p->next)
        for (const queued_t *q = p->batches; q != NULL; q = q->next)
            if (same_batch(q, key, b))
                return true;
    return false;
}

uint64_t batcher_replays(const batcher_t *a)
{
    return a->replays;
}

static void flush_timer_cb(uv_timer_t *t)
{
    batcher_flush(t->data);
}

/* Brings the next flush forward to FINAL_FLUSH_MS from now, then every
 * FLUSH_INTERVAL_MS again. */
static void flush_soon(batcher_t *a)
{
    if (uv_timer_get_due_in(&a->flush_timer) > FINAL_FLUSH_MS)
        uv_timer_start(&a->flush_timer, flush_timer_cb, FINAL_FLUSH_MS, FLUSH_INTERVAL_MS);
}

void batcher_add(batcher_t *a, fleet_worker_t *w, Lc__Envelope *env)
{
    assert(env != NULL && env->msg_case == LC__ENVELOPE__MSG_STATS && env->stats != NULL);
    const Lc__StatsBatch *b = env->stats;
    if (store_batch_applied(a->m->store, b->worker_id, b->run, b->seq)) {
        a->replays++;
        committed(a->m, b); /* a replay of a batch that is already history */
        lc__envelope__free_unpacked(env, NULL);
        return;
    }
    uint64_t key = batch_key(b);
    if (seen(a, key, b)) {
        a->replays++;
        lc__envelope__free_unpacked(env, NULL);
        return;
    }
    /* Only what the worker was given: its own share of an active run. */
    runs_admission_t admission = runs_admit_stats(a->m->runs, w, b);
    if (admission != RUNS_ADMIT) {
        if (admission == RUNS_REFUSE_OVER) /* nothing can change it: let the worker drop it */
            fleet_send_ack(a->m->fleet, b->worker_id, b->run, b->seq);
        lc__envelope__free_unpacked(env, NULL);
        return;
    }
    queued_t *q = calloc(1, sizeof *q);
    if (q == NULL) {
        lc__envelope__free_unpacked(env, NULL); /* not acked: the worker will replay it */
        return;
    }
    q->env = env;
    q->key = key;
    if (a->queue_tail != NULL)
        a->queue_tail->next = q;
    else
        a->queue_head = q;
    a->queue_tail = q;
    if (b->final)
        flush_soon(a);
}

static void unlink_proposal(proposal_t *p)
{
    if (p->batcher == NULL)
        return;
    if (p->prev != NULL)
        p->prev->next = p->next;
    else
        p->batcher->in_flight = p->next;
    if (p->next != NULL)
        p->next->prev = p->prev;
}

/* Puts the batches of an entry that did not apply back in the queue, but
 * those that failed MAX_FAILED_APPLIES times already; returns what is left. */
static queued_t *requeue(batcher_t *a, queued_t *batches)
{
    queued_t *dropped = NULL;
    while (batches != NULL) {
        queued_t *q = batches;
        batches = q->next;
        q->next = NULL;
        if (++q->failed_applies >= MAX_FAILED_APPLIES) {
            q->next = dropped;
            dropped = q;
            continue;
        }
        if (a->queue_tail != NULL)
            a->queue_tail->next = q;
        else
            a->queue_head = q;
        a->queue_tail = q;
    }
    return dropped;
}

static void applied_cb(void *arg, int status, int result)
{
    proposal_t *p = arg;
    /* Acknowledged only once applied: a batch the FSM could not apply is
     * proposed again, and never acknowledged until it applies. */
    if (p->batcher != NULL && status == 0 && result != 0) {
        p->batches = requeue(p->batcher, p->batches);
        lc_warn("batcher", "msg=\"stats not recorded; %s\" run=%llu error=\"%s\"",
                p->batches == NULL ? "proposing them again"
                                   : "left to the workers' outboxes after 3 tries",
                (unsigned long long)p->run, lc_strerror(result));
    } else if (p->batcher != NULL && status == 0) {
        for (queued_t *q = p->batches; q != NULL; q = q->next)
            committed(p->batcher->m, q->env->stats);
    }
    unlink_proposal(p);
    free_batches(p->batches);
    free(p);
}

/* Moves up to MAX_BATCHES_PER_PROPOSAL queued batches of one run into p. */
static size_t take_run_batches(batcher_t *a, proposal_t *p)
{
    assert(a->queue_head != NULL); /* flush proposes only runs it has batches of */
    queued_t **link = &a->queue_head, *tail = NULL, *last = NULL;
    size_t n = 0;
    while (*link != NULL && n < MAX_BATCHES_PER_PROPOSAL) {
        queued_t *q = *link;
        if (q->env->stats->run != p->run) {
            last = q;
            link = &q->next;
            continue;
        }
        *link = q->next;
        q->next = NULL;
        if (tail != NULL)
            tail->next = q;
        else
            p->batches = q;
        tail = q;
        n++;
    }
    /* Recompute the queue tail: the loop may have removed it. */
    a->queue_tail = last;
    for (queued_t *q = a->queue_head; q != NULL; q = q->next)
        a->queue_tail = q;
    return n;
}

/* Returns false when nothing could be taken (out of memory): the batches
 * stay queued for the next flush. */
static bool propose_run(batcher_t *a, uint64_t run)
{
    proposal_t *p = calloc(1, sizeof *p);
    if (p == NULL)
        return false;
    p->batcher = a;
    p->run = run;
    size_t n = take_run_batches(a, p);
    Lc__StatsBatch **batches = calloc(n, sizeof *batches);
    if (batches == NULL) {
        free_batches(p->batches); /* not acknowledged: the workers replay them */
        free(p);
        return true;
    }
    size_t i = 0;
    for (queued_t *q = p->batches; q != NULL; q = q->next)
        batches[i++] = q->env->stats;
    int rv = command_run_seconds(&a->commands, run, batches, n, applied_cb, p);
    free(batches);
    if (rv != 0) {
        /* Not acknowledged: workers keep the batches and replay them. */
        free_batches(p->batches);
        free(p);
        return true;
    }
    p->next = a->in_flight;
    if (a->in_flight != NULL)
        a->in_flight->prev = p;
    a->in_flight = p;
    return true;
}

void batcher_flush(batcher_t *a)
{
    while (a->queue_head != NULL)
        if (!propose_run(a, a->queue_head->env->stats->run))
            break; /* out of memory: tried again at the next flush */
}

uint64_t batcher_flush_due_in(const batcher_t *a)
{
    return uv_timer_get_due_in(&a->flush_timer);
}

bool batcher_busy(batcher_t *a, uint64_t run)
{
    for (const queued_t *q = a->queue_head; q != NULL; q = q->next)
        if (q->env->stats->run == run)
            return true;
    for (const proposal_t *p = a->in_flight; p != NULL; p = p->next)
        if (p->run == run)
            return true;
    return false;
}

void batcher_reset(batcher_t *a)
{
    free_batches(a->queue_head);
    a->queue_head = a->queue_tail = NULL;
}

int batcher_init(batcher_t **out, master_t *m, const command_sink_t *commands)
{
    assert(m != NULL && commands != NULL && commands->propose != NULL);
    batcher_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        return LC_ENOMEM;
    a->m = m;
    a->commands = *commands;
    uv_timer_init(m->loop, &a->flush_timer);
    a->flush_timer.data = a;
    uv_timer_start(&a->flush_timer, flush_timer_cb, FLUSH_INTERVAL_MS, FLUSH_INTERVAL_MS);
    *out = a;
    return 0;
}

static void timer_closed_cb(uv_handle_t *h)
{
    free(h->data);
}

void batcher_close(batcher_t *a)
{
    batcher_reset(a);
    for (proposal_t *p = a->in_flight; p != NULL; p = p->next)
        p->batcher = NULL;
    uv_close((uv_handle_t *)&a->flush_timer, timer_closed_cb);
}
