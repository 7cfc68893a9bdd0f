/* test_admission.c — the pure checks of what a worker may say about a run
 * (master/runs/admission.c): a StatsBatch against the plan, and a claim. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "admission.h"
#include "store.h"

static const char plan_json[] =
    "{\"name\":\"t\",\"target\":\"http://127.0.0.1:1\",\"duration\":\"60s\",\"users\":5,"
    "\"tasks\":[{\"name\":\"list\",\"path\":\"/l\"},{\"name\":\"add\",\"method\":\"POST\","
    "\"path\":\"/a\"}]}";

static void test_batch(void **state)
{
    lc_scenario_t sc;
    char err[256];
    assert_int_equal(lc_scenario_parse(plan_json, strlen(plan_json), &sc, err, sizeof err), 0);
    Lc__EndpointStats list = LC__ENDPOINT_STATS__INIT, add = LC__ENDPOINT_STATS__INIT;
    list.name = "list", list.method = "GET", list.count = 10, list.failures = 2;
    add.name = "add", add.method = "POST", add.count = 3;
    Lc__EndpointStats *eps[] = {&list, &add};
    Lc__ErrorCount ec = LC__ERROR_COUNT__INIT, *errs[] = {&ec};
    ec.endpoint = "list", ec.kind = "status", ec.count = 2;
    Lc__StatsBatch b = LC__STATS_BATCH__INIT;
    b.interval = 12;
    b.endpoints = eps;
    b.n_endpoints = 2;
    b.errors = errs;
    b.n_errors = 1;
    assert_null(admission_batch_problem(&sc, &b, 10)); /* within the 5 s slack */
    assert_non_null(admission_batch_problem(&sc, &b, 6));
    add.method = "GET";
    assert_string_equal(admission_batch_problem(&sc, &b, 10),
                        "endpoint or method not in the run's plan");
    add.method = "POST";
    list.failures = 11;
    assert_non_null(admission_batch_problem(&sc, &b, 10));
    list.failures = 2;
    ec.kind = "other";
    assert_string_equal(admission_batch_problem(&sc, &b, 10),
                        "error count for an endpoint or kind not in the plan");
    ec.kind = "status";
    b.dropped = (uint64_t)INT64_MAX + 1;
    assert_string_equal(admission_batch_problem(&sc, &b, 10), "counts past 2^63");
    b.dropped = 0;
    Lc__EndpointStats *three[] = {&list, &add, &add};
    b.endpoints = three;
    b.n_endpoints = 3;
    assert_string_equal(admission_batch_problem(&sc, &b, 10),
                        "more endpoints or error counts than the plan has");
    lc_scenario_free(&sc);
}

static void test_claim(void **state)
{
    Lc__RunLoad claim = LC__RUN_LOAD__INIT;
    claim.generation = 7;
    claim.users = 5;
    assert_null(admission_claim_problem(true, 7, 5, &claim));
    assert_null(admission_claim_problem(true, 3, 5, &claim)); /* within the slack */
    assert_string_equal(admission_claim_problem(false, 7, 5, &claim),
                        "this worker holds no share of the run");
    claim.generation = UINT64_MAX;
    assert_string_equal(admission_claim_problem(true, 7, 5, &claim),
                        "claimed generation was never assigned");
    claim.generation = 7;
    claim.users = 6;
    assert_string_equal(admission_claim_problem(true, 7, 5, &claim),
                        "claimed users exceed the run's");
}

/* Feed requests: only a leased (sequential) feeder of the plan, at least one row; leases are
 * bounded by the share's users and by STORE_LEASE_ROWS_MAX, whatever is asked. */
static void test_feed(void **state)
{
    (void)state;
    static const char json[] =
        "{\"name\":\"f\",\"target\":\"http://127.0.0.1:1\",\"users\":2,\"duration\":\"1s\","
        "\"feeders\":{\"seq\":{\"csv\":\"a\\n1\\n2\\n\",\"mode\":\"per_iteration\"},"
        "\"shuf\":{\"csv\":\"b\\n1\\n\",\"order\":\"shuffle\"}},"
        "\"journeys\":[{\"name\":\"j\",\"steps\":[{\"name\":\"s\","
        "\"path\":\"/${seq.a}/${shuf.b}\"}]}]}";
    lc_scenario_t sc;
    char err[256];
    assert_int_equal(lc_scenario_parse(json, strlen(json), &sc, err, sizeof err), 0);
    uint32_t seq = 0, shuf = 1;
    if (strcmp(sc.program->feeders[0].name, "seq") != 0)
        seq = 1, shuf = 0;
    Lc__FeedRequest req = LC__FEED_REQUEST__INIT;
    req.run = 1;
    req.feeder = seq;
    req.seq = 1;
    req.count = 5;
    assert_null(admission_feed_problem(&sc, &req));
    req.feeder = shuf;
    assert_non_null(admission_feed_problem(&sc, &req)); /* not leased */
    req.feeder = 2;
    assert_non_null(admission_feed_problem(&sc, &req)); /* no such feeder */
    req.feeder = seq;
    req.count = 0;
    assert_non_null(admission_feed_problem(&sc, &req));
    req.count = 5;
    req.seq = 0;
    assert_non_null(admission_feed_problem(&sc, &req));
    lc_scenario_free(&sc);
    assert_int_equal(admission_lease_count(5, 2, 4, UINT64_MAX), 5);
    assert_int_equal(admission_lease_count(1000, 0, 4, UINT64_MAX), ADMISSION_LEASE_MIN);
    assert_int_equal(admission_lease_count(1000, 2, 4, UINT64_MAX), 2 * ADMISSION_LEASE_PER_USER);
    assert_int_equal(admission_lease_count(UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT64_MAX),
                     STORE_LEASE_ROWS_MAX);
    /* The share's part of the rows left: half of 12 for 2 users of 4, at least one. */
    assert_int_equal(admission_lease_count(1000, 2, 4, 12), 6);
    assert_int_equal(admission_lease_count(1000, 1, 4, 1), 1);
    assert_int_equal(admission_lease_count(1000, 1, 4, 0), 1);
    /* The whole run on one worker: the store cuts the lease at the last row itself. */
    assert_int_equal(admission_lease_count(1000, 4, 4, 3), 4 * ADMISSION_LEASE_PER_USER);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch),
        cmocka_unit_test(test_claim),
        cmocka_unit_test(test_feed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
