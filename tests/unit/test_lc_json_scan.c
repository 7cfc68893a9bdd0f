/* test_lc_json_scan.c — the path-directed JSON scanner, tried as an attacker
 * would: every path form, hostile bodies (cut short, nested deep, invalid
 * where it is read and where it is not), the string codec; then ns per scan. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_bodies.h"
#include "lc_clock.h"
#include "lc_err.h"
#include "lc_json_scan.h"

/* Scanning helpers -------------------------------------------------------- */

/* What the callback saw: each match as "<type>:<text>" joined by '|', where
 * type is s (string), S (string with escapes), n, b, z (null) or j. */
typedef struct seen_s {
    const char *body;
    size_t len;
    char text[4096];
    int count;
    int stop_after; /* 0: never stop */
} seen_t;

static bool record_cb(void *ctx, const lc_jmatch_t *m)
{
    seen_t *seen = ctx;
    /* Every match lies inside the body. */
    assert_true(m->v.data >= seen->body && m->v.len <= seen->len);
    assert_true((size_t)(m->v.data - seen->body) <= seen->len - m->v.len);
    static const char letters[] = {[LC_V_STRING] = 's', [LC_V_NUMBER] = 'n', [LC_V_BOOL] = 'b',
                                   [LC_V_NULL] = 'z', [LC_V_JSON] = 'j'};
    char type = m->escaped ? 'S' : letters[m->v.type];
    size_t n = strlen(seen->text);
    snprintf(seen->text + n, sizeof seen->text - n, "%s%c:%.*s", seen->count ? "|" : "", type,
             (int)m->v.len, m->v.data);
    seen->count++;
    return seen->stop_after == 0 || seen->count < seen->stop_after;
}

static lc_jpath_t *compile_ok(const char *src)
{
    lc_jpath_t *p = NULL;
    char err[256] = "";
    int rv = lc_jpath_compile(&p, src, err, sizeof err);
    if (rv != 0)
        fail_msg("%s: %s", src, err);
    assert_non_null(p);
    return p;
}

/* Scans a copy of body[0..len) of exactly len bytes (no NUL after it, so
 * ASan sees any read past the end). Returns the scan's result. */
static int scan_n(const char *src, const char *body, size_t len, seen_t *seen)
{
    lc_jpath_t *p = compile_ok(src);
    char *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, body, len);
    int stop_after = seen->stop_after;
    memset(seen, 0, sizeof *seen);
    seen->stop_after = stop_after;
    seen->body = copy;
    seen->len = len;
    int rv = lc_jpath_scan(p, copy, len, record_cb, seen);
    seen->body = NULL;
    free(copy);
    lc_jpath_free(p);
    return rv;
}

/* A string literal's bytes, NULs in it included. */
#define SCAN_LITERAL(src, literal, seen) scan_n(src, literal, sizeof(literal) - 1, seen)

/* The matches of src over body, joined (see seen_t); fails unless the scan returns want. */
static const char *scan_want(const char *src, const char *body, int want)
{
    static seen_t seen;
    seen.stop_after = 0;
    int rv = scan_n(src, body, strlen(body), &seen);
    if (rv != want)
        fail_msg("%s over %.200s: returned %d, wanted %d (saw %s)", src, body, rv, want, seen.text);
    return seen.text;
}

static const char *matches(const char *src, const char *body)
{
    return scan_want(src, body, 0);
}

static void assert_invalid(const char *src, const char *body)
{
    scan_want(src, body, LC_EINVAL);
}

/* Compiling paths ----------------------------------------------------------- */

static void assert_compile_error(const char *src, const char *want)
{
    lc_jpath_t *p = NULL;
    char err[256] = "";
    assert_int_equal(lc_jpath_compile(&p, src, err, sizeof err), LC_EINVAL);
    assert_null(p);
    if (strstr(err, want) == NULL)
        fail_msg("%s: error \"%s\" lacks \"%s\"", src, err, want);
}

static void test_compile_forms(void **state)
{
    const char *ok[] = {"$", "$.a", "$.a.b.c", "$['a b']", "$[\"a b\"]", "$[0]", "$[-1]",
                        "$[*]", "$.*", "$.items[*].id", "$[0][1][-2]['x'][\"y\"].z[*]",
                        "$.caf\xc3\xa9", "$.a-b_c$d", "$['']", "$['it\\'s']", "$[\"q\\\"\"]",
                        "$['back\\\\slash']", "$[2147483647]", "$[-2147483647]", "$.0"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        lc_jpath_free(compile_ok(ok[i]));
    lc_jpath_t *p = compile_ok("$.a[0]");
    assert_false(lc_jpath_has_wildcard(p));
    lc_jpath_free(p);
    p = compile_ok("$.a[*].b");
    assert_true(lc_jpath_has_wildcard(p));
    lc_jpath_free(p);
}

static void test_compile_errors(void **state)
{
    assert_compile_error("$.items[", "$.items[: expected a number, '*' or a quoted name at offset 8");
    assert_compile_error("", "a path starts with '$' at offset 0");
    assert_compile_error("items", "a path starts with '$' at offset 0");
    assert_compile_error("$items", "expected '.' or '[' at offset 1");
    assert_compile_error("$..a", "recursive descent '..' is not supported at offset 1");
    assert_compile_error("$.", "expected a name or '*' after '.' at offset 2");
    assert_compile_error("$.a b", "unexpected character ' ' in a name");
    assert_compile_error("$.a]", "unexpected character ']' in a name");
    assert_compile_error("$[?(@.x)]", "filter and script expressions are not supported at offset 2");
    assert_compile_error("$[0:2]", "slices are not supported at offset 3");
    assert_compile_error("$[0,1]", "unions are not supported at offset 3");
    assert_compile_error("$[-0]", "-0 is not an index");
    assert_compile_error("$[-]", "expected digits after '-' at offset 3");
    assert_compile_error("$[2147483648]", "index too large at offset 2");
    assert_compile_error("$[99999999999999999999999]", "index too large");
    assert_compile_error("$[*", "expected ']' at offset 3");
    assert_compile_error("$[0", "expected ']' at offset 3");
    assert_compile_error("$['abc", "unterminated quoted name at offset 6");
    assert_compile_error("$['abc'", "expected ']' at offset 7");
    assert_compile_error("$['a\\x']", "escapes only");
    assert_compile_error("$[ 0]", "expected a number, '*' or a quoted name at offset 2");
    assert_compile_error("$[a]", "expected a number, '*' or a quoted name at offset 2");
    /* 32 segments are allowed, not 33. */
    char src[128] = "$";
    for (int i = 0; i < 32; i++)
        strcat(src, "[0]");
    lc_jpath_free(compile_ok(src));
    strcat(src, ".a");
    assert_compile_error(src, "more than 32 segments at offset 97");
    /* A short errmsg is cut, never overrun. */
    char tiny[8];
    lc_jpath_t *p = NULL;
    assert_int_equal(lc_jpath_compile(&p, "$.items[", tiny, sizeof tiny), LC_EINVAL);
    assert_int_equal(strlen(tiny), sizeof tiny - 1);
}

/* Names and indices ---------------------------------------------------------- */

static void test_names(void **state)
{
    const char *body = "{\"a\":1,\"b\":{\"c\":\"x\"},\"a b\":true,\"q\\\"\":null,\"\":2}";
    assert_string_equal(matches("$.a", body), "n:1");
    assert_string_equal(matches("$.b", body), "j:{\"c\":\"x\"}");
    assert_string_equal(matches("$.b.c", body), "s:x");
    assert_string_equal(matches("$['b']['c']", body), "s:x");
    assert_string_equal(matches("$[\"a b\"]", body), "b:true");
    assert_string_equal(matches("$['q\"']", body), "z:null");
    assert_string_equal(matches("$['']", body), "n:2");
    assert_string_equal(matches("$.missing", body), "");
    assert_string_equal(matches("$.b.missing", body), "");
    assert_string_equal(matches("$.a.b", body), "");    /* a number has no members */
    assert_string_equal(matches("$.b[0]", body), "");   /* an object has no elements */
    assert_string_equal(matches("$[0]", body), "");
    assert_string_equal(matches("$.A", body), "");      /* names are case-sensitive */
    assert_string_equal(matches("$", body), "j:{\"a\":1,\"b\":{\"c\":\"x\"},\"a b\":true,\"q\\\"\":null,\"\":2}");
}

static void test_escaped_keys(void **state)
{
    /* Keys compare decoded: \u escapes, a surrogate pair, an escaped slash. */
    assert_string_equal(matches("$.token", "{\"t\\u006fken\":\"x\"}"), "s:x");
    assert_string_equal(matches("$['\xf0\x9f\x98\x80']", "{\"\\ud83d\\ude00\":1}"), "n:1");
    assert_string_equal(matches("$['a/b']", "{\"a\\/b\":1}"), "n:1");
    assert_string_equal(matches("$['a\\\\b']", "{\"a\\\\b\":1}"), "n:1");
    /* A prefix or an extension of the name is another name. */
    assert_string_equal(matches("$.tok", "{\"t\\u006fken\":1}"), "");
    assert_string_equal(matches("$.tokens", "{\"t\\u006fken\":1}"), "");
    /* A key with a lone surrogate matches nothing, and is no error. */
    assert_string_equal(matches("$.a", "{\"\\ud800\":1,\"a\":2}"), "n:2");
}

static void test_duplicate_keys_first_wins(void **state)
{
    assert_string_equal(matches("$.a", "{\"a\":1,\"a\":2}"), "n:1");
    assert_string_equal(matches("$.a.b", "{\"a\":{\"x\":0},\"a\":{\"b\":2}}"), "");
    /* Under a wildcard, each object's first "a". */
    assert_string_equal(matches("$[*].a", "[{\"a\":1,\"a\":2},{\"a\":3}]"), "n:1|n:3");
}

static void test_indices(void **state)
{
    const char *body = "[10, 11, [20, 21], {\"k\": 30}]";
    assert_string_equal(matches("$[0]", body), "n:10");
    assert_string_equal(matches("$[1]", body), "n:11");
    assert_string_equal(matches("$[2]", body), "j:[20, 21]");
    assert_string_equal(matches("$[2][1]", body), "n:21");
    assert_string_equal(matches("$[3].k", body), "n:30");
    assert_string_equal(matches("$[4]", body), "");
    assert_string_equal(matches("$[2147483647]", body), "");
    assert_string_equal(matches("$[-1]", body), "j:{\"k\": 30}");
    assert_string_equal(matches("$[-2][-1]", body), "n:21");
    assert_string_equal(matches("$[-4]", body), "n:10");
    assert_string_equal(matches("$[-5]", body), "");
    assert_string_equal(matches("$[-2147483647]", body), "");
    assert_string_equal(matches("$[0]", "[]"), "");
    assert_string_equal(matches("$[-1]", "[]"), "");
    assert_string_equal(matches("$[-1]", "[ ]"), "");
    assert_string_equal(matches("$[-1]", "{\"a\":1}"), "");
}

/* Negative indices further back than the scanner remembers rescan the array. */
static void test_negative_far_back(void **state)
{
    char body[512] = "[";
    for (int i = 0; i < 20; i++)
        sprintf(body + strlen(body), "%s{\"v\":%d}", i ? "," : "", i);
    strcat(body, "]");
    char want[32], path[32];
    for (int back = 1; back <= 20; back++) {
        snprintf(path, sizeof path, "$[-%d].v", back);
        snprintf(want, sizeof want, "n:%d", 20 - back);
        assert_string_equal(matches(path, body), want);
    }
    assert_string_equal(matches("$[-21].v", body), "");
    /* With a wildcard above, the scan goes on after the array to the next one. */
    assert_string_equal(matches("$[*][-9]", "[[1,2,3,4,5,6,7,8,9,10],[1],[1,2,3,4,5,6,7,8,9]]"),
                        "n:2|n:1");
}

/* Wildcards ----------------------------------------------------------------- */

static void test_wildcards(void **state)
{
    assert_string_equal(matches("$[*]", "[1,\"a\",true,null,[2],{\"b\":3}]"),
                        "n:1|s:a|b:true|z:null|j:[2]|j:{\"b\":3}");
    assert_string_equal(matches("$[*]", "{\"x\":1,\"y\":[2]}"), "n:1|j:[2]");
    assert_string_equal(matches("$.*", "{\"x\":1,\"y\":[2]}"), "n:1|j:[2]");
    assert_string_equal(matches("$[*]", "[]"), "");
    assert_string_equal(matches("$[*]", "{}"), "");
    assert_string_equal(matches("$[*]", "5"), "");
    assert_string_equal(matches("$.a[*]", "{\"a\":\"str\"}"), "");
    assert_string_equal(matches("$[*][*]", "[[1,2],{\"a\":3},4,[],[[5]]]"), "n:1|n:2|n:3|j:[5]");
    assert_string_equal(matches("$.items[*].id",
                                "{\"items\":[{\"id\":1},{\"x\":0},{\"id\":\"two\",\"id\":9},"
                                "{\"nested\":{\"id\":4}}],\"id\":5}"),
                        "n:1|s:two");
    assert_string_equal(matches("$.items[*].tags[-1]",
                                "{\"items\":[{\"tags\":[\"a\",\"b\"]},{\"tags\":[]},{\"tags\":[\"c\"]}]}"),
                        "s:b|s:c");
    assert_string_equal(matches("$[*].a[0]", "[{\"a\":[1,2]},{\"a\":{\"0\":9}},{\"b\":1},{\"a\":[3]}]"),
                        "n:1|n:3");
    assert_string_equal(matches("$[*][*][*]", "[[[1],[2,3]],[[4]]]"), "n:1|n:2|n:3|n:4");
    assert_string_equal(matches("$.*.*", "{\"a\":{\"x\":1,\"y\":2},\"b\":[3],\"c\":4}"), "n:1|n:2|n:3");
}

/* Values --------------------------------------------------------------------- */

static void test_value_types(void **state)
{
    const char *body = "{\"s\":\"plain\",\"e\":\"a\\\"b\\\\c\\u00e9\\n\",\"n\":-12.5e+3,\"z\":0,"
                       "\"big\":123456789012345678901234567890,\"t\":true,\"f\":false,\"nil\":null,"
                       "\"o\":{ \"a\" : [ 1 , 2 ] },\"a\":[],\"utf\":\"caf\xc3\xa9\",\"bad\":\"\xff\xfe\"}";
    assert_string_equal(matches("$.s", body), "s:plain");
    assert_string_equal(matches("$.e", body), "S:a\\\"b\\\\c\\u00e9\\n");
    assert_string_equal(matches("$.n", body), "n:-12.5e+3");
    assert_string_equal(matches("$.z", body), "n:0");
    assert_string_equal(matches("$.big", body), "n:123456789012345678901234567890");
    assert_string_equal(matches("$.t", body), "b:true");
    assert_string_equal(matches("$.f", body), "b:false");
    assert_string_equal(matches("$.nil", body), "z:null");
    assert_string_equal(matches("$.o", body), "j:{ \"a\" : [ 1 , 2 ] }");
    assert_string_equal(matches("$.a", body), "j:[]");
    assert_string_equal(matches("$.utf", body), "s:caf\xc3\xa9");
    /* Bytes that are not UTF-8 are a string's bytes as they came. */
    assert_string_equal(matches("$.bad", body), "s:\xff\xfe");
    /* A number of 10,000 digits is only text. */
    char *huge = malloc(10020);
    assert_non_null(huge);
    strcpy(huge, "{\"n\":");
    memset(huge + 5, '7', 10000);
    strcpy(huge + 10005, "}");
    seen_t seen = {.stop_after = 0};
    assert_int_equal(scan_n("$.n", huge, strlen(huge), &seen), 0);
    assert_int_equal(seen.count, 1);
    free(huge);
    /* Top-level scalars. */
    assert_string_equal(matches("$", "42"), "n:42");
    assert_string_equal(matches("$", " \"s\" "), "s:s");
    assert_string_equal(matches("$", "null"), "z:null");
}

static void test_whitespace(void **state)
{
    const char *body = "\r\n {\n\t\"a\" :\r\n [ 1 ,\n 2 ] ,\n \"b\"\t: { } \n}\n\n";
    assert_string_equal(matches("$.a[1]", body), "n:2");
    assert_string_equal(matches("$.b", body), "j:{ }");
    assert_string_equal(matches("$.c", body), "");
    assert_string_equal(matches("$.a[*]", body), "n:1|n:2");
}

/* Hostile bodies ----------------------------------------------------------- */

static void test_invalid_where_read(void **state)
{
    /* A scalar that is no JSON where the path walks (a member of an object it
     * entered, an element of an array it entered) is found, before the match
     * or in it. */
    const char *bad_scalars[] = {"01", "-01", "1.", ".5", "+1", "-", "1e", "1e+", "1.5e", "tru",
                                 "nul", "falsey", "\"a\nb\"", "\"a\tb\"", "\"\\x\"",
                                 "\"\\u12G4\"", "\"\\u12\"", "'s'", "x", "",
                                 "0x1F", "Infinity", "NaN", "@"};
    for (size_t i = 0; i < sizeof bad_scalars / sizeof bad_scalars[0]; i++) {
        char body[128];
        snprintf(body, sizeof body, "{\"x\":%s,\"a\":1}", bad_scalars[i]);
        assert_invalid("$.a", body);
        assert_invalid("$.x", body);
        snprintf(body, sizeof body, "[%s,1]", bad_scalars[i]);
        assert_invalid("$[1]", body);
        assert_invalid("$[-1]", body);
        assert_invalid("$[0]", body);
    }
    /* A container that is no JSON is found where it is selected or walked
     * through; where it is skipped only its end is looked for (below). */
    const char *bad_containers[] = {"[1,]", "[,1]", "[1 2]", "{,}", "{\"k\"}", "{\"k\":}",
                                    "{\"k\" 1}", "{1:2}", "{\"k\":1,}", "[01]", "{\"k\":tru}",
                                    "[\"a\nb\"]", "[1}", "{\"a\":1]", "[[1]}"};
    for (size_t i = 0; i < sizeof bad_containers / sizeof bad_containers[0]; i++) {
        char body[128];
        snprintf(body, sizeof body, "{\"x\":%s,\"a\":1}", bad_containers[i]);
        assert_invalid("$.x", body);
        assert_invalid("$.x[*]", body);
        assert_invalid("$.*", body);
        assert_invalid("$[*][*]", body);
        snprintf(body, sizeof body, "[%s]", bad_containers[i]);
        assert_invalid("$", body);
        assert_invalid("$[0]", body);
    }
    /* Not an object member name. */
    assert_invalid("$.a", "{x:1,\"a\":1}");
    assert_invalid("$.a", "{\"x\" 1,\"a\":1}");
    assert_invalid("$.a", "{\"x\":1 \"a\":1}");
    assert_invalid("$.a", "{\"x\":1,,\"a\":1}");
    /* Empty or blank bodies, or no JSON at all, are not JSON. */
    assert_invalid("$", "");
    assert_invalid("$.a", "  \n ");
    assert_invalid("$", "}");
    assert_invalid("$.a", "<html><body>502 Bad Gateway</body></html>");
}

/* A skipped container is read only to find its end: strings to their closing
 * quote (escapes skipped), brackets counted outside strings. */
static void test_skipped_containers(void **state)
{
    assert_string_equal(matches("$.a", "{\"x\":[1,,@ tru],\"a\":1}"), "n:1");
    assert_string_equal(matches("$.a", "{\"x\":{\"k\" 01},\"a\":1}"), "n:1");
    /* Brackets and escaped quotes inside strings do not count. */
    assert_string_equal(matches("$.a", "{\"x\":[\"]\",\"}\\\"]\",\"\\\\\",[\"[\"]],\"a\":1}"), "n:1");
    assert_string_equal(matches("$[1]", "[{\"s\":\"{{{{[[[[\"},2]"), "n:2");
    /* Long strings, escapes across the 64-byte blocks the skip reads. */
    char body[1024];
    for (int at = 50; at < 80; at++) {
        char pad[128];
        memset(pad, 'p', (size_t)at);
        pad[at] = '\0';
        snprintf(body, sizeof body, "{\"x\":[\"%s\\\"]\\\\\",\"%s\\\\\"],\"a\":1}", pad, pad);
        assert_string_equal(matches("$.a", body), "n:1");
    }
    /* An end that is not there is an error: an unterminated string, an
     * unbalanced bracket, a body cut inside the skipped container. */
    assert_invalid("$.a", "{\"x\":[\"abc],\"a\":1}");
    assert_invalid("$.a", "{\"x\":[[1],\"a\":1}");
    assert_invalid("$.a", "{\"x\":[1,2");
    assert_invalid("$.a", "{\"x\":{\"k\":\"v\\\"}");
    /* What follows the skipped container, where the path walks, is checked. */
    assert_invalid("$.a", "{\"x\":[1] \"a\":1}");
    assert_invalid("$.a", "{\"x\":[1]],\"a\":1}");
}

static void test_invalid_where_not_read(void **state)
{
    /* Past the match of a path without wildcard, nothing is read. */
    assert_string_equal(matches("$.a", "{\"a\":1, garbage"), "n:1");
    assert_string_equal(matches("$[0]", "[\"x\",]]]"), "s:x");
    assert_string_equal(matches("$.a.b", "{\"a\":{\"b\":[1,{}]}, }}} "), "j:[1,{}]");
    /* Once the first "a" was entered, no later member can match. */
    assert_string_equal(matches("$.a.b", "{\"a\":{\"c\":1},\"b\":@@"), "");
    /* With a wildcard the scan goes on, and finds the error after the matches. */
    assert_string_equal(scan_want("$[*]", "[1,2,@]", LC_EINVAL), "n:1|n:2");
    assert_string_equal(scan_want("$[*].a", "[{\"a\":1},@,{\"a\":2}]", LC_EINVAL), "n:1");
    /* The rest of an object after the member a name selected is skipped, not walked. */
    assert_string_equal(scan_want("$[*].a", "[{\"a\":1,\"b\":@},{\"a\":2}]", 0), "n:1|n:2");
    /* Trailing bytes after a whole root are an error when the scan got there. */
    assert_invalid("$.b", "{\"a\":1} x");
    assert_invalid("$[*]", "[1]]");
    assert_invalid("$[*]", "[1][2]");
    assert_invalid("$[*]", "{\"a\":1}}");
    /* A scalar where a container was wanted is read (it is short), a container not. */
    assert_invalid("$.a.b", "{\"a\":tru}");
    assert_invalid("$.a.b", "{\"a\":@");
    assert_string_equal(matches("$.a.b", "{\"a\":[@@@"), "");
    assert_string_equal(matches("$.b", "{\"a\":1} \n\t\r"), "");
    /* A selected root is whole only with nothing after it. */
    assert_string_equal(scan_want("$", "12]", LC_EINVAL), "n:12");
    assert_string_equal(scan_want("$", "{} x", LC_EINVAL), "j:{}");
    assert_string_equal(matches("$", "[1] \n"), "j:[1]");
}

static void test_truncated(void **state)
{
    /* A number at the very end of a cut body may have lost digits: not a value. */
    assert_invalid("$.a", "{\"a\":12");
    assert_invalid("$[0]", "[12");
    assert_invalid("$[*]", "[1,2");
    assert_invalid("$.a", "{\"a\":-");
    assert_invalid("$.a", "{\"a\":1.");
    assert_invalid("$.a", "{\"a\":1e");
    assert_invalid("$.a", "{\"a\":tr");
    assert_invalid("$.a", "{\"a\":true");
    assert_invalid("$.a", "{\"a\":\"abc");
    assert_invalid("$.a", "{\"a\":\"ab\\");
    assert_invalid("$.a", "{\"a\":\"ab\\u00");
    assert_invalid("$.a", "{\"a");
    assert_invalid("$.a", "{\"a\"");
    assert_invalid("$.a", "{\"a\":");
    assert_invalid("$.a", "{");
    assert_invalid("$[0]", "[");
    assert_invalid("$[-1]", "[1,2,");
    assert_invalid("$.b", "{\"a\":[1,{\"x\":[");
    /* ...but at the top level the end of the body ends the number. */
    assert_string_equal(matches("$", "12"), "n:12");
    assert_string_equal(matches("$", "-0.5e7"), "n:-0.5e7");
    /* A string or a container is whole at its closing byte. */
    assert_string_equal(matches("$.a", "{\"a\":\"abc\""), "s:abc");
    assert_string_equal(matches("$.a", "{\"a\":[1]"), "j:[1]");
    /* Every cut of a valid body either fails or gives what the whole gives. */
    const char *whole = "{\"k\":[1,\"two\",{\"x\":3.5e1}],\"m\":\"v\\\"w\",\"t\":{\"a\":[true]}}";
    const char *paths[] = {"$.t.a[0]", "$.k[*]", "$.k[-1].x", "$.m"};
    for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
        seen_t full = {.stop_after = 0}, cut = {.stop_after = 0};
        assert_int_equal(scan_n(paths[p], whole, strlen(whole), &full), 0);
        for (size_t n = 0; n < strlen(whole); n++) {
            int rv = scan_n(paths[p], whole, n, &cut);
            assert_true(rv == 0 || rv == LC_EINVAL);
            if (rv == 0)
                assert_string_equal(cut.text, full.text);
            else
                assert_int_equal(strncmp(cut.text, full.text, strlen(cut.text)), 0);
        }
    }
}

static void test_nul_bytes(void **state)
{
    seen_t seen = {.stop_after = 0};
    /* A raw NUL in a string is a control character: invalid. */
    assert_int_equal(SCAN_LITERAL("$.a", "{\"a\":\"x\0y\"}", &seen), LC_EINVAL);
    /* A NUL between tokens is no white space. */
    assert_int_equal(SCAN_LITERAL("$.b", "{\"a\":1,\0\"b\":2}", &seen), LC_EINVAL);
    /* A NUL after the match is past what a path without wildcard reads. */
    assert_int_equal(SCAN_LITERAL("$.a", "{\"a\":1}\0\0", &seen), 0);
    assert_string_equal(seen.text, "n:1");
    /* ...and after the root of a scan that read it all, trailing garbage. */
    assert_int_equal(SCAN_LITERAL("$.b", "{\"a\":1}\0", &seen), LC_EINVAL);
    /* The escape \u0000 is fine, and the match keeps its length. */
    assert_int_equal(SCAN_LITERAL("$.a", "{\"a\":\"x\\u0000y\"}", &seen), 0);
    assert_string_equal(seen.text, "S:x\\u0000y");
}

/* Depth: a body nested 100,000 deep fails fast; 256 is the limit. */
static char *nested(int depth, const char *inner)
{
    size_t n = strlen(inner);
    char *s = malloc(2 * (size_t)depth + n + 1);
    assert_non_null(s);
    memset(s, '[', (size_t)depth);
    memcpy(s + depth, inner, n);
    memset(s + depth + n, ']', (size_t)depth);
    s[2 * depth + n] = '\0';
    return s;
}

static void test_deep_nesting(void **state)
{
    seen_t seen = {.stop_after = 0};
    char *deep = nested(100000, "1");
    uint64_t t0 = lc_mono_ns();
    assert_int_equal(scan_n("$.a", deep, strlen(deep), &seen), LC_EINVAL); /* the root is checked */
    assert_int_equal(scan_n("$[0].a", deep, strlen(deep), &seen), 0); /* nothing past [0] read */
    assert_int_equal(scan_n("$", deep, strlen(deep), &seen), LC_EINVAL);
    assert_int_equal(scan_n("$[0]", deep, strlen(deep), &seen), LC_EINVAL);
    assert_int_equal(scan_n("$[-1]", deep, strlen(deep), &seen), LC_EINVAL);
    assert_int_equal(scan_n("$[*][*][*]", deep, strlen(deep), &seen), LC_EINVAL);
    /* Only opening brackets, never closed. */
    assert_int_equal(scan_n("$[1]", deep, 100000, &seen), LC_EINVAL);
    assert_true(lc_mono_ns() - t0 < 1000000000ull);
    free(deep);

    char *at_limit = nested(LC_JSON_MAX_DEPTH, "7");
    assert_int_equal(scan_n("$", at_limit, strlen(at_limit), &seen), 0);
    assert_int_equal(seen.count, 1);
    char path[256] = "$";
    for (int i = 0; i < 32; i++)
        strcat(path, "[0]");
    assert_int_equal(scan_n(path, at_limit, strlen(at_limit), &seen), 0);
    assert_int_equal(seen.count, 1);
    free(at_limit);
    char *over = nested(LC_JSON_MAX_DEPTH + 1, "7");
    assert_int_equal(scan_n("$", over, strlen(over), &seen), LC_EINVAL);
    assert_int_equal(scan_n(path, over, strlen(over), &seen), LC_EINVAL);
    free(over);
    /* Deep in a skipped member before the match: the fast skip counts the
     * same limit (the root object is one level). */
    for (int depth = LC_JSON_MAX_DEPTH - 1; depth <= LC_JSON_MAX_DEPTH; depth++) {
        char *inner = nested(depth, "\"[[{\"");
        char *body = malloc(strlen(inner) + 32);
        assert_non_null(body);
        sprintf(body, "{\"x\":%s,\"a\":1}", inner);
        if (depth < LC_JSON_MAX_DEPTH)
            assert_string_equal(matches("$.a", body), "n:1");
        else
            assert_invalid("$.a", body);
        free(body);
        free(inner);
    }
    /* Objects count as arrays do. */
    char body[2048];
    strcpy(body, "{\"x\":");
    for (int i = 0; i < 300; i++)
        strcat(body, "{\"k\":");
    assert_invalid("$.a", body);
}

static void test_early_stop(void **state)
{
    /* The callback's false ends the scan at once, with success. */
    seen_t seen = {.stop_after = 2};
    assert_int_equal(SCAN_LITERAL("$[*]", "[1,2,3,@@@", &seen), 0);
    assert_string_equal(seen.text, "n:1|n:2");
    seen.stop_after = 1;
    assert_int_equal(SCAN_LITERAL("$[*][*]", "[[1,2],[3]]garbage", &seen), 0);
    assert_string_equal(seen.text, "n:1");
    /* A path without wildcard stops after its one match by itself. */
    seen.stop_after = 0;
    assert_int_equal(SCAN_LITERAL("$.a[1]", "{\"a\":[0,{\"b\":1}],@", &seen), 0);
    assert_string_equal(seen.text, "j:{\"b\":1}");
    /* ...and as soon as the value it entered cannot hold the rest. */
    assert_int_equal(SCAN_LITERAL("$.a.b.c", "{\"a\":{\"b\":[[[[[[", &seen), 0);
    assert_string_equal(seen.text, "");
}

/* Linear time: a 4 MB array scanned whole by a wildcard and a negative index. */
static void test_linear_time(void **state)
{
    size_t n = 4u << 20;
    char *body = malloc(n);
    assert_non_null(body);
    body[0] = '[';
    size_t pos = 1;
    while (pos + 16 < n) {
        memcpy(body + pos, "\"abcd\\\"efg\",[1],", 16);
        pos += 16;
    }
    memcpy(body + pos, "0]", 2);
    pos += 2;
    seen_t seen = {.stop_after = 0};
    lc_jpath_t *p = compile_ok("$[-1]");
    uint64_t t0 = lc_mono_ns();
    seen.body = body;
    seen.len = pos;
    assert_int_equal(lc_jpath_scan(p, body, pos, record_cb, &seen), 0);
    uint64_t ns = lc_mono_ns() - t0;
    assert_string_equal(seen.text, "n:0");
    lc_jpath_free(p);
    printf("bench: $[-1] over a %zu-byte array: %.2f ms\n", pos, ns / 1e6);
    assert_true(ns < 2000000000ull);
    free(body);
}

/* The string codec ---------------------------------------------------------- */

static void assert_decodes(const char *raw, const char *want, size_t want_len)
{
    lc_buf_t out = {0};
    assert_int_equal(lc_buf_append(&out, "<", 1), 0);
    assert_int_equal(lc_json_string_decode(raw, strlen(raw), &out), 0);
    assert_int_equal(out.len, want_len + 1);
    assert_memory_equal(out.data + 1, want, want_len);
    assert_int_equal(out.data[out.len], '\0');
    lc_buf_free(&out);
}

static void assert_decode_fails(const char *raw)
{
    lc_buf_t out = {0};
    assert_int_equal(lc_buf_append(&out, "keep", 4), 0);
    if (lc_json_string_decode(raw, strlen(raw), &out) != LC_EINVAL)
        fail_msg("\"%s\" decoded", raw);
    assert_string_equal(out.data, "keep");
    assert_int_equal(out.len, 4);
    lc_buf_free(&out);
}

static void test_string_decode(void **state)
{
    assert_decodes("", "", 0);
    assert_decodes("plain", "plain", 5);
    assert_decodes("\\\"\\\\\\/\\b\\f\\n\\r\\t", "\"\\/\b\f\n\r\t", 8);
    assert_decodes("\\u0041\\u00e9\\u20AC", "A\xc3\xa9\xe2\x82\xac", 6);
    assert_decodes("\\ud83d\\ude00!", "\xf0\x9f\x98\x80!", 5);
    assert_decodes("\\uDBFF\\uDFFF", "\xf4\x8f\xbf\xbf", 4);
    assert_decodes("a\\u0000b", "a\0b", 3);
    assert_decodes("\xff raw", "\xff raw", 5);
    assert_decode_fails("\\");
    assert_decode_fails("ab\\");
    assert_decode_fails("\\x");
    assert_decode_fails("\\u12");
    assert_decode_fails("\\u12G4");
    assert_decode_fails("\\ud800");        /* lone high surrogate */
    assert_decode_fails("\\ud800x");
    assert_decode_fails("\\ud800\\n");
    assert_decode_fails("\\ud800\\u0041"); /* high then no low */
    assert_decode_fails("\\ud800\\ud800");
    assert_decode_fails("\\udc00");        /* lone low surrogate */
    assert_decode_fails("\\ud800\\u");
}

static void assert_encodes(const char *s, size_t len, const char *want)
{
    lc_buf_t out = {0};
    assert_int_equal(lc_json_string_encode(s, len, &out), 0);
    assert_string_equal(out.data, want);
    /* jansson agrees it is a JSON string. */
    json_error_t err;
    json_t *j = json_loads(out.data, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
    if (j == NULL)
        fail_msg("%s: %s", out.data, err.text);
    json_decref(j);
    lc_buf_free(&out);
}

static void test_string_encode(void **state)
{
    assert_encodes("", 0, "\"\"");
    assert_encodes("plain", 5, "\"plain\"");
    assert_encodes("a\"b\\c/", 6, "\"a\\\"b\\\\c/\"");
    assert_encodes("\n\r\t\b\f\x01\x1f\x7f", 8, "\"\\n\\r\\t\\b\\f\\u0001\\u001f\x7f\"");
    assert_encodes("a\0b", 3, "\"a\\u0000b\"");
    assert_encodes("caf\xc3\xa9 \xf0\x9f\x98\x80", 10, "\"caf\xc3\xa9 \xf0\x9f\x98\x80\"");
    assert_encodes("\xff" "a\xc3", 3, "\"\xef\xbf\xbd" "a\xef\xbf\xbd\"");
    assert_encodes("\xed\xa0\x80", 3, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
    /* Encoding then decoding gives the text back. */
    const char *text = "x\"y\\z\n\x01 \xc3\xa9";
    lc_buf_t enc = {0}, dec = {0};
    assert_int_equal(lc_json_string_encode(text, strlen(text), &enc), 0);
    assert_int_equal(lc_json_string_decode(enc.data + 1, enc.len - 2, &dec), 0);
    assert_string_equal(dec.data, text);
    lc_buf_free(&enc);
    lc_buf_free(&dec);
}

/* Micro-benchmark (printed, not asserted) --------------------------------- */

static bool count_cb(void *ctx, const lc_jmatch_t *m)
{
    (*(size_t *)ctx)++;
    return true;
}

/* The best of 5 batches: the machine is shared, the best batch is the least disturbed. */
static void bench_one(const char *path, const char *body, size_t len, int rounds)
{
    lc_jpath_t *p = compile_ok(path);
    size_t found = 0;
    double best = 0;
    for (int batch = 0; batch < 5; batch++) {
        found = 0;
        uint64_t t0 = lc_mono_ns();
        for (int i = 0; i < rounds; i++)
            lc_jpath_scan(p, body, len, count_cb, &found);
        double ns = (double)(lc_mono_ns() - t0) / rounds;
        best = batch == 0 || ns < best ? ns : best;
    }
    printf("bench: %-16s on %5zu bytes: %8.1f ns/scan (%zu matches each)\n", path, len, best,
           found / (size_t)rounds);
    lc_jpath_free(p);
}

static void bench_jansson(const char *body, size_t len, int rounds)
{
    uint64_t t0 = lc_mono_ns();
    for (int i = 0; i < rounds; i++) {
        json_t *j = json_loadb(body, len, 0, NULL);
        assert_non_null(j);
        json_decref(j);
    }
    printf("bench: %-16s on %5zu bytes: %8.1f ns/parse\n", "(jansson parse)", len,
           (double)(lc_mono_ns() - t0) / rounds);
}

static void test_bench(void **state)
{
    size_t login_len = strlen(login_body);
    assert_string_equal(matches("$.data.token", login_body), "s:" LOGIN_TOKEN);
    static char items[16384];
    size_t items_len = items_body(items, sizeof items);
    assert_string_equal(matches("$.next", items), "s:/page/2");
    assert_string_equal(matches("$.items[-1].id", items), "s:item-0049");
    bench_one("$.data.token", login_body, login_len, 40000);
    bench_one("$.meta.took_ms", login_body, login_len, 40000);
    bench_jansson(login_body, login_len, 4000);
    bench_one("$.items[0].id", items, items_len, 40000);
    bench_one("$.next", items, items_len, 4000);
    bench_one("$.items[*].id", items, items_len, 4000);
    bench_one("$.items[-1].id", items, items_len, 4000);
    bench_jansson(items, items_len, 400);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compile_forms),
        cmocka_unit_test(test_compile_errors),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_escaped_keys),
        cmocka_unit_test(test_duplicate_keys_first_wins),
        cmocka_unit_test(test_indices),
        cmocka_unit_test(test_negative_far_back),
        cmocka_unit_test(test_wildcards),
        cmocka_unit_test(test_value_types),
        cmocka_unit_test(test_whitespace),
        cmocka_unit_test(test_invalid_where_read),
        cmocka_unit_test(test_skipped_containers),
        cmocka_unit_test(test_invalid_where_not_read),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_nul_bytes),
        cmocka_unit_test(test_deep_nesting),
        cmocka_unit_test(test_early_stop),
        cmocka_unit_test(test_linear_time),
        cmocka_unit_test(test_string_decode),
        cmocka_unit_test(test_string_encode),
        cmocka_unit_test(test_bench),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
