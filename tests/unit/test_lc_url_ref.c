/* test_lc_url_ref.c — relative redirect references resolved as RFC 3986 5.2 (and its 5.4
 * examples) says, within the origin's paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lc_url_ref.h"

static void expect(const char *base, const char *ref, const char *want)
{
    char out[256];
    if (!lc_url_ref_resolve(base, ref, strlen(ref), out, sizeof out))
        fail_msg("%s + %s: did not resolve", base, ref);
    if (strcmp(out, want) != 0)
        fail_msg("%s + %s: got %s, want %s", base, ref, out, want);
}

static void test_rfc_examples(void **state)
{
    (void)state;
    /* RFC 3986 5.4.1 and 5.4.2 with base http://a/b/c/d;p?q, the path parts. */
    const char *b = "/b/c/d;p";
    expect(b, "g", "/b/c/g");
    expect(b, "./g", "/b/c/g");
    expect(b, "g/", "/b/c/g/");
    expect(b, "/g", "/g");
    expect(b, "?y", "/b/c/d;p?y");
    expect(b, "g?y", "/b/c/g?y");
    expect(b, "g#s", "/b/c/g");
    expect(b, "g?y#s", "/b/c/g?y");
    expect(b, ";x", "/b/c/;x");
    expect(b, "g;x", "/b/c/g;x");
    expect(b, ".", "/b/c/");
    expect(b, "./", "/b/c/");
    expect(b, "..", "/b/");
    expect(b, "../", "/b/");
    expect(b, "../g", "/b/g");
    expect(b, "../..", "/");
    expect(b, "../../", "/");
    expect(b, "../../g", "/g");
    expect(b, "../../../g", "/g");
    expect(b, "../../../../g", "/g");
    expect(b, "/./g", "/g");
    expect(b, "/../g", "/g");
    expect(b, "g.", "/b/c/g.");
    expect(b, ".g", "/b/c/.g");
    expect(b, "g..", "/b/c/g..");
    expect(b, "..g", "/b/c/..g");
    expect(b, "./../g", "/b/g");
    expect(b, "./g/.", "/b/c/g/");
    expect(b, "g/./h", "/b/c/g/h");
    expect(b, "g/../h", "/b/c/h");
    expect(b, "g;x=1/./y", "/b/c/g;x=1/y");
    expect(b, "g;x=1/../y", "/b/c/y");
    expect(b, "g?y/./x", "/b/c/g?y/./x"); /* the query keeps its dots */
    expect("/", "next", "/next");
    expect("/a//b", "c", "/a//c");
}

static void test_relative_or_not(void **state)
{
    (void)state;
    assert_true(lc_url_ref_is_relative("next", 4));
    assert_true(lc_url_ref_is_relative("../x", 4));
    assert_true(lc_url_ref_is_relative("a/b:c", 5)); /* a ':' after the first '/' */
    assert_true(lc_url_ref_is_relative("?q", 2));
    assert_false(lc_url_ref_is_relative("/x", 2));
    assert_false(lc_url_ref_is_relative("//other/x", 9));
    assert_false(lc_url_ref_is_relative("http://other/", 13));
    assert_false(lc_url_ref_is_relative("javascript:alert(1)", 19));
}

static void test_too_long(void **state)
{
    (void)state;
    char out[8];
    assert_false(lc_url_ref_resolve("/abc/def", "ghijk", 5, out, sizeof out));
    assert_true(lc_url_ref_resolve("/a", "b", 1, out, sizeof out));
    assert_string_equal(out, "/b");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc_examples),
        cmocka_unit_test(test_relative_or_not),
        cmocka_unit_test(test_too_long),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
