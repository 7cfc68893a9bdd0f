/* test_store.c — the SQLite state machine: commands, deduplication of
 * replayed batches, snapshots, and the run list's summary. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lc_err.h"
#include "lc_hist.h"
#include "store.h"
#include "store_commands.h"

static const char scenario[] =
    "{\"name\":\"t\",\"target\":\"http://127.0.0.1:1\",\"duration\":\"5s\",\"users\":2,"
    "\"tasks\":[{\"path\":\"/\"}]}";

static store_t *open_store(void)
{
    return test_store_open();
}

static int create_run(store_t *s, uint64_t id)
{
    return test_store_create_run(s, id, "t", scenario, 2, 1000);
}

static int set_state(store_t *s, uint64_t id, const char *state, uint64_t at)
{
    return test_store_set_state(s, id, state, at, "");
}

/* Applies one RunSeconds holding one batch of `count` requests at `latency_us`. */
static int apply_batch(store_t *s, uint64_t run, const char *worker, uint64_t seq, uint64_t count,
                       uint64_t latency_us)
{
    lc_hist_t *h = malloc(sizeof *h);
    lc_hist_init(h);
    for (uint64_t i = 0; i < count; i++)
        lc_hist_record(h, latency_us);
    uint8_t *enc;
    size_t enc_len;
    assert_int_equal(lc_hist_encode(h, &enc, &enc_len), 0);
    free(h);
    Lc__EndpointStats ep = LC__ENDPOINT_STATS__INIT;
    ep.name = "home";
    ep.method = "GET";
    ep.count = count;
    ep.failures = 1;
    ep.bytes = count * 10;
    ep.hist.data = enc;
    ep.hist.len = enc_len;
    Lc__EndpointStats *eps[] = {&ep};
    Lc__ErrorCount err = LC__ERROR_COUNT__INIT;
    err.endpoint = "home";
    err.kind = "status";
    err.count = 1;
    Lc__ErrorCount *errs[] = {&err};
    Lc__StatsBatch b = LC__STATS_BATCH__INIT;
    b.run = run;
    b.worker_id = (char *)worker;
    b.seq = seq;
    b.interval = (uint32_t)seq;
    b.endpoints = eps;
    b.n_endpoints = 1;
    b.errors = errs;
    b.n_errors = 1;
    b.users = 2;
    Lc__StatsBatch *bs[] = {&b};
    Lc__RunSeconds rs = LC__RUN_SECONDS__INIT;
    rs.run = run;
    rs.batches = bs;
    rs.n_batches = 1;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_RUN_SECONDS;
    cmd.run_seconds = &rs;
    int rv = store_apply(s, &cmd);
    free(enc);
    return rv;
}

static json_int_t total_requests(store_t *s, uint64_t run)
{
    json_t *j = store_run_json(s, run, 10000);
    assert_non_null(j);
    json_int_t n = json_integer_value(json_object_get(json_object_get(j, "totals"), "requests"));
    json_decref(j);
    return n;
}

static void test_create_and_states(void **state)
{
    (void)state;
    store_t *s = open_store();
    assert_int_equal(create_run(s, 1), 0);
    assert_int_equal(create_run(s, 1), LC_ESTATE); /* ids are unique */
    assert_int_equal(set_state(s, 1, "running", 2000), 0);
    assert_int_equal(set_state(s, 9, "running", 2000), LC_ENOTFOUND);
    store_run_t r;
    assert_int_equal(store_run_get(s, 1, &r), 0);
    assert_string_equal(r.state, "running");
    assert_int_equal(r.started_ms, 2000);
    assert_string_equal(r.scenario_json, scenario);
    store_run_free(&r);
    assert_int_equal(store_run_get(s, 9, &r), LC_ENOTFOUND);
    assert_int_equal(store_max_run_id(s), 1);
    store_close(s);
}

static void test_replayed_batch_counted_once(void **state)
{
    (void)state;
    store_t *s = open_store();
    assert_int_equal(create_run(s, 1), 0);
    assert_int_equal(apply_batch(s, 1, "w1", 1, 100, 500), 0);
    assert_int_equal(apply_batch(s, 1, "w1", 2, 50, 500), 0);
    assert_int_equal(apply_batch(s, 1, "w1", 1, 100, 500), 0); /* replay */
    assert_int_equal(apply_batch(s, 1, "w2", 1, 7, 500), 0);   /* other worker, same seq */
    assert_int_equal(total_requests(s, 1), 157);
    assert_true(store_batch_applied(s, "w1", 1, 2));
    assert_false(store_batch_applied(s, "w1", 1, 3));
    json_t *j = store_run_json(s, 1, 10000);
    json_t *errors = json_object_get(j, "errors");
    assert_int_equal(json_array_size(errors), 1);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(errors, 0), "count")), 3);
    double p50 = json_real_value(
        json_object_get(json_object_get(json_object_get(j, "totals"), "latency_ms"), "p50"));
    assert_true(p50 > 0.495 && p50 < 0.505);
    json_decref(j);
    store_close(s);
}

static void test_stats_for_unknown_run_change_nothing(void **state)
{
    (void)state;
    store_t *s = open_store();
    assert_int_equal(apply_batch(s, 5, "w1", 1, 10, 100), LC_ENOTFOUND);
    assert_false(store_batch_applied(s, "w1", 5, 1));
    store_close(s);
}

static void test_snapshot_round_trip(void **state)
{
    (void)state;
    store_t *s = open_store();
    assert_int_equal(create_run(s, 1), 0);
    assert_int_equal(apply_batch(s, 1, "w1", 1, 42, 1000), 0);
    uint8_t *image;
    size_t len;
    assert_int_equal(store_serialize(s, &image, &len), 0);
    store_t *copy = open_store();
    assert_int_equal(store_deserialize(copy, image, len), 0);
    free(image);
    json_t *a = store_run_json(s, 1, 10000), *b = store_run_json(copy, 1, 10000);
    assert_true(json_equal(a, b));
    json_decref(a);
    json_decref(b);
    /* The restored database keeps deduplicating. */
    assert_int_equal(apply_batch(copy, 1, "w1", 1, 42, 1000), 0);
    assert_int_equal(total_requests(copy, 1), 42);
    store_close(s);
    store_close(copy);
}

static int grant(store_t *s, uint64_t run, uint32_t granted, bool queued, char **warnings,
                 size_t n)
{
    Lc__RunGrant g = LC__RUN_GRANT__INIT;
    g.run = run;
    g.granted = granted;
    g.queued = queued;
    g.warnings = warnings;
    g.n_warnings = n;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_RUN_GRANT;
    cmd.run_grant = &g;
    return store_apply(s, &cmd);
}

/* The list row of run id must carry the same value as the single view for
 * every field the list shows. */
static void assert_row_matches_view(store_t *s, json_t *row)
{
    static const char *const same[] = {"id", "name", "tenant", "state", "created_at",
                                       "started_at", "finished_at", "users", "verdict",
                                       "users_requested", "users_granted", "queued", "warnings"};
    json_t *view = store_run_json(s, (uint64_t)json_integer_value(json_object_get(row, "id")),
                                  10000);
    assert_non_null(view);
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++)
        assert_true(json_equal(json_object_get(row, same[i]), json_object_get(view, same[i])));
    json_t *totals = json_object_get(view, "totals");
    assert_true(json_equal(json_object_get(row, "requests"), json_object_get(totals, "requests")));
    assert_true(json_equal(json_object_get(row, "failures"), json_object_get(totals, "failures")));
    assert_true(json_equal(json_object_get(row, "rps"), json_object_get(totals, "rps")));
    json_decref(view);
}

static void test_list_is_a_summary_with_grants(void **state)
{
    (void)state;
    store_t *s = open_store();
    assert_int_equal(create_run(s, 1), 0); /* pending, never granted */
    assert_int_equal(create_run(s, 2), 0);
    assert_int_equal(set_state(s, 2, "running", 2000), 0);
    assert_int_equal(apply_batch(s, 2, "w1", 1, 30, 800), 0);
    char saturated[] = "generator saturated", degraded[] = "degraded: granted 1 of 2 users";
    char *warnings[] = {saturated, degraded};
    assert_int_equal(grant(s, 2, 1, false, warnings, 2), 0);
    json_t *list = store_runs_json(s, NULL, NULL, 10000);
    assert_int_equal(json_array_size(list), 2);
    json_t *newest = json_array_get(list, 0), *pending = json_array_get(list, 1);
    assert_int_equal(json_integer_value(json_object_get(newest, "id")), 2);
    assert_int_equal(json_integer_value(json_object_get(newest, "users_granted")), 1);
    assert_int_equal(json_integer_value(json_object_get(newest, "requests")), 30);
    assert_int_equal(json_array_size(json_object_get(newest, "warnings")), 2);
    assert_true(json_is_true(json_object_get(pending, "queued")));
    assert_int_equal(json_integer_value(json_object_get(pending, "users_granted")), 0);
    assert_null(json_object_get(newest, "endpoints")); /* a summary, not the full view */
    assert_row_matches_view(s, newest);
    assert_row_matches_view(s, pending);
    json_decref(list);
    list = store_runs_json(s, "other", NULL, 10000);
    assert_int_equal(json_array_size(list), 0);
    json_decref(list);
    list = store_runs_json(s, "default", "pending", 10000);
    assert_int_equal(json_array_size(list), 1);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(list, 0), "id")), 1);
    json_decref(list);
    store_close(s);
}

static void test_run_tenant(void **state)
{
    (void)state;
    store_t *s = open_store();
    char tenant[128];
    assert_int_equal(create_run(s, 4), 0);
    assert_int_equal(store_run_tenant(s, 4, tenant, sizeof tenant), 0);
    assert_string_equal(tenant, "default");
    assert_int_equal(store_run_tenant(s, 5, tenant, sizeof tenant), LC_ENOTFOUND);
    assert_string_equal(tenant, "");
    store_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_and_states),
        cmocka_unit_test(test_replayed_batch_counted_once),
        cmocka_unit_test(test_stats_for_unknown_run_change_nothing),
        cmocka_unit_test(test_snapshot_round_trip),
        cmocka_unit_test(test_list_is_a_summary_with_grants),
        cmocka_unit_test(test_run_tenant),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
