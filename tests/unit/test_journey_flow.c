/* test_journey_flow.c — a journey's control flow run on a real engine loop against a local
 * server (worker/journey.c, journey_feed.c): while and its bound, random branches, exit
 * iteration, the feed step, pacing_ms, the default on_error (next_iteration), and the
 * shuffle and random feeder orders, each checked on the requests the server saw.
 * A run ends by its own rules: a per-iteration feeder "it" that stops the user when it runs
 * out bounds the iterations to its rows. */
#include "journey_run_fixture.h"

#include <stdbool.h>

#include "lc_journey.h"

#define SEQ_MAX 8192

/* A run (untraced: users run until the journey ends them) against one server thread. */
typedef struct flow_s {
    journey_run_t run;
    server_thread_t server;
} flow_t;

/* "/fail…" answers 500, every other path 200 "ok". */
static void answer_ok_or_500(void *arg, lc_http_exchange_t *ex, const lc_http_request_t *req)
{
    (void)arg;
    int status = strncmp(req->path, "/fail", 5) == 0 ? 500 : 200;
    lc_http_exchange_respond(ex, status, "text/plain", "ok", 2, NULL);
}

/* Starts the server, then an engine and a run of the scenario of members on this thread. */
static void flow_open(flow_t *f, const char *members)
{
    char text[JOURNEY_DOC_MAX];
    int n = snprintf(text, sizeof text, "'duration':5,'connect_timeout_ms':2000,%s", members);
    assert_true(n > 0 && (size_t)n < sizeof text);
    memset(f, 0, sizeof *f);
    server_thread_start(&f->server, answer_ok_or_500);
    journey_run_open(&f->run, "flow", f->server.port, false, text);
}

static void flow_close(flow_t *f)
{
    journey_run_close(&f->run);
    server_thread_stop(&f->server);
}

/* cmocka's setup: a fixture on the heap, so that a failed test leaves nothing on a stack. */
static int flow_setup(void **state)
{
    *state = calloc(1, sizeof(flow_t));
    return *state == NULL ? -1 : 0;
}

/* cmocka's teardown: after a failure, the server stops; an engine with users still running
 * is left behind (its loop cannot close), so the next test starts clean either way. */
static int flow_teardown(void **state)
{
    flow_t *f = *state;
    if (f->run.r != NULL && f->run.e != NULL && f->run.r->live == 0)
        flow_close(f);
    else if (f->server.running)
        server_thread_stop(&f->server);
    if (f->run.e == NULL)
        free(f);
    return 0;
}

/* "'feeders':{'it':{…n rows…}" without its closing brace, so that more feeders may follow. */
static void bound_feeder(char *out, size_t len, unsigned n)
{
    size_t at = (size_t)snprintf(out, len, "'feeders':{'it':{'mode':'per_iteration',"
                                           "'on_exhausted':'stop_user','csv':'n\\n");
    for (unsigned i = 1; i <= n && at < len; i++)
        at += (size_t)snprintf(out + at, len - at, "%u\\n", i);
    if (at < len)
        at += (size_t)snprintf(out + at, len - at, "'}");
    assert_true(at < len);
}

/* Runs one user through journey j (its fields after the name) for iterations iterations,
 * with more feeders (", 'x':{…}" or ""). */
static void run_journey(flow_t *f, unsigned iterations, const char *more_feeders, const char *j)
{
    char feeders[4096], body[JOURNEY_DOC_MAX];
    bound_feeder(feeders, sizeof feeders, iterations);
    int n = snprintf(body, sizeof body, "'think_time_ms':0,%s%s},'journeys':[{'name':'j',%s}]",
                     feeders, more_feeders, j);
    assert_true(n > 0 && (size_t)n < sizeof body);
    flow_open(f, body);
    journey_run_users(&f->run, 1);
}

static void assert_sequence(flow_t *f, const char *want)
{
    char seq[SEQ_MAX];
    server_sequence(&f->server, seq, sizeof seq);
    if (strcmp(seq, want) != 0)
        fail_msg("the server saw \"%s\", wanted \"%s\"", seq, want);
}

/* The journey's iteration series: finished and failed iterations. */
static void assert_iterations(const flow_t *f, uint64_t count, uint64_t failures)
{
    const worker_plan_t *plan = f->run.plan;
    int t = lc_program_timer(plan->program, LC_TIMER_ITERATION, "j");
    assert_true(t >= 0);
    const worker_ep_stats_t *s = &f->run.r->stats->ep[plan->first_timer + (size_t)t];
    assert_int_equal(s->count, count);
    assert_int_equal(s->failures, failures);
}

/* A condition that always holds stops at max; one that turns false ends the loop there; one
 * false at once runs no pass. */
static void test_while_bound(void **state)
{
    flow_t *f = *state;
    run_journey(f, 2, "",
                "'steps':[{'while':'true','max':3,'steps':[{'path':'/w'}]},"
                "{'set':{'k':'go'}},"
                "{'while':'${k} != \\'done\\'','max':10,'steps':[{'path':'/x'},{'set':{'k':'done'}}]},"
                "{'while':'false','max':5,'steps':[{'path':'/never'}]},{'path':'/end'}]");
    assert_sequence(f, "/w /w /w /x /end /w /w /w /x /end");
    assert_iterations(f, 2, 0);
    flow_close(f);
}

/* Branches weighted 1:3 over 400 iterations: exactly one branch an iteration, /a about 100
 * times (the binomial's deviation is 8.7: the bounds are 4.6 of them away). */
static void test_random_branches(void **state)
{
    flow_t *f = *state;
    run_journey(f, 400, "",
                "'steps':[{'random':[{'weight':1,'steps':[{'path':'/a'}]},"
                "{'weight':3,'steps':[{'path':'/b'},{'path':'/b2'}]}]},{'path':'/end'}]");
    size_t a = server_hits(&f->server, "/a"), b = server_hits(&f->server, "/b");
    assert_int_equal(a + b, 400);
    assert_int_equal(server_hits(&f->server, "/b2"), b); /* a branch runs whole */
    assert_int_equal(server_hits(&f->server, "/end"), 400);
    if (a < 60 || a > 140)
        fail_msg("/a %zu times in 400 iterations, wanted about 100", a);
    assert_iterations(f, 400, 0);
    flow_close(f);
}

/* exit "iteration" skips the rest of that iteration only: the next one runs, and the iteration
 * counts as done, not failed. */
static void test_exit_iteration(void **state)
{
    flow_t *f = *state;
    run_journey(f, 3, "",
                "'steps':[{'path':'/a'},{'if':'${it.n} == 2','then':[{'exit':'iteration'}]},"
                "{'path':'/b'}]");
    assert_sequence(f, "/a /b /a /a /b");
    assert_iterations(f, 3, 0);
    flow_close(f);
}

/* exit "user" ends the user at once: no further iteration although rows remain. */
static void test_exit_user(void **state)
{
    flow_t *f = *state;
    run_journey(f, 3, "", "'steps':[{'path':'/a'},{'exit':'user'},{'path':'/b'}]");
    assert_sequence(f, "/a");
    flow_close(f);
}

/* A feed step takes the feeder's next row on the spot: the iteration's own row, then the next;
 * when none is left (stop_user) the user ends there. */
static void test_feed_step(void **state)
{
    flow_t *f = *state;
    run_journey(f, 100, ",'r':{'mode':'per_iteration','on_exhausted':'stop_user',"
                           "'rows':[{'v':'a'},{'v':'b'},{'v':'c'},{'v':'d'},{'v':'e'}]}",
                "'steps':[{'path':'/f/${r.v}'},{'feed':'r'},{'path':'/g/${r.v}'}]");
    assert_sequence(f, "/f/a /g/b /f/c /g/d /f/e");
    flow_close(f);
}

/* pacing_ms: iterations start at least that far apart, though each takes a millisecond. */
static void test_pacing(void **state)
{
    enum { PACING_MS = 80, ITERATIONS = 4 };
    flow_t *f = *state;
    char j[128];
    snprintf(j, sizeof j, "'pacing_ms':%d,'steps':[{'path':'/p'}]", PACING_MS);
    run_journey(f, ITERATIONS, "", j);
    uint64_t at[ITERATIONS];
    assert_int_equal(server_times(&f->server, at, ITERATIONS), ITERATIONS);
    for (size_t i = 1; i < ITERATIONS; i++) {
        uint64_t gap_ms = (at[i] - at[i - 1]) / 1000000u;
        /* The loop's clock is cached per pass: a timer may fire up to ~1 ms early. */
        if (gap_ms + 2 < PACING_MS || gap_ms > PACING_MS + 1000)
            fail_msg("iteration %zu started %llu ms after the previous, pacing %d ms", i,
                     (unsigned long long)gap_ms, PACING_MS);
    }
    flow_close(f);
}

/* A failed request ends its iteration by default (next_iteration): the rest is skipped, the
 * next iteration runs, and the failure is counted on the step and the iteration. */
static void test_default_next_iteration(void **state)
{
    flow_t *f = *state;
    run_journey(f, 3, "", "'steps':[{'path':'/fail'},{'path':'/after'}]");
    assert_sequence(f, "/fail /fail /fail");
    assert_int_equal(ep_stats(&f->run, "GET /fail")->failures, 3);
    assert_int_equal(ep_stats(&f->run, "GET /fail")->errors[WORKER_ERR_STATUS], 3);
    assert_int_equal(ep_stats(&f->run, "GET /after")->count, 0);
    assert_iterations(f, 3, 3);
    flow_close(f);
    /* The other policies, for contrast: continue goes on, stop_user ends the user. */
    run_journey(f, 2, "", "'on_error':'continue','steps':[{'path':'/fail'},{'path':'/after'}]");
    assert_sequence(f, "/fail /after /fail /after");
    assert_iterations(f, 2, 2);
    flow_close(f);
    run_journey(f, 2, "", "'steps':[{'path':'/fail','on_error':'stop_user'},{'path':'/after'}]");
    assert_sequence(f, "/fail");
    flow_close(f);
}

/* The row indexes the server saw on paths prefix<v>, in order; returns how many. */
static size_t rows_seen(flow_t *f, const char *prefix, unsigned *rows, size_t max)
{
    size_t n = 0, plen = strlen(prefix);
    server_thread_t *sv = &f->server;
    pthread_mutex_lock(&sv->mu);
    for (size_t i = 0; i < sv->n && i < SERVER_LOG_MAX && n < max; i++)
        if (strncmp(sv->log[i].path, prefix, plen) == 0)
            rows[n++] = (unsigned)strtoul(sv->log[i].path + plen, NULL, 10);
    pthread_mutex_unlock(&sv->mu);
    return n;
}

/* Whether rows[0..n) holds each of 0..n-1 once. */
static bool is_permutation(const unsigned *rows, size_t n)
{
    bool seen[64] = {false};
    for (size_t i = 0; i < n; i++) {
        if (rows[i] >= n || rows[i] >= 64 || seen[rows[i]])
            return false;
        seen[rows[i]] = true;
    }
    return true;
}

#define ROWS8 "'rows':[{'v':0},{'v':1},{'v':2},{'v':3},{'v':4},{'v':5},{'v':6},{'v':7}]"

/* shuffle, per iteration, wrapping: each pass over the 8 rows takes every row exactly once,
 * and not in the rows' own order. */
static void test_shuffle_per_iteration(void **state)
{
    flow_t *f = *state;
    unsigned rows[16];
    run_journey(f, 16, ",'s':{'mode':'per_iteration','order':'shuffle','on_exhausted':'wrap',"
                ROWS8 "}", "'steps':[{'path':'/s/${s.v}'}]");
    assert_int_equal(rows_seen(f, "/s/", rows, 16), 16);
    assert_true(is_permutation(rows, 8));
    assert_true(is_permutation(rows + 8, 8));
    bool in_order = true;
    for (unsigned i = 0; i < 8; i++)
        in_order = in_order && rows[i] == i;
    assert_false(in_order);
    flow_close(f);
}

/* shuffle, per user: 8 users take the 8 rows, one each. */
static void test_shuffle_per_user(void **state)
{
    flow_t *f = *state;
    unsigned rows[8];
    flow_open(f, "'think_time_ms':0,'feeders':{'s':{'mode':'per_user','order':'shuffle',"
                 "'on_exhausted':'stop_user'," ROWS8 "}},"
                 "'journeys':[{'name':'j','steps':[{'path':'/u/${s.v}'},{'exit':'user'}]}]");
    journey_run_users(&f->run, 8);
    assert_int_equal(rows_seen(f, "/u/", rows, 8), 8);
    assert_int_equal(server_times(&f->server, NULL, 0), 8);
    assert_true(is_permutation(rows, 8));
    flow_close(f);
}

/* random: rows drawn with replacement, every one of 4 rows about 100 times in 400 draws
 * (deviation 8.7), and a row often follows itself (sequential or shuffled passes never do
 * within a pass: about 100 times here). */
static void test_random_order(void **state)
{
    flow_t *f = *state;
    unsigned rows[400];
    size_t per_row[4] = {0}, repeats = 0;
    run_journey(f, 400, ",'s':{'mode':'per_iteration','order':'random',"
                "'rows':[{'v':0},{'v':1},{'v':2},{'v':3}]}", "'steps':[{'path':'/r/${s.v}'}]");
    assert_int_equal(rows_seen(f, "/r/", rows, 400), 400);
    for (size_t i = 0; i < 400; i++) {
        assert_true(rows[i] < 4);
        per_row[rows[i]]++;
        repeats += i > 0 && rows[i] == rows[i - 1];
    }
    for (size_t r = 0; r < 4; r++)
        if (per_row[r] < 60 || per_row[r] > 140)
            fail_msg("row %zu drawn %zu times in 400, wanted about 100", r, per_row[r]);
    if (repeats < 50)
        fail_msg("a row followed itself %zu times in 400 draws, wanted about 100", repeats);
    flow_close(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_while_bound, flow_setup, flow_teardown),
        cmocka_unit_test_setup_teardown(test_random_branches, flow_setup, flow_teardown),
        cmocka_unit_test_setup_teardown(test_exit_iteration, flow_setup, flow_teardown),
        cmocka_unit_test_setup_teardown(test_exit_user, flow_setup, flow_teardown),
        cmocka_unit_test_setup_teardown(test_feed_step, flow_setup, flow_teardown),
        cmocka_unit_test_setup_teardown(test_pacing, flow_setup, flow_teardown),
        cmocka_unit_test_setup_teardown(test_default_next_iteration, flow_setup, flow_teardown),
        cmocka_unit_test_setup_teardown(test_shuffle_per_iteration, flow_setup, flow_teardown),
        cmocka_unit_test_setup_teardown(test_shuffle_per_user, flow_setup, flow_teardown),
        cmocka_unit_test_setup_teardown(test_random_order, flow_setup, flow_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
