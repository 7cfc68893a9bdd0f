/* test_lc_scenario_script.c — a scenario's "script" and "modules" (common/lc_scenario_script.c):
 * kept byte for byte, and every way to get them wrong refused with the field's name. */
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
#define JOURNEY "'journeys':[{'name':'j','steps':[{'lua':'f'}]}]"

/* A scenario with members (JSON with ' for "). */
static int parse(const char *members, lc_scenario_t *s, char *err, size_t errlen)
{
    char buf[DOC_MAX];
    int n = snprintf(buf, sizeof buf, "{'name':'s','target':'http://127.0.0.1:8080',"
                                      "'duration':5,%s}", members);
    assert_true(n > 0 && (size_t)n < sizeof buf);
    for (char *c = buf; *c != '\0'; c++)
        if (*c == '\'')
            *c = '"';
    return lc_scenario_parse(buf, strlen(buf), s, err, errlen);
}

static void expect_error(const char *members, const char *want)
{
    lc_scenario_t s;
    char err[512] = "";
    int rv = parse(members, &s, err, sizeof err);
    if (rv != LC_EINVAL || strstr(err, want) == NULL)
        fail_msg("rv=%d err=\"%s\", wanted \"%s\"", rv, err, want);
    assert_null(s.script);
}

static void test_script_and_modules_kept(void **state)
{
    (void)state;
    lc_scenario_t s;
    char err[512] = "";
    int rv = parse("'script':'local m = require(\\\"util\\\")\\nfunction f(u) m.go(u) end',"
                   "'modules':{'util':'return {go = function() end}','a.b-c_9':'return 1'},"
                   JOURNEY, &s, err, sizeof err);
    if (rv != 0)
        fail_msg("%s", err);
    const char *want = "local m = require(\"util\")\nfunction f(u) m.go(u) end";
    assert_int_equal(s.script_len, strlen(want));
    assert_memory_equal(s.script, want, s.script_len);
    assert_int_equal(s.n_modules, 2);
    assert_string_equal(s.modules[0].name, "util");
    assert_int_equal(s.modules[0].len, strlen("return {go = function() end}"));
    assert_string_equal(s.modules[1].name, "a.b-c_9");
    assert_string_equal(s.modules[1].src, "return 1");
    lc_scenario_free(&s);
    assert_null(s.script);
    /* A script without lua steps is fine (the master still loads it). */
    rv = parse("'script':'x = 1','journeys':[{'name':'j','steps':[{'path':'/'}]}]", &s, err,
               sizeof err);
    assert_int_equal(rv, 0);
    lc_scenario_free(&s);
}

static void test_script_refused(void **state)
{
    (void)state;
    expect_error("'script':3," JOURNEY, "script: expected Lua source text");
    expect_error("'script':''," JOURNEY, "script: expected Lua source text");
    expect_error("'script':'\\u001bLJ'," JOURNEY, "script: bytecode is not accepted");
    /* jansson refuses a NUL byte in any string before we see it (lc_scenario_script.c checks
     * anyway, for a parser that would not). */
    expect_error("'script':'x = 1\\u0000'," JOURNEY, "\\u0000 is not allowed");
    expect_error("'script':'x = 1','tasks':[{'path':'/'}]", "script: belongs to journeys");
    expect_error("'modules':{'m':'return 1'},'journeys':[{'name':'j','steps':[{'path':'/'}]}]",
                 "modules: needs a script");
    expect_error("'script':'x = 1','modules':['m']," JOURNEY, "modules: expected an object");
    expect_error("'script':'x = 1','modules':{'a b':'return 1'}," JOURNEY,
                 "modules.a b: a module's name is 1 to 64 letters");
    expect_error("'script':'x = 1','modules':{'m':''}," JOURNEY,
                 "modules.m: expected Lua source text");
    expect_error("'script':'x = 1','modules':{'m':'\\u001b'}," JOURNEY,
                 "modules.m: bytecode is not accepted");
    char members[DOC_MAX] = "'script':'x = 1','modules':{";
    for (int i = 0; i <= 64; i++)
        snprintf(members + strlen(members), sizeof members - strlen(members), "%s'm%d':'x'",
                 i ? "," : "", i);
    strcat(members, "}," JOURNEY);
    expect_error(members, "modules: at most 64 modules");
    /* The journeys are compiled first: a lua step without a script is their error. */
    expect_error(JOURNEY, "journeys[0].steps[0].lua: a lua step runs a function");
}

/* script_cpu_ms: 1..50, default 2, only with a script; seed: 0..2^53-1, default from the
 * name (the same name, the same seed). */
static void test_cpu_ms_and_seed(void **state)
{
    lc_scenario_t s, t;
    char err[512];
    assert_int_equal(parse("'script':'function f() end'," JOURNEY, &s, err, sizeof err), 0);
    assert_int_equal(s.script_cpu_ms, 2);
    assert_int_equal(parse("'script':'function f() end'," JOURNEY, &t, err, sizeof err), 0);
    assert_true(s.seed == t.seed && s.seed <= LC_SCENARIO_SEED_MAX);
    lc_scenario_free(&s);
    lc_scenario_free(&t);
    assert_int_equal(parse("'script':'function f() end','script_cpu_ms':50,'seed':9007199254740991,"
                           JOURNEY, &s, err, sizeof err), 0);
    assert_int_equal(s.script_cpu_ms, 50);
    assert_true(s.seed == LC_SCENARIO_SEED_MAX);
    lc_scenario_free(&s);
    expect_error("'script':'x = 1','script_cpu_ms':0," JOURNEY, "script_cpu_ms");
    expect_error("'script':'x = 1','script_cpu_ms':51," JOURNEY, "script_cpu_ms");
    expect_error("'script':'x = 1','script_cpu_ms':'2'," JOURNEY, "script_cpu_ms");
    expect_error("'script':'x = 1','script_cpu_ms':2.5," JOURNEY, "script_cpu_ms");
    expect_error("'script_cpu_ms':5,'journeys':[{'name':'j','steps':[{'path':'/'}]}]",
                 "script_cpu_ms: needs a script");
    expect_error("'script':'x = 1','seed':-1," JOURNEY, "seed");
    expect_error("'script':'x = 1','seed':9007199254740992," JOURNEY, "seed");
    expect_error("'script':'x = 1','seed':'7'," JOURNEY, "seed");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_script_and_modules_kept),
        cmocka_unit_test(test_script_refused),
        cmocka_unit_test(test_cpu_ms_and_seed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
