/* lc_json_scan_skip.c — the fast skip over containers the path does not
 * enter: 64 bytes at a time, as bit masks (quotes, backslashes, brackets), so
 * that a skipped container costs a few instructions per 64 bytes rather than
 * a branch per token. It finds the end only: what lies inside is not checked. */
#include <stdint.h>
#include <string.h>

#include "lc_err.h"
#include "lc_json_scan_internal.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define BLOCK 64

/* One bit per byte of a block, bit i for byte i. block_masks is forced
 * inline: as a call per 64 bytes it cost a tenth of a skip's time. */
typedef struct block_masks_s {
    uint64_t quote;
    uint64_t backslash;
    uint64_t open;  /* '[' or '{' */
    uint64_t close; /* ']' or '}' */
} block_masks_t;

#if defined(__SSE2__)
/* One bit per byte of a comparison's result. */
static uint64_t bits_of(__m128i cmp)
{
    return (uint16_t)_mm_movemask_epi8(cmp);
}

static inline __attribute__((always_inline)) void block_masks(const char *p, block_masks_t *m)
{
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    /* '[' | 0x20 is '{' and ']' | 0x20 is '}'; no other byte becomes either. */
    const __m128i case_bit = _mm_set1_epi8(0x20), open = _mm_set1_epi8('{');
    const __m128i close = _mm_set1_epi8('}');
    *m = (block_masks_t){0, 0, 0, 0};
    for (int k = 0; k < BLOCK / 16; k++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * k));
        __m128i folded = _mm_or_si128(v, case_bit);
        int shift = 16 * k;
        m->quote |= bits_of(_mm_cmpeq_epi8(v, quote)) << shift;
        m->backslash |= bits_of(_mm_cmpeq_epi8(v, backslash)) << shift;
        m->open |= bits_of(_mm_cmpeq_epi8(folded, open)) << shift;
        m->close |= bits_of(_mm_cmpeq_epi8(folded, close)) << shift;
    }
}
#else
static inline __attribute__((always_inline)) void block_masks(const char *p, block_masks_t *m)
{
    *m = (block_masks_t){0, 0, 0, 0};
    for (int i = 0; i < BLOCK; i++) {
        char c = p[i];
        uint64_t bit = 1ULL << i;
        m->quote |= c == '"' ? bit : 0;
        m->backslash |= c == '\\' ? bit : 0;
        m->open |= c == '[' || c == '{' ? bit : 0;
        m->close |= c == ']' || c == '}' ? bit : 0;
    }
}
#endif

/* The bytes the block's backslashes escape (a backslash that is itself
 * escaped escapes nothing). *carry, in and out: the first byte of the block
 * is escaped by the last of the block before. */
static uint64_t escaped_bytes(uint64_t backslash, uint64_t *carry)
{
    uint64_t escaped = *carry;
    backslash &= ~escaped;
    *carry = 0;
    while (backslash != 0) {
        int i = __builtin_ctzll(backslash);
        if (i == BLOCK - 1) {
            *carry = 1;
            break;
        }
        uint64_t next = 1ULL << (i + 1);
        escaped |= next;
        backslash &= ~(next | (1ULL << i));
    }
    return escaped;
}

/* Bit i is the parity of bits 0..i: over the quotes, the bytes inside strings
 * (the opening quote in, the closing one out). */
static uint64_t prefix_xor(uint64_t x)
{
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
}

#if defined(__POPCNT__)
#define popcount64 __builtin_popcountll
#else
/* Without the instruction, gcc calls a library function: this is faster. */
static int popcount64(uint64_t x)
{
    x -= (x >> 1) & 0x5555555555555555ULL;
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    return (int)((x * 0x0101010101010101ULL) >> 56);
}
#endif

/* Walks the brackets of one block in order. Returns the offset just past the
 * close that brings *open to 0, or BLOCK when the block has none, or -1
 * when depth + *open would pass the limit. */
static int walk_brackets(uint64_t opens, uint64_t closes, int depth, int *open)
{
    uint64_t events = opens | closes;
    while (events != 0) {
        int i = __builtin_ctzll(events);
        events &= events - 1;
        if ((opens >> i) & 1) {
            if (depth + ++*open > LC_JSON_MAX_DEPTH)
                return -1;
        } else if (--*open == 0) {
            return i + 1;
        }
    }
    return BLOCK;
}

int jskip_containers(jcursor_t *c, int depth, int open)
{
    uint64_t in_string = 0, escape_carry = 0;
    for (size_t pos = c->pos; pos < c->len; pos += BLOCK) {
        block_masks_t m;
        if (c->len - pos >= BLOCK) {
            block_masks(c->s + pos, &m);
        } else { /* the last bytes, in a copy padded with NULs (which are no brackets) */
            char tail[BLOCK] = {0};
            memcpy(tail, c->s + pos, c->len - pos);
            block_masks(tail, &m);
        }
        uint64_t escaped = 0;
        if ((m.backslash | escape_carry) != 0)
            escaped = escaped_bytes(m.backslash, &escape_carry);
        uint64_t strings = prefix_xor(m.quote & ~escaped) ^ in_string;
        in_string = 0 - (strings >> 63); /* all ones when the block ends inside a string */
        uint64_t opens = m.open & ~strings, closes = m.close & ~strings;
        if (opens == 0 && closes == 0)
            continue;
        int n_opens = popcount64(opens), n_closes = popcount64(closes);
        /* Neither the end nor the depth limit can be in this block: count only. */
        if (open > n_closes && depth + open + n_opens <= LC_JSON_MAX_DEPTH) {
            open += n_opens - n_closes;
            continue;
        }
        int end = walk_brackets(opens, closes, depth, &open);
        if (end < 0)
            return LC_EINVAL;
        if (end < BLOCK || open == 0) {
            c->pos = pos + (size_t)end;
            return c->pos <= c->len ? 0 : LC_EINVAL;
        }
    }
    return LC_EINVAL;
}
