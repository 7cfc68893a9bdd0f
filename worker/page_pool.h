/* page_pool.h — any thread: blocks of whole pages carved from large anonymous mappings, for
 * memory whose pages go back to the kernel while it is not needed, or that must stay out of
 * the heap (an HTTP/2 connection's page and nghttp2's big blocks: h2_session.c, h2_mem.c).
 * Unlike malloc'd aligned blocks they leave no fragments in the heap, and unlike a mapping
 * each they do not add one kernel map area per block. Under ASan a block is poisoned while
 * it is not handed out, and so is the rest of its last page. */
#ifndef WORKER_PAGE_POOL_H
#define WORKER_PAGE_POOL_H

#include <stddef.h>

/* Blocks of up to this many pages come from the pool; larger ones are mappings of their own. */
#define WORKER_PAGE_POOL_MAX_PAGES 8u

/* A page-aligned block of at least `bytes` (> 0), all zeros; NULL when out of memory. */
void *worker_page_pool_take(size_t bytes);
/* Block p (from worker_page_pool_take with the same bytes, or NULL) is free: its pages go
 * back to the kernel now, and a later take may hand it out again. */
void worker_page_pool_give(void *p, size_t bytes);
/* The pages of the len bytes at p (page-aligned, len a multiple of the page) go back to the
 * kernel; they read as zeros when next touched. Returns len, or 0 when the kernel refused. */
size_t worker_page_pool_drop(void *p, size_t len);
/* The system's page size. */
size_t worker_page_size(void);

#endif
