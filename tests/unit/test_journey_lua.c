/* test_journey_lua.c — lua steps on a real engine loop (worker/journey_lua.c, journey_lua_api.c):
 * u.vars shared with declarative steps, u.id and u.iteration, check counted per name, sleep on
 * the user's timer, http's response table (a connect refused: no server needed), and what
 * a script may not do (another origin, an unknown endpoint, a CR in a header, a table in a
 * journey variable, a loop past the CPU deadline), each a script error on the step's
 * endpoint; one user over the run's memory cap fails alone. One traced user runs one
 * iteration (the dry run's rule), then ends. The fixture (scenario, engine loop, server) is
 * journey_run_fixture.h; http's methods and origins are test_journey_lua_http.c's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "journey_lua_internal.h"
#include "lc_err.h"
#include "lc_scenario_summary.h"

#include "journey_run_fixture.h"

/* Each function fails once: a script error on its step's endpoint, the message in the
 * trace, and nothing sent. */
static void expect_script_error(const char *fn_body, const char *want)
{
    char script[2048];
    snprintf(script, sizeof script, "function f(u) %s end", fn_body);
    journey_run_t f = {0};
    journey_run_open_script(&f, 1, script, "'journeys':[{'name':'j','steps':[{'lua':'f'}]}]");
    journey_run_users(&f, 1);
    if (ep_stats(&f, "lua f")->errors[WORKER_ERR_SCRIPT] != 1 ||
        strstr(f.trace_text, want) == NULL)
        fail_msg("{%s}: %llu script errors, trace:\n%s\nwanted \"%s\"", fn_body,
                 (unsigned long long)ep_stats(&f, "lua f")->errors[WORKER_ERR_SCRIPT],
                 f.trace_text, want);
    assert_int_equal(ep_stats(&f, "lua f")->count, 0);
    assert_non_null(strstr(f.trace_text, "iteration failed"));
    journey_run_close(&f);
}

/* A run of script's f (one lua step, options in step) against a server of the script pages,
 * started here; with the 50 ms CPU limit, since a loaded test machine must not turn these
 * tests of the API into tests of the deadline (test_script_cpu_ms). */
static void open_served(journey_run_t *f, server_thread_t *sv, const char *script,
                        const char *step)
{
    char journeys[2048];
    snprintf(journeys, sizeof journeys,
             "'script_cpu_ms':50,'journeys':[{'name':'j','steps':[%s]}]", step);
    server_thread_start(sv, answer_script_pages);
    journey_run_open_script(f, sv->port, script, journeys);
}

/* That run, for one user. */
static void run_served(journey_run_t *f, server_thread_t *sv, const char *script,
                       const char *step)
{
    open_served(f, sv, script, step);
    journey_run_users(f, 1);
}

static void close_served(journey_run_t *f, server_thread_t *sv)
{
    journey_run_close(f);
    server_thread_stop(sv);
}

static void test_vars_shared_with_steps(void **state)
{
    journey_run_t f = {0};
    journey_run_open_script(
        &f, 1,
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
    journey_run_users(&f, 1);
    assert_checks_passed(&f, 8);
    assert_int_equal(ep_stats(&f, "lua set")->errors[WORKER_ERR_SCRIPT], 0);
    assert_non_null(strstr(f.trace_text, "iteration done"));
    journey_run_close(&f);
}

static void test_check_counts_and_failures(void **state)
{
    journey_run_t f = {0};
    journey_run_open_script(
        &f, 1, "function f(u) check(true, \\\"yes\\\") check(nil, \\\"no\\\") "
        "check(1 > 2, \\\"no\\\") u.vars.r = check(false, \\\"r\\\") end",
        "'journeys':[{'name':'j','steps':[{'lua':'f'}]}]");
    journey_run_users(&f, 1);
    const worker_checks_t *cs = f.r->stats->checks;
    assert_non_null(cs);
    assert_int_equal(cs->n, 3);
    assert_string_equal(cs->c[0].name, "yes");
    assert_int_equal(cs->c[0].passed, 1);
    assert_string_equal(cs->c[1].name, "no");
    assert_int_equal(cs->c[1].failed, 2);
    /* Failures are errors of kind check on the step's endpoint; the function goes on. */
    assert_int_equal(ep_stats(&f, "lua f")->errors[WORKER_ERR_CHECK], 3);
    assert_int_equal(ep_stats(&f, "lua f")->errors[WORKER_ERR_SCRIPT], 0);
    assert_non_null(strstr(f.trace_text, "iteration done"));
    journey_run_close(&f);
}

static void test_sleep_waits_on_the_timer(void **state)
{
    journey_run_t f = {0};
    journey_run_open_script(&f, 1, "function f(u) sleep(30) sleep(0) u.vars.t = 1 end "
                                   "function g(u) check(u.vars.t == 1, \\\"after\\\") end",
                            "'journeys':[{'name':'j','steps':[{'lua':'f'},{'lua':'g'}]}]");
    /* The sleep's timer counts from the loop's cached clock: brought up to now first, or a
     * clock left behind by a busy machine would let the timer fire early against t0. */
    uv_update_time(&f.e->loop);
    uint64_t t0 = uv_hrtime();
    journey_run_users(&f, 1);
    assert_true((uv_hrtime() - t0) / 1000000u >= 29); /* the loop's clock is in whole ms */
    assert_checks_passed(&f, 1);
    journey_run_close(&f);
}

/* Nothing listens on port 1: the request ends as connect_refused, and the script sees it. */
static void test_http_answer(void **state)
{
    journey_run_t f = {0};
    journey_run_open_script(
        &f, 1,
        "function f(u) local r = http.get(\\\"/x\\\", {name = \\\"x\\\", "
        "headers = {[\\\"X-A\\\"] = \\\"1\\\"}}) "
        "check(r.ok == false and r.status == 0, \\\"failed\\\") "
        "check(r.error == \\\"connect_refused\\\", \\\"kind\\\") "
        "check(r.body == \\\"\\\" and r.header(\\\"x\\\") == nil, \\\"empty\\\") "
        "r = http.post(\\\"http://127.0.0.1:1/y\\\", \\\"b\\\") "
        "check(r.error == \\\"connect_refused\\\", \\\"same origin\\\") end",
        "'journeys':[{'name':'j','steps':[{'lua':'f','endpoints':['x']}]}]");
    journey_run_users(&f, 1);
    assert_checks_passed(&f, 4);
    assert_int_equal(ep_stats(&f, "x")->count, 1);
    assert_int_equal(ep_stats(&f, "x")->errors[WORKER_ERR_CONNECT_REFUSED], 1);
    assert_int_equal(ep_stats(&f, "lua f")->count, 1); /* the step's own, by default */
    assert_non_null(strstr(f.trace_text, "GET /x HTTP/1.1"));
    assert_non_null(strstr(f.trace_text, "POST /y HTTP/1.1"));
    journey_run_close(&f);
}

static void test_what_a_script_may_not_do(void **state)
{
    /* The function bodies go through JSON: \\\" there is a quote in Lua. */
    expect_script_error("error(\\\"boom\\\")", "journeys[0].steps[0]: script:1: boom: error script");
    expect_script_error("http.get(\\\"http://other.example/x\\\")",
                        "http.get: \"http://other.example/x\" is neither a path of the run's "
                        "target (http://127.0.0.1:1) nor a URL of one of its targets: a script "
                        "reaches those only");
    expect_script_error("http.get(\\\"//other.example/x\\\")", "is neither a path of the run's");
    expect_script_error("http.get(\\\"https://127.0.0.1:1/x\\\")", "is neither a path of the run's");
    expect_script_error("http.get(\\\"x\\\")", "is neither a path of the run's");
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
    journey_run_t f = {0};
    journey_run_open_script(&f, 1, "function f(u) u.vars.x = {} end",
                            "'journeys':[{'name':'j','steps':[{'lua':'f'},{'path':'/${x}'}]}]");
    journey_run_users(&f, 1);
    assert_int_equal(ep_stats(&f, "lua f")->errors[WORKER_ERR_SCRIPT], 1);
    assert_non_null(strstr(f.trace_text, "u.vars.x: a journey variable holds a string, a "
                                         "finite number, a boolean or nil, not a table"));
    journey_run_close(&f);
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

/* Lua strings are long brackets here: the fixture turns every ' into ". */
static void test_response_object(void **state)
{
    journey_run_t f = {0};
    server_thread_t sv;
    run_served(&f, &sv,
               "function f(u) local r = http.get([=[/json]=]) "
               "check(r.status == 200 and r.ok and r.error == nil, [=[status]=]) "
               "check(r.latency_ms > 0, [=[latency]=]) "
               "check(r:header([=[x-trace]=]) == [=[abc]=] and r.header([=[X-TRACE]=]) == [=[abc]=], [=[header]=]) "
               "check(r:header([=[nope]=]) == nil, [=[no header]=]) "
               "check(r:cookie([=[sid]=]) == [=[s1]=] and r.cookie([=[other]=]) == nil, [=[cookie]=]) "
               "check(r:json([=[$.items[1].id]=]) == 8, [=[json number]=]) "
               "check(r:json([=[$.name]=]) == [=[x]=] and r:json([=[$.ok]=]) == true, [=[json types]=]) "
               "check(r:json([=[$.n]=]) == nil and r:json([=[$.missing]=]) == nil, [=[json nil]=]) "
               "local all = r:json([=[$.items[*].id]=], [=[all]=]) "
               "check(#all == 2 and all[1] == 7 and all[2] == 8, [=[json all]=]) "
               "check(r:json([=[$.items[*]]=], [=[count]=]) == 2, [=[json count]=]) "
               "check(r:json([=[$.items]=])[2].id == 8, [=[json table]=]) "
               "check(r:regex([=[name.{3}([a-z]+)]=]) == [=[x]=], [=[regex]=]) "
               "check(r:regex([=[absent(x)]=]) == nil, [=[regex miss]=]) "
               "check(rawget(r, [=[body]=]) == nil, [=[lazy]=]) "
               "check(r.body:find([=[items]=]) ~= nil and rawget(r, [=[body]=]) ~= nil, [=[body]=]) "
               "local ok, e = pcall(r.json, r, [=[$.items[]=]) "
               "check(not ok and e:find([=[json: ]=]) ~= nil, [=[bad path]=]) "
               "ok, e = pcall(r.regex, r, [=[(unclosed]=]) "
               "check(not ok and e:find([=[regex: ]=]) ~= nil, [=[bad regex]=]) "
               "ok, e = pcall(r.json, r, [=[$.x]=], [=[most]=]) "
               "check(not ok, [=[bad pick]=]) end",
               "{'lua':'f'}");
    assert_checks_passed(&f, 18);
    assert_int_equal(server_requests(&sv), 1);
    close_served(&f, &sv);
}

static void test_redirects(void **state)
{
    journey_run_t f = {0};
    server_thread_t sv;
    run_served(&f, &sv,
               "function f(u) local r = http.get([=[/r302]=]) "
               "check(r.status == 200 and r:json([=[$.name]=]) == [=[x]=], [=[followed]=]) "
               "r = http.get([=[/r302]=], {follow_redirects = 0}) "
               "check(r.status == 302 and r.ok and r:header([=[location]=]) == [=[/json]=], [=[kept]=]) "
               "r = http.post([=[/r307]=], [=[payload]=]) "
               "check(r.body == [=[POST payload]=], [=[307 keeps the method and body]=]) "
               "r = http.post([=[/r302p]=], [=[payload]=]) "
               "check(r.body == [=[GET ]=], [=[302 turns into GET]=]) "
               "r = http.get([=[/away]=]) "
               "check(r.status == 302 and not r.ok and r.error == [=[redirect]=], [=[other origin]=]) "
               "r = http.get([=[/loop]=], {follow_redirects = 3}) "
               "check(r.error == [=[redirect]=], [=[too many]=]) end",
               "{'lua':'f','follow_redirects':5}");
    assert_checks_passed(&f, 6);
    /* 2 + 1 + 2 + 2 + 1 + 4 requests reached the server, each counted on the step */
    assert_int_equal(server_requests(&sv), 12);
    assert_int_equal(ep_stats(&f, "lua f")->count, 12);
    assert_int_equal(ep_stats(&f, "lua f")->errors[WORKER_ERR_REDIRECT], 2);
    close_served(&f, &sv);
}

static void test_request_head_group_feed_fail(void **state)
{
    journey_run_t f = {0};
    server_thread_t sv;
    server_thread_start(&sv, answer_script_pages);
    journey_run_open_script(
        &f, sv.port,
        "function f(u) local r = http.request([=[put]=], [=[/echo]=], {body = [=[b1]=]}) "
        "check(r.body == [=[PUT b1]=], [=[request]=]) "
        "r = http.request([=[POST]=], [=[/echo]=], {json = {a = 1}}) "
        "check(r.body == [=[POST {\\\"a\\\":1}]=], [=[json body]=]) "
        "r = http.head([=[/json]=]) "
        "check(r.status == 200 and r.body == [=[]=] and r:header([=[x-head]=]) == [=[1]=], [=[head]=]) "
        "local v = group([=[g1]=], function(x) http.get([=[/echo]=]) return x + 1 end, 41) "
        "check(v == 42, [=[group returns]=]) "
        "local row = feed([=[acc]=]) "
        "check(row.user == [=[ann]=] and u.vars[ [=[acc.user]=] ] == [=[ann]=], [=[feed]=]) "
        "local ok = pcall(fail, [=[nope]=]) check(false, [=[after fail]=]) end "
        "function g(u) check(false, [=[next step]=]) end "
        "function h(u) group([=[undeclared]=], function() end) end",
        "'feeders':{'acc':{'rows':[{'user':'ann'}]}},"
        "'journeys':[{'name':'j','steps':[{'lua':'f','groups':['g1'],'on_error':'continue'},"
        "{'lua':'g'}]}]");
    journey_run_users(&f, 1);
    assert_checks_passed(&f, 5);
    assert_int_equal(server_requests(&sv), 4);
    int g1 = lc_program_timer(f.plan->program, LC_TIMER_GROUP, "g1");
    assert_true(g1 >= 0);
    assert_int_equal(f.r->stats->ep[f.plan->first_timer + (size_t)g1].count, 1);
    /* fail: kind script, the message in the trace, and the iteration over despite continue */
    assert_int_equal(ep_stats(&f, "lua f")->errors[WORKER_ERR_SCRIPT], 1);
    assert_non_null(strstr(f.trace_text, "script:1: fail: nope"));
    assert_non_null(strstr(f.trace_text, "iteration failed"));
    close_served(&f, &sv);
    expect_script_error("group(\\\"nope\\\", function() end)", "group: no group named \"nope\"");
    expect_script_error("feed(\\\"nope\\\")", "feed: no feeder named \"nope\"");
    expect_script_error("http.request(\\\"BREW\\\", \\\"/\\\")", "http.request: method \"BREW\"");
    expect_script_error("http.get(\\\"/\\\", {follow_redirects = 99})",
                        "opts.follow_redirects: expected 0 to 20");
    expect_script_error("http.post(\\\"/\\\", nil, {json = {f = print}})",
                        "json.encode: a function has no JSON form");
}

/* A feeder that stops users when exhausted stops the user in feed(), without an error (its
 * one row went to the iteration's start). */
static void test_feed_exhausted(void **state)
{
    journey_run_t f = {0};
    journey_run_open_script(&f, 1,
                            "function f(u) feed(\\\"acc\\\") check(false, \\\"reached\\\") end",
                            "'feeders':{'acc':{'rows':[{'user':'ann'}],'mode':'per_iteration',"
                            "'on_exhausted':'stop_user'}},"
                            "'journeys':[{'name':'j','steps':[{'lua':'f'}]}]");
    journey_run_users(&f, 1);
    assert_checks_passed(&f, 0);
    assert_int_equal(ep_stats(&f, "lua f")->errors[WORKER_ERR_SCRIPT], 0);
    assert_non_null(strstr(f.trace_text, "feed: feeder acc is exhausted"));
    journey_run_close(&f);
}

/* A leased feeder: its first lease (one row) goes to the iteration's start, the second comes
 * 60 ms later, while the script's feed() wants it: feed() waits and returns that row (a
 * script used to fail its iteration then), as a feed step waits. */
static void on_late_lease(uv_timer_t *t)
{
    assert_true(worker_stock_add(t->data, 1, 1, true));
}

static void test_feed_waits_for_a_lease(void **state)
{
    (void)state;
    journey_run_t f = {0};
    journey_run_open_script(&f, 1,
                            "function f(u) local row = feed(\\\"acc\\\") "
                            "check(row.user == \\\"bob\\\", \\\"leased row\\\") end",
                            "'feeders':{'acc':{'rows':[{'user':'ann'},{'user':'bob'}],"
                            "'order':'sequential'}},"
                            "'journeys':[{'name':'j','steps':[{'lua':'f'}]}]");
    assert_int_equal(worker_plan_lease_feeds(f.plan), 0);
    assert_non_null(f.plan->feeds[0].stock);
    assert_true(worker_stock_add(f.plan->feeds[0].stock, 0, 1, false));
    uv_timer_t lease;
    assert_int_equal(uv_timer_init(&f.e->loop, &lease), 0);
    lease.data = f.plan->feeds[0].stock;
    uv_update_time(&f.e->loop); /* the timer counts from the loop's clock: now, not earlier */
    uint64_t t0 = uv_hrtime();
    assert_int_equal(uv_timer_start(&lease, on_late_lease, 60, 0), 0);
    journey_run_users(&f, 1);
    assert_true((uv_hrtime() - t0) / 1000000u >= 55);
    assert_checks_passed(&f, 1);
    assert_int_equal(ep_stats(&f, "lua f")->errors[WORKER_ERR_SCRIPT], 0);
    uv_close((uv_handle_t *)&lease, NULL);
    journey_run_close(&f);
}

/* math.random: the same seed and user, the same numbers; another seed, others. */
static void random_line(const char *seed, char *out, size_t len)
{
    char journeys[512];
    snprintf(journeys, sizeof journeys, "%s'journeys':[{'name':'j','steps':[{'lua':'f'}]}]", seed);
    journey_run_t f = {0};
    journey_run_open_script(&f, 1,
                            "function f(u) print(math.random(1, 1000000000), math.random()) end",
                            journeys);
    journey_run_users(&f, 1);
    const char *p = strstr(f.trace_text, "print: ");
    assert_non_null(p);
    snprintf(out, len, "%.*s", (int)strcspn(p, "\n"), p);
    journey_run_close(&f);
}

static void test_random_per_user(void **state)
{
    char a[128], b[128], c[128];
    random_line("'seed':5,", a, sizeof a);
    random_line("'seed':5,", b, sizeof b);
    random_line("'seed':6,", c, sizeof c);
    assert_string_equal(a, b);
    assert_string_not_equal(a, c);
}

/* Two users on one engine share the run's Lua state: user 2 asks for more than its 64 MiB
 * cap while user 1 waits on its request, and fails alone (kind script, the cap in the noted
 * message); user 1's table survives, its check after a sleep passes and its requests go on. */
static void test_memory_cap_fails_one_user(void **state)
{
    journey_run_t f = {0};
    server_thread_t sv;
    open_served(
        &f, &sv,
        "function f(u) local t = {} for i = 1, 100 do t[i] = [=[u]=] .. i end "
        "if u.id == 2 then local big = string.rep([=[x]=], 64 * 1024 * 1024) "
        "check(false, [=[past the cap]=]) end "
        "local r = http.get([=[/e/before]=]) sleep(30) "
        "check(r.status == 200 and #t == 100 and t[100] == [=[u100]=], [=[after a sleep]=]) "
        "r = http.get([=[/e/after]=]) check(r.status == 200, [=[requests go on]=]) end",
        "{'lua':'f'}");
    journey_run_users(&f, 2);
    assert_checks_passed(&f, 2);
    assert_int_equal(server_requests(&sv), 2);
    int step = lc_program_endpoint(f.plan->program, "lua f");
    assert_int_equal(ep_stats(&f, "lua f")->count, 2);
    assert_int_equal(ep_stats(&f, "lua f")->errors[WORKER_ERR_SCRIPT], 1);
    const char *note = worker_stats_note(f.r->stats, (size_t)step, WORKER_ERR_SCRIPT);
    assert_non_null(note);
    assert_string_equal(note, "journeys[0].steps[0]: script: not enough memory: the run's "
                              "scripts are at their cap of 64 MiB per engine thread");
    assert_non_null(strstr(f.trace_text, "iteration failed"));
    assert_non_null(strstr(f.trace_text, "iteration done"));
    close_served(&f, &sv);
}

/* script_cpu_ms moves the deadline: 8 ms of work fails at the default 2, passes at 30. */
static void test_script_cpu_ms(void **state)
{
    static const char busy[] = "function f(u) local t = time.now_ms() "
                               "while time.now_ms() - t < 8 do end end";
    journey_run_t f = {0};
    journey_run_open_script(&f, 1, busy,
                            "'script_cpu_ms':30,'journeys':[{'name':'j','steps':[{'lua':'f'}]}]");
    journey_run_users(&f, 1);
    assert_int_equal(ep_stats(&f, "lua f")->errors[WORKER_ERR_SCRIPT], 0);
    journey_run_close(&f);
    journey_run_t g = {0};
    journey_run_open_script(&g, 1, busy, "'journeys':[{'name':'j','steps':[{'lua':'f'}]}]");
    journey_run_users(&g, 1);
    assert_int_equal(ep_stats(&g, "lua f")->errors[WORKER_ERR_SCRIPT], 1);
    assert_non_null(strstr(g.trace_text, "more than 2 ms of CPU"));
    journey_run_close(&g);
}

/* Whether every user of the run is parked in sleep(). */
static bool all_parked(const journey_run_t *f)
{
    for (const worker_user_t *u = f->r->users; u != NULL; u = u->next)
        if (u->js->lua == NULL || u->js->lua->wait != WORKER_LUA_SLEEP)
            return false;
    return true;
}

/* Starts users 1..n and runs the loop until every one is parked in sleep(); returns the last. */
static worker_user_t *park_users(journey_run_t *f, uint64_t n)
{
    journey_run_start_users(f, n);
    worker_user_t *u = f->r->users; /* the newest first */
    uint64_t t0 = uv_hrtime();
    while (!all_parked(f) && (uv_hrtime() - t0) / 1000000u < JOURNEY_RUN_BOUND_MS) {
        uv_run(&f->e->loop, UV_RUN_NOWAIT); /* ONCE would block on the long sleeps */
        uv_sleep(1);
    }
    assert_true(all_parked(f));
    return u;
}

/* Retires every user and runs the loop until they are all gone. */
static void retire_users(journey_run_t *f)
{
    for (worker_user_t *u = f->r->users, *next; u != NULL; u = next) {
        next = u->next;
        worker_user_retire(u);
    }
    journey_run_until_ended(f);
}

/* Whether u's jar would send cookie name to path (on the fixture's server). */
static bool jar_sends(const worker_user_t *u, const char *name, const char *path)
{
    lc_value_t v;
    return u->js->session != NULL &&
           lc_cookie_jar_get(&u->js->session->jar, name, strlen(name), "127.0.0.1", path, false,
                             (uint64_t)time(NULL) * 1000u, &v);
}

/* A response keeps its outcome, header block and body in one userdata at r[1] (r.headers is
 * made when read); the cookies a script's answer sets take the default path of the request's
 * target, held through the answer whether the request may follow redirects or not; u holds
 * nothing of its own (u.id and u.iteration are read through its metatable) and u.vars is made
 * when the script first reads it. The user parks in sleep so that its jar can be
 * read. */
static void test_lazy_parts_and_cookie_path(void **state)
{
    journey_run_t f = {0};
    server_thread_t sv;
    open_served(
        &f, &sv,
        "function f(u) "
        "check(rawget(u, [=[vars]=]) == nil and getmetatable(u) == [=[u]=], [=[no vars yet]=]) "
        "check(next(u) == nil and u.id == 1 and u.iteration == 0, [=[u holds nothing]=]) "
        "local r = http.get([=[/a/setc?q=1]=], {follow_redirects = 0}) "
        "check(rawget(r, [=[headers]=]) == nil, [=[headers lazy]=]) "
        "check(r:header([=[X-DUP]=]) == [=[1, 2]=] and r.header([=[nope]=]) == nil, [=[joined]=]) "
        "check(r.headers[ [=[x-dup]=] ] == [=[1, 2]=] and rawget(r, [=[headers]=]) ~= nil, [=[table]=]) "
        "check(r.headers[ [=[set-cookie]=] ] == [=[c1=v, c2=w]=], [=[both cookies]=]) "
        "check(r.body == [=[]=] and r.status == 200, [=[empty body]=]) "
        "check(rawget(r, [=[status]=]) == nil and r.latency_ms > 0, [=[outcome kept]=]) "
        "r[1] = 5 local ok, e = pcall(function() return r.status end) "
        "check(not ok and e:find([=[replaced]=]) ~= nil, [=[own slot]=]) "
        "u.vars.own = 5 "
        "check(rawget(u, [=[vars]=]) ~= nil and u.vars.own == 5, [=[vars made]=]) "
        "sleep(60000) end",
        "{'lua':'f'}");
    worker_user_t *u = park_users(&f, 1);
    fflush(f.trace_out);
    assert_checks_passed(&f, 10);
    assert_true(jar_sends(u, "c1", "/a/x") && jar_sends(u, "c2", "/a"));
    assert_false(jar_sends(u, "c1", "/b") || jar_sends(u, "c2", "/"));
    assert_null(u->js->lua->hold); /* parked: the pool has its buffer back */
    retire_users(&f);
    close_served(&f, &sv);
}

/* What a scripted user parked in sleep() costs, as the sandbox's allocator counts it (bytes,
 * and blocks for malloc's overhead on each), next to the idle-user estimate's constants
 * (lc_scenario_summary.c), which must not be below it nor far above. */
#define PARKED 2000
#define MALLOC_BLOCK_OVERHEAD 16.0 /* glibc: an 8-byte header, rounding to 16 (~8 on average) */

static void test_bytes_per_parked_user(void **state)
{
    journey_run_t f = {0};
    /* a slow CPU: no deadline errors */
    journey_run_open_script(
        &f, 1, "function park(u) sleep(60000) end",
        "'script_cpu_ms':50,'journeys':[{'name':'j','steps':[{'lua':'park'}]}]");
    f.plan->trace = NULL; /* many users, each for longer than one iteration */
    worker_lua_run_t *lr = f.r->lua;
    lc_lua_stats_t before, after;
    lc_lua_collect(lr->lua);
    lc_lua_stats(lr->lua, &before);
    park_users(&f, PARKED);
    assert_int_equal(ep_stats(&f, "lua park")->errors[WORKER_ERR_SCRIPT], 0);
    lc_lua_collect(lr->lua);
    lc_lua_stats(lr->lua, &after);
    double heap = (double)(after.mem_used - before.mem_used) / PARKED;
    double blocks = (double)(after.mem_blocks - before.mem_blocks) / PARKED;
    double measured = heap + blocks * MALLOC_BLOCK_OVERHEAD;
    size_t estimate = lc_scenario_lua_parked_heap_bytes();
    print_message("      a parked scripted user: %.0f B of Lua heap in %.1f blocks (~%.0f B with "
                  "malloc's overhead; the estimate says %zu), worker_lua_user_t %zu B\n", heap,
                  blocks, measured, estimate, sizeof(worker_lua_user_t));
    assert_int_equal(sizeof(worker_lua_user_t), lc_scenario_lua_user_struct_bytes());
    assert_true((double)estimate >= measured);
    assert_true((double)estimate <= measured * 1.25);
    retire_users(&f);
    journey_run_close(&f);
}

/* Users that made garbage and parked in sleep(): the engine's tick collects it once the
 * sandbox has been quiet for WORKER_LUA_QUIET_MS, not before, and only once. */
#define JUNK_USERS 20

static void test_quiet_sandbox_collected(void **state)
{
    (void)state;
    journey_run_t f = {0};
    journey_run_open_script(
        &f, 1,
        "local function junk() local t = {} "
        "for i = 1, 3000 do t[i] = ([=[x]=]):rep(40) .. i end return #t end "
        "function park(u) junk() sleep(60000) end",
        "'script_cpu_ms':50,'journeys':[{'name':'j','steps':[{'lua':'park'}]}]");
    f.plan->trace = NULL; /* many users, each for longer than one iteration */
    worker_lua_run_t *lr = f.r->lua;
    park_users(&f, JUNK_USERS);
    assert_int_equal(ep_stats(&f, "lua park")->errors[WORKER_ERR_SCRIPT], 0);
    assert_true(lr->ran_since_collect);
    lc_lua_stats_t parked, now;
    lc_lua_stats(lr->lua, &parked);
    uint64_t last = lr->last_run_ms;
    worker_lua_run_tick(lr, last + WORKER_LUA_QUIET_MS - 1); /* not quiet long enough */
    lc_lua_stats(lr->lua, &now);
    assert_int_equal(now.mem_used, parked.mem_used);
    worker_lua_run_tick(lr, last + WORKER_LUA_QUIET_MS);
    lc_lua_stats(lr->lua, &now);
    print_message("      parked with garbage: %zu B of Lua heap; after the quiet collection: %zu B\n",
                  parked.mem_used, now.mem_used);
    /* At least the last user's 3,000 strings (~70 B each) were garbage still. */
    assert_true(now.mem_used + 64 * 1024 < parked.mem_used);
    assert_false(lr->ran_since_collect);
    lc_lua_stats(lr->lua, &parked);
    worker_lua_run_tick(lr, last + 10 * WORKER_LUA_QUIET_MS); /* nothing ran since */
    lc_lua_stats(lr->lua, &now);
    assert_int_equal(now.mem_used, parked.mem_used);
    retire_users(&f);
    journey_run_close(&f);
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
        cmocka_unit_test(test_response_object),
        cmocka_unit_test(test_redirects),
        cmocka_unit_test(test_request_head_group_feed_fail),
        cmocka_unit_test(test_feed_exhausted),
        cmocka_unit_test(test_feed_waits_for_a_lease),
        cmocka_unit_test(test_random_per_user),
        cmocka_unit_test(test_memory_cap_fails_one_user),
        cmocka_unit_test(test_script_cpu_ms),
        cmocka_unit_test(test_lazy_parts_and_cookie_path),
        cmocka_unit_test(test_bytes_per_parked_user),
        cmocka_unit_test(test_quiet_sandbox_collected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
