/* journey_run_fixture.h — an engine run of a journey scenario against local HTTP servers. */
#ifndef TESTS_UNIT_JOURNEY_RUN_FIXTURE_H
#define TESTS_UNIT_JOURNEY_RUN_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <pthread.h>

#include "engine.h"
#include "journey.h"
#include "journey_lua.h"
#include "lc_http_server.h"
#include "plan.h"
#include "stats.h"
#include "user.h"

#define JOURNEY_DOC_MAX 8192
#define JOURNEY_RUN_BOUND_MS 10000 /* users that have not ended by then fail the test */
#define SERVER_LOG_MAX 4096        /* requests a server thread logs (it counts them all) */
#define SERVER_PATH_MAX 64

/* ---- the run: engine, plan, run, and the trace of a traced run --------------------------- */

typedef struct journey_run_s {
    worker_engine_t *e;
    engine_run_t *r;
    worker_plan_t *plan;
    lc_http_server_t *local_server; /* on the engine's loop (journey_run_serve_here), or NULL */
    worker_trace_t trace;           /* traced runs only: the trace kept in trace_text */
    FILE *trace_out;
    char *trace_text;
    size_t trace_len;
} journey_run_t;

/* f's engine: one, rng 1, its loop ready. */
static inline void journey_run_engine(journey_run_t *f)
{
    assert_non_null(f->e = calloc(1, sizeof *f->e));
    assert_int_equal(uv_loop_init(&f->e->loop), 0);
    f->e->loop.data = f->e;
    f->e->rng = 1;
    f->e->n_engines = 1;
}

/* A server on the engine's loop answering with handler(arg): f zeroed, its engine, the
 * server; returns the server's port. */
static inline uint16_t journey_run_serve_here(journey_run_t *f, lc_http_handler_cb handler,
                                              void *arg)
{
    char err[256];
    memset(f, 0, sizeof *f);
    journey_run_engine(f);
    if (lc_http_server_init(&f->local_server, &f->e->loop, "127.0.0.1", 0, 65536, handler, arg,
                            err, sizeof err) != 0)
        fail_msg("server: %s", err);
    return lc_http_server_port(f->local_server);
}

/* Sends what goes to the scenario's origin i (0: target; then its targets) to port on
 * 127.0.0.1, whatever the origin's host: the control thread resolves them in a real run. */
static inline void journey_run_aim(journey_run_t *f, size_t i, uint16_t port)
{
    assert_true(i < f->plan->n_origins);
    uv_ip4_addr("127.0.0.1", port, (struct sockaddr_in *)&f->plan->origins[i].addr);
}

/* The plan of scenario {name, target http://127.0.0.1:port, members} (JSON with ' for "),
 * its target aimed at port. */
static inline void journey_run_plan(journey_run_t *f, const char *name, uint16_t port,
                                    const char *members)
{
    char doc[JOURNEY_DOC_MAX], err[512];
    int n = snprintf(doc, sizeof doc, "{'name':'%s','target':'http://127.0.0.1:%u',%s}", name,
                     port, members);
    assert_true(n > 0 && (size_t)n < sizeof doc);
    for (char *c = doc; *c != '\0'; c++)
        if (*c == '\'')
            *c = '"';
    lc_scenario_t sc;
    if (lc_scenario_parse(doc, strlen(doc), &sc, err, sizeof err) != 0)
        fail_msg("parse: %s", err);
    if (worker_plan_build(&f->plan, &sc, err, sizeof err) != 0)
        fail_msg("plan: %s", err);
    journey_run_aim(f, 0, port);
}

/* A run (id 7) of that scenario on f's engine (made here unless journey_run_serve_here made
 * it; else f starts zeroed); traced: the trace in memory, and a user runs one iteration. */
static inline void journey_run_open(journey_run_t *f, const char *name, uint16_t port,
                                    bool traced, const char *members)
{
    journey_run_plan(f, name, port, members);
    if (f->e == NULL)
        journey_run_engine(f);
    if (traced) {
        f->trace_out = open_memstream(&f->trace_text, &f->trace_len);
        worker_trace_init(&f->trace, f->trace_out);
        f->plan->trace = &f->trace;
    }
    assert_non_null(f->r = calloc(1, sizeof *f->r));
    *f->r = (engine_run_t){.engine = f->e, .id = 7, .plan = f->plan, .t0_ns = uv_hrtime()};
    assert_non_null(f->r->stats = worker_stats_new(f->plan->n_endpoints));
    if (f->plan->scenario.script != NULL)
        assert_int_equal(worker_lua_run_open(f->r), 0);
}

/* A traced run of script (JSON-quoted, with ' for ") and members, target on 127.0.0.1:port
 * (1: nothing listens there). */
static inline void journey_run_open_script(journey_run_t *f, uint16_t port, const char *script,
                                           const char *members)
{
    char text[JOURNEY_DOC_MAX];
    int n = snprintf(text, sizeof text, "'duration':5,'connect_timeout_ms':2000,'script':'%s',%s",
                     script, members);
    assert_true(n > 0 && (size_t)n < sizeof text);
    journey_run_open(f, "t", port, true, text);
}

/* Starts users 1..n, in turn, before the loop runs. */
static inline void journey_run_start_users(journey_run_t *f, uint64_t n)
{
    for (uint64_t id = 1; id <= n; id++)
        assert_non_null(worker_user_start(f->r, id));
}

/* Runs the loop until every user has ended, within JOURNEY_RUN_BOUND_MS. */
static inline void journey_run_until_ended(journey_run_t *f)
{
    uint64_t t0 = uv_hrtime();
    while (f->r->live > 0 && (uv_hrtime() - t0) / 1000000u < JOURNEY_RUN_BOUND_MS)
        uv_run(&f->e->loop, UV_RUN_ONCE);
    if (f->trace_out != NULL)
        fflush(f->trace_out);
    if (f->r->live > 0)
        fail_msg("%u users still running after %u ms (trace:\n%s)", f->r->live,
                 JOURNEY_RUN_BOUND_MS, f->trace_text != NULL ? f->trace_text : "none");
}

/* Users 1..n, each started in turn, until they have all ended (a traced user after one
 * iteration; else the journey must end them: a feeder that stops the user, an exit). */
static inline void journey_run_users(journey_run_t *f, uint64_t n)
{
    journey_run_start_users(f, n);
    journey_run_until_ended(f);
}

static inline void journey_run_close(journey_run_t *f)
{
    assert_int_equal(f->r->live, 0);
    if (f->local_server != NULL)
        lc_http_server_close(f->local_server);
    /* the server's handles, and close callbacks still due */
    uv_run(&f->e->loop, f->local_server != NULL ? UV_RUN_DEFAULT : UV_RUN_NOWAIT);
    assert_int_equal(uv_loop_close(&f->e->loop), 0);
    worker_lua_run_close(f->r);
    worker_stats_free(f->r->stats);
    free(f->r);
    worker_engine_free_buffers(f->e);
    free(f->e);
    worker_plan_free(f->plan);
    if (f->trace_out != NULL) {
        fclose(f->trace_out);
        free(f->trace_text);
    }
    f->e = NULL;
}

/* ---- what the run counted --------------------------------------------------------------- */

/* The counters of the endpoint named name ("GET /x", "lua f"). */
static inline const worker_ep_stats_t *ep_stats(const journey_run_t *f, const char *name)
{
    int i = lc_program_endpoint(f->plan->program, name);
    if (i < 0)
        fail_msg("no endpoint %s", name);
    return &f->r->stats->ep[i];
}

/* How often script check name passed; fails the test when it failed or never ran. */
static inline uint64_t check_passes(const journey_run_t *f, const char *name)
{
    const worker_checks_t *cs = f->r->stats->checks;
    for (size_t i = 0; cs != NULL && i < cs->n; i++)
        if (strcmp(cs->c[i].name, name) == 0 && cs->c[i].failed == 0)
            return cs->c[i].passed;
    fail_msg("check \"%s\" failed or did not run (trace:\n%s)", name, f->trace_text);
    return 0;
}

/* Every check passed, as many as want, and none failed. */
static inline void assert_checks_passed(const journey_run_t *f, uint64_t want)
{
    const worker_checks_t *cs = f->r->stats->checks;
    uint64_t passed = 0;
    for (size_t i = 0; cs != NULL && i < cs->n; i++) {
        if (cs->c[i].failed > 0)
            fail_msg("check \"%s\" failed (trace:\n%s)", cs->c[i].name, f->trace_text);
        passed += cs->c[i].passed;
    }
    if (passed != want)
        fail_msg("%llu checks passed, wanted %llu (trace:\n%s)", (unsigned long long)passed,
                 (unsigned long long)want, f->trace_text);
}

/* ---- a server on a thread of its own, logging every request ------------------------------ */

/* A request the server saw: its path (query cut) and arrival (uv_hrtime). */
typedef struct server_request_s {
    char path[SERVER_PATH_MAX];
    uint64_t at_ns;
} server_request_t;

typedef struct server_thread_s {
    uv_loop_t loop;
    uv_async_t stop;
    lc_http_server_t *http;
    pthread_t thread;
    uint16_t port;
    bool running;
    lc_http_handler_cb answer; /* called with the server_thread_t */
    pthread_mutex_t mu;
    size_t n; /* requests seen (those past SERVER_LOG_MAX are counted, not logged) */
    server_request_t log[SERVER_LOG_MAX];
} server_thread_t;

static inline void server_thread_handle(void *arg, lc_http_exchange_t *ex,
                                        const lc_http_request_t *req)
{
    server_thread_t *sv = arg;
    pthread_mutex_lock(&sv->mu);
    if (sv->n < SERVER_LOG_MAX) {
        snprintf(sv->log[sv->n].path, SERVER_PATH_MAX, "%s", req->path);
        sv->log[sv->n].at_ns = uv_hrtime();
    }
    sv->n++;
    pthread_mutex_unlock(&sv->mu);
    sv->answer(sv, ex, req);
}

static inline void server_thread_on_stop(uv_async_t *a)
{
    server_thread_t *sv = a->data;
    lc_http_server_close(sv->http);
    uv_close((uv_handle_t *)&sv->stop, NULL);
}

static inline void *server_thread_main(void *arg)
{
    server_thread_t *sv = arg;
    uv_run(&sv->loop, UV_RUN_DEFAULT);
    return NULL;
}

/* A server on 127.0.0.1 (sv->port) whose thread answers each request with answer. */
static inline void server_thread_start(server_thread_t *sv, lc_http_handler_cb answer)
{
    char err[256];
    memset(sv, 0, sizeof *sv);
    sv->answer = answer;
    assert_int_equal(pthread_mutex_init(&sv->mu, NULL), 0);
    assert_int_equal(uv_loop_init(&sv->loop), 0);
    assert_int_equal(uv_async_init(&sv->loop, &sv->stop, server_thread_on_stop), 0);
    sv->stop.data = sv;
    if (lc_http_server_init(&sv->http, &sv->loop, "127.0.0.1", 0, 65536, server_thread_handle,
                            sv, err, sizeof err) != 0)
        fail_msg("server: %s", err);
    sv->port = lc_http_server_port(sv->http);
    assert_int_equal(pthread_create(&sv->thread, NULL, server_thread_main, sv), 0);
    sv->running = true;
}

static inline void server_thread_stop(server_thread_t *sv)
{
    sv->running = false;
    uv_async_send(&sv->stop);
    pthread_join(sv->thread, NULL);
    assert_int_equal(uv_loop_close(&sv->loop), 0);
    pthread_mutex_destroy(&sv->mu);
}

/* Requests the server saw in all. */
static inline size_t server_requests(server_thread_t *sv)
{
    pthread_mutex_lock(&sv->mu);
    size_t n = sv->n;
    pthread_mutex_unlock(&sv->mu);
    return n;
}

/* Requests the server saw with this path. */
static inline size_t server_hits(server_thread_t *sv, const char *path)
{
    size_t n = 0;
    pthread_mutex_lock(&sv->mu);
    for (size_t i = 0; i < sv->n && i < SERVER_LOG_MAX; i++)
        n += strcmp(sv->log[i].path, path) == 0;
    pthread_mutex_unlock(&sv->mu);
    return n;
}

/* When the server saw its first max requests (uv_hrtime); returns how many it saw in all. */
static inline size_t server_times(server_thread_t *sv, uint64_t *at, size_t max)
{
    pthread_mutex_lock(&sv->mu);
    size_t n = sv->n;
    for (size_t i = 0; i < n && i < max && i < SERVER_LOG_MAX; i++)
        at[i] = sv->log[i].at_ns;
    pthread_mutex_unlock(&sv->mu);
    return n;
}

/* The paths the server saw, in order, joined by ' '. */
static inline void server_sequence(server_thread_t *sv, char *out, size_t len)
{
    size_t at = 0;
    out[0] = '\0';
    pthread_mutex_lock(&sv->mu);
    for (size_t i = 0; i < sv->n && i < SERVER_LOG_MAX && at < len; i++)
        at += (size_t)snprintf(out + at, len - at, "%s%s", i > 0 ? " " : "", sv->log[i].path);
    pthread_mutex_unlock(&sv->mu);
}

/* ---- the pages the script tests ask for ------------------------------------------------- */

/* A server_thread_t's answer: HEAD, /json (a cookie, X-Trace), /a/setc (two cookies), /e/…
 * (all a request says), /echo, redirects /r302 /r302p /r307 /away /loop, else a 404 saying
 * what was asked. */
static inline void answer_script_pages(void *arg, lc_http_exchange_t *ex,
                                       const lc_http_request_t *req)
{
    char body[512];
    int n;
    (void)arg;
    if (strcmp(req->method, "HEAD") == 0) {
        lc_http_exchange_respond(ex, 200, "text/plain", "", 0, "X-Head: 1\r\n");
    } else if (strcmp(req->path, "/json") == 0) {
        static const char doc[] = "{\"items\":[{\"id\":7},{\"id\":8}],\"name\":\"x\",\"ok\":true,"
                                  "\"n\":null}";
        lc_http_exchange_respond(ex, 200, "application/json", doc, sizeof doc - 1,
                                 "X-Trace: abc\r\nSet-Cookie: sid=s1; Path=/\r\n");
    } else if (strcmp(req->path, "/a/setc") == 0) { /* cookies without a Path: "/a" */
        lc_http_exchange_respond(ex, 200, "text/plain", "", 0,
                                 "Set-Cookie: c1=v\r\nX-Dup: 1\r\nSet-Cookie: c2=w\r\n"
                                 "X-Dup: 2\r\n");
    } else if (strncmp(req->path, "/e/", 3) == 0) { /* all a request says */
        n = snprintf(body, sizeof body, "%s %s?%s host=%s body=%s", req->method, req->path,
                     req->query, req->host ? req->host : "-", req->body);
        lc_http_exchange_respond(ex, 200, "text/plain", body, (size_t)n, NULL);
    } else if (strcmp(req->path, "/echo") == 0) {
        n = snprintf(body, sizeof body, "%s %s", req->method, req->body);
        lc_http_exchange_respond(ex, 200, "text/plain", body, (size_t)n, NULL);
    } else if (strcmp(req->path, "/r302") == 0) {
        lc_http_exchange_respond(ex, 302, "text/plain", "", 0, "Location: /json\r\n");
    } else if (strcmp(req->path, "/r302p") == 0) {
        lc_http_exchange_respond(ex, 302, "text/plain", "", 0, "Location: echo\r\n");
    } else if (strcmp(req->path, "/r307") == 0) {
        lc_http_exchange_respond(ex, 307, "text/plain", "", 0, "Location: echo\r\n");
    } else if (strcmp(req->path, "/away") == 0) {
        lc_http_exchange_respond(ex, 302, "text/plain", "", 0,
                                 "Location: http://other.example/x\r\n");
    } else if (strcmp(req->path, "/loop") == 0) {
        lc_http_exchange_respond(ex, 302, "text/plain", "", 0, "Location: /loop\r\n");
    } else {
        n = snprintf(body, sizeof body, "no %s %s host=%s", req->method, req->path,
                     req->host ? req->host : "-");
        lc_http_exchange_respond(ex, 404, "text/plain", body, (size_t)n, NULL);
    }
}

#endif
