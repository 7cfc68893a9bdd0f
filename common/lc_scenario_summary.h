/* lc_scenario_summary.h — what a parsed scenario will do, as JSON for validation (POST /api/v1/scenarios/validate, loadctl validate), with an estimate of a worker's memory per idle user. */
#ifndef LC_SCENARIO_SUMMARY_H
#define LC_SCENARIO_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "lc_scenario.h"

/* What one idle user of s holds in a worker's user space, in bytes (the
 * kernel's socket buffers are not counted). An estimate: sizeof-based where
 * the types are visible here, measured constants elsewhere; the unit test
 * keeps `user` next to sizeof(worker_user_t). A part that grows with the
 * responses (a body kept for expect.body_contains) is left out. */
typedef struct lc_idle_user_bytes_s {
    size_t user;      /* worker_user_t with its worker_conn_t (worker/user.h, http_conn.h) */
    size_t allocator; /* malloc's overhead on the user's allocations */
    size_t libuv;     /* libuv's state for the open TCP handle outside the struct */
    size_t tls;       /* an idle TLS connection (https targets; none with an "http2" pool) */
    size_t h2;        /* an idle HTTP/2 session of the user's own ("http2" true, or "auto" as if
                       * the server picked h2; none with a pool): the page its state and
                       * nghttp2's session struct are in (worker/h2_mem.h) */
    size_t journey;   /* journeys: the user's state (position, loop and group frames) and its
                       * session (variable slots, feeder rows), with malloc's overhead; the
                       * values, cookies and rows it holds are data, not counted here */
    size_t lua;       /* scripts: a user's worker_lua_user_t and, in the run's Lua state, its
                       * coroutine parked in sleep or http with its u table (malloc's overhead
                       * included); what its locals and u table hold is data */
    size_t total;
} lc_idle_user_bytes_t;

void lc_scenario_idle_user_bytes(const lc_scenario_t *s, lc_idle_user_bytes_t *out);
/* The constants behind `journey`, for the unit test to hold against the worker's sizeofs. */
size_t lc_scenario_journey_state_bytes(void);
size_t lc_scenario_session_bytes(size_t n_vars, size_t n_feeders);
/* The constants behind `lua`, for test_journey_lua to hold against sizeof(worker_lua_user_t)
 * and the Lua heap a parked user takes, as the sandbox's allocator counts it. */
size_t lc_scenario_lua_user_struct_bytes(void);
size_t lc_scenario_lua_parked_heap_bytes(void);
/* The constant behind `h2`, for test_h2_mem to hold against what an idle session holds. */
size_t lc_scenario_h2_session_bytes(void);

/* The summary, a new reference (NULL when out of memory). Its keys are only
 * ever added to (README, "Validating a scenario"):
 *   name, tenant, target: strings
 *   model: "closed" | "open"
 *   users: the users the run holds at most (closed: users, or the stages'
 *          largest; open: max_users)
 *   arrival_rate: requests per second (open), null (closed)
 *   duration_ms, stages: integers (stages: how many)
 *   endpoints: [{name, method, path (the template, unrendered), weight}]
 *   thresholds: ["http_req_duration{endpoint:list} p(95)<500", …]
 *   bytes_per_idle_user: integer (lc_idle_user_bytes_t's total)
 *   bytes_per_idle_user_parts: {user, allocator, libuv, tls, journey, lua, h2} (requests are rendered
 *     into the engine's buffer, so an idle user holds none)
 *   journeys (v2 only): [{name, weight, pacing_ms, requests, lua_steps}]
 *   variables (v2 only): [names]
 *   variables_set_at (v2 only): {name: [{by, path}]}: each variable with the places the
 *     dataflow check counts as setting it (by "set", "extract", "foreach" or "lua", path the
 *     JSON path of the member), and each feeder column "feeder.column" (by "feeder", path
 *     "feeders.<name>")
 *   feeders (v2 only): [{name, rows, columns: [names], mode, order, on_exhausted,
 *     secret: [the columns traces redact]}]
 *   script (with a script only): {bytes, modules: [names], lua_steps: [{step, function,
 *           endpoint}]}; endpoints only lua steps count under have the path "(script)" */
json_t *lc_scenario_summary(const lc_scenario_t *s);

/* What the fleet can grant a run now, as a master sees it: the connected workers and the sum
 * of their capacities in users (known false: this master cannot tell, e.g. not the leader,
 * which alone has the workers). */
typedef struct lc_fleet_grant_s {
    bool known;
    uint32_t workers;
    uint64_t users;
} lc_fleet_grant_t;

/* The summary's "capacity" (added by the master that answers), a new reference or NULL:
 *   {known, workers, users, bytes: users x bytes_per_idle_user, users_asked: the summary's
 *    users, bytes_asked: users_asked x bytes_per_idle_user,
 *    fits: users_asked <= users (null when not known)} */
json_t *lc_scenario_capacity_json(const lc_scenario_t *s, const lc_fleet_grant_t *g);

#endif
