/* control_feed.c — control thread: a run's leased feeders (feed_stock.h) kept in rows: a
 * FeedRequest to the leader when a stock runs low (sent again, same seq, until answered),
 * and the FeedLease that answers it put in stock. */
#include <assert.h>
#include <stdio.h>

#include "control.h"
#include "lc_log.h"

static void ask(worker_control_t *ctl, const worker_run_t *r, uint32_t f, worker_stock_t *s)
{
    s->asked_ms = uv_now(ctl->loop);
    if (ctl->hooks->feed_request != NULL)
        ctl->hooks->feed_request(ctl->hooks_arg, r->id, f, s->asked_seq, s->asked_count);
}

/* Looks at the run's leased feeders; returns whether it has any. */
static bool look_at_run(worker_control_t *ctl, worker_run_t *r)
{
    const worker_plan_t *p = r->plan;
    uint64_t now = uv_now(ctl->loop);
    bool leased = false;
    for (uint32_t f = 0; p->program != NULL && f < p->program->n_feeders; f++) {
        worker_stock_t *s = p->feeds[f].stock;
        bool retry;
        if (s == NULL)
            continue;
        leased = true;
        bool per_user = p->program->feeders[f].mode == LC_FEED_PER_USER;
        uint32_t want = worker_stock_look(s, r->users, per_user, now, &retry);
        if (want > 0) {
            s->asked_seq = ++ctl->feed_seq;
            s->asked_count = want;
        }
        if (want > 0 || retry)
            ask(ctl, r, f, s);
    }
    return leased;
}

/* Ticks while some run has a leased feeder: a worker without one never wakes for them. */
static void on_feed_timer(uv_timer_t *t)
{
    worker_control_t *ctl = t->data;
    bool leased = false;
    for (worker_run_t *r = ctl->runs; r != NULL; r = r->next)
        if (r->state != WORKER_RUN_FINAL && !r->removed)
            leased |= look_at_run(ctl, r);
    if (!leased)
        uv_timer_stop(t);
}

void worker_control_feed_start(worker_control_t *ctl)
{
    assert(ctl != NULL && ctl->loop != NULL);
    uv_timer_init(ctl->loop, &ctl->feed_timer);
    ctl->feed_timer.data = ctl;
}

int worker_control_feed_plan(worker_control_t *ctl, worker_plan_t *p)
{
    if (!ctl->batches)
        return 0; /* --local: the whole table */
    int rv = worker_plan_lease_feeds(p);
    bool leased = false;
    for (uint32_t f = 0; rv == 0 && p->program != NULL && f < p->program->n_feeders; f++)
        leased |= p->feeds[f].stock != NULL;
    if (leased && !uv_is_active((uv_handle_t *)&ctl->feed_timer))
        uv_timer_start(&ctl->feed_timer, on_feed_timer, WORKER_STOCK_LOOK_MS,
                       WORKER_STOCK_LOOK_MS);
    return rv;
}

/* Why lease l cannot be put in stock, or NULL (stock set). */
static const char *lease_problem(worker_control_t *ctl, const Lc__FeedLease *l,
                                 worker_stock_t **stock)
{
    worker_run_t *r = ctl->runs;
    while (r != NULL && r->id != l->run)
        r = r->next;
    if (r == NULL || r->state == WORKER_RUN_FINAL)
        return "no such run here";
    const lc_program_t *prog = r->plan->program;
    if (prog == NULL || l->feeder >= prog->n_feeders || r->plan->feeds[l->feeder].stock == NULL)
        return "no such leased feeder in the run";
    worker_stock_t *s = r->plan->feeds[l->feeder].stock;
    if (s->asked_seq == 0 || l->seq != s->asked_seq)
        return "an answer to no request outstanding (a duplicate)";
    if (l->count > s->asked_count)
        return "more rows than were asked for";
    *stock = s;
    return NULL;
}

void worker_control_feed_lease(worker_control_t *ctl, const Lc__FeedLease *l)
{
    assert(ctl != NULL && l != NULL);
    worker_stock_t *s = NULL;
    const char *problem = lease_problem(ctl, l, &s);
    if (problem != NULL) {
        lc_debug("control", "msg=\"feed lease ignored\" run=%llu feeder=%u seq=%llu reason=\"%s\"",
                 (unsigned long long)l->run, l->feeder, (unsigned long long)l->seq, problem);
        return;
    }
    s->asked_seq = 0;
    lc_debug("control", "msg=\"feed lease\" run=%llu feeder=%u seq=%llu start=%llu count=%u "
             "exhausted=%d", (unsigned long long)l->run, l->feeder, (unsigned long long)l->seq,
             (unsigned long long)l->start, l->count, (int)l->exhausted);
    if (!worker_stock_add(s, l->start, l->count, l->exhausted))
        lc_warn("control", "msg=\"feed lease dropped: every slot is in use\" run=%llu feeder=%u "
                "rows=%u", (unsigned long long)l->run, l->feeder, l->count);
}
