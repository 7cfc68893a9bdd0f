/* test_store_stats.c — unit tests of master/store/store_stats.c and
 * store_stats_sum.c: a RunSeconds of many batches (same seconds, same
 * endpoints, in any order, with a replay and a corrupt histogram among them)
 * leaves every table exactly as the same batches applied one command each
 * (the rows the FSM wrote before it summed a command's batches first). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lc_buf.h"
#include "lc_hist.h"
#include "store_commands.h"
#include "store_internal.h"

#define RUN 1
#define N_BATCHES 40
#define N_ENDPOINTS 5

static const char *const endpoints[N_ENDPOINTS] = {"login", "list", "item", "cart", "buy"};

typedef struct batch_s {
    Lc__StatsBatch b;
    Lc__EndpointStats es[N_ENDPOINTS];
    Lc__EndpointStats *ep[N_ENDPOINTS];
    Lc__ErrorCount err;
    Lc__ErrorCount *errp[1];
    char worker[16];
    uint8_t *hist[N_ENDPOINTS];
} batch_t;

/* Batch i: worker w(i%4), second 1 + i/8, endpoints in an order that
 * depends on i, histograms of a few dozen latencies; batch 13's "item"
 * histogram is corrupt. */
static void make_batch(batch_t *x, size_t i)
{
    memset(x, 0, sizeof *x);
    lc__stats_batch__init(&x->b);
    snprintf(x->worker, sizeof x->worker, "w%zu", i % 4);
    x->b.run = RUN;
    x->b.worker_id = x->worker;
    x->b.seq = 1 + i / 4;
    x->b.interval = (uint32_t)(1 + i / 8);
    x->b.users = 3;
    x->b.dropped = i % 3;
    x->b.tls_handshakes = i % 5;
    x->b.tls_resumed = i % 2;
    x->b.lost_batches = i / 20;
    x->b.lost_requests = i;
    for (size_t j = 0; j < N_ENDPOINTS; j++) {
        size_t k = (j + i) % N_ENDPOINTS;
        Lc__EndpointStats *e = &x->es[j];
        lc__endpoint_stats__init(e);
        e->name = (char *)endpoints[k];
        e->method = "GET";
        e->count = 10 + i + k;
        e->failures = (i + k) % 3;
        e->bytes = 1000 * (i + 1);
        lc_hist_t h;
        lc_hist_init(&h);
        for (size_t v = 0; v < e->count; v++)
            lc_hist_record(&h, 200 + (v * 7919 + i * 104729 + k * 31) % 50000);
        size_t len;
        assert_int_equal(lc_hist_encode(&h, &x->hist[j], &len), 0);
        if (i == 13 && k == 2)
            x->hist[j][len - 1] ^= 0x7f; /* corrupt: its latencies are dropped, counts kept */
        e->hist.data = x->hist[j];
        e->hist.len = len;
        x->ep[j] = e;
    }
    x->b.n_endpoints = N_ENDPOINTS;
    x->b.endpoints = x->ep;
    lc__error_count__init(&x->err);
    x->err.endpoint = (char *)endpoints[i % N_ENDPOINTS];
    x->err.kind = "timeout";
    x->err.count = i % 2;
    x->errp[0] = &x->err;
    x->b.n_errors = 1;
    x->b.errors = x->errp;
}

static void free_batch(batch_t *x)
{
    for (size_t j = 0; j < N_ENDPOINTS; j++)
        free(x->hist[j]);
}

static void apply_seconds(store_t *s, Lc__StatsBatch **batches, size_t n)
{
    Lc__RunSeconds rs = LC__RUN_SECONDS__INIT;
    rs.run = RUN;
    rs.n_batches = n;
    rs.batches = batches;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_RUN_SECONDS;
    cmd.run_seconds = &rs;
    assert_int_equal(store_apply(s, &cmd), 0);
}

/* Every row of the stats tables, hex histograms included, as text. */
static char *dump(store_t *s)
{
    static const char *const queries[] = {
        "SELECT run, t, endpoint, method, count, failures, bytes, hex(hist) FROM run_seconds"
        " ORDER BY run, t, endpoint",
        "SELECT run, endpoint, method, count, failures, bytes, hex(hist) FROM run_endpoints"
        " ORDER BY run, endpoint",
        "SELECT run, endpoint, kind, count FROM run_errors ORDER BY run, endpoint, kind",
        "SELECT run, t, users, dropped, tls_handshakes, tls_resumed, lost_batches, lost_requests"
        " FROM run_second_totals ORDER BY run, t",
        "SELECT worker, run, seq FROM acks ORDER BY worker, run, seq",
    };
    lc_buf_t out = {0};
    for (size_t q = 0; q < sizeof queries / sizeof queries[0]; q++) {
        sqlite3_stmt *st = NULL;
        assert_int_equal(sqlite3_prepare_v2(s->db, queries[q], -1, &st, NULL), SQLITE_OK);
        while (sqlite3_step(st) == SQLITE_ROW) {
            for (int c = 0; c < sqlite3_column_count(st); c++) {
                const char *v = (const char *)sqlite3_column_text(st, c);
                lc_buf_appendf(&out, "%s|", v ? v : "NULL");
            }
            lc_buf_appendf(&out, "\n");
        }
        sqlite3_finalize(st);
        lc_buf_appendf(&out, "--\n");
    }
    return out.data;
}

static store_t *store_with_run(void)
{
    store_t *s = test_store_open();
    assert_int_equal(test_store_create_run(s, RUN, "r", "{}", 10, 1000), 0);
    assert_int_equal(test_store_set_state(s, RUN, "running", 2000, ""), 0);
    return s;
}

static void test_summed_command_equals_batch_by_batch(void **state)
{
    (void)state;
    batch_t *x = calloc(N_BATCHES, sizeof *x);
    Lc__StatsBatch *all[N_BATCHES + 2];
    for (size_t i = 0; i < N_BATCHES; i++) {
        make_batch(&x[i], i);
        all[i] = &x[i].b;
    }
    /* A replay of batch 5 inside the command, and of batch 0 in a second one. */
    all[N_BATCHES] = &x[5].b;
    store_t *one_each = store_with_run(), *summed = store_with_run();
    for (size_t i = 0; i < N_BATCHES; i++)
        apply_seconds(one_each, &all[i], 1);
    apply_seconds(one_each, &all[N_BATCHES], 1);
    /* The summed store gets the batches in another order, all at once. */
    Lc__StatsBatch *shuffled[N_BATCHES + 1];
    for (size_t i = 0; i <= N_BATCHES; i++)
        shuffled[i] = all[(i * 17) % (N_BATCHES + 1)];
    apply_seconds(summed, shuffled, N_BATCHES + 1);
    apply_seconds(summed, &all[0], 1);
    char *a = dump(one_each), *b = dump(summed);
    assert_string_equal(a, b);
    assert_non_null(strstr(a, "login")); /* not two empty dumps */
    /* Every batch's errors once (batch i brings i % 2 timeouts), the replays' not again. */
    assert_int_equal(store_run_int(summed, "SELECT SUM(count) FROM run_errors WHERE run = ?", RUN, -1),
                     N_BATCHES / 2);
    assert_int_equal(store_run_int(summed, "SELECT COUNT(*) FROM run_errors WHERE run = ?", RUN, -1),
                     N_ENDPOINTS);
    /* Each second's users from its 8 batches once, lost requests 0 + 1 + ... + 39. */
    assert_int_equal(store_run_int(summed, "SELECT users FROM run_second_totals WHERE run = ?"
                                           " AND t = 2", RUN, -1), 3 * 8);
    assert_int_equal(store_run_int(summed, "SELECT SUM(lost_requests) FROM run_second_totals"
                                           " WHERE run = ?", RUN, -1), N_BATCHES * (N_BATCHES - 1) / 2);
    free(a);
    free(b);
    store_close(one_each);
    store_close(summed);
    for (size_t i = 0; i < N_BATCHES; i++)
        free_batch(&x[i]);
    free(x);
}

/* One batch of RUN from worker "w" with seq, an error with message, and checks. */
static void apply_noted_batch(store_t *s, uint64_t seq, const char *endpoint, const char *kind,
                              const char *message, Lc__CheckCount **checks, size_t n_checks)
{
    Lc__ErrorCount err = LC__ERROR_COUNT__INIT;
    err.endpoint = (char *)endpoint;
    err.kind = (char *)kind;
    err.count = 2;
    err.message = (char *)message;
    Lc__ErrorCount *errp[1] = {&err};
    Lc__StatsBatch b = LC__STATS_BATCH__INIT;
    b.run = RUN;
    b.worker_id = "w";
    b.seq = seq;
    b.interval = 1;
    b.n_errors = 1;
    b.errors = errp;
    b.n_checks = n_checks;
    b.checks = checks;
    Lc__StatsBatch *bp = &b;
    apply_seconds(s, &bp, 1);
}

static const json_t *error_row(const json_t *run, const char *endpoint, const char *kind)
{
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(run, "errors"), i, e)
        if (strcmp(json_string_value(json_object_get(e, "endpoint")), endpoint) == 0 &&
            strcmp(json_string_value(json_object_get(e, "kind")), kind) == 0)
            return e;
    return NULL;
}

/* The first message of (endpoint, kind) is kept and later ones ignored; past
 * STORE_NOTES_MAX pairs a run keeps no more messages, but counts every error. */
static void test_first_error_messages(void **state)
{
    (void)state;
    store_t *s = store_with_run();
    apply_noted_batch(s, 1, "login", "script", "journeys[0].steps[1]: boom at line 3", NULL, 0);
    apply_noted_batch(s, 2, "login", "script", "a later message", NULL, 0);
    apply_noted_batch(s, 3, "login", "status", "", NULL, 0);
    for (int i = 0; i < STORE_NOTES_MAX + 5; i++) {
        char ep[32];
        snprintf(ep, sizeof ep, "ep%d", i);
        apply_noted_batch(s, 10 + (uint64_t)i, ep, "script", "noted", NULL, 0);
    }
    json_t *run = store_run_json(s, RUN, 5000);
    const json_t *e = error_row(run, "login", "script");
    assert_non_null(e);
    assert_int_equal(json_integer_value(json_object_get(e, "count")), 4);
    assert_string_equal(json_string_value(json_object_get(e, "first_message")),
                        "journeys[0].steps[1]: boom at line 3");
    assert_null(json_object_get(error_row(run, "login", "status"), "first_message"));
    size_t noted = 0, i;
    json_array_foreach(json_object_get(run, "errors"), i, e)
        noted += json_object_get(e, "first_message") != NULL;
    assert_int_equal(noted, STORE_NOTES_MAX);
    assert_non_null(error_row(run, "ep68", "script")); /* counted all the same */
    json_decref(run);
    store_close(s);
}

/* Checks sum by name across batches; a replay adds nothing; past STORE_CHECKS_MAX - 1 names
 * new ones count as "(other)". */
static void test_checks_summed_and_bounded(void **state)
{
    (void)state;
    store_t *s = store_with_run();
    Lc__CheckCount c[STORE_CHECKS_MAX + 10], *cp[STORE_CHECKS_MAX + 10];
    char names[STORE_CHECKS_MAX + 10][16];
    for (size_t i = 0; i < STORE_CHECKS_MAX + 10; i++) {
        lc__check_count__init(&c[i]);
        snprintf(names[i], sizeof names[i], "c%02zu", i);
        c[i].name = names[i];
        c[i].passed = 3;
        c[i].failed = 1;
        cp[i] = &c[i];
    }
    apply_noted_batch(s, 1, "login", "check", "", cp, 2);
    apply_noted_batch(s, 2, "login", "check", "", cp, 1);
    apply_noted_batch(s, 2, "login", "check", "", cp, 1); /* a replay */
    apply_noted_batch(s, 3, "login", "check", "", cp, STORE_CHECKS_MAX + 10);
    json_t *run = store_run_json(s, RUN, 5000);
    const json_t *checks = json_object_get(run, "checks");
    assert_int_equal(json_array_size(checks), STORE_CHECKS_MAX);
    uint64_t passed = 0, c00 = 0, other = 0;
    size_t i;
    const json_t *row;
    json_array_foreach(checks, i, row) {
        const char *name = json_string_value(json_object_get(row, "name"));
        uint64_t p = (uint64_t)json_integer_value(json_object_get(row, "passed"));
        passed += p;
        if (strcmp(name, "c00") == 0)
            c00 = p;
        if (strcmp(name, "(other)") == 0)
            other = p;
    }
    assert_int_equal(c00, 9);
    assert_int_equal(other, 3 * 11); /* c63 .. c73 */
    assert_int_equal(passed, 3 * (2 + 1 + STORE_CHECKS_MAX + 10));
    json_decref(run);
    store_close(s);
}

/* Text a worker sends is checked like every other name: a control character in a message
 * or a check name refuses the command. */
static void test_hostile_texts_refused(void **state)
{
    (void)state;
    Lc__ErrorCount err = LC__ERROR_COUNT__INIT;
    err.endpoint = "login";
    err.kind = "script";
    err.message = "line 1\nline 2";
    Lc__ErrorCount *errp[1] = {&err};
    Lc__StatsBatch b = LC__STATS_BATCH__INIT;
    b.worker_id = "w";
    b.n_errors = 1;
    b.errors = errp;
    Lc__StatsBatch *bp = &b;
    Lc__RunSeconds rs = LC__RUN_SECONDS__INIT;
    rs.n_batches = 1;
    rs.batches = &bp;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_RUN_SECONDS;
    cmd.run_seconds = &rs;
    assert_false(store_command_text_ok(&cmd));
    err.message = "fine";
    assert_true(store_command_text_ok(&cmd));
    Lc__CheckCount c = LC__CHECK_COUNT__INIT;
    c.name = "\x1b[2J";
    Lc__CheckCount *cp = &c;
    b.n_checks = 1;
    b.checks = &cp;
    assert_false(store_command_text_ok(&cmd));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summed_command_equals_batch_by_batch),
        cmocka_unit_test(test_first_error_messages),
        cmocka_unit_test(test_checks_summed_and_bounded),
        cmocka_unit_test(test_hostile_texts_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
