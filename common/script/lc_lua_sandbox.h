/* lc_lua_sandbox.h — a sandboxed LuaJIT state for one run on one engine thread, and the
 * coroutines (one per scripted user) that run in it under a memory cap and a CPU deadline. */
#ifndef LC_LUA_SANDBOX_H
#define LC_LUA_SANDBOX_H

#include <stddef.h>
#include <stdint.h>

#include <lua.h>

#define LC_LUA_MEM_CAP_DEFAULT ((size_t)64 << 20) /* bytes per state: per run per engine */
#define LC_LUA_MEM_CAP_MIN ((size_t)256 << 10)
#define LC_LUA_DEADLINE_US_DEFAULT 2000u /* per resume */
#define LC_LUA_DEADLINE_US_MAX 50000u
#define LC_LUA_LOAD_DEADLINE_US_DEFAULT 50000u /* the top level, with the modules it requires */
#define LC_LUA_LOG_BURST_DEFAULT 20u
#define LC_LUA_LOG_PER_SEC_DEFAULT 10u
#define LC_LUA_LOG_LINE_MAX 512u /* longer print() lines are cut */
#define LC_LUA_CSTACK_MAX ((size_t)1 << 20) /* C stack a resume may use (gsub callbacks...) */
#define LC_LUA_MODULES_MAX 64u
#define LC_LUA_MODULE_NAME_MAX 64u
#define LC_LUA_JSON_DEPTH_MAX 64        /* arrays and objects nested, encode and decode */
#define LC_LUA_JSON_BYTES_MAX (8u << 20) /* a text json.decode reads or json.encode writes */

typedef struct lc_lua_s lc_lua_t;

/* One of the scenario's modules: require(name) runs src once and caches its result. */
typedef struct lc_lua_module_s {
    const char *name; /* 1..LC_LUA_MODULE_NAME_MAX of [A-Za-z0-9_.-] */
    const char *src;  /* Lua source text; bytecode is refused */
    size_t len;
} lc_lua_module_t;

/* One print()/log() line, already rate limited and cut to LC_LUA_LOG_LINE_MAX; called inside
 * the script's run, so it must not call back into the sandbox. */
typedef void (*lc_lua_log_cb)(void *ud, const char *line, size_t len);

/* Pushes the values a coroutine receives when it is started or resumed (onto co, inside
 * the coroutine's protected run, so raising or running out of memory here is a script
 * error like any other); returns how many it pushed. */
typedef int (*lc_lua_push_cb)(lua_State *co, void *ud);

/* A host function flagged YIELDS ends with `return lua_yield(L, 0)` (or raises); the engine
 * later calls lc_lua_resume with a push callback, and what that pushes is what the call
 * returns to the script. Unflagged functions return normally. */
enum { LC_LUA_HOST_YIELDS = 1u, LC_LUA_HOST_PRIVATE = 2u };

typedef struct lc_lua_host_fn_s {
    const char *ns;   /* global table it goes in ("http"), created if absent; NULL: a global */
    const char *name; /* "get" */
    lua_CFunction fn; /* lc_lua_from(L) gives the sandbox, lc_lua_host_ud its host_ud */
    unsigned flags;   /* LC_LUA_HOST_* */
} lc_lua_host_fn_t;

/* Everything is copied by lc_lua_new; zeroes mean the defaults above. */
typedef struct lc_lua_config_s {
    const char *script; /* the scenario's script (chunk name "script") */
    size_t script_len;
    const lc_lua_module_t *modules;
    size_t n_modules;
    size_t mem_cap;            /* bytes the state may hold, LC_LUA_MEM_CAP_MIN or more */
    uint32_t deadline_us;      /* per start/resume, at most LC_LUA_DEADLINE_US_MAX */
    uint32_t load_deadline_us; /* the top level when loading */
    uint64_t seed;             /* math.random's sequence; the same seed, the same numbers */
    lc_lua_log_cb log;         /* NULL: print() lines are counted and dropped */
    void *log_ud;
    uint32_t log_burst, log_per_sec; /* token bucket for print()/log() lines */
    /* The engine's functions (http.get, sleep, ...). Without one in the "http" namespace,
     * every http.* is a function raising "http is not available while the master checks the
     * script" (the master's check passes none). */
    const lc_lua_host_fn_t *host;
    size_t n_host;
    void *host_ud;
    /* Trusted Lua (the engine's: chunk "sandbox", so errors point at the script's line, not
     * here) run once before the script, with a table of the PRIVATE host functions (name ->
     * function) as its argument: for globals that must be Lua to yield through (group).
     * Globals it sets count as the sandbox's own. NULL: none. */
    const char *host_prelude;
    /* Tests: 1 wraps LuaJIT's own allocator (the path for builds that refuse lua_newstate
     * with ours) even where ours is accepted. */
    int force_wrapped_alloc;
} lc_lua_config_t;

typedef struct lc_lua_stats_s {
    size_t mem_used, mem_peak, mem_cap; /* bytes, counted by the allocator */
    size_t mem_blocks;                  /* allocations live: each has malloc's overhead too */
    uint64_t mem_refused;               /* allocations refused at the cap */
    uint64_t deadline_hits;             /* runs stopped at the CPU deadline */
    uint64_t log_lines, log_dropped;    /* print()/log() lines passed on / over the rate */
    int wrapped_alloc;                  /* 1: LuaJIT's allocator wrapped (see README) */
} lc_lua_stats_t;

/* Creates the sandbox and runs the script's top level (and what it requires) under the
 * load deadline. Returns 0 and OUT *out, or LC_EINVAL (bad config, syntax or runtime error:
 * errmsg reads "script:12: '=' expected near 'x'"), LC_ETOOBIG (the top level ran past its
 * deadline) or LC_ENOMEM (over the cap, or no memory). */
int lc_lua_new(lc_lua_t **out, const lc_lua_config_t *cfg, char *errmsg, size_t errlen);

/* Closes the state and everything in it (coroutines included). NULL is ignored. */
void lc_lua_free(lc_lua_t *s);

/* A new coroutine, anchored in the registry until lc_lua_thread_free(s, *ref). Returns NULL
 * (errmsg says why: over the memory cap) or the coroutine; OUT: *ref. */
lua_State *lc_lua_thread_new(lc_lua_t *s, int *ref, char *errmsg, size_t errlen);

/* Releases the coroutine; the GC reclaims it. Not while it runs. After a coroutine died over
 * the memory cap, this is when its memory is collected. */
void lc_lua_thread_free(lc_lua_t *s, int ref);

/* Starts the global function fn in co (new, or finished with LC_OK before) with the values
 * push pushes (push may be NULL), under the deadline. Returns:
 *   LC_OK      fn returned; its results are left on co's stack until the next start
 *   LC_EAGAIN  co yielded in a host function; call lc_lua_resume when it is due
 *   LC_EINVAL  a script error ("script: script:12: attempt to index a nil value")
 *   LC_ENOMEM  over the memory cap        LC_ETOOBIG  past the CPU deadline or the C stack
 *   LC_ENOTFOUND  no global function fn (co is untouched)
 *   LC_ESTATE  co is suspended, dead or running
 * After an error co is dead: free it. The other coroutines are unaffected. */
int lc_lua_start(lc_lua_t *s, lua_State *co, const char *fn, lc_lua_push_cb push, void *ud,
                 char *errmsg, size_t errlen);

/* Resumes co, suspended in a YIELDS host function, which returns what push pushes. The
 * same results as lc_lua_start. Must not be called from inside a host function. */
int lc_lua_resume(lc_lua_t *s, lua_State *co, lc_lua_push_cb push, void *ud, char *errmsg,
                  size_t errlen);

/* In a host function: raises msg as an error the script cannot catch (pcall and xpcall pass
 * it on, as they do the deadline); the start or resume then returns LC_EINVAL with errmsg
 * "script: <msg>". For fail(): it ends the step whatever the script wraps it in. */
int lc_lua_abort(lua_State *L, const char *msg);

/* In a host function that worked long in C (a regex over a big body): raises the deadline's
 * error when it has passed, as the count hook would at the next instruction. */
void lc_lua_check_limits(lua_State *L);

/* Decodes text as JSON and pushes the value (tables for objects and arrays, json.null for
 * null), as json.decode does; raises "json.decode: ..." on bad or oversized input. Only
 * inside a run (a host function, a push callback). */
int lc_lua_json_push(lua_State *L, const char *text, size_t len);

/* Pushes the value at idx as JSON text, as json.encode does (raises "json.encode: ..."). */
int lc_lua_json_encode(lua_State *L, int idx);

/* math.random's generator: the state a seed starts it in, and a swap of the state in use
 * (the engine keeps one per user and swaps it in around each start and resume, so a user's
 * numbers depend on its seed only). Returns the state that was in use. */
uint64_t lc_lua_rng_seed(uint64_t seed);
uint64_t lc_lua_rng_swap(lc_lua_t *s, uint64_t state);

/* In a host function: the sandbox L belongs to, and the config's host_ud. */
lc_lua_t *lc_lua_from(lua_State *L);
void *lc_lua_host_ud(const lc_lua_t *s);

/* The type of global name (LUA_TFUNCTION, LUA_TNIL, ...), read raw (no metamethods). */
int lc_lua_global_type(lc_lua_t *s, const char *name);

/* Up to max names of the script's global functions (not the sandbox's own), sorted, joined
 * by ", " into buf; returns how many there are. For "no function named x (...: a, b)". */
size_t lc_lua_global_functions(lc_lua_t *s, char *buf, size_t len, size_t max);

/* A full garbage collection (outside any run); the engine may call it when idle. */
void lc_lua_collect(lc_lua_t *s);

void lc_lua_stats(const lc_lua_t *s, lc_lua_stats_t *out);

#endif
