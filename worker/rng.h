/* rng.h — any thread (pure): a per-engine xorshift64* generator, fast, not cryptographic. */
#ifndef WORKER_RNG_H
#define WORKER_RNG_H

#include <stdint.h>

#include "lc_rng.h"

/* Next value of the generator whose state is *s (never 0). */
static inline uint64_t worker_rng_next(uint64_t *s)
{
    return lc_rng_next(s);
}

/* Uniform integer in [lo, hi] (hi >= lo). */
static inline uint64_t worker_rng_range(uint64_t *s, uint64_t lo, uint64_t hi)
{
    return lc_rng_range(s, lo, hi);
}

/* A seed that differs per engine and per process start. */
static inline uint64_t worker_rng_seed(uint64_t entropy, unsigned index)
{
    uint64_t s = entropy ^ (0x9E3779B97F4A7C15ULL * (index + 1));
    return s == 0 ? 0x9E3779B97F4A7C15ULL : s;
}

#endif
