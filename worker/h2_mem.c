/* h2_mem.c — nghttp2 allocations through malloc, the two big blocks from the page pool. */
#include "h2_mem.h"

#include <assert.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "page_pool.h"

/* p, just allocated by malloc (or NULL), counted in m->live. */
static void *counted(worker_h2_mem_t *m, void *p)
{
    if (p != NULL)
        m->live += malloc_usable_size(p);
    return p;
}

/* n bytes from the page pool, noted in b and counted. */
static void *take_paged(worker_h2_mem_t *m, worker_h2_mem_block_t *b, size_t n)
{
    void *p = worker_page_pool_take(n);
    if (p == NULL)
        return NULL;
    *b = (worker_h2_mem_block_t){.at = p, .len = n};
    m->live += n;
    return p;
}

/* The big block at p, or NULL when p is an ordinary one. */
static worker_h2_mem_block_t *paged_block(worker_h2_mem_t *m, const void *p)
{
    if (p == NULL)
        return NULL;
    return p == m->framebuf.at ? &m->framebuf : p == m->table.at ? &m->table : NULL;
}

/* Big block b back to the pool. */
static void give_paged(worker_h2_mem_t *m, worker_h2_mem_block_t *b)
{
    assert(m->live >= b->len);
    m->live -= b->len;
    worker_page_pool_give(b->at, b->len);
    *b = (worker_h2_mem_block_t){0};
}

static void *alloc_block(size_t n, worker_h2_mem_t *m)
{
    if (m->creating && m->framebuf.at == NULL && n >= WORKER_H2_MEM_FRAMEBUF_MIN)
        return take_paged(m, &m->framebuf, n);
    return counted(m, malloc(n));
}

static void mem_free(void *p, void *user)
{
    worker_h2_mem_t *m = user;
    worker_h2_mem_block_t *b = paged_block(m, p);
    if (b != NULL)
        give_paged(m, b);
    if (p == NULL || b != NULL)
        return;
    size_t n = malloc_usable_size(p);
    assert(m->live >= n);
    m->live -= n;
    free(p);
}

static void *mem_malloc(size_t n, void *user)
{
    return alloc_block(n, user);
}

static void *mem_calloc(size_t count, size_t size, void *user)
{
    worker_h2_mem_t *m = user;
    if (size != 0 && count > SIZE_MAX / size)
        return NULL;
    size_t n = count * size;
    if (m->creating && m->table.at == NULL && n >= WORKER_H2_MEM_TABLE_MIN)
        return take_paged(m, &m->table, n); /* the pool's blocks come zeroed */
    return counted(m, calloc(count, size));
}

/* nghttp2 creates its buffers by reallocating NULL. A big block that is resized (nghttp2 1.52
 * never resizes these) moves to malloc and is forgotten. */
static void *mem_realloc(void *p, size_t n, void *user)
{
    worker_h2_mem_t *m = user;
    if (p == NULL)
        return alloc_block(n, m);
    if (n == 0) {
        mem_free(p, m);
        return NULL;
    }
    worker_h2_mem_block_t *b = paged_block(m, p);
    if (b != NULL) {
        void *q = counted(m, malloc(n));
        if (q != NULL) {
            memcpy(q, p, b->len < n ? b->len : n);
            give_paged(m, b);
        }
        return q;
    }
    size_t was = malloc_usable_size(p);
    void *q = realloc(p, n);
    if (q == NULL)
        return NULL;
    assert(m->live >= was);
    m->live -= was;
    return counted(m, q);
}

nghttp2_mem worker_h2_mem(worker_h2_mem_t *m)
{
    assert(m != NULL);
    return (nghttp2_mem){.mem_user_data = m,
                         .malloc = mem_malloc,
                         .free = mem_free,
                         .calloc = mem_calloc,
                         .realloc = mem_realloc};
}

int worker_h2_mem_client_new(nghttp2_session **out, const nghttp2_session_callbacks *cbs,
                             void *user, const nghttp2_option *opt, worker_h2_mem_t *m)
{
    assert(out != NULL && !m->creating);
    nghttp2_mem mem = worker_h2_mem(m); /* copied into the session */
    m->creating = true;
    int rv = nghttp2_session_client_new3(out, cbs, user, opt, &mem);
    m->creating = false;
    return rv;
}

static size_t whole_pages(const worker_h2_mem_block_t *b)
{
    return b->len & ~(worker_page_size() - 1); /* the block starts on a page */
}

/* Whether the len bytes at p are all zero. */
static bool all_zero(const void *p, size_t len)
{
    const uint64_t *w = p; /* page-aligned, len a multiple of the page */
    uint64_t any = 0;
    for (size_t i = 0; i < len / sizeof *w; i++)
        any |= w[i];
    return any == 0;
}

size_t worker_h2_mem_release(worker_h2_mem_t *m)
{
    size_t given = 0;
    if (m->framebuf.at != NULL)
        given += worker_page_pool_drop(m->framebuf.at, whole_pages(&m->framebuf));
    size_t table = m->table.at != NULL ? whole_pages(&m->table) : 0;
    if (table > 0 && all_zero(m->table.at, table))
        given += worker_page_pool_drop(m->table.at, table);
    return given;
}
