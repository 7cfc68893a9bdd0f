/* journey_fixture.h — one engine run of a journey scenario on the test thread's loop, with an
 * lc_http_server for its target on that same loop (no thread): a traced user runs on_start,
 * one iteration and on_stop, then ends. Include it after cmocka.h. */
#ifndef TESTS_UNIT_JOURNEY_FIXTURE_H
#define TESTS_UNIT_JOURNEY_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "journey.h"
#include "journey_lua.h"
#include "lc_http_server.h"
#include "plan.h"
#include "scenario_fixture.h"
#include "stats.h"
#include "user.h"

#define JFX_BOUND_MS 5000 /* a user's run gives up after this */

typedef struct jfx_s {
    worker_engine_t *e;
    engine_run_t *r;
    worker_plan_t *plan;
    lc_http_server_t *http;
    worker_trace_t trace;
    char *trace_text;
    size_t trace_len;
    FILE *trace_out;
} jfx_t;

/* The scenario {"name", "target": the server, rest} (JSON with ' for "), its plan and a run. */
static inline void jfx_plan(jfx_t *f, const char *rest)
{
    char text[DOC_MAX], err[512];
    uint16_t port = lc_http_server_port(f->http);
    int n = snprintf(text, sizeof text, "{'name':'t','target':'http://127.0.0.1:%u',%s}", port,
                     rest);
    assert_true(n > 0 && (size_t)n < sizeof text);
    const char *doc = json_of(text);
    lc_scenario_t sc;
    if (lc_scenario_parse(doc, strlen(doc), &sc, err, sizeof err) != 0)
        fail_msg("parse: %s", err);
    if (worker_plan_build(&f->plan, &sc, err, sizeof err) != 0)
        fail_msg("plan: %s", err);
    uv_ip4_addr("127.0.0.1", port, (struct sockaddr_in *)&f->plan->origins[0].addr);
}

/* An engine and a server answering with handler(arg), then the run of scenario rest. */
static inline void jfx_open(jfx_t *f, lc_http_handler_cb handler, void *arg, const char *rest)
{
    char err[256];
    memset(f, 0, sizeof *f);
    assert_non_null(f->e = calloc(1, sizeof *f->e));
    assert_int_equal(uv_loop_init(&f->e->loop), 0);
    f->e->loop.data = f->e;
    f->e->rng = 1;
    f->e->n_engines = 1;
    if (lc_http_server_init(&f->http, &f->e->loop, "127.0.0.1", 0, 65536, handler, arg, err,
                            sizeof err) != 0)
        fail_msg("server: %s", err);
    jfx_plan(f, rest);
    f->trace_out = open_memstream(&f->trace_text, &f->trace_len);
    worker_trace_init(&f->trace, f->trace_out);
    f->plan->trace = &f->trace;
    assert_non_null(f->r = calloc(1, sizeof *f->r));
    *f->r = (engine_run_t){.engine = f->e, .id = 7, .plan = f->plan, .t0_ns = uv_hrtime()};
    assert_non_null(f->r->stats = worker_stats_new(f->plan->n_endpoints));
    if (f->plan->scenario.script != NULL)
        assert_int_equal(worker_lua_run_open(f->r), 0);
}

/* User id through on_start, one iteration and on_stop, until it is freed. */
static inline void jfx_run_user(jfx_t *f, uint64_t id)
{
    worker_user_t *u = worker_user_new(f->r, id);
    assert_non_null(u);
    worker_journey_resume(u);
    uint64_t t0 = uv_hrtime();
    while (f->r->live > 0 && (uv_hrtime() - t0) / 1000000u < JFX_BOUND_MS)
        uv_run(&f->e->loop, UV_RUN_ONCE);
    fflush(f->trace_out);
    if (f->r->live != 0)
        fail_msg("the user did not end (trace:\n%s)", f->trace_text);
}

/* Errors of kind on the series named name. */
static inline uint64_t jfx_errors(const jfx_t *f, const char *name, int kind)
{
    int i = lc_program_endpoint(f->plan->program, name);
    if (i < 0)
        fail_msg("no endpoint %s", name);
    return f->r->stats->ep[i].errors[kind];
}

/* How often script check name passed; fails the test when it failed or never ran. */
static inline uint64_t jfx_check_passed(const jfx_t *f, const char *name)
{
    const worker_checks_t *cs = f->r->stats->checks;
    for (size_t i = 0; cs != NULL && i < cs->n; i++)
        if (strcmp(cs->c[i].name, name) == 0 && cs->c[i].failed == 0)
            return cs->c[i].passed;
    fail_msg("check \"%s\" failed or did not run (trace:\n%s)", name, f->trace_text);
    return 0;
}

static inline void jfx_close(jfx_t *f)
{
    lc_http_server_close(f->http);
    uv_run(&f->e->loop, UV_RUN_DEFAULT); /* the server's handles close */
    assert_int_equal(uv_loop_close(&f->e->loop), 0);
    worker_engine_free_buffers(f->e);
    free(f->e);
    worker_lua_run_close(f->r);
    worker_stats_free(f->r->stats);
    free(f->r);
    worker_plan_free(f->plan);
    fclose(f->trace_out);
    free(f->trace_text);
}

#endif
