/* user_conns.c — a user's connections: target's inline, the other origins' on the heap. */
#include "user_conns.h"

#include <assert.h>
#include <stdlib.h>

#include "lc_err.h"
#include "plan.h"
#include "tls.h"
#include "user_internal.h"

/* A connection to one of the scenario's targets (conn first: a worker_conn_t * of one is a
 * worker_oconn_t *). */
typedef struct worker_oconn_s {
    worker_conn_t conn;
} worker_oconn_t;

static unsigned origin_of(const worker_user_t *u)
{
    return u->js != NULL ? u->js->origin : 0;
}

int worker_user_conn_setup(worker_user_t *u, worker_conn_t *c, unsigned origin)
{
    engine_run_t *r = u->run;
    worker_engine_t *e = r->engine;
    const worker_origin_t *o = &r->plan->origins[origin];
    assert(origin < r->plan->n_origins);
    if (worker_conn_init(c, &e->loop, e->rbuf, sizeof e->rbuf, &worker_user_conn_cbs, u) != 0)
        return LC_EIO;
    u->handles++;
    worker_conn_set_pool(c, &e->pool);
    if (o->tls != NULL) /* https: ALPN picks the protocol */
        worker_tls_attach(c, o->tls, e->index, &r->stats);
    else if (r->plan->scenario.http2 == LC_HTTP2_ON) /* http: prior knowledge */
        worker_conn_set_h2c(c);
    if (origin > 0 || r->plan->scenario.close_idle_target)
        worker_conn_set_idle_timeout(c, r->plan->scenario.idle_timeout_ms);
    return 0;
}

int worker_user_conn_open(worker_user_t *u, unsigned origin)
{
    worker_journey_state_t *js = u->js;
    size_t n = u->run->plan->n_origins;
    assert(origin < n && (origin == 0 || js != NULL));
    if (origin == 0)
        return 0;
    if (js->oconns == NULL && (js->oconns = calloc(n - 1, sizeof *js->oconns)) == NULL)
        return LC_ENOMEM;
    if (js->oconns[origin - 1] != NULL)
        return 0;
    worker_oconn_t *oc = malloc(sizeof *oc);
    if (oc == NULL)
        return LC_ENOMEM;
    if (worker_user_conn_setup(u, &oc->conn, origin) != 0) {
        free(oc);
        return LC_ENOMEM;
    }
    js->oconns[origin - 1] = oc;
    return 0;
}

worker_conn_t *worker_user_conn(const worker_user_t *u)
{
    unsigned origin = origin_of(u);
    if (origin == 0)
        return (worker_conn_t *)&u->conn;
    worker_oconn_t *oc = u->js->oconns != NULL ? u->js->oconns[origin - 1] : NULL;
    return oc != NULL ? &oc->conn : NULL;
}

const struct sockaddr *worker_user_addr(const worker_user_t *u)
{
    return (const struct sockaddr *)&u->run->plan->origins[origin_of(u)].addr;
}

/* Unlinks c (another origin's) and closes it; worker_user_conn_destroyed frees it. */
static void retire(worker_user_t *u, worker_conn_t *c)
{
    worker_journey_state_t *js = u->js;
    for (size_t i = 0; js->oconns != NULL && i + 1 < u->run->plan->n_origins; i++)
        if (js->oconns[i] != NULL && &js->oconns[i]->conn == c)
            js->oconns[i] = NULL;
    worker_conn_destroy(c);
}

bool worker_user_conn_idle_closed(worker_user_t *u, worker_conn_t *c)
{
    if (c == &u->conn)
        return false;
    retire(u, c);
    return true;
}

void worker_user_conn_destroyed(worker_user_t *u, worker_conn_t *c)
{
    if (c != &u->conn)
        free((worker_oconn_t *)c);
}

void worker_user_conns_destroy(worker_user_t *u)
{
    worker_journey_state_t *js = u->js;
    for (size_t i = 0; js != NULL && js->oconns != NULL && i + 1 < u->run->plan->n_origins; i++)
        if (js->oconns[i] != NULL)
            retire(u, &js->oconns[i]->conn);
}

unsigned worker_user_connections(const worker_user_t *u)
{
    const worker_journey_state_t *js = u->js;
    unsigned n = worker_conn_connected(&u->conn);
    for (size_t i = 0; js != NULL && js->oconns != NULL && i + 1 < u->run->plan->n_origins; i++)
        n += js->oconns[i] != NULL && worker_conn_connected(&js->oconns[i]->conn);
    return n;
}
