/* runs_feed.c — the leader's side of feeder leases: a worker's FeedRequest checked and
 * bounded, proposed as LeaseRows, and the lease the state decided sent once it committed. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "lc_err.h"
#include "lc_log.h"
#include "runs_internal.h"
#include "store.h"

/* A proposal not committed by then is taken as lost: the worker's retry proposes again. */
#define LEASE_PENDING_MAX_MS 3000u

static feed_gate_t *find_gate(active_run_t *ar, const char *worker, uint32_t feeder)
{
    for (size_t i = 0; i < ar->n_gates; i++)
        if (ar->gates[i].feeder == feeder && strcmp(ar->gates[i].worker, worker) == 0)
            return &ar->gates[i];
    return NULL;
}

/* At most one gate per (worker, leased feeder of the plan): the caller checked both. */
static feed_gate_t *gate_of(active_run_t *ar, const char *worker, uint32_t feeder)
{
    feed_gate_t *g = find_gate(ar, worker, feeder);
    if (g != NULL)
        return g;
    feed_gate_t *grown = realloc(ar->gates, (ar->n_gates + 1) * sizeof *grown);
    if (grown == NULL)
        return NULL;
    ar->gates = grown;
    g = &ar->gates[ar->n_gates++];
    memset(g, 0, sizeof *g);
    snprintf(g->worker, sizeof g->worker, "%s", worker);
    g->feeder = feeder;
    return g;
}

static void send_lease(runs_t *r, uint64_t run, uint32_t feeder, const char *worker,
                       const store_lease_t *l)
{
    fleet_feed_lease_t fl = {.run = run, .feeder = feeder, .seq = l->seq, .start = l->start,
                             .count = l->count, .exhausted = l->exhausted};
    r->io.send_feed_lease(r->io.arg, worker, &fl);
}

/* Rows of the feeder not handed out yet, by the committed cursor (UINT64_MAX: no end). */
static uint64_t remaining(runs_t *r, const active_run_t *ar, uint32_t feeder)
{
    const lc_feeder_t *fd = &ar->sc.program->feeders[feeder];
    uint64_t next = 0;
    uint32_t rows;
    if (fd->on_exhausted == LC_FEED_WRAP)
        return UINT64_MAX;
    if (store_feed_cursor(r->store, ar->id, feeder, &next, &rows) != 0)
        next = 0;
    return next < fd->table.n_rows ? fd->table.n_rows - next : 0;
}

static int propose_lease(runs_t *r, active_run_t *ar, const char *worker,
                         const Lc__FeedRequest *req, uint32_t users)
{
    const lc_feeder_t *fd = &ar->sc.program->feeders[req->feeder];
    uint64_t left = remaining(r, ar, req->feeder);
    command_lease_t lease = {.run = ar->id, .feeder = req->feeder, .worker = worker,
                             .seq = req->seq,
                             .count = admission_lease_count(req->count, users, ar->requested,
                                                            left),
                             .rows = (uint32_t)fd->table.n_rows,
                             .wrap = fd->on_exhausted == LC_FEED_WRAP};
    return command_lease_rows(&r->io.commands, &lease);
}

/* A seq the state already answered: its lease again (a lost answer, a replay), or nothing
 * for an older one. True when the request is settled so. */
static bool answered(runs_t *r, active_run_t *ar, const char *worker,
                     const Lc__FeedRequest *req)
{
    store_lease_t last;
    if (store_lease_get(r->store, ar->id, req->feeder, worker, &last) != 0 || last.seq < req->seq)
        return false;
    if (last.seq == req->seq)
        send_lease(r, ar->id, req->feeder, worker, &last);
    else
        runs_note_refused(r, &r->refused.feeds, worker, ar->id, "feed request",
                          "its seq is older than the worker's last lease");
    return true;
}

void runs_on_feed_request(runs_t *r, fleet_worker_t *w, const Lc__FeedRequest *req)
{
    assert(r != NULL && w != NULL && req != NULL);
    uint32_t users;
    active_run_t *ar = runs_run_of_sharer(r, w, req->run, "feed request", &r->refused.feeds,
                                          &users);
    if (ar == NULL)
        return;
    const char *problem = admission_feed_problem(&ar->sc, req);
    if (problem != NULL) {
        runs_note_refused(r, &r->refused.feeds, w->id, ar->id, "feed request", problem);
        return;
    }
    if (answered(r, ar, w->id, req))
        return;
    feed_gate_t *g = gate_of(ar, w->id, req->feeder);
    uint64_t now = runs_now_mono(r);
    if (g == NULL || g->pending_seq != 0 || now - g->proposed_ms < ADMISSION_LEASE_GAP_MS)
        return; /* one at a time, and not too often: the worker asks again */
    if (propose_lease(r, ar, w->id, req, users) != 0)
        return;
    g->pending_seq = req->seq;
    g->proposed_ms = now;
}

void runs_feed_tick(runs_t *r, active_run_t *ar)
{
    uint64_t now = runs_now_mono(r);
    for (size_t i = 0; i < ar->n_gates; i++) {
        feed_gate_t *g = &ar->gates[i];
        store_lease_t l;
        if (g->pending_seq == 0)
            continue;
        bool got = store_lease_get(r->store, ar->id, g->feeder, g->worker, &l) == 0 &&
                   l.seq >= g->pending_seq;
        if (got && l.seq == g->pending_seq)
            send_lease(r, ar->id, g->feeder, g->worker, &l);
        if (got || now - g->proposed_ms > LEASE_PENDING_MAX_MS)
            g->pending_seq = 0;
    }
}
