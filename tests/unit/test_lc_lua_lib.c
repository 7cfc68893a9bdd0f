/* test_lc_lua_lib.c — the sandbox's libraries for tenant code (common/script/lc_lua_lib.c,
 * lc_lua_json.c): json.encode/decode round trips and every bound (depth, size, cycles, bad
 * text, NaN), sha256 and hmac_sha256 against published vectors, strict base64, uuid v4's
 * form, time.now_ms, the per-user generator swap, and lc_lua_abort, which pcall cannot
 * catch. */
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

#include "lc_err.h"
#include "lc_lua_sandbox.h"

/* Runs `function f() <body> end` and writes tostring of its result, or the error, into out.
 * Returns the start's code. */
static int run_in(lc_lua_t *s, const char *fn, char *out, size_t len)
{
    int ref;
    lua_State *co = lc_lua_thread_new(s, &ref, out, len);
    assert_non_null(co);
    int rv = lc_lua_start(s, co, fn, NULL, NULL, out, len);
    if (rv == LC_OK) {
        const char *r = lua_tostring(co, 1);
        snprintf(out, len, "%s", r != NULL ? r : "(not a string)");
    }
    lc_lua_thread_free(s, ref);
    return rv;
}

static int run(const char *body, char *out, size_t len)
{
    char script[8192];
    snprintf(script, sizeof script, "function f() %s end", body);
    lc_lua_config_t cfg = {.script = script, .script_len = strlen(script)};
    lc_lua_t *s;
    char err[512];
    if (lc_lua_new(&s, &cfg, err, sizeof err) != 0)
        fail_msg("load: %s", err);
    int rv = run_in(s, "f", out, len);
    lc_lua_free(s);
    return rv;
}

static void expect(const char *body, const char *want)
{
    char out[4096];
    int rv = run(body, out, sizeof out);
    if (rv != LC_OK || strcmp(out, want) != 0)
        fail_msg("{%s}: %d \"%s\", wanted \"%s\"", body, rv, out, want);
}

static void expect_error(const char *body, const char *want)
{
    char out[4096];
    int rv = run(body, out, sizeof out);
    if (rv == LC_OK || strstr(out, want) == NULL)
        fail_msg("{%s}: %d \"%s\", wanted an error with \"%s\"", body, rv, out, want);
}

static void test_json_round_trip(void **state)
{
    expect("return json.encode({a = 1})", "{\"a\":1}");
    expect("return json.encode({1, 2.5, 'x', true, false})", "[1,2.5,\"x\",true,false]");
    expect("return json.encode({})", "{}");
    expect("return json.encode('a\"b\\\\c\\n\\1')", "\"a\\\"b\\\\c\\n\\u0001\"");
    expect("return json.encode({json.null, 1})", "[null,1]");
    expect("return json.encode(0.1)", "0.1");
    expect("return json.encode(2^53)", "9007199254740992");
    expect("return json.encode(1/3)", "0.33333333333333331");
    expect("local t = json.decode(json.encode({[1] = 'a', [3] = 'c'})) "
           "return t['1'] .. t['3'] .. tostring(t[1])", "acnil"); /* not a sequence: an object */
    expect("local t = json.decode('{\"a\":[1,{\"b\":null}],\"c\":\"\\\\u00e9\\\\ud83d\\\\ude00\"}') "
           "return tostring(t.a[1]) .. (t.a[2].b == json.null and ' null ' or ' ?? ') .. t.c",
           "1 null \xc3\xa9\xf0\x9f\x98\x80");
    expect("local t = json.decode(' [ ] ') return type(t) .. #t", "table0");
    expect("return json.decode('\"x\"') .. json.decode('-1.5e2')", "x-150");
    expect("local s = '{\"k\":[1,2,3],\"s\":\"v\"}' local t = json.decode(s) "
           "local u = json.decode(json.encode(t)) return u.s .. u.k[3] .. #u.k", "v33");
    /* a repeated member: the last one wins */
    expect("return json.decode('{\"a\":1,\"a\":2}').a", "2");
}

static void test_json_refuses(void **state)
{
    expect_error("return json.decode('{')", "json.decode: ");
    expect_error("return json.decode('[1,]')", "json.decode: ");
    expect_error("return json.decode('{\"a\" 1}')", "expected a member name and ':'");
    expect_error("return json.decode('[1] x')", "more after the value");
    expect_error("return json.decode('')", "the text ends where a value was expected");
    expect_error("return json.decode('\"\\\\ud800\"')", "a bad escape or a lone surrogate");
    expect_error("return json.decode('01')", "json.decode");
    expect_error("return json.decode('nul')", "json.decode");
    expect("return #json.decode(('['):rep(64) .. (']'):rep(64))", "1");
    expect_error("return json.decode(('['):rep(65) .. (']'):rep(65))", "nested deeper than 64");
    expect_error("return json.decode('1' .. ('0'):rep(600))", "more than 511 characters");
    expect_error("return json.decode(('x'):rep(8 * 1024 * 1024 + 1))", "more than the 8388608");
    expect_error("local t = {} t.t = t return json.encode(t)", "nested deeper than 64 (a table "
                                                                "that holds itself?)");
    expect_error("return json.encode(0/0)", "nan is not a JSON number");
    expect_error("return json.encode(1/0)", "inf is not a JSON number");
    expect_error("return json.encode({[true] = 1})", "a key of type boolean");
    expect_error("return json.encode(print)", "a function has no JSON form");
    expect_error("return json.encode({('x'):rep(4 * 1024 * 1024), ('y'):rep(4 * 1024 * 1024)})",
                 "more than 8388608 bytes");
    /* the error carries the script's line */
    expect_error("local v = json.decode('x') return v", "script:1: json.decode: not JSON at byte 1");
}

/* A decode of a big document meets the step's deadline rather than holding the loop. */
static void test_json_meets_deadline(void **state)
{
    char out[512];
    int rv = run("local s = '[' .. ('[1,2,3,4,5,6,7,8],'):rep(400000) .. '0]' "
                 "for i = 1, 100 do json.decode(s) end return 'done'", out, sizeof out);
    assert_int_equal(rv, LC_ETOOBIG);
    assert_non_null(strstr(out, "more than 2 ms of CPU"));
}

static void test_digests(void **state)
{
    expect("return sha256('abc')",
           "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect("return sha256('')",
           "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    /* RFC 4231, test case 2 */
    expect("return hmac_sha256('Jefe', 'what do ya want for nothing?')",
           "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    expect("return #hmac_sha256('k', 'm', true)", "32");
    expect("return hmac_sha256(hmac_sha256('k', 'a', true), 'b') == "
           "hmac_sha256(hmac_sha256('k', 'a', true), 'b') and 'same' or 'differs'", "same");
    expect_error("return sha256()", "bad argument #1");
    expect_error("return sha256(('x'):rep(8 * 1024 * 1024 + 1))", "more than the 8388608 allowed");
}

static void test_base64(void **state)
{
    expect("return base64.encode('')", "");
    expect("return base64.encode('f') .. ' ' .. base64.encode('fo') .. ' ' .. base64.encode('foo')",
           "Zg== Zm8= Zm9v");
    expect("return base64.decode('Zm9vYmFy') .. base64.decode('Zg==') .. base64.decode('Zm8')",
           "foobarffo");
    expect("local s = ('\\0\\255\\128x'):rep(1000) return base64.decode(base64.encode(s)) == s "
           "and 'same' or 'differs'", "same");
    expect_error("return base64.decode('Zm9!')", "not base64 (byte 4)");
    expect_error("return base64.decode('Z')", "not base64 (its length)");
    expect_error("return base64.decode('Zm9===')", "not base64");
    expect_error("return base64.decode('Zh==')", "not base64 (its last character)");
    expect_error("return base64.decode('Zm 9')", "not base64 (byte 3)");
}

static void test_uuid_and_time(void **state)
{
    char out[256];
    assert_int_equal(run("return uuid()", out, sizeof out), LC_OK);
    assert_int_equal(strlen(out), 36);
    for (size_t i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23)
            assert_int_equal(out[i], '-');
        else
            assert_non_null(strchr("0123456789abcdef", out[i]));
    }
    assert_int_equal(out[14], '4');
    assert_non_null(strchr("89ab", out[19]));
    expect("return uuid() ~= uuid() and 'distinct' or 'same'", "distinct");
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    double now = (double)ts.tv_sec * 1000.0;
    assert_int_equal(run("return string.format('%.0f', time.now_ms())", out, sizeof out), LC_OK);
    double got = strtod(out, NULL);
    assert_true(got >= now - 5000 && got <= now + 5000);
}

/* Each user's generator is its own: swapped in, it continues where that user left off. */
static void test_rng_swap(void **state)
{
    static const char script[] = "function f() return tostring(math.random(1, 1000000)) end";
    lc_lua_config_t cfg = {.script = script, .script_len = sizeof script - 1};
    lc_lua_t *s;
    char err[256], a1[64], a2[64], b1[64], again[64];
    assert_int_equal(lc_lua_new(&s, &cfg, err, sizeof err), 0);
    uint64_t ua = lc_lua_rng_seed(1), ub = lc_lua_rng_seed(2), was;
    was = lc_lua_rng_swap(s, ua);
    assert_int_equal(run_in(s, "f", a1, sizeof a1), LC_OK);
    ua = lc_lua_rng_swap(s, ub);
    assert_int_equal(run_in(s, "f", b1, sizeof b1), LC_OK);
    ub = lc_lua_rng_swap(s, ua);
    assert_int_equal(run_in(s, "f", a2, sizeof a2), LC_OK);
    /* user a's first number again, from its seed */
    lc_lua_rng_swap(s, lc_lua_rng_seed(1));
    assert_int_equal(run_in(s, "f", again, sizeof again), LC_OK);
    assert_string_equal(a1, again);
    assert_string_not_equal(a1, b1);
    assert_string_not_equal(a1, a2);
    lc_lua_rng_swap(s, was);
    lc_lua_free(s);
}

static int l_stop(lua_State *L)
{
    return lc_lua_abort(L, "script:1: stopped on purpose");
}

/* lc_lua_abort passes through pcall, xpcall (its handler skipped) and error handlers. */
static void test_abort_uncatchable(void **state)
{
    static const char script[] =
        "function f() local ok = pcall(stop) xpcall(stop, function() return 'caught' end) "
        "return 'went on' end";
    static const lc_lua_host_fn_t host[] = {{NULL, "stop", l_stop, 0}};
    lc_lua_config_t cfg = {.script = script, .script_len = sizeof script - 1, .host = host,
                           .n_host = 1};
    lc_lua_t *s;
    char err[256];
    assert_int_equal(lc_lua_new(&s, &cfg, err, sizeof err), 0);
    assert_int_equal(run_in(s, "f", err, sizeof err), LC_EINVAL);
    assert_string_equal(err, "script:1: stopped on purpose");
    /* the state goes on: the next start is aborted again, not left aborted */
    assert_int_equal(run_in(s, "f", err, sizeof err), LC_EINVAL);
    assert_string_equal(err, "script:1: stopped on purpose");
    lc_lua_free(s);
}

/* A private host function reaches the host prelude only; what the prelude defines counts as
 * the sandbox's own (not among the script's functions). */
static int l_twice(lua_State *L)
{
    lua_pushnumber(L, 2 * luaL_checknumber(L, 1));
    return 1;
}

static void test_host_prelude(void **state)
{
    static const char script[] = "function f() return tostring(double(21)) .. tostring(twice) end";
    static const lc_lua_host_fn_t host[] = {{NULL, "twice", l_twice, LC_LUA_HOST_PRIVATE}};
    lc_lua_config_t cfg = {.script = script, .script_len = sizeof script - 1, .host = host,
                           .n_host = 1,
                           .host_prelude = "local p = ... function double(x) return p.twice(x) end"};
    lc_lua_t *s;
    char out[256];
    assert_int_equal(lc_lua_new(&s, &cfg, out, sizeof out), 0);
    assert_int_equal(run_in(s, "f", out, sizeof out), LC_OK);
    assert_string_equal(out, "42nil");
    assert_int_equal(lc_lua_global_functions(s, out, sizeof out, 8), 1);
    assert_string_equal(out, "f");
    lc_lua_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_round_trip),  cmocka_unit_test(test_json_refuses),
        cmocka_unit_test(test_json_meets_deadline), cmocka_unit_test(test_digests),
        cmocka_unit_test(test_base64),           cmocka_unit_test(test_uuid_and_time),
        cmocka_unit_test(test_rng_swap),         cmocka_unit_test(test_abort_uncatchable),
        cmocka_unit_test(test_host_prelude),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
