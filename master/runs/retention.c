/* retention.c — the leader's retention timer (retention.h). One step is in
 * flight at a time, and one step merges at most STORE_RETENTION_CHUNK_S
 * seconds of one run, so the loop never holds a long transaction. */
#include "retention.h"

#include <assert.h>
#include <stdlib.h>

#include "lc_clock.h"
#include "lc_err.h"
#include "lc_log.h"

struct retention_s {
    store_t *store;
    command_sink_t commands;
    store_retention_policy_t policy;
    uv_timer_t *timer;
    uint64_t interval_ms;
    bool leader;
    bool in_flight;
    bool closed;    /* retention_close ran while a step was in flight */
};

static void applied_cb(void *arg, int status, int result)
{
    retention_t *r = arg;
    r->in_flight = false;
    if (r->closed) {
        free(r);
        return;
    }
    if (status == 0 && result != 0)
        lc_warn("retention", "msg=\"retention step not applied\" error=\"%s\"",
                lc_strerror(result));
}

bool retention_step(retention_t *r, uint64_t now_wall_ms)
{
    Lc__RetainHistory step;
    if (!r->leader || r->in_flight ||
        store_retention_next(r->store, &r->policy, now_wall_ms, &step) != 0)
        return false;
    r->in_flight = true;
    if (command_retain_history(&r->commands, &step, applied_cb, r) != 0) {
        r->in_flight = false;
        return false;
    }
    lc_debug("retention", "msg=\"retention step\" run=%llu resolution_s=%u from_t=%u to_t=%u "
             "drop_acks=%d delete_seconds=%d", (unsigned long long)step.run, step.resolution_s,
             step.from_t, step.to_t, step.drop_acks, step.delete_seconds);
    return true;
}

/* While steps are due the next one follows at once (interval_ms); when
 * nothing was due the next look is IDLE_FACTOR times later, so a long list
 * of settled runs is not scanned several times a second. */
#define IDLE_FACTOR 10

static void timer_cb(uv_timer_t *t)
{
    retention_t *r = t->data;
    bool busy = retention_step(r, lc_wall_ms()) || r->in_flight;
    uv_timer_start(t, timer_cb, busy ? r->interval_ms : r->interval_ms * IDLE_FACTOR, 0);
}

int retention_init(retention_t **out, uv_loop_t *loop, store_t *store,
                   const command_sink_t *commands, const store_retention_policy_t *policy,
                   uint64_t interval_ms)
{
    assert(store != NULL && commands != NULL && policy != NULL && interval_ms > 0);
    retention_t *r = calloc(1, sizeof *r);
    if (r == NULL)
        return LC_ENOMEM;
    r->store = store;
    r->commands = *commands;
    r->policy = *policy;
    r->interval_ms = interval_ms;
    if (loop != NULL) {
        r->timer = malloc(sizeof *r->timer);
        if (r->timer == NULL) {
            free(r);
            return LC_ENOMEM;
        }
        uv_timer_init(loop, r->timer);
        r->timer->data = r;
        uv_timer_start(r->timer, timer_cb, interval_ms, 0);
    }
    *out = r;
    return 0;
}

void retention_on_leader(retention_t *r, bool leader)
{
    r->leader = leader;
}

static void timer_closed_cb(uv_handle_t *h)
{
    free(h);
}

void retention_close(retention_t *r)
{
    if (r->timer != NULL)
        uv_close((uv_handle_t *)r->timer, timer_closed_cb);
    if (r->in_flight)
        r->closed = true; /* freed by the proposal's callback */
    else
        free(r);
}
