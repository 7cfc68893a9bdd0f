/* test_lc_extract.c — extractors (json, regex, between) and their picks,
 * tried as an attacker would: misses, hostile bodies, runaway patterns, one
 * extractor shared by two threads; then ns per run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_bodies.h"
#include "lc_clock.h"
#include "lc_err.h"
#include "lc_extract.h"

/* Helpers ----------------------------------------------------------------- */

static lc_extractor_t *json_x(const char *path, enum lc_pick pick)
{
    lc_extractor_t *x = NULL;
    char err[256] = "";
    if (lc_extractor_json(&x, path, pick, err, sizeof err) != 0)
        fail_msg("%s: %s", path, err);
    return x;
}

static lc_extractor_t *regex_x(const char *pattern, const char *group, enum lc_pick pick)
{
    lc_extractor_t *x = NULL;
    char err[256] = "";
    if (lc_extractor_regex(&x, pattern, group, pick, err, sizeof err) != 0)
        fail_msg("%s: %s", pattern, err);
    return x;
}

static lc_extractor_t *between_x(const char *left, const char *right, enum lc_pick pick)
{
    lc_extractor_t *x = NULL;
    char err[256] = "";
    assert_int_equal(lc_extractor_between(&x, left, right, pick, err, sizeof err), 0);
    return x;
}

/* The result of one run over a copy of body[0..len) of exactly len bytes. */
typedef struct result_s {
    int rv;
    uint8_t type;
    char text[4096];
    size_t len;
} result_t;

static result_t run_n(const lc_extractor_t *x, const char *body, size_t len, uint64_t *rng)
{
    char *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, body, len);
    lc_buf_t out = {0};
    result_t r = {.type = 0xff};
    r.rv = lc_extractor_run(x, copy, len, rng, &out, &r.type);
    if (r.rv == 0) {
        assert_true(out.len < sizeof r.text);
        memcpy(r.text, out.data, out.len);
        r.len = out.len;
    } else {
        assert_int_equal(out.len, 0); /* nothing appended on a failure */
    }
    lc_buf_free(&out);
    free(copy);
    return r;
}

/* A string literal's bytes, NULs in it included. */
#define RUN_LITERAL(x, literal, rng) run_n(x, literal, sizeof(literal) - 1, rng)

#define RUN_INTO(x, literal, out, type) \
    lc_extractor_run(x, literal, sizeof(literal) - 1, NULL, out, type)

static result_t run(const lc_extractor_t *x, const char *body)
{
    uint64_t rng = 42;
    return run_n(x, body, strlen(body), &rng);
}

/* Runs x over body and checks the value and type it gives; frees x. */
static void expect(lc_extractor_t *x, const char *body, const char *want, uint8_t type)
{
    result_t r = run(x, body);
    if (r.rv != 0)
        fail_msg("over %.200s: returned %d, wanted \"%s\"", body, r.rv, want);
    assert_string_equal(r.text, want);
    assert_int_equal(r.type, type);
    lc_extractor_free(x);
}

static void expect_rv(lc_extractor_t *x, const char *body, int want)
{
    result_t r = run(x, body);
    if (r.rv != want)
        fail_msg("over %.200s: returned %d (\"%s\"), wanted %d", body, r.rv, r.text, want);
    lc_extractor_free(x);
}

/* What jansson makes of a LC_PICK_ALL result: it must be a JSON array. */
static void assert_json_array(const char *text, size_t want_size)
{
    json_error_t err;
    json_t *j = json_loads(text, JSON_ALLOW_NUL, &err);
    if (j == NULL)
        fail_msg("%s: %s", text, err.text);
    assert_true(json_is_array(j));
    assert_int_equal(json_array_size(j), want_size);
    json_decref(j);
}

/* json --------------------------------------------------------------------- */

static const char items[] = "{\"items\":[{\"id\":\"a\\\"1\",\"n\":1},{\"id\":2,\"n\":2},"
                            "{\"id\":{\"deep\":[true]},\"n\":3},{\"n\":4},{\"id\":null}]}";

static void test_json_picks(void **state)
{
    expect(json_x("$.items[*].id", LC_PICK_FIRST), items, "a\"1", LC_V_STRING);
    expect(json_x("$.items[*].id", LC_PICK_LAST), items, "null", LC_V_NULL);
    expect(json_x("$.items[*].id", LC_PICK_ALL), items,
           "[\"a\\\"1\",2,{\"deep\":[true]},null]", LC_V_JSON);
    expect(json_x("$.items[*].id", LC_PICK_COUNT), items, "4", LC_V_NUMBER);
    expect(json_x("$.items[*]", LC_PICK_COUNT), items, "5", LC_V_NUMBER);
    expect(json_x("$.items[1].id", LC_PICK_FIRST), items, "2", LC_V_NUMBER);
    expect(json_x("$.items[2].id", LC_PICK_FIRST), items, "{\"deep\":[true]}", LC_V_JSON);
    expect(json_x("$.items[2].id.deep[0]", LC_PICK_LAST), items, "true", LC_V_BOOL);
    expect(json_x("$.items[-1]", LC_PICK_FIRST), items, "{\"id\":null}", LC_V_JSON);
    lc_extractor_t *x = json_x("$.items[*].id", LC_PICK_ALL);
    result_t r = run(x, items);
    assert_json_array(r.text, 4);
    lc_extractor_free(x);
}

static void test_json_strings_decoded(void **state)
{
    expect(json_x("$.s", LC_PICK_FIRST), "{\"s\":\"a\\nb\\u00e9\\ud83d\\ude00\\\\\"}",
           "a\nb\xc3\xa9\xf0\x9f\x98\x80\\", LC_V_STRING);
    /* \u0000 decodes to a NUL byte inside the value, which keeps its length. */
    lc_extractor_t *x = json_x("$.s", LC_PICK_FIRST);
    result_t r = run(x, "{\"s\":\"x\\u0000y\"}");
    assert_int_equal(r.rv, 0);
    assert_int_equal(r.len, 3);
    assert_memory_equal(r.text, "x\0y", 3);
    lc_extractor_free(x);
    /* A lone surrogate cannot be decoded: the body is not valid JSON text. */
    expect_rv(json_x("$.s", LC_PICK_FIRST), "{\"s\":\"\\ud800\"}", LC_EINVAL);
    /* pick all keeps a string's JSON text as it came. */
    expect(json_x("$[*]", LC_PICK_ALL), "[\"\\ud800\",\"\\n\"]", "[\"\\ud800\",\"\\n\"]", LC_V_JSON);
}

static void test_json_misses_and_errors(void **state)
{
    expect_rv(json_x("$.none", LC_PICK_FIRST), items, LC_ENOTFOUND);
    expect_rv(json_x("$.none", LC_PICK_LAST), items, LC_ENOTFOUND);
    expect_rv(json_x("$.none", LC_PICK_RANDOM), items, LC_ENOTFOUND);
    expect_rv(json_x("$.none[*]", LC_PICK_ALL), items, LC_ENOTFOUND);
    /* A count of nothing is a value, not a miss. */
    expect(json_x("$.none[*]", LC_PICK_COUNT), items, "0", LC_V_NUMBER);
    expect(json_x("$[*]", LC_PICK_COUNT), "[]", "0", LC_V_NUMBER);
    /* Not JSON where it is read. */
    expect_rv(json_x("$.a", LC_PICK_FIRST), "<html>502</html>", LC_EINVAL);
    expect_rv(json_x("$.a", LC_PICK_FIRST), "", LC_EINVAL);
    expect_rv(json_x("$[*]", LC_PICK_COUNT), "[1,2,", LC_EINVAL);
    expect_rv(json_x("$[*]", LC_PICK_LAST), "[1,2,@", LC_EINVAL);
    /* pick first stops at the first match, before the bad part. */
    expect(json_x("$[*]", LC_PICK_FIRST), "[1,2,@", "1", LC_V_NUMBER);
    /* A compile error says where. */
    lc_extractor_t *x = (lc_extractor_t *)1;
    char err[256];
    assert_int_equal(lc_extractor_json(&x, "$.items[", LC_PICK_FIRST, err, sizeof err), LC_EINVAL);
    assert_null(x);
    assert_string_equal(err, "$.items[: expected a number, '*' or a quoted name at offset 8");
    assert_int_equal(lc_extractor_json(&x, "$.a", (enum lc_pick)9, err, sizeof err), LC_EINVAL);
    assert_null(x);
    assert_non_null(strstr(err, "unknown pick"));
}

static void test_appends_and_keeps_out(void **state)
{
    lc_extractor_t *x = json_x("$.a", LC_PICK_FIRST);
    lc_buf_t out = {0};
    uint8_t type = 0xff;
    assert_int_equal(lc_buf_append(&out, "prefix:", 7), 0);
    assert_int_equal(RUN_INTO(x, "{\"a\":\"v\"}", &out, &type), 0);
    assert_string_equal(out.data, "prefix:v");
    /* A failure leaves out as it was, type untouched. */
    type = 0xff;
    assert_int_equal(RUN_INTO(x, "{\"b\":1}", &out, &type), LC_ENOTFOUND);
    assert_int_equal(RUN_INTO(x, "{\"a\":\"\\ud800\"}", &out, &type), LC_EINVAL);
    assert_string_equal(out.data, "prefix:v");
    assert_int_equal(out.len, 8);
    lc_extractor_free(x);
    /* pick all that fails half way leaves nothing of its array. */
    x = json_x("$[*]", LC_PICK_ALL);
    assert_int_equal(RUN_INTO(x, "[1,2,@", &out, &type), LC_EINVAL);
    assert_string_equal(out.data, "prefix:v");
    lc_extractor_free(x);
    lc_buf_free(&out);
    /* A NULL body of length 0 is an empty body. */
    x = between_x("", "", LC_PICK_FIRST);
    assert_int_equal(lc_extractor_run(x, NULL, 0, NULL, &out, &type), 0);
    assert_int_equal(out.len, 0);
    assert_int_equal(type, LC_V_STRING);
    lc_extractor_free(x);
    lc_buf_free(&out);
}

/* pick random ---------------------------------------------------------------- */

static void test_random_is_uniform_and_seeded(void **state)
{
    lc_extractor_t *x = json_x("$[*]", LC_PICK_RANDOM);
    const char *body = "[\"a\",\"b\",\"c\",\"d\"]";
    int seen[4] = {0};
    uint64_t rng = 0x9E3779B97F4A7C15ULL;
    for (int i = 0; i < 4000; i++) {
        result_t r = run_n(x, body, strlen(body), &rng);
        assert_int_equal(r.rv, 0);
        assert_int_equal(r.type, LC_V_STRING);
        assert_int_equal(r.len, 1);
        seen[r.text[0] - 'a']++;
    }
    for (int i = 0; i < 4; i++)
        assert_in_range(seen[i], 850, 1150);
    /* The same state gives the same pick; the state moves on. */
    uint64_t a = 7, b = 7;
    result_t ra = run_n(x, body, strlen(body), &a), rb = run_n(x, body, strlen(body), &b);
    assert_string_equal(ra.text, rb.text);
    assert_int_equal(a, b);
    assert_int_not_equal(a, 7);
    /* One match is always the one. */
    rng = 3;
    result_t one = RUN_LITERAL(x, "[\"only\"]", &rng);
    assert_string_equal(one.text, "only");
    lc_extractor_free(x);
    /* The other picks need no generator. */
    expect(json_x("$[*]", LC_PICK_LAST), body, "d", LC_V_STRING);
}

/* regex -------------------------------------------------------------------- */

static void test_regex_groups(void **state)
{
    const char *body = "id=17; name=alice; id=23; name=bob";
    expect(regex_x("id=(\\d+)", NULL, LC_PICK_FIRST), body, "17", LC_V_STRING);
    expect(regex_x("id=\\d+", NULL, LC_PICK_FIRST), body, "id=17", LC_V_STRING);
    expect(regex_x("id=(\\d+)", NULL, LC_PICK_LAST), body, "23", LC_V_STRING);
    expect(regex_x("id=(\\d+); name=(\\w+)", "2", LC_PICK_LAST), body, "bob", LC_V_STRING);
    expect(regex_x("id=(\\d+); name=(\\w+)", "0", LC_PICK_FIRST), body, "id=17; name=alice",
           LC_V_STRING);
    expect(regex_x("id=(?<id>\\d+); name=(?<who>\\w+)", "who", LC_PICK_FIRST), body, "alice",
           LC_V_STRING);
    expect(regex_x("id=(?<id>\\d+)", "id", LC_PICK_ALL), body, "[\"17\",\"23\"]", LC_V_JSON);
    expect(regex_x("id=(\\d+)", NULL, LC_PICK_COUNT), body, "2", LC_V_NUMBER);
    /* Numbers stay strings: a regex value is text. */
    lc_extractor_t *x = regex_x("(\\d+)", NULL, LC_PICK_FIRST);
    result_t r = run(x, "n=5");
    assert_int_equal(r.type, LC_V_STRING);
    lc_extractor_free(x);
}

static void test_regex_misses_and_odd_matches(void **state)
{
    expect_rv(regex_x("nope(\\d)", NULL, LC_PICK_FIRST), "abc", LC_ENOTFOUND);
    expect_rv(regex_x("nope(\\d)", NULL, LC_PICK_ALL), "abc", LC_ENOTFOUND);
    expect(regex_x("nope(\\d)", NULL, LC_PICK_COUNT), "abc", "0", LC_V_NUMBER);
    expect_rv(regex_x("x", NULL, LC_PICK_FIRST), "", LC_ENOTFOUND);
    /* A match in which the group took no part is not counted. */
    expect(regex_x("(a)|b", NULL, LC_PICK_COUNT), "b a b a", "2", LC_V_NUMBER);
    expect_rv(regex_x("(a)|b", NULL, LC_PICK_FIRST), "bbb", LC_ENOTFOUND);
    /* Empty matches advance: each position once, no endless loop. */
    expect(regex_x("x*", NULL, LC_PICK_COUNT), "axxb", "4", LC_V_NUMBER); /* "" "xx" "" "" */
    expect(regex_x("(x*)", NULL, LC_PICK_ALL), "axxb", "[\"\",\"xx\",\"\",\"\"]", LC_V_JSON);
    expect(regex_x("\\b", NULL, LC_PICK_COUNT), "ab cd", "4", LC_V_NUMBER);
    /* Bytes: NULs, bytes that are not UTF-8. */
    lc_extractor_t *x = regex_x("k=([^;]*);", NULL, LC_PICK_ALL);
    result_t r = RUN_LITERAL(x, "k=a\0b;k=\xff\xfe;k=\"\\\n;", NULL);
    assert_int_equal(r.rv, 0);
    assert_string_equal(r.text, "[\"a\\u0000b\",\"\xef\xbf\xbd\xef\xbf\xbd\",\"\\\"\\\\\\n\"]");
    assert_json_array(r.text, 3);
    lc_extractor_free(x);
    x = regex_x("k=([^;]*);", NULL, LC_PICK_FIRST);
    r = RUN_LITERAL(x, "k=\xff\0;", NULL);
    assert_int_equal(r.len, 2);
    assert_memory_equal(r.text, "\xff\0", 2);
    lc_extractor_free(x);
}

static void assert_regex_error(const char *pattern, const char *group, const char *want)
{
    lc_extractor_t *x = (lc_extractor_t *)1;
    char err[256] = "";
    assert_int_equal(lc_extractor_regex(&x, pattern, group, LC_PICK_FIRST, err, sizeof err),
                     LC_EINVAL);
    assert_null(x);
    if (strstr(err, want) == NULL)
        fail_msg("%s: error \"%s\" lacks \"%s\"", pattern, err, want);
}

static void test_regex_compile_errors(void **state)
{
    assert_regex_error("id=(\\d+", NULL, "missing closing parenthesis at offset 7");
    assert_regex_error("a[b", NULL, "missing terminating ] for character class at offset 3");
    assert_regex_error("*x", NULL, "quantifier does not follow a repeatable item at offset 0");
    assert_regex_error("(a)(b)", "3", "no group 3 (the pattern has 2)");
    assert_regex_error("abc", "1", "no group 1 (the pattern has 0)");
    assert_regex_error("(a)", "99999999999999999999", "no group 99999999999999999999");
    assert_regex_error("(?<id>a)", "name", "no group named 'name'");
    assert_regex_error("(a)", "", "no group named ''");
}

/* A pattern that backtracks exponentially, over a long body: the match limit
 * ends it within milliseconds, an error rather than a hung engine. */
static void test_regex_runaway_is_bounded(void **state)
{
    size_t n = 64 * 1024;
    char *body = malloc(n);
    assert_non_null(body);
    memset(body, 'a', n - 1);
    body[n - 1] = '!';
    const char *patterns[] = {"^(a+)+$", "(a|aa)+$", "(\\w+\\s?)+$", "(.*a){20}z", "((a*)*)*b$"};
    enum lc_pick picks[] = {LC_PICK_FIRST, LC_PICK_COUNT, LC_PICK_ALL};
    for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++) {
        for (size_t k = 0; k < sizeof picks / sizeof picks[0]; k++) {
            lc_extractor_t *x = regex_x(patterns[i], NULL, picks[k]);
            uint64_t t0 = lc_mono_ns();
            result_t r = run_n(x, body, n, NULL);
            double ms = (double)(lc_mono_ns() - t0) / 1e6;
            /* A limit, or a pattern PCRE2 sees cannot match (a count of 0). */
            if (r.rv != LC_EINVAL && r.rv != LC_ENOTFOUND && strcmp(r.text, "0") != 0)
                fail_msg("%s: returned %d (%s)", patterns[i], r.rv, r.text);
            if (ms > 2000)
                fail_msg("%s took %.0f ms", patterns[i], ms);
            if (k == 0)
                printf("runaway: %-12s on %zu bytes: %s in %.1f ms\n", patterns[i], n,
                       r.rv == LC_EINVAL ? "limit" : "no match", ms);
            lc_extractor_free(x);
        }
    }
    /* The thread's scratch is still good after a limit was hit. */
    expect(regex_x("(a{3})!", NULL, LC_PICK_FIRST), "xaaaa!", "aaa", LC_V_STRING);
    free(body);
}

static void test_regex_scratch_grows_and_is_freed(void **state)
{
    /* A pattern with more groups after one with few: the thread's match data grows. */
    expect(regex_x("(a)", NULL, LC_PICK_FIRST), "a", "a", LC_V_STRING);
    expect(regex_x("(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)", "11", LC_PICK_FIRST), "abcdefghijk", "k",
           LC_V_STRING);
    expect(regex_x("(a)", NULL, LC_PICK_FIRST), "a", "a", LC_V_STRING);
    lc_extract_thread_cleanup();
    lc_extract_thread_cleanup(); /* twice is harmless */
    expect(regex_x("(b)", NULL, LC_PICK_FIRST), "ab", "b", LC_V_STRING);
    lc_extract_thread_cleanup();
}

/* between ---------------------------------------------------------------- */

static void test_between(void **state)
{
    const char *body = "<a href=\"/x\">X</a> <a href=\"/y\">Y</a>";
    expect(between_x("href=\"", "\"", LC_PICK_FIRST), body, "/x", LC_V_STRING);
    expect(between_x("href=\"", "\"", LC_PICK_LAST), body, "/y", LC_V_STRING);
    expect(between_x("href=\"", "\"", LC_PICK_ALL), body, "[\"/x\",\"/y\"]", LC_V_JSON);
    expect(between_x("href=\"", "\"", LC_PICK_COUNT), body, "2", LC_V_NUMBER);
    expect(between_x("<a", "</a>", LC_PICK_LAST), body, " href=\"/y\">Y", LC_V_STRING);
    /* Empty boundaries: from the start, to the end, the whole body. */
    expect(between_x("", " ", LC_PICK_FIRST), "first second third", "first", LC_V_STRING);
    expect(between_x("", " ", LC_PICK_COUNT), "first second third", "1", LC_V_NUMBER);
    expect(between_x("second ", "", LC_PICK_FIRST), "first second third", "third", LC_V_STRING);
    expect(between_x("", "", LC_PICK_ALL), "all", "[\"all\"]", LC_V_JSON);
    expect(between_x("x", "", LC_PICK_FIRST), "abx", "", LC_V_STRING);
    /* Adjacent boundaries give an empty value, which is a match. */
    expect(between_x("[", "]", LC_PICK_ALL), "[][a]", "[\"\",\"a\"]", LC_V_JSON);
    /* The same text on both sides: pairs, each right ends one value. */
    expect(between_x("\"", "\"", LC_PICK_ALL), "a\"b\"c\"d\"e", "[\"b\",\"d\"]", LC_V_JSON);
}

static void test_between_misses(void **state)
{
    /* A left boundary without a right one after it is no match... */
    expect_rv(between_x("token=", ";", LC_PICK_FIRST), "token=abc", LC_ENOTFOUND);
    expect_rv(between_x("token=", ";", LC_PICK_FIRST), "x;token=abc", LC_ENOTFOUND);
    expect(between_x("token=", ";", LC_PICK_COUNT), "token=abc", "0", LC_V_NUMBER);
    /* ...nor is a right boundary alone, nor an empty body. */
    expect_rv(between_x("token=", ";", LC_PICK_FIRST), "abc;", LC_ENOTFOUND);
    expect_rv(between_x("a", "b", LC_PICK_FIRST), "", LC_ENOTFOUND);
    /* The left boundary cut by the end of the body. */
    expect_rv(between_x("token=", ";", LC_PICK_FIRST), "xx toke", LC_ENOTFOUND);
    /* Boundaries and values with NUL bytes and invalid UTF-8. */
    lc_extractor_t *x = between_x("<", ">", LC_PICK_ALL);
    result_t r = RUN_LITERAL(x, "<\0\xff><>", NULL);
    assert_int_equal(r.rv, 0);
    assert_string_equal(r.text, "[\"\\u0000\xef\xbf\xbd\",\"\"]");
    lc_extractor_free(x);
    /* A missing right boundary after a good pair still gives the pair. */
    expect(between_x("<", ">", LC_PICK_LAST), "<a> <b", "a", LC_V_STRING);
}

/* Threads: one extractor of each kind shared by two threads -------------- */

typedef struct worker_arg_s {
    const lc_extractor_t *json, *regex, *between;
    int id;
    int failures;
} worker_arg_t;

static void *worker_main(void *p)
{
    worker_arg_t *a = p;
    char body[256], want[32];
    lc_buf_t out = {0};
    uint8_t type;
    uint64_t rng = (uint64_t)a->id + 1;
    for (int i = 0; i < 20000; i++) {
        int v = a->id * 1000000 + i;
        snprintf(body, sizeof body,
                 "{\"pad\":[1,2,3],\"data\":{\"token\":\"t%d\"},\"n\":[%d,%d]} id=%d;", v, v,
                 v + 1, v);
        snprintf(want, sizeof want, "t%d", v);
        out.len = 0;
        if (lc_extractor_run(a->json, body, strlen(body), &rng, &out, &type) != 0 ||
            strcmp(out.data, want) != 0)
            a->failures++;
        snprintf(want, sizeof want, "%d", v);
        out.len = 0;
        if (lc_extractor_run(a->regex, body, strlen(body), &rng, &out, &type) != 0 ||
            strcmp(out.data, want) != 0)
            a->failures++;
        out.len = 0;
        if (lc_extractor_run(a->between, body, strlen(body), &rng, &out, &type) != 0 ||
            strcmp(out.data, want) != 0)
            a->failures++;
    }
    lc_buf_free(&out);
    lc_extract_thread_cleanup();
    return NULL;
}

static void test_two_threads_share_extractors(void **state)
{
    lc_extractor_t *json = json_x("$.data.token", LC_PICK_FIRST);
    lc_extractor_t *regex = regex_x("id=(?<id>\\d+);", "id", LC_PICK_LAST);
    lc_extractor_t *between = between_x("id=", ";", LC_PICK_RANDOM);
    worker_arg_t args[2] = {{json, regex, between, 1, 0}, {json, regex, between, 2, 0}};
    pthread_t threads[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, worker_main, &args[i]), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(threads[i], NULL), 0);
    assert_int_equal(args[0].failures, 0);
    assert_int_equal(args[1].failures, 0);
    lc_extractor_free(json);
    lc_extractor_free(regex);
    lc_extractor_free(between);
}

/* Micro-benchmark (printed, not asserted) ------------------------------- */

static void bench_one(const char *what, const lc_extractor_t *x, const char *body, size_t len,
                      int rounds)
{
    lc_buf_t out = {0};
    uint8_t type;
    uint64_t rng = 1;
    double best = 0;
    for (int batch = 0; batch < 5; batch++) {
        uint64_t t0 = lc_mono_ns();
        for (int i = 0; i < rounds; i++) {
            out.len = 0;
            assert_int_equal(lc_extractor_run(x, body, len, &rng, &out, &type), 0);
        }
        double ns = (double)(lc_mono_ns() - t0) / rounds;
        best = batch == 0 || ns < best ? ns : best;
    }
    printf("bench: %-34s on %5zu bytes: %8.1f ns/run\n", what, len, best);
    lc_buf_free(&out);
}

static void test_bench(void **state)
{
    static char list[16384];
    size_t list_len = items_body(list, sizeof list);
    size_t login_len = strlen(login_body);
    struct {
        const char *what;
        lc_extractor_t *x;
        const char *body;
        size_t len;
        int rounds;
    } cases[] = {
        {"json $.data.token", json_x("$.data.token", LC_PICK_FIRST), login_body, login_len, 40000},
        {"regex \"token\":\"([^\"]+)\"", regex_x("\"token\":\"([^\"]+)\"", NULL, LC_PICK_FIRST),
         login_body, login_len, 40000},
        {"between \"token\":\" and \"", between_x("\"token\":\"", "\"", LC_PICK_FIRST), login_body,
         login_len, 40000},
        {"json $.next", json_x("$.next", LC_PICK_FIRST), list, list_len, 4000},
        {"json $.items[*].id random", json_x("$.items[*].id", LC_PICK_RANDOM), list, list_len, 4000},
        {"json $.items[*] count", json_x("$.items[*]", LC_PICK_COUNT), list, list_len, 4000},
        {"regex \"next\":\"([^\"]*)\"", regex_x("\"next\":\"([^\"]*)\"", NULL, LC_PICK_FIRST), list,
         list_len, 4000},
        {"regex \"id\":\"([^\"]*)\" all", regex_x("\"id\":\"([^\"]*)\"", NULL, LC_PICK_ALL), list,
         list_len, 4000},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bench_one(cases[i].what, cases[i].x, cases[i].body, cases[i].len, cases[i].rounds);
        lc_extractor_free(cases[i].x);
    }
    lc_extract_thread_cleanup();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_picks),
        cmocka_unit_test(test_json_strings_decoded),
        cmocka_unit_test(test_json_misses_and_errors),
        cmocka_unit_test(test_appends_and_keeps_out),
        cmocka_unit_test(test_random_is_uniform_and_seeded),
        cmocka_unit_test(test_regex_groups),
        cmocka_unit_test(test_regex_misses_and_odd_matches),
        cmocka_unit_test(test_regex_compile_errors),
        cmocka_unit_test(test_regex_runaway_is_bounded),
        cmocka_unit_test(test_regex_scratch_grows_and_is_freed),
        cmocka_unit_test(test_between),
        cmocka_unit_test(test_between_misses),
        cmocka_unit_test(test_two_threads_share_extractors),
        cmocka_unit_test(test_bench),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    lc_extract_thread_cleanup();
    return failed;
}
