/* lc_rng.h — xorshift64*, the fast non-cryptographic generator that templates and conditions
 * draw from; the state belongs to the caller (one per engine thread) and is advanced in place. */
#ifndef LC_RNG_H
#define LC_RNG_H

#include <stdint.h>

/* Next value of the generator whose state is *s. A zero state (which xorshift would never
 * leave) is replaced by a fixed odd constant first. */
static inline uint64_t lc_rng_next(uint64_t *s)
{
    uint64_t x = *s != 0 ? *s : 0x9E3779B97F4A7C15ULL;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* Uniform integer in [0, n) for n > 0, by rejection so that large n are not biased. */
static inline uint64_t lc_rng_below(uint64_t *s, uint64_t n)
{
    uint64_t floor = (0 - n) % n; /* 2^64 mod n: draws below it would favour small results */
    uint64_t r;
    do
        r = lc_rng_next(s);
    while (r < floor);
    return r % n;
}

/* Uniform double in [0, 1): the top 53 bits as a fraction. */
static inline double lc_rng_unit(uint64_t *s)
{
    return (double)(lc_rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

#endif
