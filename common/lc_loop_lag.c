/* lc_loop_lag.c — a one-shot timer re-armed at each firing, so that each
 * sample measures one wait from its own due time. */
#include "lc_loop_lag.h"

#include <assert.h>
#include <string.h>
#include <time.h>

static uint64_t unix_second(void)
{
    return (uint64_t)time(NULL);
}

static void probe_cb(uv_timer_t *t)
{
    lc_loop_lag_t *l = t->data;
    uint64_t now = uv_hrtime();
    uint64_t lag_us = now > l->due_ns ? (now - l->due_ns) / 1000 : 0;
    uint64_t sec = unix_second();
    size_t slot = sec % LC_LOOP_LAG_WINDOW_S;
    if (l->second_of[slot] != sec) {
        l->second_of[slot] = sec;
        l->second_max_us[slot] = 0;
    }
    if (lag_us > l->second_max_us[slot])
        l->second_max_us[slot] = lag_us;
    if (lag_us > l->max_us)
        l->max_us = lag_us;
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
    uint64_t sec = unix_second(), worst = 0;
    for (size_t i = 0; i < LC_LOOP_LAG_WINDOW_S; i++)
        if (l->second_of[i] + LC_LOOP_LAG_WINDOW_S > sec && l->second_max_us[i] > worst)
            worst = l->second_max_us[i];
    return worst;
}

uint64_t lc_loop_lag_last_second_us(const lc_loop_lag_t *l)
{
    uint64_t last = unix_second() - 1;
    size_t slot = last % LC_LOOP_LAG_WINDOW_S;
    return l->second_of[slot] == last ? l->second_max_us[slot] : 0;
}

uint64_t lc_loop_lag_max_us(const lc_loop_lag_t *l)
{
    return l->max_us;
}

void lc_loop_lag_close(lc_loop_lag_t *l)
{
    uv_close((uv_handle_t *)&l->timer, NULL);
}
