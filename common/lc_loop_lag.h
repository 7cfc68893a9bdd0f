/* lc_loop_lag.h — how late a libuv loop runs its timers: a probe timer that
 * notes how long after its due time it fired, kept as the worst of the last
 * ten seconds and the worst since start. */
#ifndef LC_LOOP_LAG_H
#define LC_LOOP_LAG_H

#include <stdint.h>
#include <uv.h>

#include "lc_worst.h"

#define LC_LOOP_LAG_WINDOW_S LC_WORST_WINDOW_S

typedef struct lc_loop_lag_s {
    /* private */
    uv_timer_t timer;
    uint64_t interval_ms;
    uint64_t due_ns;  /* uv_hrtime() the probe is due */
    lc_worst_t lag_us;
    uint64_t samples;
} lc_loop_lag_t;

/* Starts probing loop every interval_ms (> 0). The timer is unref'd: it does
 * not keep the loop alive. */
void lc_loop_lag_start(lc_loop_lag_t *l, uv_loop_t *loop, unsigned interval_ms);
/* The worst lag of the last LC_LOOP_LAG_WINDOW_S seconds, in microseconds. */
uint64_t lc_loop_lag_recent_us(const lc_loop_lag_t *l);
/* The worst lag of the last whole second (0 when it had no sample), in
 * microseconds: sampled once a second, it shows how often the loop lags. */
uint64_t lc_loop_lag_last_second_us(const lc_loop_lag_t *l);
/* The worst lag since start, in microseconds. */
uint64_t lc_loop_lag_max_us(const lc_loop_lag_t *l);
/* Stops probing; the handle closes with the loop's next turn. */
void lc_loop_lag_close(lc_loop_lag_t *l);

#endif
