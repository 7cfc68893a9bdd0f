/* test_lc_lua_pattern.c — the sandbox's string.find/match/gmatch/gsub
 * (common/script/lc_lua_pattern.c) against LuaJIT's own, call for call: the same results and
 * the same errors on every character class and on thousands of generated patterns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <lauxlib.h>
#include <lualib.h>

#include "lc_lua_sandbox.h"
#include "lc_rng.h"

/* Run in both states: one call, its results (or error) as one string. */
static const char harness[] =
    "local function show(ok, ...)\n"
    "  local out = {ok and 'ok' or 'ERR'}\n"
    "  for i = 1, select('#', ...) do out[#out + 1] = tostring((select(i, ...))) end\n"
    "  return table.concat(out, '\\t')\n"
    "end\n"
    "local function gmatch(s, p)\n"
    "  local out, n = {}, 0\n"
    "  for a, b in string.gmatch(s, p) do\n"
    "    n = n + 1 out[n] = tostring(a) .. '|' .. tostring(b) if n > 40 then break end\n"
    "  end\n"
    "  return table.concat(out, ',')\n"
    "end\n"
    "local function repl(c, d) if c == 'a' then return false end return '<' .. tostring(c) .. '>' end\n"
    "local calls = {\n"
    "  find = string.find, match = string.match, gsub = string.gsub, gmatch = gmatch,\n"
    "  gsub_fn = function(s, p, n) return string.gsub(s, p, repl, n) end,\n"
    "  gsub_tab = function(s, p, n) return string.gsub(s, p, {a = 'A', b = false, x = 1}, n) end,\n"
    "}\n"
    "function R(f, s, p, a, b) return show(pcall(calls[f], s, p, a, b)) end\n";

typedef struct call_s {
    const char *fn, *s, *p;
    int n_extra; /* how many of a, b to pass */
    int a_is_str;
    const char *a_str;
    double a, b;
} call_t;

static int push_call(lua_State *L, void *ud)
{
    const call_t *c = ud;
    lua_pushstring(L, c->fn);
    lua_pushstring(L, c->s);
    lua_pushstring(L, c->p);
    if (c->n_extra > 0) {
        if (c->a_is_str)
            lua_pushstring(L, c->a_str);
        else
            lua_pushnumber(L, c->a);
    }
    if (c->n_extra > 1)
        lua_pushnumber(L, c->b);
    return 3 + c->n_extra;
}

typedef struct pair_s {
    lua_State *ref; /* plain LuaJIT, its own string library */
    lc_lua_t *box;
    lua_State *co;
    int ref_co;
    long compared;
} pair_t;

static void pair_open(pair_t *p)
{
    p->ref = luaL_newstate();
    luaL_openlibs(p->ref);
    assert_int_equal(luaL_loadbuffer(p->ref, harness, sizeof harness - 1, "=script"), 0);
    assert_int_equal(lua_pcall(p->ref, 0, 0, 0), 0);
    lc_lua_config_t cfg = {.script = harness, .script_len = sizeof harness - 1,
                           .deadline_us = LC_LUA_DEADLINE_US_MAX};
    char err[256];
    assert_int_equal(lc_lua_new(&p->box, &cfg, err, sizeof err), 0);
    p->co = lc_lua_thread_new(p->box, &p->ref_co, err, sizeof err);
    assert_non_null(p->co);
    p->compared = 0;
}

static void pair_close(pair_t *p)
{
    lc_lua_thread_free(p->box, p->ref_co);
    lc_lua_free(p->box);
    lua_close(p->ref);
}

static void compare(pair_t *p, const call_t *c)
{
    lua_settop(p->ref, 0);
    lua_getglobal(p->ref, "R");
    int n = push_call(p->ref, (void *)c);
    assert_int_equal(lua_pcall(p->ref, n, 1, 0), 0);
    char err[512];
    int rv = lc_lua_start(p->box, p->co, "R", push_call, (void *)c, err, sizeof err);
    if (rv != 0)
        fail_msg("%s(\"%s\", \"%s\"): the sandbox failed: %s", c->fn, c->s, c->p, err);
    const char *want = lua_tostring(p->ref, -1), *got = lua_tostring(p->co, -1);
    if (strcmp(want, got) != 0)
        fail_msg("%s(\"%s\", \"%s\", %g, %g): LuaJIT says\n  %s\nthe sandbox says\n  %s", c->fn,
                 c->s, c->p, c->a, c->b, want, got);
    p->compared++;
}

/* Every class letter (and a few that are not classes) against every byte. */
static void test_classes(void **state)
{
    pair_t p;
    pair_open(&p);
    char all[256];
    for (int i = 1; i < 256; i++)
        all[i - 1] = (char)i;
    all[255] = '\0';
    static const char classes[] = "acdglpsuwxzACDGLPSUWXZbefB.%[]^-";
    for (const char *cl = classes; *cl != '\0'; cl++) {
        char pat[8][16];
        snprintf(pat[0], sizeof pat[0], "%%%c", *cl);
        snprintf(pat[1], sizeof pat[1], "[%%%c]", *cl);
        snprintf(pat[2], sizeof pat[2], "[^%%%c]", *cl);
        snprintf(pat[3], sizeof pat[3], "[%c-z]", *cl);
        snprintf(pat[4], sizeof pat[4], "%%f[%%%c]", *cl);
        snprintf(pat[5], sizeof pat[5], "[%c]", *cl);
        snprintf(pat[6], sizeof pat[6], "%c+", *cl);
        snprintf(pat[7], sizeof pat[7], "[]%c]", *cl);
        for (int i = 0; i < 8; i++) {
            call_t c = {"gsub", all, pat[i], 1, 1, "#", 0, 0};
            compare(&p, &c);
            call_t f = {"find", all, pat[i], 0, 0, NULL, 0, 0};
            compare(&p, &f);
        }
    }
    pair_close(&p);
}

/* Hand-picked corners: anchors, empty matches, captures, back references, errors. */
static void test_corners(void **state)
{
    static const call_t calls[] = {
        {"find", "abc", "", 1, 0, NULL, 10, 0},   {"find", "abc", "b", 1, 0, NULL, 10, 0},
        {"find", "abc", "c", 1, 0, NULL, -1, 0},  {"find", "abc", "c", 1, 0, NULL, -10, 0},
        {"find", "abc", "b", 1, 0, NULL, 1.7, 0}, {"find", "a.b", ".", 2, 0, NULL, 1, 1},
        {"find", "a+b", "+", 0, 0, NULL, 0, 0},   {"find", "x)", "x)", 0, 0, NULL, 0, 0},
        {"match", "abc", "()", 1, 0, NULL, 10, 0}, {"match", "hello world", "^(%w+)", 0, 0, NULL, 0, 0},
        {"match", "  trim  ", "^%s*(.-)%s*$", 0, 0, NULL, 0, 0},
        {"match", "key = value", "(%w+)%s*=%s*(%w+)", 0, 0, NULL, 0, 0},
        {"match", "abab", "(ab)%1", 0, 0, NULL, 0, 0}, {"match", "aa", "()%1", 0, 0, NULL, 0, 0},
        {"match", "x", "%", 0, 0, NULL, 0, 0},     {"match", "x", "[a", 0, 0, NULL, 0, 0},
        {"match", "x", "%b", 0, 0, NULL, 0, 0},    {"match", "x", "%f", 0, 0, NULL, 0, 0},
        {"match", "x", "(()", 0, 0, NULL, 0, 0},   {"match", "x", "%1", 0, 0, NULL, 0, 0},
        {"match", "x", "x)", 0, 0, NULL, 0, 0},    {"match", "x", "%0", 0, 0, NULL, 0, 0},
        {"match", "f(a(b)c)d", "%b()", 0, 0, NULL, 0, 0}, {"match", "THE (quick) fox", "%f[%a]%a+", 0, 0, NULL, 0, 0},
        {"match", "a$b", "a$b", 0, 0, NULL, 0, 0}, {"match", "ab", "b$", 0, 0, NULL, 0, 0},
        {"match", "x^y", "x^y", 0, 0, NULL, 0, 0},
        {"gsub", "hello world", "o", 1, 1, "0", 0, 0}, {"gsub", "hello", "", 1, 1, "-", 0, 0},
        {"gsub", "abc", "%w", 1, 1, "%0%0", 0, 0}, {"gsub", "abc", "(%w)", 1, 1, "%1%%", 0, 0},
        {"gsub", "x", "x", 1, 1, "%", 0, 0},       {"gsub", "x", "x", 1, 1, "%2", 0, 0},
        {"gsub", "abc", "%w", 2, 1, "_", 0, 2},    {"gsub", "abc", "^%w", 1, 1, "_", 0, 0},
        {"gsub", "abc", "", 2, 1, "-", 0, 2},      {"gsub", "abc", "b*", 1, 1, "-", 0, 0},
        {"gsub_fn", "abc axa", "%w", 0, 0, NULL, 0, 0}, {"gsub_fn", "k=v", "(%w)=(%w)", 0, 0, NULL, 0, 0},
        {"gsub_tab", "abxab", "%w", 0, 0, NULL, 0, 0}, {"gsub_tab", "abxab", "(%w)(%w)", 0, 0, NULL, 0, 0},
        {"gmatch", "one two  three", "%a+", 0, 0, NULL, 0, 0}, {"gmatch", "abc", "", 0, 0, NULL, 0, 0},
        {"gmatch", "k1=v1, k2=v2", "(%w+)=(%w+)", 0, 0, NULL, 0, 0}, {"gmatch", "aaa", "a*", 0, 0, NULL, 0, 0},
        {"gmatch", "^a^a", "^a", 0, 0, NULL, 0, 0}, {"gmatch", "xyz", "()", 0, 0, NULL, 0, 0},
    };
    pair_t p;
    pair_open(&p);
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        compare(&p, &calls[i]);
    pair_close(&p);
}

/* Generated: patterns of 1-6 tokens over subjects from a small alphabet, every function. */
static void test_generated(void **state)
{
    static const char *const tokens[] = {
        "a", "b", ".", "%a", "%d", "%s", "%w", "%p", "[ab]", "[^a]", "[a-c]", "[%d%]]", "(", ")",
        "()", "*", "+", "-", "?", "^", "$", "%b()", "%f[%w]", "%f[%W]", "%1", "%2", "%", "[", "]",
        "x", " ", "%(", "%.", "[]]", "[^]a]"};
    static const char alphabet[] = "aab(b)[]%.-+*?^$x 09,";
    static const char *const fns[] = {"find", "match", "gmatch", "gsub", "gsub_fn", "gsub_tab"};
    uint64_t rng = 20240601;
    pair_t p;
    pair_open(&p);
    for (int i = 0; i < 6000; i++) {
        char pat[64] = "", subj[24];
        int n = 1 + (int)lc_rng_below(&rng, 6);
        for (int t = 0; t < n; t++)
            strcat(pat, tokens[lc_rng_below(&rng, sizeof tokens / sizeof tokens[0])]);
        int len = (int)lc_rng_below(&rng, sizeof subj);
        for (int k = 0; k < len; k++)
            subj[k] = alphabet[lc_rng_below(&rng, sizeof alphabet - 1)];
        subj[len] = '\0';
        call_t c = {fns[lc_rng_below(&rng, 6)], subj, pat, 0, 0, NULL, 0, 0};
        if (strcmp(c.fn, "find") == 0 || strcmp(c.fn, "match") == 0) {
            c.n_extra = (int)lc_rng_below(&rng, 3);
            c.a = (double)lc_rng_range(&rng, 0, 12) - 6;
            c.b = (double)lc_rng_below(&rng, 2);
        } else if (strcmp(c.fn, "gsub") == 0) {
            static const char *const repls[] = {"-", "%0", "%1", "<%1%2>", "%%", "", "%"};
            c.n_extra = 1 + (int)lc_rng_below(&rng, 2);
            c.a_is_str = 1;
            c.a_str = repls[lc_rng_below(&rng, sizeof repls / sizeof repls[0])];
            c.b = (double)lc_rng_below(&rng, 4);
        }
        compare(&p, &c);
    }
    print_message("      %ld calls compared with LuaJIT's string library\n", p.compared);
    pair_close(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classes),
        cmocka_unit_test(test_corners),
        cmocka_unit_test(test_generated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
