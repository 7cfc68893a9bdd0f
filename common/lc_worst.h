/* lc_worst.h — the worst of a measured value per second over the last ten seconds, and since
 * start: for lags and delays a dashboard samples once a second. */
#ifndef LC_WORST_H
#define LC_WORST_H

#include <stdint.h>

#define LC_WORST_WINDOW_S 10

typedef struct lc_worst_s {
    /* private */
    uint64_t second_max[LC_WORST_WINDOW_S]; /* per second, ring by unix second */
    uint64_t second_of[LC_WORST_WINDOW_S];
    uint64_t max;
} lc_worst_t;

/* Notes value as measured now. A zeroed lc_worst_t is empty. */
void lc_worst_note(lc_worst_t *w, uint64_t value);
/* The worst of the last LC_WORST_WINDOW_S seconds (0 without a value). */
uint64_t lc_worst_recent(const lc_worst_t *w);
/* The worst of the last whole second (0 when it had no value). */
uint64_t lc_worst_last_second(const lc_worst_t *w);
/* The worst since start. */
uint64_t lc_worst_max(const lc_worst_t *w);

#endif
