/* test_lc_utf8.c — UTF-8 validation and cleaning: cuts at code-point boundaries, invalid bytes replaced. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "lc_utf8.h"

static void test_seq_len(void **state)
{
    (void)state;
    assert_int_equal(lc_utf8_seq_len("a", 1), 1);
    assert_int_equal(lc_utf8_seq_len("\xc3\xa9", 2), 2);         /* é */
    assert_int_equal(lc_utf8_seq_len("\xe2\x82\xac", 3), 3);     /* € */
    assert_int_equal(lc_utf8_seq_len("\xf0\x9f\x98\x80", 4), 4); /* 😀 */
    assert_int_equal(lc_utf8_seq_len("\xc3", 1), 0);             /* cut short */
    assert_int_equal(lc_utf8_seq_len("\xe2\x82", 2), 0);
    assert_int_equal(lc_utf8_seq_len("\x80", 1), 0);             /* stray continuation */
    assert_int_equal(lc_utf8_seq_len("\xc0\xaf", 2), 0);         /* overlong '/' */
    assert_int_equal(lc_utf8_seq_len("\xe0\x80\xaf", 3), 0);     /* overlong */
    assert_int_equal(lc_utf8_seq_len("\xed\xa0\x80", 3), 0);     /* surrogate */
    assert_int_equal(lc_utf8_seq_len("\xf4\x90\x80\x80", 4), 0); /* beyond U+10FFFF */
    assert_int_equal(lc_utf8_seq_len("\xff", 1), 0);
}

/* Whatever goes in, jansson accepts what comes out. */
static void assert_json_ok(const char *s)
{
    json_t *j = json_string(s);
    assert_non_null(j);
    json_decref(j);
}

static void test_clean_cuts_at_code_point(void **state)
{
    (void)state;
    char out[6];
    /* "aé€": 1 + 2 + 3 bytes; 5 fit, so the euro sign is left out whole. */
    size_t n = lc_utf8_clean(out, sizeof out, "a\xc3\xa9\xe2\x82\xac", 6);
    assert_int_equal(n, 3);
    assert_string_equal(out, "a\xc3\xa9");
    assert_json_ok(out);
    char big[16];
    assert_int_equal(lc_utf8_clean(big, sizeof big, "a\xc3\xa9\xe2\x82\xac", 6), 6);
    assert_string_equal(big, "a\xc3\xa9\xe2\x82\xac");
}

static void test_clean_replaces_invalid(void **state)
{
    (void)state;
    char out[64];
    /* A stray byte, a sequence cut by the end of the input, a control character. */
    lc_utf8_clean(out, sizeof out, "x\xffy\nz\xc3", 6);
    assert_string_equal(out, "x\xef\xbf\xbdy z\xef\xbf\xbd");
    assert_json_ok(out);
    /* A replacement that does not fit is left out, not cut. */
    char small[4];
    assert_int_equal(lc_utf8_clean(small, sizeof small, "ab\xff", 3), 2);
    assert_string_equal(small, "ab");
}

/* A message cut in the middle of a sequence by a fixed buffer (what
 * vsnprintf does to a long path) still becomes a JSON string. */
static void test_clean_after_snprintf(void **state)
{
    (void)state;
    char path[1200] = "";
    for (int i = 0; i < 500; i++)
        strcat(path, "\xc3\xa9");
    char msg[512], clean[512];
    memcpy(msg, "no such endpoint: ", 18);
    memcpy(msg + 18, path, sizeof msg - 19); /* 493 bytes: the last é is cut in half */
    msg[sizeof msg - 1] = '\0';
    assert_null(json_string(msg)); /* what broke the API's errors */
    lc_utf8_clean(clean, sizeof clean, msg, strlen(msg));
    assert_json_ok(clean);
    assert_true(strlen(clean) >= sizeof clean - 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seq_len),
        cmocka_unit_test(test_clean_cuts_at_code_point),
        cmocka_unit_test(test_clean_replaces_invalid),
        cmocka_unit_test(test_clean_after_snprintf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
