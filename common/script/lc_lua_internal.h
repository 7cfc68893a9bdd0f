/* lc_lua_internal.h — what the sandbox's own files share (the state behind lc_lua_t and the
 * limit checks); the engine uses lc_lua_sandbox.h only. */
#ifndef LC_LUA_INTERNAL_H
#define LC_LUA_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <lua.h>

#include "lc_buf.h"
#include "lc_lua_sandbox.h"

/* Bytes one call of sha256, hmac_sha256 or base64 may take: a digest is one C call the count
 * hook cannot interrupt, and 8 MiB hash in ~4 ms here. */
#define LC_LUA_LIB_BYTES_MAX (8u << 20)

/* Why the running start/resume is being unwound; such an error cannot be caught by the
 * script (pcall and xpcall pass it on). */
enum { LC_LUA_ABORT_NONE = 0, LC_LUA_ABORT_DEADLINE, LC_LUA_ABORT_CSTACK, LC_LUA_ABORT_HOST };

typedef struct lc_lua_mod_s {
    char *name;
    char *src;
    size_t len;
} lc_lua_mod_t;

struct lc_lua_s {
    /* private: the sandbox's files */
    lua_State *L;
    /* memory: every allocation passes through lua_alloc (ours or LuaJIT's, wrapped) */
    size_t used, peak, cap;
    size_t blocks;               /* allocations live (malloc's overhead is per block) */
    size_t used_after_gc;        /* after the last full collection we ran */
    uint64_t refused_at_gc;      /* refused, then: more since means garbage may block users */
    unsigned oom_dead;           /* coroutines dead over the cap, not freed yet */
    lua_Alloc inner;             /* wrapped allocator, NULL: the C library's */
    void *inner_ud;
    uint64_t refused;
    /* the deadline: armed while tenant code runs */
    uint64_t armed_until_ns;     /* 0: not armed */
    uint32_t armed_us;           /* the budget it was armed with, for the message */
    const char *armed_what;      /* "the step", "the script's top level" */
    uintptr_t cstack_base;       /* frame address where the run entered Lua */
    int abort;                   /* LC_LUA_ABORT_* */
    char abort_msg[512];
    uint32_t deadline_us, load_deadline_us;
    uint64_t deadline_hits;
    lua_State *running;          /* the coroutine being started or resumed */
    /* the engine */
    void *host_ud;
    lc_lua_push_cb push;         /* what the next take()/args() pushes */
    void *push_ud;
    int push_pending;            /* set by lc_lua_resume, consumed by the yielding wrapper */
    const char *start_fn;        /* the function lc_lua_start runs */
    int run_ref;                 /* registry: the body every coroutine starts with */
    int builtins_ref;            /* registry: the sandbox's own globals, name -> value */
    int call_ref;                /* registry: lc_lua_call_trampoline (see lc_lua_call) */
    /* math.random */
    uint64_t rng;
    /* print()/log() */
    lc_lua_log_cb log;
    void *log_ud;
    double log_tokens;
    uint64_t log_refill_ns;
    uint32_t log_burst, log_per_sec;
    uint64_t log_lines, log_dropped, log_unreported;
    /* json.encode/decode: C buffers the sandbox owns, so an error raised midway leaks nothing */
    lc_buf_t scratch, json_out;
    /* require() */
    lc_lua_mod_t *mods;
    size_t n_mods;
    int wrapped;
};

/* Raises the pending limit error when the deadline has passed or the C stack is deeper
 * than LC_LUA_CSTACK_MAX; functions that loop or recurse in C call it as they go. */
void lc_lua_limits_check(lc_lua_t *s, lua_State *L);

/* The sandbox of L (from the allocator's userdata: no lookup). */
lc_lua_t *lc_lua_self(lua_State *L);

/* lua_cpcall(s->L, fn, ud) without its allocation (LuaJIT makes a C closure per call): fn
 * runs protected with ud as a light userdata at index 1, through the trampoline the
 * environment anchored (lua_cpcall itself until it has). Returns lua_pcall's status. */
int lc_lua_call(lc_lua_t *s, lua_CFunction fn, void *ud);
int lc_lua_call_trampoline(lua_State *L);

/* Builds the globals: the allowed libraries, the wrappers, print, random, require, the host
 * functions. Runs in a protected call on s->L with cfg on the stack as a light userdata. */
int lc_lua_env_open(lua_State *L);

/* Sets json (json.encode, json.decode, json.null) in the globals. */
void lc_lua_json_open(lua_State *L);
/* Sets sha256, hmac_sha256, base64, uuid and time in the globals. */
void lc_lua_lib_open(lua_State *L);
/* luaL_error with printf's formats (Lua's own have no %zu or %u): the caller's line first. */
int lc_lua_errorf(lua_State *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Frees a scratch buffer that grew past 64 KiB (a big document should not stay held). */
void lc_lua_scratch_trim(lc_buf_t *b);

/* Replaces string.find/match/gmatch/gsub (table at the top of L's stack) with versions
 * that count their steps against the deadline. */
void lc_lua_pattern_open(lua_State *L);

#endif
