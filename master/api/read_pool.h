/* read_pool.h — the API's reads off the loop: a few threads, each with its
 * own read-only connection to the store, run jobs (history, reports, run
 * lists, metrics) and hand each one back to the loop to be answered. */
#ifndef MASTER_READ_POOL_H
#define MASTER_READ_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#include "store.h"

#define READ_POOL_THREADS 2     /* default; the reads are CPU-bound */
#define READ_POOL_MAX_QUEUED 64 /* jobs waiting for a thread; more are refused */

typedef struct read_pool_s read_pool_t;
typedef struct read_job_s read_job_t;

/* Runs on a pool thread with that thread's reader (or, for a pool without
 * threads, on the loop with the writer). It must touch nothing the loop
 * owns: what it needs is copied into the job before submit. */
typedef void (*read_work_fn)(read_job_t *job, store_t *reader);
/* Runs on the loop once work is done, or with job->cancelled set when the
 * pool closed before running it; it answers and frees the job. */
typedef void (*read_done_fn)(read_job_t *job);

/* Embedded first in a caller's struct. */
struct read_job_s {
    read_work_fn work;
    read_done_fn done;
    bool cancelled;
    uint64_t queued_ms, started_ms; /* monotonic: how long it waited */
    read_job_t *next;               /* private */
};

/* Starts threads readers of writer's file. A writer without readers (an
 * in-memory store) gives a pool without threads that runs each job at once
 * on the loop. Returns 0 or LC_EIO/LC_ENOMEM with errmsg. */
int read_pool_init(read_pool_t **out, uv_loop_t *loop, store_t *writer, unsigned threads,
                   char *errmsg, size_t errlen);

/* Queues job (work and done set). Returns 0, or LC_EAGAIN when
 * READ_POOL_MAX_QUEUED jobs wait already (the caller answers 503 and frees
 * the job; done is not called). */
int read_pool_submit(read_pool_t *p, read_job_t *job);

/* Jobs waiting for a thread now. */
size_t read_pool_queued(read_pool_t *p);

/* Lets the threads finish the job each is running, joins them, and calls
 * done for every job left (cancelled when it never ran); p is freed once its
 * loop handle is closed. */
void read_pool_close(read_pool_t *p);

#endif
