/* h2_pool.c — stream slot accounting for an engine's shared HTTP/2 connections. */
#include "h2_pool.h"

#include <assert.h>
#include <stdlib.h>

#include "lc_err.h"

uint32_t worker_h2_pool_share(uint32_t total, uint32_t n_engines, uint32_t engine)
{
    assert(n_engines > 0 && engine < n_engines);
    uint32_t share = total / n_engines + (engine < total % n_engines ? 1u : 0u);
    return share > 0 ? share : 1u;
}

int worker_h2_slots_init(worker_h2_slots_t *s, uint32_t n_conns, uint32_t max_streams)
{
    assert(s != NULL && n_conns > 0 && max_streams > 0);
    *s = (worker_h2_slots_t){.n_conns = n_conns, .max_streams = max_streams};
    s->conns = calloc(n_conns, sizeof *s->conns);
    if (s->conns == NULL)
        return LC_ENOMEM;
    for (uint32_t i = 0; i < n_conns; i++)
        s->conns[i] = (worker_h2_pconn_t){.state = WORKER_H2_PCONN_DOWN, .peer_max = UINT32_MAX};
    return 0;
}

void worker_h2_slots_free(worker_h2_slots_t *s)
{
    free(s->conns);
    *s = (worker_h2_slots_t){0};
}

uint32_t worker_h2_slots_limit(const worker_h2_slots_t *s, uint32_t conn)
{
    assert(conn < s->n_conns);
    uint32_t peer = s->conns[conn].peer_max;
    return peer < s->max_streams ? peer : s->max_streams;
}

/* The least loaded UP connection with room, or -1. */
static int free_slot(const worker_h2_slots_t *s)
{
    int best = -1;
    for (uint32_t i = 0; i < s->n_conns; i++) {
        const worker_h2_pconn_t *c = &s->conns[i];
        if (c->state != WORKER_H2_PCONN_UP || c->in_flight >= worker_h2_slots_limit(s, i))
            continue;
        if (best < 0 || c->in_flight < s->conns[best].in_flight)
            best = (int)i;
    }
    return best;
}

int worker_h2_slots_acquire(worker_h2_slots_t *s, worker_h2_waiter_t *w)
{
    assert(s != NULL && w != NULL && !w->queued);
    int conn = s->head == NULL ? free_slot(s) : -1;
    if (conn >= 0) {
        s->conns[conn].in_flight++;
        return conn;
    }
    w->next = NULL;
    w->queued = true;
    if (s->tail != NULL)
        s->tail->next = w;
    else
        s->head = w;
    s->tail = w;
    s->n_waiting++;
    return -1;
}

worker_h2_waiter_t *worker_h2_slots_pop(worker_h2_slots_t *s)
{
    worker_h2_waiter_t *w = s->head;
    if (w == NULL)
        return NULL;
    s->head = w->next;
    if (s->head == NULL)
        s->tail = NULL;
    w->next = NULL;
    w->queued = false;
    s->n_waiting--;
    return w;
}

worker_h2_waiter_t *worker_h2_slots_next(worker_h2_slots_t *s, uint32_t *conn)
{
    assert(s != NULL && conn != NULL);
    int i = s->head != NULL ? free_slot(s) : -1;
    if (i < 0)
        return NULL;
    s->conns[i].in_flight++;
    *conn = (uint32_t)i;
    return worker_h2_slots_pop(s);
}

void worker_h2_slots_release(worker_h2_slots_t *s, uint32_t conn)
{
    assert(conn < s->n_conns);
    worker_h2_pconn_t *c = &s->conns[conn];
    assert(c->in_flight > 0 &&
           (c->state == WORKER_H2_PCONN_UP || c->state == WORKER_H2_PCONN_DRAINING));
    c->in_flight--;
    if (c->state == WORKER_H2_PCONN_DRAINING && c->in_flight == 0)
        c->state = WORKER_H2_PCONN_DOWN;
}

void worker_h2_slots_cancel(worker_h2_slots_t *s, worker_h2_waiter_t *w)
{
    if (!w->queued)
        return;
    worker_h2_waiter_t **pp = &s->head, *prev = NULL;
    while (*pp != w) {
        assert(*pp != NULL); /* queued means linked here */
        prev = *pp;
        pp = &(*pp)->next;
    }
    *pp = w->next;
    if (s->tail == w)
        s->tail = prev;
    w->next = NULL;
    w->queued = false;
    s->n_waiting--;
}

int worker_h2_slots_to_connect(worker_h2_slots_t *s)
{
    for (uint32_t i = 0; i < s->n_conns; i++)
        if (s->conns[i].state == WORKER_H2_PCONN_DOWN) {
            s->conns[i].state = WORKER_H2_PCONN_CONNECTING;
            return (int)i;
        }
    return -1;
}

void worker_h2_slots_up(worker_h2_slots_t *s, uint32_t conn)
{
    assert(conn < s->n_conns && s->conns[conn].state == WORKER_H2_PCONN_CONNECTING);
    s->conns[conn] = (worker_h2_pconn_t){.state = WORKER_H2_PCONN_UP, .peer_max = UINT32_MAX};
}

void worker_h2_slots_peer_max(worker_h2_slots_t *s, uint32_t conn, uint32_t max)
{
    assert(conn < s->n_conns);
    s->conns[conn].peer_max = max;
}

void worker_h2_slots_goaway(worker_h2_slots_t *s, uint32_t conn)
{
    assert(conn < s->n_conns);
    worker_h2_pconn_t *c = &s->conns[conn];
    if (c->state != WORKER_H2_PCONN_UP)
        return;
    c->state = c->in_flight == 0 ? WORKER_H2_PCONN_DOWN : WORKER_H2_PCONN_DRAINING;
}

uint32_t worker_h2_slots_lost(worker_h2_slots_t *s, uint32_t conn)
{
    assert(conn < s->n_conns);
    worker_h2_pconn_t *c = &s->conns[conn];
    uint32_t n = c->in_flight;
    *c = (worker_h2_pconn_t){.state = WORKER_H2_PCONN_DOWN, .peer_max = UINT32_MAX};
    return n;
}
