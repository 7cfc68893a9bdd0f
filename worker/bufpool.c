/* bufpool.c — the engine's spare capture buffers. */
#include "bufpool.h"

#include <assert.h>
#include <stdlib.h>

lc_buf_t *worker_bufpool_take(worker_bufpool_t *p)
{
    if (p != NULL && p->n > 0) {
        lc_buf_t *b = p->spare[--p->n];
        b->len = 0;
        return b;
    }
    return calloc(1, sizeof(lc_buf_t));
}

void worker_bufpool_give(worker_bufpool_t *p, lc_buf_t *b)
{
    if (b == NULL)
        return;
    if (p != NULL && p->n < WORKER_BUFPOOL_MAX && b->cap <= WORKER_BUFPOOL_KEEP_BYTES) {
        p->spare[p->n++] = b;
        return;
    }
    lc_buf_free(b);
    free(b);
}

void worker_bufpool_free(worker_bufpool_t *p)
{
    assert(p != NULL);
    while (p->n > 0) {
        lc_buf_t *b = p->spare[--p->n];
        lc_buf_free(b);
        free(b);
    }
}
