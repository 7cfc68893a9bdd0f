/* report_num.h — numbers as text for the reports, byte for byte what printf writes, without
 * printf's cost for the values reports are made of (µs as ms, rates, sizes). */
#ifndef MASTER_REPORT_NUM_H
#define MASTER_REPORT_NUM_H

#include <stddef.h>
#include <stdint.h>

/* Room any of these needs (printf's "%.9f" of the largest double is ~320). */
#define REPORT_NUM_MAX 352

/* snprintf(buf, REPORT_NUM_MAX, "%.*f", decimals, v), decimals 0..9; returns the length. */
size_t report_num_fixed(char *buf, double v, int decimals);
/* "%.3f" of (double)us / 1000.0 (a latency in ms, as the reports' JSON holds it). */
size_t report_num_ms(char *buf, uint64_t us);
/* "%lld" of v. */
size_t report_num_i64(char *buf, int64_t v);

#endif
