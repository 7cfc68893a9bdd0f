/* journey_feed.c — engine thread: what a journey's feed and foreach ops read: feeder rows
 * (the worker's slice of a shared order, or a user's own row) and a JSON list's elements. */
#include "journey_feed.h"

#include <pthread.h>
#include <stdatomic.h>

#include "lc_err.h"
#include "lc_rng.h"

enum worker_take worker_feed_next(engine_run_t *r, uint32_t f, uint64_t *rng, uint32_t *row)
{
    const worker_plan_t *pl = r->plan;
    const lc_feeder_t *fd = &pl->program->feeders[f];
    worker_feed_t *feed = &pl->feeds[f];
    if (feed->stock != NULL) { /* leased: the tickets of the order the leader gave us */
        uint64_t ticket;
        enum worker_take got = worker_stock_take(feed->stock, &ticket);
        if (got == WORKER_TAKE_ROW)
            *row = (uint32_t)(ticket % fd->table.n_rows);
        return got;
    }
    if (feed->count == 0)
        return WORKER_TAKE_EXHAUSTED;
    if (fd->order == LC_FEED_RANDOM) {
        *row = feed->first + (uint32_t)lc_rng_range(rng, 0, feed->count - 1);
        return WORKER_TAKE_ROW;
    }
    uint64_t n = atomic_fetch_add_explicit(&feed->next, 1, memory_order_relaxed);
    if (n >= feed->count && fd->on_exhausted != LC_FEED_WRAP)
        return WORKER_TAKE_EXHAUSTED;
    uint32_t i = (uint32_t)(n % feed->count);
    *row = feed->perm ? feed->perm[feed->first + i] : feed->first + i; /* a slice of the order */
    return WORKER_TAKE_ROW;
}

bool worker_feed_of_user(engine_run_t *r, uint32_t f, uint64_t user_id, uint32_t *row)
{
    const worker_plan_t *pl = r->plan;
    const lc_feeder_t *fd = &pl->program->feeders[f];
    const worker_feed_t *feed = &pl->feeds[f];
    uint64_t n = fd->table.n_rows, i = user_id > 0 ? user_id - 1 : 0;
    if (n == 0 || (i >= n && fd->on_exhausted != LC_FEED_WRAP))
        return false;
    i %= n;
    *row = feed->perm ? feed->perm[i] : (uint32_t)i;
    return true;
}

typedef struct element_s {
    uint32_t at, seen;
    lc_jmatch_t elem;
} element_t;

static bool on_element(void *ctx, const lc_jmatch_t *m)
{
    element_t *e = ctx;
    if (e->seen == e->at)
        e->elem = *m; /* a string as it came: the caller decodes it when escaped */
    e->seen++;
    return true;
}

static lc_jpath_t *every_element; /* "$[*]", compiled once for every engine thread */
static pthread_once_t every_element_once = PTHREAD_ONCE_INIT;

static void compile_every_element(void)
{
    if (lc_jpath_compile(&every_element, "$[*]", NULL, 0) != 0)
        every_element = NULL;
}

int worker_json_element(const char *list, size_t len, uint32_t at, uint32_t *count,
                        lc_jmatch_t *elem)
{
    pthread_once(&every_element_once, compile_every_element);
    if (every_element == NULL)
        return LC_ENOMEM;
    element_t e = {.at = at};
    int rv = lc_jpath_scan(every_element, list, len, on_element, &e);
    *count = e.seen;
    *elem = e.elem;
    return rv;
}
