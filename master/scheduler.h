/* scheduler.h — dividing a run's users over workers: pure functions, no I/O. */
#ifndef MASTER_SCHEDULER_H
#define MASTER_SCHEDULER_H

#include <stddef.h>
#include <stdint.h>

/* Splits `total` over n shares in proportion to `weights` by largest
 * remainder (ties go to the lower index), so out[] sums to total exactly.
 * All-zero weights split evenly. n must be > 0. */
void sched_split(uint32_t total, const uint32_t *weights, size_t n, uint32_t *out);

#endif
