/* asan_poison.h — any thread: marks memory the worker hands out itself (slabs, the page pool,
 * carved blocks) as off limits or usable again for AddressSanitizer; nothing without it. */
#ifndef WORKER_ASAN_POISON_H
#define WORKER_ASAN_POISON_H

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define WORKER_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define WORKER_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define WORKER_POISON(p, n) ((void)(p), (void)(n))
#define WORKER_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#endif
