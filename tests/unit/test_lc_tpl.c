/* test_lc_tpl.c — common/journey/lc_tpl.c (and lc_tpl_stage.c): compiling ${…} templates,
 * rendering them in each mode with every built-in and filter, and what they refuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lc_err.h"
#include "lc_tpl.h"
#include "tpl_fixture.h"

static uint64_t rng = 0x1234567887654321ULL;

static lc_tpl_t *compile_mode(const char *src, size_t len, lc_tpl_mode_t mode)
{
    lc_tpl_t *t = NULL;
    char err[256] = "";
    int rv = lc_tpl_compile(&t, src, len, mode, &fixture_names, err, sizeof err);
    if (rv != 0)
        fail_msg("compile \"%s\": %s", src, err);
    return t;
}

/* Renders src in mode; OUT: *len. The caller frees the result. */
static char *render_n(const char *src, size_t srclen, lc_tpl_mode_t mode, size_t *len)
{
    lc_tpl_t *t = compile_mode(src, srclen, mode);
    lc_buf_t out = {0};
    const char *missing = NULL;
    lc_tpl_env_t env = fixture_env(&rng, &missing);
    int rv = lc_tpl_render(t, &env, &out);
    if (rv != 0)
        fail_msg("render \"%s\": %s (missing %s)", src, lc_strerror(rv), missing);
    lc_tpl_free(t);
    *len = out.len;
    char *s = malloc(out.len + 1);
    assert_non_null(s);
    memcpy(s, out.data != NULL ? out.data : "", out.len + 1);
    lc_buf_free(&out);
    return s;
}

static char *render_mode(const char *src, lc_tpl_mode_t mode)
{
    size_t len;
    return render_n(src, strlen(src), mode, &len);
}

#define assert_renders_mode(src, mode, want)                                                       \
    do {                                                                                           \
        char *got_ = render_mode(src, mode);                                                       \
        assert_string_equal(got_, want);                                                           \
        free(got_);                                                                                \
    } while (0)
#define assert_renders(src, want) assert_renders_mode(src, LC_TPL_RAW, want)

/* Compiles src expecting code; returns the message (static). */
static const char *compile_error(const char *src, size_t len, int code)
{
    static char err[512];
    lc_tpl_t *t = NULL;
    err[0] = '\0';
    int rv = lc_tpl_compile(&t, src, len, LC_TPL_RAW, &fixture_names, err, sizeof err);
    if (rv != code)
        fail_msg("compile \"%.80s\": got %d (%s), wanted %d", src, rv, err, code);
    assert_null(t);
    assert_true(err[0] != '\0');
    return err;
}

#define assert_error(src, code, want)                                                              \
    assert_string_equal(compile_error(src, strlen(src), code), want)

/* Literals and the $${ escape ----------------------------------------------------------------- */

static void test_literal_only(void **state)
{
    lc_tpl_t *t = compile_mode("/plain/$path?a=$&b={}", 21, LC_TPL_RAW);
    assert_false(lc_tpl_dynamic(t));
    assert_false(lc_tpl_is_expression(t));
    assert_int_equal(lc_tpl_uses(t, NULL, 0), 0);
    int slot = -7;
    assert_false(lc_tpl_single_var(t, &slot));
    assert_int_equal(slot, -7);
    assert_string_equal(lc_tpl_source(t), "/plain/$path?a=$&b={}");
    lc_tpl_free(t);
    assert_renders("/plain/$path?a=$&b={}", "/plain/$path?a=$&b={}");
    assert_renders("", "");
    assert_renders("$", "$");
    assert_renders("}", "}");
    assert_renders("$$5 and $$$x", "$$5 and $$$x"); /* "$$" is special before '{' only */
    lc_tpl_free(NULL);
}

static void test_dollar_escape(void **state)
{
    assert_renders("$${token}", "${token}");
    assert_renders("a$${b", "a${b"); /* escaped: not an unterminated ${ */
    assert_renders("$$${token}", "$abc123");
    assert_renders("$$$${token}", "$${token}");
    assert_renders("$$$$${user_id}", "$$42");
    assert_renders("$${${user_id}}", "${42}");
    lc_tpl_t *t = compile_mode("x$${y}", 6, LC_TPL_RAW);
    assert_false(lc_tpl_dynamic(t));
    assert_string_equal(lc_tpl_source(t), "x$${y}");
    lc_tpl_free(t);
    assert_renders_mode("$${a}", LC_TPL_FORM, "%24%7Ba%7D");
    assert_renders_mode("$${\"}", LC_TPL_JSON_STR, "${\\\"}");
}

static void test_bytes_with_nul(void **state)
{
    size_t len;
    char *s = render_n("a\0${token}\0", 11, LC_TPL_RAW, &len);
    assert_int_equal(len, 9);
    assert_memory_equal(s, "a\0abc123\0", 9);
    free(s);
    s = render_n("[${nul}]", 8, LC_TPL_RAW, &len);
    assert_int_equal(len, 5);
    assert_memory_equal(s, "[a\0b]", 5);
    free(s);
    assert_renders_mode("${nul}", LC_TPL_JSON_STR, "a\\u0000b");
    assert_renders("${nul|url}", "a%00b");
    assert_renders("${nul|base64}", "YQBi");
    assert_renders("${nul|len}", "3");
}

/* Variables and built-ins -------------------------------------------------------------------- */

static void test_variables(void **state)
{
    assert_renders("${token}", "abc123");
    assert_renders("Bearer ${token}!", "Bearer abc123!");
    assert_renders("${accounts.name}/${token}${token}", "alice/abc123abc123");
    assert_renders("${ token }|${\ttoken\t|\turl\t}", "abc123|abc123");
    assert_renders("${" FIXTURE_LONGEST_NAME "}", "long");
    assert_renders("[${empty}]", "[]");
    assert_renders("${crlf}", "a\r\nX-Evil: 1"); /* as is in RAW: the caller checks headers */
    assert_renders("${ctrl}", "a\tb\nc\r\b\f\x01\x1f\x7f");
    assert_renders("${flag} ${nothing} ${obj} ${count}", "true null {\"a\":[1,2]} 3");
}

static void test_builtins(void **state)
{
    assert_renders("/u/${user_id}/i/${iteration}${user_id}", "/u/42/i/742");
    assert_renders("${now_ms}", "1700000000123");
    lc_tpl_t *t = compile_mode("${user_id}", 10, LC_TPL_RAW);
    int slot = -1;
    assert_true(lc_tpl_dynamic(t));
    assert_true(lc_tpl_is_expression(t));
    assert_false(lc_tpl_single_var(t, &slot)); /* only variables keep a JSON type */
    assert_int_equal(lc_tpl_uses(t, NULL, 0), 0);
    lc_tpl_free(t);

    lc_buf_t out = {0};
    lc_tpl_env_t env = fixture_env(&rng, NULL);
    env.user_id = UINT64_MAX;
    env.iteration = 0;
    t = compile_mode("${user_id} ${iteration}", 23, LC_TPL_RAW);
    assert_int_equal(lc_tpl_render(t, &env, &out), 0);
    assert_string_equal(out.data, "18446744073709551615 0");
    lc_tpl_free(t);
    lc_buf_free(&out);
}

static bool is_lower_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static void test_uuid(void **state)
{
    char *seen[64];
    for (int i = 0; i < 64; i++) {
        char *u = seen[i] = render_mode("${uuid}", LC_TPL_RAW);
        assert_int_equal(strlen(u), 36);
        for (int j = 0; j < 36; j++) {
            if (j == 8 || j == 13 || j == 18 || j == 23)
                assert_int_equal(u[j], '-');
            else
                assert_true(is_lower_hex(u[j]));
        }
        assert_int_equal(u[14], '4');
        assert_non_null(strchr("89ab", u[19]));
        for (int j = 0; j < i; j++)
            assert_string_not_equal(u, seen[j]);
    }
    for (int i = 0; i < 64; i++)
        free(seen[i]);
    assert_renders("${uuid|len}", "36");
}

static long long render_rand(const char *src)
{
    char *s = render_mode(src, LC_TPL_RAW);
    char *end;
    long long v = strtoll(s, &end, 10);
    assert_true(*end == '\0' && end != s);
    free(s);
    return v;
}

static void test_rand(void **state)
{
    int seen[5] = {0};
    for (int i = 0; i < 2000; i++) {
        long long v = render_rand("${rand(-2,2)}");
        assert_true(v >= -2 && v <= 2);
        seen[v + 2]++;
    }
    for (int i = 0; i < 5; i++)
        assert_true(seen[i] > 300); /* 400 expected each */
    assert_renders("${rand(7,7)}", "7");
    assert_renders("${ rand( -1 , -1 ) }", "-1");
    assert_renders("${rand(+3,3)}", "3");
    assert_renders("${rand(9223372036854775807,9223372036854775807)}", "9223372036854775807");
    assert_renders("${rand(-9223372036854775808,-9223372036854775808)}", "-9223372036854775808");
    bool low = false, high = false, negative = false, positive = false;
    for (int i = 0; i < 200; i++) {
        long long v = render_rand("${rand(9223372036854775806,9223372036854775807)}");
        assert_true(v >= INT64_MAX - 1);
        low |= v == INT64_MAX - 1;
        high |= v == INT64_MAX;
        v = render_rand("${rand(-9223372036854775808,9223372036854775807)}");
        negative |= v < 0;
        positive |= v > 0;
    }
    assert_true(low && high && negative && positive);
}

static void test_rand_errors(void **state)
{
    assert_error("${rand(5,1)}", LC_EINVAL, "${rand(5,1)}: rand(a,b) needs a <= b");
    assert_error("${rand(0,9223372036854775808)}", LC_EINVAL,
                 "${rand(0,9223372036854775808)}: rand takes two integers, rand(a,b), at offset 9");
    assert_error("${rand(-9223372036854775809,0)}", LC_EINVAL,
                 "${rand(-9223372036854775809,0)}: rand takes two integers, rand(a,b), at offset 7");
    assert_error("${rand}", LC_EINVAL, "${rand}: rand takes two integers, rand(a,b), at offset 6");
    compile_error("${rand(1)}", 10, LC_EINVAL);
    compile_error("${rand(1,2,3)}", 14, LC_EINVAL);
    compile_error("${rand(a,b)}", 12, LC_EINVAL);
    compile_error("${rand(1.5,2)}", 14, LC_EINVAL);
    compile_error("${rand(-,2)}", 12, LC_EINVAL);
    compile_error("${rand(1,2)x}", 13, LC_EINVAL);
    compile_error("${rand(0x10,20)}", 16, LC_EINVAL);
}

/* Filters ------------------------------------------------------------------------------------ */

static void test_filter_url(void **state)
{
    assert_renders("${formish|url}", "a%20b%26c%3Dd%2Be~f%2Ag.h-i_j%2Fk");
    assert_renders("${utf8|url}", "h%C3%A9%20%E2%82%AC%20%F0%9F%98%80");
    assert_renders("${crlf|url}", "a%0D%0AX-Evil%3A%201");
    assert_renders("${empty|url}", "");
    assert_renders("${quote|url}", "say%20%22hi%22%20%5C%20%2F");
}

static void test_filter_json(void **state)
{
    assert_renders("${token|json}", "\"abc123\"");
    assert_renders("${quote|json}", "\"say \\\"hi\\\" \\\\ /\"");
    assert_renders("${ctrl|json}", "\"a\\tb\\nc\\r\\b\\f\\u0001\\u001f\x7f\"");
    assert_renders("${utf8|json}", "\"h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
    assert_renders("${badutf8|json}", "\"x\\ufffd\\ufffd(\"");
    assert_renders("${empty|json}", "\"\"");
    assert_renders("${count|json} ${flag|json} ${nothing|json} ${obj|json}",
                   "3 true null {\"a\":[1,2]}");
    assert_renders("${token|json|json}", "\"abc123\""); /* already JSON text */
    assert_renders("${user_id|json} ${uuid|len|json}", "42 36");
}

static void test_filter_base64(void **state)
{
    static const char *const vectors[][2] = {{"", ""},           {"f", "Zg=="},
                                             {"fo", "Zm8="},     {"foo", "Zm9v"},
                                             {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="},
                                             {"foobar", "Zm9vYmFy"}, {"\xff\xfe\xfd", "//79"}};
    for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
        fixture_set_x(vectors[i][0], strlen(vectors[i][0]), LC_V_STRING);
        assert_renders("${x|base64}", vectors[i][1]);
    }
    assert_renders("${user_id|base64}", "NDI=");
}

static void test_filter_len(void **state)
{
    assert_renders("${token|len}", "6");
    assert_renders("${utf8|len}", "12"); /* bytes, not characters */
    assert_renders("${empty|len}", "0");
    assert_renders("${obj|len}", "11");
    assert_renders("${token|len|len}", "1");
}

static void test_filter_chains(void **state)
{
    assert_renders("${token|base64|url}", "YWJjMTIz");
    assert_renders("${quote | json | url}", "%22say%20%5C%22hi%5C%22%20%5C%5C%20%2F%22");
    assert_renders("${token|url|json}", "\"abc123\"");
    assert_renders("${formish|url|len}", "33");
    assert_renders("${token|len|json}", "6");
    assert_renders("${token|base64|base64}", "WVdKak1USXo=");
    assert_renders("${token|url|url|url|url|url|url|url|url}", "abc123"); /* 8: the most */
    assert_renders("${formish|url|url}", "a%2520b%2526c%253Dd%252Be~f%252Ag.h-i_j%252Fk");
}

/* Modes -------------------------------------------------------------------------------------- */

static void test_mode_json_str(void **state)
{
    assert_renders_mode("say \"${quote}\"\n\\", LC_TPL_JSON_STR,
                        "say \\\"say \\\"hi\\\" \\\\ /\\\"\\n\\\\");
    assert_renders_mode("${ctrl}", LC_TPL_JSON_STR, "a\\tb\\nc\\r\\b\\f\\u0001\\u001f\x7f");
    assert_renders_mode("${utf8}|\xc3\xa9", LC_TPL_JSON_STR,
                        "h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80|\xc3\xa9");
    assert_renders_mode("${badutf8}\xff", LC_TPL_JSON_STR, "x\\ufffd\\ufffd(\\ufffd");
    assert_renders_mode("${crlf}", LC_TPL_JSON_STR, "a\\r\\nX-Evil: 1");
    assert_renders_mode("${token|json}", LC_TPL_JSON_STR, "\\\"abc123\\\"");
    assert_renders_mode("${obj} ${count}", LC_TPL_JSON_STR, "{\\\"a\\\":[1,2]} 3");
    assert_renders_mode("${user_id}", LC_TPL_JSON_STR, "42");
}

static void test_mode_form(void **state)
{
    assert_renders_mode("q=${formish} &", LC_TPL_FORM,
                        "q%3Da+b%26c%3Dd%2Be%7Ef*g.h-i_j%2Fk+%26");
    assert_renders_mode("${utf8}", LC_TPL_FORM, "h%C3%A9+%E2%82%AC+%F0%9F%98%80");
    assert_renders_mode("${crlf}", LC_TPL_FORM, "a%0D%0AX-Evil%3A+1");
    assert_renders_mode("${quote}", LC_TPL_FORM, "say+%22hi%22+%5C+%2F");
    assert_renders_mode("${formish|url}", LC_TPL_FORM,
                        "a%2520b%2526c%253Dd%252Be%7Ef%252Ag.h-i_j%252Fk");
    assert_renders_mode("${rand(-5,-5)}", LC_TPL_FORM, "-5");
}

/* Questions about a template ------------------------------------------------------------------- */

static void test_single_var(void **state)
{
    static const struct {
        const char *src;
        int slot; /* -1: not a single variable */
    } cases[] = {{"${token}", SLOT_TOKEN},   {"${ count }", SLOT_COUNT},
                 {"${accounts.name}", SLOT_ACCOUNT},
                 {"${token|json}", -1},      {"${token|url}", -1},
                 {"x${token}", -1},          {"${token} ", -1},
                 {"${token}${token}", -1},   {"${uuid}", -1},
                 {"${rand(1,2)}", -1},       {"token", -1},
                 {"$${token}", -1},          {"", -1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        lc_tpl_t *t = compile_mode(cases[i].src, strlen(cases[i].src), LC_TPL_JSON_STR);
        int slot = -1;
        assert_int_equal(lc_tpl_single_var(t, &slot), cases[i].slot >= 0);
        assert_int_equal(slot, cases[i].slot);
        lc_tpl_free(t);
    }
}

static void test_uses(void **state)
{
    const char *src = "${token}${count|len}${user_id}${token|url}${accounts.name}${count}";
    lc_tpl_t *t = compile_mode(src, strlen(src), LC_TPL_RAW);
    int slots[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    assert_int_equal(lc_tpl_uses(t, slots, 8), 3);
    assert_int_equal(slots[0], SLOT_TOKEN);
    assert_int_equal(slots[1], SLOT_COUNT);
    assert_int_equal(slots[2], SLOT_ACCOUNT);
    assert_int_equal(slots[3], -1);
    int one[1] = {-1};
    assert_int_equal(lc_tpl_uses(t, one, 1), 3); /* cut: the count says so */
    assert_int_equal(one[0], SLOT_TOKEN);
    assert_int_equal(lc_tpl_uses(t, NULL, 0), 3);
    lc_tpl_free(t);
    t = compile_mode("${uuid}${rand(1,2)}$${token}", 28, LC_TPL_RAW);
    assert_int_equal(lc_tpl_uses(t, slots, 8), 0);
    lc_tpl_free(t);
}

static void test_name_len(void **state)
{
    assert_int_equal(lc_tpl_name_len("token}", 6), 5);
    assert_int_equal(lc_tpl_name_len("a.b", 3), 3);
    assert_int_equal(lc_tpl_name_len("a.b.c", 5), 3);
    assert_int_equal(lc_tpl_name_len("a.", 2), 1);
    assert_int_equal(lc_tpl_name_len("a.1", 3), 1);
    assert_int_equal(lc_tpl_name_len("_x9|url", 7), 3);
    assert_int_equal(lc_tpl_name_len("9x", 2), 0);
    assert_int_equal(lc_tpl_name_len(".a", 2), 0);
    assert_int_equal(lc_tpl_name_len("", 0), 0);
    assert_int_equal(lc_tpl_name_len("abc", 2), 2);
}

/* Rendering: unset variables, appending, values for conditions -------------------------------- */

static void test_unset_variable(void **state)
{
    const char *src = "a${token}b${unset|url}c";
    lc_tpl_t *t = compile_mode(src, strlen(src), LC_TPL_RAW);
    lc_buf_t out = {0};
    assert_int_equal(lc_buf_append(&out, "keep", 4), 0);
    const char *missing = NULL;
    lc_tpl_env_t env = fixture_env(&rng, &missing);
    assert_int_equal(lc_tpl_render(t, &env, &out), LC_ENOTFOUND);
    assert_string_equal(out.data, "keep");
    assert_int_equal(out.len, 4);
    assert_string_equal(missing, "unset");
    env.missing = NULL; /* the env need not ask which */
    assert_int_equal(lc_tpl_render(t, &env, &out), LC_ENOTFOUND);
    assert_string_equal(out.data, "keep");
    lc_tpl_free(t);
    lc_buf_free(&out);

    t = compile_mode("${unset}", 8, LC_TPL_RAW);
    env.missing = &missing;
    missing = NULL;
    assert_int_equal(lc_tpl_render(t, &env, &out), LC_ENOTFOUND);
    assert_int_equal(out.len, 0);
    assert_string_equal(missing, "unset");
    lc_tpl_free(t);
    lc_buf_free(&out);
}

static void test_render_appends(void **state)
{
    lc_tpl_t *t = compile_mode("<${token}>", 10, LC_TPL_RAW);
    lc_buf_t out = {0};
    lc_tpl_env_t env = fixture_env(&rng, NULL);
    for (int i = 0; i < 100; i++)
        assert_int_equal(lc_tpl_render(t, &env, &out), 0);
    assert_int_equal(out.len, 100 * 8);
    assert_memory_equal(out.data + 99 * 8, "<abc123>", 9); /* NUL-terminated too */
    lc_tpl_free(t);
    lc_buf_free(&out);

    /* A long value through a chain of growing filters. */
    char *big = malloc(100000);
    assert_non_null(big);
    memset(big, '"', 100000);
    fixture_set_x(big, 100000, LC_V_STRING);
    t = compile_mode("${x|json|url}", 13, LC_TPL_JSON_STR);
    assert_int_equal(lc_tpl_render(t, &env, &out), 0);
    assert_int_equal(out.len, (100000 * 2 + 2) * 3); /* \" then %5C%22, quotes %22 */
    assert_memory_equal(out.data, "%22%5C%22", 9);
    lc_tpl_free(t);
    lc_buf_free(&out);
    free(big);
}

static void test_value(void **state)
{
    char scratch[24]; /* room for |len's 20 digits, not for a UUID */
    lc_buf_t spill = {0};
    lc_value_t v;
    lc_tpl_env_t env = fixture_env(&rng, NULL);
    lc_tpl_t *t = compile_mode("${token}", 8, LC_TPL_RAW);
    assert_int_equal(lc_tpl_value(t, &env, scratch, sizeof scratch, &spill, &v), 0);
    assert_ptr_equal(v.data, fixture_vars[SLOT_TOKEN].data); /* not copied */
    assert_int_equal(v.type, LC_V_STRING);
    lc_tpl_free(t);

    t = compile_mode("${token|len}", 12, LC_TPL_RAW);
    assert_int_equal(lc_tpl_value(t, &env, scratch, sizeof scratch, &spill, &v), 0);
    assert_ptr_equal(v.data, scratch);
    assert_int_equal(v.len, 1);
    assert_int_equal(v.type, LC_V_NUMBER);
    assert_memory_equal(v.data, "6", 1);
    lc_tpl_free(t);

    t = compile_mode("${uuid}", 7, LC_TPL_RAW); /* 36 bytes: past the scratch */
    assert_int_equal(lc_tpl_value(t, &env, scratch, sizeof scratch, &spill, &v), 0);
    assert_ptr_equal(v.data, spill.data);
    assert_int_equal(v.len, 36);
    assert_int_equal(spill.len, 0);
    assert_int_equal(v.type, LC_V_STRING);
    lc_tpl_free(t);

    t = compile_mode("${obj|json}", 11, LC_TPL_RAW);
    assert_int_equal(lc_tpl_value(t, &env, scratch, sizeof scratch, &spill, &v), 0);
    assert_int_equal(v.type, LC_V_JSON);
    assert_int_equal(v.len, 11);
    lc_tpl_free(t);

    /* Escaped for a mode, any value is the text of a string. */
    t = compile_mode("${obj}", 6, LC_TPL_JSON_STR);
    assert_int_equal(lc_tpl_value(t, &env, scratch, sizeof scratch, &spill, &v), 0);
    assert_int_equal(v.type, LC_V_STRING);
    assert_int_equal(v.len, 13);
    lc_tpl_free(t);
    t = compile_mode("${count|len}", 12, LC_TPL_FORM);
    assert_int_equal(lc_tpl_value(t, &env, scratch, sizeof scratch, &spill, &v), 0);
    assert_int_equal(v.type, LC_V_STRING);
    lc_tpl_free(t);

    const char *missing = NULL;
    env.missing = &missing;
    t = compile_mode("${unset|len}", 12, LC_TPL_RAW);
    assert_int_equal(lc_tpl_value(t, &env, scratch, sizeof scratch, &spill, &v), LC_ENOTFOUND);
    assert_string_equal(missing, "unset");
    lc_tpl_free(t);
    lc_buf_free(&spill);
}

/* What compilation refuses --------------------------------------------------------------------- */

static void test_syntax_errors(void **state)
{
    assert_error("abc${token", LC_EINVAL, "unterminated ${ at offset 3");
    assert_error("${", LC_EINVAL, "unterminated ${ at offset 0");
    assert_error("ok ${token} ${user_id", LC_EINVAL, "unterminated ${ at offset 12");
    assert_error("x${}", LC_EINVAL, "empty ${} at offset 1");
    assert_error("${  }", LC_EINVAL, "empty ${} at offset 0");
    assert_error("${1abc}", LC_EINVAL, "${1abc}: expected a name at offset 2");
    assert_error("${a-b}", LC_EINVAL, "${a-b}: unexpected '-' at offset 3");
    assert_error("${nope|bar}", LC_EINVAL, "${nope|bar}: unknown filter bar"); /* syntax first */
    assert_error("${token-b}", LC_EINVAL, "${token-b}: unexpected '-' at offset 7");
    assert_error("${accounts.name.x}", LC_EINVAL,
                 "${accounts.name.x}: unexpected '.' at offset 15");
    assert_error("${token url}", LC_EINVAL, "${token url}: unexpected 'u' at offset 8");
    assert_error("${token\n}", LC_EINVAL, "${token\n}: unexpected 0x0a at offset 7");
    assert_error("${token${user_id}}", LC_EINVAL, "${token${user_id}: unexpected '$' at offset 7");
    assert_error("${|url}", LC_EINVAL, "${|url}: expected a name at offset 2");
}

static void test_name_errors(void **state)
{
    const char *too_long = "${x_" FIXTURE_LONGEST_NAME "}";
    const char *err = compile_error(too_long, strlen(too_long), LC_ETOOBIG);
    assert_non_null(strstr(err, "...}: name longer than 64 characters"));
    assert_error("/a/${nope}/b", LC_EINVAL, "unknown variable ${nope}");
    assert_error("${ nope | url }", LC_EINVAL, "unknown variable ${nope}");
    assert_error("${accounts.nope}", LC_EINVAL, "unknown variable ${accounts.nope}");
    char msg[128];
    lc_tpl_t *t = NULL;
    assert_int_equal(lc_tpl_compile(&t, "${token}", 8, LC_TPL_RAW, NULL, msg, sizeof msg),
                     LC_EINVAL);
    assert_string_equal(msg, "unknown variable ${token}");
    assert_int_equal(lc_tpl_compile(&t, "${user_id}", 10, LC_TPL_RAW, NULL, msg, sizeof msg), 0);
    lc_tpl_free(t);
}

static void test_filter_errors(void **state)
{
    assert_error("${token|bar}", LC_EINVAL, "${token|bar}: unknown filter bar");
    assert_error("${token | URL}", LC_EINVAL, "${token | URL}: unknown filter URL");
    assert_error("${token|}", LC_EINVAL, "${token|}: expected a filter name at offset 8");
    assert_error("${token||url}", LC_EINVAL, "${token||url}: expected a filter name at offset 8");
    assert_error("${token|url(1)}", LC_EINVAL, "${token|url(1)}: unexpected '(' at offset 11");
    assert_error("${token|url|url|url|url|url|url|url|url|url}", LC_ETOOBIG,
                 "${token|url|url|url|url|url|url|url|url|url}: more than 8 filters");
}

static void test_limits(void **state)
{
    size_t n = LC_TPL_SOURCE_MAX;
    char *big = malloc(n + 2);
    assert_non_null(big);
    memset(big, 'a', n + 1);
    memcpy(big + n - 8, "${token}", 8);
    lc_tpl_t *t = compile_mode(big, n, LC_TPL_RAW);
    lc_tpl_free(t);
    assert_string_equal(compile_error(big, n + 1, LC_ETOOBIG), "template longer than 1048576 bytes");
    free(big);

    char parts[256 * 11 + 16] = "";
    for (int i = 0; i < 128; i++)
        strcat(parts, "${user_id}-"); /* 256 parts */
    t = compile_mode(parts, strlen(parts), LC_TPL_RAW);
    lc_tpl_free(t);
    strcat(parts, "${token}");
    assert_string_equal(compile_error(parts, strlen(parts), LC_ETOOBIG),
                        "more than 256 parts (literal runs and ${...} expressions)");
}

static void test_error_message_truncation(void **state)
{
    char src[300];
    memset(src, 'b', sizeof src);
    memcpy(src, "${token|", 8);
    src[sizeof src - 1] = '}';
    char err[24];
    lc_tpl_t *t = NULL;
    assert_int_equal(lc_tpl_compile(&t, src, sizeof src, LC_TPL_RAW, &fixture_names, err,
                                    sizeof err),
                     LC_EINVAL);
    assert_int_equal(strlen(err), sizeof err - 1); /* cut to the buffer, NUL-terminated */
    static char wide[512];
    assert_int_equal(lc_tpl_compile(&t, src, sizeof src, LC_TPL_RAW, &fixture_names, wide,
                                    sizeof wide),
                     LC_EINVAL);
    assert_non_null(strstr(wide, "...}: unknown filter bbbb"));
    assert_true(strlen(wide) < 64 + 300); /* the expression is shown cut, the filter whole */
    assert_int_equal(lc_tpl_compile(&t, src, sizeof src, LC_TPL_RAW, &fixture_names, NULL, 0),
                     LC_EINVAL); /* no message wanted */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_literal_only),
        cmocka_unit_test(test_dollar_escape),
        cmocka_unit_test(test_bytes_with_nul),
        cmocka_unit_test(test_variables),
        cmocka_unit_test(test_builtins),
        cmocka_unit_test(test_uuid),
        cmocka_unit_test(test_rand),
        cmocka_unit_test(test_rand_errors),
        cmocka_unit_test(test_filter_url),
        cmocka_unit_test(test_filter_json),
        cmocka_unit_test(test_filter_base64),
        cmocka_unit_test(test_filter_len),
        cmocka_unit_test(test_filter_chains),
        cmocka_unit_test(test_mode_json_str),
        cmocka_unit_test(test_mode_form),
        cmocka_unit_test(test_single_var),
        cmocka_unit_test(test_uses),
        cmocka_unit_test(test_name_len),
        cmocka_unit_test(test_unset_variable),
        cmocka_unit_test(test_render_appends),
        cmocka_unit_test(test_value),
        cmocka_unit_test(test_syntax_errors),
        cmocka_unit_test(test_name_errors),
        cmocka_unit_test(test_filter_errors),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_error_message_truncation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
