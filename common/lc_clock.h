/* lc_clock.h — monotonic and wall-clock time in the units we use. */
#ifndef LC_CLOCK_H
#define LC_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* Monotonic nanoseconds, for measuring intervals. */
static inline uint64_t lc_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Monotonic milliseconds, for deadlines and liveness. */
static inline uint64_t lc_mono_ms(void)
{
    return lc_mono_ns() / 1000000u;
}

/* Wall-clock milliseconds since the epoch, for timestamps people read. */
static inline uint64_t lc_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Formats wall-clock ms as ISO 8601 UTC, e.g. 2026-11-30T05:51:25.123Z. */
static inline void lc_iso8601(uint64_t ms, char *buf, size_t len)
{
    time_t secs = (time_t)(ms / 1000u);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char date[32];
    size_t n = strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(date + n, sizeof date - n, ".%03uZ", (unsigned)(ms % 1000u));
    snprintf(buf, len, "%s", date);
}

#endif
