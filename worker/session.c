/* session.c — a journey user's variables, cookie jar and feeder rows. */
#include "session.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "lc_err.h"

#define ARENA_MAX (1u << 20) /* one user's variables; a bigger value is refused */

worker_session_t *worker_session_new(const lc_program_t *p)
{
    size_t size = sizeof(worker_session_t) + p->n_vars * sizeof(worker_slot_t);
    worker_session_t *s = calloc(1, size + p->n_feeders * sizeof(uint32_t));
    if (s == NULL)
        return NULL;
    s->n_vars = (uint16_t)p->n_vars;
    s->n_feeders = (uint16_t)p->n_feeders;
    s->rows = (uint32_t *)((char *)s + size);
    for (size_t i = 0; i < p->n_feeders; i++)
        s->rows[i] = WORKER_SESSION_NO_ROW;
    return s;
}

void worker_session_free(worker_session_t *s)
{
    if (s == NULL)
        return;
    lc_cookie_jar_free(&s->jar);
    free(s->arena);
    free(s);
}

/* Packs the live values to the front, so overwritten ones stop taking room. */
static void compact(worker_session_t *s)
{
    char *fresh = malloc(s->arena_cap);
    if (fresh == NULL)
        return;
    uint32_t len = 0;
    for (size_t i = 0; i < s->n_vars; i++) {
        worker_slot_t *v = &s->slots[i];
        if (!v->set)
            continue;
        memcpy(fresh + len, s->arena + v->off, v->len);
        v->off = len;
        len += v->len;
    }
    free(s->arena);
    s->arena = fresh;
    s->arena_len = len;
}

static int make_room(worker_session_t *s, size_t len)
{
    if (s->arena_len + len <= s->arena_cap)
        return 0;
    compact(s);
    if (s->arena_len + len <= s->arena_cap)
        return 0;
    /* Grows by half, from just what is needed: a user holding one 300-byte token keeps
     * about 300 bytes, not the next power of two. */
    size_t need = s->arena_len + len, cap = s->arena_cap + s->arena_cap / 2;
    cap = (cap > need ? cap : need) + 15u;
    cap &= ~(size_t)15u;
    if (cap > ARENA_MAX)
        return LC_ETOOBIG;
    char *grown = realloc(s->arena, cap);
    if (grown == NULL)
        return LC_ENOMEM;
    s->arena = grown;
    s->arena_cap = (uint32_t)cap;
    return 0;
}

int worker_session_set(worker_session_t *s, uint32_t slot, const char *data, size_t len,
                       uint8_t type)
{
    assert(slot < s->n_vars);
    if (len > ARENA_MAX)
        return LC_ETOOBIG;
    worker_slot_t *v = &s->slots[slot];
    if (v->set && v->len >= len) { /* in place */
        memmove(s->arena + v->off, data, len);
        v->len = (uint32_t)len;
        v->type = type;
        return 0;
    }
    /* data may point into the arena (a copy of another variable): keep it alive. */
    bool inside = s->arena != NULL && data >= s->arena && data < s->arena + s->arena_cap;
    char *copy = NULL;
    if (inside && (copy = malloc(len ? len : 1)) == NULL)
        return LC_ENOMEM;
    if (inside) {
        memcpy(copy, data, len);
        data = copy;
    }
    v->set = false; /* not kept by a compaction */
    int rv = make_room(s, len);
    if (rv == 0) {
        memcpy(s->arena + s->arena_len, data, len);
        *v = (worker_slot_t){.off = s->arena_len, .len = (uint32_t)len, .type = type, .set = true};
        s->arena_len += (uint32_t)len;
    }
    free(copy);
    return rv;
}

void worker_session_unset_all(worker_session_t *s)
{
    for (size_t i = 0; i < s->n_vars; i++)
        s->slots[i].set = false;
    s->arena_len = 0;
}

void worker_session_unset(worker_session_t *s, uint32_t slot)
{
    assert(s != NULL && slot < s->n_vars);
    s->slots[slot].set = false;
}

bool worker_session_get(const worker_session_t *s, const lc_program_t *p, uint32_t slot,
                        lc_value_t *out)
{
    if (slot < LC_JOURNEY_FEEDER_SLOT0) {
        if (s == NULL || slot >= s->n_vars || !s->slots[slot].set)
            return false;
        const worker_slot_t *v = &s->slots[slot];
        *out = (lc_value_t){.data = s->arena + v->off, .len = v->len, .type = v->type};
        return true;
    }
    for (size_t f = 0; s != NULL && f < p->n_feeders; f++) {
        const lc_feeder_t *fd = &p->feeders[f];
        if (slot < fd->first_slot || slot >= fd->first_slot + fd->table.n_cols)
            continue;
        if (s->rows[f] == WORKER_SESSION_NO_ROW)
            return false;
        *out = lc_table_cell(&fd->table, s->rows[f], slot - fd->first_slot);
        return true;
    }
    return false;
}

size_t worker_session_bytes(const worker_session_t *s)
{
    if (s == NULL)
        return 0;
    return sizeof *s + s->n_vars * sizeof(worker_slot_t) + s->n_feeders * sizeof(uint32_t) +
           s->arena_cap + lc_cookie_jar_bytes(&s->jar);
}
