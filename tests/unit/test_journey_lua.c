/* test_journey_lua.c — lua steps on a real engine loop (worker/journey_lua.c, journey_lua_api.c):
 * u.vars shared with declarative steps, u.id and u.iteration, check counted per name, sleep on
 * the user's timer, http's response table (a connect refused: no server needed), and what
 * a script may not do (another origin, an unknown endpoint, a CR in a header, a table in a
 * journey variable, a loop past the CPU deadline), each a script error on the step's
 * endpoint. One traced user runs one iteration (the dry run's rule), then ends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine.h"
#include "journey.h"
#include "journey_lua.h"
#include "lc_err.h"
#include "plan.h"
#include "stats.h"
#include "user.h"

#define DOC_MAX 8192
#define RUN_BOUND_MS 5000 /* every test's loop gives up after this */

typedef struct fx_s {
    worker_engine_t *e;
    engine_run_t *r;
    worker_plan_t *plan;
    worker_trace_t trace;
    char *trace_text;
    size_t trace_len;
    FILE *trace_out;
} fx_t;

/* A scenario (JSON with ' for ") against 127.0.0.1:1, where nothing listens. */
static void fx_open(fx_t *f, const char *script, const char *journeys)
{
    char doc[DOC_MAX], err[512];
    int n = snprintf(doc, sizeof doc, "{'name':'t','target':'http://127.0.0.1:1','duration':5,"
                                      "'connect_timeout_ms':2000,'script':'%s',%s}", script,
                     journeys);
    assert_true(n > 0 && (size_t)n < sizeof doc);
    for (char *c = doc; *c != '\0'; c++)
        if (*c == '\'')
            *c = '"';
    lc_scenario_t sc;
    if (lc_scenario_parse(doc, strlen(doc), &sc, err, sizeof err) != 0)
        fail_msg("parse: %s", err);
    if (worker_plan_build(&f->plan, &sc, err, sizeof err) != 0)
        fail_msg("plan: %s", err);
    uv_ip4_addr("127.0.0.1", 1, (struct sockaddr_in *)&f->plan->addr);
    f->trace_out = open_memstream(&f->trace_text, &f->trace_len);
    worker_trace_init(&f->trace, f->trace_out);
    f->plan->trace = &f->trace;
    assert_non_null(f->e = calloc(1, sizeof *f->e));
    assert_int_equal(uv_loop_init(&f->e->loop), 0);
    f->e->loop.data = f->e;
    f->e->rng = 1;
    f->e->n_engines = 1;
    assert_non_null(f->r = calloc(1, sizeof *f->r));
    f->r->engine = f->e;
    f->r->id = 7;
    f->r->plan = f->plan;
    f->r->t0_ns = uv_hrtime();
    assert_non_null(f->r->stats = worker_stats_new(f->plan->n_endpoints));
    assert_int_equal(worker_lua_run_open(f->r), 0);
}

/* One user, id 1, through one iteration until it is freed. */
static void fx_run_user(fx_t *f)
{
    worker_user_t *u = worker_user_new(f->r, 1);
    assert_non_null(u);
    worker_journey_resume(u);
    uint64_t t0 = uv_hrtime();
    while (f->r->live > 0 && (uv_hrtime() - t0) / 1000000u < RUN_BOUND_MS)
        uv_run(&f->e->loop, UV_RUN_ONCE);
    assert_int_equal(f->r->live, 0);
    fflush(f->trace_out);
}

static void fx_close(fx_t *f)
{
    worker_lua_run_close(f->r);
    worker_stats_free(f->r->stats);
    free(f->r);
    assert_int_equal(uv_loop_close(&f->e->loop), 0);
    worker_bufpool_free(&f->e->pool);
    lc_buf_free(&f->e->body_scratch);
    lc_buf_free(&f->e->req_scratch);
    free(f->e);
    worker_plan_free(f->plan);
    fclose(f->trace_out);
    free(f->trace_text);
}

static const worker_ep_stats_t *ep(const fx_t *f, const char *name)
{
    int i = lc_program_endpoint(f->plan->program, name);
    if (i < 0)
        fail_msg("no endpoint %s", name);
    return &f->r->stats->ep[i];
}

/* Every check passed, as many as want, and none failed. */
static void assert_checks_passed(const fx_t *f, uint64_t want)
{
    const worker_checks_t *cs = f->r->stats->checks;
    uint64_t passed = 0;
    for (size_t i = 0; cs != NULL && i < cs->n; i++) {
        if (cs->c[i].failed > 0)
            fail_msg("check \"%s\" failed (trace:\n%s)", cs->c[i].name, f->trace_text);
        passed += cs->c[i].passed;
    }
    if (passed != want)
        fail_msg("%llu checks passed, wanted %llu (trace:\n%s)", (unsigned long long)passed,
                 (unsigned long long)want, f->trace_text);
}

static void test_vars_shared_with_steps(void **state)
{
    fx_t f = {0};
    fx_open(&f,
            "function set(u) u.vars.tok = \\\"abc\\\" u.vars.n = 42 u.vars.flag = true "
            "u.vars.mine = {1, 2} u.vars.gone = 1 u.vars.gone = nil end "
            "function get(u) check(u.vars.copy == \\\"abc-42-true\\\", \\\"copy\\\") "
            "check(u.vars.n == 42 and type(u.vars.n) == \\\"number\\\", \\\"n\\\") "
            "check(u.vars.five == 5, \\\"five\\\") check(u.vars.mine[2] == 2, \\\"own\\\") "
            "check(u.vars.gone == nil, \\\"gone\\\") check(u.vars.nothing == nil, \\\"nil\\\") "
            "check(u.vars[\\\"acc.user\\\"] == \\\"ann\\\", \\\"column\\\") "
            "check(u.id == 1 and u.iteration == 0, \\\"id\\\") end",
            "'feeders':{'acc':{'rows':[{'user':'ann'}]}},"
            "'journeys':[{'name':'j','steps':[{'set':{'five':5}},{'feed':'acc'},{'lua':'set'},"
            "{'set':{'copy':'${tok}-${n}-${flag}'}},{'lua':'get'}]}]");
    fx_run_user(&f);
    assert_checks_passed(&f, 8);
    assert_int_equal(ep(&f, "lua set")->errors[WORKER_ERR_SCRIPT], 0);
    assert_non_null(strstr(f.trace_text, "iteration done"));
    fx_close(&f);
}

static void test_check_counts_and_failures(void **state)
{
    fx_t f = {0};
    fx_open(&f, "function f(u) check(true, \\\"yes\\\") check(nil, \\\"no\\\") "
                "check(1 > 2, \\\"no\\\") u.vars.r = check(false, \\\"r\\\") end",
            "'journeys':[{'name':'j','steps':[{'lua':'f'}]}]");
    fx_run_user(&f);
    const worker_checks_t *cs = f.r->stats->checks;
    assert_non_null(cs);
    assert_int_equal(cs->n, 3);
    assert_string_equal(cs->c[0].name, "yes");
    assert_int_equal(cs->c[0].passed, 1);
    assert_string_equal(cs->c[1].name, "no");
    assert_int_equal(cs->c[1].failed, 2);
    /* Failures are errors of kind check on the step's endpoint; the function goes on. */
    assert_int_equal(ep(&f, "lua f")->errors[WORKER_ERR_CHECK], 3);
    assert_int_equal(ep(&f, "lua f")->errors[WORKER_ERR_SCRIPT], 0);
    assert_non_null(strstr(f.trace_text, "iteration done"));
    fx_close(&f);
}

static void test_sleep_waits_on_the_timer(void **state)
{
    fx_t f = {0};
    fx_open(&f, "function f(u) sleep(30) sleep(0) u.vars.t = 1 end "
                "function g(u) check(u.vars.t == 1, \\\"after\\\") end",
            "'journeys':[{'name':'j','steps':[{'lua':'f'},{'lua':'g'}]}]");
    uint64_t t0 = uv_hrtime();
    fx_run_user(&f);
    assert_true((uv_hrtime() - t0) / 1000000u >= 29); /* the loop's clock is coarse */
    assert_checks_passed(&f, 1);
    fx_close(&f);
}

/* Nothing listens on port 1: the request ends as connect_refused, and the script sees it. */
static void test_http_answer(void **state)
{
    fx_t f = {0};
    fx_open(&f, "function f(u) local r = http.get(\\\"/x\\\", {name = \\\"x\\\", "
                "headers = {[\\\"X-A\\\"] = \\\"1\\\"}}) "
                "check(r.ok == false and r.status == 0, \\\"failed\\\") "
                "check(r.error == \\\"connect_refused\\\", \\\"kind\\\") "
                "check(r.body == \\\"\\\" and r.header(\\\"x\\\") == nil, \\\"empty\\\") "
                "r = http.post(\\\"http://127.0.0.1:1/y\\\", \\\"b\\\") "
                "check(r.error == \\\"connect_refused\\\", \\\"same origin\\\") end",
            "'journeys':[{'name':'j','steps':[{'lua':'f','endpoints':['x']}]}]");
    fx_run_user(&f);
    assert_checks_passed(&f, 4);
    assert_int_equal(ep(&f, "x")->count, 1);
    assert_int_equal(ep(&f, "x")->errors[WORKER_ERR_CONNECT_REFUSED], 1);
    assert_int_equal(ep(&f, "lua f")->count, 1); /* the step's own, by default */
    assert_non_null(strstr(f.trace_text, "GET /x HTTP/1.1"));
    assert_non_null(strstr(f.trace_text, "POST /y HTTP/1.1"));
    fx_close(&f);
}

/* Each function fails once: a script error on its step's endpoint, the message in the
 * trace, and nothing sent. */
static void expect_script_error(const char *fn_body, const char *want)
{
    char script[2048];
    snprintf(script, sizeof script, "function f(u) %s end", fn_body);
    fx_t f = {0};
    fx_open(&f, script, "'journeys':[{'name':'j','steps':[{'lua':'f'}]}]");
    fx_run_user(&f);
    if (ep(&f, "lua f")->errors[WORKER_ERR_SCRIPT] != 1 || strstr(f.trace_text, want) == NULL)
        fail_msg("{%s}: %llu script errors, trace:\n%s\nwanted \"%s\"", fn_body,
                 (unsigned long long)ep(&f, "lua f")->errors[WORKER_ERR_SCRIPT], f.trace_text,
                 want);
    assert_int_equal(ep(&f, "lua f")->count, 0);
    assert_non_null(strstr(f.trace_text, "iteration failed"));
    fx_close(&f);
}

static void test_what_a_script_may_not_do(void **state)
{
    /* The function bodies go through JSON: \\\" there is a quote in Lua. */
    expect_script_error("error(\\\"boom\\\")", "journeys[0].steps[0]: script:1: boom: error script");
    expect_script_error("http.get(\\\"http://other.example/x\\\")",
                        "http.get: \"http://other.example/x\" is not a path of the run's "
                        "target (http://127.0.0.1:1): a script reaches its target only");
    expect_script_error("http.get(\\\"//other.example/x\\\")", "is not a path of the run's");
    expect_script_error("http.get(\\\"https://127.0.0.1:1/x\\\")", "is not a path of the run's");
    expect_script_error("http.get(\\\"x\\\")", "is not a path of the run's");
    expect_script_error("http.get(\\\"/a b\\\")", "http.get: a space or a control byte");
    expect_script_error("http.get(\\\"/\\\", {name = \\\"nope\\\"})",
                        "http.get: opts.name: no endpoint named \"nope\"");
    expect_script_error("http.get(\\\"/\\\", {headers = {A = \\\"x\\\\r\\\\nB: y\\\"}})",
                        "http.get: opts.headers.A: a CR, LF or NUL byte");
    expect_script_error("http.get(\\\"/\\\", {headers = {Host = \\\"x\\\"}})",
                        "http.get: opts.headers: Host is set by the worker");
    expect_script_error("http.get(\\\"/\\\", {headers = {[\\\"a b\\\"] = \\\"x\\\"}})",
                        "is not a header name");
    expect_script_error("sleep(-1)", "sleep: expected 0 to 3600000 ms");
    expect_script_error("while true do end", "more than 2 ms of CPU without yielding");
}

static void test_journey_variable_types(void **state)
{
    fx_t f = {0};
    fx_open(&f, "function f(u) u.vars.x = {} end",
            "'journeys':[{'name':'j','steps':[{'lua':'f'},{'path':'/${x}'}]}]");
    fx_run_user(&f);
    assert_int_equal(ep(&f, "lua f")->errors[WORKER_ERR_SCRIPT], 1);
    assert_non_null(strstr(f.trace_text, "u.vars.x: a journey variable holds a string, a "
                                         "finite number, a boolean or nil, not a table"));
    fx_close(&f);
}

/* The top level runs without a user: sleep and http there are the plan's errors. */
static void test_top_level(void **state)
{
    char doc[1024], err[512];
    snprintf(doc, sizeof doc, "{\"name\":\"t\",\"target\":\"http://127.0.0.1:1\",\"duration\":5,"
             "\"script\":\"sleep(1) function f(u) end\",\"journeys\":[{\"name\":\"j\","
             "\"steps\":[{\"lua\":\"f\"}]}]}");
    lc_scenario_t sc;
    worker_plan_t *p;
    assert_int_equal(lc_scenario_parse(doc, strlen(doc), &sc, err, sizeof err), 0);
    assert_int_equal(worker_plan_build(&p, &sc, err, sizeof err), LC_EINVAL);
    assert_non_null(strstr(err, "script:1: attempt to call global 'sleep' (a nil value)"));
    lc_scenario_free(&sc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vars_shared_with_steps),
        cmocka_unit_test(test_check_counts_and_failures),
        cmocka_unit_test(test_sleep_waits_on_the_timer),
        cmocka_unit_test(test_http_answer),
        cmocka_unit_test(test_what_a_script_may_not_do),
        cmocka_unit_test(test_journey_variable_types),
        cmocka_unit_test(test_top_level),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
