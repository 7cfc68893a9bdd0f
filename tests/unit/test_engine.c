/* test_engine.c — engines under a worker's control thread (worker/engine.c, control.c) against a
 * server on the test's loop: with stages that ramp down and up again, every running user's
 * ${user_id} stays in the share's range (user_base + 1 .. user_base + users) and no two
 * running users share one, on two engines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "lc_http_server.h"

#define BASE 100u      /* the share's user_base */
#define USERS 4u       /* and its users: ids 101..104 */
#define WINDOW_MS 1300 /* from here (ramped up again at ~800 ms) ... */
#define STOP_MS 1800   /* ... to here, the ids of the users running then are gathered */
#define BOUND_MS 15000
#define SEEN_MAX 64

/* The scenario: 4 users, down to 1, up to 4 again; each user's own token in its requests. */
static const char scenario[] =
    "{\"name\":\"ramp\",\"target\":\"http://127.0.0.1:%u\",\"users\":4,"
    "\"think_time_ms\":[5,5],\"stages\":[{\"duration\":\"100ms\",\"users\":4},"
    "{\"duration\":\"300ms\",\"users\":4},{\"duration\":\"50ms\",\"users\":1},"
    "{\"duration\":\"300ms\",\"users\":1},{\"duration\":\"50ms\",\"users\":4},"
    "{\"duration\":\"1200ms\",\"users\":4}],"
    "\"journeys\":[{\"name\":\"j\",\"on_start\":[{\"set\":{\"me\":\"${uuid}\"}}],"
    "\"steps\":[{\"name\":\"u\",\"path\":\"/u/${user_id}/${me}\"}]}]}";

typedef struct seen_s {
    unsigned long long id;
    char token[40];
} seen_t;

typedef struct ramp_s {
    uv_loop_t loop;
    lc_http_server_t *http;
    worker_control_t ctl;
    uv_timer_t window, stop, bound;
    unsigned long long out_of_range; /* requests with an id outside 101..104 */
    unsigned long long bad_id;       /* the last of them */
    bool gathering, finished;
    size_t n_seen;                   /* distinct (id, token) pairs in the window */
    seen_t seen[SEEN_MAX];
} ramp_t;

static void remember(ramp_t *t, unsigned long long id, const char *token)
{
    for (size_t i = 0; i < t->n_seen; i++)
        if (t->seen[i].id == id && strcmp(t->seen[i].token, token) == 0)
            return;
    assert_true(t->n_seen < SEEN_MAX);
    t->seen[t->n_seen].id = id;
    snprintf(t->seen[t->n_seen++].token, sizeof t->seen[0].token, "%s", token);
}

static void on_request(void *arg, lc_http_exchange_t *ex, const lc_http_request_t *req)
{
    ramp_t *t = arg;
    unsigned long long id;
    char token[40];
    if (sscanf(req->path, "/u/%llu/%39s", &id, token) == 2) {
        if (id <= BASE || id > BASE + USERS) {
            t->out_of_range++;
            t->bad_id = id;
        } else if (t->gathering) {
            remember(t, id, token);
        }
    }
    lc_http_exchange_respond(ex, 200, "text/plain", "", 0, NULL);
}

static void on_window(uv_timer_t *h)
{
    ((ramp_t *)h->data)->gathering = true;
}

static void on_stop(uv_timer_t *h)
{
    ramp_t *t = h->data;
    t->gathering = false;
    worker_control_stop_all(&t->ctl, 1000);
}

static void on_bound(uv_timer_t *h)
{
    fail_msg("the run did not finish within %d ms", BOUND_MS);
}

static void on_ctl_closed(worker_control_t *ctl)
{
    ramp_t *t = ctl->hooks_arg;
    lc_http_server_close(t->http);
    uv_close((uv_handle_t *)&t->window, NULL);
    uv_close((uv_handle_t *)&t->stop, NULL);
    uv_close((uv_handle_t *)&t->bound, NULL);
}

static void on_finished(void *arg, worker_run_t *run)
{
    ramp_t *t = arg;
    t->finished = true;
    worker_control_close(&t->ctl, on_ctl_closed);
}

static void on_failed(void *arg, uint64_t run, const char *why)
{
    fail_msg("the run failed: %s", why);
}

static const worker_control_hooks_t hooks = {.run_finished = on_finished,
                                             .run_failed = on_failed};

static void start_timer(ramp_t *t, uv_timer_t *h, uv_timer_cb cb, uint64_t ms)
{
    assert_int_equal(uv_timer_init(&t->loop, h), 0);
    h->data = t;
    assert_int_equal(uv_timer_start(h, cb, ms, 0), 0);
}

/* Runs the ramp on two engines with the share user_base 100, 4 users. */
static void run_ramp(ramp_t *t)
{
    char err[512], doc[sizeof scenario + 16];
    assert_int_equal(uv_loop_init(&t->loop), 0);
    if (lc_http_server_init(&t->http, &t->loop, "127.0.0.1", 0, 65536, on_request, t, err,
                            sizeof err) != 0)
        fail_msg("server: %s", err);
    int n = snprintf(doc, sizeof doc, scenario, lc_http_server_port(t->http));
    assert_true(n > 0 && (size_t)n < sizeof doc);
    worker_engines_conf_t engines = {.count = 2, .busy_poll_us = WORKER_BUSY_POLL_DEFAULT_US};
    assert_int_equal(worker_control_init(&t->ctl, &t->loop, &engines, false, "t", &hooks, t), 0);
    worker_assign_t a = {.run = 1, .generation = 1, .users = USERS, .scenario_json = doc,
                         .scenario_len = (size_t)n, .user_base = BASE};
    if (worker_control_assign(&t->ctl, &a, err, sizeof err) != 0)
        fail_msg("assign: %s", err);
    start_timer(t, &t->window, on_window, WINDOW_MS);
    start_timer(t, &t->stop, on_stop, STOP_MS);
    start_timer(t, &t->bound, on_bound, BOUND_MS);
    uv_run(&t->loop, UV_RUN_DEFAULT);
    assert_true(t->finished);
    assert_int_equal(uv_loop_close(&t->loop), 0);
}

static void test_user_ids_stay_in_the_share_when_stages_ramp_down_and_up(void **state)
{
    ramp_t *t = calloc(1, sizeof *t);
    assert_non_null(t);
    run_ramp(t);
    if (t->out_of_range > 0)
        fail_msg("%llu requests had a ${user_id} outside %u..%u (e.g. %llu)", t->out_of_range,
                 BASE + 1, BASE + USERS, t->bad_id);
    /* The 4 users running in the window: 4 ids, each one user's (one token). */
    assert_int_equal(t->n_seen, USERS);
    for (size_t i = 0; i < t->n_seen; i++)
        for (size_t j = i + 1; j < t->n_seen; j++)
            if (t->seen[i].id == t->seen[j].id)
                fail_msg("two running users have ${user_id} %llu", t->seen[i].id);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_user_ids_stay_in_the_share_when_stages_ramp_down_and_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
