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

/* The run's sandbox on this engine (r->plan->scenario.script != NULL): the script's top level
 * runs once here (at most the sandbox's 50 ms load deadline). When it cannot be made, that is
 * logged and every lua step of the run fails as a script error. Returns 0 or LC_ENOMEM. */
int worker_lua_run_open(engine_run_t *r);
/* After the run's last user is freed. */
void worker_lua_run_close(engine_run_t *r);

/* LC_OP_LUA: starts lua step `step` of the program in u's coroutine. True when the user goes
 * on with its next op at once (the function returned, or failed with on_error continue);
 * false when it waits (http, sleep) or its iteration ended. */
bool worker_journey_lua(worker_user_t *u, uint32_t step);
/* The connection is ready for the script's request (user.c, through worker_journey_send). */
void worker_lua_send(worker_user_t *u);
/* The script's request ended with res (through worker_journey_done). */
void worker_lua_done(worker_user_t *u, const worker_conn_result_t *res);
/* The user winds down (on_stop, or its end): a function waiting in http or sleep is dropped,
 * so on_stop's lua steps start afresh. */
void worker_lua_abandon(worker_user_t *u);
/* With the user: its coroutine and its u table. */
void worker_lua_user_free(worker_user_t *u);

#endif
