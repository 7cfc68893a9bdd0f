/* test_lc_text.c — UTF-8 validation and cleaning of text from the network. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lc_text.h"

static void test_ok(void **state)
{
    assert_true(lc_text_ok("", 0));
    assert_true(lc_text_ok("worker-1", 8));
    assert_false(lc_text_ok("worker-1", 7));
    assert_true(lc_text_ok("h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80", 64)); /* é € 😀 */
    assert_false(lc_text_ok("a\nb", 64));
    assert_false(lc_text_ok("a\tb", 64));
    assert_false(lc_text_ok("a\x7f", 64));
    assert_false(lc_text_ok("\xc2\x85", 64));         /* C1 NEL */
    assert_false(lc_text_ok("\xff\xfe", 64));         /* not UTF-8 */
    assert_false(lc_text_ok("\xc0\xaf", 64));         /* overlong '/' */
    assert_false(lc_text_ok("\xe0\x80\xaf", 64));     /* overlong, 3 bytes */
    assert_false(lc_text_ok("\xed\xa0\x80", 64));     /* surrogate */
    assert_false(lc_text_ok("\xf4\x90\x80\x80", 64)); /* past U+10FFFF */
    assert_false(lc_text_ok("\xe2\x82", 64));         /* cut short */
}

static void test_clean(void **state)
{
    char out[16];
    assert_true(lc_text_clean(out, sizeof out, "plain"));
    assert_string_equal(out, "plain");
    assert_false(lc_text_clean(out, sizeof out, "a\r\nb\xff"));
    assert_string_equal(out, "a??b?");
    /* cut at a character boundary: € is 3 bytes and does not fit whole */
    char small[6];
    assert_false(lc_text_clean(small, sizeof small, "abc\xe2\x82\xac"));
    assert_string_equal(small, "abc");
    assert_true(lc_text_ok(small, sizeof small));
    /* whatever comes in, what comes out is valid */
    uint8_t noise[64];
    uint32_t x = 12345;
    for (int round = 0; round < 2000; round++) {
        for (size_t i = 0; i < sizeof noise - 1; i++) {
            x = x * 1103515245u + 12345u;
            noise[i] = (uint8_t)(x >> 16) | 1; /* no NUL inside */
        }
        noise[sizeof noise - 1] = 0;
        lc_text_clean(out, sizeof out, (const char *)noise);
        assert_true(lc_text_ok(out, sizeof out - 1));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ok),
        cmocka_unit_test(test_clean),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
