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
    ids->words = ids->cap = ids->next = 0;
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
    if (base != ids->base) {
        if (ids->words > 0)
            memset(ids->bits, 0, ids->words * sizeof *ids->bits);
        ids->next = 0;
    }
    ids->base = base;
    ids->cap = cap;
    if (ids->next >= cap)
        ids->next = 0;
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

/* The first free slot in from .. to - 1 into *slot; false when there is none. */
static bool free_slot_in(const worker_user_ids_t *ids, uint32_t from, uint32_t to, uint32_t *slot)
{
    for (uint32_t w = from / 64; from < to && w <= (to - 1) / 64; w++) {
        uint64_t free_bits = ~ids->bits[w];
        if (w == from / 64)
            free_bits &= UINT64_MAX << (from % 64);
        if (w == (to - 1) / 64 && to % 64 != 0)
            free_bits &= UINT64_MAX >> (64 - to % 64);
        if (free_bits != 0) {
            *slot = w * 64 + (uint32_t)__builtin_ctzll(free_bits);
            return true;
        }
    }
    return false;
}

bool worker_user_ids_take(worker_user_ids_t *ids, uint64_t *id)
{
    uint32_t s;
    if (!free_slot_in(ids, ids->next, ids->cap, &s) && !free_slot_in(ids, 0, ids->next, &s))
        return false;
    ids->bits[s / 64] |= UINT64_C(1) << (s % 64);
    ids->next = s + 1 < ids->cap ? s + 1 : 0;
    *id = ids->base + (uint64_t)s * ids->n + ids->index + 1;
    return true;
}

void worker_user_ids_give(worker_user_ids_t *ids, uint64_t id)
{
    uint32_t s;
    if (!slot_of(ids, id, &s))
        return;
    ids->bits[s / 64] &= ~(UINT64_C(1) << (s % 64));
}
