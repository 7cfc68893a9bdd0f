/* test_template.c — worker/template.c: compiling and rendering ${…}
 * templates, and whole requests rendered from a plan. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lc_err.h"
#include "lc_scenario.h"
#include "plan.h"
#include "rng.h"
#include "template.h"

static char *render(const char *src, uint64_t user, uint64_t iter, uint64_t *rng)
{
    worker_tpl_t t;
    char err[128];
    assert_int_equal(worker_tpl_compile(&t, src, err, sizeof err), 0);
    lc_buf_t out = {0};
    worker_tpl_vars_t v = {.user_id = user, .iteration = iter, .rng = rng};
    assert_int_equal(worker_tpl_render(&t, &v, &out), 0);
    worker_tpl_free(&t);
    char *s = strdup(out.data ? out.data : "");
    lc_buf_free(&out);
    return s;
}

static void test_literal_only(void **state)
{
    uint64_t rng = 1;
    worker_tpl_t t;
    char err[128];
    assert_int_equal(worker_tpl_compile(&t, "/plain/$path?a=$", err, sizeof err), 0);
    assert_false(t.dynamic);
    worker_tpl_free(&t);
    char *s = render("/plain/$path?a=$", 1, 0, &rng);
    assert_string_equal(s, "/plain/$path?a=$");
    free(s);
    s = render("", 1, 0, &rng);
    assert_string_equal(s, "");
    free(s);
}

static void test_user_and_iteration(void **state)
{
    uint64_t rng = 1;
    char *s = render("/u/${user_id}/i/${iteration}${user_id}", 42, 7, &rng);
    assert_string_equal(s, "/u/42/i/742");
    free(s);
}

static void test_rand_bounds(void **state)
{
    uint64_t rng = worker_rng_seed(12345, 0);
    int seen[5] = {0};
    for (int i = 0; i < 2000; i++) {
        char *s = render("${rand(-2,2)}", 1, 0, &rng);
        long v = strtol(s, NULL, 10);
        assert_true(v >= -2 && v <= 2);
        seen[v + 2]++;
        free(s);
    }
    for (int i = 0; i < 5; i++)
        assert_true(seen[i] > 250); /* every value comes up, roughly uniformly */
    char *s = render("${rand(7,7)}", 1, 0, &rng);
    assert_string_equal(s, "7");
    free(s);
}

static void test_uuid_shape(void **state)
{
    uint64_t rng = worker_rng_seed(99, 3);
    char *a = render("${uuid}", 1, 0, &rng);
    char *b = render("${uuid}", 1, 0, &rng);
    assert_int_equal(strlen(a), 36);
    assert_true(a[8] == '-' && a[13] == '-' && a[18] == '-' && a[23] == '-');
    assert_int_equal(a[14], '4');
    assert_true(strchr("89ab", a[19]) != NULL);
    assert_string_not_equal(a, b);
    free(a);
    free(b);
}

static void test_bad_templates(void **state)
{
    worker_tpl_t t;
    char err[128];
    assert_int_equal(worker_tpl_compile(&t, "/x/${nope}", err, sizeof err), LC_EINVAL);
    assert_non_null(strstr(err, "${nope}"));
    assert_int_equal(worker_tpl_compile(&t, "/x/${user_id", err, sizeof err), LC_EINVAL);
    assert_int_equal(worker_tpl_compile(&t, "${rand(5,1)}", err, sizeof err), LC_EINVAL);
    assert_int_equal(worker_tpl_compile(&t, "${rand(a,b)}", err, sizeof err), LC_EINVAL);
}

static worker_plan_t *plan_of(const char *json)
{
    lc_scenario_t sc;
    char err[256];
    int rv = lc_scenario_parse(json, strlen(json), &sc, err, sizeof err);
    if (rv != 0)
        fail_msg("scenario: %s", err);
    worker_plan_t *p;
    assert_int_equal(worker_plan_build(&p, &sc, err, sizeof err), 0);
    return p;
}

static void test_prerendered_request(void **state)
{
    worker_plan_t *p = plan_of(
        "{\"name\":\"n\",\"target\":\"http://example.com/api\",\"duration\":\"1s\","
        "\"tasks\":[{\"name\":\"h\",\"method\":\"HEAD\",\"path\":\"/x\","
        "\"headers\":{\"Accept\":\"*/*\"}},"
        "{\"name\":\"p\",\"method\":\"POST\",\"path\":\"/y\",\"body\":\"hello\"}]}");
    lc_buf_t scratch = {0}, out = {0};
    uint64_t rng = 1;
    worker_tpl_vars_t v = {.user_id = 1, .rng = &rng};
    const char *req;
    size_t len;
    assert_false(p->tasks[0].dynamic);
    assert_true(p->tasks[0].head);
    assert_int_equal(worker_plan_render(p, 0, &v, &scratch, &out, &req, &len), 0);
    assert_string_equal(req, "HEAD /api/x HTTP/1.1\r\nHost: example.com\r\n"
                             "User-Agent: loadcluster/" LC_VERSION "\r\nAccept: */*\r\n\r\n");
    assert_int_equal(worker_plan_render(p, 1, &v, &scratch, &out, &req, &len), 0);
    assert_string_equal(req, "POST /api/y HTTP/1.1\r\nHost: example.com\r\n"
                             "User-Agent: loadcluster/" LC_VERSION "\r\n"
                             "Content-Length: 5\r\n\r\nhello");
    assert_null(out.data); /* pre-rendered: the scratch buffers were not used */
    worker_plan_free(p);
}

static void test_templated_request(void **state)
{
    worker_plan_t *p = plan_of(
        "{\"name\":\"n\",\"target\":\"http://127.0.0.1:8080\",\"duration\":\"1s\","
        "\"tasks\":[{\"name\":\"t\",\"method\":\"PUT\",\"path\":\"/u/${user_id}\","
        "\"headers\":{\"User-Agent\":\"mine\"},\"body\":\"{\\\"i\\\":${iteration}}\"}]}");
    lc_buf_t scratch = {0}, out = {0};
    uint64_t rng = 1;
    worker_tpl_vars_t v = {.user_id = 12, .iteration = 345, .rng = &rng};
    const char *req;
    size_t len;
    assert_true(p->tasks[0].dynamic);
    assert_int_equal(worker_plan_render(p, 0, &v, &scratch, &out, &req, &len), 0);
    assert_string_equal(req, "PUT /u/12 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"
                             "User-Agent: mine\r\nContent-Length: 9\r\n\r\n{\"i\":345}");
    assert_int_equal(len, strlen(req));
    lc_buf_free(&scratch);
    lc_buf_free(&out);
    worker_plan_free(p);
}

static void test_weighted_pick(void **state)
{
    worker_plan_t *p = plan_of("{\"name\":\"n\",\"target\":\"http://h\",\"duration\":\"1s\",\"tasks\":["
                "{\"name\":\"a\",\"weight\":3,\"path\":\"/a\"},"
                "{\"name\":\"b\",\"weight\":1,\"path\":\"/b\"},"
                "{\"name\":\"a\",\"weight\":4,\"path\":\"/a2\"}]}");
    assert_int_equal(p->n_endpoints, 2); /* tasks named alike share an endpoint */
    assert_int_equal(p->tasks[2].endpoint, 0);
    uint64_t rng = worker_rng_seed(7, 0), n[3] = {0};
    for (int i = 0; i < 80000; i++)
        n[worker_plan_pick(p, &rng)]++;
    assert_true(n[0] > 29000 && n[0] < 31000);
    assert_true(n[1] > 9000 && n[1] < 11000);
    assert_true(n[2] > 39000 && n[2] < 41000);
    worker_plan_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_literal_only),
        cmocka_unit_test(test_user_and_iteration),
        cmocka_unit_test(test_rand_bounds),
        cmocka_unit_test(test_uuid_shape),
        cmocka_unit_test(test_bad_templates),
        cmocka_unit_test(test_prerendered_request),
        cmocka_unit_test(test_templated_request),
        cmocka_unit_test(test_weighted_pick),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
