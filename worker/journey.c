/* journey.c — a journey user's op machine: control flow, variables, feeders, iterations
 * (requests in journey_http.c, lua steps in journey_lua.c). */
#include "journey.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "journey_feed.h"
#include "journey_http.h"
#include "journey_lua.h"
#include "lc_cond.h"
#include "lc_err.h"
#include "lc_json_scan.h"
#include "lc_log.h"
#include "lc_tpl.h"
#include "rng.h"
#include "stats.h"
#include "user_internal.h"

#define OPS_PER_RESUME 4096u /* then the loop gets a turn: a journey never stalls it */

static const lc_program_t *prog_of(const worker_user_t *u)
{
    return u->run->plan->program;
}

/* µs since the run's start on this engine, mod 2^32 (group clocks: differences only). */
static uint32_t run_us(const worker_user_t *u)
{
    return (uint32_t)((uv_hrtime() - u->run->t0_ns) / 1000u);
}

int worker_journey_init(worker_user_t *u)
{
    const lc_program_t *p = prog_of(u);
    assert(p != NULL);
    if ((u->js = calloc(1, sizeof *u->js)) == NULL)
        return LC_ENOMEM;
    u->js->journey = (uint16_t)lc_program_journey_of(p, u->id);
    u->js->section = WORKER_SECTION_START;
    u->js->pc = p->journeys[u->js->journey].on_start;
    u->js->fresh = true;
    return 0;
}

void worker_journey_free(worker_user_t *u)
{
    if (u->js == NULL)
        return;
    if (u->run->plan->trace != NULL) {
        worker_trace_note(u->run->plan->trace, "user %llu ended", (unsigned long long)u->id);
        atomic_store(&u->run->plan->trace->done, true);
    }
    worker_lua_user_free(u);
    worker_session_free(u->js->session);
    free(u->js->target);
    free(u->js->oconns); /* its connections are closed and freed by now */
    free(u->js);
    u->js = NULL;
}

static bool env_get(void *ctx, int slot, lc_value_t *out)
{
    const worker_user_t *u = ctx;
    return worker_session_get(u->js->session, prog_of(u), (uint32_t)slot, out);
}

void worker_journey_env(worker_user_t *u, lc_tpl_env_t *env, const char **missing)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    *env = (lc_tpl_env_t){.get = env_get,
                          .ctx = u,
                          .user_id = u->id,
                          .iteration = u->iteration,
                          .now_ms = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u,
                          .rng = &u->run->engine->rng,
                          .missing = missing};
}

worker_session_t *worker_journey_session(worker_user_t *u)
{
    if (u->js->session == NULL)
        u->js->session = worker_session_new(prog_of(u));
    return u->js->session;
}

/* Records a duration series (an iteration or a group) as one finished "request". */
static void record_timer(worker_user_t *u, uint32_t timer, bool ok, uint64_t us)
{
    const worker_plan_t *pl = u->run->plan;
    worker_stats_record_timer(u->run->stats, pl->first_timer + timer, ok, us);
}

enum worker_take worker_journey_take_row(worker_user_t *u, uint32_t f)
{
    const lc_feeder_t *fd = &prog_of(u)->feeders[f];
    worker_session_t *s = worker_journey_session(u);
    uint32_t row;
    if (s == NULL)
        return WORKER_TAKE_EXHAUSTED;
    bool own = fd->mode == LC_FEED_PER_USER && fd->order != LC_FEED_RANDOM &&
               u->run->plan->feeds[f].stock == NULL;
    enum worker_take got = own ? (worker_feed_of_user(u->run, f, u->id, &row)
                                      ? WORKER_TAKE_ROW
                                      : WORKER_TAKE_EXHAUSTED)
                               : worker_feed_next(u->run, f, &u->run->engine->rng, &row);
    if (got == WORKER_TAKE_EXHAUSTED && fd->on_exhausted == LC_FEED_STOP_RUN)
        engine_run_exhausted(u->run, f); /* the run ends: the master stops every worker */
    if (got == WORKER_TAKE_ROW)
        s->rows[f] = row;
    return got;
}

/* Rows every feeder gives at this moment: per-user rows once, per-iteration rows at each
 * iteration's start. A wait leaves the rows taken so far taken (never given to another). */
static enum worker_take feed_auto(worker_user_t *u, uint8_t mode)
{
    const lc_program_t *p = prog_of(u);
    for (uint32_t f = 0; f < p->n_feeders; f++) {
        if (p->feeders[f].mode != mode)
            continue;
        enum worker_take got = worker_journey_take_row(u, f);
        if (got != WORKER_TAKE_ROW)
            return got;
    }
    return WORKER_TAKE_ROW;
}

static void end_iteration(worker_user_t *u, bool ok);

/* A failure at the step at pc: its on_error decides. True when the user goes on with the
 * next step at once; false when it waits (the next iteration) or winds down. */
bool worker_journey_fail(worker_user_t *u, uint8_t on_error)
{
    worker_journey_state_t *js = u->js;
    js->failed = true;
    if (js->section == WORKER_SECTION_STOP || on_error == LC_ON_ERROR_CONTINUE) {
        js->pc++;
        return true;
    }
    if (on_error == LC_ON_ERROR_STOP_USER)
        worker_journey_wind_down(u);
    else
        end_iteration(u, false);
    return false;
}

/* Renders a template into the engine's scratch; on an unset variable, counts a template
 * error on the journey's iteration series. */
static int render(worker_user_t *u, const lc_tpl_t *t, lc_buf_t *out)
{
    lc_tpl_env_t env;
    const char *missing = NULL;
    worker_journey_env(u, &env, &missing);
    out->len = 0;
    int rv = lc_buf_append(out, "", 0);
    return rv != 0 ? rv : lc_tpl_render(t, &env, out);
}

static bool eval(worker_user_t *u, const lc_cond_t *c, bool *out)
{
    lc_tpl_env_t env;
    const char *missing = NULL;
    worker_journey_env(u, &env, &missing);
    return lc_cond_eval(c, &env, out) == 0;
}

static int op_set(worker_user_t *u, const lc_op_t *op)
{
    const lc_program_t *p = prog_of(u);
    lc_buf_t *scratch = &u->run->engine->body_scratch;
    worker_session_t *s = worker_journey_session(u);
    lc_value_t v;
    int slot;
    if (s == NULL)
        return LC_ENOMEM;
    if (lc_tpl_single_var(p->tpls[op->b], &slot) && env_get(u, slot, &v)) {
        lc_buf_t copy = {0}; /* the value may live in the session it is written to */
        int rv = lc_buf_append(&copy, v.data, v.len);
        if (rv == 0)
            rv = worker_session_set(s, op->a, copy.data, copy.len, v.type);
        lc_buf_free(&copy);
        return rv;
    }
    int rv = render(u, p->tpls[op->b], scratch);
    return rv != 0 ? rv : worker_session_set(s, op->a, scratch->data, scratch->len, op->type);
}

/* The element count of a JSON array variable and, for at < count, element at. */
static bool list_element(worker_user_t *u, uint32_t slot, uint32_t at, uint32_t *count,
                         lc_jmatch_t *elem)
{
    lc_value_t list;
    if (!env_get(u, (int)slot, &list) || list.type != LC_V_JSON)
        return false;
    return worker_json_element(list.data, list.len, at, count, elem) == 0;
}

static bool set_element(worker_user_t *u, const lc_op_t *loop, uint32_t at, uint32_t *count)
{
    lc_jmatch_t e = {0};
    if (!list_element(u, loop->a, at, count, &e))
        return false;
    if (at >= *count)
        return true;
    lc_buf_t copy = {0}; /* the element lives in the session it is written to */
    int rv = e.escaped ? lc_json_string_decode(e.v.data, e.v.len, &copy)
                       : lc_buf_append(&copy, e.v.data, e.v.len);
    if (rv == 0)
        rv = worker_session_set(worker_journey_session(u), loop->b, copy.data ? copy.data : "",
                                copy.len, e.v.type);
    lc_buf_free(&copy);
    return rv == 0;
}

/* Enters a loop at op (REPEAT, WHILE, FOREACH): a frame, or a jump past it. */
static bool loop_enter(worker_user_t *u, const lc_op_t *op, uint32_t at)
{
    worker_journey_state_t *js = u->js;
    uint32_t n = 0;
    bool go = true;
    if (op->code == LC_OP_REPEAT) {
        n = op->b;
        if (op->a != UINT32_MAX) {
            lc_buf_t *b = &u->run->engine->body_scratch;
            char *end;
            if (render(u, prog_of(u)->tpls[op->a], b) != 0)
                return false;
            unsigned long v = strtoul(b->data, &end, 10);
            if (b->len == 0 || *end != '\0' || v > LC_JOURNEY_REPEAT_MAX)
                return false;
            n = (uint32_t)v;
        }
        go = n > 0;
    } else if (op->code == LC_OP_WHILE) {
        n = op->b;
        if (!eval(u, prog_of(u)->conds[op->a], &go))
            return false;
    } else if (!set_element(u, op, 0, &n)) {
        return false;
    } else {
        go = n > 0;
    }
    if (!go) {
        js->pc = op->target;
        return true;
    }
    assert(js->depth < LC_JOURNEY_DEPTH_MAX);
    js->frames[js->depth++] = (worker_frame_t){.i = 0, .n = n, .op = at};
    js->pc = at + 1;
    return true;
}

/* NEXT: another pass of the innermost loop, or out of it. */
static bool loop_next(worker_user_t *u)
{
    worker_journey_state_t *js = u->js;
    assert(js->depth > 0);
    worker_frame_t *f = &js->frames[js->depth - 1];
    const lc_op_t *loop = &prog_of(u)->ops[f->op];
    bool again = ++f->i < f->n;
    if (again && loop->code == LC_OP_WHILE && !eval(u, prog_of(u)->conds[loop->a], &again))
        return false;
    uint32_t count;
    if (again && loop->code == LC_OP_FOREACH && !set_element(u, loop, f->i, &count))
        return false;
    if (again) {
        js->pc = f->op + 1;
    } else {
        js->depth--;
        js->pc = loop->target;
    }
    return true;
}

static void op_group_end(worker_user_t *u, const lc_op_t *op)
{
    worker_journey_state_t *js = u->js;
    assert(js->depth > 0);
    const worker_frame_t *f = &js->frames[--js->depth];
    record_timer(u, op->a, true, (uint32_t)(run_us(u) - f->start));
}

static void op_rand(worker_user_t *u, const lc_op_t *op)
{
    const lc_branch_t *b = &prog_of(u)->branches[op->a];
    uint64_t r = worker_rng_next(&u->run->engine->rng) % b[op->b - 1].cum_weight;
    uint32_t i = 0;
    while (b[i].cum_weight <= r)
        i++;
    u->js->pc = b[i].target;
}

/* The start of an iteration (or of on_start): its clock, and per-iteration rows. */
static bool begin(worker_user_t *u)
{
    worker_journey_state_t *js = u->js;
    js->fresh = false;
    js->failed = false;
    js->depth = 0;
    js->iter_start_ns = uv_hrtime();
    /* The open model times an iteration, and its first request, from when it was due (the
     * pacer's start), so a stall counts against the iterations behind it (wrk2's
     * coordinated-omission correction). */
    if (u->run->open && u->intended_ns != 0 && u->intended_ns < js->iter_start_ns)
        js->iter_start_ns = u->intended_ns;
    /* A new user's start begins in on_start (empty or not) and goes on into the steps: its
     * first request, on_start's or the steps', carries the wait as any other start's does. */
    js->first_request = u->run->open;
    if (prog_of(u)->cookies_reset_iteration && js->section == WORKER_SECTION_STEPS &&
        js->session != NULL && u->iteration > 0)
        lc_cookie_jar_clear(&js->session->jar);
    enum worker_take got = js->fed_user ? WORKER_TAKE_ROW : feed_auto(u, LC_FEED_PER_USER);
    if (got == WORKER_TAKE_ROW) {
        js->fed_user = true;
        got = feed_auto(u, LC_FEED_PER_ITERATION);
    }
    if (got == WORKER_TAKE_WAIT) { /* the leader's next lease is on its way: begin again */
        js->fresh = true;
        worker_user_wait(u, WORKER_STOCK_WAIT_MS);
        return false;
    }
    if (got == WORKER_TAKE_EXHAUSTED) {
        worker_journey_wind_down(u);
        return false;
    }
    if (u->run->plan->trace != NULL)
        worker_trace_note(u->run->plan->trace, "user %llu, journey %s: %s",
                          (unsigned long long)u->id, prog_of(u)->journeys[js->journey].name,
                          js->section == WORKER_SECTION_START ? "on_start" : "iteration");
    return true;
}

static void end_iteration(worker_user_t *u, bool ok)
{
    worker_journey_state_t *js = u->js;
    const lc_journey_t *j = &prog_of(u)->journeys[js->journey];
    const lc_scenario_t *sc = &u->run->plan->scenario;
    uint64_t took_us = (uv_hrtime() - js->iter_start_ns) / 1000u, took_ms = took_us / 1000u;
    if (js->section == WORKER_SECTION_STEPS) {
        record_timer(u, j->timer, ok, took_us);
        u->iteration++;
    }
    if (u->run->plan->trace != NULL) {
        worker_trace_note(u->run->plan->trace, "%s %s in %llu ms",
                          js->section == WORKER_SECTION_STEPS ? "iteration" : "on_start",
                          ok ? "done" : "failed", (unsigned long long)took_ms);
        if (js->section == WORKER_SECTION_STEPS || !ok) { /* a dry run: one iteration */
            js->section = WORKER_SECTION_STEPS;
            worker_journey_wind_down(u);
            return;
        }
    }
    /* A failed on_start runs again next time: the steps need what it sets up. */
    js->section = js->section == WORKER_SECTION_START && !ok ? WORKER_SECTION_START
                                                             : WORKER_SECTION_STEPS;
    js->pc = js->section == WORKER_SECTION_START ? j->on_start : j->steps;
    js->depth = 0;
    js->fresh = true;
    if (worker_user_ending(u)) {
        worker_journey_wind_down(u);
        return;
    }
    if (u->run->open) {
        worker_user_idle(u);
        return;
    }
    uint64_t think = sc->think_max_ms > sc->think_min_ms
                         ? worker_rng_range(&u->run->engine->rng, sc->think_min_ms, sc->think_max_ms)
                         : sc->think_min_ms;
    uint64_t pace = j->pacing_ms > took_ms ? j->pacing_ms - took_ms : 0;
    worker_user_wait(u, think > pace ? think : pace);
}

/* END of a section. True when the user goes on at once. */
static bool end_section(worker_user_t *u)
{
    worker_journey_state_t *js = u->js;
    const lc_journey_t *j = &prog_of(u)->journeys[js->journey];
    switch (js->section) {
    case WORKER_SECTION_START:
        if (js->failed) { /* on_error continue let it through with a failure */
            end_iteration(u, false);
            return false;
        }
        js->section = WORKER_SECTION_STEPS;
        js->pc = j->steps;
        return true;
    case WORKER_SECTION_STEPS:
        end_iteration(u, !js->failed);
        return false;
    default:
        js->section = WORKER_SECTION_DONE;
        worker_user_finish(u);
        return false;
    }
}

void worker_journey_wind_down(worker_user_t *u)
{
    worker_journey_state_t *js = u->js;
    worker_lua_abandon(u); /* a function waiting in http or sleep: on_stop starts afresh */
    const lc_journey_t *j = &prog_of(u)->journeys[js->journey];
    bool has_stop = prog_of(u)->ops[j->on_stop].code != LC_OP_END;
    if (js->section >= WORKER_SECTION_STOP || !has_stop || !js->fed_user ||
        u->run->deadline_passed) {
        js->section = WORKER_SECTION_DONE;
        worker_user_finish(u);
        return;
    }
    if (u->run->plan->trace != NULL)
        worker_trace_note(u->run->plan->trace, "on_stop");
    js->section = WORKER_SECTION_STOP;
    js->pc = j->on_stop;
    js->depth = 0;
    js->fresh = false;
    worker_user_wait(u, WORKER_YIELD_MS); /* on a later turn of the loop, not inside the caller */
}

/* Runs one op that does not wait. Returns false when the user now waits or ended. */
static bool run_op(worker_user_t *u)
{
    worker_journey_state_t *js = u->js;
    const lc_program_t *p = prog_of(u);
    if (js->fresh && !begin(u))
        return false;
    const lc_op_t *op = &p->ops[js->pc];
    bool ok = true, cond;
    switch (op->code) {
    case LC_OP_REQ:
        worker_journey_request(u, op->a);
        return false;
    case LC_OP_THINK:
        js->pc++;
        worker_user_wait(u, op->b > op->a ? worker_rng_range(&u->run->engine->rng, op->a, op->b)
                                          : op->a);
        return false;
    case LC_OP_SET:
        ok = op_set(u, op) == 0;
        js->pc++;
        break;
    case LC_OP_FEED:
        switch (worker_journey_take_row(u, op->a)) {
        case WORKER_TAKE_WAIT: /* the same op again once the leader's lease may be in */
            worker_user_wait(u, WORKER_STOCK_WAIT_MS);
            return false;
        case WORKER_TAKE_EXHAUSTED:
            worker_journey_wind_down(u);
            return false;
        default:
            break;
        }
        js->pc++;
        break;
    case LC_OP_IF:
        ok = eval(u, p->conds[op->a], &cond);
        js->pc = ok && !cond ? op->target : js->pc + 1;
        break;
    case LC_OP_JMP:
        js->pc = op->target;
        break;
    case LC_OP_REPEAT:
    case LC_OP_WHILE:
    case LC_OP_FOREACH:
        ok = loop_enter(u, op, js->pc);
        break;
    case LC_OP_NEXT:
        ok = loop_next(u);
        break;
    case LC_OP_RAND:
        op_rand(u, op);
        break;
    case LC_OP_GROUP:
        assert(js->depth < LC_JOURNEY_DEPTH_MAX);
        js->frames[js->depth++] = (worker_frame_t){.op = js->pc, .start = run_us(u)};
        js->pc++;
        break;
    case LC_OP_GROUP_END:
        op_group_end(u, op);
        js->pc++;
        break;
    case LC_OP_LUA:
        return worker_journey_lua(u, op->a);
    case LC_OP_EXIT:
        if (op->a == LC_EXIT_USER)
            worker_journey_wind_down(u);
        else
            end_iteration(u, !js->failed);
        return false;
    default:
        return end_section(u);
    }
    if (ok)
        return true;
    /* A template or condition could not be evaluated (an unset variable, a bad count): a
     * template error on the journey's iteration series. */
    if (u->run->plan->trace != NULL)
        worker_trace_note(u->run->plan->trace, "step %u: a template or condition could not be "
                          "evaluated (an unset variable?): template error", js->pc);
    worker_stats_error(u->run->stats, u->run->plan->first_timer + p->journeys[js->journey].timer,
                       WORKER_ERR_TEMPLATE);
    return worker_journey_fail(u, p->journeys[js->journey].on_error);
}

static void on_resume(uv_timer_t *t)
{
    worker_journey_resume(t->data);
}

void worker_journey_resume(worker_user_t *u)
{
    for (unsigned n = 0; n < OPS_PER_RESUME; n++)
        if (!run_op(u))
            return;
    worker_user_wait_cb(u, WORKER_YIELD_MS, on_resume); /* give the loop a turn */
}
