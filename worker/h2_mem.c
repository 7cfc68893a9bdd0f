/* h2_mem.c — nghttp2 allocations: the big blocks from the page pool, those made while the
 * session is created carved from the caller's spare room, the rest through malloc. */
#include "h2_mem.h"

#include <assert.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "asan_poison.h"
#include "page_pool.h"

/* p, just allocated by malloc (or NULL), counted in m->live. */
static void *counted(worker_h2_mem_t *m, void *p)
{
    if (p != NULL)
        m->live += malloc_usable_size(p);
    return p;
}

/* The pages block b spans (it starts on one), in bytes. */
static size_t spanned(const worker_h2_mem_block_t *b)
{
    size_t page = worker_page_size();
    return (b->len + page - 1) / page * page;
}

/* The big block at p, or NULL when p is an ordinary one. */
static worker_h2_mem_block_t *paged_block(worker_h2_mem_t *m, const void *p)
{
    for (int i = 0; p != NULL && i < WORKER_H2_MEM_BLOCKS; i++)
        if (m->block[i].at == p)
            return &m->block[i];
    return NULL;
}

/* Big block b back to the pool. */
static void give_paged(worker_h2_mem_t *m, worker_h2_mem_block_t *b)
{
    assert(m->live >= spanned(b));
    m->live -= spanned(b);
    worker_page_pool_give(b->at, b->len);
    *b = (worker_h2_mem_block_t){0};
}

/* Each block carved from the spare room starts with its length. */
#define CARVED_HEAD 16u

static size_t carved_size(size_t n)
{
    return CARVED_HEAD + ((n + 15u) & ~(size_t)15u);
}

static bool is_carved(const worker_h2_mem_t *m, const void *p)
{
    const char *c = p;
    return p != NULL && m->spare != NULL && c >= m->spare && c < m->spare + m->spare_len;
}

/* n bytes from the spare room while the session is being created, or NULL when they do not
 * fit (or the session exists). The room is zeros, and is never handed out twice. */
static void *carve(worker_h2_mem_t *m, size_t n)
{
    if (!m->creating || n == 0 || n > m->spare_len ||
        carved_size(n) > m->spare_len - m->spare_used)
        return NULL;
    char *at = m->spare + m->spare_used;
    WORKER_UNPOISON(at, CARVED_HEAD + n); /* the padding after it stays off limits */
    memcpy(at, &n, sizeof n);
    m->spare_used += carved_size(n);
    m->live += carved_size(n);
    return at + CARVED_HEAD;
}

/* The length carved block p was asked with. */
static size_t carved_len(const void *p)
{
    size_t n;
    memcpy(&n, (const char *)p - CARVED_HEAD, sizeof n);
    return n;
}

/* Carved block p is free: its room stays used (the session frees these when it ends). */
static void uncarve(worker_h2_mem_t *m, const void *p)
{
    size_t n = carved_len(p);
    assert(m->live >= carved_size(n));
    m->live -= carved_size(n);
    WORKER_POISON((const char *)p - CARVED_HEAD, CARVED_HEAD + n); /* a second free is caught */
}

/* The big blocks are told apart by the sizes nghttp2 1.52 gives them (h2_mem.h): another
 * version's stay malloc's, whatever their sizes, as releasing a block it uses otherwise would
 * corrupt it. */
#define KNOWN_LAYOUT (NGHTTP2_VERSION_NUM >> 8 == 0x0134)

/* Which big block an allocation of n bytes (zeroed: a calloc) is while the session is being
 * created, or WORKER_H2_MEM_BLOCKS for an ordinary one. */
static worker_h2_mem_which_t which_block(const worker_h2_mem_t *m, size_t n, bool zeroed)
{
    if (!m->creating || !KNOWN_LAYOUT)
        return WORKER_H2_MEM_BLOCKS;
    worker_h2_mem_which_t w = WORKER_H2_MEM_BLOCKS;
    if (!zeroed && n == WORKER_H2_MEM_HPACK_RING)
        w = m->block[WORKER_H2_MEM_DEFLATE_RING].at == NULL ? WORKER_H2_MEM_DEFLATE_RING
                                                             : WORKER_H2_MEM_INFLATE_RING;
    else if (zeroed && n >= WORKER_H2_MEM_TABLE_MIN)
        w = WORKER_H2_MEM_STREAMS;
    else if (n >= WORKER_H2_MEM_FRAMEBUF_MIN)
        w = WORKER_H2_MEM_FRAMEBUF;
    return w != WORKER_H2_MEM_BLOCKS && m->block[w].at == NULL ? w : WORKER_H2_MEM_BLOCKS;
}

/* n bytes (zeroed ones if asked), from the page pool for a big block, else from malloc. */
static void *alloc_block(worker_h2_mem_t *m, size_t n, bool zeroed)
{
    worker_h2_mem_which_t w = which_block(m, n, zeroed);
    if (w == WORKER_H2_MEM_BLOCKS) {
        void *p = carve(m, n);
        return p != NULL ? p : counted(m, zeroed ? calloc(1, n) : malloc(n));
    }
    void *p = worker_page_pool_take(n); /* the pool's blocks come zeroed */
    if (p == NULL)
        return NULL;
    m->block[w] = (worker_h2_mem_block_t){.at = p, .len = n};
    m->live += spanned(&m->block[w]);
    return p;
}

static void mem_free(void *p, void *user)
{
    worker_h2_mem_t *m = user;
    if (p == NULL)
        return;
    worker_h2_mem_block_t *b = paged_block(m, p);
    if (b != NULL) {
        give_paged(m, b);
        return;
    }
    if (is_carved(m, p)) {
        uncarve(m, p);
        return;
    }
    size_t n = malloc_usable_size(p);
    assert(m->live >= n);
    m->live -= n;
    free(p);
}

static void *mem_malloc(size_t n, void *user)
{
    return alloc_block(user, n, false);
}

static void *mem_calloc(size_t count, size_t size, void *user)
{
    if (size != 0 && count > SIZE_MAX / size)
        return NULL;
    return alloc_block(user, count * size, true);
}

/* nghttp2 creates its buffers by reallocating NULL. A big or carved block that is resized
 * (nghttp2 1.52 never resizes these) moves to malloc and is forgotten. */
static void *mem_realloc(void *p, size_t n, void *user)
{
    worker_h2_mem_t *m = user;
    if (p == NULL)
        return alloc_block(m, n, false);
    if (n == 0) {
        mem_free(p, m);
        return NULL;
    }
    worker_h2_mem_block_t *b = paged_block(m, p);
    if (b != NULL || is_carved(m, p)) { /* to malloc */
        size_t had = b != NULL ? b->len : carved_len(p);
        void *q = counted(m, malloc(n));
        if (q != NULL) {
            memcpy(q, p, had < n ? had : n);
            mem_free(p, m);
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

void worker_h2_mem_init(worker_h2_mem_t *m, void *spare, size_t len)
{
    assert(m != NULL && ((uintptr_t)spare & 15u) == 0 && (spare != NULL || len == 0));
    *m = (worker_h2_mem_t){.spare = spare, .spare_len = len};
    if (spare != NULL)
        WORKER_POISON(spare, len); /* until carved */
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

/* Whether the len bytes at p are all zero. */
static bool all_zero(const void *p, size_t len)
{
    const uint64_t *w = p; /* page-aligned, len a multiple of 8 */
    assert(len % sizeof *w == 0);
    uint64_t any = 0;
    for (size_t i = 0; i < len / sizeof *w; i++)
        any |= w[i];
    return any == 0;
}

/* Ring b of an HPACK table that holds table_bytes: its pages go when the table is empty;
 * untouched ones (all zeros: the kernel's zero page, nothing resident) need no call. */
static size_t release_ring(const worker_h2_mem_block_t *b, size_t table_bytes)
{
    if (b->at == NULL || table_bytes > 0)
        return 0;
    /* Only the block is read: the rest of its page is no one's (and off limits under ASan). */
    return all_zero(b->at, b->len) ? spanned(b) : worker_page_pool_drop(b->at, spanned(b));
}

size_t worker_h2_mem_release(worker_h2_mem_t *m, nghttp2_session *s)
{
    const worker_h2_mem_block_t *framebuf = &m->block[WORKER_H2_MEM_FRAMEBUF],
                                *streams = &m->block[WORKER_H2_MEM_STREAMS];
    size_t given = 0;
    if (framebuf->at != NULL)
        given += worker_page_pool_drop(framebuf->at, spanned(framebuf));
    if (streams->at != NULL && all_zero(streams->at, streams->len))
        given += worker_page_pool_drop(streams->at, spanned(streams));
    const worker_h2_mem_block_t *deflate = &m->block[WORKER_H2_MEM_DEFLATE_RING],
                                *inflate = &m->block[WORKER_H2_MEM_INFLATE_RING];
    if (deflate->at == NULL && inflate->at == NULL)
        return given;
    assert(s != NULL);
    given += release_ring(deflate, nghttp2_session_get_hd_deflate_dynamic_table_size(s));
    given += release_ring(inflate, nghttp2_session_get_hd_inflate_dynamic_table_size(s));
    return given;
}
