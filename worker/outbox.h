/* outbox.h — control thread: StatsBatch frames kept until the master acknowledges
 * them, bounded by bytes: beyond the bound the oldest are dropped and the loss is
 * counted, per batch, for the run to report it. No I/O: the link sends. */
#ifndef WORKER_OUTBOX_H
#define WORKER_OUTBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stats.h"

#define WORKER_OUTBOX_BURST_RUNS 8 /* distinct runs named in a burst's log line */

/* What the outbox keeps of a batch besides its frame. */
typedef struct worker_outbox_batch_s {
    uint64_t run;
    uint64_t seq;
    uint64_t requests;      /* sum of its endpoint counts */
    uint64_t lost_batches;  /* losses it reports: lost again if it is lost */
    uint64_t lost_requests;
    bool final;
} worker_outbox_batch_t;

typedef struct worker_outbox_entry_s {
    struct worker_outbox_entry_s *next;
    worker_outbox_batch_t b;
    uint64_t sent_on;  /* connection it was last written on (1, 2, …); 0: none */
    uint8_t *frame;    /* NULL: dropped while written on a live connection */
    size_t len;
} worker_outbox_entry_t;

/* A batch is lost for good (never delivered, or delivery unknown). */
typedef void (*worker_outbox_lost_cb)(void *arg, const worker_outbox_batch_t *b);

typedef struct worker_outbox_s {
    worker_outbox_entry_t *head, *tail;
    size_t len;         /* entries, in-flight ones without a frame included */
    size_t bytes;       /* frame bytes held */
    size_t max_bytes;
    worker_outbox_lost_cb lost_cb;
    void *lost_arg;
    /* The current drop burst (from the first drop to the next push that
     * needs none), logged once when it ends. */
    bool in_burst;
    uint64_t burst_batches, burst_requests;
    uint64_t burst_runs[WORKER_OUTBOX_BURST_RUNS];
    size_t n_burst_runs;
    /* Since start, for people and tests. */
    uint64_t lost_batches, lost_requests;
} worker_outbox_t;

void worker_outbox_init(worker_outbox_t *o, size_t max_bytes, worker_outbox_lost_cb cb,
                        void *arg);
/* Appends a frame (ownership passes), then drops the oldest frames while the
 * bytes held exceed the bound (the newest is always kept). A dropped frame
 * never written on live_conn is lost at once; one written on it may still be
 * acknowledged, so only its frame goes: it is lost if live_conn ends first.
 * Returns the new entry, or NULL when out of memory (the batch is lost). */
worker_outbox_entry_t *worker_outbox_push(worker_outbox_t *o, const worker_batch_meta_t *meta,
                                          uint8_t *frame, size_t len, uint64_t live_conn);
/* The master acknowledged (run, seq): forgets that one batch. Returns
 * whether it was held. */
bool worker_outbox_ack(worker_outbox_t *o, uint64_t run, uint64_t seq);
/* Connection conn ended: batches dropped while in flight on it are lost. */
void worker_outbox_conn_lost(worker_outbox_t *o, uint64_t conn);
/* Frees everything (exit); ends a burst in the log. */
void worker_outbox_clear(worker_outbox_t *o);

#endif
