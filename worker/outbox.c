/* outbox.c — the bounded outbox of unacknowledged StatsBatches. */
#include "outbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_log.h"

void worker_outbox_init(worker_outbox_t *o, size_t max_bytes, worker_outbox_lost_cb cb,
                        void *arg)
{
    memset(o, 0, sizeof *o);
    o->max_bytes = max_bytes;
    o->lost_cb = cb;
    o->lost_arg = arg;
}

static void burst_end(worker_outbox_t *o)
{
    if (!o->in_burst)
        return;
    char runs[WORKER_OUTBOX_BURST_RUNS * 21 + 8] = "";
    size_t used = 0;
    for (size_t i = 0; i < o->n_burst_runs && used < sizeof runs; i++)
        used += (size_t)snprintf(runs + used, sizeof runs - used, "%s%llu", i ? "," : "",
                                 (unsigned long long)o->burst_runs[i]);
    lc_warn("outbox", "msg=\"stats batches lost to outbox overflow (reported with their runs)\" "
                      "batches=%llu requests=%llu runs=%s%s max_bytes=%zu",
            (unsigned long long)o->burst_batches, (unsigned long long)o->burst_requests, runs,
            o->n_burst_runs == WORKER_OUTBOX_BURST_RUNS ? ",…" : "", o->max_bytes);
    o->in_burst = false;
    o->burst_batches = o->burst_requests = 0;
    o->n_burst_runs = 0;
}

static void count_lost(worker_outbox_t *o, const worker_outbox_batch_t *b)
{
    if (!o->in_burst) {
        o->in_burst = true;
        lc_warn("outbox", "msg=\"outbox full: dropping the oldest stats batches\" "
                          "max_bytes=%zu held=%zu run=%llu seq=%llu",
                o->max_bytes, o->bytes, (unsigned long long)b->run, (unsigned long long)b->seq);
    }
    o->burst_batches++;
    o->burst_requests += b->requests;
    o->lost_batches++;
    o->lost_requests += b->requests;
    bool named = false;
    for (size_t i = 0; i < o->n_burst_runs; i++)
        named = named || o->burst_runs[i] == b->run;
    if (!named && o->n_burst_runs < WORKER_OUTBOX_BURST_RUNS)
        o->burst_runs[o->n_burst_runs++] = b->run;
    if (o->lost_cb)
        o->lost_cb(o->lost_arg, b);
}

static void unlink_entry(worker_outbox_t *o, worker_outbox_entry_t **pp,
                         worker_outbox_entry_t *prev)
{
    worker_outbox_entry_t *e = *pp;
    *pp = e->next;
    if (o->tail == e)
        o->tail = prev;
    o->len--;
    if (e->frame != NULL)
        o->bytes -= e->len;
    free(e->frame);
    free(e);
}

/* Drops the oldest frame other than keep's; returns false when none is left. */
static bool drop_oldest(worker_outbox_t *o, const worker_outbox_entry_t *keep, uint64_t live_conn)
{
    worker_outbox_entry_t **pp = &o->head, *prev = NULL;
    while (*pp != NULL && ((*pp)->frame == NULL || *pp == keep)) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    worker_outbox_entry_t *e = *pp;
    if (e == NULL)
        return false;
    if (live_conn != 0 && e->sent_on == live_conn) {
        /* On the wire: the master may still acknowledge it. */
        free(e->frame);
        e->frame = NULL;
        o->bytes -= e->len;
        return true;
    }
    worker_outbox_batch_t b = e->b;
    unlink_entry(o, pp, prev);
    count_lost(o, &b);
    return true;
}

worker_outbox_entry_t *worker_outbox_push(worker_outbox_t *o, const worker_batch_meta_t *meta,
                                          uint8_t *frame, size_t len, uint64_t live_conn)
{
    worker_outbox_batch_t b = {.run = meta->run, .seq = meta->seq, .requests = meta->requests,
                               .lost_batches = meta->lost_batches,
                               .lost_requests = meta->lost_requests, .final = meta->final};
    worker_outbox_entry_t *e = calloc(1, sizeof *e);
    if (e == NULL) {
        free(frame);
        count_lost(o, &b);
        return NULL;
    }
    e->b = b;
    e->frame = frame;
    e->len = len;
    if (o->tail)
        o->tail->next = e;
    else
        o->head = e;
    o->tail = e;
    o->len++;
    o->bytes += len;
    if (o->bytes <= o->max_bytes) {
        burst_end(o);
        return e;
    }
    while (o->bytes > o->max_bytes && drop_oldest(o, e, live_conn))
        ;
    return e;
}

bool worker_outbox_ack(worker_outbox_t *o, uint64_t run, uint64_t seq)
{
    /* Exact: acknowledgements say which batch committed, not a prefix. */
    worker_outbox_entry_t **pp = &o->head, *prev = NULL;
    for (; *pp != NULL; prev = *pp, pp = &(*pp)->next) {
        if ((*pp)->b.run == run && (*pp)->b.seq == seq) {
            unlink_entry(o, pp, prev);
            return true;
        }
    }
    return false;
}

void worker_outbox_conn_lost(worker_outbox_t *o, uint64_t conn)
{
    worker_outbox_entry_t **pp = &o->head, *prev = NULL;
    while (*pp != NULL) {
        worker_outbox_entry_t *e = *pp;
        if (e->frame == NULL && e->sent_on == conn) {
            worker_outbox_batch_t b = e->b;
            unlink_entry(o, pp, prev);
            count_lost(o, &b);
        } else {
            prev = e;
            pp = &e->next;
        }
    }
}

void worker_outbox_clear(worker_outbox_t *o)
{
    while (o->head != NULL)
        unlink_entry(o, &o->head, NULL);
    o->tail = NULL;
    burst_end(o);
}
