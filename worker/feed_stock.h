/* feed_stock.h — any thread: the rows of one sequential feeder the leader leased to this worker for a run, taken by the engines' users and refilled by the control thread. */
#ifndef WORKER_FEED_STOCK_H
#define WORKER_FEED_STOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define WORKER_STOCK_LEASES 4    /* leases held at once: the one in use and those after it */
#define WORKER_STOCK_ASK_MAX 4096u /* rows asked at once (the leader grants at most as many) */
#define WORKER_STOCK_RETRY_MS 500u /* an unanswered request is sent again (same seq) */
#define WORKER_STOCK_LOOK_MS 100u  /* the control thread looks at the stocks this often */
#define WORKER_STOCK_WAIT_MS 20u   /* a user that found no row takes again this much later */
/* Takes one waiting user makes between two looks: waits / this ~ users waiting. */
#define WORKER_STOCK_WAITS_PER_USER (WORKER_STOCK_LOOK_MS / WORKER_STOCK_WAIT_MS)

enum worker_take {
    WORKER_TAKE_ROW,       /* *ticket is the user's */
    WORKER_TAKE_WAIT,      /* none in hand, more asked for: try again shortly */
    WORKER_TAKE_EXHAUSTED, /* the leader has no rows left: the feeder's on_exhausted applies */
};

typedef struct worker_stock_s {
    /* private: under mu, any thread */
    pthread_mutex_t mu;
    struct {
        uint64_t next, end; /* tickets of the order still in hand: [next, end) */
    } leases[WORKER_STOCK_LEASES];
    unsigned head, n;
    uint64_t left;             /* tickets in hand */
    uint64_t taken;            /* tickets taken, ever */
    uint64_t waits;            /* takes that found none in hand, since the last look or lease */
    bool exhausted;            /* the leader said no row is left */
    /* private: control thread only */
    uint64_t asked_seq;        /* FeedRequest outstanding; 0: none */
    uint32_t asked_count;
    uint64_t asked_ms;         /* loop time it was (last) sent */
    uint64_t seen_taken, seen_ms; /* taken at the last look, for the rate */
    double rate;               /* tickets taken per second, smoothed */
} worker_stock_t;

/* Returns 0 or LC_ENOMEM. */
int worker_stock_init(worker_stock_t *s);
void worker_stock_close(worker_stock_t *s);

/* Takes the next ticket in hand (row = ticket % the feeder's rows). */
enum worker_take worker_stock_take(worker_stock_t *s, uint64_t *ticket);

/* Adds the lease [start, start + count) the leader gave (exhausted: its last). The takes that
 * waited before it came are answered by it: they no longer count as waits. Returns false
 * when it cannot be held (all WORKER_STOCK_LEASES in use): its rows are then never used. */
bool worker_stock_add(worker_stock_t *s, uint64_t start, uint32_t count, bool exhausted);

/* Pure, per-iteration rows: the rows to ask for now (0: none) for users running, left in hand
 * and taken at rate per second: enough for about two seconds or two rows a user, asked when
 * half is gone. */
uint32_t worker_stock_want(uint32_t users, uint64_t left, double rate);
/* Pure, per-user rows (one per user, for its life): what the users not yet given one need
 * beyond those in hand, or, once every user had one, a row for each user whose takes waited
 * (waits / WORKER_STOCK_WAITS_PER_USER, rounded up: users added again after a rescale down),
 * at most users. Never more, so the rows of the other
 * workers' users are not held here. */
uint32_t worker_stock_want_per_user(uint32_t users, uint64_t left, uint64_t taken,
                                    uint64_t waits);

/* Control thread, once per look at now (ms): the rows to ask for now, or 0; *retry says the
 * outstanding request (asked_seq) is due again, unchanged. per_user: the feeder's mode. */
uint32_t worker_stock_look(worker_stock_t *s, uint32_t users, bool per_user, uint64_t now,
                           bool *retry);

#endif
