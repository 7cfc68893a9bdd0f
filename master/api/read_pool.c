/* read_pool.c — a job queue, threads with a reader each, and a uv_async
 * that brings finished jobs back to the loop. */
#include "read_pool.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lc_clock.h"
#include "lc_err.h"
#include "lc_log.h"

#define READ_POOL_THREADS_MAX 16
#define READ_POOL_NICE 5 /* CFS gives a nice-5 thread about a third of a nice-0 one's share */

typedef struct job_list_s {
    read_job_t *head, *tail;
    size_t len;
} job_list_t;

typedef struct worker_s {
    read_pool_t *pool;
    pthread_t thread;
    store_t *reader;
    bool started;
} worker_t;

struct read_pool_s {
    uv_loop_t *loop;
    store_t *writer;        /* for a pool without threads */
    uv_async_t wake;        /* a job is done */
    pthread_mutex_t lock;
    pthread_cond_t more;    /* a job was queued, or stopping */
    job_list_t queued, done; /* under lock */
    bool stopping;          /* under lock */
    unsigned n_workers;
    worker_t workers[READ_POOL_THREADS_MAX];
};

static void list_push(job_list_t *l, read_job_t *job)
{
    job->next = NULL;
    if (l->tail != NULL)
        l->tail->next = job;
    else
        l->head = job;
    l->tail = job;
    l->len++;
}

static read_job_t *list_pop(job_list_t *l)
{
    read_job_t *job = l->head;
    if (job == NULL)
        return NULL;
    l->head = job->next;
    if (l->head == NULL)
        l->tail = NULL;
    l->len--;
    return job;
}

/* Reads are background work: a pool thread yields the CPU to the loop (and
 * to Raft and the workers it serves) whenever both want it. On Linux a
 * thread has a nice value of its own. */
static void lower_priority(void)
{
    pid_t tid = (pid_t)syscall(SYS_gettid);
    if (setpriority(PRIO_PROCESS, (id_t)tid, READ_POOL_NICE) != 0)
        lc_warn("api", "msg=\"cannot lower a read thread's priority\" error=\"%s\"",
                strerror(errno));
}

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    read_pool_t *p = w->pool;
    lower_priority();
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (p->queued.head == NULL && !p->stopping)
            pthread_cond_wait(&p->more, &p->lock);
        if (p->stopping)
            break;
        read_job_t *job = list_pop(&p->queued);
        pthread_mutex_unlock(&p->lock);
        job->started_ms = lc_mono_ms();
        job->work(job, w->reader);
        pthread_mutex_lock(&p->lock);
        list_push(&p->done, job);
        uv_async_send(&p->wake);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* On the loop: answer every finished job. */
static void wake_cb(uv_async_t *a)
{
    read_pool_t *p = a->data;
    pthread_mutex_lock(&p->lock);
    job_list_t done = p->done;
    memset(&p->done, 0, sizeof p->done);
    pthread_mutex_unlock(&p->lock);
    for (read_job_t *job; (job = list_pop(&done)) != NULL;)
        job->done(job);
}

static void stop_workers(read_pool_t *p)
{
    pthread_mutex_lock(&p->lock);
    p->stopping = true;
    pthread_cond_broadcast(&p->more);
    pthread_mutex_unlock(&p->lock);
    for (unsigned i = 0; i < p->n_workers; i++) {
        if (p->workers[i].started)
            pthread_join(p->workers[i].thread, NULL);
        store_close(p->workers[i].reader);
    }
    p->n_workers = 0;
}

static void free_pool(uv_handle_t *h)
{
    read_pool_t *p = h->data;
    pthread_cond_destroy(&p->more);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

static int start_workers(read_pool_t *p, unsigned threads, char *errmsg, size_t errlen)
{
    for (unsigned i = 0; i < threads; i++) {
        worker_t *w = &p->workers[i];
        w->pool = p;
        p->n_workers = i + 1;
        if (store_open_reader(&w->reader, p->writer, errmsg, errlen) != 0)
            return LC_EIO;
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0)
            return lc_errf(errmsg, errlen, LC_ENOMEM, "API read pool: cannot start a thread");
        w->started = true;
    }
    return 0;
}

int read_pool_init(read_pool_t **out, uv_loop_t *loop, store_t *writer, unsigned threads,
                   char *errmsg, size_t errlen)
{
    assert(threads <= READ_POOL_THREADS_MAX);
    read_pool_t *p = calloc(1, sizeof *p);
    if (p == NULL)
        return lc_errf(errmsg, errlen, LC_ENOMEM, "API read pool: out of memory");
    p->loop = loop;
    p->writer = writer;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->more, NULL);
    uv_async_init(loop, &p->wake, wake_cb);
    p->wake.data = p;
    int rv = store_has_readers(writer) ? start_workers(p, threads, errmsg, errlen) : 0;
    if (rv != 0) {
        stop_workers(p);
        uv_close((uv_handle_t *)&p->wake, free_pool);
        return rv;
    }
    *out = p;
    return 0;
}

int read_pool_submit(read_pool_t *p, read_job_t *job)
{
    assert(job->work != NULL && job->done != NULL);
    job->cancelled = false;
    job->queued_ms = job->started_ms = lc_mono_ms();
    if (p->n_workers == 0) {
        job->work(job, p->writer);
        job->done(job);
        return 0;
    }
    pthread_mutex_lock(&p->lock);
    bool full = p->queued.len >= READ_POOL_MAX_QUEUED;
    if (!full) {
        list_push(&p->queued, job);
        pthread_cond_signal(&p->more);
    }
    pthread_mutex_unlock(&p->lock);
    return full ? LC_EAGAIN : 0;
}

size_t read_pool_queued(read_pool_t *p)
{
    pthread_mutex_lock(&p->lock);
    size_t n = p->queued.len;
    pthread_mutex_unlock(&p->lock);
    return n;
}

void read_pool_close(read_pool_t *p)
{
    if (p == NULL)
        return;
    stop_workers(p);
    /* No thread runs now: what is left is the loop's. */
    for (read_job_t *job; (job = list_pop(&p->done)) != NULL;)
        job->done(job);
    for (read_job_t *job; (job = list_pop(&p->queued)) != NULL;) {
        job->cancelled = true;
        job->done(job);
    }
    uv_close((uv_handle_t *)&p->wake, free_pool);
}
