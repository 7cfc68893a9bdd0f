/* test_lc_codings.c — common/lc_codings.c and where scenarios use it: the "compression" list
 * (order kept, [] for none, unknown and repeated codings refused with their JSON path), the
 * Accept-Encoding line, and the defaults a v1 task and a journey step take or override. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lc_codings.h"
#include "lc_err.h"
#include "lc_scenario.h"

static int parse(const char *json, lc_codings_t *out, char *err, size_t errlen)
{
    json_error_t jerr;
    json_t *root = json_loads(json, 0, &jerr);
    assert_non_null(root);
    lc_jp_t p = {err, errlen};
    int rv = lc_codings_parse(&p, root, "tasks[0]", "compression", out);
    json_decref(root);
    return rv;
}

static void test_lists(void **state)
{
    (void)state;
    char err[256], line[LC_CODINGS_HEADER_MAX];
    lc_codings_t c = {.n = 1, .list = {LC_CODING_BR}};
    assert_int_equal(parse("{}", &c, err, sizeof err), 0);
    assert_int_equal(c.n, 1); /* absent: the default stays */
    assert_int_equal(parse("{\"compression\": [\"br\", \"gzip\", \"deflate\"]}", &c, err,
                           sizeof err), 0);
    size_t len = lc_codings_header(&c, line);
    assert_string_equal(line, "Accept-Encoding: br, gzip, deflate\r\n");
    assert_int_equal(len, strlen(line));
    assert_int_equal(parse("{\"compression\": []}", &c, err, sizeof err), 0);
    assert_int_equal(c.n, 0);
    assert_int_equal(lc_codings_header(&c, line), 0);
    assert_string_equal(line, "");
}

static void test_refusals(void **state)
{
    (void)state;
    char err[256];
    lc_codings_t c = {0};
    assert_int_equal(parse("{\"compression\": \"gzip\"}", &c, err, sizeof err), LC_EINVAL);
    assert_non_null(strstr(err, "tasks[0].compression: expected an array"));
    assert_int_equal(parse("{\"compression\": [\"gzip\", \"zstd\"]}", &c, err, sizeof err),
                     LC_EINVAL);
    assert_string_equal(err, "tasks[0].compression[1]: expected \"gzip\", \"deflate\" or \"br\"");
    assert_int_equal(parse("{\"compression\": [\"gzip\", 1]}", &c, err, sizeof err), LC_EINVAL);
    assert_int_equal(parse("{\"compression\": [\"GZIP\"]}", &c, err, sizeof err), LC_EINVAL);
    assert_int_equal(parse("{\"compression\": [\"br\", \"br\"]}", &c, err, sizeof err), LC_EINVAL);
    assert_string_equal(err, "tasks[0].compression[1]: \"br\" is given twice");
    assert_int_equal(parse("{\"compression\": [\"br\", \"gzip\", \"deflate\", \"br\"]}", &c, err,
                           sizeof err), LC_EINVAL);
    assert_int_equal(c.n, 0); /* a refused list changes nothing */
}

static void test_v1_tasks(void **state)
{
    (void)state;
    static const char json[] =
        "{\"name\": \"n\", \"target\": \"http://127.0.0.1:1\", \"duration\": 1,"
        " \"compression\": [\"gzip\"],"
        " \"tasks\": [{\"path\": \"/a\"}, {\"path\": \"/b\", \"compression\": [\"br\"]},"
        "             {\"path\": \"/c\", \"compression\": []}]}";
    char err[256] = "";
    lc_scenario_t s;
    assert_int_equal(lc_scenario_parse(json, strlen(json), &s, err, sizeof err), 0);
    assert_int_equal(s.compression.n, 1);
    assert_int_equal(s.tasks[0].compression.list[0], LC_CODING_GZIP);
    assert_int_equal(s.tasks[1].compression.list[0], LC_CODING_BR);
    assert_int_equal(s.tasks[2].compression.n, 0);
    lc_scenario_free(&s);
    static const char both[] =
        "{\"name\": \"n\", \"target\": \"http://127.0.0.1:1\", \"duration\": 1,"
        " \"compression\": [\"gzip\"],"
        " \"tasks\": [{\"path\": \"/a\", \"headers\": {\"accept-encoding\": \"br\"}}]}";
    assert_int_equal(lc_scenario_parse(both, strlen(both), &s, err, sizeof err), LC_EINVAL);
    assert_non_null(strstr(err, "tasks[0].compression: cannot be combined with an "
                                "Accept-Encoding header"));
}

static void test_journey_steps(void **state)
{
    (void)state;
    static const char json[] =
        "{\"name\": \"n\", \"target\": \"http://127.0.0.1:1\", \"duration\": 1,"
        " \"compression\": [\"br\", \"gzip\"],"
        " \"journeys\": [{\"name\": \"j\", \"steps\": [{\"path\": \"/a\"},"
        "   {\"path\": \"/b\", \"compression\": [\"deflate\"]}, {\"path\": \"/c\", \"compression\": []}]}],"
        " \"tasks\": [{\"path\": \"/t\", \"compression\": [\"gzip\"]}]}";
    char err[256] = "";
    lc_scenario_t s;
    assert_int_equal(lc_scenario_parse(json, strlen(json), &s, err, sizeof err), 0);
    const lc_program_t *p = s.program;
    assert_int_equal(p->n_reqs, 4);
    assert_int_equal(p->reqs[0].compression.n, 2);
    assert_int_equal(p->reqs[0].compression.list[0], LC_CODING_BR);
    assert_int_equal(p->reqs[1].compression.n, 1);
    assert_int_equal(p->reqs[1].compression.list[0], LC_CODING_DEFLATE);
    assert_int_equal(p->reqs[2].compression.n, 0);
    assert_int_equal(p->reqs[3].compression.list[0], LC_CODING_GZIP);
    lc_scenario_free(&s);
    static const char bad[] =
        "{\"name\": \"n\", \"target\": \"http://127.0.0.1:1\", \"duration\": 1,"
        " \"journeys\": [{\"name\": \"j\", \"steps\": [{\"path\": \"/a\", \"compression\": [\"lz4\"]}]}]}";
    assert_int_equal(lc_scenario_parse(bad, strlen(bad), &s, err, sizeof err), LC_EINVAL);
    assert_string_equal(err, "journeys[0].steps[0].compression[0]: expected \"gzip\", \"deflate\" "
                             "or \"br\"");
    static const char clash[] =
        "{\"name\": \"n\", \"target\": \"http://127.0.0.1:1\", \"duration\": 1,"
        " \"compression\": [\"gzip\"], \"defaults\": {\"headers\": {\"Accept-Encoding\": \"br\"}},"
        " \"journeys\": [{\"name\": \"j\", \"steps\": [{\"path\": \"/a\"}]}]}";
    assert_int_equal(lc_scenario_parse(clash, strlen(clash), &s, err, sizeof err), LC_EINVAL);
    assert_non_null(strstr(err, "journeys[0].steps[0].compression: cannot be combined"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lists),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_v1_tasks),
        cmocka_unit_test(test_journey_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
