/* test_yaml_json.c — master/api/yaml_json.c as an attacker reads it: every typing rule, every
 * refusal, and the exact path, line and column of each error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lc_err.h"
#include "lc_scenario.h"
#include "yaml_json.h"

static char err[512];

/* The compact JSON of yaml[0..len), or NULL with err set (*rv the code). */
static char *convert_n(const char *yaml, size_t len, int *rv)
{
    json_t *out = (json_t *)0x1;
    err[0] = '\0';
    *rv = lc_yaml_to_json(yaml, len, &out, err, sizeof err);
    if (*rv != 0) {
        assert_null(out);
        return NULL;
    }
    char *text = json_dumps(out, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(out);
    assert_non_null(text);
    return text;
}

/* yaml converts to expected, written with ' for " to keep the C readable. */
static void expect_json(const char *yaml, const char *expected)
{
    char want[1024];
    size_t n = strlen(expected);
    assert_true(n < sizeof want);
    for (size_t i = 0; i <= n; i++)
        want[i] = expected[i] == '\'' ? '"' : expected[i];
    int rv;
    char *got = convert_n(yaml, strlen(yaml), &rv);
    if (got == NULL)
        fail_msg("%s: refused: %s", yaml, err);
    if (strcmp(got, want) != 0)
        fail_msg("%s: got %s, expected %s", yaml, got, want);
    free(got);
}

/* expect_json without the ' for " substitution. */
static void expect_json_raw(const char *yaml, const char *want)
{
    int rv;
    char *got = convert_n(yaml, strlen(yaml), &rv);
    if (got == NULL || strcmp(got, want) != 0)
        fail_msg("%s: got %s, expected %s", yaml, got ? got : err, want);
    free(got);
}

/* yaml[0..len) is refused with code and exactly the message expected. */
static void expect_error_n(const char *yaml, size_t len, int code, const char *expected)
{
    int rv;
    char *got = convert_n(yaml, len, &rv);
    if (got != NULL)
        fail_msg("%s: accepted as %s, expected: %s", yaml, got, expected);
    assert_int_equal(rv, code);
    if (strcmp(err, expected) != 0)
        fail_msg("%s:\n got      %s\n expected %s", yaml, err, expected);
}

static void expect_error(const char *yaml, const char *expected)
{
    expect_error_n(yaml, strlen(yaml), LC_EINVAL, expected);
}

/* ---- typing ---- */

static void test_nulls(void **state)
{
    (void)state;
    expect_json("a: ~", "{'a':null}");
    expect_json("a: null", "{'a':null}");
    expect_json("a: Null", "{'a':null}");
    expect_json("a: NULL", "{'a':null}");
    expect_json("a:", "{'a':null}");
    expect_json("a:\n  - ~\n  -\n  - null\n", "{'a':[null,null,null]}");
    expect_json("{a: , b: ~}", "{'a':null,'b':null}");
    expect_json("a: nUll", "{'a':'nUll'}");
    expect_json("a: nil", "{'a':'nil'}");
    expect_json("a: '~'", "{'a':'~'}");
    expect_json("a: \"null\"", "{'a':'null'}");
    expect_json("a: ''", "{'a':''}");
}

static void test_booleans(void **state)
{
    (void)state;
    expect_json("[true, True, TRUE, false, False, FALSE]", "[true,true,true,false,false,false]");
    /* YAML 1.1's booleans are strings in 1.2 (the "Norway problem"). */
    expect_json("[yes, Yes, NO, no, on, On, off, OFF, y, n]",
                "['yes','Yes','NO','no','on','On','off','OFF','y','n']");
    expect_json("country: NO", "{'country':'NO'}");
    expect_json("[tRUE, falsE, 'true', \"false\"]", "['tRUE','falsE','true','false']");
}

static void test_integers(void **state)
{
    (void)state;
    expect_json("[0, -0, +0, 12, +12, -12, 010]", "[0,0,0,12,12,-12,10]");
    expect_json("[0x1F, 0x1f, 0xff, 0o17, 0o0]", "[31,31,255,15,0]");
    expect_json("[9223372036854775807, -9223372036854775808, 0x7fffffffffffffff, "
                "0o777777777777777777777]",
                "[9223372036854775807,-9223372036854775808,9223372036854775807,"
                "9223372036854775807]");
    /* Not core-schema integers: strings. */
    expect_json("[0X1F, 0O17, 0o8, 0x, 0o, -0x1F, +0x1F, 0xG, 1_000, 0b101, 1,000]",
                "['0X1F','0O17','0o8','0x','0o','-0x1F','+0x1F','0xG','1_000','0b101',1,0]");
    expect_json("a: 1,000", "{'a':'1,000'}");
    expect_json("[1:30, 010:20, 190:20:30, 12h, '12', \"0x1F\"]",
                "['1:30','010:20','190:20:30','12h','12','0x1F']");
}

static void test_integer_range(void **state)
{
    (void)state;
    expect_error("users: 9223372036854775808",
                 "users: integer 9223372036854775808 is out of range (64 bits); quote it to keep "
                 "it a string (line 1, column 8)");
    expect_error("users: -9223372036854775809",
                 "users: integer -9223372036854775809 is out of range (64 bits); quote it to keep "
                 "it a string (line 1, column 8)");
    expect_error("xs: [1, 0x8000000000000000]",
                 "xs[1]: integer 0x8000000000000000 is out of range (64 bits); quote it to keep "
                 "it a string (line 1, column 9)");
    expect_error("xs: [0o1000000000000000000000]",
                 "xs[0]: integer 0o1000000000000000000000 is out of range (64 bits); quote it to "
                 "keep it a string (line 1, column 6)");
    expect_json("users: '9223372036854775808'", "{'users':'9223372036854775808'}");
}

static void test_floats(void **state)
{
    (void)state;
    expect_json("[1e3, 1E3, 1.5, .5, -.5, +.5, 1., 1.e2, 2.5e-3, 1E+2, -0.0]",
                "[1000.0,1000.0,1.5,0.5,-0.5,0.5,1.0,100.0,0.0025000000000000001,100.0,-0.0]");
    /* Not core-schema floats: strings. */
    expect_json("[1.2.3, e3, 1e, 1e+, ., .e3, 1.5f, 0.5%, '1.5']",
                "['1.2.3','e3','1e','1e+','.','.e3','1.5f','0.5%','1.5']");
    expect_json("[.iNf, .nAn, inf, nan, Infinity]", "['.iNf','.nAn','inf','nan','Infinity']");
    expect_json("rate: '.inf'", "{'rate':'.inf'}");
}

static void test_inf_nan_refused(void **state)
{
    (void)state;
    static const char *const words[] = {".inf", ".Inf", ".INF", "+.inf", "-.inf", "-.INF",
                                        ".nan", ".NaN", ".NAN"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        char yaml[64], want[160];
        snprintf(yaml, sizeof yaml, "rate: %s", words[i]);
        snprintf(want, sizeof want, "rate: %s cannot be written in JSON; quote it to keep it a "
                 "string (line 1, column 7)", words[i]);
        expect_error(yaml, want);
    }
    expect_error("rate: 1e999", "rate: number 1e999 is out of range (line 1, column 7)");
    expect_error("rate: -1e999", "rate: number -1e999 is out of range (line 1, column 7)");
    expect_json("rate: 1e-999", "{'rate':0.0}");
}

static void test_quoted_and_block_scalars(void **state)
{
    (void)state;
    expect_json("[\"1\", '2', \"true\", 'null', \"1e3\", '']", "['1','2','true','null','1e3','']");
    expect_json_raw("a: 'it''s'\nb: \"tab\\there \\u00e9\"", "{\"a\":\"it's\",\"b\":\"tab\\there \xc3\xa9\"}");
    expect_json("body: |\n  {\"id\": 1}\n  line two\n", "{'body':'{\\'id\\': 1}\\nline two\\n'}");
    expect_json("n: |\n  123\n", "{'n':'123\\n'}");
    expect_json("n: |-\n  123\n", "{'n':'123'}");
    expect_json("t: >\n  folded\n  text\n\n  para\n", "{'t':'folded text\\npara\\n'}");
    expect_json("t: >-\n  true\n", "{'t':'true'}");
    expect_json("t: hello\n  world", "{'t':'hello world'}");
    expect_json("t: 1 # a comment", "{'t':1}");
    expect_json("t: a#b", "{'t':'a#b'}");
}

static void test_keys_are_text(void **state)
{
    (void)state;
    expect_json("1: a\ntrue: b\n~: c\n0x10: d\n'q': e", "{'1':'a','true':'b','~':'c','0x10':'d','q':'e'}");
    expect_json("\"<<\": literal", "{'<<':'literal'}");
    expect_json("b: 1\na: 2\nc: 3", "{'b':1,'a':2,'c':3}"); /* insertion order */
}

static void test_collections(void **state)
{
    (void)state;
    expect_json("{a: [1, 2, {b: c}], d: {}}", "{'a':[1,2,{'b':'c'}],'d':{}}");
    expect_json("a:\n  - 1\n  - b: 2\n    c: [x, y]\n  - []\n", "{'a':[1,{'b':2,'c':['x','y']},[]]}");
    expect_json("- - 1\n  - 2\n- - 3\n", "[[1,2],[3]]");
    expect_json("hello", "'hello'");
    expect_json("---\n", "null");
    expect_json("--- \na: 1\n...\n", "{'a':1}");
    expect_json("%YAML 1.2\n---\na: 1\n", "{'a':1}");
    expect_json("\xef\xbb\xbf" "a: 1", "{'a':1}"); /* a UTF-8 byte order mark */
    expect_json("\xc3\xa9t\xc3\xa9: caf\xc3\xa9", "{'\xc3\xa9t\xc3\xa9':'caf\xc3\xa9'}");
}

/* ---- refusals ---- */

static void test_duplicate_keys(void **state)
{
    (void)state;
    expect_error("a: 1\na: 2", "scenario: duplicate key \"a\" (line 2, column 1)");
    expect_error("a: 1\n'a': 2", "scenario: duplicate key \"a\" (line 2, column 1)");
    expect_error("1: x\n\"1\": y", "scenario: duplicate key \"1\" (line 2, column 1)");
    expect_error("t: {x: 1, y: 2, x: 3}", "t: duplicate key \"x\" (line 1, column 17)");
    static const char journey[] =
        "name: shop\n"
        "target: http://127.0.0.1:8080\n"
        "journeys:\n"
        "  - name: buyer\n"
        "    steps:\n"
        "      - path: /a\n"
        "      - path: /b\n"
        "      -\n"
        "        name: s\n"
        "        method: GET\n"
        "        # the same key twice, five lines apart\n"
        "\n"
        "        path: /c\n"
        "        path: /d\n";
    expect_error(journey, "journeys[0].steps[2]: duplicate key \"path\" (line 14, column 9)");
}

static void test_anchors_aliases_tags(void **state)
{
    (void)state;
    expect_error("a: &x 1", "a: anchors (&x) are not supported; write the value out (line 1, column 4)");
    expect_error("a: &x {b: 1}",
                 "a: anchors (&x) are not supported; write the value out (line 1, column 4)");
    expect_error("a: 1\nb: *x", "b: aliases (*x) are not supported; write the value out (line 2, column 4)");
    expect_error("&k key: v", "scenario: anchors (&k) are not supported; write the value out (line 1, column 1)");
    expect_error("users: !!str 5",
                 "users: tags (!!str) are not supported; quote a value to make it a string "
                 "(line 1, column 8)");
    expect_error("a: !foo x",
                 "a: tags (!foo) are not supported; quote a value to make it a string (line 1, column 4)");
    expect_error("a: ! x",
                 "a: tags (!) are not supported; quote a value to make it a string (line 1, column 4)");
    expect_error("a: !!map {b: 1}",
                 "a: tags (!!map) are not supported; quote a value to make it a string (line 1, column 4)");
    expect_error("xs: !!seq [1]",
                 "xs: tags (!!seq) are not supported; quote a value to make it a string (line 1, column 5)");
    expect_error("%TAG !e! tag:example.com,2000:\n---\na: !e!x 1",
                 "scenario: %TAG directives are not supported (line 1, column 1)");
    expect_error("%YAML 1.1\n---\na: yes", "scenario: %YAML 1.1: only YAML 1.2 is read (line 1, column 1)");
}

static void test_merge_keys(void **state)
{
    (void)state;
    expect_error("base: {a: 1}\nuse:\n  <<: {b: 2}",
                 "use: merge keys (<<) are not supported (line 3, column 3)");
    expect_error("[{<<: x}]", "[0]: merge keys (<<) are not supported (line 1, column 3)");
}

static void test_non_scalar_keys(void **state)
{
    (void)state;
    expect_error("? [a, b]\n: 1", "scenario: a key must be a scalar, not a sequence (line 1, column 3)");
    expect_error("t: {{a: 1}: 2}", "t: a key must be a scalar, not a mapping (line 1, column 5)");
}

static void test_documents(void **state)
{
    (void)state;
    expect_error("a: 1\n---\nb: 2",
                 "scenario: a second YAML document; a scenario is one document (line 2, column 1)");
    expect_error("---\na: 1\n...\n---\nb: 2\n",
                 "scenario: a second YAML document; a scenario is one document (line 4, column 1)");
    expect_error("", "scenario: no YAML document (the text is empty or only comments) (line 1, column 1)");
    expect_error("# nothing\n\n", "scenario: no YAML document (the text is empty or only comments) "
                 "(line 3, column 1)");
}

/* n sequences, each inside the one before. */
static char *nested(size_t n)
{
    char *s = malloc(2 * n + 1);
    assert_non_null(s);
    memset(s, '[', n);
    memset(s + n, ']', n);
    s[2 * n] = '\0';
    return s;
}

static void test_depth(void **state)
{
    (void)state;
    char *ok = nested(64), *deep = nested(65), want[512];
    int rv;
    char *got = convert_n(ok, strlen(ok), &rv);
    assert_non_null(got);
    free(got);
    char path[256] = "";
    for (size_t i = 0; i < 64; i++)
        strcat(path, "[0]");
    snprintf(want, sizeof want, "%s: nested deeper than 64 levels (line 1, column 65)", path);
    expect_error_n(deep, strlen(deep), LC_ETOOBIG, want);
    free(ok);
    free(deep);
    /* Block mappings count alike. */
    char yaml[8192] = "";
    size_t len = 0;
    for (size_t i = 0; i < 65; i++)
        len += (size_t)snprintf(yaml + len, sizeof yaml - len, "%*sk:\n", (int)(2 * i), "");
    int rv2;
    assert_null(convert_n(yaml, len, &rv2));
    assert_int_equal(rv2, LC_ETOOBIG);
    assert_non_null(strstr(err, "nested deeper than 64 levels (line 65, column 129)"));
    assert_non_null(strstr(err, "k.k.k."));
}

static void test_billion_laughs(void **state)
{
    (void)state;
    static const char laughs[] =
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
        "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
        "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
        "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n";
    expect_error(laughs, "a: anchors (&a) are not supported; write the value out (line 1, column 4)");
    expect_error("b: [*a,*a,*a]", "b[0]: aliases (*a) are not supported; write the value out (line 1, column 5)");
}

static void test_node_limit(void **state)
{
    (void)state;
    lc_yaml_limits_t small = {LC_YAML_MAX_BYTES, LC_YAML_MAX_DEPTH, 10};
    json_t *out = NULL;
    const char *yaml = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]";
    assert_int_equal(lc_yaml_to_json_limited(yaml, strlen(yaml), &small, &out, err, sizeof err),
                     LC_ETOOBIG);
    assert_null(out);
    assert_string_equal(err, "[9]: more than 10 nodes (line 1, column 29)");
    yaml = "[1, 2, 3, 4, 5, 6, 7, 8, 9]"; /* ten nodes with the sequence */
    assert_int_equal(lc_yaml_to_json_limited(yaml, strlen(yaml), &small, &out, err, sizeof err), 0);
    json_decref(out);
}

static void test_size_limit(void **state)
{
    (void)state;
    size_t len = LC_YAML_MAX_BYTES + 1;
    char *big = malloc(len);
    assert_non_null(big);
    memset(big, ' ', len);
    memcpy(big, "a: b", 4);
    expect_error_n(big, len, LC_ETOOBIG, "scenario: larger than 1048576 bytes");
    /* At the limit: read (a long comment). */
    big[4] = ' ';
    big[5] = '#';
    int rv;
    char *got = convert_n(big, LC_YAML_MAX_BYTES, &rv);
    assert_non_null(got);
    assert_string_equal(got, "{\"a\":\"b\"}");
    free(got);
    free(big);
}

static void test_bad_bytes(void **state)
{
    (void)state;
    expect_error("a: \xff", "scenario: invalid UTF-8 (byte 0xff at offset 3) (line 1, column 4)");
    expect_error("a: b\n\xc3\xa9: \xc0\xaf",
                 "scenario: invalid UTF-8 (byte 0xc0 at offset 9) (line 2, column 4)");
    expect_error("a: \xed\xa0\x80", "scenario: invalid UTF-8 (byte 0xed at offset 3) (line 1, column 4)");
    expect_error("a: \xe2\x82", "scenario: invalid UTF-8 (byte 0xe2 at offset 3) (line 1, column 4)");
    expect_error("\xff\xfe" "a\0:\0", "scenario: invalid UTF-8 (byte 0xff at offset 0) (line 1, column 1)");
    expect_error_n("a: b\0c", 6, LC_EINVAL, "scenario: NUL byte at offset 4 (line 1, column 5)");
    expect_error("a: \"x\\0y\"", "a: NUL character in a string (line 1, column 4)");
    expect_error("a: \"\\u0000\"", "a: NUL character in a string (line 1, column 4)");
    expect_error("\"k\\0\": v", "scenario: NUL character in a key (line 1, column 1)");
    expect_error("a: \x01", "scenario: YAML syntax error: control characters are not allowed (line 1, column 4)");
}

static void test_syntax_errors(void **state)
{
    (void)state;
    expect_error("a: b: c", "scenario: YAML syntax error: mapping values are not allowed in this "
                 "context (line 1, column 5)");
    expect_error("tasks:\n  - path: /\n    method: [GET\n",
                 "tasks[0].method[1]: YAML syntax error: did not find expected ',' or ']' (line 4, "
                 "column 1), while parsing a flow sequence that starts at line 3, column 13");
    expect_error("a:\n\tb: 1", "a: YAML syntax error: found character that cannot start any "
                 "token (line 2, column 1), while scanning for the next token that starts at "
                 "line 2, column 1");
    expect_error("a: 1\n b: 2", "scenario: YAML syntax error: mapping values are not allowed in "
                 "this context (line 2, column 3)");
    expect_error("a: 'open", "a: YAML syntax error: found unexpected end of stream (line 1, column "
                 "9), while scanning a quoted scalar that starts at line 1, column 4");
}

static void test_long_names_are_cut(void **state)
{
    (void)state;
    char yaml[512], want[400], key[201];
    memset(key, 'k', 200);
    key[200] = '\0';
    snprintf(yaml, sizeof yaml, "%s: 1\n%s: 2", key, key);
    snprintf(want, sizeof want, "scenario: duplicate key \"%.64s\" (line 2, column 1)", key);
    expect_error(yaml, want);
}

/* A whole scenario, as a user would write it: lc_scenario_parse takes its JSON. */
static void test_scenario_round_trip(void **state)
{
    (void)state;
    static const char yaml[] =
        "# checkout, in YAML\n"
        "name: checkout\n"
        "target: http://127.0.0.1:8080\n"
        "duration: 1m30s\n"
        "users: 20\n"
        "spawn_rate: 2.5\n"
        "think_time_ms: [50, 150]\n"
        "tasks:\n"
        "  - name: list\n"
        "    weight: 3\n"
        "    path: /api/users?page=${rand(1,50)}\n"
        "  - name: create\n"
        "    method: POST\n"
        "    path: /api/users\n"
        "    headers: {Content-Type: application/json}\n"
        "    body: |-\n"
        "      {\"name\": \"u${user_id}\"}\n"
        "    expect: {status: [201]}\n"
        "thresholds:\n"
        "  http_req_duration{endpoint:list}: [\"p(95)<250\"]\n"
        "  http_req_failed: [rate<0.01]\n";
    json_t *out = NULL;
    assert_int_equal(lc_yaml_to_json(yaml, strlen(yaml), &out, err, sizeof err), 0);
    char *text = json_dumps(out, JSON_COMPACT);
    json_decref(out);
    lc_scenario_t s;
    int rv = lc_scenario_parse(text, strlen(text), &s, err, sizeof err);
    if (rv != 0)
        fail_msg("%s: %s", text, err);
    assert_string_equal(s.name, "checkout");
    assert_int_equal(s.duration_ms, 90000);
    assert_int_equal(s.n_tasks, 2);
    assert_string_equal(s.tasks[1].body, "{\"name\": \"u${user_id}\"}");
    assert_int_equal(s.n_thresholds, 2);
    lc_scenario_free(&s);
    free(text);
}

/* The example journeys in deploy/examples say the same in YAML as in JSON. */
static void test_example_journeys_agree(void **state)
{
    (void)state;
    char *yaml = NULL, why[300] = "";
    size_t len = 0;
    FILE *f = fopen("../../deploy/examples/journey-shop.yaml", "rb");
    assert_non_null(f);
    yaml = malloc(1 << 16);
    assert_non_null(yaml);
    len = fread(yaml, 1, 1 << 16, f);
    fclose(f);
    json_t *from_yaml = NULL;
    int rv = lc_yaml_to_json(yaml, len, &from_yaml, why, sizeof why);
    if (rv != 0)
        fail_msg("%s", why);
    json_error_t jerr;
    json_t *from_json = json_load_file("../../deploy/examples/journey-shop.json", 0, &jerr);
    assert_non_null(from_json);
    assert_true(json_equal(from_yaml, from_json));
    char *text = json_dumps(from_yaml, JSON_COMPACT);
    lc_scenario_t sc;
    rv = lc_scenario_parse(text, strlen(text), &sc, why, sizeof why);
    if (rv != 0)
        fail_msg("%s", why);
    assert_non_null(sc.program);
    assert_int_equal(sc.program->n_journeys, 2);
    lc_scenario_free(&sc);
    free(text);
    json_decref(from_json);
    json_decref(from_yaml);
    free(yaml);
}

static const char located_yaml[] =
    "name: shop\n"                                   /* line 1 */
    "target: http://127.0.0.1:8080\n"
    "duration: 5s\n"
    "journeys:\n"
    "  - name: buyer\n"                              /* line 5 */
    "    steps:\n"
    "      - path: /login\n"
    "      - while: \"true\"\n"                    /* line 8: a while without max */
    "        steps:\n"
    "          - path: /items/${nope}\n"             /* line 10 */
    "      - {path: /x, method: 42}\n";

/* A value's own line and column; a path that names what is absent: its deepest ancestor's;
 * a path not in the document at all: false. */
static void test_locate(void **state)
{
    (void)state;
    size_t line = 0, col = 0, n = strlen(located_yaml);
    assert_true(lc_yaml_locate(located_yaml, n, "journeys[0].steps[1].steps[0].path", &line, &col));
    assert_int_equal(line, 10);
    assert_int_equal(col, 19);
    assert_true(lc_yaml_locate(located_yaml, n, "journeys[0].steps[1]", &line, &col));
    assert_int_equal(line, 8);
    assert_int_equal(col, 9);
    assert_true(lc_yaml_locate(located_yaml, n, "journeys[0].steps[2].method", &line, &col));
    assert_int_equal(line, 11);
    assert_int_equal(col, 28);
    assert_true(lc_yaml_locate(located_yaml, n, "duration", &line, &col));
    assert_int_equal(line, 3);
    assert_int_equal(col, 11);
    /* Absent: max of the while, the fourth step, a key that only begins like one. */
    assert_true(lc_yaml_locate(located_yaml, n, "journeys[0].steps[1].max", &line, &col));
    assert_int_equal(line, 8);
    assert_true(lc_yaml_locate(located_yaml, n, "journeys[0].steps[3]", &line, &col));
    assert_int_equal(line, 7); /* a block sequence starts at its first "-" */
    assert_int_equal(col, 7);
    assert_false(lc_yaml_locate(located_yaml, n, "dur", &line, &col));
    assert_false(lc_yaml_locate(located_yaml, n, "thresholds", &line, &col));
}

/* The scenario's validation of the converted JSON names a JSON path; annotated, it names the
 * YAML line and column too, and a message without a path or with a line already stays. */
static void expect_annotated(const char *yaml, const char *want)
{
    json_t *doc = NULL;
    lc_scenario_t sc;
    char why[512];
    assert_int_equal(lc_yaml_to_json(yaml, strlen(yaml), &doc, err, sizeof err), 0);
    char *text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    assert_non_null(text);
    assert_int_not_equal(lc_scenario_parse(text, strlen(text), &sc, why, sizeof why), 0);
    free(text);
    lc_yaml_annotate(yaml, strlen(yaml), why, sizeof why);
    if (strstr(why, want) == NULL)
        fail_msg("got \"%s\", wanted it to hold \"%s\"", why, want);
}

static void test_annotate_validation_errors(void **state)
{
    (void)state;
    expect_annotated(located_yaml, "journeys[0].steps[1].max: required: a while loop needs a "
                                   "bound");
    expect_annotated(located_yaml, "(line 8, column 9)");
    char yaml[1024];
    snprintf(yaml, sizeof yaml, "%.*s", (int)(strstr(located_yaml, "      - while") - located_yaml),
             located_yaml);
    strcat(yaml, "      - path: /items/${nope}\n");
    expect_annotated(yaml, "journeys[0].steps[1]: uses ${nope}");
    expect_annotated(yaml, "(line 8, column 9)");
    expect_annotated("name: x\ntarget: http://h\nduration: 5s\nusers: -3\n"
                     "tasks: [{path: /}]\n", "users: ");
    expect_annotated("name: x\ntarget: http://h\nduration: 5s\nusers: -3\n"
                     "tasks: [{path: /}]\n", "(line 4, column 8)");
    char msg[128] = "scenario: expected a JSON object";
    lc_yaml_annotate(located_yaml, strlen(located_yaml), msg, sizeof msg);
    assert_string_equal(msg, "scenario: expected a JSON object");
    snprintf(msg, sizeof msg, "duration: bad (line 3, column 11)");
    lc_yaml_annotate(located_yaml, strlen(located_yaml), msg, sizeof msg);
    assert_string_equal(msg, "duration: bad (line 3, column 11)");
    snprintf(msg, sizeof msg, "no path here");
    lc_yaml_annotate(located_yaml, strlen(located_yaml), msg, sizeof msg);
    assert_string_equal(msg, "no path here");
    char tiny[12] = "duration: x"; /* no room: cut, still terminated */
    lc_yaml_annotate(located_yaml, strlen(located_yaml), tiny, sizeof tiny);
    assert_string_equal(tiny, "duration: x");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nulls),
        cmocka_unit_test(test_booleans),
        cmocka_unit_test(test_integers),
        cmocka_unit_test(test_integer_range),
        cmocka_unit_test(test_floats),
        cmocka_unit_test(test_inf_nan_refused),
        cmocka_unit_test(test_quoted_and_block_scalars),
        cmocka_unit_test(test_keys_are_text),
        cmocka_unit_test(test_collections),
        cmocka_unit_test(test_duplicate_keys),
        cmocka_unit_test(test_anchors_aliases_tags),
        cmocka_unit_test(test_merge_keys),
        cmocka_unit_test(test_non_scalar_keys),
        cmocka_unit_test(test_documents),
        cmocka_unit_test(test_depth),
        cmocka_unit_test(test_billion_laughs),
        cmocka_unit_test(test_node_limit),
        cmocka_unit_test(test_size_limit),
        cmocka_unit_test(test_bad_bytes),
        cmocka_unit_test(test_syntax_errors),
        cmocka_unit_test(test_long_names_are_cut),
        cmocka_unit_test(test_scenario_round_trip),
        cmocka_unit_test(test_example_journeys_agree),
        cmocka_unit_test(test_locate),
        cmocka_unit_test(test_annotate_validation_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
