/* lc_lua_sandbox.c — the sandboxed state's lifecycle, its allocator (the memory cap), its count
 * hook (the CPU deadline and the C stack bound) and the protected ways into tenant code. */
#include "lc_lua_sandbox.h"

#include <assert.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <luajit.h>

#include "lc_clock.h"
#include "lc_err.h"
#include "lc_lua_internal.h"

/* VM instructions between two looks at the clock: ~1-5 us of interpreted code, so the
 * deadline is overrun by at most that (plus one builtin call, see README). */
#define HOOK_EVERY 1000

/* The collector's pause: a new cycle starts as soon as one ends (LuaJIT's default, 200, waits
 * until the heap has doubled). Idle scripted users hold what they parked with, and the
 * garbage of the requests before: at 200, 5,000 of them parked in sleep() took ~2.6 KB each
 * of RSS beyond a declarative user's for ~1.4 KB of live heap; at 100, ~1.6 KB. With a run's
 * small live heap (tens of users) the extra marking did not show in CPU per request. */
#define GC_PAUSE 100

/* Set once a LuaJIT build refused lua_newstate with our allocator (non-GC64 x86-64 builds
 * do): later states go straight to the wrapped path instead of printing its complaint. */
static atomic_int custom_alloc_refused;

/* ---- memory ------------------------------------------------------------------------- */

/* Every allocation of the state. Growing past the cap fails, which LuaJIT raises as "not
 * enough memory" in whatever coroutine is running; shrinking and freeing always succeed. */
static void *lua_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    lc_lua_t *s = ud;
    size_t old = ptr != NULL ? osize : 0;
    if (nsize == 0) {
        if (ptr != NULL) {
            assert(s->used >= old);
            s->used -= old;
            s->blocks -= s->blocks > 0; /* wrapped: the blocks made before are not counted */
            if (s->inner != NULL)
                s->inner(s->inner_ud, ptr, osize, 0);
            else
                free(ptr);
        }
        return NULL;
    }
    if (nsize > old && nsize - old > s->cap - s->used) {
        s->refused++;
        return NULL;
    }
    void *p = s->inner != NULL ? s->inner(s->inner_ud, ptr, osize, nsize) : realloc(ptr, nsize);
    if (p == NULL)
        return NULL;
    s->used = s->used - old + nsize;
    s->blocks += ptr == NULL;
    if (s->used > s->peak)
        s->peak = s->used;
    return p;
}

/* Ours where LuaJIT takes it; else luaL_newstate's allocator with ours wrapped around it,
 * so the count and the cap are exact either way. */
static lua_State *open_state(lc_lua_t *s, int force_wrapped)
{
    lua_State *L = NULL;
    if (!force_wrapped && !atomic_load(&custom_alloc_refused)) {
        L = lua_newstate(lua_alloc, s);
        if (L != NULL)
            return L;
        atomic_store(&custom_alloc_refused, 1);
    }
    L = luaL_newstate();
    if (L == NULL)
        return NULL;
    s->inner = lua_getallocf(L, &s->inner_ud);
    s->used = s->peak = (size_t)lua_gc(L, LUA_GCCOUNT, 0) * 1024u + (size_t)lua_gc(L, LUA_GCCOUNTB, 0);
    s->wrapped = 1;
    lua_setallocf(L, lua_alloc, s);
    return L;
}

static int cp_collect(lua_State *L)
{
    lua_gc(L, LUA_GCCOLLECT, 0);
    return 0;
}

void lc_lua_collect(lc_lua_t *s)
{
    assert(s != NULL && s->running == NULL);
    lc_lua_call(s, cp_collect, NULL);
    s->used_after_gc = s->used;
    s->refused_at_gc = s->refused;
}

/* LuaJIT has no emergency collection: near the cap, garbage could refuse allocations that
 * live data would not. A full collection when the state is 3/4 full and has grown by 1/8
 * of the cap since the last one keeps that from failing users, without thrashing. */
static void relieve_pressure(lc_lua_t *s)
{
    if (s->used > s->cap / 4 * 3 && s->used > s->used_after_gc + s->cap / 8)
        lc_lua_collect(s);
}

/* ---- limits ------------------------------------------------------------------------- */

lc_lua_t *lc_lua_from(lua_State *L)
{
    void *ud = NULL;
    lua_getallocf(L, &ud);
    return ud;
}

void *lc_lua_host_ud(const lc_lua_t *s)
{
    assert(s != NULL);
    return s->host_ud;
}

/* " (at script:12)": the innermost Lua function from level up (0 in a hook: the one running)
 * that is the tenant's, not the sandbox's prelude; "" when none is near. Looking further
 * would cost O(depth) per level (lua_getstack walks from the top), O(depth^2) in all. */
#define WHERE_LEVELS 16

static void where(lua_State *L, int level, char *buf, size_t len)
{
    lua_Debug ar;
    buf[0] = '\0';
    for (int last = level + WHERE_LEVELS; level < last && lua_getstack(L, level, &ar); level++) {
        if (!lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0)
            continue;
        if (strcmp(ar.short_src, "sandbox") != 0) {
            snprintf(buf, len, " (at %s:%d)", ar.short_src, ar.currentline);
            return;
        }
    }
}

/* Records why the run is stopping and raises it; pcall/xpcall pass it on (the prelude). */
static int raise_abort(lc_lua_t *s, lua_State *L, int why, int level)
{
    if (s->abort == LC_LUA_ABORT_NONE) {
        char at[128];
        where(L, level, at, sizeof at);
        s->abort = why;
        if (why == LC_LUA_ABORT_DEADLINE) {
            s->deadline_hits++;
            snprintf(s->abort_msg, sizeof s->abort_msg, "script: %s ran more than %g ms of CPU%s%s",
                     s->armed_what, s->armed_us / 1000.0,
                     s->running != NULL ? " without yielding" : "", at);
        } else {
            snprintf(s->abort_msg, sizeof s->abort_msg,
                     "script: more than %zu KiB of C stack: a recursion through string.gsub, "
                     "table.sort, tostring or print callbacks%s",
                     LC_LUA_CSTACK_MAX / 1024, at);
        }
    }
    lua_pushstring(L, s->abort_msg);
    return lua_error(L);
}

int lc_lua_abort(lua_State *L, const char *msg)
{
    lc_lua_t *s = lc_lua_from(L);
    assert(s != NULL && msg != NULL);
    if (s->abort == LC_LUA_ABORT_NONE) {
        s->abort = LC_LUA_ABORT_HOST;
        snprintf(s->abort_msg, sizeof s->abort_msg, "%s", msg);
    }
    return raise_abort(s, L, s->abort, 1);
}

static int check(lc_lua_t *s, lua_State *L, int level)
{
    if (s->abort != LC_LUA_ABORT_NONE)
        return raise_abort(s, L, s->abort, level);
    if (s->armed_until_ns == 0)
        return 0;
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    if (s->cstack_base > here && s->cstack_base - here > LC_LUA_CSTACK_MAX)
        return raise_abort(s, L, LC_LUA_ABORT_CSTACK, level);
    if (lc_mono_ns() >= s->armed_until_ns)
        return raise_abort(s, L, LC_LUA_ABORT_DEADLINE, level);
    return 0;
}

void lc_lua_limits_check(lc_lua_t *s, lua_State *L)
{
    check(s, L, 1);
}

void lc_lua_check_limits(lua_State *L)
{
    check(lc_lua_from(L), L, 1);
}

static void count_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    check(lc_lua_from(L), L, 0);
}

/* Starts the clock for one run of tenant code entered from the caller's frame. */
static void arm(lc_lua_t *s, uint32_t us, const char *what, uintptr_t frame)
{
    s->abort = LC_LUA_ABORT_NONE;
    s->armed_us = us;
    s->armed_what = what;
    s->cstack_base = frame;
    s->armed_until_ns = lc_mono_ns() + (uint64_t)us * 1000u;
}

/* Stops it; returns why the run was unwound (LC_LUA_ABORT_*). */
static int disarm(lc_lua_t *s)
{
    int why = s->abort;
    s->armed_until_ns = 0;
    s->abort = LC_LUA_ABORT_NONE;
    s->running = NULL;
    s->push = NULL;
    s->push_ud = NULL;
    s->push_pending = 0;
    return why;
}

/* ---- errors ------------------------------------------------------------------------- */

static void format_bytes(size_t n, char *buf, size_t len)
{
    if (n % ((size_t)1 << 20) == 0)
        snprintf(buf, len, "%zu MiB", n >> 20);
    else if (n % 1024u == 0)
        snprintf(buf, len, "%zu KiB", n >> 10);
    else
        snprintf(buf, len, "%zu bytes", n);
}

/* The error value at the top of L's stack as "script: ...", without converting it in place
 * (lua_tostring on a number would allocate, here outside any protected call). */
static void error_text(lc_lua_t *s, lua_State *L, int status, uint64_t refused_before,
                       char *errmsg, size_t errlen)
{
    char num[64];
    const char *msg;
    int t = lua_type(L, -1);
    if (t == LUA_TSTRING) {
        msg = lua_tostring(L, -1);
    } else if (t == LUA_TNUMBER) {
        snprintf(num, sizeof num, "%.14g", lua_tonumber(L, -1));
        msg = num;
    } else {
        snprintf(num, sizeof num, "(error object is a %s value)", lua_typename(L, t));
        msg = num;
    }
    if (status == LUA_ERRMEM && s->refused > refused_before) {
        char cap[32];
        format_bytes(s->cap, cap, sizeof cap);
        lc_errf(errmsg, errlen, LC_ENOMEM, "script: not enough memory: the run's scripts are at "
                "their cap of %s per engine thread", cap);
    } else if (strncmp(msg, "script:", 7) == 0) {
        lc_errf(errmsg, errlen, LC_EINVAL, "%s", msg);
    } else {
        lc_errf(errmsg, errlen, LC_EINVAL, "script: %s", msg);
    }
}

static int status_code(int status, int why)
{
    if (why == LC_LUA_ABORT_HOST)
        return LC_EINVAL;
    if (why != LC_LUA_ABORT_NONE)
        return LC_ETOOBIG;
    return status == LUA_ERRMEM ? LC_ENOMEM : LC_EINVAL;
}

/* ---- lifecycle ---------------------------------------------------------------------- */

static int panic(lua_State *L)
{
    /* Every entry is protected, so this is a bug of ours; say what and stop here. */
    fprintf(stderr, "script: unprotected Lua error: %s\n",
            lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "(not a string)");
    abort();
}

static int valid_module_name(const char *name)
{
    size_t n = name != NULL ? strlen(name) : 0;
    if (n == 0 || n > LC_LUA_MODULE_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return 0;
    }
    return 1;
}

/* Source text only: LuaJIT would load a chunk starting with ESC as bytecode, which can
 * break the VM's invariants. */
static int is_bytecode(const char *src, size_t len)
{
    return len > 0 && src[0] == '\033';
}

static int check_modules(const lc_lua_config_t *cfg, char *errmsg, size_t errlen)
{
    if (cfg->n_modules > LC_LUA_MODULES_MAX)
        return lc_errf(errmsg, errlen, LC_EINVAL, "script: %zu modules, more than the %u allowed",
                       cfg->n_modules, LC_LUA_MODULES_MAX);
    for (size_t i = 0; i < cfg->n_modules; i++) {
        const lc_lua_module_t *m = &cfg->modules[i];
        if (!valid_module_name(m->name))
            return lc_errf(errmsg, errlen, LC_EINVAL, "script: modules[%zu]: a name is 1 to %u "
                           "letters, digits, '_', '.' or '-'", i, LC_LUA_MODULE_NAME_MAX);
        if (m->src == NULL && m->len > 0)
            return lc_errf(errmsg, errlen, LC_EINVAL, "script: module %s: no source", m->name);
        if (is_bytecode(m->src, m->len))
            return lc_errf(errmsg, errlen, LC_EINVAL, "script: module %s: bytecode is not "
                           "accepted, only source text", m->name);
        for (size_t j = 0; j < i; j++)
            if (strcmp(cfg->modules[j].name, m->name) == 0)
                return lc_errf(errmsg, errlen, LC_EINVAL, "script: module %s is given twice",
                               m->name);
    }
    return 0;
}

static int check_config(const lc_lua_config_t *cfg, char *errmsg, size_t errlen)
{
    if (cfg->script == NULL && cfg->script_len > 0)
        return lc_errf(errmsg, errlen, LC_EINVAL, "script: no source");
    if (is_bytecode(cfg->script, cfg->script_len))
        return lc_errf(errmsg, errlen, LC_EINVAL, "script: bytecode is not accepted, only "
                       "source text");
    if (cfg->mem_cap != 0 && cfg->mem_cap < LC_LUA_MEM_CAP_MIN)
        return lc_errf(errmsg, errlen, LC_EINVAL, "script: a memory cap of %zu bytes is under "
                       "the %zu minimum", cfg->mem_cap, LC_LUA_MEM_CAP_MIN);
    if (cfg->deadline_us > LC_LUA_DEADLINE_US_MAX)
        return lc_errf(errmsg, errlen, LC_EINVAL, "script: a CPU deadline of %g ms is over the "
                       "%u ms limit", cfg->deadline_us / 1000.0, LC_LUA_DEADLINE_US_MAX / 1000u);
    for (size_t i = 0; i < cfg->n_host; i++)
        if (cfg->host[i].name == NULL || cfg->host[i].fn == NULL)
            return lc_errf(errmsg, errlen, LC_EINVAL, "script: host function %zu has no name "
                           "or no function", i);
    return check_modules(cfg, errmsg, errlen);
}

static char *copy_bytes(const char *src, size_t len)
{
    char *p = malloc(len + 1);
    if (p != NULL) {
        if (len > 0)
            memcpy(p, src, len);
        p[len] = '\0';
    }
    return p;
}

static int copy_modules(lc_lua_t *s, const lc_lua_config_t *cfg, char *errmsg, size_t errlen)
{
    if (cfg->n_modules == 0)
        return 0;
    s->mods = calloc(cfg->n_modules, sizeof *s->mods);
    if (s->mods == NULL)
        return lc_errf(errmsg, errlen, LC_ENOMEM, "script: no memory for the modules");
    for (size_t i = 0; i < cfg->n_modules; i++, s->n_mods++) {
        const lc_lua_module_t *m = &cfg->modules[i];
        s->mods[i].name = copy_bytes(m->name, strlen(m->name));
        s->mods[i].src = copy_bytes(m->src, m->len);
        s->mods[i].len = m->len;
        if (s->mods[i].name == NULL || s->mods[i].src == NULL) {
            s->n_mods++; /* so lc_lua_free frees what this one got */
            return lc_errf(errmsg, errlen, LC_ENOMEM, "script: no memory for the modules");
        }
    }
    return 0;
}

static void apply_config(lc_lua_t *s, const lc_lua_config_t *cfg)
{
    s->cap = cfg->mem_cap != 0 ? cfg->mem_cap : LC_LUA_MEM_CAP_DEFAULT;
    s->deadline_us = cfg->deadline_us != 0 ? cfg->deadline_us : LC_LUA_DEADLINE_US_DEFAULT;
    s->load_deadline_us = cfg->load_deadline_us != 0 ? cfg->load_deadline_us
                                                     : LC_LUA_LOAD_DEADLINE_US_DEFAULT;
    s->log = cfg->log;
    s->log_ud = cfg->log_ud;
    s->log_burst = cfg->log_burst != 0 ? cfg->log_burst : LC_LUA_LOG_BURST_DEFAULT;
    s->log_per_sec = cfg->log_per_sec != 0 ? cfg->log_per_sec : LC_LUA_LOG_PER_SEC_DEFAULT;
    s->log_tokens = s->log_burst;
    s->log_refill_ns = lc_mono_ns();
    s->host_ud = cfg->host_ud;
    s->run_ref = LUA_NOREF;
    s->builtins_ref = LUA_NOREF;
    s->call_ref = LUA_NOREF;
}

/* The script's top level, under the load deadline, in the main thread. */
static int load_script(lc_lua_t *s, const lc_lua_config_t *cfg, char *errmsg, size_t errlen)
{
    lua_State *L = s->L;
    uint64_t refused = s->refused;
    arm(s, s->load_deadline_us, "the script's top level", (uintptr_t)__builtin_frame_address(0));
    int status = luaL_loadbuffer(L, cfg->script != NULL ? cfg->script : "", cfg->script_len,
                                 "=script");
    if (status == 0)
        status = lua_pcall(L, 0, 0, 0);
    int why = disarm(s);
    if (status == 0)
        return 0;
    error_text(s, L, status, refused, errmsg, errlen);
    lua_pop(L, 1);
    return status_code(status, why);
}

/* Every module compiles, required or not (lua_load is protected by itself). */
static int compile_modules(lc_lua_t *s, char *errmsg, size_t errlen)
{
    for (size_t i = 0; i < s->n_mods; i++) {
        char chunk[LC_LUA_MODULE_NAME_MAX + 2];
        snprintf(chunk, sizeof chunk, "=%s", s->mods[i].name);
        uint64_t refused = s->refused;
        int status = luaL_loadbuffer(s->L, s->mods[i].src, s->mods[i].len, chunk);
        if (status != 0)
            error_text(s, s->L, status, refused, errmsg, errlen);
        lua_pop(s->L, 1);
        if (status != 0)
            return status_code(status, LC_LUA_ABORT_NONE);
    }
    return 0;
}

/* The environment needs memory, so it is built in a protected call. */
static int open_env(lc_lua_t *s, const lc_lua_config_t *cfg, char *errmsg, size_t errlen)
{
    uint64_t refused = s->refused;
    int status = lua_cpcall(s->L, lc_lua_env_open, (void *)cfg);
    if (status == 0)
        return 0;
    error_text(s, s->L, status, refused, errmsg, errlen);
    lua_pop(s->L, 1);
    return lc_err_wrap(errmsg, errlen, status == LUA_ERRMEM ? LC_ENOMEM : LC_EINVAL,
                       "script: setting up the sandbox");
}

int lc_lua_new(lc_lua_t **out, const lc_lua_config_t *cfg, char *errmsg, size_t errlen)
{
    assert(out != NULL && cfg != NULL);
    *out = NULL;
    int rv = check_config(cfg, errmsg, errlen);
    if (rv != 0)
        return rv;
    lc_lua_t *s = calloc(1, sizeof *s);
    if (s == NULL)
        return lc_errf(errmsg, errlen, LC_ENOMEM, "script: no memory for a sandbox");
    apply_config(s, cfg);
    rv = copy_modules(s, cfg, errmsg, errlen);
    if (rv != 0)
        goto err_after_alloc;
    s->L = open_state(s, cfg->force_wrapped_alloc);
    if (s->L == NULL) {
        rv = lc_errf(errmsg, errlen, LC_ENOMEM, "script: LuaJIT could not create a state");
        goto err_after_alloc;
    }
    lua_atpanic(s->L, panic);
    luaJIT_setmode(s->L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_OFF); /* a count hook needs it */
    rv = open_env(s, cfg, errmsg, errlen);
    if (rv != 0)
        goto err_after_alloc;
    lua_sethook(s->L, count_hook, LUA_MASKCOUNT, HOOK_EVERY);
    lua_gc(s->L, LUA_GCSETPAUSE, GC_PAUSE);
    rv = compile_modules(s, errmsg, errlen);
    if (rv == 0)
        rv = load_script(s, cfg, errmsg, errlen);
    if (rv != 0)
        goto err_after_alloc;
    s->used_after_gc = s->used;
    *out = s;
    return 0;
err_after_alloc:
    lc_lua_free(s);
    return rv;
}

void lc_lua_free(lc_lua_t *s)
{
    if (s == NULL)
        return;
    assert(s->running == NULL);
    if (s->L != NULL) {
        /* LuaJIT frees its arena at close only when its own allocator is in place. */
        if (s->inner != NULL)
            lua_setallocf(s->L, s->inner, s->inner_ud);
        lua_close(s->L);
    }
    for (size_t i = 0; i < s->n_mods; i++) {
        free(s->mods[i].name);
        free(s->mods[i].src);
    }
    free(s->mods);
    lc_buf_free(&s->scratch);
    lc_buf_free(&s->json_out);
    free(s);
}

/* ---- protected calls ---------------------------------------------------------------- */

typedef struct call_s {
    lua_CFunction fn;
    void *ud;
} call_t;

int lc_lua_call_trampoline(lua_State *L)
{
    const call_t *c = lua_touserdata(L, 1);
    assert(c != NULL && c->fn != NULL);
    lua_pushlightuserdata(L, c->ud);
    lua_replace(L, 1);
    return c->fn(L);
}

int lc_lua_call(lc_lua_t *s, lua_CFunction fn, void *ud)
{
    assert(s != NULL && fn != NULL);
    if (s->call_ref == LUA_NOREF)
        return lua_cpcall(s->L, fn, ud);
    call_t c = {fn, ud};
    /* The main thread, between calls: its stack has the LUA_MINSTACK slots these take. */
    lua_rawgeti(s->L, LUA_REGISTRYINDEX, s->call_ref);
    lua_pushlightuserdata(s->L, &c);
    return lua_pcall(s->L, 1, 0, 0);
}

/* ---- coroutines --------------------------------------------------------------------- */

typedef struct thread_new_s {
    lua_State *co;
    int ref;
} thread_new_t;

static int cp_thread_new(lua_State *L)
{
    thread_new_t *t = lua_touserdata(L, 1);
    t->co = lua_newthread(L);
    t->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return 0;
}

lua_State *lc_lua_thread_new(lc_lua_t *s, int *ref, char *errmsg, size_t errlen)
{
    assert(s != NULL && ref != NULL && s->running == NULL);
    thread_new_t t = {NULL, LUA_NOREF};
    uint64_t refused = s->refused;
    int status = lc_lua_call(s, cp_thread_new, &t);
    if (status != 0) {
        error_text(s, s->L, status, refused, errmsg, errlen);
        lua_pop(s->L, 1);
        return NULL;
    }
    *ref = t.ref;
    return t.co;
}

void lc_lua_thread_free(lc_lua_t *s, int ref)
{
    assert(s != NULL);
    if (ref == LUA_NOREF || ref == LUA_REFNIL)
        return;
    luaL_unref(s->L, LUA_REGISTRYINDEX, ref); /* writes existing slots: allocates nothing */
    /* A coroutine that failed over the cap holds its garbage until here; LuaJIT collects
     * nothing when an allocation fails, so the others would keep failing without this. */
    if (s->oom_dead > 0 && s->running == NULL) {
        s->oom_dead--;
        lc_lua_collect(s);
    }
}

/* One run of co until it returns, yields or fails, under the step deadline. */
static int run(lc_lua_t *s, lua_State *co, char *errmsg, size_t errlen)
{
    uint64_t refused = s->refused;
    s->running = co;
    arm(s, s->deadline_us, "the step", (uintptr_t)__builtin_frame_address(0));
    int status = lua_resume(co, 0);
    int why = disarm(s);
    int rv = LC_OK;
    if (status == LUA_YIELD) {
        assert(why == LC_LUA_ABORT_NONE);
        rv = LC_EAGAIN;
    } else if (status != 0) {
        error_text(s, co, status, refused, errmsg, errlen);
        rv = status_code(status, why);
    }
    if (status == LUA_ERRMEM)
        s->oom_dead++; /* collected when the engine frees it */
    else
        relieve_pressure(s);
    return rv;
}

static int runnable(lc_lua_t *s, lua_State *co, int want, char *errmsg, size_t errlen)
{
    if (s->running != NULL)
        return lc_errf(errmsg, errlen, LC_ESTATE, "script: a coroutine is already running "
                       "(a start or resume from inside a host function?)");
    int status = lua_status(co);
    if (status == want)
        return 0;
    if (status == LUA_YIELD)
        return lc_errf(errmsg, errlen, LC_ESTATE, "script: the coroutine is suspended: resume "
                       "it or free it");
    if (status == 0)
        return lc_errf(errmsg, errlen, LC_ESTATE, "script: the coroutine is not suspended");
    return lc_errf(errmsg, errlen, LC_ESTATE, "script: the coroutine died of an error: free it");
}

int lc_lua_start(lc_lua_t *s, lua_State *co, const char *fn, lc_lua_push_cb push, void *ud,
                 char *errmsg, size_t errlen)
{
    assert(s != NULL && co != NULL && fn != NULL);
    int rv = runnable(s, co, 0, errmsg, errlen);
    if (rv != 0)
        return rv;
    int type = lc_lua_global_type(s, fn);
    if (type == LUA_TNONE)
        return lc_errf(errmsg, errlen, LC_ENOMEM, "script: no memory to look up %s", fn);
    if (type == LUA_TNIL)
        return lc_errf(errmsg, errlen, LC_ENOTFOUND, "script: no function named %s", fn);
    if (type != LUA_TFUNCTION)
        return lc_errf(errmsg, errlen, LC_ENOTFOUND, "script: %s is a %s, not a function", fn,
                       lua_typename(co, type));
    /* A fresh or finished coroutine has free stack slots: this push cannot allocate. */
    lua_settop(co, 0);
    lua_rawgeti(co, LUA_REGISTRYINDEX, s->run_ref);
    s->start_fn = fn;
    s->push = push;
    s->push_ud = ud;
    return run(s, co, errmsg, errlen);
}

int lc_lua_resume(lc_lua_t *s, lua_State *co, lc_lua_push_cb push, void *ud, char *errmsg,
                  size_t errlen)
{
    assert(s != NULL && co != NULL);
    int rv = runnable(s, co, LUA_YIELD, errmsg, errlen);
    if (rv != 0)
        return rv;
    s->push = push;
    s->push_ud = ud;
    s->push_pending = 1;
    return run(s, co, errmsg, errlen);
}

/* ---- globals ------------------------------------------------------------------------ */

typedef struct global_type_s {
    const char *name;
    int type;
} global_type_t;

static int cp_global_type(lua_State *L)
{
    global_type_t *g = lua_touserdata(L, 1);
    lua_pushstring(L, g->name);
    lua_rawget(L, LUA_GLOBALSINDEX);
    g->type = lua_type(L, -1);
    return 0;
}

int lc_lua_global_type(lc_lua_t *s, const char *name)
{
    assert(s != NULL && name != NULL);
    global_type_t g = {name, LUA_TNONE};
    if (lc_lua_call(s, cp_global_type, &g) != 0) {
        lua_pop(s->L, 1);
        return LUA_TNONE;
    }
    return g.type;
}

typedef struct fn_list_s {
    char *buf;
    size_t len, max, count;
} fn_list_t;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Whether the global at the top (key below it) is the sandbox's, as it made it. */
static int builtin(lua_State *L, int builtins)
{
    lua_pushvalue(L, -2);
    lua_rawget(L, builtins);
    int same = lua_rawequal(L, -1, -2);
    lua_pop(L, 1);
    return same;
}

/* Lists the script's function names (the first 128 met), sorted in C: no tenant code runs. */
static int cp_global_functions(lua_State *L)
{
    fn_list_t *f = lua_touserdata(L, 1);
    lc_lua_t *s = lc_lua_from(L);
    const char *names[128];
    size_t n = 0;
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->builtins_ref);
    int builtins = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, LUA_GLOBALSINDEX) != 0) {
        if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TFUNCTION &&
            !builtin(L, builtins)) {
            if (n < sizeof names / sizeof names[0])
                names[n] = lua_tostring(L, -2); /* the key stays referenced by _G */
            n += n < sizeof names / sizeof names[0];
            f->count++;
        }
        lua_pop(L, 1);
    }
    qsort(names, n, sizeof names[0], cmp_str);
    size_t at = 0;
    f->buf[0] = '\0';
    for (size_t i = 0; i < n && i < f->max && at < f->len; i++)
        at += (size_t)snprintf(f->buf + at, f->len - at, "%s%s", i > 0 ? ", " : "", names[i]);
    return 0;
}

size_t lc_lua_global_functions(lc_lua_t *s, char *buf, size_t len, size_t max)
{
    assert(s != NULL && buf != NULL && len > 0);
    fn_list_t f = {buf, len, max, 0};
    if (lc_lua_call(s, cp_global_functions, &f) != 0) {
        lua_pop(s->L, 1);
        buf[0] = '\0';
    }
    return f.count;
}

void lc_lua_stats(const lc_lua_t *s, lc_lua_stats_t *out)
{
    assert(s != NULL && out != NULL);
    *out = (lc_lua_stats_t){
        .mem_used = s->used,
        .mem_blocks = s->blocks,
        .mem_peak = s->peak,
        .mem_cap = s->cap,
        .mem_refused = s->refused,
        .deadline_hits = s->deadline_hits,
        .log_lines = s->log_lines,
        .log_dropped = s->log_dropped,
        .wrapped_alloc = s->wrapped,
    };
}
