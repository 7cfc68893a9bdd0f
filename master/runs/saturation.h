/* saturation.h — the saturation policy, a pure function of a worker's
 * heartbeats: a generator past 90 % CPU measures its own queueing, so it
 * sheds users until it is below again, and gets them back in steps. */
#ifndef MASTER_SATURATION_H
#define MASTER_SATURATION_H

#include <stdbool.h>
#include <stdint.h>

#define SATURATION_CPU 90.0 /* percent of its threads' time */
#define SATURATION_BEATS 3  /* heartbeats in a row to saturate, or to recover a step */
#define RECOVERY_CPU 75.0   /* below this a saturated worker regains capacity */

/* One worker's saturation state. capacity is what it announced in Hello;
 * effective_capacity is what the scheduler may give it. */
typedef struct saturation_s {
    uint32_t capacity;
    uint32_t effective_capacity;
    bool saturated;
    uint32_t hot_beats, cool_beats; /* consecutive heartbeats above / below */
} saturation_t;

typedef enum saturation_change_e {
    SATURATION_UNCHANGED,
    SATURATION_SHED,       /* saturated, or shed another 10 % */
    SATURATION_RECOVERING, /* got a step of capacity back, still short */
    SATURATION_RECOVERED,  /* all of its capacity is back */
} saturation_change_t;

/* A (re)joining worker starts unsaturated with all of its capacity. */
saturation_t saturation_start(uint32_t capacity);

/* Notes one heartbeat: cpu_percent of its threads' time, users it runs.
 * After SATURATION_BEATS hot heartbeats the effective capacity becomes 90 %
 * of the users it runs (never more than it was); after SATURATION_BEATS cool
 * ones a saturated worker gets back a quarter of what it lacks (at least 10 %
 * of its capacity). A NaN figure counts as neither hot nor cool. */
saturation_change_t saturation_note(saturation_t *s, double cpu_percent, uint64_t users);

#endif
