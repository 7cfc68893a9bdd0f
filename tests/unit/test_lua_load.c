/* test_lua_load.c — worker/lua_load.c: a run's script sandboxes are loaded on libuv's pool and
 * handed to the engine with RUN_START. Through the real control thread and engine thread: a
 * run whose script's top level takes 35 ms to load starts while another run's users tick every
 * 2 ms on the same engine, and they go on ticking while it loads. Both clocks are the same
 * (time.now_ms), so the test needs no timing margin: with the load on the engine's loop no
 * tick can fall inside the load's window. Also the load's contract: cancelled, taken and
 * untaken sandboxes are freed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "control.h"
#include "lc_err.h"
#include "lc_scenario.h"
#include "lua_load.h"
#include "plan.h"

#define BOUND_MS 10000 /* the whole test gives up after this */
#define LOAD_SPIN_MS 35 /* the slow script's top level (the load deadline is 50 ms) */
#define EDGE_MS 5       /* a tick this far inside the load's window is surely during it */

/* A: every iteration names the 5 ms slot of the clock it ran in as a check (while B may be
 * loading: at most 64 names), then sleeps 2 ms. B: its top level spins LOAD_SPIN_MS and its
 * users name that window, "<t0> <t1>", as a check. */
static const char *const RUN_A =
    "{\"name\":\"a\",\"target\":\"http://127.0.0.1:1\",\"duration\":60,\"users\":4,"
    "\"spawn_rate\":1000,"
    "\"script\":\"local t0 = time.now_ms() function tick(u) local t = time.now_ms() "
    "if t - t0 >= 200 and t - t0 < 500 then "
    "check(true, string.format(\\\"%.0f\\\", math.floor(t / 5))) end sleep(2) end\","
    "\"journeys\":[{\"name\":\"a\",\"steps\":[{\"lua\":\"tick\"}]}]}";
static const char *const RUN_B =
    "{\"name\":\"b\",\"target\":\"http://127.0.0.1:1\",\"duration\":60,\"users\":2,"
    "\"spawn_rate\":1000,"
    "\"script\":\"local t0 = time.now_ms() while time.now_ms() - t0 < 35 do end "
    "local window = string.format(\\\"%.0f %.0f\\\", t0, time.now_ms()) "
    "function idle(u) check(true, window) sleep(20) end\","
    "\"journeys\":[{\"name\":\"b\",\"steps\":[{\"lua\":\"idle\"}]}]}";

typedef struct fx_s {
    uv_loop_t loop;
    worker_control_t ctl;
    uv_timer_t step, bound;
    int phase;
    unsigned finished;
    uint64_t a_iterations, a_max_us; /* run A's iteration series */
    double slots[64];                /* run A's 5 ms slots, from its check names */
    size_t n_slots;
    double load_t0, load_t1;         /* run B's load window (ms of the clock) */
    char failed[600];
} fx_t;

static void no_batch(void *arg, const worker_batch_meta_t *meta, uint8_t *frame, size_t len)
{
    free(frame);
}

static void on_failed(void *arg, uint64_t run, const char *why)
{
    fx_t *f = arg;
    snprintf(f->failed, sizeof f->failed, "run %llu failed: %s", (unsigned long long)run, why);
}

static void on_closed(worker_control_t *ctl) {}

static void end_fixture(fx_t *f)
{
    uv_close((uv_handle_t *)&f->step, NULL);
    uv_close((uv_handle_t *)&f->bound, NULL);
    worker_control_close(&f->ctl, on_closed);
}

static void on_finished(void *arg, worker_run_t *r)
{
    fx_t *f = arg;
    const lc_program_t *p = r->plan->program;
    if (r->id == 1) {
        int t = lc_program_timer(p, LC_TIMER_ITERATION, "a");
        assert_true(t >= 0);
        size_t e = r->plan->first_timer + (size_t)t;
        f->a_iterations = r->acc->ep[e].hist.total;
        f->a_max_us = r->acc->ep[e].hist.max;
    }
    const worker_checks_t *cs = r->acc->checks;
    for (size_t i = 0; cs != NULL && i < cs->n; i++) {
        if (r->id == 2 && sscanf(cs->c[i].name, "%lf %lf", &f->load_t0, &f->load_t1) != 2)
            snprintf(f->failed, sizeof f->failed, "run B's check: %s", cs->c[i].name);
        if (r->id == 1 && f->n_slots < 64)
            f->slots[f->n_slots++] = strtod(cs->c[i].name, NULL) * 5;
    }
    if (++f->finished == 2)
        end_fixture(f);
}

static const worker_control_hooks_t hooks = {
    .batch = no_batch, .run_finished = on_finished, .run_failed = on_failed};

static void assign(fx_t *f, uint64_t run, const char *json)
{
    char err[600];
    worker_assign_t a = {.run = run, .generation = 1, .users = run == 1 ? 4 : 2,
                         .scenario_json = json, .scenario_len = strlen(json)};
    if (worker_control_assign(&f->ctl, &a, err, sizeof err) != 0)
        fail_msg("assign %llu: %s", (unsigned long long)run, err);
}

/* 300 ms of A alone, then B is assigned, 400 ms of both, then both stop. */
static void on_step(uv_timer_t *t)
{
    fx_t *f = t->data;
    if (f->phase++ == 0) {
        assign(f, 2, RUN_B);
        uv_timer_start(t, on_step, 400, 0);
        return;
    }
    worker_control_stop_all(&f->ctl, 1000);
}

static void on_bound(uv_timer_t *t)
{
    fx_t *f = t->data;
    snprintf(f->failed, sizeof f->failed, "the runs did not end within %d ms", BOUND_MS);
    uv_stop(&f->loop);
}

static void test_other_runs_not_held_while_a_script_loads(void **state)
{
    fx_t *f = calloc(1, sizeof *f);
    assert_non_null(f);
    assert_int_equal(uv_loop_init(&f->loop), 0);
    worker_engines_conf_t engines = {.count = 1};
    assert_int_equal(worker_control_init(&f->ctl, &f->loop, &engines, false, "t", &hooks, f), 0);
    uv_timer_init(&f->loop, &f->step);
    uv_timer_init(&f->loop, &f->bound);
    f->step.data = f->bound.data = f;
    assign(f, 1, RUN_A);
    uv_timer_start(&f->step, on_step, 300, 0);
    uv_timer_start(&f->bound, on_bound, BOUND_MS, 0);
    uv_run(&f->loop, UV_RUN_DEFAULT);
    if (f->failed[0] != '\0')
        fail_msg("%s", f->failed);
    /* B really loaded slowly, and its users ran in the sandbox the pool made. */
    assert_true(f->load_t1 - f->load_t0 >= LOAD_SPIN_MS);
    /* A ticked while B loaded: a slot well inside B's window. */
    size_t during = 0;
    for (size_t i = 0; i < f->n_slots; i++)
        during += f->slots[i] >= f->load_t0 + EDGE_MS && f->slots[i] + 5 <= f->load_t1 - EDGE_MS;
    print_message("      run A: %llu iterations (the longest %.1f ms), %zu of its 5 ms slots "
                  "inside run B's %.0f ms load\n", (unsigned long long)f->a_iterations,
                  (double)f->a_max_us / 1000.0, during, f->load_t1 - f->load_t0);
    assert_true(f->a_iterations > 100);
    assert_true(f->n_slots > 0);
    assert_true(during > 0);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    free(f);
}

/* ---- the load's own contract ---------------------------------------------------------- */

typedef struct load_fx_s {
    uv_loop_t loop;
    worker_plan_t *plan;
    worker_lua_load_t *load;
    int calls;
} load_fx_t;

static void load_open(load_fx_t *f)
{
    char err[512];
    lc_scenario_t sc;
    if (lc_scenario_parse(RUN_A, strlen(RUN_A), &sc, err, sizeof err) != 0)
        fail_msg("parse: %s", err);
    if (worker_plan_build(&f->plan, &sc, err, sizeof err) != 0)
        fail_msg("plan: %s", err);
    assert_int_equal(uv_loop_init(&f->loop), 0);
}

static void load_close(load_fx_t *f)
{
    assert_int_equal(uv_loop_close(&f->loop), 0);
    worker_plan_free(f->plan);
}

static void on_loaded(worker_lua_load_t *l, void *arg)
{
    load_fx_t *f = arg;
    assert_ptr_equal(l, f->load);
    assert_true(worker_lua_load_ready(l));
    f->calls++;
}

static void test_taken_and_untaken_sandboxes(void **state)
{
    load_fx_t f = {0};
    load_open(&f);
    assert_int_equal(worker_lua_load_start(&f.load, &f.loop, f.plan, 9, 3, on_loaded, &f), 0);
    assert_false(worker_lua_load_ready(f.load));
    uv_run(&f.loop, UV_RUN_DEFAULT);
    assert_int_equal(f.calls, 1);
    worker_lua_run_t *lr = worker_lua_load_take(f.load, 1);
    assert_non_null(lr);
    assert_null(worker_lua_load_take(f.load, 1)); /* taken once */
    worker_lua_load_free(f.load);                 /* 0 and 2, never taken, go with it */
    worker_lua_run_free(lr);                      /* on another thread than its maker */
    load_close(&f);
}

static void on_counted(worker_lua_load_t *l, void *arg)
{
    load_fx_t *f = arg;
    assert_true(worker_lua_load_ready(l));
    f->calls++;
}

static void test_cancelled_load(void **state)
{
    load_fx_t f = {0};
    load_open(&f);
    /* Enough loads that some are still queued when cancelled; each still calls back once. */
    worker_lua_load_t *loads[16];
    for (int i = 0; i < 16; i++) {
        assert_int_equal(
            worker_lua_load_start(&loads[i], &f.loop, f.plan, 9, 2, on_counted, &f), 0);
    }
    for (int i = 0; i < 16; i++)
        worker_lua_load_cancel(loads[i]);
    uv_run(&f.loop, UV_RUN_DEFAULT);
    assert_int_equal(f.calls, 16);
    for (int i = 0; i < 16; i++)
        worker_lua_load_free(loads[i]); /* loaded or not: the ASan build checks for leaks */
    load_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_other_runs_not_held_while_a_script_loads),
        cmocka_unit_test(test_taken_and_untaken_sandboxes),
        cmocka_unit_test(test_cancelled_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
