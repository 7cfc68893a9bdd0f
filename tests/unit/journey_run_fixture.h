/* journey_run_fixture.h — one engine run of a journey scenario on the test thread's loop, its
 * users to the end, against a server thread (lc_http_server) that logs every request it saw. */
#ifndef TESTS_UNIT_JOURNEY_RUN_FIXTURE_H
#define TESTS_UNIT_JOURNEY_RUN_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <pthread.h>

#include "engine.h"
#include "lc_http_server.h"
#include "plan.h"
#include "stats.h"
#include "user.h"

#define JRF_DOC_MAX 8192
#define JRF_RUN_BOUND_MS 10000 /* a run's loop gives up after this */
#define JRF_LOG_MAX 4096       /* requests the server logs */
#define JRF_PATH_MAX 64

/* What the server saw: each request's path (query cut) and arrival (uv_hrtime). */
typedef struct jrf_seen_s {
    char path[JRF_PATH_MAX];
    uint64_t at_ns;
} jrf_seen_t;

typedef struct jrf_server_s {
    uv_loop_t loop;
    uv_async_t stop;
    lc_http_server_t *http;
    pthread_t thread;
    uint16_t port;
    bool running;
    pthread_mutex_t mu;
    size_t n; /* requests seen (those past JRF_LOG_MAX are counted, not logged) */
    jrf_seen_t log[JRF_LOG_MAX];
} jrf_server_t;

typedef struct jrf_s {
    worker_engine_t *e;
    engine_run_t *r;
    worker_plan_t *plan;
    jrf_server_t sv;
} jrf_t;

/* "/fail…" answers 500, every other path 200 "ok". */
static void jrf_handle(void *arg, lc_http_exchange_t *ex, const lc_http_request_t *req)
{
    jrf_server_t *sv = arg;
    pthread_mutex_lock(&sv->mu);
    if (sv->n < JRF_LOG_MAX) {
        snprintf(sv->log[sv->n].path, JRF_PATH_MAX, "%s", req->path);
        sv->log[sv->n].at_ns = uv_hrtime();
    }
    sv->n++;
    pthread_mutex_unlock(&sv->mu);
    int status = strncmp(req->path, "/fail", 5) == 0 ? 500 : 200;
    lc_http_exchange_respond(ex, status, "text/plain", "ok", 2, NULL);
}

static void jrf_on_stop(uv_async_t *a)
{
    jrf_server_t *sv = a->data;
    lc_http_server_close(sv->http);
    uv_close((uv_handle_t *)&sv->stop, NULL);
}

static void *jrf_server_main(void *arg)
{
    jrf_server_t *sv = arg;
    uv_run(&sv->loop, UV_RUN_DEFAULT);
    return NULL;
}

static void jrf_server_start(jrf_server_t *sv)
{
    char err[256];
    memset(sv, 0, sizeof *sv);
    assert_int_equal(pthread_mutex_init(&sv->mu, NULL), 0);
    assert_int_equal(uv_loop_init(&sv->loop), 0);
    assert_int_equal(uv_async_init(&sv->loop, &sv->stop, jrf_on_stop), 0);
    sv->stop.data = sv;
    if (lc_http_server_init(&sv->http, &sv->loop, "127.0.0.1", 0, 65536, jrf_handle, sv, err,
                            sizeof err) != 0)
        fail_msg("server: %s", err);
    sv->port = lc_http_server_port(sv->http);
    assert_int_equal(pthread_create(&sv->thread, NULL, jrf_server_main, sv), 0);
    sv->running = true;
}

static void jrf_server_stop(jrf_server_t *sv)
{
    sv->running = false;
    uv_async_send(&sv->stop);
    pthread_join(sv->thread, NULL);
    assert_int_equal(uv_loop_close(&sv->loop), 0);
    pthread_mutex_destroy(&sv->mu);
}

/* Parses and plans a scenario (JSON with ' for ") whose target is the server. */
static void jrf_plan(jrf_t *f, const char *body)
{
    char doc[JRF_DOC_MAX], err[512];
    int n = snprintf(doc, sizeof doc, "{'name':'flow','target':'http://127.0.0.1:%u',"
                                      "'duration':5,'connect_timeout_ms':2000,%s}",
                     f->sv.port, body);
    assert_true(n > 0 && (size_t)n < sizeof doc);
    for (char *c = doc; *c != '\0'; c++)
        if (*c == '\'')
            *c = '"';
    lc_scenario_t sc;
    if (lc_scenario_parse(doc, strlen(doc), &sc, err, sizeof err) != 0)
        fail_msg("parse: %s", err);
    if (worker_plan_build(&f->plan, &sc, err, sizeof err) != 0)
        fail_msg("plan: %s", err);
    uv_ip4_addr("127.0.0.1", f->sv.port, (struct sockaddr_in *)&f->plan->origins[0].addr);
}

/* Starts the server, then an engine and a run of body's scenario on this thread. */
static void jrf_open(jrf_t *f, const char *body)
{
    memset(f, 0, sizeof *f);
    jrf_server_start(&f->sv);
    jrf_plan(f, body);
    assert_non_null(f->e = calloc(1, sizeof *f->e));
    assert_int_equal(uv_loop_init(&f->e->loop), 0);
    f->e->loop.data = f->e;
    f->e->rng = 1;
    f->e->n_engines = 1;
    assert_non_null(f->r = calloc(1, sizeof *f->r));
    f->r->engine = f->e;
    f->r->id = 7;
    f->r->plan = f->plan;
    f->r->t0_ns = uv_hrtime();
    assert_non_null(f->r->stats = worker_stats_new(f->plan->n_endpoints));
}

/* Starts users 1..n, runs until every one has ended (the journey must end them: a feeder
 * that stops the user, an exit), within JRF_RUN_BOUND_MS. */
static void jrf_run_users(jrf_t *f, uint64_t n)
{
    for (uint64_t id = 1; id <= n; id++)
        assert_non_null(worker_user_start(f->r, id));
    uint64_t t0 = uv_hrtime();
    while (f->r->live > 0 && (uv_hrtime() - t0) / 1000000u < JRF_RUN_BOUND_MS)
        uv_run(&f->e->loop, UV_RUN_ONCE);
    if (f->r->live > 0)
        fail_msg("%u users still running after %u ms", f->r->live, JRF_RUN_BOUND_MS);
}

static void jrf_close(jrf_t *f)
{
    assert_int_equal(f->r->live, 0);
    worker_stats_free(f->r->stats);
    free(f->r);
    uv_run(&f->e->loop, UV_RUN_NOWAIT); /* close callbacks still due */
    assert_int_equal(uv_loop_close(&f->e->loop), 0);
    worker_bufpool_free(&f->e->pool);
    lc_buf_free(&f->e->body_scratch);
    lc_buf_free(&f->e->req_scratch);
    free(f->e);
    worker_plan_free(f->plan);
    jrf_server_stop(&f->sv);
    f->e = NULL;
}

/* cmocka's setup: a fixture on the heap, so that a failed test leaves nothing on a stack. */
static int jrf_setup(void **state)
{
    *state = calloc(1, sizeof(jrf_t));
    return *state == NULL ? -1 : 0;
}

/* cmocka's teardown: after a failure, the server stops; an engine with users still running
 * is left behind (its loop cannot close), so the next test starts clean either way. */
static int jrf_teardown(void **state)
{
    jrf_t *f = *state;
    if (f->e != NULL && f->r->live == 0)
        jrf_close(f);
    else if (f->sv.running)
        jrf_server_stop(&f->sv);
    if (f->e == NULL)
        free(f);
    return 0;
}

/* The counters of the endpoint named name ("GET /x"). */
static const worker_ep_stats_t *jrf_ep(const jrf_t *f, const char *name)
{
    int i = lc_program_endpoint(f->plan->program, name);
    if (i < 0)
        fail_msg("no endpoint %s", name);
    return &f->r->stats->ep[i];
}

/* Requests the server saw with this path. */
static size_t jrf_hits(jrf_t *f, const char *path)
{
    size_t n = 0;
    pthread_mutex_lock(&f->sv.mu);
    for (size_t i = 0; i < f->sv.n && i < JRF_LOG_MAX; i++)
        n += strcmp(f->sv.log[i].path, path) == 0;
    pthread_mutex_unlock(&f->sv.mu);
    return n;
}

/* When the server saw its first max requests (uv_hrtime); returns how many it saw in all. */
static size_t jrf_times(jrf_t *f, uint64_t *at, size_t max)
{
    pthread_mutex_lock(&f->sv.mu);
    size_t n = f->sv.n;
    for (size_t i = 0; i < n && i < max && i < JRF_LOG_MAX; i++)
        at[i] = f->sv.log[i].at_ns;
    pthread_mutex_unlock(&f->sv.mu);
    return n;
}

/* The paths the server saw, in order, joined by ' '. */
static void jrf_sequence(jrf_t *f, char *out, size_t len)
{
    size_t at = 0;
    out[0] = '\0';
    pthread_mutex_lock(&f->sv.mu);
    for (size_t i = 0; i < f->sv.n && i < JRF_LOG_MAX && at < len; i++)
        at += (size_t)snprintf(out + at, len - at, "%s%s", i > 0 ? " " : "", f->sv.log[i].path);
    pthread_mutex_unlock(&f->sv.mu);
}

#endif
