/* lc_rng.h — any thread (pure): the xorshift64* generator of engines and journeys; fast,
 * not cryptographic. The caller owns the state. */
#ifndef LC_RNG_H
#define LC_RNG_H

#include <stdint.h>

static inline uint64_t lc_rng_next(uint64_t *s)
{
    uint64_t x = *s != 0 ? *s : 0x9E3779B97F4A7C15ULL; /* a zeroed state would stay 0 */
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* Uniform integer in [lo, hi] (hi >= lo); the modulo bias is negligible here. */
static inline uint64_t lc_rng_range(uint64_t *s, uint64_t lo, uint64_t hi)
{
    uint64_t span = hi - lo + 1;
    return span == 0 ? lc_rng_next(s) : lo + lc_rng_next(s) % span;
}

/* Uniform integer in [0, n), n > 0, without modulo bias (rejection of the short tail). */
static inline uint64_t lc_rng_below(uint64_t *s, uint64_t n)
{
    uint64_t floor = (0 - n) % n; /* 2^64 mod n: draws below it would favour small results */
    uint64_t r;
    do
        r = lc_rng_next(s);
    while (r < floor);
    return r % n;
}

/* Uniform double in [0, 1). */
static inline double lc_rng_unit(uint64_t *s)
{
    return (double)(lc_rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

#endif
