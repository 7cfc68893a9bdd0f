/* saturation.c — the saturation policy (saturation.h); no I/O, no clock. */
#include "saturation.h"

#include <assert.h>
#include <stddef.h>

saturation_t saturation_start(uint32_t capacity)
{
    return (saturation_t){.capacity = capacity, .effective_capacity = capacity};
}

/* Users come back in steps the worker can show it carries, rather than all
 * at once and straight back into saturation. */
static saturation_change_t recover_step(saturation_t *s)
{
    uint32_t missing = s->capacity - s->effective_capacity;
    uint32_t step = missing / 4 > s->capacity / 10 ? missing / 4 : s->capacity / 10;
    s->effective_capacity = step >= missing || step == 0 ? s->capacity
                                                         : s->effective_capacity + step;
    s->saturated = s->effective_capacity < s->capacity;
    return s->saturated ? SATURATION_RECOVERING : SATURATION_RECOVERED;
}

static saturation_change_t shed(saturation_t *s, uint64_t users)
{
    uint64_t eff = users * 9 / 10;
    if (eff > s->effective_capacity)
        eff = s->effective_capacity;
    if (s->saturated && eff == s->effective_capacity)
        return SATURATION_UNCHANGED;
    s->saturated = true;
    s->effective_capacity = (uint32_t)eff;
    return SATURATION_SHED;
}

saturation_change_t saturation_note(saturation_t *s, double cpu_percent, uint64_t users)
{
    assert(s != NULL && s->effective_capacity <= s->capacity);
    bool hot = cpu_percent > SATURATION_CPU, cool = cpu_percent < RECOVERY_CPU;
    s->hot_beats = hot ? s->hot_beats + 1 : 0;
    s->cool_beats = cool ? s->cool_beats + 1 : 0;
    if (hot && s->hot_beats >= SATURATION_BEATS) {
        s->hot_beats = 0; /* 3 more hot heartbeats shed another 10 % */
        return shed(s, users);
    }
    if (cool && s->saturated && s->cool_beats >= SATURATION_BEATS) {
        s->cool_beats = 0;
        return recover_step(s);
    }
    return SATURATION_UNCHANGED;
}
