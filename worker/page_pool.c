/* page_pool.c — a free list per block size (in pages) over 2 MiB mappings, behind one lock. */
#include "page_pool.h"

#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "asan_poison.h"

#define CHUNK_BYTES (2u << 20)

/* The blocks of one size given back, as pointers kept outside the blocks (so that a free
 * block stays without resident pages). */
typedef struct free_list_s {
    void **at;
    size_t len, cap;
} free_list_t;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static free_list_t free_lists[WORKER_PAGE_POOL_MAX_PAGES + 1]; /* by pages */
static char *chunk_next, *chunk_end; /* the newest mapping's bytes never handed out */

size_t worker_page_size(void)
{
    long p = sysconf(_SC_PAGESIZE); /* from the auxiliary vector: no system call */
    return p > 0 ? (size_t)p : 4096u;
}

static size_t pages_of(size_t bytes)
{
    return (bytes + worker_page_size() - 1) / worker_page_size();
}

/* A mapping of its own, without transparent huge pages: with them (THP "always") one write
 * could make a whole 2 MiB resident, the pages never touched and those dropped included. */
static void *map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    (void)madvise(p, bytes, MADV_NOHUGEPAGE); /* advice: a kernel without THP refuses it */
    return p;
}

size_t worker_page_pool_drop(void *p, size_t len)
{
    assert(((uintptr_t)p & (worker_page_size() - 1)) == 0);
    return len > 0 && madvise(p, len, MADV_DONTNEED) == 0 ? len : 0;
}

/* A block of `pages` never handed out, from the newest mapping or a new one. Lock held. */
static void *carve(size_t pages)
{
    size_t bytes = pages * worker_page_size();
    if (chunk_next == NULL || (size_t)(chunk_end - chunk_next) < bytes) {
        char *chunk = map(CHUNK_BYTES); /* the old one's rest stays unused, never touched */
        if (chunk == NULL)
            return NULL;
        WORKER_POISON(chunk, CHUNK_BYTES); /* until handed out */
        chunk_next = chunk;
        chunk_end = chunk + CHUNK_BYTES;
    }
    void *p = chunk_next;
    chunk_next += bytes;
    return p;
}

void *worker_page_pool_take(size_t bytes)
{
    assert(bytes > 0);
    size_t pages = pages_of(bytes);
    if (pages > WORKER_PAGE_POOL_MAX_PAGES)
        return map(pages * worker_page_size());
    pthread_mutex_lock(&pool_lock);
    free_list_t *fl = &free_lists[pages];
    void *p = fl->len > 0 ? fl->at[--fl->len] : carve(pages); /* given back: dropped, zeros */
    pthread_mutex_unlock(&pool_lock);
    if (p != NULL)
        WORKER_UNPOISON(p, bytes); /* the rest of its last page stays off limits */
    return p;
}

void worker_page_pool_give(void *p, size_t bytes)
{
    if (p == NULL)
        return;
    size_t pages = pages_of(bytes);
    if (pages > WORKER_PAGE_POOL_MAX_PAGES) {
        munmap(p, pages * worker_page_size());
        return;
    }
    WORKER_UNPOISON(p, pages * worker_page_size());
    if (worker_page_pool_drop(p, pages * worker_page_size()) == 0)
        memset(p, 0, pages * worker_page_size()); /* a take promises zeros */
    WORKER_POISON(p, pages * worker_page_size());
    pthread_mutex_lock(&pool_lock);
    free_list_t *fl = &free_lists[pages];
    if (fl->len == fl->cap) {
        size_t cap = fl->cap > 0 ? fl->cap * 2 : 64;
        void **at = realloc(fl->at, cap * sizeof *at);
        if (at == NULL) { /* the block is lost to the pool (its pages are dropped) */
            pthread_mutex_unlock(&pool_lock);
            return;
        }
        fl->at = at;
        fl->cap = cap;
    }
    fl->at[fl->len++] = p;
    pthread_mutex_unlock(&pool_lock);
}
