/* test_lc_journey.c — the journey compiler (common/journey/lc_journey*.c): ops and jumps,
 * requests, extracts, feeders, the dataflow check and the errors bad journeys get. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lc_err.h"
#include "lc_scenario.h"

#define DOC_MAX 8192

/* A scenario around journeys (JSON with ' for "). */
static char *doc(const char *journeys_and_more)
{
    static char buf[DOC_MAX];
    int n = snprintf(buf, sizeof buf,
                     "{'name':'j','target':'http://127.0.0.1:8080','duration':5,%s}",
                     journeys_and_more);
    assert_true(n > 0 && (size_t)n < sizeof buf);
    for (char *c = buf; *c != '\0'; c++)
        if (*c == '\'')
            *c = '"';
    return buf;
}

static int parse(const char *members, lc_scenario_t *s, char *err, size_t errlen)
{
    const char *text = doc(members);
    return lc_scenario_parse(text, strlen(text), s, err, errlen);
}

static void expect_error(const char *members, const char *fragment)
{
    lc_scenario_t s;
    char err[512] = "";
    int rv = parse(members, &s, err, sizeof err);
    if (rv != LC_EINVAL || strstr(err, fragment) == NULL)
        fail_msg("rv=%d err=\"%s\", wanted \"%s\"", rv, err, fragment);
}

static const lc_program_t *ok(const char *members, lc_scenario_t *s)
{
    char err[512] = "";
    int rv = parse(members, s, err, sizeof err);
    if (rv != 0)
        fail_msg("rv=%d err=%s", rv, err);
    assert_non_null(s->program);
    return s->program;
}

static void test_sections_and_series(void **state)
{
    (void)state;
    lc_scenario_t s;
    const lc_program_t *p = ok(
        "'journeys':[{'name':'buyer','weight':3,"
        "'on_start':[{'name':'login','method':'POST','path':'/login',"
        "'extract':{'token':{'json':'$.token'}}}],"
        "'steps':[{'group':'browse','steps':[{'path':'/items'}]},"
        "{'path':'/me','headers':{'Authorization':'Bearer ${token}'}}],"
        "'on_stop':[{'name':'logout','method':'POST','path':'/logout'}]},"
        "{'name':'viewer','steps':[{'path':'/'}]}]",
        &s);
    assert_int_equal(p->n_journeys, 2);
    assert_int_equal(p->total_weight, 4);
    /* login, GET /items, GET /me, logout, GET / */
    assert_int_equal(p->n_endpoints, 5);
    assert_string_equal(p->endpoints[1].name, "GET /items");
    assert_int_equal(lc_scenario_series_count(&s), 5 + 3); /* + 2 journeys + 1 group */
    const char *name, *method;
    lc_scenario_series_at(&s, 5, &name, &method);
    assert_string_equal(name, "iteration:buyer");
    assert_string_equal(method, LC_SERIES_ITERATION);
    assert_true(lc_series_is_timer(method));
    /* Timers in the order met: iteration:buyer, group:browse, iteration:viewer. */
    assert_int_equal(lc_scenario_series_find(&s, "group:browse", &method), 6);
    assert_string_equal(method, LC_SERIES_GROUP);
    /* Every section ends with END, in the order on_start, steps, on_stop. */
    const lc_journey_t *j = &p->journeys[0];
    assert_true(j->on_start < j->steps && j->steps < j->on_stop);
    assert_int_equal(p->ops[j->steps - 1].code, LC_OP_END);
    assert_int_equal(p->ops[j->on_stop - 1].code, LC_OP_END);
    /* Users divide by weight exactly: 3 buyers, then a viewer, in every 4 consecutive ids. */
    static const size_t want[] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    for (uint64_t id = 1; id <= 9; id++)
        assert_int_equal(lc_program_journey_of(p, id), want[id - 1]);
    lc_scenario_free(&s);
}

static void test_control_flow_jumps(void **state)
{
    (void)state;
    lc_scenario_t s;
    const lc_program_t *p = ok(
        "'journeys':[{'name':'a','steps':[{'set':{'n':3}},"
        "{'if':'${n} > 1','then':[{'path':'/big'}],'else':[{'path':'/small'}]},"
        "{'repeat':2,'steps':[{'path':'/r'}]}]}]",
        &s);
    const lc_op_t *ops = p->ops + p->journeys[0].steps;
    assert_int_equal(ops[0].code, LC_OP_SET);
    assert_int_equal(ops[0].type, LC_V_NUMBER);
    assert_int_equal(ops[1].code, LC_OP_IF);
    assert_int_equal(ops[2].code, LC_OP_REQ);  /* then */
    assert_int_equal(ops[3].code, LC_OP_JMP);
    assert_int_equal(ops[4].code, LC_OP_REQ);  /* else */
    uint32_t base = p->journeys[0].steps;
    assert_int_equal(ops[1].target, base + 4); /* false: to else */
    assert_int_equal(ops[3].target, base + 5); /* then: past else */
    assert_int_equal(ops[5].code, LC_OP_REPEAT);
    assert_int_equal(ops[5].b, 2);
    assert_int_equal(ops[7].code, LC_OP_NEXT);
    assert_int_equal(ops[7].target, base + 5);
    assert_int_equal(ops[5].target, base + 8);
    lc_scenario_free(&s);
}

static void test_bodies_and_extracts(void **state)
{
    (void)state;
    lc_scenario_t s;
    const lc_program_t *p = ok(
        "'feeders':{'acc':{'rows':[{'user':'alice','pw':'x'},{'user':'bob','pw':'y'}]}},"
        "'journeys':[{'name':'a','steps':[{'name':'login','method':'POST','path':'/login',"
        "'json':{'user':'${acc.user}','n':1,'tags':['a','${acc.pw}']},"
        "'extract':{'token':{'json':'$.token'},'sid':{'cookie':'session'},"
        "'loc':{'header':'Location','required':false},'code':{'status':true},"
        "'n':{'regex':'id=([0-9]+)','default':'0'}}},"
        "{'name':'form','method':'POST','path':'/f','form':{'a b':'${token}','c':2},"
        "'query':{'q':'${code}'}}]}]",
        &s);
    assert_int_equal(p->n_feeders, 1);
    assert_int_equal(p->feeders[0].table.n_rows, 2);
    const lc_jreq_t *login = &p->reqs[0];
    assert_int_equal(login->body_kind, LC_BODY_JSON);
    assert_true(login->n_parts >= 2);
    assert_int_equal(login->parts[0].typed_slot, (int32_t)p->feeders[0].first_slot);
    assert_int_equal(login->n_extracts, 5);
    assert_true(login->needs_body);
    assert_true(login->cookies);
    assert_string_equal(login->extracts[2].name, "location"); /* header names lowercase */
    assert_false(login->extracts[2].required);
    assert_true(login->extracts[4].has_default);
    const lc_jreq_t *form = &p->reqs[1];
    assert_int_equal(form->body_kind, LC_BODY_FORM);
    assert_string_equal(form->parts[0].literal, "a%20b=");
    assert_int_equal(form->n_query, 1);
    assert_string_equal(form->query[0].literal, "?q=");
    lc_scenario_free(&s);
}

static void test_tasks_become_journeys(void **state)
{
    (void)state;
    lc_scenario_t s;
    const lc_program_t *p = ok("'tasks':[{'name':'t','weight':2,'path':'/x'}],"
                               "'journeys':[{'name':'j','steps':[{'path':'/y'}]}]",
                               &s);
    assert_int_equal(p->n_journeys, 2);
    assert_string_equal(p->journeys[1].name, "task t");
    assert_int_equal(p->journeys[1].weight, 2);
    assert_int_equal(p->total_weight, 3);
    lc_scenario_free(&s);
}

/* The dataflow check: a variable used where it may not be set names both places. */
static void test_dataflow(void **state)
{
    (void)state;
    expect_error("'journeys':[{'name':'a','steps':[{'path':'/${nope}'}]}]",
                 "journeys[0].steps[0]: uses ${nope}, which no step sets");
    expect_error("'journeys':[{'name':'a','steps':[{'if':'${rand_ok|len} > 0','then':[]}]}]",
                 "journeys[0].steps[0].then");
    /* Set in one branch only. */
    expect_error("'journeys':[{'name':'a','steps':["
                 "{'random':[{'weight':1,'steps':[{'set':{'t':'x'}}]},"
                 "{'weight':1,'steps':[{'think_ms':1}]}]},"
                 "{'path':'/${t}'}]}]",
                 "journeys[0].steps[1]: uses ${t}, which may be unset here: it is set at "
                 "journeys[0].steps[0].random[0].steps[0].set");
    /* A loop that may run zero times does not set what its body sets. */
    expect_error("'journeys':[{'name':'a','steps':[{'set':{'n':'0'}},"
                 "{'repeat':'${n}','steps':[{'set':{'x':'1'}}]},{'path':'/${x}'}]}]",
                 "uses ${x}, which may be unset here");
    /* An extract a failure may skip (on_error continue) does not count as set. */
    expect_error("'journeys':[{'name':'a','steps':[{'path':'/l','on_error':'continue',"
                 "'extract':{'tok':{'json':'$.t'}}},{'path':'/${tok}'}]}]",
                 "uses ${tok}, which may be unset here");
    /* But on_start's values reach the steps and on_stop, a default always sets, a literal
     * repeat runs its body, foreach sets its element inside. */
    lc_scenario_t s;
    ok("'journeys':[{'name':'a','on_start':[{'path':'/l','extract':{'tok':{'json':'$.t'}}}],"
       "'steps':[{'path':'/x','on_error':'continue','extract':{'d':{'json':'$.d',"
       "'default':'z'}}},{'repeat':2,'steps':[{'set':{'r':'1'}}]},"
       "{'path':'/${tok}/${d}/${r}','extract':{'ids':{'json':'$.ids','pick':'all'}}},"
       "{'foreach':'${ids}','as':'id','steps':[{'path':'/i/${id}'}]}],"
       "'on_stop':[{'path':'/out/${tok}'}]}]",
       &s);
    lc_scenario_free(&s);
}

/* A feeder's secret columns: by name (secret, password, passwd, token, key; any case) and by
 * its "secret" list, which must name its columns. */
static void test_feeder_secrets(void **state)
{
    (void)state;
    lc_scenario_t s;
    const lc_program_t *p = ok("'feeders':{'acc':{'rows':[{'user':'u','PassWord':'p',"
                               "'api_Key':'k','pin':'1','note':'n'}],'secret':['pin']}},"
                               "'journeys':[{'name':'a','steps':[{'path':'/${acc.user}'}]}]",
                               &s);
    const lc_feeder_t *f = &p->feeders[0];
    const bool want[] = {false, true, true, true, false};
    for (size_t c = 0; c < 5; c++)
        if (f->secret[c] != want[c])
            fail_msg("column %s: secret %d", f->table.cols[c], f->secret[c]);
    lc_scenario_free(&s);
    assert_true(lc_feeder_secret_name("session_TOKEN") && lc_feeder_secret_name("passwd"));
    assert_false(lc_feeder_secret_name("user"));
    expect_error("'feeders':{'acc':{'rows':[{'user':'u'}],'secret':['nope']}},"
                 "'journeys':[{'name':'a','steps':[{'path':'/${acc.user}'}]}]",
                 "feeders.acc.secret[0]: expected the name of one of the feeder's columns");
    expect_error("'feeders':{'acc':{'rows':[{'user':'u'}],'secret':'user'}},"
                 "'journeys':[{'name':'a','steps':[{'path':'/${acc.user}'}]}]",
                 "feeders.acc.secret: expected an array of column names");
}

static void test_bad_journeys(void **state)
{
    (void)state;
    expect_error("'journeys':[]", "journeys: expected a non-empty array");
    expect_error("'journeys':[{'steps':[{'path':'/'}]}]", "journeys[0].name: required");
    expect_error("'journeys':[{'name':'a','steps':[{'path':'/','think_ms':1}]}]",
                 "has both path and think_ms");
    expect_error("'journeys':[{'name':'a','steps':[{'while':'1 < 2','steps':[{'path':'/'}]}]}]",
                 "journeys[0].steps[0].max: required");
    expect_error("'journeys':[{'name':'a','steps':[{'repeat':10001,'steps':[{'path':'/'}]}]}]",
                 "journeys[0].steps[0].repeat: must be between 0 and 10000");
    expect_error("'journeys':[{'name':'a','steps':[{'path':'/','json':{},'body':'x'}]}]",
                 "at most one of body, json, form");
    expect_error("'journeys':[{'name':'a','steps':[{'path':'/','extract':{'x':{'json':'$.[',"
                 "'pick':'first'}}}]}]",
                 "journeys[0].steps[0].extract.x.json");
    expect_error("'journeys':[{'name':'a','steps':[{'path':'/','extract':{'x':{'regex':'('}}}]}]",
                 "journeys[0].steps[0].extract.x.regex");
    expect_error("'journeys':[{'name':'a','steps':[{'lua':'f'}]}]",
                 "journeys[0].steps[0].lua: a lua step runs a function of the scenario's "
                 "\"script\"");
    expect_error("'journeys':[{'name':'a','steps':[{'path':'/','name':'iteration:x'}]}]",
                 "name the journeys' and groups' series");
    expect_error("'journeys':[{'name':'a','steps':[{'feed':'nope'}]}]",
                 "journeys[0].steps[0].feed: expected the name of a feeder");
    expect_error("'feeders':{'f':{'csv':'a,b\\n1\\n'}},'journeys':[{'name':'a','steps':[{'path':'/'}]}]",
                 "feeders.f.csv: line 2");
    expect_error("'journeys':[{'name':'a','steps':[{'path':'/${acc.user}'}]}]", "acc.user");
    expect_error("'journeys':[{'name':'a','steps':[{'path':'/','headers':{'Host':'x'}}]}]",
                 "Host: is set from target");
    expect_error("'journeys':[{'name':'a','steps':[{'path':'/'}]},{'name':'a','steps':[{'path':'/'}]}]",
                 "journeys[1].name: another journey is named");
    expect_error("'defaults':{'follow_redirects':1},'tasks':[{'path':'/'}]",
                 "defaults: belongs to journeys");
    expect_error("'defaults':{'cookies':{'reset':'run'}},'journeys':[{'name':'a','steps':[{'path':'/'}]}]",
                 "defaults.cookies.reset: expected \"iteration\"");
    /* Over a limit (LC_ETOOBIG inside): the same kind of message, naming the place. */
    char big[4096], members[4600];
    size_t at = 0;
    for (int i = 0; i < 300; i++)
        at += (size_t)snprintf(big + at, sizeof big - at, "/${user_id}");
    snprintf(members, sizeof members, "'journeys':[{'name':'a','steps':[{'path':'%s'}]}]", big);
    expect_error(members, "journeys[0].steps[0].path: more than 256 parts");
    memset(big, '1', 1100);
    big[1100] = '\0';
    snprintf(members, sizeof members,
             "'journeys':[{'name':'a','steps':[{'if':'%s > 0','then':[{'path':'/'}]}]}]", big);
    expect_error(members, "journeys[0].steps[0].if: condition longer than 1024 bytes");
    lc_scenario_t s;
    const lc_program_t *p = ok("'defaults':{'cookies':{'reset':'iteration'}},'journeys':[{'name':'a',"
                               "'steps':[{'path':'/'}]}]", &s);
    assert_true(p->cookies_reset_iteration);
    assert_true(p->reqs[0].cookies);
    lc_scenario_free(&s);
    /* Nesting past the user's frames. */
    char deep[4096] = "'journeys':[{'name':'a','steps':[";
    for (int i = 0; i < 9; i++)
        strcat(deep, "{'repeat':1,'steps':[");
    strcat(deep, "{'path':'/'}");
    for (int i = 0; i < 9; i++)
        strcat(deep, "]}");
    strcat(deep, "]}]");
    expect_error(deep, "more than 8 loops and groups nested");
}

static void test_journey_thresholds(void **state)
{
    (void)state;
    lc_scenario_t s;
    ok("'journeys':[{'name':'buyer','steps':[{'group':'checkout','steps':[{'name':'pay',"
       "'path':'/pay'}]}]}],'thresholds':{'iteration_duration':['p(95)<2000'],"
       "'iteration_duration{journey:buyer}':['avg<1000'],"
       "'group_duration{group:checkout}':['max<500'],'http_req_duration{endpoint:pay}':["
       "'p(99)<300']}",
       &s);
    assert_int_equal(s.n_thresholds, 4);
    const lc_threshold_t *t = s.thresholds;
    assert_int_equal(t[0].metric, LC_METRIC_ITER_DURATION);
    assert_null(t[0].endpoint); /* every journey's iterations */
    assert_string_equal(lc_metric_series_method(t[0].metric), LC_SERIES_ITERATION);
    assert_string_equal(t[1].endpoint, "iteration:buyer");
    assert_int_equal(t[2].metric, LC_METRIC_GROUP_DURATION);
    assert_string_equal(t[2].endpoint, "group:checkout");
    assert_string_equal(t[3].endpoint, "pay");
    char label[128];
    lc_threshold_label(&t[2], label, sizeof label);
    assert_string_equal(label, "group_duration{group:checkout} max<500");
    lc_scenario_free(&s);
    expect_error("'journeys':[{'name':'a','steps':[{'path':'/'}]}],"
                 "'thresholds':{'group_duration{group:nope}':['max<1']}",
                 "no group named \"nope\"");
    expect_error("'journeys':[{'name':'a','steps':[{'path':'/'}]}],"
                 "'thresholds':{'iteration_duration{endpoint:a}':['max<1']}",
                 "expected {journey:NAME}");
    expect_error("'journeys':[{'name':'a','steps':[{'path':'/'}]}],"
                 "'thresholds':{'iteration_duration':['rate<1']}", "iteration_duration");
    /* checks: any name (scripts name them as they run), the share passed only. */
    ok("'journeys':[{'name':'a','steps':[{'path':'/'}]}],"
       "'thresholds':{'checks':['rate>0.9'],'checks{check:logged in}':['rate==1']}", &s);
    assert_int_equal(s.thresholds[0].metric, LC_METRIC_CHECKS);
    assert_null(s.thresholds[0].endpoint);
    assert_string_equal(s.thresholds[1].endpoint, "check:logged in");
    lc_threshold_label(&s.thresholds[1], label, sizeof label);
    assert_string_equal(label, "checks{check:logged in} rate==1");
    lc_scenario_free(&s);
    expect_error("'journeys':[{'name':'a','steps':[{'path':'/'}]}],"
                 "'thresholds':{'checks':['count>1']}", "rate>0.99");
    expect_error("'journeys':[{'name':'a','steps':[{'path':'/'}]}],"
                 "'thresholds':{'checks{check:}':['rate>0']}", "1 to 64 bytes");
    expect_error("'journeys':[{'name':'a','steps':[{'path':'/'}]}],"
                 "'thresholds':{'checks{endpoint:a}':['rate>0']}", "expected {check:NAME}");
}


/* Lua steps: their op, function, endpoints (their own, and those their requests may name),
 * options and the journey's defaults. */
static void test_lua_steps(void **state)
{
    (void)state;
    lc_scenario_t s;
    const lc_program_t *p = ok(
        "'script':'function a(u) end function b(u) end',"
        "'defaults':{'timeout_ms':700,'cookies':false},"
        "'journeys':[{'name':'j','on_error':'stop_user','steps':["
        "{'name':'login','method':'POST','path':'/login'},"
        "{'lua':'a'},"
        "{'lua':'b','name':'bee','endpoints':['login','me'],'timeout_ms':50,'cookies':true,"
        "'on_error':'continue'}]}]",
        &s);
    const lc_op_t *ops = p->ops + p->journeys[0].steps;
    assert_int_equal(ops[0].code, LC_OP_REQ);
    assert_int_equal(ops[1].code, LC_OP_LUA);
    assert_int_equal(ops[1].a, 0);
    assert_int_equal(ops[2].code, LC_OP_LUA);
    assert_int_equal(ops[2].a, 1);
    assert_int_equal(p->n_luas, 2);
    const lc_jlua_t *a = &p->luas[0], *b = &p->luas[1];
    assert_string_equal(a->fn, "a");
    assert_string_equal(a->path_json, "journeys[0].steps[1]");
    assert_string_equal(p->endpoints[a->endpoint].name, "lua a");
    assert_string_equal(p->endpoints[a->endpoint].method, LC_LUA_METHOD);
    assert_int_equal(a->timeout_ms, 700);
    assert_false(a->cookies);
    assert_int_equal(a->on_error, LC_ON_ERROR_STOP_USER);
    assert_string_equal(p->endpoints[b->endpoint].name, "bee");
    assert_int_equal(b->timeout_ms, 50);
    assert_true(b->cookies);
    assert_true(p->uses_cookies);
    assert_int_equal(b->on_error, LC_ON_ERROR_CONTINUE);
    /* login keeps its request step's method; me is new, a LUA series */
    assert_string_equal(p->endpoints[lc_program_endpoint(p, "login")].method, "POST");
    assert_string_equal(p->endpoints[lc_program_endpoint(p, "me")].method, LC_LUA_METHOD);
    assert_int_equal(p->n_endpoints, 4); /* login, lua a, bee, me */
    assert_int_equal(lc_scenario_series_count(&s), 4 + 1);
    assert_non_null(s.script);
    assert_int_equal(s.script_len, strlen("function a(u) end function b(u) end"));
    lc_scenario_free(&s);
}

/* What a script names as u.vars.x counts as set after a lua step. */
static void test_lua_dataflow(void **state)
{
    (void)state;
    lc_scenario_t s;
    ok("'script':'function login(u) u.vars.tok = 1 u.vars[\\\"id\\\"] = 2 "
       "local vars = u.vars vars . other = 3 end',"
       "'journeys':[{'name':'j','on_start':[{'lua':'login'}],"
       "'steps':[{'path':'/${tok}/${id}/${other}'}]}]",
       &s);
    lc_scenario_free(&s);
    /* A module's mentions count too. */
    ok("'script':'function f(u) require(\\\"m\\\").set(u) end',"
       "'modules':{'m':'return {set = function(u) u.vars.m = 1 end}'},"
       "'journeys':[{'name':'j','steps':[{'lua':'f'},{'path':'/${m}'}]}]",
       &s);
    /* The variables slots are shared: the script's u.vars.m is the template's ${m}. */
    assert_int_equal(lc_program_slot(s.program, "m", 1), 0);
    assert_int_equal(lc_program_slot(s.program, "nope", 4), -1);
    lc_scenario_free(&s);
    expect_error("'script':'function f(u) u.vars.tok = 1 end',"
                 "'journeys':[{'name':'j','steps':[{'lua':'f'},{'path':'/${tak}'}]}]",
                 "journeys[0].steps[1]: uses ${tak}, which no step sets (by set, extract, "
                 "foreach or a lua step's u.vars.tak)");
    /* Before the lua step, or on one path only: not set. */
    expect_error("'script':'function f(u) u.vars.tok = 1 end',"
                 "'journeys':[{'name':'j','steps':[{'path':'/${tok}'},{'lua':'f'}]}]",
                 "journeys[0].steps[0]: uses ${tok}, which may be unset here: it is set at "
                 "journeys[0].steps[1]");
    expect_error("'script':'function f(u) u.vars.tok = 1 end',"
                 "'journeys':[{'name':'j','steps':[{'random':[{'steps':[{'lua':'f'}]},"
                 "{'steps':[{'think_ms':1}]}]},{'path':'/${tok}'}]}]",
                 "it is set at journeys[0].steps[0].random[0].steps[0]");
    /* A step that goes on after a script error may leave them unset. */
    expect_error("'script':'function f(u) u.vars.tok = 1 end',"
                 "'journeys':[{'name':'j','steps':[{'lua':'f','on_error':'continue'},"
                 "{'path':'/${tok}'}]}]",
                 "uses ${tok}, which may be unset here");
}

static void test_bad_lua_steps(void **state)
{
    (void)state;
    const char *j = "'journeys':[{'name':'j','steps':[%s]}]";
    char members[1024];
    struct {
        const char *step, *want;
    } cases[] = {
        {"{'lua':'f'}", NULL}, /* no script: below */
        {"{'lua':'f-g'}", "journeys[0].steps[0].lua: expected the name of a global function"},
        {"{'lua':3}", "journeys[0].steps[0].lua: expected the name of a global function"},
        {"{'lua':'f','path':'/'}", "has both path and lua"},
        {"{'lua':'f','max':1}", "journeys[0].steps[0].max: unknown field"},
        {"{'lua':'f','endpoints':'me'}", "journeys[0].steps[0].endpoints: expected an array"},
        {"{'lua':'f','endpoints':['']}", "journeys[0].steps[0].endpoints[0]: expected a name"},
        {"{'lua':'f','endpoints':['group:x']}", "journeys[0].steps[0].endpoints[0]: "
                                                "\"iteration:\" and \"group:\" name"},
        {"{'lua':'f','name':'iteration:x'}", "journeys[0].steps[0].name: \"iteration:\""},
        {"{'lua':'f','timeout_ms':0}", "journeys[0].steps[0].timeout_ms"},
        {"{'lua':'f','on_error':'retry'}", "journeys[0].steps[0].on_error: expected one of"},
    };
    snprintf(members, sizeof members, j, cases[0].step);
    expect_error(members, "journeys[0].steps[0].lua: a lua step runs a function of the "
                          "scenario's \"script\" (Lua source text), which it lacks");
    for (size_t i = 1; i < sizeof cases / sizeof cases[0]; i++) {
        int n = snprintf(members, sizeof members, "'script':'function f(u) end',");
        snprintf(members + n, sizeof members - (size_t)n, j, cases[i].step);
        expect_error(members, cases[i].want);
    }
    char many[2048] = "{'lua':'f','endpoints':[";
    for (int i = 0; i <= 64; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "%s'e%d'", i ? "," : "", i);
    strcat(many, "]}");
    int n = snprintf(members, sizeof members, "'script':'function f(u) end',");
    snprintf(members + n, sizeof members - (size_t)n, j, many);
    expect_error(members, "journeys[0].steps[0].endpoints: expected an array of at most 64");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sections_and_series), cmocka_unit_test(test_control_flow_jumps),
        cmocka_unit_test(test_bodies_and_extracts), cmocka_unit_test(test_tasks_become_journeys),
        cmocka_unit_test(test_dataflow),            cmocka_unit_test(test_feeder_secrets),
        cmocka_unit_test(test_bad_journeys),
        cmocka_unit_test(test_journey_thresholds), cmocka_unit_test(test_lua_steps),
        cmocka_unit_test(test_lua_dataflow),       cmocka_unit_test(test_bad_lua_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
