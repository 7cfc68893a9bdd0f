/* test_run_verdict.c — k6-style thresholds judged over a run's stored totals
 * (master/run_verdict.c): per-threshold results, the verdict, abortOnFail. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lc_clock.h"
#include "lc_hist.h"
#include "lc_scenario.h"
#include "run_verdict.h"
#include "store.h"
#include "store_commands.h"

#define RUN 1

/* Two tasks; the thresholds are added by each test. */
static const char scenario_head[] =
    "{\"name\":\"t\",\"target\":\"http://127.0.0.1:1\",\"duration\":\"60s\",\"users\":2,"
    "\"tasks\":[{\"name\":\"list\",\"path\":\"/l\"},{\"name\":\"create\",\"path\":\"/c\"},"
    "{\"name\":\"idle\",\"path\":\"/i\"}]";

static void parse_scenario(const char *thresholds, lc_scenario_t *sc)
{
    char json[4096], err[512];
    snprintf(json, sizeof json, "%s%s%s}", scenario_head, thresholds ? ",\"thresholds\":" : "",
             thresholds ? thresholds : "");
    if (lc_scenario_parse(json, strlen(json), sc, err, sizeof err) != 0)
        fail_msg("scenario does not parse: %s", err);
}

static void apply(store_t *s, Lc__Command *cmd)
{
    assert_int_equal(store_apply(s, cmd), 0);
}

static void set_state(store_t *s, const char *state, uint64_t at, const char *reason)
{
    assert_int_equal(test_store_set_state(s, RUN, state, at, reason), 0);
}

/* A RunSeconds command of run 1 holding batch b alone. */
static void apply_batch(store_t *s, Lc__StatsBatch *b)
{
    Lc__StatsBatch *bs[] = {b};
    Lc__RunSeconds rs = LC__RUN_SECONDS__INIT;
    rs.run = RUN;
    rs.batches = bs;
    rs.n_batches = 1;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_RUN_SECONDS;
    cmd.run_seconds = &rs;
    apply(s, &cmd);
}

/* One endpoint's counters with every request at latency_us; ep->hist.data is malloc'd. */
static void endpoint(Lc__EndpointStats *ep, const char *name, uint64_t count, uint64_t failures,
                     uint64_t latency_us)
{
    lc_hist_t *h = malloc(sizeof *h);
    assert_non_null(h);
    lc_hist_init(h);
    for (uint64_t i = 0; i < count; i++)
        lc_hist_record(h, latency_us);
    lc__endpoint_stats__init(ep);
    ep->name = (char *)name;
    ep->method = "GET";
    ep->count = count;
    ep->failures = failures;
    assert_int_equal(lc_hist_encode(h, &ep->hist.data, &ep->hist.len), 0);
    free(h);
}

/* A store holding run 1: "list" 100 requests at 2 ms, "create" 50 at 300 ms
 * with 5 failures, "idle" nothing; running since started_ms. */
static store_t *store_with_run(uint64_t started_ms)
{
    store_t *s = test_store_open();
    assert_int_equal(test_store_create_run(s, RUN, "t", "{}", 2, started_ms), 0);
    set_state(s, "running", started_ms, "");
    Lc__EndpointStats list, create;
    endpoint(&list, "list", 100, 0, 2000);
    endpoint(&create, "create", 50, 5, 300000);
    Lc__EndpointStats *eps[] = {&list, &create};
    Lc__StatsBatch b = LC__STATS_BATCH__INIT;
    b.run = RUN;
    b.worker_id = "w1";
    b.seq = 1;
    b.endpoints = eps;
    b.n_endpoints = 2;
    apply_batch(s, &b);
    free(list.hist.data);
    free(create.hist.data);
    return s;
}

static bool near(double a, double b)
{
    return fabs(a - b) <= fabs(b) * 0.01 + 1e-9;
}

/* Checks result i: its endpoint (NULL: none), expression, observed (NAN: null) and passed. */
static void expect_result(const json_t *results, size_t i, const char *endpoint, const char *expr,
                          double observed, bool passed)
{
    const json_t *r = json_array_get(results, i);
    assert_non_null(r);
    const json_t *ep = json_object_get(r, "endpoint");
    if (endpoint == NULL)
        assert_true(json_is_null(ep));
    else
        assert_string_equal(json_string_value(ep), endpoint);
    assert_string_equal(json_string_value(json_object_get(r, "expression")), expr);
    const json_t *obs = json_object_get(r, "observed");
    if (isnan(observed))
        assert_true(json_is_null(obs));
    else if (!near(json_number_value(obs), observed))
        fail_msg("%s: observed %g, expected %g", expr, json_number_value(obs), observed);
    if (json_is_true(json_object_get(r, "passed")) != passed)
        fail_msg("%s: passed should be %s", expr, passed ? "true" : "false");
}

static void test_results_per_run_and_endpoint(void **state)
{
    store_t *s = store_with_run(1000);
    lc_scenario_t sc;
    parse_scenario("{\"http_req_duration\":[\"p(95)<500\",\"p(50)<10\",\"avg<100\",\"min>=2\","
                   "\"med<3\",\"max>299\"],"
                   "\"http_req_duration{endpoint:create}\":[\"p(95)<100\"],"
                   "\"http_req_duration{name:list}\":[\"max<5\"],"
                   "\"http_req_duration{endpoint:idle}\":[\"max<5\"],"
                   "\"http_req_failed\":[\"rate<0.01\"],"
                   "\"http_req_failed{endpoint:list}\":[\"rate==0\"],"
                   "\"http_reqs\":[\"rate>10\",\"count==150\"],"
                   "\"http_reqs{endpoint:idle}\":[\"count<1\"]}",
                   &sc);
    bool all;
    json_t *res = run_thresholds_eval(s, RUN, &sc, 10000, &all);
    assert_non_null(res);
    assert_int_equal(json_array_size(res), 14);
    expect_result(res, 0, NULL, "p(95)<500", 300, true);
    expect_result(res, 1, NULL, "p(50)<10", 2, true);
    expect_result(res, 2, NULL, "avg<100", (100 * 2.0 + 50 * 300.0) / 150, false);
    expect_result(res, 3, NULL, "min>=2", 2, true);
    expect_result(res, 4, NULL, "med<3", 2, true);
    expect_result(res, 5, NULL, "max>299", 300, true);
    expect_result(res, 6, "create", "p(95)<100", 300, false);
    expect_result(res, 7, "list", "max<5", 2, true);
    expect_result(res, 8, "idle", "max<5", NAN, false); /* no data fails */
    expect_result(res, 9, NULL, "rate<0.01", 5.0 / 150, false);
    expect_result(res, 10, "list", "rate==0", 0, true);
    expect_result(res, 11, NULL, "rate>10", 15, true);
    expect_result(res, 12, NULL, "count==150", 150, true);
    expect_result(res, 13, "idle", "count<1", 0, true);
    assert_false(all);
    const json_t *r = json_array_get(res, 6);
    assert_string_equal(json_string_value(json_object_get(r, "metric")), "http_req_duration");
    assert_true(json_is_false(json_object_get(r, "abort_on_fail")));
    assert_true(json_is_integer(json_object_get(json_array_get(res, 12), "observed")));
    json_decref(res);
    lc_scenario_free(&sc);
    store_close(s);
}

static void test_verdict_and_summary(void **state)
{
    store_t *s = store_with_run(lc_wall_ms() - 10000);
    lc_scenario_t sc;
    char verdict[16], *summary;

    parse_scenario(NULL, &sc);
    run_verdict(s, RUN, &sc, verdict, sizeof verdict, &summary);
    assert_string_equal(verdict, "");
    assert_null(summary);
    lc_scenario_free(&sc);

    parse_scenario("{\"p95_ms\":500,\"http_reqs\":[\"rate>10\"]}", &sc);
    run_verdict(s, RUN, &sc, verdict, sizeof verdict, &summary);
    assert_string_equal(verdict, "pass");
    json_t *root = json_loads(summary, 0, NULL);
    assert_non_null(root);
    const json_t *res = json_object_get(root, "thresholds");
    assert_int_equal(json_array_size(res), 2);
    expect_result(res, 0, NULL, "p(95)<=500", 300, true);
    expect_result(res, 1, NULL, "rate>10", 15, true); /* 150 requests over ~10 s */
    json_decref(root);
    free(summary);
    lc_scenario_free(&sc);

    parse_scenario("{\"error_rate\":0.01}", &sc); /* 5 of 150 failed */
    run_verdict(s, RUN, &sc, verdict, sizeof verdict, &summary);
    assert_string_equal(verdict, "fail");
    assert_non_null(strstr(summary, "\"passed\":false"));
    free(summary);
    lc_scenario_free(&sc);
    store_close(s);
}

static void test_abort_on_fail(void **state)
{
    store_t *s = store_with_run(1000);
    lc_scenario_t sc;
    char why[256] = "";
    parse_scenario("{\"http_req_duration\":[\"max<1000\"],"
                   "\"http_req_duration{endpoint:idle}\":"
                   "[{\"threshold\":\"max<1\",\"abortOnFail\":true}],"
                   "\"http_req_duration{endpoint:create}\":[{\"threshold\":\"p(95)<100\","
                   "\"abortOnFail\":true,\"delayAbortEval\":\"5s\"}],"
                   "\"http_req_failed\":[{\"threshold\":\"rate<0.001\",\"abort_on_fail\":false}]}",
                   &sc);
    /* Before the delay only thresholds without data (not judged) are due. */
    assert_false(run_thresholds_should_abort(s, RUN, &sc, 4999, why, sizeof why));
    assert_true(run_thresholds_should_abort(s, RUN, &sc, 5000, why, sizeof why));
    assert_non_null(strstr(why, "threshold failed: http_req_duration{endpoint:create} p(95)<100 "
                                "(observed 30"));
    lc_scenario_free(&sc);

    /* Only passing abortOnFail thresholds: no abort, whatever the others say. */
    parse_scenario("{\"http_req_failed\":[\"rate<0.001\"],"
                   "\"http_req_duration\":[{\"threshold\":\"p(95)<500\",\"abortOnFail\":true}]}",
                   &sc);
    assert_false(run_thresholds_should_abort(s, RUN, &sc, 60000, why, sizeof why));
    lc_scenario_free(&sc);
    store_close(s);
}

/* The threshold named in the abort reason fails even if the final figures pass. */
static void test_aborted_run_fails(void **state)
{
    store_t *s = store_with_run(lc_wall_ms() - 3000);
    set_state(s, "stopping", lc_wall_ms(), "threshold failed: http_req_duration{endpoint:list} "
              "max<5 (observed 7)");
    lc_scenario_t sc;
    char verdict[16], *summary;
    parse_scenario("{\"http_req_duration\":[\"p(95)<500\"],"
                   "\"http_req_duration{endpoint:list}\":"
                   "[{\"threshold\":\"max<5\",\"abortOnFail\":true}]}",
                   &sc);
    run_verdict(s, RUN, &sc, verdict, sizeof verdict, &summary);
    assert_string_equal(verdict, "fail");
    json_t *root = json_loads(summary, 0, NULL);
    const json_t *res = json_object_get(root, "thresholds");
    expect_result(res, 0, NULL, "p(95)<500", 300, true);
    expect_result(res, 1, "list", "max<5", 2, false);
    assert_true(json_is_true(json_object_get(json_array_get(res, 1), "abort_on_fail")));
    json_decref(root);
    free(summary);
    lc_scenario_free(&sc);
    store_close(s);
}

/* checks: the share of script checks that passed, of one name or all; no check yet is no
 * data (and fails); a name need not be known when the scenario is parsed. */
static void test_checks_thresholds(void **state)
{
    store_t *s = store_with_run(1000);
    Lc__CheckCount a = LC__CHECK_COUNT__INIT, b = LC__CHECK_COUNT__INIT;
    a.name = "status 200";
    a.passed = 99;
    a.failed = 1;
    b.name = "has token";
    b.passed = 50;
    b.failed = 50;
    Lc__CheckCount *cs[] = {&a, &b};
    Lc__StatsBatch batch = LC__STATS_BATCH__INIT;
    batch.run = RUN;
    batch.worker_id = "w1";
    batch.seq = 2;
    batch.checks = cs;
    batch.n_checks = 2;
    apply_batch(s, &batch);
    lc_scenario_t sc;
    parse_scenario("{\"checks\":[\"rate>0.9\"],\"checks{check:status 200}\":[\"rate>=0.99\"],"
                   "\"checks{check:has token}\":[{\"threshold\":\"rate>0.9\","
                   "\"abortOnFail\":true}],\"checks{check:never}\":[\"rate>0\"]}",
                   &sc);
    bool all;
    json_t *res = run_thresholds_eval(s, RUN, &sc, 10000, &all);
    assert_int_equal(json_array_size(res), 4);
    expect_result(res, 0, NULL, "rate>0.9", 149.0 / 200, false);
    expect_result(res, 1, "check:status 200", "rate>=0.99", 0.99, true);
    expect_result(res, 2, "check:has token", "rate>0.9", 0.5, false);
    expect_result(res, 3, "check:never", "rate>0", NAN, false);
    assert_string_equal(json_string_value(json_object_get(json_array_get(res, 0), "metric")),
                        "checks");
    json_decref(res);
    char why[256];
    assert_true(run_thresholds_should_abort(s, RUN, &sc, 10000, why, sizeof why));
    assert_non_null(strstr(why, "checks{check:has token} rate>0.9"));
    lc_scenario_free(&sc);
    store_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_results_per_run_and_endpoint),
        cmocka_unit_test(test_verdict_and_summary),
        cmocka_unit_test(test_abort_on_fail),
        cmocka_unit_test(test_aborted_run_fails),
        cmocka_unit_test(test_checks_thresholds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
