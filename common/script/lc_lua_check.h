/* lc_lua_check.h — the master's check of a run's script before it accepts the run: loaded in
 * the workers' sandbox with http disabled, errors reported with their line. */
#ifndef LC_LUA_CHECK_H
#define LC_LUA_CHECK_H

#include <stddef.h>

#include "lc_lua_sandbox.h"
#include "lc_scenario.h"

#define LC_LUA_CHECK_DEADLINE_US 50000u /* for the top level */

/* A function a journey step names ({"lua": "checkout"}), and where it is named. */
typedef struct lc_lua_fn_ref_s {
    const char *where; /* "journeys[0].steps[2].lua", or NULL */
    const char *name;
} lc_lua_fn_ref_t;

/* Compiles the script and every module, runs the top level (with what it requires) under
 * LC_LUA_CHECK_DEADLINE_US and the default memory cap, then looks up each function.
 * Returns 0, or LC_EINVAL / LC_ETOOBIG / LC_ENOMEM with errmsg reading e.g.
 *   script:12: '=' expected near 'x'
 *   script: util:3: attempt to call global 'foo' (a nil value)
 *   script: journeys[0].steps[2].lua: no function named checkout (the script's global
 *   functions: browse, login) */
int lc_lua_check(const char *script, size_t len, const lc_lua_module_t *modules, size_t n,
                 const lc_lua_fn_ref_t *functions, size_t n_functions, char *errmsg,
                 size_t errlen);

/* The scenario's modules as the sandbox takes them: a malloc'd array (free it) pointing into
 * sc, or NULL with *n = 0 when it has none. LC_ENOMEM or 0. */
int lc_lua_scenario_modules(const lc_scenario_t *sc, lc_lua_module_t **out, size_t *n);

/* lc_lua_check of a parsed scenario's script with the functions its lua steps name (the
 * master before it accepts a run, the worker before it runs one). 0 when sc has no script. */
int lc_lua_check_scenario(const lc_scenario_t *sc, char *errmsg, size_t errlen);

#endif
