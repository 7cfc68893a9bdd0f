/* lua_load.c — a run's script sandboxes loaded on libuv's pool, handed to the engines. */
#include "lua_load.h"

#include <assert.h>
#include <stdlib.h>

#include "lc_err.h"
#include "lc_log.h"

struct worker_lua_load_s {
    uv_work_t req;
    const worker_plan_t *plan; /* read-only on the pool: the script, modules, limits */
    uint64_t run;
    unsigned n;
    bool ready;
    worker_lua_loaded_cb done;
    void *arg;
    worker_lua_run_t *luas[]; /* n: engine i's, until taken */
};

/* On a pool thread: the sandboxes, one after the other. A state is touched by this thread
 * alone until the loop's after_load (uv_queue_work orders the two). */
static void load(uv_work_t *req)
{
    worker_lua_load_t *l = req->data;
    for (unsigned i = 0; i < l->n; i++)
        if (worker_lua_run_load(l->plan, l->run, &l->luas[i]) != 0)
            l->luas[i] = NULL; /* that engine loads its own (and logs it) */
}

static void after_load(uv_work_t *req, int status)
{
    worker_lua_load_t *l = req->data;
    if (status != 0 && status != UV_ECANCELED)
        lc_error("control", "msg=\"loading the run's script failed\" run=%llu error=\"%s\"",
                 (unsigned long long)l->run, uv_strerror(status));
    l->ready = true;
    l->done(l, l->arg);
}

int worker_lua_load_start(worker_lua_load_t **out, uv_loop_t *loop, const worker_plan_t *plan,
                          uint64_t run, unsigned n, worker_lua_loaded_cb done, void *arg)
{
    assert(out != NULL && plan != NULL && plan->scenario.script != NULL && n > 0 && done);
    worker_lua_load_t *l = calloc(1, sizeof *l + n * sizeof l->luas[0]);
    if (l == NULL)
        return LC_ENOMEM;
    l->plan = plan;
    l->run = run;
    l->n = n;
    l->done = done;
    l->arg = arg;
    l->req.data = l;
    int rv = uv_queue_work(loop, &l->req, load, after_load);
    if (rv != 0) {
        free(l);
        return LC_EIO;
    }
    *out = l;
    return 0;
}

bool worker_lua_load_ready(const worker_lua_load_t *l)
{
    return l->ready;
}

worker_lua_run_t *worker_lua_load_take(worker_lua_load_t *l, unsigned i)
{
    assert(l->ready && i < l->n);
    worker_lua_run_t *lr = l->luas[i];
    l->luas[i] = NULL;
    return lr;
}

void worker_lua_load_cancel(worker_lua_load_t *l)
{
    if (!l->ready)
        uv_cancel((uv_req_t *)&l->req); /* fails once the pool began: done comes after it */
}

void worker_lua_load_free(worker_lua_load_t *l)
{
    if (l == NULL)
        return;
    assert(l->ready);
    for (unsigned i = 0; i < l->n; i++)
        worker_lua_run_free(l->luas[i]);
    free(l);
}
