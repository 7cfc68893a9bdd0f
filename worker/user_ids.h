/* user_ids.h — engine thread: the ${user_id}s one engine hands its users: within its part of
 * the share's range, each held by one user until it is freed, taken in turn (next-fit). */
#ifndef WORKER_USER_IDS_H
#define WORKER_USER_IDS_H

#include <stdbool.h>
#include <stdint.h>

/* Engine index of n takes the ids base + slot * n + index + 1 for slots 0 .. cap - 1: with
 * cap its part of the share's users (dealt round-robin, control.c), these stay within
 * base + 1 .. base + users and never meet another engine's. A zeroed one hands out nothing
 * and takes back nothing. */
typedef struct worker_user_ids_s {
    /* private */
    uint64_t base;     /* the share's user_base */
    uint64_t *bits;    /* a set bit: its slot's id is held by a user not yet freed */
    uint32_t words;    /* of bits (never shrinks: ids past a smaller cap stay held) */
    uint32_t cap;      /* slots that may be taken */
    uint32_t next;     /* the slot after the one last taken: the search starts here */
    uint32_t index, n; /* this engine, of n */
} worker_user_ids_t;

/* Starts empty (no slot) for engine index of n. */
void worker_user_ids_init(worker_user_ids_t *ids, unsigned index, unsigned n);
void worker_user_ids_free(worker_user_ids_t *ids);
/* A new share (base) or a rescale (cap slots): with another base every slot is free again.
 * The caller then holds the ids of the users still running (worker_user_ids_hold), so none
 * is handed out twice. Returns 0, or LC_ENOMEM (nothing changed). */
int worker_user_ids_share(worker_user_ids_t *ids, uint64_t base, uint32_t cap);
/* Marks id taken, when it is one of the share's slots (a user started before the share). */
void worker_user_ids_hold(worker_user_ids_t *ids, uint64_t id);
/* The first free id at or after the slot after the last one taken, wrapping around, into
 * *id; false when every slot is held. In turn, so that users started one after another get
 * the share's ids in order (a journey follows its user's id) even when each ends before the
 * next starts; a freed id comes back once the others have had their turn. */
bool worker_user_ids_take(worker_user_ids_t *ids, uint64_t *id);
/* The user holding id is gone: its slot is free (an id of no slot is ignored). */
void worker_user_ids_give(worker_user_ids_t *ids, uint64_t id);

#endif
