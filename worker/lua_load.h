/* lua_load.h — control thread: a run's script sandboxes, one per engine, loaded on libuv's
 * thread pool before the engines start the run, so that no engine's loop (and none of its
 * other runs' users) waits while a script's top level runs; RUN_START hands them over. */
#ifndef WORKER_LUA_LOAD_H
#define WORKER_LUA_LOAD_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "journey_lua.h"
#include "plan.h"

typedef struct worker_lua_load_s worker_lua_load_t;

/* On the loop, once the pool is done with the load (loaded, or cancelled: then it holds
 * none). Always called, exactly once, so the caller may keep what the pool reads (the plan)
 * alive until then. */
typedef void (*worker_lua_loaded_cb)(worker_lua_load_t *l, void *arg);

/* Queues the load of n sandboxes of plan (whose scenario has a script) for run on loop's
 * pool. Returns 0 (OUT *out) or an LC_ error (nothing queued; done is never called). */
int worker_lua_load_start(worker_lua_load_t **out, uv_loop_t *loop, const worker_plan_t *plan,
                          uint64_t run, unsigned n, worker_lua_loaded_cb done, void *arg);

/* True once done was called. */
bool worker_lua_load_ready(const worker_lua_load_t *l);

/* After done: engine i's sandbox, now the caller's (NULL: none was made, or taken already). */
worker_lua_run_t *worker_lua_load_take(worker_lua_load_t *l, unsigned i);

/* Asks the pool not to start a load not yet begun (done then comes with none). */
void worker_lua_load_cancel(worker_lua_load_t *l);

/* After done: frees the load and every sandbox not taken. NULL is ignored. */
void worker_lua_load_free(worker_lua_load_t *l);

#endif
