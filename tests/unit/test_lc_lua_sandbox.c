/* test_lc_lua_sandbox.c — the sandbox (common/script/lc_lua_sandbox.c, lc_lua_env.c), tried
 * as an attacker would: every removed library and function is out of reach, and the
 * coroutine API behaves as the engine will use it (the limits: test_lc_lua_sandbox_limits.c).
 * Also measures bytes per state and per coroutine. */
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

/* ---- what a script cannot reach -------------------------------------------------------- */

static void test_removed_names_are_nil(void **state)
{
    static const char *const removed[] = {
        "io", "os", "package", "debug", "ffi", "jit", "coroutine", "dofile", "loadfile", "load",
        "loadstring", "getfenv", "setfenv", "module", "newproxy", "gcinfo", "string.dump",
        "table.foreach", "table.foreachi", "table.getn", "table.move", "getmetatable('').__index.dump",
        "('').dump", "rawget(string, 'dump')", "rawget(_G, 'loadstring')"};
    for (size_t i = 0; i < sizeof removed / sizeof removed[0]; i++) {
        char body[256];
        snprintf(body, sizeof body, "return tostring(%s == nil)", removed[i]);
        assert_probe(body, 0, "true");
    }
    assert_probe("return tostring(getmetatable('').__index == string)", 0, "true");
}

static void test_removed_functions_raise(void **state)
{
    static const struct {
        const char *call, *error;
    } cases[] = {
        {"os.execute('id')", "attempt to index global 'os' (a nil value)"},
        {"os.exit(1)", "attempt to index global 'os'"},
        {"io.open('/etc/passwd')", "attempt to index global 'io'"},
        {"package.loadlib('libc.so.6', 'system')", "attempt to index global 'package'"},
        {"debug.getregistry()", "attempt to index global 'debug'"},
        {"debug.sethook()", "attempt to index global 'debug'"},
        {"string.dump(print)", "attempt to call field 'dump' (a nil value)"},
        {"('').dump(print)", "attempt to call field 'dump'"},
        {"load('return 1')", "attempt to call global 'load'"},
        {"loadstring('return 1')", "attempt to call global 'loadstring'"},
        {"dofile('/etc/passwd')", "attempt to call global 'dofile'"},
        {"loadfile('/etc/passwd')", "attempt to call global 'loadfile'"},
        {"setfenv(print, {})", "attempt to call global 'setfenv'"},
        {"setfenv(1, {})", "attempt to call global 'setfenv'"},
        {"getfenv(0)", "attempt to call global 'getfenv'"},
        {"coroutine.wrap(function() end)", "attempt to index global 'coroutine'"},
        {"require('ffi')", "require: no module named 'ffi'"},
        {"require('jit.util')", "no module named 'jit.util'"},
        {"require('/etc/passwd')", "no module named '/etc/passwd'"},
        {"require('os')", "no module named 'os'"},
        {"collectgarbage('stop')", "collectgarbage(\"stop\") is not allowed in a script"},
        {"collectgarbage()", "collectgarbage(\"collect\") is not allowed"},
        {"collectgarbage('setpause', 0)", "is not allowed"},
        {"newproxy(true)", "attempt to call global 'newproxy'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char body[256];
        snprintf(body, sizeof body, "%s return 'reached'", cases[i].call);
        assert_probe(body, LC_EINVAL, cases[i].error);
    }
    assert_probe("return type(collectgarbage('count'))", 0, "number");
}

/* Everything a script can reach from _G and the string metatable, by name: a function
 * LuaJIT adds, or one we forget to remove, changes this list. */
static void test_reachable_functions(void **state)
{
    static const char walk[] =
        "local seen, out = {}, {}\n"
        "local function walk(v, path)\n"
        "  if type(v) == 'function' then out[#out + 1] = path return end\n"
        "  if type(v) ~= 'table' or seen[v] then return end\n"
        "  seen[v] = true\n"
        "  for k, x in pairs(v) do walk(x, path .. '.' .. tostring(k)) end\n"
        "  local mt = getmetatable(v)\n"
        "  if mt then walk(mt, path .. '<mt>') end\n"
        "end\n"
        "walk(_G, '_G')\n"
        "walk(getmetatable(''), 'string<mt>')\n"
        "table.sort(out)\n"
        "return table.concat(out, ' ')";
    static const char want[] =
        "_G.assert _G.base64.decode _G.base64.encode _G.bit.arshift _G.bit.band _G.bit.bnot _G.bit.bor _G.bit.bswap _G.bit.bxor "
        "_G.bit.lshift _G.bit.rol _G.bit.ror _G.bit.rshift _G.bit.tobit _G.bit.tohex "
        "_G.collectgarbage _G.error _G.getmetatable _G.hmac_sha256 _G.http<mt>.__index _G.ipairs "
        "_G.json.decode _G.json.encode _G.log "
        "_G.math.abs _G.math.acos _G.math.asin _G.math.atan _G.math.atan2 _G.math.ceil "
        "_G.math.cos _G.math.cosh _G.math.deg _G.math.exp _G.math.floor _G.math.fmod "
        "_G.math.frexp _G.math.ldexp _G.math.log _G.math.log10 _G.math.max _G.math.min "
        "_G.math.modf _G.math.pow _G.math.rad _G.math.random _G.math.randomseed _G.math.sin "
        "_G.math.sinh _G.math.sqrt _G.math.tan _G.math.tanh _G.next _G.pairs _G.pcall _G.print "
        "_G.probe _G.rawequal _G.rawget _G.rawset _G.require _G.select _G.setmetatable _G.sha256 "
        "_G.string.byte "
        "_G.string.char _G.string.find _G.string.format _G.string.gmatch _G.string.gsub "
        "_G.string.len _G.string.lower _G.string.match _G.string.rep _G.string.reverse "
        "_G.string.sub _G.string.upper _G.table.concat _G.table.insert _G.table.maxn "
        "_G.table.remove _G.table.sort _G.test.echo _G.test.maybe_park _G.test.park "
        "_G.time.now_ms _G.tonumber _G.tostring _G.type _G.unpack _G.uuid _G.xpcall";
    char out[4096];
    assert_int_equal(probe(walk, out, sizeof out), 0);
    assert_string_equal(out, want);
}

static void test_bytecode_refused(void **state)
{
    static const char chunk[] = "\033LJ\002\000\000";
    lc_lua_config_t cfg = {.script = chunk, .script_len = sizeof chunk - 1};
    lc_lua_t *s;
    char err[256];
    assert_int_equal(lc_lua_new(&s, &cfg, err, sizeof err), LC_EINVAL);
    assert_string_equal(err, "script: bytecode is not accepted, only source text");
    lc_lua_module_t mod = {"evil", chunk, sizeof chunk - 1};
    cfg = config("");
    cfg.modules = &mod;
    cfg.n_modules = 1;
    assert_int_equal(lc_lua_new(&s, &cfg, err, sizeof err), LC_EINVAL);
    assert_string_equal(err, "script: module evil: bytecode is not accepted, only source text");
}

/* A metatable on _G that raises must not reach the C side (a panic there would abort). */
static void test_hostile_globals_metatable(void **state)
{
    lc_lua_t *s = sandbox("function ok() return 'fine' end\n"
                          "setmetatable(_G, {__index = function() error('trap') end,\n"
                          "                  __newindex = function() error('trap') end})");
    char err[256];
    assert_int_equal(call(s, "missing", err, sizeof err), LC_ENOTFOUND);
    assert_string_equal(err, "script: no function named missing");
    assert_int_equal(call(s, "ok", err, sizeof err), 0);
    assert_int_equal(lc_lua_global_type(s, "ok"), LUA_TFUNCTION);
    lc_lua_free(s);
}

/* ---- the coroutine API, as the engine will use it ---------------------------------------- */

static const char api_script[] =
    "function add1(x) return x + 1 end\n"
    "function boom() local t = nil return t.x end\n"
    "function raise_table() error({}) end\n"
    "function raise_number() error(42) end\n"
    "function raise_plain() error('plain', 0) end\n"
    "function wait() local v = test.park() return v * 2 end\n"
    "function guarded() local ok, v = pcall(test.park) return ok, v end\n"
    "function maybe(w) return test.maybe_park(w) end\n"
    "function in_gsub() return (('x'):gsub('x', function() return test.park() end)) end\n"
    "function echo2() return test.echo('a', 2) end\n"
    "not_a_function = 5\n";

static void test_start_and_resume(void **state)
{
    lc_lua_t *s = sandbox(api_script);
    char err[256];
    int ref;
    lua_State *co = lc_lua_thread_new(s, &ref, err, sizeof err);
    double five = 5, seven = 7;
    assert_int_equal(lc_lua_start(s, co, "add1", push_number, &five, err, sizeof err), 0);
    assert_int_equal(lua_tonumber(co, -1), 6);
    /* A finished coroutine runs the next function: one per user, reused every iteration. */
    assert_int_equal(lc_lua_start(s, co, "wait", NULL, NULL, err, sizeof err), LC_EAGAIN);
    assert_int_equal(lc_lua_start(s, co, "add1", NULL, NULL, err, sizeof err), LC_ESTATE);
    assert_string_equal(err, "script: the coroutine is suspended: resume it or free it");
    assert_int_equal(lc_lua_resume(s, co, push_number, &seven, err, sizeof err), 0);
    assert_int_equal(lua_tonumber(co, -1), 14);
    assert_int_equal(lc_lua_resume(s, co, NULL, NULL, err, sizeof err), LC_ESTATE);
    assert_string_equal(err, "script: the coroutine is not suspended");
    /* A yield passes through pcall (a Lua wrapper, not a C frame). */
    assert_int_equal(lc_lua_start(s, co, "guarded", NULL, NULL, err, sizeof err), LC_EAGAIN);
    assert_int_equal(lc_lua_resume(s, co, push_number, &seven, err, sizeof err), 0);
    assert_true(lua_toboolean(co, 1));
    assert_int_equal(lua_tonumber(co, 2), 7);
    /* A YIELDS host function may also return at once. */
    assert_int_equal(lc_lua_start(s, co, "maybe", NULL, NULL, err, sizeof err), 0);
    assert_string_equal(lua_tostring(co, -1), "no wait");
    assert_int_equal(lc_lua_start(s, co, "maybe", push_number, &five, err, sizeof err),
                     LC_EAGAIN);
    assert_int_equal(lc_lua_resume(s, co, push_number, &seven, err, sizeof err), 0);
    assert_int_equal(lua_tonumber(co, -1), 7);
    assert_int_equal(lc_lua_start(s, co, "nope", NULL, NULL, err, sizeof err), LC_ENOTFOUND);
    assert_string_equal(err, "script: no function named nope");
    assert_int_equal(lc_lua_start(s, co, "not_a_function", NULL, NULL, err, sizeof err),
                     LC_ENOTFOUND);
    assert_string_equal(err, "script: not_a_function is a number, not a function");
    assert_int_equal(lc_lua_start(s, co, "echo2", NULL, NULL, err, sizeof err), 0);
    assert_int_equal(lua_gettop(co), 2);
    lc_lua_thread_free(s, ref);
    lc_lua_free(s);
}

static void assert_call_error(lc_lua_t *s, const char *fn, int want_rv, const char *want)
{
    char err[256];
    assert_int_equal(call(s, fn, err, sizeof err), want_rv);
    assert_string_equal(err, want);
}

static void test_script_errors(void **state)
{
    lc_lua_t *s = sandbox(api_script);
    assert_call_error(s, "boom", LC_EINVAL, "script:2: attempt to index local 't' (a nil value)");
    assert_call_error(s, "raise_table", LC_EINVAL, "script: (error object is a table value)");
    assert_call_error(s, "raise_number", LC_EINVAL, "script:4: 42"); /* LuaJIT: a number is a string */
    assert_call_error(s, "raise_plain", LC_EINVAL, "script: plain");
    assert_call_error(s, "in_gsub", LC_EINVAL, "script: attempt to yield across C-call boundary");
    /* Many failing coroutines: nothing leaks (the ASan build checks) and nothing breaks. */
    for (int i = 0; i < 1000; i++)
        assert_call_error(s, "boom", LC_EINVAL, "script:2: attempt to index local 't' (a nil value)");
    assert_call_error(s, "raise_plain", LC_EINVAL, "script: plain");
    lc_lua_free(s);
}

static void test_host_ud(void **state)
{
    int marker;
    lc_lua_config_t cfg = config("");
    cfg.host_ud = &marker;
    lc_lua_t *s = sandbox_with(cfg);
    assert_ptr_equal(lc_lua_host_ud(s), &marker);
    lc_lua_free(s);
}

/* ---- math.random ------------------------------------------------------------------------- */

static void random_sequence(uint64_t seed, char *out, size_t len)
{
    lc_lua_config_t cfg = config("function seq()\n"
                                 "  local t = {}\n"
                                 "  for i = 1, 8 do t[i] = math.random(1, 1000000) end\n"
                                 "  t[9] = math.random()\n"
                                 "  return table.concat(t, ',')\n"
                                 "end");
    cfg.seed = seed;
    lc_lua_t *s = sandbox_with(cfg);
    int ref;
    lua_State *co = lc_lua_thread_new(s, &ref, out, len);
    assert_int_equal(lc_lua_start(s, co, "seq", NULL, NULL, out, len), 0);
    snprintf(out, len, "%s", lua_tostring(co, -1));
    lc_lua_thread_free(s, ref);
    lc_lua_free(s);
}

static void test_random_is_seeded(void **state)
{
    char a[512], b[512], c[512];
    random_sequence(42, a, sizeof a);
    random_sequence(42, b, sizeof b);
    random_sequence(43, c, sizeof c);
    assert_string_equal(a, b);
    assert_string_not_equal(a, c);
    assert_probe("math.randomseed(7) local a = math.random(1e9)\n"
                 "math.randomseed(7) local b = math.random(1e9)\n"
                 "return tostring(a == b)", 0, "true");
    assert_probe("local seen = {}\n"
                 "for i = 1, 1000 do local v = math.random(3)\n"
                 "  if v < 1 or v > 3 or v % 1 ~= 0 then return 'bad ' .. v end seen[v] = true end\n"
                 "for i = 1, 1000 do local v = math.random(-2, 2) if v < -2 or v > 2 then return 'bad' end end\n"
                 "for i = 1, 1000 do local v = math.random() if v < 0 or v >= 1 then return 'bad' end end\n"
                 "return tostring(seen[1] and seen[2] and seen[3])", 0, "true");
    assert_probe("return math.random(0)", LC_EINVAL, "interval is empty");
    assert_probe("return math.random(3, 2)", LC_EINVAL, "interval is empty");
    assert_probe("return math.random(1, 2, 3)", LC_EINVAL, "wrong number of arguments");
}

/* ---- require: the scenario's modules only ------------------------------------------------- */

static void test_require(void **state)
{
    lc_lua_module_t mods[] = {
        {"util", "loads = (loads or 0) + 1\n"
                 "local M = {} function M.add(a, b) return a + b end return M", 0},
        {"a", "local b = require('b') return b", 0},
        {"b", "local a = require('a') return a", 0},
        {"bad", "local x = nil\nreturn x.y", 0},
        {"none", "local x = 1", 0},
        {"name", "return ...", 0},
    };
    for (size_t i = 0; i < sizeof mods / sizeof mods[0]; i++)
        mods[i].len = strlen(mods[i].src);
    lc_lua_config_t cfg = config("local u = require('util')\n"
                                 "function twice() return tostring(require('util') == u) .. loads end\n"
                                 "function add() return u.add(2, 3) end\n"
                                 "function unknown() local m = require('nope') return m end\n"
                                 "function cycle() local m = require('a') return m end\n"
                                 "function bad() local m = require('bad') return m end\n"
                                 "function none() return tostring(require('none')) end\n"
                                 "function name() return require('name') end\n");
    cfg.modules = mods;
    cfg.n_modules = sizeof mods / sizeof mods[0];
    lc_lua_t *s = sandbox_with(cfg);
    char err[512];
    int ref;
    lua_State *co = lc_lua_thread_new(s, &ref, err, sizeof err);
    assert_int_equal(lc_lua_start(s, co, "twice", NULL, NULL, err, sizeof err), 0);
    assert_string_equal(lua_tostring(co, -1), "true1"); /* run once, cached */
    assert_int_equal(lc_lua_start(s, co, "add", NULL, NULL, err, sizeof err), 0);
    assert_int_equal(lua_tonumber(co, -1), 5);
    assert_int_equal(lc_lua_start(s, co, "none", NULL, NULL, err, sizeof err), 0);
    assert_string_equal(lua_tostring(co, -1), "true");
    assert_int_equal(lc_lua_start(s, co, "name", NULL, NULL, err, sizeof err), 0);
    assert_string_equal(lua_tostring(co, -1), "name");
    lc_lua_thread_free(s, ref);
    assert_call_error(s, "unknown", LC_EINVAL, "script:4: require: no module named 'nope' (the "
                      "scenario's modules: util, a, b, bad, none, name)");
    assert_call_error(s, "cycle", LC_EINVAL, "script: b:1: require: a cycle: a -> b -> a");
    assert_call_error(s, "cycle", LC_EINVAL, "script: b:1: require: a cycle: a -> b -> a");
    assert_call_error(s, "bad", LC_EINVAL, "script: bad:2: attempt to index local 'x' (a nil value)");
    lc_lua_free(s);
    /* No modules at all, and a module that does not compile (found at load, required or not). */
    assert_probe("return require('x')", LC_EINVAL, "no module named 'x' (the scenario has no modules)");
    lc_lua_module_t broken = {"broken", "local = 1", 9};
    cfg = config("");
    cfg.modules = &broken;
    cfg.n_modules = 1;
    assert_int_equal(lc_lua_new(&s, &cfg, err, sizeof err), LC_EINVAL);
    assert_string_equal(err, "script: broken:1: '<name>' expected near '='");
    lc_lua_module_t twice[] = {{"m", "", 0}, {"m", "", 0}};
    cfg.modules = twice;
    cfg.n_modules = 2;
    assert_int_equal(lc_lua_new(&s, &cfg, err, sizeof err), LC_EINVAL);
    assert_string_equal(err, "script: module m is given twice");
    lc_lua_module_t odd = {"../etc/passwd", "", 0};
    cfg.modules = &odd;
    cfg.n_modules = 1;
    assert_int_equal(lc_lua_new(&s, &cfg, err, sizeof err), LC_EINVAL);
    assert_string_equal(err, "script: modules[0]: a name is 1 to 64 letters, digits, '_', '.' or '-'");
}

/* ---- print()/log(): rate limited -------------------------------------------------------- */

typedef struct lines_s {
    int n;
    char line[16][600];
} lines_t;

static void collect_line(void *ud, const char *line, size_t len)
{
    lines_t *l = ud;
    if (l->n < 16)
        snprintf(l->line[l->n], sizeof l->line[0], "%.*s", (int)len, line);
    l->n++;
}

static void test_print_rate_limited(void **state)
{
    lines_t lines = {0};
    lc_lua_config_t cfg = config("function chatty() for i = 1, 10 do print('line', i) end end\n"
                                 "function long() log(string.rep('y', 2000)) end\n"
                                 "function odd() print('a\\nb', nil, true, setmetatable({}, "
                                 "{__tostring = function() return 'T' end})) end\n");
    cfg.log = collect_line;
    cfg.log_ud = &lines;
    cfg.log_burst = 3;
    cfg.log_per_sec = 20;
    lc_lua_t *s = sandbox_with(cfg);
    char err[256];
    assert_int_equal(call(s, "chatty", err, sizeof err), 0);
    assert_int_equal(lines.n, 3);
    assert_string_equal(lines.line[0], "line\t1");
    assert_string_equal(lines.line[2], "line\t3");
    lc_lua_stats_t st;
    lc_lua_stats(s, &st);
    assert_int_equal(st.log_dropped, 7);
    struct timespec pause = {0, 120 * 1000000};
    nanosleep(&pause, NULL); /* 20 a second: two more tokens */
    assert_int_equal(call(s, "odd", err, sizeof err), 0);
    assert_string_equal(lines.line[3], "script: 7 print() lines dropped (more than 20 a second)");
    assert_string_equal(lines.line[4], "a b\tnil\ttrue\tT");
    assert_int_equal(call(s, "long", err, sizeof err), 0);
    assert_int_equal(strlen(lines.line[5]), LC_LUA_LOG_LINE_MAX + 3);
    assert_string_equal(lines.line[5] + LC_LUA_LOG_LINE_MAX, "...");
    lc_lua_free(s);
}

/* ---- what it costs ----------------------------------------------------------------------- */

#define PARKED 10000

/* collectgarbage("count") as the script sees it, in KiB. */
static double script_kib(lc_lua_t *s)
{
    char err[256];
    int ref;
    lua_State *co = lc_lua_thread_new(s, &ref, err, sizeof err);
    assert_int_equal(lc_lua_start(s, co, "kib", NULL, NULL, err, sizeof err), 0);
    double kib = lua_tonumber(co, -1);
    lc_lua_thread_free(s, ref);
    return kib;
}

static void test_bytes_per_state_and_coroutine(void **state)
{
    lc_lua_t *s = sandbox("function user() test.park() end\n"
                          "function kib() return collectgarbage('count') end");
    lc_lua_stats_t st;
    lc_lua_collect(s);
    lc_lua_stats(s, &st);
    size_t state_bytes = st.mem_used;
    double kib_before = script_kib(s);
    static int refs[PARKED];
    char err[256];
    for (int i = 0; i < PARKED; i++) {
        lua_State *co = lc_lua_thread_new(s, &refs[i], err, sizeof err);
        assert_non_null(co);
        assert_int_equal(lc_lua_start(s, co, "user", NULL, NULL, err, sizeof err), LC_EAGAIN);
    }
    lc_lua_collect(s);
    lc_lua_stats(s, &st);
    double per_co = (double)(st.mem_used - state_bytes) / PARKED;
    double per_co_gc = (script_kib(s) - kib_before) * 1024 / PARKED;
    print_message("      a sandboxed state: %zu B; a coroutine parked in a host call: %.0f B by "
                  "the allocator, %.0f B by collectgarbage('count') (%d of them)\n", state_bytes,
                  per_co, per_co_gc, PARKED);
    assert_true(state_bytes < 64 * 1024);
    assert_true(per_co < 1400);
    for (int i = 0; i < PARKED; i++)
        lc_lua_thread_free(s, refs[i]);
    lc_lua_collect(s);
    lc_lua_stats(s, &st);
    print_message("      after freeing them: %zu B more than before (the registry's grown "
                  "array of references)\n", st.mem_used - state_bytes);
    assert_true(st.mem_used < state_bytes + 16 * PARKED + 64 * 1024);
    lc_lua_free(s);
}

/* The count hook's price on pure Lua work (printed, not asserted: the machine is shared). */
static void test_hook_overhead(void **state)
{
    lc_lua_config_t cfg = config("function work() local s = 0 for i = 1, 20000 do s = s + i % 7 end return s end");
    lc_lua_t *s = sandbox_with(cfg);
    char err[256];
    int ref;
    lua_State *co = lc_lua_thread_new(s, &ref, err, sizeof err);
    uint64_t t0 = lc_mono_ns();
    for (int i = 0; i < 50; i++)
        assert_int_equal(lc_lua_start(s, co, "work", NULL, NULL, err, sizeof err), 0);
    print_message("      interpreted loop under the hook: %.2f ns per iteration\n",
                  (lc_mono_ns() - t0) / (50.0 * 20000));
    lc_lua_thread_free(s, ref);
    lc_lua_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_removed_names_are_nil),
        cmocka_unit_test(test_removed_functions_raise),
        cmocka_unit_test(test_reachable_functions),
        cmocka_unit_test(test_bytecode_refused),
        cmocka_unit_test(test_hostile_globals_metatable),
        cmocka_unit_test(test_start_and_resume),
        cmocka_unit_test(test_script_errors),
        cmocka_unit_test(test_host_ud),
        cmocka_unit_test(test_random_is_seeded),
        cmocka_unit_test(test_require),
        cmocka_unit_test(test_print_rate_limited),
        cmocka_unit_test(test_bytes_per_state_and_coroutine),
        cmocka_unit_test(test_hook_overhead),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
