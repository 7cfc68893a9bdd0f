/* slab.c — fixed-size objects from blocks; under ASan a free object is poisoned. */
#include "slab.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "asan_poison.h"

/* A block: this header, then per_block objects. */
typedef struct block_s {
    struct block_s *next;
    _Alignas(16) unsigned char objects[];
} block_t;

void worker_slab_init(worker_slab_t *s, size_t size, size_t per_block)
{
    assert(s != NULL && size > 0 && per_block > 0);
    memset(s, 0, sizeof *s);
    if (size < sizeof(void *))
        size = sizeof(void *);
    s->size = (size + 15) & ~(size_t)15;
    s->per_block = per_block;
}

void *worker_slab_take(worker_slab_t *s)
{
    assert(s->size > 0);
    void *obj = s->free;
    if (obj != NULL) {
        WORKER_UNPOISON(obj, s->size);
        memcpy(&s->free, obj, sizeof(void *));
    } else {
        if (s->fresh == 0) {
            block_t *b = malloc(sizeof *b + s->size * s->per_block);
            if (b == NULL)
                return NULL;
            b->next = s->blocks;
            s->blocks = b;
            s->fresh = s->per_block;
        }
        block_t *b = s->blocks;
        obj = b->objects + s->size * (s->per_block - s->fresh--);
    }
    return memset(obj, 0, s->size);
}

void worker_slab_give(worker_slab_t *s, void *obj)
{
    if (obj == NULL)
        return;
    memcpy(obj, &s->free, sizeof(void *));
    s->free = obj;
    WORKER_POISON((char *)obj + sizeof(void *), s->size - sizeof(void *));
}

void worker_slab_free(worker_slab_t *s)
{
    for (block_t *b = s->blocks, *next; b != NULL; b = next) {
        next = b->next;
        WORKER_UNPOISON(b->objects, s->size * s->per_block);
        free(b);
    }
    s->blocks = s->free = NULL;
    s->fresh = 0;
}
