/* heap_trim.c — malloc_trim when the free heap has grown by a step. */
#include "heap_trim.h"

#include <assert.h>
#include <stdbool.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "lc_log.h"

int worker_heap_trim_tick(worker_heap_trim_t *h)
{
    assert(h != NULL);
#ifdef __GLIBC__
    struct mallinfo2 m = mallinfo2(); /* every arena, the engines' too */
    if (m.fordblks < h->free_at_last)
        h->free_at_last = m.fordblks; /* reused: the next step counts from here */
    bool settled = m.fordblks == h->free_at_tick;
    h->free_at_tick = m.fordblks;
    if (m.fordblks < h->free_at_last + WORKER_HEAP_TRIM_STEP &&
        !(settled && m.fordblks >= h->free_at_last + WORKER_HEAP_TRIM_TAIL))
        return 0;
    h->free_at_last = m.fordblks; /* trimmed pages still count as free */
    (void)malloc_trim(0);
    lc_debug("heap", "msg=\"free heap given back\" free_bytes=%zu", m.fordblks);
    return 1;
#else
    (void)h;
    return 0;
#endif
}
