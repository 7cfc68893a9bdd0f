/* user_ids.c — engine thread: the ${user_id}s one engine hands its users (a bitmap of slots). */
#include "user_ids.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "lc_err.h"

void worker_user_ids_init(worker_user_ids_t *ids, unsigned index, unsigned n)
{
    assert(n > 0 && index < n);
    *ids = (worker_user_ids_t){.index = index, .n = n};
}

void worker_user_ids_free(worker_user_ids_t *ids)
{
    free(ids->bits);
    ids->bits = NULL;
    ids->words = ids->cap = ids->hint = 0;
}

int worker_user_ids_share(worker_user_ids_t *ids, uint64_t base, uint32_t cap)
{
    assert(ids->n > 0); /* initialized */
    uint32_t words = (uint32_t)(((uint64_t)cap + 63) / 64);
    if (words > ids->words) {
        uint64_t *bits = realloc(ids->bits, words * sizeof *bits);
        if (bits == NULL)
            return LC_ENOMEM;
        memset(bits + ids->words, 0, (words - ids->words) * sizeof *bits);
        ids->bits = bits;
        ids->words = words;
    }
    if (base != ids->base && ids->words > 0)
        memset(ids->bits, 0, ids->words * sizeof *ids->bits);
    ids->base = base;
    ids->cap = cap;
    ids->hint = 0;
    return 0;
}

/* The slot of id into *slot; false when id is not this engine's in the share. */
static bool slot_of(const worker_user_ids_t *ids, uint64_t id, uint32_t *slot)
{
    if (ids->n == 0 || id <= ids->base || (id - ids->base - 1) % ids->n != ids->index)
        return false;
    uint64_t s = (id - ids->base - 1) / ids->n;
    if (s >= (uint64_t)ids->words * 64)
        return false;
    *slot = (uint32_t)s;
    return true;
}

void worker_user_ids_hold(worker_user_ids_t *ids, uint64_t id)
{
    uint32_t s;
    if (slot_of(ids, id, &s) && s < ids->cap)
        ids->bits[s / 64] |= UINT64_C(1) << (s % 64);
}

bool worker_user_ids_take(worker_user_ids_t *ids, uint64_t *id)
{
    uint32_t w = ids->hint, last = (ids->cap + 63) / 64;
    while (w < last && ids->bits[w] == UINT64_MAX)
        w++;
    ids->hint = w;
    if (w == last)
        return false;
    uint32_t s = w * 64 + (uint32_t)__builtin_ctzll(~ids->bits[w]);
    if (s >= ids->cap)
        return false; /* the free bits of the last word are past cap */
    ids->bits[w] |= UINT64_C(1) << (s % 64);
    *id = ids->base + (uint64_t)s * ids->n + ids->index + 1;
    return true;
}

void worker_user_ids_give(worker_user_ids_t *ids, uint64_t id)
{
    uint32_t s;
    if (!slot_of(ids, id, &s))
        return;
    ids->bits[s / 64] &= ~(UINT64_C(1) << (s % 64));
    if (s / 64 < ids->hint)
        ids->hint = s / 64;
}
