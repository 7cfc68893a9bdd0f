/* h2_mem.h — engine thread: the allocator of one connection's nghttp2 session, which keeps the
 * session out of the heap so that an idle connection holds little and pins no heap page. The
 * big blocks get whole pages from the page pool (page_pool.h) and give them back while the
 * connection is idle: the 16 KiB output frame buffer (dead once everything has been sent),
 * the stream map's 4 KiB table (all zeros while no stream is open), and the rings of the two
 * HPACK tables (1 KiB each, never written while their table may hold nothing). The session
 * struct (~2.9 KB) and the other blocks made while it is created are carved from spare room
 * the caller gives, the rest of the page its own state is in: made in the heap during a TLS
 * handshake they would sit among the handshake's memory and pin its pages once it is freed.
 * What nghttp2 allocates later is malloc's (a request with a body leaves a 32-byte queue
 * there until the session ends). Under ASan, room not handed out is poisoned. */
#ifndef WORKER_H2_MEM_H
#define WORKER_H2_MEM_H

#include <stdbool.h>
#include <stddef.h>

#include <nghttp2/nghttp2.h>

/* How the allocator knows the big blocks while the session is created (nghttp2 1.52 makes
 * one of each then, in this order: the encoder's ring, the decoder's ring, the stream table,
 * the frame buffer): a malloc of exactly HPACK_RING bytes is a ring (128 entry pointers, for
 * the default 4,096-byte table); a calloc of at least TABLE_MIN the stream map's table; an
 * allocation of at least FRAMEBUF_MIN the frame buffer. With another nghttp2 version every
 * block is malloc's or carved: its sizes may mean other blocks. */
#define WORKER_H2_MEM_HPACK_RING (128u * sizeof(void *))
#define WORKER_H2_MEM_TABLE_MIN (4u * 1024u)
#define WORKER_H2_MEM_FRAMEBUF_MIN (16u * 1024u)

typedef enum worker_h2_mem_which_e {
    WORKER_H2_MEM_DEFLATE_RING, /* our encoder's table of request headers */
    WORKER_H2_MEM_INFLATE_RING, /* our decoder's table of response headers */
    WORKER_H2_MEM_STREAMS,      /* the stream map's table */
    WORKER_H2_MEM_FRAMEBUF,     /* the output frame buffer */
    WORKER_H2_MEM_BLOCKS
} worker_h2_mem_which_t;

typedef struct worker_h2_mem_block_s {
    void *at;              /* page-aligned; NULL: not known (yet), or freed */
    size_t len;            /* as asked; the block owns all the pages it spans */
} worker_h2_mem_block_t;

typedef struct worker_h2_mem_s {
    worker_h2_mem_block_t block[WORKER_H2_MEM_BLOCKS];
    char *spare;           /* room for the blocks made while the session is created */
    size_t spare_len, spare_used;
    size_t live;           /* bytes the session holds (malloc's usable sizes, the pages the
                            * big blocks span, carved blocks), released pages included */
    bool creating;         /* inside worker_h2_mem_client_new: watch for the big blocks */
} worker_h2_mem_t;

/* m is empty; its session will carve the blocks it makes while being created (the session
 * struct first) from the len bytes at spare (16-byte aligned, zeros, the caller's until the
 * session is freed) as far as they go. spare may be NULL (len 0): no carving. */
void worker_h2_mem_init(worker_h2_mem_t *m, void *spare, size_t len);
/* A client session (nghttp2_session_client_new3's arguments) whose allocator is m's: the big
 * blocks from the page pool, the others made meanwhile carved while there is room, then
 * malloc's, all noted in m. m must outlive the session, which must be freed on the thread
 * that made it. Returns nghttp2's result (0 or NGHTTP2_ERR_NOMEM). */
int worker_h2_mem_client_new(nghttp2_session **out, const nghttp2_session_callbacks *cbs,
                             void *user, const nghttp2_option *opt, worker_h2_mem_t *m);
/* The allocator itself, noting in m; outside worker_h2_mem_client_new it takes no big block. */
nghttp2_mem worker_h2_mem(worker_h2_mem_t *m);
/* Session s (m's) has nothing to send and has sent everything it had (nghttp2_session_
 * want_write false after the last nghttp2_session_mem_send returned 0), so the frame
 * buffer's contents are dead: its pages go back to the kernel (zero-filled when next
 * touched). So do the stream table's pages when they hold only zeros (an exact copy comes
 * back when touched), and a ring's when its HPACK table holds nothing (a ring's slots past
 * the table's length are never read) and the ring was written. Returns the bytes that hold
 * nothing now: given back, or found never written. At most four system calls (one per
 * block): for waits of 100 ms and more, not after every response. s may be NULL when m
 * knows no ring. */
size_t worker_h2_mem_release(worker_h2_mem_t *m, nghttp2_session *s);

#endif
