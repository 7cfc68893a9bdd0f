/* h2_mem.h — engine thread: the allocator of one connection's nghttp2 session, which gives the
 * session's two big blocks whole pages from the page pool (page_pool.h) so that an idle
 * connection can hand those pages back to the kernel: the 16 KiB output frame buffer (dead
 * once everything has been sent) and the stream map's 4 KiB table (all zeros while no stream
 * is open). */
#ifndef WORKER_H2_MEM_H
#define WORKER_H2_MEM_H

#include <stdbool.h>
#include <stddef.h>

#include <nghttp2/nghttp2.h>

/* What the allocator takes for the session's big blocks while the session is created
 * (nghttp2 1.52 makes one of each then, and nothing else this large): an allocation of at
 * least FRAMEBUF_MIN is the frame buffer; a zeroed one (calloc) of at least TABLE_MIN the
 * stream map's table. */
#define WORKER_H2_MEM_FRAMEBUF_MIN (16u * 1024u)
#define WORKER_H2_MEM_TABLE_MIN (4u * 1024u)

typedef struct worker_h2_mem_block_s {
    void *at;              /* page-aligned; NULL: not known (yet), or freed */
    size_t len;
} worker_h2_mem_block_t;

typedef struct worker_h2_mem_s {
    worker_h2_mem_block_t framebuf;
    worker_h2_mem_block_t table;
    size_t live;           /* bytes the session holds (malloc's usable sizes, the big
                            * blocks' lengths), released pages included */
    bool creating;         /* inside worker_h2_mem_client_new: watch for the big blocks */
} worker_h2_mem_t;

/* A client session (nghttp2_session_client_new3's arguments) whose allocator is m's: malloc's,
 * the two big blocks from the page pool, noted in m. m must outlive the session, which must be
 * freed on the thread that made it. Returns nghttp2's result (0 or NGHTTP2_ERR_NOMEM). */
int worker_h2_mem_client_new(nghttp2_session **out, const nghttp2_session_callbacks *cbs,
                             void *user, const nghttp2_option *opt, worker_h2_mem_t *m);
/* The allocator itself, noting in m; outside worker_h2_mem_client_new it takes no big block. */
nghttp2_mem worker_h2_mem(worker_h2_mem_t *m);
/* The session has nothing to send and has sent everything it had (nghttp2_session_want_write
 * false after the last nghttp2_session_mem_send returned 0), so the frame buffer's contents
 * are dead: its whole pages go back to the kernel (zero-filled when next touched), and so do
 * the table's whole pages that hold only zeros (an exact copy comes back when touched).
 * Returns the bytes given back. One system call or two: for waits of 100 ms and more, not
 * after every response. */
size_t worker_h2_mem_release(worker_h2_mem_t *m);

#endif
