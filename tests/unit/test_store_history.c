/* test_store_history.c — a run second by second (master/store_history.c):
 * endpoints and workers merged per second, gaps filled, ?since and
 * ?endpoint, the running totals, the still-filling second, and the
 * Locust-style request table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lc_hist.h"
#include "lc_err.h"
#include "store_internal.h"
#include "store.h"
#include "store_commands.h"
#include "store_history.h"

#define STARTED_MS 1700000000500ull /* the run's start: unix second 1700000000 */
#define NOW_MS (STARTED_MS + 10000)

static store_t *open_store(void)
{
    return test_store_open();
}

static void create_run(store_t *s, uint64_t id)
{
    assert_int_equal(test_store_create_run(s, id, "h", "{}", 4, STARTED_MS - 100), 0);
}

static void set_state(store_t *s, uint64_t id, const char *state, uint64_t at)
{
    assert_int_equal(test_store_set_state(s, id, state, at, ""), 0);
}

/* One worker's batch for second t: `count` requests of endpoint name, each
 * taking latency_us, a tenth of them failed, 100 bytes each. */
static void batch(store_t *s, const char *worker, uint64_t seq, uint32_t t, uint32_t users,
                  const char *name, uint64_t count, uint64_t latency_us)
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
    ep.name = (char *)name;
    ep.method = strcmp(name, "create") == 0 ? "POST" : "GET";
    ep.count = count;
    ep.failures = count / 10;
    ep.bytes = count * 100;
    ep.hist.data = enc;
    ep.hist.len = enc_len;
    Lc__EndpointStats *eps[] = {&ep};
    Lc__StatsBatch b = LC__STATS_BATCH__INIT;
    b.run = 1;
    b.worker_id = (char *)worker;
    b.seq = seq;
    b.interval = t;
    b.endpoints = eps;
    b.n_endpoints = count ? 1 : 0;
    b.users = users;
    Lc__StatsBatch *bs[] = {&b};
    Lc__RunSeconds rs = LC__RUN_SECONDS__INIT;
    rs.run = 1;
    rs.batches = bs;
    rs.n_batches = 1;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_RUN_SECONDS;
    cmd.run_seconds = &rs;
    assert_int_equal(store_apply(s, &cmd), 0);
    free(enc);
}

/* Run 1: two workers, two endpoints; seconds 1, 2 and 4 have requests,
 * second 3 has no batch at all (a gap), second 5 is the newest. */
static store_t *fixture(const char *final_state)
{
    store_t *s = open_store();
    create_run(s, 1);
    set_state(s, 1, "running", STARTED_MS);
    batch(s, "w1", 1, 1, 2, "list", 100, 1000);
    batch(s, "w2", 1, 1, 2, "create", 10, 5000);
    batch(s, "w1", 2, 2, 2, "list", 200, 2000);
    batch(s, "w2", 2, 2, 2, "list", 50, 2000);
    batch(s, "w1", 3, 4, 3, "list", 40, 3000);
    batch(s, "w1", 4, 5, 1, "create", 20, 4000);
    if (final_state != NULL) {
        Lc__RunFinished rf = LC__RUN_FINISHED__INIT;
        rf.run = 1;
        rf.state = (char *)final_state;
        rf.at_ms = STARTED_MS + 5000;
        rf.verdict = "";
        Lc__Command cmd = LC__COMMAND__INIT;
        cmd.cmd_case = LC__COMMAND__CMD_RUN_FINISHED;
        cmd.run_finished = &rf;
        assert_int_equal(store_apply(s, &cmd), 0);
    }
    return s;
}

static json_t *history(store_t *s, const char *endpoint, int64_t since, bool full)
{
    store_history_query_t q = {.endpoint = endpoint, .since = since, .full = full};
    json_t *h = store_history_json(s, 1, &q);
    assert_non_null(h);
    return h;
}

static json_int_t int_at(const json_t *seconds, size_t i, const char *key)
{
    return json_integer_value(json_object_get(json_array_get(seconds, i), key));
}

static double num_at(const json_t *seconds, size_t i, const char *key)
{
    return json_number_value(json_object_get(json_array_get(seconds, i), key));
}

/* ?limit= pages: asking again from each page's last t gives exactly the
 * unpaged list, and only the last page says it is the last. */
static void test_history_pages(void **state)
{
    (void)state;
    store_t *s = fixture("finished");
    json_t *all = history(s, NULL, INT64_MIN, false);
    json_t *seconds = json_object_get(all, "seconds");
    size_t n = json_array_size(seconds), got = 0;
    assert_true(n >= 3);
    assert_false(json_is_true(json_object_get(all, "more")));
    int64_t since = INT64_MIN;
    for (int page = 0; page < 100; page++) {
        store_history_query_t q = {.since = since, .limit = 2};
        json_t *h = store_history_json(s, 1, &q);
        json_t *part = json_object_get(h, "seconds");
        for (size_t i = 0; i < json_array_size(part); i++, got++)
            assert_int_equal(int_at(part, i, "t"), int_at(seconds, got, "t"));
        bool more = json_is_true(json_object_get(h, "more"));
        assert_true(json_array_size(part) == 2 || !more);
        if (json_array_size(part) > 0)
            since = int_at(part, json_array_size(part) - 1, "t");
        json_decref(h);
        if (!more)
            break;
    }
    assert_int_equal(got, n);
    json_decref(all);
    store_close(s);
}

static void test_seconds_merged_and_gaps_filled(void **state)
{
    (void)state;
    store_t *s = fixture("finished");
    json_t *h = history(s, NULL, INT64_MIN, false);
    json_t *sec = json_object_get(h, "seconds");
    assert_int_equal(json_array_size(sec), 5); /* 1, 2, 3 (filled), 4, 5 */
    static const json_int_t requests[] = {110, 250, 0, 40, 20}, users[] = {4, 4, 4, 3, 1};
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(int_at(sec, i, "t"), 1700000000 + 1 + (json_int_t)i);
        assert_int_equal(int_at(sec, i, "offset_s"), 1 + (json_int_t)i);
        assert_int_equal(int_at(sec, i, "requests"), requests[i]);
        assert_int_equal(int_at(sec, i, "users"), users[i]); /* a gap keeps the users */
        assert_true(num_at(sec, i, "rps") == (double)requests[i]);
    }
    assert_int_equal(int_at(sec, 1, "failures"), 20 + 5);
    /* Second 1 merges 100 at 1 ms and 10 at 5 ms: the p95 is the slow ones. */
    assert_true(num_at(sec, 0, "p50_ms") > 0.99 && num_at(sec, 0, "p50_ms") < 1.01);
    assert_true(num_at(sec, 0, "p99_ms") > 4.9 && num_at(sec, 0, "p99_ms") < 5.1);
    assert_true(json_is_null(json_object_get(json_array_get(sec, 2), "p50_ms")));
    assert_null(json_object_get(json_array_get(sec, 0), "total")); /* not full */
    assert_true(json_is_null(json_object_get(h, "endpoint")));
    json_decref(h);
    store_close(s);
}

static void test_since_and_endpoint(void **state)
{
    (void)state;
    store_t *s = fixture("finished");
    json_t *h = history(s, NULL, 1700000000 + 2, false);
    json_t *sec = json_object_get(h, "seconds");
    assert_int_equal(json_array_size(sec), 3);
    assert_int_equal(int_at(sec, 0, "offset_s"), 3); /* the gap, filled as without since */
    assert_int_equal(int_at(sec, 0, "users"), 4);
    assert_int_equal(int_at(sec, 0, "requests"), 0);
    json_decref(h);
    h = history(s, NULL, 1700000000 + 3, false); /* since inside the gap */
    assert_int_equal(json_array_size(json_object_get(h, "seconds")), 2);
    json_decref(h);
    h = history(s, NULL, 1000, false); /* since long before the run */
    assert_int_equal(json_array_size(json_object_get(h, "seconds")), 5);
    json_decref(h);
    h = history(s, NULL, 1700000000 + 5, false);
    assert_int_equal(json_array_size(json_object_get(h, "seconds")), 0);
    json_decref(h);

    h = history(s, "create", INT64_MIN, false);
    sec = json_object_get(h, "seconds");
    assert_string_equal(json_string_value(json_object_get(h, "method")), "POST");
    assert_int_equal(json_array_size(sec), 5); /* the run's seconds, users included */
    static const json_int_t requests[] = {10, 0, 0, 0, 20};
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(int_at(sec, i, "requests"), requests[i]);
    assert_true(num_at(sec, 0, "p50_ms") > 4.9 && num_at(sec, 0, "p50_ms") < 5.1);
    json_decref(h);
    h = history(s, "nope", INT64_MIN, false);
    assert_int_equal(int_at(json_object_get(h, "seconds"), 1, "requests"), 0);
    json_decref(h);
    store_close(s);
}

static void test_running_totals_and_the_filling_second(void **state)
{
    (void)state;
    store_t *s = fixture(NULL); /* still running: second 5 is still filling */
    json_t *h = history(s, NULL, 1700000000 + 1, true);
    json_t *sec = json_object_get(h, "seconds");
    assert_int_equal(json_array_size(sec), 3); /* 2, 3, 4 — not 1 (since), not 5 */
    const json_t *total = json_object_get(json_array_get(sec, 2), "total");
    assert_int_equal(json_integer_value(json_object_get(total, "requests")), 110 + 250 + 40);
    assert_int_equal(json_integer_value(json_object_get(total, "failures")), 11 + 25 + 4);
    assert_true(json_number_value(json_object_get(total, "min_ms")) < 1.01);
    assert_true(json_number_value(json_object_get(total, "max_ms")) > 4.99);
    assert_true(json_number_value(json_object_get(total, "avg_content_size")) == 100.0);
    const json_t *pcts = json_object_get(json_array_get(sec, 0), "percentiles_ms");
    assert_int_equal(json_object_size(pcts), STORE_N_PERCENTILES);
    assert_true(json_number_value(json_object_get(pcts, "100%")) > 1.99);
    assert_int_equal(int_at(sec, 0, "bytes"), 25000);
    json_decref(h);
    store_close(s);

    store_history_query_t q = {.endpoint = NULL, .since = INT64_MIN};
    s = open_store();
    assert_null(store_history_json(s, 1, &q)); /* no such run */
    store_close(s);
}

typedef struct collected_s {
    json_t *entries;
    json_t *head;
    size_t stop_after; /* 0: never stop */
} collected_t;

static int collect(void *arg, const store_history_head_t *head, const store_history_entry_t *e)
{
    collected_t *c = arg;
    if (c->head == NULL)
        c->head = store_history_head_json(head);
    json_array_append_new(c->entries, store_history_entry_json(e, true));
    return c->stop_after != 0 && json_array_size(c->entries) >= c->stop_after ? 42 : 0;
}

/* The entries one at a time are exactly the document's "seconds", with the
 * document's other fields alongside; a non-zero return stops the walk. */
static void test_history_each(void **state)
{
    (void)state;
    store_t *s = fixture("finished");
    const char *endpoints[] = {NULL, "list"};
    for (size_t k = 0; k < 2; k++) {
        json_t *doc = history(s, endpoints[k], INT64_MIN, true);
        collected_t c = {.entries = json_array()};
        store_history_query_t q = {.endpoint = endpoints[k], .since = INT64_MIN, .full = true};
        assert_int_equal(store_history_each(s, 1, &q, collect, &c, NULL), 0);
        assert_true(json_array_size(c.entries) > 0);
        assert_true(json_equal(c.entries, json_object_get(doc, "seconds")));
        assert_true(json_equal(json_object_get(c.head, "endpoint"), json_object_get(doc, "endpoint")));
        assert_true(json_equal(json_object_get(c.head, "method"), json_object_get(doc, "method")));
        json_decref(c.entries);
        json_decref(c.head);
        json_decref(doc);
    }
    collected_t c = {.entries = json_array(), .stop_after = 2};
    store_history_query_t q = {.since = INT64_MIN, .full = true};
    assert_int_equal(store_history_each(s, 1, &q, collect, &c, NULL), 42);
    assert_int_equal(json_array_size(c.entries), 2);
    json_decref(c.entries);
    json_decref(c.head);
    assert_int_equal(store_history_each(s, 99, &q, collect, &c, NULL), LC_ENOTFOUND);
    store_close(s);
}

static void test_request_table(void **state)
{
    (void)state;
    store_t *s = fixture("finished");
    json_t *rows = store_report_stats_json(s, 1, NOW_MS);
    assert_int_equal(json_array_size(rows), 3);
    const json_t *create = json_array_get(rows, 0), *list = json_array_get(rows, 1);
    const json_t *agg = json_array_get(rows, 2);
    assert_string_equal(json_string_value(json_object_get(create, "name")), "create");
    assert_string_equal(json_string_value(json_object_get(create, "type")), "POST");
    assert_string_equal(json_string_value(json_object_get(list, "name")), "list");
    assert_string_equal(json_string_value(json_object_get(agg, "name")), "Aggregated");
    assert_string_equal(json_string_value(json_object_get(agg, "type")), "");
    assert_int_equal(json_integer_value(json_object_get(agg, "requests")), 420);
    assert_int_equal(json_integer_value(json_object_get(list, "requests")), 390);
    /* 5 s from start to finish. */
    assert_true(json_number_value(json_object_get(agg, "rps")) == 84.0);
    const json_t *pcts = json_object_get(agg, "percentiles_ms");
    for (int i = 0; i < STORE_N_PERCENTILES; i++)
        assert_true(json_is_number(json_object_get(pcts, store_percentile_labels[i])));
    assert_true(json_number_value(json_object_get(pcts, "100%")) > 4.99);
    json_decref(rows);
    assert_null(store_report_stats_json(s, 2, NOW_MS));
    store_close(s);
}

/* A run's whole history reads one run-wide row per second; a run without them (created
 * before the FSM wrote them, e.g. restored from an older snapshot) sums its endpoints:
 * both give the same document, byte for byte. */
static void test_run_rows_equal_the_endpoint_sums(void **state)
{
    (void)state;
    store_t *s = fixture("finished");
    assert_int_equal(store_run_int(s, "SELECT COUNT(*) FROM run_seconds WHERE run = ?"
                                      " AND method = 'RUN'", 1, -1), 4);
    json_t *with_rows = history(s, NULL, -1, true);
    char *a = json_dumps(with_rows, JSON_COMPACT | JSON_SORT_KEYS);
    assert_int_equal(store_exec(s, "DELETE FROM run_sums"), 0);
    json_t *summed = history(s, NULL, -1, true);
    char *b = json_dumps(summed, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(a, b);
    assert_non_null(strstr(a, "\"requests\":250")); /* second 2: not two empty documents */
    free(a);
    free(b);
    json_decref(with_rows);
    json_decref(summed);
    store_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seconds_merged_and_gaps_filled),
        cmocka_unit_test(test_since_and_endpoint),
        cmocka_unit_test(test_running_totals_and_the_filling_second),
        cmocka_unit_test(test_request_table),
        cmocka_unit_test(test_history_pages),
        cmocka_unit_test(test_history_each),
        cmocka_unit_test(test_run_rows_equal_the_endpoint_sums),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
