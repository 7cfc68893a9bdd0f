/* session.h — engine thread: one journey user's session, allocated on first use: its
 * variables (values packed in one small arena), its cookie jar and its feeder rows. */
#ifndef WORKER_SESSION_H
#define WORKER_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lc_cookie.h"
#include "lc_journey.h"
#include "lc_value.h"

#define WORKER_SESSION_NO_ROW UINT32_MAX

typedef struct worker_slot_s {
    uint32_t off, len;
    uint8_t type; /* enum lc_vtype */
    bool set;
} worker_slot_t;

typedef struct worker_session_s {
    lc_cookie_jar_t jar;
    char *arena;          /* the variables' bytes; overwritten values leave garbage */
    uint32_t arena_len, arena_cap;
    uint16_t n_vars, n_feeders;
    uint32_t *rows;       /* n_feeders: the row each feeder gave this user, or NO_ROW */
    worker_slot_t slots[]; /* n_vars */
} worker_session_t;

/* A session for p's variables and feeders, all unset; NULL when out of memory. */
worker_session_t *worker_session_new(const lc_program_t *p);
void worker_session_free(worker_session_t *s);

/* Sets variable slot to a copy of v's bytes. Returns 0 or LC_ENOMEM (unchanged then). */
int worker_session_set(worker_session_t *s, uint32_t slot, const char *data, size_t len,
                       uint8_t type);
void worker_session_unset_all(worker_session_t *s);
/* Unsets variable slot (a script's u.vars.x = nil); its bytes are reclaimed by a compaction. */
void worker_session_unset(worker_session_t *s, uint32_t slot);
/* The value of slot: a variable, or a feeder column of the row this user holds. False when
 * unset. */
bool worker_session_get(const worker_session_t *s, const lc_program_t *p, uint32_t slot,
                        lc_value_t *out);
/* Heap bytes the session holds (for the idle-user estimate). */
size_t worker_session_bytes(const worker_session_t *s);

#endif
