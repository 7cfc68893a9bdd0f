/* test_stats.c — worker/stats.c: counters merged from many engines equal
 * their sum exactly, and a StatsBatch survives encoding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "decode_frame.h"
#include "lc_hist.h"
#include "rng.h"
#include "stats.h"

#define ENGINES 8
#define ENDPOINTS 3

static void record_random(worker_stats_t *s, uint64_t *rng, int n, worker_stats_t *truth)
{
    for (int i = 0; i < n; i++) {
        size_t ep = worker_rng_next(rng) % ENDPOINTS;
        int kind = worker_rng_next(rng) % 5 == 0 ? (int)(worker_rng_next(rng) % WORKER_ERR_KINDS)
                                                 : WORKER_KIND_OK;
        uint64_t lat = worker_rng_range(rng, 1, 5000000);
        if (kind == WORKER_ERR_CONNECT_REFUSED)
            lat = WORKER_NO_LATENCY;
        uint64_t bytes = worker_rng_range(rng, 0, 100000);
        worker_stats_record(s, ep, kind, lat, bytes);
        worker_stats_record(truth, ep, kind, lat, bytes);
    }
}

static void assert_stats_equal(const worker_stats_t *a, const worker_stats_t *b)
{
    assert_int_equal(a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        assert_int_equal(a->ep[i].count, b->ep[i].count);
        assert_int_equal(a->ep[i].failures, b->ep[i].failures);
        assert_int_equal(a->ep[i].bytes, b->ep[i].bytes);
        assert_memory_equal(a->ep[i].errors, b->ep[i].errors, sizeof a->ep[i].errors);
        assert_int_equal(a->ep[i].hist.total, b->ep[i].hist.total);
        assert_int_equal(a->ep[i].hist.sum, b->ep[i].hist.sum);
        assert_int_equal(a->ep[i].hist.min, b->ep[i].hist.min);
        assert_int_equal(a->ep[i].hist.max, b->ep[i].hist.max);
        assert_memory_equal(a->ep[i].hist.counts, b->ep[i].hist.counts,
                            sizeof a->ep[i].hist.counts);
    }
}

/* Engines swap their blocks every "interval"; merging every swapped block
 * gives exactly what one block recording everything would hold. */
static void test_merge_is_exact(void **state)
{
    worker_stats_t *truth = worker_stats_new(ENDPOINTS), *acc = worker_stats_new(ENDPOINTS);
    worker_stats_t *cur[ENGINES];
    uint64_t rng = worker_rng_seed(2024, 1);
    for (int e = 0; e < ENGINES; e++)
        cur[e] = worker_stats_new(ENDPOINTS);
    for (int interval = 0; interval < 10; interval++) {
        for (int e = 0; e < ENGINES; e++) {
            record_random(cur[e], &rng, 1000 + e * 37, truth);
            worker_stats_t *fresh = worker_stats_new(ENDPOINTS);
            worker_stats_merge(acc, cur[e]); /* what the control thread does */
            worker_stats_free(cur[e]);
            cur[e] = fresh;
        }
    }
    for (int e = 0; e < ENGINES; e++) {
        record_random(cur[e], &rng, 333, truth); /* the final blocks at Stop */
        worker_stats_merge(acc, cur[e]);
        worker_stats_free(cur[e]);
    }
    assert_stats_equal(acc, truth);
    worker_ep_stats_t total;
    worker_stats_total(acc, acc->n, &total);
    uint64_t count = 0;
    for (size_t i = 0; i < ENDPOINTS; i++)
        count += truth->ep[i].count;
    assert_int_equal(total.count, count);
    worker_stats_free(acc);
    worker_stats_free(truth);
}

static void test_batch_round_trip(void **state)
{
    worker_stats_t *s = worker_stats_new(ENDPOINTS), *truth = worker_stats_new(ENDPOINTS);
    uint64_t rng = worker_rng_seed(5, 5);
    record_random(s, &rng, 5000, truth);
    memset(&s->ep[1], 0, sizeof s->ep[1]); /* an endpoint without requests is left out */
    lc_hist_init(&s->ep[1].hist);
    const worker_endpoint_t eps[ENDPOINTS] = {{"list", "GET"}, {"none", "GET"}, {"create", "POST"}};
    worker_batch_meta_t meta = {.run = 77, .worker_id = "abc", .seq = 3, .interval = 4,
                                .users = 20, .final = true};
    uint8_t *frame;
    size_t len;
    assert_int_equal(worker_stats_encode_batch(s, eps, &meta, &frame, &len), 0);
    Lc__Envelope *env = decode_frame(frame, len);
    assert_int_equal(env->msg_case, LC__ENVELOPE__MSG_STATS);
    Lc__StatsBatch *b = env->stats;
    assert_int_equal(b->run, 77);
    assert_string_equal(b->worker_id, "abc");
    assert_int_equal(b->seq, 3);
    assert_int_equal(b->interval, 4);
    assert_int_equal(b->users, 20);
    assert_true(b->final);
    assert_int_equal(b->n_endpoints, 2);
    worker_stats_t *back = worker_stats_new(ENDPOINTS);
    for (size_t i = 0; i < b->n_endpoints; i++) {
        size_t ep = strcmp(b->endpoints[i]->name, "list") == 0 ? 0 : 2;
        assert_string_equal(b->endpoints[i]->method, eps[ep].method);
        back->ep[ep].count = b->endpoints[i]->count;
        back->ep[ep].failures = b->endpoints[i]->failures;
        back->ep[ep].bytes = b->endpoints[i]->bytes;
        assert_int_equal(lc_hist_decode_add(&back->ep[ep].hist, b->endpoints[i]->hist.data,
                                            b->endpoints[i]->hist.len), 0);
    }
    for (size_t i = 0; i < b->n_errors; i++) {
        size_t ep = strcmp(b->errors[i]->endpoint, "list") == 0 ? 0 : 2;
        int k = 0;
        while (k < WORKER_ERR_KINDS && strcmp(worker_err_kind_name(k), b->errors[i]->kind) != 0)
            k++;
        assert_true(k < WORKER_ERR_KINDS);
        back->ep[ep].errors[k] += b->errors[i]->count;
    }
    assert_stats_equal(back, s);
    lc__envelope__free_unpacked(env, NULL);
    free(frame);
    worker_stats_free(back);
    worker_stats_free(s);
    worker_stats_free(truth);
}

static void test_empty_batch(void **state)
{
    worker_stats_t *s = worker_stats_new(2);
    const worker_endpoint_t eps[2] = {{"a", "GET"}, {"b", "GET"}};
    worker_batch_meta_t meta = {.run = 1, .worker_id = "w", .seq = 1};
    uint8_t *frame;
    size_t len;
    assert_int_equal(worker_stats_encode_batch(s, eps, &meta, &frame, &len), 0);
    Lc__Envelope *env = decode_frame(frame, len);
    assert_int_equal(env->stats->n_endpoints, 0);
    assert_int_equal(env->stats->n_errors, 0);
    assert_false(env->stats->final);
    lc__envelope__free_unpacked(env, NULL);
    free(frame);
    worker_stats_free(s);
}


/* Scripts' checks, by name: merged by name, cut names, "(other)" past the table's room. */
static void test_checks(void **state)
{
    (void)state;
    worker_stats_t *a = worker_stats_new(1), *b = worker_stats_new(1);
    assert_null(a->checks);
    worker_stats_check(a, "logged in", 9, true);
    worker_stats_check(a, "logged in", 9, false);
    worker_stats_check(b, "logged in", 9, true);
    worker_stats_check(b, "paid", 4, false);
    worker_stats_merge(a, b);
    assert_int_equal(a->checks->n, 2);
    assert_string_equal(a->checks->c[0].name, "logged in");
    assert_int_equal(a->checks->c[0].passed, 2);
    assert_int_equal(a->checks->c[0].failed, 1);
    assert_string_equal(a->checks->c[1].name, "paid");
    assert_int_equal(a->checks->c[1].failed, 1);
    char long_name[200];
    memset(long_name, 'x', sizeof long_name);
    worker_stats_check(b, long_name, sizeof long_name, true);
    assert_int_equal(strlen(b->checks->c[2].name), WORKER_CHECK_NAME_MAX);
    worker_stats_reset(b);
    assert_int_equal(b->checks->n, 0);
    for (int i = 0; i < 100; i++) {
        char name[16];
        int n = snprintf(name, sizeof name, "c%d", i);
        worker_stats_check(b, name, (size_t)n, i % 2 == 0);
    }
    assert_int_equal(b->checks->n, WORKER_CHECKS_MAX);
    const worker_check_t *other = &b->checks->c[WORKER_CHECKS_MAX - 1];
    assert_string_equal(other->name, "(other)");
    assert_int_equal(other->passed + other->failed, 100 - (WORKER_CHECKS_MAX - 1));
    worker_stats_free(a);
    worker_stats_free(b);
}

/* A check name with control bytes and invalid UTF-8 is kept as text the master accepts;
 * checks and first error messages go into the batch, and a run sends each (endpoint, kind)'s
 * message once. */
static void test_notes_and_checks_in_batch(void **state)
{
    (void)state;
    worker_stats_t *eng = worker_stats_new(2), *acc = worker_stats_new(2);
    worker_stats_check(eng, "bad\n\xff name", 10, false);
    assert_string_equal(eng->checks->c[0].name, "bad \xef\xbf\xbd name");
    worker_stats_error_note(eng, 1, WORKER_ERR_SCRIPT, "step %d: %s", 3, "boom\x01");
    worker_stats_error_note(eng, 1, WORKER_ERR_SCRIPT, "second %s", "ignored");
    assert_int_equal(eng->ep[1].errors[WORKER_ERR_SCRIPT], 2);
    assert_string_equal(worker_stats_note(eng, 1, WORKER_ERR_SCRIPT), "step 3: boom ");
    char big[1000];
    memset(big, 'y', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    worker_stats_error_note(eng, 0, WORKER_ERR_TEMPLATE, "%s", big);
    assert_int_equal(strlen(worker_stats_note(eng, 0, WORKER_ERR_TEMPLATE)), WORKER_NOTE_MAX);
    worker_stats_merge(acc, eng);
    uint8_t sent[(2 * WORKER_ERR_KINDS + 7) / 8 + 1] = {0};
    worker_stats_notes_once(acc, sent);
    const worker_endpoint_t eps[2] = {{"a", "GET"}, {"b", "GET"}};
    worker_batch_meta_t meta = {.run = 1, .worker_id = "w", .seq = 1};
    uint8_t *frame;
    size_t len;
    assert_int_equal(worker_stats_encode_batch(acc, eps, &meta, &frame, &len), 0);
    Lc__Envelope *env = decode_frame(frame, len);
    Lc__StatsBatch *b = env->stats;
    assert_int_equal(b->n_checks, 1);
    assert_int_equal(b->checks[0]->failed, 1);
    assert_int_equal(b->n_errors, 2);
    for (size_t i = 0; i < b->n_errors; i++)
        assert_true(strcmp(b->errors[i]->kind, "script") == 0
                        ? strcmp(b->errors[i]->message, "step 3: boom ") == 0
                        : strlen(b->errors[i]->message) == WORKER_NOTE_MAX);
    lc__envelope__free_unpacked(env, NULL);
    free(frame);
    /* The next interval: the same errors again, their messages not sent a second time. */
    worker_stats_reset(acc);
    worker_stats_error_note(eng, 1, WORKER_ERR_SCRIPT, "again");
    worker_stats_merge(acc, eng);
    worker_stats_notes_once(acc, sent);
    assert_null(worker_stats_note(acc, 1, WORKER_ERR_SCRIPT));
    assert_int_equal(worker_stats_encode_batch(acc, eps, &meta, &frame, &len), 0);
    env = decode_frame(frame, len);
    for (size_t i = 0; i < env->stats->n_errors; i++)
        assert_string_equal(env->stats->errors[i]->message, "");
    lc__envelope__free_unpacked(env, NULL);
    free(frame);
    worker_stats_free(eng);
    worker_stats_free(acc);
}

/* Past WORKER_NOTES_MAX (endpoint, kind)s a block notes no more, but counts every error. */
static void test_notes_bounded(void **state)
{
    (void)state;
    worker_stats_t *s = worker_stats_new(WORKER_NOTES_MAX + 4);
    for (size_t ep = 0; ep < s->n; ep++)
        worker_stats_error_note(s, ep, WORKER_ERR_SCRIPT, "ep %zu", ep);
    assert_int_equal(s->notes->n, WORKER_NOTES_MAX);
    assert_null(worker_stats_note(s, WORKER_NOTES_MAX, WORKER_ERR_SCRIPT));
    assert_int_equal(s->ep[WORKER_NOTES_MAX + 3].errors[WORKER_ERR_SCRIPT], 1);
    worker_stats_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_is_exact),
        cmocka_unit_test(test_batch_round_trip),
        cmocka_unit_test(test_empty_batch),
        cmocka_unit_test(test_checks),
        cmocka_unit_test(test_notes_and_checks_in_batch),
        cmocka_unit_test(test_notes_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
