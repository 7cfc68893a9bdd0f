/* template.h — any thread (pure): the ${…} templates of request paths and
 * bodies, compiled once per run, rendered per request. */
#ifndef WORKER_TEMPLATE_H
#define WORKER_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lc_buf.h"

enum worker_tpl_kind {
    WORKER_TPL_LITERAL,
    WORKER_TPL_USER_ID,
    WORKER_TPL_ITERATION,
    WORKER_TPL_RAND,
    WORKER_TPL_UUID,
};

typedef struct worker_tpl_part_s {
    enum worker_tpl_kind kind;
    size_t off, len;  /* literal: bytes text[off, off+len) */
    int64_t lo, hi;   /* rand(lo,hi), lo <= hi */
} worker_tpl_part_t;

typedef struct worker_tpl_s {
    char *text;       /* copy of the source */
    worker_tpl_part_t *parts;
    size_t n_parts;
    bool dynamic;     /* holds at least one ${…} */
} worker_tpl_t;

/* What a template may refer to while rendering. */
typedef struct worker_tpl_vars_s {
    uint64_t user_id;   /* 1-based, unique within the run on this worker */
    uint64_t iteration; /* 0-based count of the user's previous requests */
    uint64_t *rng;      /* the engine's generator */
} worker_tpl_vars_t;

/* Compiles src. Returns 0, LC_ENOMEM, or LC_EINVAL with errmsg naming the
 * bad template ("unknown template ${foo}"). */
int worker_tpl_compile(worker_tpl_t *t, const char *src, char *errmsg, size_t errlen);
void worker_tpl_free(worker_tpl_t *t);

/* Appends the rendering of t to out. Returns 0 or LC_ENOMEM. */
int worker_tpl_render(const worker_tpl_t *t, const worker_tpl_vars_t *vars, lc_buf_t *out);

#endif
