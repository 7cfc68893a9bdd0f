/* aio_destroy.h — raft_uv's io_destroy(2) of a closed segment's AIO context, moved off the loop
 * to a thread: the kernel waits out an RCU grace period in it (40-54 ms measured on the loop,
 * once per 8 MB segment: every ~1.6 s at 1,000 workers). */
#ifndef MASTER_CLUSTER_AIO_DESTROY_H
#define MASTER_CLUSTER_AIO_DESTROY_H

#include <stdbool.h>
#include <stdint.h>

/* From now on, io_destroy(2) made through syscall(3) (raft_uv's UvOsIoDestroy) returns 0 at
 * once and runs on a detached thread; any other system call passes through unchanged. Before
 * this, or when no thread can be started, io_destroy runs where it is called. */
void aio_destroy_off_loop(void);
/* io_destroy calls handed to a thread since start, and those that ran in place. */
uint64_t aio_destroy_deferred(void);
uint64_t aio_destroy_in_place(void);

#endif
