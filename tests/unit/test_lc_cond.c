/* test_lc_cond.c — common/journey/lc_cond.c: the condition language of if and while, its
 * precedence, numeric and string comparison, exists/contains/rand, and what it refuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lc_cond.h"
#include "lc_err.h"
#include "tpl_fixture.h"

static uint64_t rng = 0x9E3779B97F4A7C15ULL;

static lc_cond_t *compile(const char *src)
{
    lc_cond_t *c = NULL;
    char err[512] = "";
    int rv = lc_cond_compile(&c, src, strlen(src), &fixture_names, err, sizeof err);
    if (rv != 0)
        fail_msg("compile \"%s\": %s", src, err);
    return c;
}

static bool eval(const char *src)
{
    lc_cond_t *c = compile(src);
    const char *missing = NULL;
    lc_tpl_env_t env = fixture_env(&rng, &missing);
    bool out = false;
    int rv = lc_cond_eval(c, &env, &out);
    if (rv != 0)
        fail_msg("eval \"%s\": %s (missing %s)", src, lc_strerror(rv), missing);
    lc_cond_free(c);
    return out;
}

#define assert_holds(src) assert_true(eval(src))
#define assert_fails(src) assert_false(eval(src))

/* Compiles src expecting code; returns the message (static). */
static const char *compile_error(const char *src, size_t len, int code)
{
    static char err[512];
    lc_cond_t *c = NULL;
    err[0] = '\0';
    int rv = lc_cond_compile(&c, src, len, &fixture_names, err, sizeof err);
    if (rv != code)
        fail_msg("compile \"%.80s\": got %d (%s), wanted %d", src, rv, err, code);
    assert_null(c);
    return err;
}

#define assert_error(src, code, want)                                                              \
    assert_string_equal(compile_error(src, strlen(src), code), want)

/* Logic ---------------------------------------------------------------------------------------- */

static void test_literals(void **state)
{
    assert_holds("true");
    assert_fails("false");
    assert_holds("1");
    assert_fails("0");
    assert_fails("0.0");
    assert_fails("-0");
    assert_holds("-1.5e3");
    assert_holds("'x'");
    assert_fails("''");
    assert_fails("\"\"");
    assert_holds("'false'"); /* a non-empty string, whatever it says */
    assert_holds("'0'");
    assert_holds("  \t\r\n true \n");
}

static void test_precedence(void **state)
{
    assert_holds("!true && false || true");   /* ((!true) && false) || true */
    assert_fails("!true && (false || true)");
    assert_holds("!(true && false) || false");
    assert_holds("true || false && false");   /* && binds tighter than || */
    assert_fails("(true || false) && false");
    assert_holds("false && true || true");
    assert_holds("!1 == 2");                  /* ! applies to the comparison: !(1 == 2) */
    assert_fails("!!false");
    assert_holds("!!!false");
    assert_holds("!${off}");
    assert_holds("(1 < 2) == true");          /* a condition as an operand */
    assert_holds("(1 > 2) == 'false'");
    assert_holds("((((true))))");
    assert_holds("true&&true||false");        /* no spaces needed */
}

static void test_truthiness_of_values(void **state)
{
    assert_holds("${flag}");
    assert_fails("${off}");       /* the boolean false */
    assert_fails("${zero}");      /* the number 0 */
    assert_holds("${zerostr}");   /* the string "0": a non-empty string */
    assert_fails("${empty}");
    assert_fails("${nothing}");   /* null */
    assert_holds("${obj}");
    assert_holds("${token}");
    assert_holds("${count}");
    assert_fails("${empty|len}"); /* |len makes a number */
    assert_holds("${token|len}");
    assert_holds("${user_id}");
    fixture_set_x("0.000", 5, LC_V_NUMBER);
    assert_fails("${x}");
    fixture_set_x("-", 1, LC_V_NUMBER); /* a number's text we cannot read: as a string */
    assert_holds("${x}");
}

/* Comparison ----------------------------------------------------------------------------------- */

static void test_numeric_comparison(void **state)
{
    assert_holds("'10' > '9'");       /* both numbers: numeric */
    assert_holds("10 > 9");
    assert_holds("${count} > 0");
    assert_holds("${count} == 3");
    assert_holds("${count} >= 3");
    assert_holds("${count} <= 3.0");
    assert_fails("${count} < 3");
    assert_holds("${count} != 4");
    assert_holds("1.0 == 1");
    assert_holds("'1e3' == 1000");
    assert_holds("'007' == 7");
    assert_holds("-0 == 0");
    assert_holds("'+5' == 5");
    assert_holds("'-3' < '-2'");
    assert_holds("-10 < -9");
    assert_holds(".5 == 0.5");
    assert_holds("5. == 5");
    assert_holds("1e400 > 1e300");    /* out of range: infinity still compares */
    assert_holds("${token|len} == 6");
    assert_holds("${user_id} == 42");
    assert_holds("${iteration} < 10");
}

static void test_exact_integers(void **state)
{
    /* 20-digit ids differ in the last digit: doubles would call them equal. */
    assert_fails("${big} == '12345678901234567891'");
    assert_holds("${big} < 12345678901234567891");
    assert_holds("${big} == 12345678901234567890");
    assert_holds("${big} == '00012345678901234567890'");
    assert_holds("-12345678901234567891 < -12345678901234567890");
    assert_holds("-99999999999999999999 < 1");
    assert_holds("0 == -0");
    assert_holds("${big} > 1.5");     /* a decimal on one side: doubles */
}

static void test_string_comparison(void **state)
{
    assert_holds("'abc' < 'abd'");
    assert_holds("'abc' < 'abcd'");
    assert_holds("'abd' > 'abcd'");
    assert_holds("'a9' > '10'");      /* not both numbers: bytes */
    assert_holds("'B' < 'a'");        /* bytewise, not by locale */
    assert_holds("${token} == 'abc123'");
    assert_holds("${token} != 'abc124'");
    assert_holds("${accounts.name} == \"alice\"");
    assert_holds("'0x10' != 16");     /* no hex: a string */
    assert_holds("'inf' != 'nan'");
    assert_fails("' 5' == 5");        /* spaces make it a string */
    assert_fails("'5 ' == 5");
    assert_holds("'1e' != 1");
    assert_holds("${flag} == true");
    assert_holds("${flag} == 'true'");
    assert_holds("${off} == false");
    assert_holds("${nothing} == 'null'");
    assert_holds("'' < 'a'");
    assert_holds("'' == ${empty}");
    assert_holds("'\xc3\xa9' > 'z'"); /* UTF-8 bytes sort after ASCII */
    assert_holds("'it\\'s' == \"it's\"");
    assert_holds("'say \"hi\" \\\\ /' == ${quote}");
    assert_holds("\"\\\"\" == '\"'");
}

/* Functions ------------------------------------------------------------------------------------ */

static void test_exists(void **state)
{
    assert_fails("exists(unset)");
    assert_fails("exists( ${ unset } )");
    assert_holds("exists(token)");
    assert_holds("exists(${accounts.name})");
    assert_holds("!exists(unset)");
    assert_fails("exists(unset) && ${unset} > 0"); /* && stops before the unset variable */
    assert_holds("exists(token) || ${unset} > 0");
    assert_holds("!exists(unset) || ${unset} > 0");
    assert_holds("exists(empty)");                 /* set, if empty */
}

static void test_unset_variable_fails(void **state)
{
    static const char *const cases[] = {"${unset} > 0", "${unset}", "true && ${unset|len} == 0",
                                        "contains(${unset}, 'a')", "!${unset}",
                                        "exists(token) && ${unset} == 1"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        lc_cond_t *c = compile(cases[i]);
        const char *missing = NULL;
        lc_tpl_env_t env = fixture_env(&rng, &missing);
        bool out = true;
        assert_int_equal(lc_cond_eval(c, &env, &out), LC_ENOTFOUND);
        assert_string_equal(missing, "unset");
        lc_cond_free(c);
    }
}

static void test_contains(void **state)
{
    assert_holds("contains(${token}, 'c12')");
    assert_fails("contains(${token}, 'zz')");
    assert_holds("contains(${token}, '')");
    assert_holds("contains('', '')");
    assert_fails("contains('', 'a')");
    assert_fails("contains('ab', 'abc')");
    assert_holds("contains(${obj}, '[1,2]')");
    assert_holds("contains( ${obj|json} , 2 )");
    assert_holds("contains(${nul}, 'b')");          /* past a NUL byte */
    assert_holds("contains(123456, 345)");
    assert_holds("contains((1 < 2), 'ru')");        /* the text of true */
    assert_holds("contains(${uuid}, '-4')");
    assert_holds("contains('a', 'a') == true");
    assert_holds("!contains(${utf8}, 'x')");
}

static void test_rand_frequency(void **state)
{
    lc_cond_t *c = compile("rand() < 0.3");
    lc_tpl_env_t env = fixture_env(&rng, NULL);
    int hits = 0;
    for (int i = 0; i < 20000; i++) {
        bool out;
        assert_int_equal(lc_cond_eval(c, &env, &out), 0);
        hits += out;
    }
    assert_in_range(hits, 5600, 6400); /* 6000 expected, sigma 65 */
    lc_cond_free(c);
    c = compile("rand() >= 0 && rand() < 1 && rand ( ) != 1");
    for (int i = 0; i < 2000; i++) {
        bool out;
        assert_int_equal(lc_cond_eval(c, &env, &out), 0);
        assert_true(out);
    }
    lc_cond_free(c);
    assert_holds("rand() != 'x'");               /* as text when compared with a string */
    assert_holds("contains(rand(), '.') || rand() >= 0");
}

/* Questions about a condition ------------------------------------------------------------------ */

static void test_uses(void **state)
{
    const char *src = "${token} == 'x' && exists(count) || ${token|len} > ${accounts.name} || "
                      "exists(${flag}) || ${user_id} > rand() || contains(${obj}, ${token})";
    lc_cond_t *c = compile(src);
    int slots[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    assert_int_equal(lc_cond_uses(c, slots, 8), 3); /* count and flag only in exists() */
    assert_int_equal(slots[0], SLOT_TOKEN);
    assert_int_equal(slots[1], SLOT_ACCOUNT);
    assert_int_equal(slots[2], SLOT_OBJ);
    assert_int_equal(slots[3], -1);
    assert_int_equal(lc_cond_uses(c, slots, 1), 3);
    assert_int_equal(lc_cond_uses(c, NULL, 0), 3);
    assert_string_equal(lc_cond_source(c), src);
    lc_cond_free(c);
    c = compile("exists(token) && rand() < 0.5");
    assert_int_equal(lc_cond_uses(c, slots, 8), 0);
    lc_cond_free(c);
    lc_cond_free(NULL);
}

static void test_long_values_spill(void **state)
{
    /* A value past the stack scratch is rendered on the heap and freed (ASan checks). */
    char big[600];
    memset(big, 'q', sizeof big);
    big[590] = '!';
    fixture_set_x(big, sizeof big, LC_V_STRING);
    assert_holds("contains(${x|url}, 'q%21q')");
    assert_holds("${x|base64|len} == 800");
    assert_holds("${x|json} < ${x|url}"); /* both spill; '"' sorts before 'q' */
    assert_holds("${x} == ${x}");
    assert_holds("${x|len} == 600");
}

static void test_names_null(void **state)
{
    lc_cond_t *c = NULL;
    char err[256];
    assert_int_equal(lc_cond_compile(&c, "1 < 2 && rand() < 2", 19, NULL, err, sizeof err), 0);
    lc_tpl_env_t env = fixture_env(&rng, NULL);
    bool out = false;
    assert_int_equal(lc_cond_eval(c, &env, &out), 0);
    assert_true(out);
    lc_cond_free(c);
    assert_int_equal(lc_cond_compile(&c, "exists(token)", 13, NULL, err, sizeof err), LC_EINVAL);
    assert_string_equal(err, "exists(token): unknown variable token at offset 7");
    assert_int_equal(lc_cond_compile(&c, "${token}", 8, NULL, err, sizeof err), LC_EINVAL);
}

/* What compilation refuses --------------------------------------------------------------------- */

static void test_operand_errors(void **state)
{
    assert_error("${count} > ", LC_EINVAL, "${count} > : expected an operand at offset 11");
    assert_error("", LC_EINVAL, ": expected an operand at offset 0");
    assert_error("   ", LC_EINVAL, "   : expected an operand at offset 3");
    assert_error("()", LC_EINVAL, "(): expected an operand at offset 1");
    assert_error("1 &&", LC_EINVAL, "1 &&: expected an operand at offset 4");
    assert_error("|| 1", LC_EINVAL, "|| 1: expected an operand at offset 0");
    assert_error("!", LC_EINVAL, "!: expected an operand at offset 1");
    assert_error("!= 1", LC_EINVAL, "!= 1: expected an operand at offset 0");
    assert_error("+", LC_EINVAL, "+: expected an operand at offset 0");
    assert_error("@", LC_EINVAL, "@: expected an operand at offset 0");
    assert_error("count > 0", LC_EINVAL,
                 "count > 0: unknown word count (a variable is written ${count}) at offset 0");
    assert_error("null", LC_EINVAL,
                 "null: unknown word null (a variable is written ${null}) at offset 0");
    assert_error("(1", LC_EINVAL, "(1: expected ')' at offset 2");
}

static void test_trailing_garbage(void **state)
{
    assert_error("1 2", LC_EINVAL, "1 2: unexpected '2' after the expression at offset 2");
    assert_error("true false", LC_EINVAL,
                 "true false: unexpected 'f' after the expression at offset 5");
    assert_error("1 < 2 < 3", LC_EINVAL, "1 < 2 < 3: unexpected '<' after the expression at offset 6");
    assert_error("1 = 1", LC_EINVAL,
                 "1 = 1: unexpected '=' after the expression (equality is '==') at offset 2");
    assert_error("1 & 1", LC_EINVAL,
                 "1 & 1: unexpected '&' after the expression (and is '&&') at offset 2");
    assert_error("1 | 1", LC_EINVAL,
                 "1 | 1: unexpected '|' after the expression (or is '||') at offset 2");
    assert_error("1)", LC_EINVAL, "1): unexpected ')' after the expression at offset 1");
    assert_error("5abc", LC_EINVAL, "5abc: unexpected 'a' after the expression at offset 1");
    assert_error("0x10 == 16", LC_EINVAL,
                 "0x10 == 16: unexpected 'x' after the expression at offset 1");
    assert_string_equal(compile_error("1\0", 2, LC_EINVAL),
                        "1: unexpected byte 0x00 after the expression at offset 1");
}

static void test_string_errors(void **state)
{
    assert_error("'abc", LC_EINVAL, "'abc: unterminated string at offset 0");
    assert_error("1 == \"abc", LC_EINVAL, "1 == \"abc: unterminated string at offset 5");
    assert_error("'abc\\'", LC_EINVAL, "'abc\\': unterminated string at offset 0");
    assert_error("'abc\\", LC_EINVAL, "'abc\\: unterminated string at offset 0");
    assert_error("'a\\nb'", LC_EINVAL,
                 "'a\\nb': unknown escape (a string knows \\' \\\" and \\\\) at offset 2");
    assert_error("'${token}' == 'x'", LC_EINVAL,
                 "'${token}' == 'x': ${ inside quotes (a value is written ${x}, without quotes) "
                 "at offset 1");
    assert_holds("'$' == '$' && '{' != '$'"); /* a '$' alone is fine */
}

static void test_function_errors(void **state)
{
    assert_error("exists()", LC_EINVAL, "exists(): exists() takes a variable name at offset 7");
    assert_error("exists(nope)", LC_EINVAL, "exists(nope): unknown variable nope at offset 7");
    assert_error("exists token", LC_EINVAL, "exists token: expected '(' at offset 7");
    assert_error("exists(${token)", LC_EINVAL, "exists(${token): expected '}' at offset 14");
    assert_error("exists(${token|len})", LC_EINVAL,
                 "exists(${token|len}): expected '}' at offset 14");
    assert_error("exists(token", LC_EINVAL, "exists(token: expected ')' at offset 12");
    assert_holds("exists(" FIXTURE_LONGEST_NAME ") && ${" FIXTURE_LONGEST_NAME "} == 'long'");
    assert_error("exists(x_" FIXTURE_LONGEST_NAME ")", LC_ETOOBIG,
                 "exists(x_" FIXTURE_LONGEST_NAME "): name longer than 64 characters at offset 7");
    assert_error("exists(user_id)", LC_EINVAL,
                 "exists(user_id): unknown variable user_id at offset 7");
    assert_error("contains(1)", LC_EINVAL, "contains(1): expected ',' at offset 10");
    assert_error("contains(1, 2, 3)", LC_EINVAL, "contains(1, 2, 3): expected ')' at offset 13");
    assert_error("contains(1 == 1, 2)", LC_EINVAL,
                 "contains(1 == 1, 2): expected ',' at offset 11");
    assert_error("rand(1,2) > 1", LC_EINVAL,
                 "rand(1,2) > 1: rand() takes no arguments (${rand(a,b)} draws an integer) at "
                 "offset 5");
    assert_error("rand", LC_EINVAL, "rand: expected '(' at offset 4");
}

static void test_template_errors(void **state)
{
    assert_error("${count", LC_EINVAL, "${count: unterminated ${ at offset 0");
    assert_error("1 < ${nope}", LC_EINVAL,
                 "1 < ${nope}: unknown variable ${nope} (in the ${ at offset 4)");
    assert_error("${token|bar} == 1", LC_EINVAL,
                 "${token|bar} == 1: ${token|bar}: unknown filter bar (in the ${ at offset 0)");
    assert_error("${} == 1", LC_EINVAL, "${} == 1: empty ${} at offset 0 (in the ${ at offset 0)");
    assert_error("${rand(3,1)} > 1", LC_EINVAL,
                 "${rand(3,1)} > 1: ${rand(3,1)}: rand(a,b) needs a <= b (in the ${ at offset 0)");
    assert_holds("${rand(1,3)} >= 1 && ${ rand( 1 , 3 ) } <= 3 && ${uuid|len} == 36");
}

static void test_limits(void **state)
{
    char src[LC_COND_SOURCE_MAX + 2];
    /* Depth: 16 nested parentheses are fine, 17 are not; likewise '!'. */
    snprintf(src, sizeof src, "%.16s1%.16s", "((((((((((((((((", "))))))))))))))))");
    assert_holds(src);
    snprintf(src, sizeof src, "%.17s1%.17s", "(((((((((((((((((", ")))))))))))))))))");
    assert_string_equal(compile_error(src, strlen(src), LC_ETOOBIG),
                        "(((((((((((((((((1))))))))))))))))): nested deeper than 16 at offset 17");
    assert_holds("!!!!!!!!!!!!!!!!0" + 1); /* 15 */
    assert_fails("!!!!!!!!!!!!!!!!0");     /* 16 */
    compile_error("!!!!!!!!!!!!!!!!!0", 18, LC_ETOOBIG);
    /* Calls nest too: contains(contains(…(1,'')…,''),''). */
    for (int calls = 16; calls <= 17; calls++) {
        src[0] = '\0';
        for (int i = 0; i < calls; i++)
            strcat(src, "contains(");
        strcat(src, "1,'')");
        for (int i = 1; i < calls; i++)
            strcat(src, ",'')");
        if (calls == 16)
            assert_holds(src);
        else
            compile_error(src, strlen(src), LC_ETOOBIG);
    }

    /* Nodes: 32 operands and 31 operators fit in 64; one more operand fits, its || does not. */
    src[0] = '\0';
    for (int i = 0; i < 32; i++)
        strcat(src, i ? "||0" : "0");
    assert_fails(src);
    strcat(src, "||1");
    assert_string_equal(compile_error(src, strlen(src), LC_ETOOBIG) + strlen(src),
                        ": more than 64 operands and operators at offset 97");

    /* Source: 1024 bytes are fine, 1025 are not. */
    memset(src, ' ', LC_COND_SOURCE_MAX + 1);
    src[0] = '1';
    src[LC_COND_SOURCE_MAX + 1] = '\0';
    lc_cond_t *c = NULL;
    char err[64];
    assert_int_equal(lc_cond_compile(&c, src, LC_COND_SOURCE_MAX, &fixture_names, err, sizeof err),
                     0);
    lc_cond_free(c);
    assert_int_equal(lc_cond_compile(&c, src, LC_COND_SOURCE_MAX + 1, &fixture_names, err,
                                     sizeof err),
                     LC_ETOOBIG);
    assert_string_equal(err, "condition longer than 1024 bytes");
    assert_null(c);
}

static void test_number_limits(void **state)
{
    char src[400];
    memset(src, '9', 128);
    strcpy(src + 128, " > 1");
    assert_holds(src);
    memset(src, '9', 129);
    strcpy(src + 129, " > 1");
    assert_string_equal(compile_error(src, strlen(src), LC_ETOOBIG) + strlen(src),
                        ": number longer than 128 bytes at offset 0");
    /* A value's text past 128 bytes is a string, even when it is all digits. */
    char digits[200];
    memset(digits, '1', sizeof digits);
    fixture_set_x(digits, sizeof digits, LC_V_STRING);
    assert_holds("${x} < 2"); /* bytewise: '1' sorts before '2' */
    assert_fails("${x} > 2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_literals),
        cmocka_unit_test(test_precedence),
        cmocka_unit_test(test_truthiness_of_values),
        cmocka_unit_test(test_numeric_comparison),
        cmocka_unit_test(test_exact_integers),
        cmocka_unit_test(test_string_comparison),
        cmocka_unit_test(test_exists),
        cmocka_unit_test(test_unset_variable_fails),
        cmocka_unit_test(test_contains),
        cmocka_unit_test(test_rand_frequency),
        cmocka_unit_test(test_uses),
        cmocka_unit_test(test_long_values_spill),
        cmocka_unit_test(test_names_null),
        cmocka_unit_test(test_operand_errors),
        cmocka_unit_test(test_trailing_garbage),
        cmocka_unit_test(test_string_errors),
        cmocka_unit_test(test_function_errors),
        cmocka_unit_test(test_template_errors),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_number_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
