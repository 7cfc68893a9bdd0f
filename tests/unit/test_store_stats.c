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
        "SELECT run, t, users, dropped FROM run_second_totals ORDER BY run, t",
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
    free(a);
    free(b);
    store_close(one_each);
    store_close(summed);
    for (size_t i = 0; i < N_BATCHES; i++)
        free_batch(&x[i]);
    free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summed_command_equals_batch_by_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
