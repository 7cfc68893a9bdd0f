/* test_lc_scenario_summary.c — common/lc_scenario_summary.c: the summary's shape for both
 * models, and the idle-user estimate next to the worker's real struct sizes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lc_scenario.h"
#include "lc_scenario_summary.h"
/* Only for sizeof: the test links no worker code. */
#include "../../worker/user.h"

static void parse(const char *json, lc_scenario_t *s)
{
    char err[512];
    if (lc_scenario_parse(json, strlen(json), s, err, sizeof err) != 0)
        fail_msg("%s: %s", json, err);
}

static void test_closed_model(void **state)
{
    (void)state;
    lc_scenario_t s;
    parse("{\"name\":\"shop\",\"target\":\"http://127.0.0.1:8080\",\"duration\":\"2m\","
          "\"stages\":[{\"duration\":\"1m\",\"users\":10},{\"duration\":\"1m\",\"users\":40}],"
          "\"tasks\":[{\"name\":\"list\",\"weight\":3,\"path\":\"/items?page=${rand(1,5)}\"},"
          "{\"method\":\"POST\",\"path\":\"/cart\",\"body\":\"{}\"}],"
          "\"thresholds\":{\"http_req_duration{endpoint:list}\":[\"p(95)<500\"],"
          "\"error_rate\":0.01}}",
          &s);
    json_t *sum = lc_scenario_summary(&s);
    assert_non_null(sum);
    char *text = json_dumps(sum, JSON_COMPACT);
    lc_idle_user_bytes_t b;
    lc_scenario_idle_user_bytes(&s, &b);
    char want[2048];
    snprintf(want, sizeof want,
             "{\"name\":\"shop\",\"tenant\":\"default\",\"target\":\"http://127.0.0.1:8080\","
             "\"model\":\"closed\",\"users\":40,\"arrival_rate\":null,\"duration_ms\":120000,"
             "\"stages\":2,\"endpoints\":[{\"name\":\"list\",\"method\":\"GET\","
             "\"path\":\"/items?page=${rand(1,5)}\",\"weight\":3},{\"name\":\"POST /cart\","
             "\"method\":\"POST\",\"path\":\"/cart\",\"weight\":1}],"
             "\"thresholds\":[\"http_req_failed rate<=0.01\","
             "\"http_req_duration{endpoint:list} p(95)<500\"],"
             "\"bytes_per_idle_user\":%zu,\"bytes_per_idle_user_parts\":{\"user\":%zu,"
             "\"allocator\":%zu,\"libuv\":%zu,\"tls\":0,\"journey\":0,\"lua\":0,\"h2\":0}}",
             b.total, b.user, b.allocator, b.libuv);
    assert_string_equal(text, want);
    free(text);
    json_decref(sum);
    lc_scenario_free(&s);
}

static void test_open_model_tls(void **state)
{
    (void)state;
    lc_scenario_t s;
    parse("{\"name\":\"o\",\"tenant\":\"shop\",\"target\":\"https://shop.example\",\"duration\":10,"
          "\"arrival_rate\":250.5,\"max_users\":300,\"tasks\":[{\"path\":\"/\"}]}", &s);
    json_t *sum = lc_scenario_summary(&s);
    assert_string_equal(json_string_value(json_object_get(sum, "model")), "open");
    assert_string_equal(json_string_value(json_object_get(sum, "tenant")), "shop");
    assert_int_equal(json_integer_value(json_object_get(sum, "users")), 300);
    assert_true(json_real_value(json_object_get(sum, "arrival_rate")) == 250.5);
    assert_int_equal(json_integer_value(json_object_get(sum, "stages")), 0);
    assert_int_equal(json_array_size(json_object_get(sum, "thresholds")), 0);
    json_t *parts = json_object_get(sum, "bytes_per_idle_user_parts");
    /* No template: no request kept per user; https: an idle TLS connection. */
    assert_null(json_object_get(parts, "request")); /* rendered in the engine's buffer */
    assert_int_equal(json_integer_value(json_object_get(parts, "tls")), 368);
    json_decref(sum);
    lc_scenario_free(&s);
}

/* An https user counts an idle TLS connection (no record buffers, with or without think
 * time: they are released whenever a connection waits). */
static void test_tls_idle_connection(void **state)
{
    (void)state;
    lc_scenario_t s;
    parse("{\"name\":\"t\",\"target\":\"https://shop.example\",\"duration\":10,"
          "\"think_time_ms\":[1000,2000],\"tasks\":[{\"path\":\"/\"}]}", &s);
    lc_idle_user_bytes_t b;
    lc_scenario_idle_user_bytes(&s, &b);
    assert_int_equal(b.tls, 368);
    assert_int_equal(b.total, b.user + b.allocator + b.libuv + b.tls);
    lc_scenario_free(&s);
}

/* Through a shared HTTP/2 pool users hold no connection: no TLS, no fd of their own. */
static void test_pool_users_hold_no_connection(void **state)
{
    (void)state;
    lc_scenario_t s;
    parse("{\"name\":\"t\",\"target\":\"https://shop.example\",\"duration\":10,"
          "\"http2\":{\"mode\":true,\"pool\":{\"connections\":4}},\"tasks\":[{\"path\":\"/\"}]}",
          &s);
    lc_idle_user_bytes_t b;
    lc_scenario_idle_user_bytes(&s, &b);
    assert_int_equal(b.tls, 0);
    assert_int_equal(b.libuv, 0);
    assert_int_equal(b.total, b.user + b.allocator);
    lc_scenario_free(&s);
}

/* A user's own HTTP/2 connection counts an idle session ("auto" too: the server may pick h2);
 * one closed when idle (close_idle_target) holds none. */
static void test_own_h2_session(void **state)
{
    (void)state;
    static const char *const with[] = {"true", "\"auto\""};
    for (size_t i = 0; i < 2; i++) {
        char text[256];
        snprintf(text, sizeof text, "{\"name\":\"t\",\"target\":\"https://shop.example\","
                 "\"duration\":10,\"http2\":%s,\"tasks\":[{\"path\":\"/\"}]}", with[i]);
        lc_scenario_t s;
        parse(text, &s);
        lc_idle_user_bytes_t b;
        lc_scenario_idle_user_bytes(&s, &b);
        assert_int_equal(b.h2, lc_scenario_h2_session_bytes());
        assert_int_equal(b.total, b.user + b.allocator + b.libuv + b.tls + b.h2);
        lc_scenario_free(&s);
    }
    lc_scenario_t s;
    parse("{\"name\":\"t\",\"target\":\"https://shop.example\",\"duration\":10,\"http2\":true,"
          "\"close_idle_target\":true,\"tasks\":[{\"path\":\"/\"}]}", &s);
    lc_idle_user_bytes_t b;
    lc_scenario_idle_user_bytes(&s, &b);
    assert_int_equal(b.h2, 0);
    assert_int_equal(b.tls, 0);
    lc_scenario_free(&s);
}

/* The estimate's struct part stands for sizeof(worker_user_t): when the
 * worker's structs change, USER_FIELDS_BYTES in lc_scenario_summary.c must. */
static void test_user_struct_matches_the_worker(void **state)
{
    (void)state;
    lc_scenario_t s;
    parse("{\"name\":\"t\",\"target\":\"http://h\",\"duration\":10,\"tasks\":[{\"path\":\"/\"}]}", &s);
    lc_idle_user_bytes_t b;
    lc_scenario_idle_user_bytes(&s, &b);
    if (b.user < sizeof(worker_user_t) || b.user > sizeof(worker_user_t) + 16)
        fail_msg("estimate %zu, sizeof(worker_user_t) %zu: update USER_FIELDS_BYTES", b.user,
                 sizeof(worker_user_t));
    /* The goal in DESIGN.md: at most 2 KiB of ours per idle plain-HTTP user. */
    assert_true(b.total <= 2048);
    lc_scenario_free(&s);
}

/* The journey part's constants stand for the worker's structs. */
static void test_journey_structs_match_the_worker(void **state)
{
    (void)state;
    assert_int_equal(lc_scenario_journey_state_bytes(), sizeof(worker_journey_state_t));
    assert_int_equal(lc_scenario_session_bytes(3, 1),
                     sizeof(worker_session_t) + 3 * sizeof(worker_slot_t) + sizeof(uint32_t));
    lc_scenario_t s;
    parse("{\"name\":\"t\",\"target\":\"http://h\",\"duration\":10,\"journeys\":[{\"name\":\"j\","
          "\"steps\":[{\"path\":\"/\",\"extract\":{\"tok\":{\"json\":\"$.t\"}}}]}]}", &s);
    lc_idle_user_bytes_t b;
    lc_scenario_idle_user_bytes(&s, &b);
    assert_true(b.journey > 0);
    /* Issue 14's goal: at most 2,048 B of ours per idle journey user, data aside. */
    assert_true(b.total <= 2048);
    json_t *sum = lc_scenario_summary(&s);
    assert_non_null(sum);
    assert_int_equal(json_array_size(json_object_get(sum, "journeys")), 1);
    assert_string_equal(json_string_value(json_array_get(json_object_get(sum, "variables"), 0)),
                        "tok");
    json_decref(sum);
    lc_scenario_free(&s);
}

/* The JSON text of sum[key] (freed by the caller). */
static char *member_text(const json_t *sum, const char *key)
{
    char *text = json_dumps(json_object_get(sum, key), JSON_COMPACT | JSON_ENCODE_ANY);
    assert_non_null(text);
    return text;
}

/* Every variable with every place the dataflow check counts as setting it, then the feeder
 * columns; the feeder's secret columns. */
static void test_variables_and_where_set(void **state)
{
    (void)state;
    lc_scenario_t s;
    parse("{\"name\":\"t\",\"target\":\"http://h\",\"duration\":10,"
          "\"feeders\":{\"acc\":{\"rows\":[{\"user\":\"u\",\"password\":\"p\"}]}},"
          "\"journeys\":[{\"name\":\"j\",\"on_start\":[{\"path\":\"/login/${acc.user}\","
          "\"extract\":{\"tok\":{\"json\":\"$.t\"}}}],\"steps\":[{\"set\":{\"k\":\"1\"}},"
          "{\"path\":\"/l/${tok}/${k}\",\"extract\":{\"ids\":{\"json\":\"$.ids\","
          "\"pick\":\"all\"},\"k\":{\"json\":\"$.k\",\"default\":\"0\"}}},"
          "{\"foreach\":\"${ids}\",\"as\":\"id\",\"steps\":[{\"path\":\"/i/${id}\"}]}]}]}",
          &s);
    json_t *sum = lc_scenario_summary(&s);
    assert_non_null(sum);
    char *set_at = member_text(sum, "variables_set_at");
    assert_string_equal(
        set_at,
        "{\"tok\":[{\"by\":\"extract\",\"path\":\"journeys[0].on_start[0].extract.tok\"}],"
        "\"k\":[{\"by\":\"set\",\"path\":\"journeys[0].steps[0].set.k\"},"
        "{\"by\":\"extract\",\"path\":\"journeys[0].steps[1].extract.k\"}],"
        "\"ids\":[{\"by\":\"extract\",\"path\":\"journeys[0].steps[1].extract.ids\"}],"
        "\"id\":[{\"by\":\"foreach\",\"path\":\"journeys[0].steps[2].as\"}],"
        "\"acc.user\":[{\"by\":\"feeder\",\"path\":\"feeders.acc\"}],"
        "\"acc.password\":[{\"by\":\"feeder\",\"path\":\"feeders.acc\"}]}");
    /* The names list stays as it was (older clients read it). */
    char *names = member_text(sum, "variables");
    assert_string_equal(names, "[\"tok\",\"k\",\"ids\",\"id\"]");
    json_t *secret = json_object_get(json_array_get(json_object_get(sum, "feeders"), 0), "secret");
    assert_int_equal(json_array_size(secret), 1);
    assert_string_equal(json_string_value(json_array_get(secret, 0)), "password");
    free(names);
    free(set_at);
    json_decref(sum);
    lc_scenario_free(&s);
}

/* The scenario's users times the bytes per idle user, against what the fleet grants now. */
static void test_capacity_against_the_fleet(void **state)
{
    (void)state;
    lc_scenario_t s;
    parse("{\"name\":\"t\",\"target\":\"http://h\",\"duration\":10,\"users\":40,"
          "\"tasks\":[{\"path\":\"/\"}]}", &s);
    lc_idle_user_bytes_t b;
    lc_scenario_idle_user_bytes(&s, &b);
    json_t *fits = lc_scenario_capacity_json(&s, &(lc_fleet_grant_t){true, 2, 40});
    json_t *short_of = lc_scenario_capacity_json(&s, &(lc_fleet_grant_t){true, 1, 39});
    json_t *unknown = lc_scenario_capacity_json(&s, &(lc_fleet_grant_t){false, 0, 0});
    assert_true(json_is_true(json_object_get(fits, "fits")));
    assert_int_equal(json_integer_value(json_object_get(fits, "workers")), 2);
    assert_int_equal(json_integer_value(json_object_get(fits, "users_asked")), 40);
    assert_int_equal(json_integer_value(json_object_get(fits, "bytes_asked")), 40 * b.total);
    assert_int_equal(json_integer_value(json_object_get(fits, "bytes")), 40 * b.total);
    assert_true(json_is_false(json_object_get(short_of, "fits")));
    assert_int_equal(json_integer_value(json_object_get(short_of, "bytes")), 39 * b.total);
    assert_true(json_is_null(json_object_get(unknown, "fits")));
    assert_true(json_is_false(json_object_get(unknown, "known")));
    json_decref(fits);
    json_decref(short_of);
    json_decref(unknown);
    lc_scenario_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_closed_model),
        cmocka_unit_test(test_open_model_tls),
        cmocka_unit_test(test_tls_idle_connection),
        cmocka_unit_test(test_pool_users_hold_no_connection),
        cmocka_unit_test(test_own_h2_session),
        cmocka_unit_test(test_user_struct_matches_the_worker),
        cmocka_unit_test(test_journey_structs_match_the_worker),
        cmocka_unit_test(test_variables_and_where_set),
        cmocka_unit_test(test_capacity_against_the_fleet),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
