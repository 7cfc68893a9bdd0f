/* test_lc_lua_check.c — the master's check of a run's script (common/script/lc_lua_check.c):
 * syntax and load errors with their line, http disabled, the limits, and the functions the
 * journeys' lua steps name. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lc_clock.h"
#include "lc_err.h"
#include "lc_lua_check.h"

static int check(const char *script, const lc_lua_fn_ref_t *fns, size_t n, char *err,
                 size_t errlen)
{
    return lc_lua_check(script, strlen(script), NULL, 0, fns, n, err, errlen);
}

static void assert_check(const char *script, int want_rv, const char *want_err)
{
    char err[512] = "";
    int rv = check(script, NULL, 0, err, sizeof err);
    if (rv != want_rv || (want_err != NULL && strcmp(err, want_err) != 0))
        fail_msg("check {%s}: rv %d (want %d), \"%s\" (want \"%s\")", script, rv, want_rv, err,
                 want_err != NULL ? want_err : "");
}

static void test_syntax_errors_have_lines(void **state)
{
    assert_check("local a = 1\nlocal x\nx y\n", LC_EINVAL, "script:3: '=' expected near 'y'");
    assert_check("function f()\n  if true then\nend\n", LC_EINVAL,
                 "script:4: 'end' expected (to close 'function' at line 1) near '<eof>'");
    assert_check("local s = 'unfinished\n", LC_EINVAL, "script:1: unfinished string near ''unfinished'");
    assert_check("x = = 1", LC_EINVAL, "script:1: unexpected symbol near '='");
    assert_check("\033LJ\002", LC_EINVAL, "script: bytecode is not accepted, only source text");
    assert_check("", 0, NULL);
    assert_check("#!/usr/bin/env luajit\nx = 1", 0, NULL); /* a shebang line is skipped */
}

static void test_load_errors_have_lines(void **state)
{
    assert_check("local t = nil\nprint(t.x)", LC_EINVAL,
                 "script:2: attempt to index local 't' (a nil value)");
    assert_check("\n\nerror('no config')", LC_EINVAL, "script:3: no config");
    assert_check("undefined_function()", LC_EINVAL,
                 "script:1: attempt to call global 'undefined_function' (a nil value)");
    assert_check("os.execute('id')", LC_EINVAL, "script:1: attempt to index global 'os' (a nil value)");
    assert_check("local x = require('json')", LC_EINVAL,
                 "script:1: require: no module named 'json' (the scenario has no modules)");
}

/* The top level may name http's functions; calling one there fails with a clear reason. */
static void test_http_disabled(void **state)
{
    assert_check("local get = http.get\nfunction browse() return get('/') end", 0, NULL);
    assert_check("local r = http.get('/')", LC_EINVAL,
                 "script:1: http is not available while the master checks the script");
    assert_check("http.post('/login', '{}')", LC_EINVAL,
                 "script:1: http is not available while the master checks the script");
}

static void test_limits_at_the_top_level(void **state)
{
    uint64_t t0 = lc_mono_ns();
    assert_check("local i = 0\nwhile true do i = i + 1 end", LC_ETOOBIG,
                 "script: the script's top level ran more than 50 ms of CPU (at script:2)");
    assert_true((lc_mono_ns() - t0) / 1000000u < 250);
    assert_check("local s = ('a'):rep(40):find(('a?'):rep(40) .. ('a'):rep(40))", LC_ETOOBIG,
                 "script: the script's top level ran more than 50 ms of CPU (at script:1)");
    assert_check("big = string.rep('x', 2^30)", LC_ENOMEM,
                 "script: not enough memory: the run's scripts are at their cap of 64 MiB per "
                 "engine thread");
    assert_check("local function f() return (('x'):gsub('x', f)) end f()", LC_ETOOBIG,
                 "script: more than 1024 KiB of C stack: a recursion through string.gsub, "
                 "table.sort, tostring or print callbacks (at script:1)");
}

static void test_functions_named_by_steps(void **state)
{
    static const char script[] = "function login() end\n"
                                 "function browse() end\n"
                                 "local function checkout() end\n"
                                 "pay = 5\n";
    lc_lua_fn_ref_t ok[] = {{"journeys[0].steps[0].lua", "login"},
                            {"journeys[0].steps[1].lua", "browse"}};
    char err[512];
    assert_int_equal(check(script, ok, 2, err, sizeof err), 0);
    lc_lua_fn_ref_t local[] = {{"journeys[0].steps[0].lua", "login"},
                               {"journeys[0].steps[2].lua", "checkout"}};
    assert_int_equal(check(script, local, 2, err, sizeof err), LC_EINVAL);
    assert_string_equal(err, "script: journeys[0].steps[2].lua: no function named checkout (the "
                             "script's global functions: browse, login)");
    lc_lua_fn_ref_t number[] = {{"journeys[1].on_start[0].lua", "pay"}};
    assert_int_equal(check(script, number, 1, err, sizeof err), LC_EINVAL);
    assert_string_equal(err, "script: journeys[1].on_start[0].lua: pay is a number, not a function");
    lc_lua_fn_ref_t nowhere[] = {{NULL, "ship"}};
    assert_int_equal(check("x = 1", nowhere, 1, err, sizeof err), LC_EINVAL);
    assert_string_equal(err, "script: no function named ship (the script defines no global function)");
    lc_lua_fn_ref_t unnamed[] = {{"journeys[0].steps[0].lua", ""}};
    assert_int_equal(check(script, unnamed, 1, err, sizeof err), LC_EINVAL);
    assert_string_equal(err, "script: journeys[0].steps[0].lua: no function name");
    /* The sandbox's own functions are globals too: a step naming one runs it, as the worker
     * would; it is not listed among the script's. */
    lc_lua_fn_ref_t builtin[] = {{NULL, "print"}};
    assert_int_equal(check(script, builtin, 1, err, sizeof err), 0);
}

static void test_modules(void **state)
{
    lc_lua_module_t mods[] = {
        {"sign", "local M = {}\nfunction M.sig(s) return s:upper() end\nreturn M", 0},
        {"broken", "local M = {}\nM.x = = 1\nreturn M", 0},
    };
    for (size_t i = 0; i < 2; i++)
        mods[i].len = strlen(mods[i].src);
    static const char script[] = "local sign = require('sign')\nfunction go() return sign.sig('x') end";
    lc_lua_fn_ref_t fns[] = {{"journeys[0].steps[0].lua", "go"}};
    char err[512];
    assert_int_equal(lc_lua_check(script, strlen(script), mods, 1, fns, 1, err, sizeof err), 0);
    /* A module that does not compile fails the check even if nothing requires it yet. */
    assert_int_equal(lc_lua_check(script, strlen(script), mods, 2, fns, 1, err, sizeof err),
                     LC_EINVAL);
    assert_string_equal(err, "script: broken:2: unexpected symbol near '='");
    lc_lua_module_t loader[] = {{"boom", "local t = nil\nreturn t.x", 0}};
    loader[0].len = strlen(loader[0].src);
    static const char requires_boom[] = "local b = require('boom')";
    assert_int_equal(lc_lua_check(requires_boom, strlen(requires_boom), loader, 1, NULL, 0, err,
                                  sizeof err), LC_EINVAL);
    assert_string_equal(err, "script: boom:2: attempt to index local 't' (a nil value)");
}


/* A parsed scenario: its script, its modules and the functions its lua steps name. */
static int check_scenario(const char *script, const char *modules, char *err, size_t errlen)
{
    char doc[2048];
    snprintf(doc, sizeof doc, "{\"name\":\"s\",\"target\":\"http://127.0.0.1:1\",\"duration\":5,"
             "\"script\":\"%s\",%s\"journeys\":[{\"name\":\"j\",\"steps\":[{\"lua\":\"a\"},"
             "{\"path\":\"/\"},{\"lua\":\"b\"}]}]}", script, modules);
    lc_scenario_t sc;
    char perr[512];
    if (lc_scenario_parse(doc, strlen(doc), &sc, perr, sizeof perr) != 0)
        fail_msg("%s", perr);
    int rv = lc_lua_check_scenario(&sc, err, errlen);
    lc_scenario_free(&sc);
    return rv;
}

static void test_scenario_check(void **state)
{
    char err[512] = "";
    assert_int_equal(check_scenario("function a(u) end function b(u) end", "", err, sizeof err), 0);
    assert_int_equal(check_scenario("function a(u) end", "", err, sizeof err), LC_EINVAL);
    assert_string_equal(err, "script: journeys[0].steps[2].lua: no function named b (the "
                             "script's global functions: a)");
    assert_int_equal(check_scenario("a, b = require('m').a, require('m').b",
                                    "\"modules\":{\"m\":\"return {a = print, b = function() end}\"},",
                                    err, sizeof err), 0);
    assert_int_equal(check_scenario("require('m')", "\"modules\":{\"m\":\"x = = 1\"},", err,
                                    sizeof err), LC_EINVAL);
    assert_string_equal(err, "script: m:1: unexpected symbol near '='");
    /* No script: nothing to check. */
    lc_scenario_t sc;
    const char *plain = "{\"name\":\"s\",\"target\":\"http://127.0.0.1:1\",\"duration\":5,"
                        "\"tasks\":[{\"path\":\"/\"}]}";
    assert_int_equal(lc_scenario_parse(plain, strlen(plain), &sc, err, sizeof err), 0);
    assert_int_equal(lc_lua_check_scenario(&sc, err, sizeof err), 0);
    lc_scenario_free(&sc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_syntax_errors_have_lines),
        cmocka_unit_test(test_load_errors_have_lines),
        cmocka_unit_test(test_http_disabled),
        cmocka_unit_test(test_limits_at_the_top_level),
        cmocka_unit_test(test_functions_named_by_steps),
        cmocka_unit_test(test_modules),
        cmocka_unit_test(test_scenario_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
