/* test_link_send.c — worker/link_send.c: each message the worker sends the
 * master decodes to what was asked, and Hello's proof answers the nonce.
 * (The StatsBatch envelope is test_stats.c's round trip.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "decode_frame.h"
#include "lc_join.h"
#include "lc_protocol.h"
#include "link_send.h"

static const Lc__RunLoad loads[2] = {
    {.base = PROTOBUF_C_MESSAGE_INIT(&lc__run_load__descriptor), .run = 7, .generation = 2,
     .users = 30, .connections = 31},
    {.base = PROTOBUF_C_MESSAGE_INIT(&lc__run_load__descriptor), .run = 9, .generation = 1,
     .users = 5},
};

static void assert_loads(Lc__RunLoad **got, size_t n)
{
    assert_int_equal(n, 2);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(got[i]->run, loads[i].run);
        assert_int_equal(got[i]->generation, loads[i].generation);
        assert_int_equal(got[i]->users, loads[i].users);
        assert_int_equal(got[i]->connections, loads[i].connections);
    }
}

/* The Envelope an encoder's frame carries, rv its result; the frame is freed. */
static Lc__Envelope *decoded(int rv, uint8_t *frame, size_t len)
{
    assert_int_equal(rv, 0);
    Lc__Envelope *env = decode_frame(frame, len);
    free(frame);
    return env;
}

static void test_hello_answers_the_nonce(void **state)
{
    lc_join_secret_t secret = {.len = 20};
    memcpy(secret.bytes, "0123456789abcdefghij", 20);
    uint8_t nonce[LC_JOIN_NONCE_LEN], other[LC_JOIN_NONCE_LEN];
    for (size_t i = 0; i < sizeof nonce; i++) {
        nonce[i] = (uint8_t)i;
        other[i] = (uint8_t)(i + 1);
    }
    worker_hello_t h = {.worker_id = "0123abcd", .name = "w1", .threads = 4, .capacity = 900,
                        .secret = &secret, .running = loads, .n_running = 2};
    uint8_t *frame;
    size_t len;
    int rv = worker_link_encode_hello(&h, nonce, sizeof nonce, &frame, &len);
    Lc__Envelope *env = decoded(rv, frame, len);
    assert_int_equal(env->msg_case, LC__ENVELOPE__MSG_HELLO);
    Lc__Hello *got = env->hello;
    assert_int_equal(got->protocol_version, LC_PROTOCOL_VERSION);
    assert_string_equal(got->worker_id, "0123abcd");
    assert_string_equal(got->name, "w1");
    assert_int_equal(got->threads, 4);
    assert_int_equal(got->capacity, 900);
    assert_loads(got->running, got->n_running);
    assert_int_equal(got->join_proof.len, LC_JOIN_PROOF_LEN);
    assert_true(lc_join_verify_for(&secret, nonce, sizeof nonce, "0123abcd",
                                   got->join_proof.data, got->join_proof.len));
    assert_false(lc_join_verify_for(&secret, other, sizeof other, "0123abcd",
                                    got->join_proof.data, got->join_proof.len));
    /* The proof binds the id: it answers the nonce for no other worker. */
    assert_false(lc_join_verify_for(&secret, nonce, sizeof nonce, "0123abce",
                                    got->join_proof.data, got->join_proof.len));
    lc__envelope__free_unpacked(env, NULL);
}

static void test_hello_without_secret_has_no_proof(void **state)
{
    lc_join_secret_t none = {.len = 0};
    uint8_t nonce[LC_JOIN_NONCE_LEN] = {1};
    worker_hello_t h = {.worker_id = "id", .name = "", .secret = &none};
    for (int i = 0; i < 2; i++) {
        uint8_t *frame;
        size_t len;
        int rv = worker_link_encode_hello(&h, nonce, sizeof nonce, &frame, &len);
        Lc__Envelope *env = decoded(rv, frame, len);
        assert_int_equal(env->hello->join_proof.len, 0);
        assert_int_equal(env->hello->n_running, 0);
        lc__envelope__free_unpacked(env, NULL);
        h.secret = NULL;
    }
}

static void test_heartbeat(void **state)
{
    worker_heartbeat_t hb = {.time_ms = 1700000000123ull, .cpu_percent = 42.5,
                             .rss_bytes = 1u << 20, .runs = loads, .n_runs = 2};
    uint8_t *frame;
    size_t len;
    int rv = worker_link_encode_heartbeat(&hb, &frame, &len);
    Lc__Envelope *env = decoded(rv, frame, len);
    assert_int_equal(env->msg_case, LC__ENVELOPE__MSG_HEARTBEAT);
    assert_int_equal(env->heartbeat->time_ms, 1700000000123ull);
    assert_true(env->heartbeat->cpu_percent == 42.5);
    assert_int_equal(env->heartbeat->rss_bytes, 1u << 20);
    assert_loads(env->heartbeat->runs, env->heartbeat->n_runs);
    lc__envelope__free_unpacked(env, NULL);
}

static void test_refused(void **state)
{
    uint8_t *frame;
    size_t len;
    int rv = worker_link_encode_refused(12, 3, "file limit 1024", &frame, &len);
    Lc__Envelope *env = decoded(rv, frame, len);
    assert_int_equal(env->msg_case, LC__ENVELOPE__MSG_ASSIGN_REFUSED);
    assert_int_equal(env->assign_refused->run, 12);
    assert_int_equal(env->assign_refused->generation, 3);
    assert_string_equal(env->assign_refused->reason, "file limit 1024");
    lc__envelope__free_unpacked(env, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hello_answers_the_nonce),
        cmocka_unit_test(test_hello_without_secret_has_no_proof),
        cmocka_unit_test(test_heartbeat),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
