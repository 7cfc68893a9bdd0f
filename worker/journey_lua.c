/* journey_lua.c — lua steps on an engine: the run's sandbox, each user's coroutine, starting
 * a step's function, resuming it when its request or sleep is done, and what a script error
 * does to the user (kind script on the step's endpoint, then the step's on_error). */
#include "journey_lua.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "journey.h"
#include "journey_http.h"
#include "journey_lua_internal.h"
#include "redirect.h"
#include "lc_err.h"
#include "lc_log.h"
#include "rng.h"
#include "stats.h"
#include "user_internal.h"
#include "user_conns.h"

/* The CPU deadline bounds one run of a function, not a user that runs many without waiting
 * (a loop of lua steps, a journey without requests: libuv 1.44 runs a 0 ms timer started
 * from a timer callback in the same turn, so "wait 0" does not let the loop poll). A lua
 * step that would start after the loop's turn has run this long waits 1 ms first, which
 * does end the turn. The loop's clock is coarse (up to ~4 ms behind), hence the margin. */
#define TURN_BUDGET_MS 10u

static const lc_program_t *prog_of(const worker_user_t *u)
{
    return u->run->plan->program;
}

static bool turn_over_budget(worker_user_t *u)
{
    uv_loop_t *loop = &u->run->engine->loop;
    return uv_hrtime() / 1000000u > uv_now(loop) + TURN_BUDGET_MS;
}

static void on_turn(uv_timer_t *t)
{
    worker_journey_resume(t->data); /* the lua step again, on a fresh turn */
}

/* print() and log() lines, already rate limited by the sandbox. The top level's come while
 * the sandbox loads, off the engine (worker_lua_run_load): only the plan is used here. */
static void on_log(void *ud, const char *line, size_t len)
{
    worker_lua_run_t *lr = ud;
    lc_info("script", "run=%llu line=\"%.*s\"", (unsigned long long)lr->run_id, (int)len, line);
    if (lr->plan->trace != NULL)
        worker_trace_note(lr->plan->trace, "print: %.*s", (int)len, line);
}

int worker_lua_run_load(const worker_plan_t *pl, uint64_t run, worker_lua_run_t **out)
{
    assert(pl != NULL && pl->scenario.script != NULL && out != NULL);
    worker_lua_run_t *lr = calloc(1, sizeof *lr);
    if (lr == NULL)
        return LC_ENOMEM;
    lr->plan = pl;
    lr->run_id = run;
    lc_lua_host_fn_t host[32]; /* lc_lua_new copies what it needs */
    size_t n_host = worker_lua_n_http_fns + worker_lua_n_host_fns;
    assert(n_host <= sizeof host / sizeof host[0]);
    memcpy(host, worker_lua_http_fns, worker_lua_n_http_fns * sizeof host[0]);
    memcpy(host + worker_lua_n_http_fns, worker_lua_host_fns,
           worker_lua_n_host_fns * sizeof host[0]);
    lc_lua_config_t cfg = {
        .script = pl->scenario.script,
        .script_len = pl->scenario.script_len,
        .modules = pl->lua_modules,
        .n_modules = pl->n_lua_modules,
        .deadline_us = pl->scenario.script_cpu_ms * 1000u,
        .seed = pl->scenario.seed, /* the top level's; each user gets its own (lua_user) */
        .log = on_log,
        .log_ud = lr,
        .host = host,
        .n_host = n_host,
        .host_ud = lr,
        .host_prelude = worker_lua_prelude,
    };
    char err[512];
    if (lc_lua_new(&lr->lua, &cfg, err, sizeof err) != 0) {
        /* The plan's check loaded it: this is memory, or a top level that takes its time. */
        lc_error("engine", "msg=\"the run's script does not load here: its lua steps fail\" "
                 "run=%llu error=\"%s\"", (unsigned long long)run, err);
        lr->lua = NULL;
    }
    *out = lr;
    return 0;
}

void worker_lua_run_attach(engine_run_t *r, worker_lua_run_t *lr)
{
    assert(r != NULL && r->lua == NULL && lr != NULL && lr->plan == r->plan);
    assert(lr->current == NULL && lr->n_cache == 0); /* fresh: no engine has used it */
    r->lua = lr;
}

void worker_lua_run_free(worker_lua_run_t *lr)
{
    if (lr == NULL)
        return;
    assert(lr->current == NULL);
    worker_lua_cache_free(lr);
    lc_lua_free(lr->lua);
    free(lr);
}

int worker_lua_run_open(engine_run_t *r)
{
    worker_lua_run_t *lr;
    int rv = worker_lua_run_load(r->plan, r->id, &lr);
    if (rv == 0)
        worker_lua_run_attach(r, lr);
    return rv;
}

void worker_lua_run_close(engine_run_t *r)
{
    worker_lua_run_free(r->lua);
    r->lua = NULL;
}

void worker_lua_run_tick(worker_lua_run_t *lr, uint64_t now_ms)
{
    if (lr == NULL || lr->lua == NULL || !lr->ran_since_collect)
        return;
    if (now_ms - lr->last_run_ms < WORKER_LUA_QUIET_MS)
        return;
    assert(lr->current == NULL); /* a tick runs between coroutines */
    lc_lua_collect(lr->lua);
    lr->ran_since_collect = false;
}

/* A coroutine of the run starts or resumes now. */
static void note_run(worker_lua_run_t *lr, const worker_user_t *u)
{
    lr->ran_since_collect = true;
    lr->last_run_ms = uv_now(&u->run->engine->loop);
}

worker_user_t *worker_lua_current(lua_State *L, const char *fn)
{
    worker_lua_run_t *lr = lc_lua_host_ud(lc_lua_from(L));
    if (lr->current == NULL)
        worker_lua_error(L, "%s: only inside a lua step's function, not at the script's top "
                         "level", fn);
    return lr->current;
}

/* The coroutine is gone (it died of an error, or it waited and the user winds down): the
 * user's next lua step makes a new one; its u table stays. */
static void drop_coroutine(worker_user_t *u)
{
    worker_lua_run_t *lr = u->run->lua;
    worker_lua_user_t *lu = u->js->lua;
    if (lu == NULL || lu->co == NULL)
        return;
    assert(lr != NULL && lr->lua != NULL && lr->current == NULL);
    lc_lua_thread_free(lr->lua, lu->co_ref);
    lu->co = NULL;
    lu->co_ref = LUA_NOREF;
    lu->wait = WORKER_LUA_IDLE;
    worker_lua_unhold(u);
}

/* A step's function failed: kind script on its endpoint, logged for the first few. */
static void script_failed(worker_user_t *u, uint32_t step, const char *err)
{
    worker_lua_run_t *lr = u->run->lua;
    const lc_jlua_t *l = &prog_of(u)->luas[step];
    worker_stats_error_note(u->run->stats, l->endpoint, WORKER_ERR_SCRIPT, "%s: %s",
                            l->path_json, err);
    drop_coroutine(u);
    if (u->run->plan->trace != NULL)
        worker_trace_note(u->run->plan->trace, "%s: %s: error script", l->path_json, err);
    if (lr == NULL || lr->errors_logged >= WORKER_LUA_ERRORS_LOGGED)
        return;
    lr->errors_logged++;
    lc_warn("engine", "msg=\"script error%s\" run=%llu step=%s error=\"%s\"",
            lr->errors_logged == WORKER_LUA_ERRORS_LOGGED ? " (the last logged for this run on "
                                                            "this engine; the rest are counted)"
                                                          : "",
            (unsigned long long)u->run->id, l->path_json, err);
}

/* After a start or resume returned rv: true when the user goes on with its next op now. */
static bool after_run(worker_user_t *u, uint32_t step, int rv, const char *err)
{
    worker_lua_user_t *lu = u->js->lua;
    uint8_t exit = lu != NULL ? lu->exit : WORKER_LUA_EXIT_NONE;
    if (lu != NULL)
        lu->exit = WORKER_LUA_EXIT_NONE;
    if (rv == LC_EAGAIN)
        return false; /* in http or sleep */
    if (rv == LC_OK) {
        u->js->pc++;
        return true;
    }
    if (exit == WORKER_LUA_EXIT_USER) { /* feed(): its feeder is exhausted, as a feed step's */
        drop_coroutine(u);
        if (u->run->plan->trace != NULL)
            worker_trace_note(u->run->plan->trace, "%s: %s", prog_of(u)->luas[step].path_json,
                              err);
        worker_journey_wind_down(u);
        return false;
    }
    script_failed(u, step, err);
    /* fail(msg) ends the iteration whatever the step's on_error says. */
    return worker_journey_fail(u, exit == WORKER_LUA_EXIT_FAIL ? LC_ON_ERROR_NEXT_ITERATION
                                                               : prog_of(u)->luas[step].on_error);
}

static worker_lua_user_t *lua_user(worker_user_t *u)
{
    worker_lua_user_t *lu = u->js->lua;
    if (lu == NULL && (lu = calloc(1, sizeof *lu)) != NULL) {
        lu->co_ref = LUA_NOREF;
        lu->u_ref = LUA_NOREF;
        /* math.random per user: the run's seed and ${user_id}, so a user draws the same
         * numbers on any worker, in any run with that seed. */
        lu->rng = lc_lua_rng_seed(u->run->plan->scenario.seed ^ (u->id * 0x9E3779B97F4A7C15ULL));
        u->js->lua = lu;
    }
    return lu;
}

/* Starts step's function in u's coroutine (made when it has none). */
static int start(worker_lua_run_t *lr, worker_user_t *u, uint32_t step, char *err, size_t len)
{
    worker_lua_user_t *lu = lua_user(u);
    if (lr == NULL || lr->lua == NULL)
        return lc_errf(err, len, LC_ESTATE, "script: the run's script did not load on this "
                       "engine (the worker's log says why)");
    if (lu == NULL)
        return lc_errf(err, len, LC_ENOMEM, "script: out of memory");
    if (lu->co == NULL && (lu->co = lc_lua_thread_new(lr->lua, &lu->co_ref, err, len)) == NULL)
        return LC_ENOMEM;
    lu->step = step;
    lu->wait = WORKER_LUA_IDLE;
    lu->exit = WORKER_LUA_EXIT_NONE;
    note_run(lr, u);
    lr->current = u;
    uint64_t was = lc_lua_rng_swap(lr->lua, lu->rng);
    int rv = lc_lua_start(lr->lua, lu->co, prog_of(u)->luas[step].fn, worker_lua_push_user, u,
                          err, len);
    lu->rng = lc_lua_rng_swap(lr->lua, was);
    lr->current = NULL;
    return rv;
}

bool worker_journey_lua(worker_user_t *u, uint32_t step)
{
    char err[512] = "";
    assert(step < prog_of(u)->n_luas);
    if (turn_over_budget(u)) {
        worker_user_wait_cb(u, WORKER_YIELD_MS, on_turn);
        return false;
    }
    if (u->run->plan->trace != NULL)
        worker_trace_note(u->run->plan->trace, "%s: lua %s()", prog_of(u)->luas[step].path_json,
                          prog_of(u)->luas[step].fn);
    int rv = start(u->run->lua, u, step, err, sizeof err);
    return after_run(u, step, rv, err);
}

/* Resumes u's coroutine, suspended in http or sleep, with what push pushes. */
static int resume(worker_user_t *u, lc_lua_push_cb push, void *ud, char *err, size_t len)
{
    worker_lua_run_t *lr = u->run->lua;
    worker_lua_user_t *lu = u->js->lua;
    assert(lr != NULL && lr->lua != NULL && lu != NULL && lu->co != NULL);
    lu->wait = WORKER_LUA_IDLE;
    note_run(lr, u);
    lr->current = u;
    uint64_t was = lc_lua_rng_swap(lr->lua, lu->rng);
    int rv = lc_lua_resume(lr->lua, lu->co, push, ud, err, len);
    lu->rng = lc_lua_rng_swap(lr->lua, was);
    lr->current = NULL;
    return rv;
}

/* The user stops or the run's stop deadline passed while it waited: as worker_journey_done
 * does for a step's request. True when u was dealt with. */
static bool ended_waiting(worker_user_t *u)
{
    if (worker_user_ending_now(u)) {
        worker_lua_abandon(u);
        worker_user_finish(u);
        return true;
    }
    if (worker_user_ending(u) && u->js->section < WORKER_SECTION_STOP) {
        worker_journey_wind_down(u); /* drops the coroutine */
        return true;
    }
    return false;
}

void worker_lua_on_sleep(uv_timer_t *t)
{
    worker_user_t *u = t->data;
    worker_lua_user_t *lu = u->js->lua;
    char err[512] = "";
    assert(lu != NULL && lu->wait == WORKER_LUA_SLEEP);
    if (ended_waiting(u))
        return;
    uint32_t step = lu->step;
    int rv = resume(u, NULL, NULL, err, sizeof err); /* sleep returns nothing */
    if (after_run(u, step, rv, err))
        worker_journey_resume(u);
}

void worker_lua_out(const worker_user_t *u, bool *head, uint32_t *timeout_ms)
{
    const worker_lua_user_t *lu = u->js->lua;
    assert(lu != NULL && lu->wait == WORKER_LUA_HTTP);
    *head = lu->head;
    *timeout_ms = lu->timeout_ms;
}

enum hop { HOP_NONE, HOP_SENT, HOP_FAILED };

/* The request's answer is in: its cookies into the jar, with the path of the target it held. */
static void script_answered(worker_user_t *u, const worker_conn_result_t *res)
{
    const worker_lua_user_t *lu = u->js->lua;
    bool cookies = prog_of(u)->luas[lu->step].cookies && lu->hold != NULL;
    worker_journey_script_answered(u, res, cookies ? lu->hold->data : NULL, lu->hold_target);
}

/* The Location of a 3xx the request may follow as a request target of the run's target
 * (relative to the answered one) in *out; false: none, another origin, too many hops. */
static bool hop_target(worker_user_t *u, const worker_conn_result_t *res, char **out)
{
    worker_lua_user_t *lu = u->js->lua;
    const char *name, *loc = NULL;
    size_t pos = 0, len = 0;
    while (loc == NULL && worker_conn_header_next(res, &pos, &name, &loc, &len))
        if (strcmp(name, "location") != 0)
            loc = NULL;
    char base[1024] = "/";
    if (lu->hold != NULL && lu->hold_target < sizeof base) {
        memcpy(base, lu->hold->data, lu->hold_target);
        base[lu->hold_target] = '\0';
    }
    return worker_redirect_may_follow(lu->hops, lu->follow) && loc != NULL &&
           worker_journey_script_location(u, base, loc, len, out, &lu->origin);
}

/* Makes target the one the request keeps (for the next relative Location), then sends it. */
static int send_hop(worker_user_t *u, int status, char *target)
{
    worker_lua_user_t *lu = u->js->lua;
    lc_buf_t *h = lu->hold, moved = {0};
    assert(h != NULL); /* follow() sends hops of requests that may follow, which hold */
    size_t tlen = strlen(target);
    int rv = lc_buf_append(&moved, target, tlen);
    if (rv == 0)
        rv = lc_buf_append(&moved, h->data + lu->hold_target, h->len - lu->hold_target);
    free(target);
    h->len = 0;
    if (rv == 0)
        rv = lc_buf_append(h, moved.data, moved.len);
    lc_buf_free(&moved);
    if (rv != 0)
        return rv;
    lu->hold_target = (uint32_t)tlen;
    char *t = strndup(h->data, tlen); /* send_script may not point into what it reads */
    rv = t != NULL ? worker_lua_send_hop(u, status, t) : LC_ENOMEM;
    free(t);
    return rv;
}

/* A 3xx the request may follow (as a declarative step's: the hop counted on the endpoint,
 * its cookies in the jar first): HOP_SENT, the next hop is on its way; HOP_FAILED, it could
 * not be sent (the 3xx is gone); HOP_NONE, the script gets this answer, *kind redirect when
 * it was one to follow but another origin, without Location or one hop too many. */
static int follow(worker_user_t *u, const worker_conn_result_t *res, int *kind)
{
    worker_lua_user_t *lu = u->js->lua;
    char *target = NULL;
    if (*kind != WORKER_KIND_OK || !worker_redirect_status(res->status) || lu->follow == 0 ||
        worker_user_ending_now(u))
        return HOP_NONE;
    if (!hop_target(u, res, &target)) {
        *kind = WORKER_ERR_REDIRECT;
        return HOP_NONE;
    }
    script_answered(u, res);
    worker_stats_record(u->run->stats, lu->endpoint, WORKER_KIND_OK,
                        worker_journey_latency(u, res), res->bytes);
    worker_conn_release(worker_user_conn(u));
    return send_hop(u, res->status, target) == 0 ? HOP_SENT : HOP_FAILED;
}

/* The script's answer is res (recorded already): resumes its function with it. */
static void answer(worker_user_t *u, const worker_conn_result_t *res, int kind)
{
    worker_lua_user_t *lu = u->js->lua;
    char path[WORKER_COOKIE_PATH_MAX] = "/"; /* a request that held nothing: the root */
    if (lu->hold != NULL && lu->hold_target > 0)
        worker_journey_target_path(lu->hold->data, lu->hold_target, path);
    worker_lua_answer_t a = {.u = u, .res = res, .kind = kind, .path = path,
                             .origin = lu->origin};
    worker_lua_unhold(u);
    if (ended_waiting(u)) {
        worker_conn_release(&u->conn);
        return;
    }
    char err[512] = "";
    uint32_t step = lu->step;
    int rv = resume(u, worker_lua_push_response, &a, err, sizeof err);
    worker_conn_release(&u->conn); /* done by the push already, unless it failed */
    if (after_run(u, step, rv, err))
        worker_journey_resume(u);
}

void worker_lua_done(worker_user_t *u, const worker_conn_result_t *res)
{
    worker_lua_user_t *lu = u->js->lua;
    assert(lu != NULL && lu->co != NULL && lu->wait == WORKER_LUA_HTTP);
    int kind = res->kind;
    int hop = follow(u, res, &kind);
    if (hop == HOP_SENT)
        return;
    if (hop == HOP_FAILED) { /* out of memory: what the script sees is an aborted request */
        static const worker_conn_result_t none = {.kind = WORKER_ERR_ABORTED,
                                                  .latency_us = WORKER_NO_LATENCY};
        worker_stats_error(u->run->stats, lu->endpoint, WORKER_ERR_ABORTED);
        answer(u, &none, WORKER_ERR_ABORTED);
        return;
    }
    if (kind == WORKER_KIND_OK && res->status >= 400)
        kind = WORKER_ERR_STATUS; /* counted as a step's would be; the script goes on */
    script_answered(u, res);
    worker_stats_record(u->run->stats, lu->endpoint, kind, worker_journey_latency(u, res),
                        res->bytes);
    answer(u, res, kind);
}

void worker_lua_abandon(worker_user_t *u)
{
    worker_lua_user_t *lu = u->js != NULL ? u->js->lua : NULL;
    if (lu == NULL || lu->wait == WORKER_LUA_IDLE)
        return;
    /* A connect the user stopped waiting for finishes unheard (user.c): what comes next is
     * not the script's. */
    u->js->script_req = false;
    drop_coroutine(u);
}

void worker_lua_user_free(worker_user_t *u)
{
    worker_lua_user_t *lu = u->js != NULL ? u->js->lua : NULL;
    if (lu == NULL)
        return;
    worker_lua_unhold(u);
    worker_lua_run_t *lr = u->run->lua;
    if (lr != NULL && lr->lua != NULL) {
        drop_coroutine(u);
        lc_lua_thread_free(lr->lua, lu->u_ref); /* a registry anchor, as the coroutine's */
    }
    free(lu);
    u->js->lua = NULL;
}
