/* feed_stock.c — a leased feeder's rows in hand on this worker (feed_stock.h). */
#include "feed_stock.h"

#include <assert.h>

#include "lc_err.h"

int worker_stock_init(worker_stock_t *s)
{
    assert(s != NULL);
    *s = (worker_stock_t){0};
    return pthread_mutex_init(&s->mu, NULL) == 0 ? 0 : LC_ENOMEM;
}

void worker_stock_close(worker_stock_t *s)
{
    if (s != NULL)
        pthread_mutex_destroy(&s->mu);
}

enum worker_take worker_stock_take(worker_stock_t *s, uint64_t *ticket)
{
    assert(s != NULL && ticket != NULL);
    enum worker_take got;
    pthread_mutex_lock(&s->mu);
    while (s->n > 0 && s->leases[s->head].next == s->leases[s->head].end) {
        s->head = (s->head + 1) % WORKER_STOCK_LEASES;
        s->n--;
    }
    if (s->n > 0) {
        *ticket = s->leases[s->head].next++;
        s->left--;
        s->taken++;
        got = WORKER_TAKE_ROW;
    } else {
        got = s->exhausted ? WORKER_TAKE_EXHAUSTED : WORKER_TAKE_WAIT;
        s->waits += got == WORKER_TAKE_WAIT;
    }
    pthread_mutex_unlock(&s->mu);
    return got;
}

bool worker_stock_add(worker_stock_t *s, uint64_t start, uint32_t count, bool exhausted)
{
    assert(s != NULL);
    bool held = true;
    pthread_mutex_lock(&s->mu);
    if (count > 0 && s->n < WORKER_STOCK_LEASES) {
        unsigned at = (s->head + s->n++) % WORKER_STOCK_LEASES;
        s->leases[at].next = start;
        s->leases[at].end = start + count;
        s->left += count;
    } else if (count > 0) {
        held = false;
    }
    s->exhausted |= exhausted;
    s->waits = 0; /* the users that waited take from this lease, or wait (and count) again */
    pthread_mutex_unlock(&s->mu);
    return held;
}

uint32_t worker_stock_want(uint32_t users, uint64_t left, double rate)
{
    double target = 2.0 * rate;
    if (target < 2.0 * users)
        target = 2.0 * users;
    if (target < 1)
        target = 1;
    if (target > WORKER_STOCK_ASK_MAX)
        target = WORKER_STOCK_ASK_MAX;
    uint64_t want = (uint64_t)target;
    if (left * 2 > want)
        return 0; /* more than half in hand */
    return left < want ? (uint32_t)(want - left) : 1;
}

uint32_t worker_stock_want_per_user(uint32_t users, uint64_t left, uint64_t taken,
                                    uint64_t waits)
{
    uint64_t need = users > taken ? users - taken : 0;
    if (need > left)
        return (uint32_t)(need - left < WORKER_STOCK_ASK_MAX ? need - left : WORKER_STOCK_ASK_MAX);
    if (left > 0 || waits == 0)
        return 0;
    uint64_t waiting = (waits + WORKER_STOCK_WAITS_PER_USER - 1) / WORKER_STOCK_WAITS_PER_USER;
    return (uint32_t)(waiting < users ? waiting : users);
}

uint32_t worker_stock_look(worker_stock_t *s, uint32_t users, bool per_user, uint64_t now,
                           bool *retry)
{
    assert(s != NULL && retry != NULL);
    pthread_mutex_lock(&s->mu);
    uint64_t left = s->left, taken = s->taken, waits = s->waits;
    bool exhausted = s->exhausted;
    s->waits = 0;
    pthread_mutex_unlock(&s->mu);
    if (now > s->seen_ms) {
        double per_s = (double)(taken - s->seen_taken) * 1000.0 / (double)(now - s->seen_ms);
        s->rate = s->seen_ms == 0 ? per_s : 0.7 * s->rate + 0.3 * per_s;
        s->seen_taken = taken;
        s->seen_ms = now;
    }
    *retry = false;
    if (exhausted)
        return 0;
    if (s->asked_seq != 0) {
        *retry = now - s->asked_ms >= WORKER_STOCK_RETRY_MS;
        return 0;
    }
    return per_user ? worker_stock_want_per_user(users, left, taken, waits)
                    : worker_stock_want(users, left, s->rate);
}
