/* journey_lua_internal.h — engine thread: what journey_lua.c (the coroutines and the op) and
 * journey_lua_api.c (the functions a script calls, u.vars) share. */
#ifndef WORKER_JOURNEY_LUA_INTERNAL_H
#define WORKER_JOURNEY_LUA_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <lua.h>

#include "engine.h"
#include "http_conn.h"
#include "lc_lua_sandbox.h"
#include "user.h"

#define WORKER_LUA_SLEEP_MAX_MS 3600000u

/* What a user's coroutine is waiting for. */
enum worker_lua_wait { WORKER_LUA_IDLE, WORKER_LUA_HTTP, WORKER_LUA_SLEEP };

/* The run's sandbox on one engine (engine_run_t.lua). */
typedef struct worker_lua_run_s {
    lc_lua_t *lua;          /* NULL: the sandbox could not be made (logged) */
    engine_run_t *run;
    worker_user_t *current; /* the user whose coroutine runs now, or NULL (between runs) */
    uint32_t errors_logged; /* script errors logged; past WORKER_LUA_ERRORS_LOGGED, counted */
} worker_lua_run_t;

#define WORKER_LUA_ERRORS_LOGGED 10u

/* A scripted user (worker_journey_state_t.lua), allocated when it first reaches a lua step. */
struct worker_lua_user_s {
    lua_State *co;        /* NULL: none now (not made yet, or it died of an error) */
    int co_ref;           /* the sandbox's anchor of co */
    int u_ref;            /* registry: the user's u table, kept for its life (u.vars' own) */
    uint32_t step;        /* the lua step running */
    uint32_t endpoint;    /* the request in flight is counted here */
    uint32_t timeout_ms;  /* of the request in flight */
    uint8_t wait;         /* enum worker_lua_wait */
    bool head;            /* the request in flight is a HEAD */
};

/* journey_lua_api.c: the functions a script calls (http.*, sleep, check). */
extern const lc_lua_host_fn_t worker_lua_host_fns[];
extern const size_t worker_lua_n_host_fns;

/* Pushes the user's (ud's) u table onto co ({id, iteration, vars}), made on the first call;
 * an lc_lua_push_cb: it runs inside the coroutine's protected start, so it may raise. */
int worker_lua_push_user(lua_State *co, void *ud);

/* A response for the script: res as worker_lua_done got it; kind its outcome. */
typedef struct worker_lua_answer_s {
    worker_user_t *u;
    const worker_conn_result_t *res;
    int kind; /* WORKER_KIND_OK, or the error kind it was counted with */
} worker_lua_answer_t;

/* Pushes the response table ({status, ok, error, latency_ms, body, headers, header(name)})
 * for ud (a worker_lua_answer_t), then gives the connection's capture buffers back. */
int worker_lua_push_response(lua_State *co, void *ud);

/* Raises "script:12: <message>" (printf's formats; the line is the script's caller's). */
int worker_lua_error(lua_State *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* journey_lua.c: the user a host function runs for (raises outside a step's function). */
worker_user_t *worker_lua_current(lua_State *L, const char *fn);
/* The sleep timer fired (its data is the user). */
void worker_lua_on_sleep(uv_timer_t *t);

#endif
