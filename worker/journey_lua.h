/* journey_lua.h — engine thread: lua steps. One sandboxed Lua state per run on each engine,
 * one coroutine per user that reaches a lua step; a step's function yields to the loop in
 * http.get/post/..., sleep, and resumes when the answer or the timer is in. */
#ifndef WORKER_JOURNEY_LUA_H
#define WORKER_JOURNEY_LUA_H

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"
#include "http_conn.h"
#include "user.h"

typedef struct worker_lua_run_s worker_lua_run_t;

/* Any thread: the run's sandbox for one engine (pl->scenario.script != NULL), its top level
 * run once here (at most the sandbox's 50 ms load deadline). The control thread loads one per
 * engine on libuv's pool before it starts the run, so that no engine's loop, and none of its
 * other runs' users, waits for it. The state is used by one thread at a time: whoever holds
 * the pointer (the mailbox hands it over). When it cannot be made, that is logged, *out holds
 * no state and every lua step of the run fails as a script error. Returns 0 (OUT *out) or
 * LC_ENOMEM. */
int worker_lua_run_load(const worker_plan_t *pl, uint64_t run, worker_lua_run_t **out);
/* Engine thread: r (of lr's plan, without a sandbox yet) takes the loaded sandbox. */
void worker_lua_run_attach(engine_run_t *r, worker_lua_run_t *lr);
/* Any thread: a loaded sandbox that no run took (a dropped message, a run stopped while it
 * loaded). NULL is ignored. */
void worker_lua_run_free(worker_lua_run_t *lr);
/* Engine thread: load and attach in one, on the loop: what an engine does when the control
 * thread could not load the sandbox for it (and what unit tests use). */
int worker_lua_run_open(engine_run_t *r);
/* After the run's last user is freed. */
void worker_lua_run_close(engine_run_t *r);
#define WORKER_LUA_QUIET_MS 1000
/* Engine thread, on its tick (now_ms: the loop's time): once no coroutine of the run has run
 * for WORKER_LUA_QUIET_MS, one full collection. LuaJIT collects in steps paid for by new
 * allocations, so garbage made just before every user parked (in sleep(), say) would
 * otherwise stay for as long as they wait. NULL is ignored. */
void worker_lua_run_tick(worker_lua_run_t *lr, uint64_t now_ms);

/* LC_OP_LUA: starts lua step `step` of the program in u's coroutine. True when the user goes
 * on with its next op at once (the function returned, or failed with on_error continue);
 * false when it waits (http, sleep) or its iteration ended. */
bool worker_journey_lua(worker_user_t *u, uint32_t step);
/* The script's request in flight: whether it is a HEAD, and its timeout (for
 * worker_journey_out, when a connection or the pool is ready to send it). */
void worker_lua_out(const worker_user_t *u, bool *head, uint32_t *timeout_ms);
/* The script's request ended with res (through worker_journey_done). */
void worker_lua_done(worker_user_t *u, const worker_conn_result_t *res);
/* The user winds down (on_stop, or its end): a function waiting in http or sleep is dropped,
 * so on_stop's lua steps start afresh. */
void worker_lua_abandon(worker_user_t *u);
/* With the user: its coroutine and its u table. */
void worker_lua_user_free(worker_user_t *u);

#endif
