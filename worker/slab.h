/* slab.h — engine thread: objects of one size carved from blocks of many, so that objects
 * that live long (a connection's TLS state) sit together rather than among the short-lived
 * allocations of TLS handshakes, whose freed pages could not go back to the system while
 * one small survivor pins each of them. */
#ifndef WORKER_SLAB_H
#define WORKER_SLAB_H

#include <stddef.h>

typedef struct worker_slab_s {
    size_t size;      /* an object's bytes, rounded up to 16 */
    size_t per_block; /* objects a block holds */
    void *free;       /* objects given back, linked through their first bytes */
    void *blocks;     /* every block, linked through its header */
    size_t fresh;     /* objects of the newest block never handed out */
} worker_slab_t;

/* An empty slab of objects of `size` bytes, per_block (> 0) to a block. */
void worker_slab_init(worker_slab_t *s, size_t size, size_t per_block);
/* A zeroed object, or NULL when out of memory. */
void *worker_slab_take(worker_slab_t *s);
/* obj (from worker_slab_take of s, or NULL) is free again. */
void worker_slab_give(worker_slab_t *s, void *obj);
/* Frees every block: no object may be in use. */
void worker_slab_free(worker_slab_t *s);

#endif
