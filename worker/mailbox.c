/* mailbox.c — mutex-guarded message queues between threads. */
#include "mailbox.h"

#include <stdlib.h>

#include "journey_lua.h"
#include "lc_err.h"

worker_msg_t *worker_msg_new(enum worker_msg_type type)
{
    worker_msg_t *m = calloc(1, sizeof *m);
    if (m != NULL)
        m->type = type;
    return m;
}

void worker_msg_free(worker_msg_t *m)
{
    if (m == NULL)
        return;
    worker_stats_free(m->stats);
    worker_lua_run_free(m->lua);
    free(m);
}

int worker_mailbox_init(worker_mailbox_t *mb, uv_loop_t *loop, uv_async_cb cb)
{
    mb->head = mb->tail = NULL;
    mb->closed = 0;
    if (uv_mutex_init(&mb->mu) != 0)
        return LC_ENOMEM;
    int rv = uv_async_init(loop, &mb->async, cb);
    if (rv != 0) {
        uv_mutex_destroy(&mb->mu);
        return LC_EIO;
    }
    mb->async.data = mb;
    return 0;
}

void worker_mailbox_post(worker_mailbox_t *mb, worker_msg_t *m)
{
    m->next = NULL;
    uv_mutex_lock(&mb->mu);
    if (mb->closed) {
        uv_mutex_unlock(&mb->mu);
        worker_msg_free(m);
        return;
    }
    if (mb->tail)
        mb->tail->next = m;
    else
        mb->head = m;
    mb->tail = m;
    /* uv_async_send is safe from any thread; calling it under the lock keeps
     * the handle alive against a concurrent close. */
    uv_async_send(&mb->async);
    uv_mutex_unlock(&mb->mu);
}

worker_msg_t *worker_mailbox_take(worker_mailbox_t *mb)
{
    uv_mutex_lock(&mb->mu);
    worker_msg_t *m = mb->head;
    mb->head = mb->tail = NULL;
    uv_mutex_unlock(&mb->mu);
    return m;
}

void worker_mailbox_close(worker_mailbox_t *mb, uv_close_cb close_cb)
{
    uv_mutex_lock(&mb->mu);
    mb->closed = 1;
    worker_msg_t *m = mb->head;
    mb->head = mb->tail = NULL;
    uv_mutex_unlock(&mb->mu);
    while (m != NULL) {
        worker_msg_t *next = m->next;
        worker_msg_free(m);
        m = next;
    }
    uv_close((uv_handle_t *)&mb->async, close_cb);
}

void worker_mailbox_destroy(worker_mailbox_t *mb)
{
    uv_mutex_destroy(&mb->mu);
}
