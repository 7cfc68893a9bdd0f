/* rng.h — any thread (pure): a per-engine xorshift64* generator, fast, not cryptographic. */
#ifndef WORKER_RNG_H
#define WORKER_RNG_H

#include <stdint.h>

/* Next value of the generator whose state is *s (never 0). */
static inline uint64_t worker_rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* Uniform integer in [lo, hi] (hi >= lo); the modulo bias is negligible here. */
static inline uint64_t worker_rng_range(uint64_t *s, uint64_t lo, uint64_t hi)
{
    uint64_t span = hi - lo + 1;
    return span == 0 ? worker_rng_next(s) : lo + worker_rng_next(s) % span;
}

/* A seed that differs per engine and per process start. */
static inline uint64_t worker_rng_seed(uint64_t entropy, unsigned index)
{
    uint64_t s = entropy ^ (0x9E3779B97F4A7C15ULL * (index + 1));
    return s == 0 ? 0x9E3779B97F4A7C15ULL : s;
}

#endif
