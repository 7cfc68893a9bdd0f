/* test_redirect.c — worker/redirect.c: which statuses are followed, which turn the request
 * into a GET without its body, and the hop limit (the engine's use of them:
 * test_journey_http.c's test_redirect_methods and test_redirect_limits). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "redirect.h"

static void test_followed_statuses(void **state)
{
    static const int followed[] = {301, 302, 303, 307, 308};
    static const int not_followed[] = {200, 300, 304, 305, 306, 309, 400};
    for (size_t i = 0; i < sizeof followed / sizeof followed[0]; i++)
        assert_true(worker_redirect_status(followed[i]));
    for (size_t i = 0; i < sizeof not_followed / sizeof not_followed[0]; i++)
        assert_false(worker_redirect_status(not_followed[i]));
}

/* 301 and 302: POST becomes GET (the body dropped); 303: any method; 307, 308: none. */
static void test_to_get(void **state)
{
    assert_true(worker_redirect_to_get(301, "POST"));
    assert_true(worker_redirect_to_get(302, "POST"));
    static const char *const methods[] = {"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"};
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        assert_true(worker_redirect_to_get(303, methods[i]));
        assert_false(worker_redirect_to_get(307, methods[i]));
        assert_false(worker_redirect_to_get(308, methods[i]));
    }
    assert_false(worker_redirect_to_get(301, "HEAD"));
    assert_false(worker_redirect_to_get(303, "HEAD"));
}

/* The default follow_redirects is 10 (lc_journey.c): hops 0..9 are followed, the 11th
 * redirect (after 10 hops) is not; 0 follows none. */
static void test_hop_limit(void **state)
{
    for (unsigned hops = 0; hops < 10; hops++)
        assert_true(worker_redirect_may_follow(hops, 10));
    assert_false(worker_redirect_may_follow(10, 10));
    assert_false(worker_redirect_may_follow(0, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_followed_statuses),
        cmocka_unit_test(test_to_get),
        cmocka_unit_test(test_hop_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
