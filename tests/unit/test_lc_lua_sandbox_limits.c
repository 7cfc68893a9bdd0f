/* test_lc_lua_sandbox_limits.c — the sandbox's limits (common/script/lc_lua_sandbox.c), tried
 * as an attacker would: the CPU deadline, the C stack bound and the memory cap hold, and leave
 * the state usable. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <lauxlib.h>

#include "lc_clock.h"
#include "lc_err.h"
#include "lc_lua_sandbox.h"
#include "lua_sandbox_fixture.h"

/* ---- the CPU deadline ------------------------------------------------------------------ */

/* Every limit must stop the run well within this (CPU time). Under ASan the work before a
 * check comes (a 16 MB string:rep is one C call) costs ~3 times as much: beside another test
 * it once took 210 ms of 200. */
#if defined(__SANITIZE_ADDRESS__)
#define STOP_BOUND_MS 600
#else
#define STOP_BOUND_MS 200
#endif

/* This thread's CPU time: a bound in wall-clock time would fail on a loaded machine, where the
 * deadline (monotonic) only stops the script sooner in CPU terms. */
static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Under the default 2 ms deadline, or 50 ms when another limit is to stop it. */
static void assert_stops_within(const char *body, uint32_t deadline_us, const char *want_in_error)
{
    uint64_t t0 = cpu_ns();
    assert_probe_within(body, deadline_us, LC_ETOOBIG, want_in_error);
    uint64_t ms = (cpu_ns() - t0) / 1000000u;
    if (ms >= STOP_BOUND_MS)
        fail_msg("probe {%s} took %llu ms to stop", body, (unsigned long long)ms);
}

static void assert_stops(const char *body, const char *want_in_error)
{
    assert_stops_within(body, 0, want_in_error);
}

static void test_deadline_stops_loops(void **state)
{
    assert_stops("while true do end",
                 "script: the step ran more than 2 ms of CPU without yielding (at script:2)");
    /* A caught deadline is raised again: pcall, xpcall and their handlers cannot keep it. */
    assert_stops("while true do pcall(function() while true do end end) end", "more than 2 ms");
    assert_stops("while true do\n"
                 "  xpcall(function() while true do end end, function() while true do end end)\n"
                 "end", "more than 2 ms");
    assert_stops("local n = 0\n"
                 "while true do local ok = pcall(error, 'x') n = n + 1 end", "more than 2 ms");
    /* Loops that LuaJIT runs without a bytecode (fast functions calling themselves). */
    assert_stops("return tostring(setmetatable({}, {__tostring = tostring}))", "more than 2 ms");
    assert_stops("local t = setmetatable({}, {__index = function(t, k) return t[k] end})\n"
                 "while true do pcall(function() return t.x end) end", "more than 2 ms");
    /* Recursion, plain and in tail position. */
    assert_stops("local function f(n) if n == 0 then return 0 end return 1 + f(n - 1) end\n"
                 "while true do f(10000) end", "more than 2 ms");
    assert_stops("local function f() return f() end return f()", "more than 2 ms");
}

/* Builtins that work in C for long: each must stop at the deadline on its own. */
static void test_deadline_stops_builtins(void **state)
{
    assert_stops("return ('a'):rep(40):find(('a?'):rep(40) .. ('a'):rep(40))", "more than 2 ms");
    assert_stops("return ('a'):rep(30):match(('a*'):rep(30) .. 'b')", "more than 2 ms");
    assert_stops("local s = ('x'):rep(2^24) return (s:gsub('.', 'y'))", "more than 2 ms");
    assert_stops("local s = ('x'):rep(2^22) for w in s:gmatch('.-x') do end", "more than 2 ms");
    assert_stops("return ('('):rep(2^20):find('%b()')", "more than 2 ms");
    assert_stops("local s = string.rep('x', 100000)\n"
                 "while true do s = s:gsub('x', 'y') end", "more than 2 ms");
    /* table.sort gets a Lua comparator, so a big sort stops too: the table is built at the
     * top level, under the 50 ms load deadline. */
    lc_lua_config_t cfg = config("t = {} for i = 1, 200000 do t[i] = (i * 7919) % 200003 end\n"
                                 "function sort() table.sort(t) end");
    cfg.deadline_us = 0;
    lc_lua_t *s = sandbox_with(cfg);
    char err[256];
    uint64_t t0 = cpu_ns();
    assert_int_equal(call(s, "sort", err, sizeof err), LC_ETOOBIG);
    assert_true((cpu_ns() - t0) / 1000000u < STOP_BOUND_MS);
    assert_non_null(strstr(err, "more than 2 ms"));
    lc_lua_free(s);
}

static void test_deadline_leaves_state_usable(void **state)
{
    lc_lua_config_t cfg = config("function spin() while true do end end\n"
                                 "function ok() return 'fine' end");
    cfg.deadline_us = 10000;
    lc_lua_t *s = sandbox_with(cfg);
    char err[256];
    int ref;
    lua_State *co = lc_lua_thread_new(s, &ref, err, sizeof err);
    uint64_t t0 = lc_mono_ns(), c0 = cpu_ns();
    assert_int_equal(lc_lua_start(s, co, "spin", NULL, NULL, err, sizeof err), LC_ETOOBIG);
    assert_true((lc_mono_ns() - t0) / 1000000u >= 10);
    assert_true((cpu_ns() - c0) / 1000000u < STOP_BOUND_MS);
    assert_string_equal(err, "script: the step ran more than 10 ms of CPU without yielding "
                             "(at script:1)");
    assert_int_equal(lc_lua_start(s, co, "ok", NULL, NULL, err, sizeof err), LC_ESTATE);
    assert_string_equal(err, "script: the coroutine died of an error: free it");
    lc_lua_thread_free(s, ref);
    assert_int_equal(call(s, "ok", err, sizeof err), 0);
    lc_lua_stats_t st;
    lc_lua_stats(s, &st);
    assert_int_equal(st.deadline_hits, 1);
    lc_lua_free(s);
}

static void test_deadline_config(void **state)
{
    lc_lua_config_t cfg = config("");
    cfg.deadline_us = LC_LUA_DEADLINE_US_MAX + 1;
    lc_lua_t *s;
    char err[256];
    assert_int_equal(lc_lua_new(&s, &cfg, err, sizeof err), LC_EINVAL);
    assert_string_equal(err, "script: a CPU deadline of 50.001 ms is over the 50 ms limit");
    cfg = config("local x = 0\nwhile true do x = x + 1 end");
    uint64_t t0 = cpu_ns();
    assert_int_equal(lc_lua_new(&s, &cfg, err, sizeof err), LC_ETOOBIG);
    assert_true((cpu_ns() - t0) / 1000000u < 50 + STOP_BOUND_MS);
    assert_string_equal(err, "script: the script's top level ran more than 50 ms of CPU "
                             "(at script:2)");
}

/* ---- the C stack: recursion through builtins that call back into Lua --------------------- */

static void test_cstack_bound(void **state)
{
    /* Plain LuaJIT overflows its C stack on this one (a segfault). */
    assert_stops_within("local function f() return (('x'):gsub('x', f)) end return f()",
                        LC_LUA_DEADLINE_US_MAX, "KiB of C stack: a recursion through string.gsub");
    assert_stops_within("local t = setmetatable({}, {__index = function(t, k)\n"
                        "  return (('x'):gsub('x', t)) end})\n"
                        "return t.x", LC_LUA_DEADLINE_US_MAX, "of C stack");
    char out[512];
    /* These stop at a limit or at Lua's own stack overflow; what matters is that they stop
     * and the process lives. */
    static const char *const bodies[] = {
        "local mt = {} mt.__tostring = function() "
        "return string.format('%s', setmetatable({}, mt)) end "
        "return tostring(setmetatable({}, mt))",
        "local function cmp(a, b) table.sort({3, 2, 1}, cmp) return a < b end "
        "table.sort({3, 2, 1}, cmp)",
        "local t = setmetatable({}, {__call = pcall}) return tostring(t())",
        "local mt = {} mt.__tostring = function() print(setmetatable({}, mt)) return 'x' end "
        "print(setmetatable({}, mt))",
        "local function f() return tostring(setmetatable({}, {__tostring = f})) end return f()",
    };
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        uint64_t t0 = cpu_ns();
        int rv = probe_within(bodies[i], 0, out, sizeof out);
        print_message("      %-60.60s -> %d %s\n", bodies[i], rv, out);
        assert_true((cpu_ns() - t0) / 1000000u < STOP_BOUND_MS);
    }
}

/* ---- the memory cap ---------------------------------------------------------------------- */

static const char hog_script[] =
    "function hog() local t = {} for i = 1, 1e8 do t[i] = 's' .. i end end\n"
    "function careful()\n"
    "  local ok, e = pcall(hog)\n"
    "  return tostring(ok) .. ' ' .. tostring(e)\n"
    "end\n"
    "function user()\n"
    "  local v = test.park()\n"
    "  local t = {} for i = 1, 100 do t[i] = 'u' .. i end\n"
    "  return v + #t\n"
    "end\n";

/* The hog fails, over the cap; a user parked before it and a script that catches its own
 * memory error both go on. */
static void memory_cap_holds(int wrapped)
{
    lc_lua_config_t cfg = config(hog_script);
    cfg.mem_cap = (size_t)1 << 20;
    cfg.deadline_us = LC_LUA_DEADLINE_US_MAX; /* the cap, not the clock, must stop the hog */
    cfg.force_wrapped_alloc = wrapped;
    lc_lua_t *s = sandbox_with(cfg);
    char err[256];
    int user_ref, hog_ref;
    lua_State *user = lc_lua_thread_new(s, &user_ref, err, sizeof err);
    assert_int_equal(lc_lua_start(s, user, "user", NULL, NULL, err, sizeof err), LC_EAGAIN);
    lua_State *hog = lc_lua_thread_new(s, &hog_ref, err, sizeof err);
    assert_int_equal(lc_lua_start(s, hog, "hog", NULL, NULL, err, sizeof err), LC_ENOMEM);
    assert_string_equal(err, "script: not enough memory: the run's scripts are at their cap of "
                             "1 MiB per engine thread");
    lc_lua_stats_t st;
    lc_lua_stats(s, &st);
    assert_true(st.mem_refused > 0 && st.mem_peak <= st.mem_cap);
    assert_int_equal(st.wrapped_alloc, wrapped);
    lc_lua_thread_free(s, hog_ref); /* the engine frees a failed user: its memory comes back */
    double one = 1;
    assert_int_equal(lc_lua_resume(s, user, push_number, &one, err, sizeof err), 0);
    assert_int_equal(lua_tonumber(user, -1), 101);
    lc_lua_thread_free(s, user_ref);
    int ref;
    lua_State *co = lc_lua_thread_new(s, &ref, err, sizeof err);
    assert_int_equal(lc_lua_start(s, co, "careful", NULL, NULL, err, sizeof err), 0);
    assert_string_equal(lua_tostring(co, -1), "false not enough memory");
    lc_lua_thread_free(s, ref);
    lc_lua_stats(s, &st);
    assert_true(st.mem_used < st.mem_cap / 2);
    lc_lua_free(s);
}

static void test_memory_cap(void **state)
{
    memory_cap_holds(0);
}

/* The path for LuaJIT builds whose lua_newstate refuses our allocator. */
static void test_memory_cap_wrapped_allocator(void **state)
{
    memory_cap_holds(1);
}

static void test_memory_cap_big_strings(void **state)
{
    assert_probe("return #string.rep('x', 2^30)", LC_ENOMEM, "cap of 64 MiB");
    assert_probe("local s = string.rep('x', 2^20) while true do s = s .. s end", LC_ENOMEM,
                 "not enough memory");
    assert_probe("local t = {} for i = 1, 100 do t[i] = string.rep('x', 2^20) .. i end",
                 LC_ENOMEM, "not enough memory");
    char out[256];
    int rv = probe("return tostring(#string.rep('x', 2^31))", out, sizeof out);
    print_message("      string.rep('x', 2^31) -> %d %s\n", rv, out); /* LuaJIT wraps to 0 */
    /* One C call on data near the cap cannot be interrupted: how long the worst takes. */
    uint64_t t0 = lc_mono_ns();
    assert_probe_within("return tostring(#string.rep('x', 24 * 2^20))", 0, 0, "25165824");
    print_message("      one string.rep of 24 MiB (LuaJIT peaks at twice that), under the 2 ms "
                  "deadline: %.1f ms\n", (lc_mono_ns() - t0) / 1e6);
}

static void test_memory_cap_config(void **state)
{
    lc_lua_config_t cfg = config("");
    cfg.mem_cap = LC_LUA_MEM_CAP_MIN - 1;
    lc_lua_t *s;
    char err[256];
    assert_int_equal(lc_lua_new(&s, &cfg, err, sizeof err), LC_EINVAL);
    assert_string_equal(err, "script: a memory cap of 262143 bytes is under the 262144 minimum");
    cfg = config("big = string.rep('x', 2^20)");
    cfg.mem_cap = LC_LUA_MEM_CAP_MIN;
    assert_int_equal(lc_lua_new(&s, &cfg, err, sizeof err), LC_ENOMEM);
    assert_string_equal(err, "script: not enough memory: the run's scripts are at their cap of "
                             "256 KiB per engine thread");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deadline_stops_loops),
        cmocka_unit_test(test_deadline_stops_builtins),
        cmocka_unit_test(test_deadline_leaves_state_usable),
        cmocka_unit_test(test_deadline_config),
        cmocka_unit_test(test_cstack_bound),
        cmocka_unit_test(test_memory_cap),
        cmocka_unit_test(test_memory_cap_wrapped_allocator),
        cmocka_unit_test(test_memory_cap_big_strings),
        cmocka_unit_test(test_memory_cap_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
