/* report_num.c — printf's fixed-point and integer output, fast where it can be proven equal. */
#include "report_num.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const double pow10_of[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
static const uint64_t upow10_of[] = {1,      10,      100,      1000,      10000,
                                     100000, 1000000, 10000000, 100000000, 1000000000};

/* Below 2^40, v * 10^d in double is within 2^-13 of its exact value; the
 * exact one (what printf rounds) then rounds to the same integer unless it
 * is within that of a half, which TIE_MARGIN keeps well clear of. */
#define EXACT_LIMIT 1099511627776.0 /* 2^40 */
#define TIE_MARGIN 1e-3

/* Decimal digits of v at the end of buf[0..REPORT_NUM_MAX); returns where they start. */
static char *u64_digits(char *end, uint64_t v)
{
    do {
        *--end = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    return end;
}

/* n / 10^d, a point and d digits of n % 10^d into buf. */
static size_t put_scaled(char *buf, uint64_t n, int d)
{
    char tmp[32];
    char *start = u64_digits(tmp + sizeof tmp, n / upow10_of[d]);
    size_t len = (size_t)(tmp + sizeof tmp - start);
    memcpy(buf, start, len);
    if (d == 0)
        return len;
    buf[len++] = '.';
    uint64_t frac = n % upow10_of[d];
    for (int i = d - 1; i >= 0; i--) {
        buf[len + (size_t)i] = (char)('0' + frac % 10);
        frac /= 10;
    }
    return len + (size_t)d;
}

static size_t slow_fixed(char *buf, double v, int decimals)
{
    int n = snprintf(buf, REPORT_NUM_MAX, "%.*f", decimals, v);
    assert(n >= 0 && n < REPORT_NUM_MAX);
    return n < 0 ? 0 : (size_t)n;
}

size_t report_num_fixed(char *buf, double v, int decimals)
{
    assert(decimals >= 0 && decimals <= 9);
    double x = v * pow10_of[decimals];
    if (!(v >= 0) || signbit(v) || !(x < EXACT_LIMIT))
        return slow_fixed(buf, v, decimals); /* negative, -0, NaN, inf or large */
    double whole = floor(x), frac = x - whole;
    if (fabs(frac - 0.5) < TIE_MARGIN)
        return slow_fixed(buf, v, decimals); /* printf's own rounding decides a near tie */
    uint64_t n = (uint64_t)whole + (frac > 0.5);
    return put_scaled(buf, n, decimals);
}

/* Below this, (double)us / 1000.0 is within far less than 0.0005 of us / 1000. */
#define MS_EXACT_LIMIT 1000000000000000ull

size_t report_num_ms(char *buf, uint64_t us)
{
    if (us >= MS_EXACT_LIMIT)
        return slow_fixed(buf, (double)us / 1000.0, 3);
    return put_scaled(buf, us, 3);
}

size_t report_num_i64(char *buf, int64_t v)
{
    char tmp[32];
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    char *start = u64_digits(tmp + sizeof tmp, mag);
    if (v < 0)
        *--start = '-';
    size_t len = (size_t)(tmp + sizeof tmp - start);
    memcpy(buf, start, len);
    return len;
}
