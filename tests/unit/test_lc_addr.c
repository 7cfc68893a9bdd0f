/* test_lc_addr.c — unit tests for common/lc_addr.c: which hosts are address literals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lc_addr.h"

static void test_ip_literals(void **state)
{
    static const char *const literals[] = {"127.0.0.1", "10.0.0.255", "::1", "fe80::1",
                                           "2001:db8::8:800:200c:417a", "::ffff:192.0.2.1"};
    for (size_t i = 0; i < sizeof literals / sizeof literals[0]; i++)
        if (!lc_addr_is_ip_literal(literals[i]))
            fail_msg("%s: not taken for a literal", literals[i]);
}

static void test_names(void **state)
{
    static const char *const names[] = {"localhost", "example.com", "", "[::1]", "1.2.3",
                                        "256.1.1.1", "10.0.0.1:80", "1.2.3.4.example"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (lc_addr_is_ip_literal(names[i]))
            fail_msg("\"%s\": taken for a literal", names[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ip_literals),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
