/* journey_lua_fixture.h — what test_journey_lua and test_journey_lua_http share: a scenario
 * with a script on a real engine loop (one run, users run until they end, the trace kept in
 * memory), its counters, and a server on a thread of its own (lc_http_server) that answers
 * the scripts' requests. Include it after cmocka.h and the worker's headers. */
#ifndef TESTS_UNIT_JOURNEY_LUA_FIXTURE_H
#define TESTS_UNIT_JOURNEY_LUA_FIXTURE_H

#define DOC_MAX 8192
#define RUN_BOUND_MS 5000 /* every test's loop gives up after this */

typedef struct fx_s {
    worker_engine_t *e;
    engine_run_t *r;
    worker_plan_t *plan;
    worker_trace_t trace;
    char *trace_text;
    size_t trace_len;
    FILE *trace_out;
} fx_t;

/* Sends what goes to the scenario's origin i (0: target; then its targets) to port on
 * 127.0.0.1, whatever the origin's host: the control thread resolves them in a real run. */
static inline void fx_aim(fx_t *f, size_t i, uint16_t port)
{
    assert_true(i < f->plan->n_origins);
    uv_ip4_addr("127.0.0.1", port, (struct sockaddr_in *)&f->plan->origins[i].addr);
}

/* A scenario (JSON with ' for ") against 127.0.0.1:port (1: nothing listens there). */
static inline void fx_open_at(fx_t *f, uint16_t port, const char *script, const char *journeys)
{
    char doc[DOC_MAX], err[512];
    int n = snprintf(doc, sizeof doc, "{'name':'t','target':'http://127.0.0.1:%u','duration':5,"
                                      "'connect_timeout_ms':2000,'script':'%s',%s}", port, script,
                     journeys);
    assert_true(n > 0 && (size_t)n < sizeof doc);
    for (char *c = doc; *c != '\0'; c++)
        if (*c == '\'')
            *c = '"';
    lc_scenario_t sc;
    if (lc_scenario_parse(doc, strlen(doc), &sc, err, sizeof err) != 0)
        fail_msg("parse: %s", err);
    if (worker_plan_build(&f->plan, &sc, err, sizeof err) != 0)
        fail_msg("plan: %s", err);
    fx_aim(f, 0, port);
    f->trace_out = open_memstream(&f->trace_text, &f->trace_len);
    worker_trace_init(&f->trace, f->trace_out);
    f->plan->trace = &f->trace;
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
    assert_int_equal(worker_lua_run_open(f->r), 0);
}

static inline void fx_open(fx_t *f, const char *script, const char *journeys)
{
    fx_open_at(f, 1, script, journeys);
}

/* Users 1..n, each started in turn before the loop runs (user 1 parks first), through one
 * iteration each until they are all freed. */
static inline void fx_run_users(fx_t *f, uint64_t n)
{
    for (uint64_t id = 1; id <= n; id++) {
        worker_user_t *u = worker_user_new(f->r, id);
        assert_non_null(u);
        worker_journey_resume(u);
    }
    uint64_t t0 = uv_hrtime();
    while (f->r->live > 0 && (uv_hrtime() - t0) / 1000000u < RUN_BOUND_MS)
        uv_run(&f->e->loop, UV_RUN_ONCE);
    assert_int_equal(f->r->live, 0);
    fflush(f->trace_out);
}

/* One user, id 1, through one iteration until it is freed. */
static inline void fx_run_user(fx_t *f)
{
    fx_run_users(f, 1);
}

static inline void fx_close(fx_t *f)
{
    worker_lua_run_close(f->r);
    worker_stats_free(f->r->stats);
    free(f->r);
    assert_int_equal(uv_loop_close(&f->e->loop), 0);
    worker_bufpool_free(&f->e->pool);
    lc_buf_free(&f->e->body_scratch);
    lc_buf_free(&f->e->req_scratch);
    free(f->e);
    worker_plan_free(f->plan);
    fclose(f->trace_out);
    free(f->trace_text);
}

static inline const worker_ep_stats_t *ep(const fx_t *f, const char *name)
{
    int i = lc_program_endpoint(f->plan->program, name);
    if (i < 0)
        fail_msg("no endpoint %s", name);
    return &f->r->stats->ep[i];
}

/* Every check passed, as many as want, and none failed. */
static inline void assert_checks_passed(const fx_t *f, uint64_t want)
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

/* Each function fails once: a script error on its step's endpoint, the message in the
 * trace, and nothing sent. */
static inline void expect_script_error(const char *fn_body, const char *want)
{
    char script[2048];
    snprintf(script, sizeof script, "function f(u) %s end", fn_body);
    fx_t f = {0};
    fx_open(&f, script, "'journeys':[{'name':'j','steps':[{'lua':'f'}]}]");
    fx_run_user(&f);
    if (ep(&f, "lua f")->errors[WORKER_ERR_SCRIPT] != 1 || strstr(f.trace_text, want) == NULL)
        fail_msg("{%s}: %llu script errors, trace:\n%s\nwanted \"%s\"", fn_body,
                 (unsigned long long)ep(&f, "lua f")->errors[WORKER_ERR_SCRIPT], f.trace_text,
                 want);
    assert_int_equal(ep(&f, "lua f")->count, 0);
    assert_non_null(strstr(f.trace_text, "iteration failed"));
    fx_close(&f);
}

/* ---- against a server: a thread of its own with lc_http_server ------------------------ */

typedef struct srv_s {
    uv_loop_t loop;
    uv_async_t stop;
    lc_http_server_t *http;
    pthread_t thread;
    uint16_t port;
    atomic_uint hits;
} srv_t;

static inline void srv_handle(void *arg, lc_http_exchange_t *ex, const lc_http_request_t *req)
{
    srv_t *sv = arg;
    char body[512];
    atomic_fetch_add(&sv->hits, 1);
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
        int n = snprintf(body, sizeof body, "%s %s?%s host=%s body=%s", req->method, req->path,
                         req->query, req->host ? req->host : "-", req->body);
        lc_http_exchange_respond(ex, 200, "text/plain", body, (size_t)n, NULL);
    } else if (strcmp(req->path, "/echo") == 0) {
        int n = snprintf(body, sizeof body, "%s %s", req->method, req->body);
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
        int n = snprintf(body, sizeof body, "no %s %s host=%s", req->method, req->path,
                         req->host ? req->host : "-");
        lc_http_exchange_respond(ex, 404, "text/plain", body, (size_t)n, NULL);
    }
}

static inline void srv_on_stop(uv_async_t *a)
{
    srv_t *sv = a->data;
    lc_http_server_close(sv->http);
    uv_close((uv_handle_t *)&sv->stop, NULL);
}

static inline void *srv_main(void *arg)
{
    srv_t *sv = arg;
    uv_run(&sv->loop, UV_RUN_DEFAULT);
    return NULL;
}

static inline void srv_start(srv_t *sv)
{
    char err[256];
    memset(sv, 0, sizeof *sv);
    assert_int_equal(uv_loop_init(&sv->loop), 0);
    assert_int_equal(uv_async_init(&sv->loop, &sv->stop, srv_on_stop), 0);
    sv->stop.data = sv;
    if (lc_http_server_init(&sv->http, &sv->loop, "127.0.0.1", 0, 65536, srv_handle, sv, err,
                            sizeof err) != 0)
        fail_msg("server: %s", err);
    sv->port = lc_http_server_port(sv->http);
    assert_int_equal(pthread_create(&sv->thread, NULL, srv_main, sv), 0);
}

static inline void srv_stop(srv_t *sv)
{
    uv_async_send(&sv->stop);
    pthread_join(sv->thread, NULL);
    assert_int_equal(uv_loop_close(&sv->loop), 0);
}

/* Runs script's f (one lua step, options in step) for one user against the
 * server; with the 50 ms CPU limit, since a loaded test machine must not turn
 * these tests of the API into tests of the deadline (test_script_cpu_ms). */
static inline void run_served(fx_t *f, srv_t *sv, const char *script, const char *more)
{
    char journeys[2048];
    snprintf(journeys, sizeof journeys,
             "'script_cpu_ms':50,'journeys':[{'name':'j','steps':[%s]}]", more);
    srv_start(sv);
    fx_open_at(f, sv->port, script, journeys);
    fx_run_user(f);
}

#endif
