/* heap_trim.h — control thread: gives free heap pages back to the system, once a second at
 * most, when the free part of the heap has grown by a step since the last time (a burst of
 * TLS handshakes frees ~20 KiB per connection between the objects its connections keep), or
 * by less once it stopped growing (the tail of a burst), so that idle users' RSS is what
 * they hold. glibc only; elsewhere nothing. */
#ifndef WORKER_HEAP_TRIM_H
#define WORKER_HEAP_TRIM_H

#include <stddef.h>

/* Growth of the free heap (bytes) that is worth a malloc_trim. */
#define WORKER_HEAP_TRIM_STEP ((size_t)8 << 20)
/* Growth worth a trim once the free heap stayed the same for a tick. */
#define WORKER_HEAP_TRIM_TAIL ((size_t)1 << 20)

typedef struct worker_heap_trim_s {
    size_t free_at_last; /* free heap bytes at the last trim (or the lowest seen since) */
    size_t free_at_tick; /* free heap bytes at the previous tick */
} worker_heap_trim_t;

/* Called once per stats interval: trims when free heap >= free_at_last + the step, or
 * >= free_at_last + the tail and unchanged since the previous tick. Returns whether it
 * trimmed. */
int worker_heap_trim_tick(worker_heap_trim_t *h);

#endif
