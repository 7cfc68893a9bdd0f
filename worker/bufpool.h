/* bufpool.h — engine thread: the engine's spare buffers for captured response bodies and
 * headers, taken by a connection while a response that needs them comes in and given back
 * right after, so an idle user holds none. */
#ifndef WORKER_BUFPOOL_H
#define WORKER_BUFPOOL_H

#include <stddef.h>

#include "lc_buf.h"

#define WORKER_BUFPOOL_MAX 64                 /* spare buffers kept */
#define WORKER_BUFPOOL_KEEP_BYTES (64u << 10) /* a bigger one is freed, not kept */

typedef struct worker_bufpool_s {
    lc_buf_t *spare[WORKER_BUFPOOL_MAX];
    size_t n;
} worker_bufpool_t;

/* An empty buffer (a spare one when there is one), or NULL when out of memory. */
lc_buf_t *worker_bufpool_take(worker_bufpool_t *p);
/* b goes back to the pool, or is freed (the pool is full, or b grew big). */
void worker_bufpool_give(worker_bufpool_t *p, lc_buf_t *b);
/* Frees the spare buffers. */
void worker_bufpool_free(worker_bufpool_t *p);

#endif
