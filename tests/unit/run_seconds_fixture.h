/* run_seconds_fixture.h — for unit tests of a run's history in the store: run RUN with
 * SECONDS seconds of two endpoints, finished at FINISHED_MS, and RetainHistory commands. */
#ifndef TESTS_UNIT_RUN_SECONDS_FIXTURE_H
#define TESTS_UNIT_RUN_SECONDS_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "lc_hist.h"
#include "store_commands.h"

#define RUN 1
#define SECONDS 125 /* crosses chunk and point boundaries: 12.5 points of 10 s */
#define FINISHED_MS 1700000000000ull
#define DAY 86400000ull

/* A batch of second t for endpoint name, latencies spread with t. */
static inline int apply_second(store_t *s, uint64_t seq, uint32_t t, const char *name)
{
    lc_hist_t *h = malloc(sizeof *h);
    lc_hist_init(h);
    uint64_t count = 3 + t % 7;
    for (uint64_t i = 0; i < count; i++)
        lc_hist_record(h, 1000 + 137 * t + 31 * i);
    uint8_t *enc;
    size_t len;
    assert_int_equal(lc_hist_encode(h, &enc, &len), 0);
    free(h);
    Lc__EndpointStats ep = LC__ENDPOINT_STATS__INIT, *eps[] = {&ep};
    ep.name = (char *)name;
    ep.method = "GET";
    ep.count = count;
    ep.failures = t % 3 == 0;
    ep.bytes = count * 10;
    ep.hist.data = enc;
    ep.hist.len = len;
    Lc__StatsBatch b = LC__STATS_BATCH__INIT, *bs[] = {&b};
    b.run = RUN;
    b.worker_id = "w1";
    b.seq = seq;
    b.interval = t;
    b.endpoints = eps;
    b.n_endpoints = 1;
    b.users = t % 11;
    b.dropped = 1;
    Lc__RunSeconds rs = LC__RUN_SECONDS__INIT;
    rs.run = RUN;
    rs.batches = bs;
    rs.n_batches = 1;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_RUN_SECONDS;
    cmd.run_seconds = &rs;
    int rv = store_apply(s, &cmd);
    free(enc);
    return rv;
}

static inline int retain_cmd(store_t *s, uint32_t res, uint32_t from, uint32_t to, bool acks,
                             bool del, bool archive)
{
    Lc__RetainHistory r = LC__RETAIN_HISTORY__INIT;
    r.archive = archive;
    r.run = RUN;
    r.resolution_s = res;
    r.from_t = from;
    r.to_t = to;
    r.drop_acks = acks;
    r.delete_seconds = del;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_RETAIN_HISTORY;
    cmd.retain_history = &r;
    return store_apply(s, &cmd);
}

static inline int retain(store_t *s, uint32_t res, uint32_t from, uint32_t to, bool acks, bool del)
{
    return retain_cmd(s, res, from, to, acks, del, false);
}

/* Run RUN with SECONDS seconds of endpoints a and b in s, not finished yet. */
static inline store_t *run_with_seconds(store_t *s)
{
    assert_int_equal(test_store_create_run(s, RUN, "r", "{}", 4, FINISHED_MS - 200000), 0);
    assert_int_equal(test_store_set_state(s, RUN, "running", FINISHED_MS - 200000, ""), 0);
    for (uint32_t t = 1; t <= SECONDS; t++) {
        assert_int_equal(apply_second(s, 2 * t, t, "a"), 0);
        assert_int_equal(apply_second(s, 2 * t + 1, t, "b"), 0);
    }
    return s;
}

static inline void finish(store_t *s)
{
    Lc__RunFinished f = LC__RUN_FINISHED__INIT;
    f.run = RUN;
    f.state = "finished";
    f.at_ms = FINISHED_MS;
    f.verdict = "";
    f.summary_json = "";
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_RUN_FINISHED;
    cmd.run_finished = &f;
    assert_int_equal(store_apply(s, &cmd), 0);
}

#endif
