/* lc_worst.c — per-second maxima in a ring indexed by unix second. */
#include "lc_worst.h"

#include <time.h>

static uint64_t unix_second(void)
{
    return (uint64_t)time(NULL);
}

void lc_worst_note(lc_worst_t *w, uint64_t value)
{
    uint64_t sec = unix_second();
    size_t slot = sec % LC_WORST_WINDOW_S;
    if (w->second_of[slot] != sec) {
        w->second_of[slot] = sec;
        w->second_max[slot] = 0;
    }
    if (value > w->second_max[slot])
        w->second_max[slot] = value;
    if (value > w->max)
        w->max = value;
}

uint64_t lc_worst_recent(const lc_worst_t *w)
{
    uint64_t sec = unix_second(), worst = 0;
    for (size_t i = 0; i < LC_WORST_WINDOW_S; i++)
        if (w->second_of[i] + LC_WORST_WINDOW_S > sec && w->second_max[i] > worst)
            worst = w->second_max[i];
    return worst;
}

uint64_t lc_worst_last_second(const lc_worst_t *w)
{
    uint64_t last = unix_second() - 1;
    size_t slot = last % LC_WORST_WINDOW_S;
    return w->second_of[slot] == last ? w->second_max[slot] : 0;
}

uint64_t lc_worst_max(const lc_worst_t *w)
{
    return w->max;
}
