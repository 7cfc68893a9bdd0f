/* lc_loop_lag.c — a one-shot timer re-armed at each firing, so that each
 * sample measures one wait from its own due time. */
#include "lc_loop_lag.h"

#include <assert.h>
#include <string.h>

static void probe_cb(uv_timer_t *t)
{
    lc_loop_lag_t *l = t->data;
    uint64_t now = uv_hrtime();
    lc_worst_note(&l->lag_us, now > l->due_ns ? (now - l->due_ns) / 1000 : 0);
    l->samples++;
    l->due_ns = now + l->interval_ms * 1000000u;
    uv_timer_start(&l->timer, probe_cb, l->interval_ms, 0);
}

void lc_loop_lag_start(lc_loop_lag_t *l, uv_loop_t *loop, unsigned interval_ms)
{
    assert(interval_ms > 0);
    memset(l, 0, sizeof *l);
    l->interval_ms = interval_ms;
    uv_timer_init(loop, &l->timer);
    l->timer.data = l;
    uv_unref((uv_handle_t *)&l->timer);
    /* The loop's cached time may be old: the first due time is from now. */
    uv_update_time(loop);
    l->due_ns = uv_hrtime() + interval_ms * 1000000u;
    uv_timer_start(&l->timer, probe_cb, interval_ms, 0);
}

uint64_t lc_loop_lag_recent_us(const lc_loop_lag_t *l)
{
    return lc_worst_recent(&l->lag_us);
}

uint64_t lc_loop_lag_last_second_us(const lc_loop_lag_t *l)
{
    return lc_worst_last_second(&l->lag_us);
}

uint64_t lc_loop_lag_max_us(const lc_loop_lag_t *l)
{
    return lc_worst_max(&l->lag_us);
}

void lc_loop_lag_close(lc_loop_lag_t *l)
{
    uv_close((uv_handle_t *)&l->timer, NULL);
}
