/* lc_lua_env.c — the sandbox's globals: which libraries and functions a script sees, and the
 * replacements (print, math.random, collectgarbage, require, pcall...) that keep it inside. */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lualib.h>

#include "lc_clock.h"
#include "lc_lua_internal.h"
#include "lc_rng.h"

/* What stays of each library; everything else is removed (an allowlist, so a LuaJIT that
 * adds a function does not add it to the sandbox). pcall, xpcall, tostring, print, require,
 * collectgarbage and math.random(seed) are ours, set after. */
static const char *const keep_base[] = {
    "assert", "error", "getmetatable", "ipairs", "next", "pairs", "rawequal", "rawget",
    "rawset", "select", "setmetatable", "tonumber", "type", "unpack", "_G", "_VERSION",
    "string", "table", "math", "bit", NULL};
static const char *const keep_string[] = {"byte", "char", "find", "format", "gmatch", "gsub",
                                          "len", "lower", "match", "rep", "reverse", "sub",
                                          "upper", NULL};
static const char *const keep_table[] = {"concat", "insert", "maxn", "remove", "sort", NULL};
static const char *const keep_math[] = {
    "abs", "acos", "asin", "atan", "atan2", "ceil", "cos", "cosh", "deg", "exp", "floor",
    "fmod", "frexp", "huge", "ldexp", "log", "log10", "max", "min", "modf", "pi", "pow",
    "rad", "sin", "sinh", "sqrt", "tan", "tanh", NULL};
static const char *const keep_bit[] = {"arshift", "band", "bnot", "bor", "bswap", "bxor",
                                       "lshift", "rol", "ror", "rshift", "tobit", "tohex",
                                       NULL};

/* Trusted Lua, run before any tenant code with the originals as arguments (so it depends on
 * no global a script could change). Written in Lua because only Lua frames let a coroutine
 * yield through them: http.get inside a pcall must still work.
 * - pcall/xpcall pass on the sandbox's limit errors: a script cannot catch its deadline;
 *   after a memory error they collect, so a script that catches one can go on. A limit error
 *   raised by the count hook would run xpcall's handler with the hook disabled (LuaJIT calls
 *   it before unwinding the hook), so the script's handler is skipped for those.
 * - tostring is a Lua function so `__tostring = tostring` loops through the VM, where the
 *   count hook sees it (LuaJIT's fast function would loop without executing a bytecode).
 * - table.sort always gets a Lua comparator, for the same reason (LuaJIT sorts in C).
 * - run is every coroutine's body; yielding wraps host functions that yield. */
static const char prelude[] =
    "local pcall0, xpcall0, tostring0, sort0, error0, aborting, relieve, pick, args, take = ...\n"
    "local function pass(ok, ...)\n"
    "  if not ok then\n"
    "    local m = aborting()\n"
    "    if m then error0(m, 0) end\n"
    "    relieve()\n"
    "  end\n"
    "  return ok, ...\n"
    "end\n"
    "local function lt(a, b) return a < b end\n"
    "local w = {}\n"
    "function w.pcall(f, ...) return pass(pcall0(f, ...)) end\n"
    "function w.xpcall(f, h, ...)\n"
    "  return pass(xpcall0(f, function(m) if aborting() then return m end return h(m) end, ...))\n"
    "end\n"
    "function w.tostring(...) return tostring0(...) end\n"
    "function w.sort(t, cmp) return sort0(t, cmp or lt) end\n"
    "function w.run() local f = pick() return f(args()) end\n"
    "function w.yielding(fn) return function(...) return take(fn(...)) end end\n"
    "return w\n";

static int l_aborting(lua_State *L)
{
    lc_lua_t *s = lc_lua_from(L);
    if (s->abort == LC_LUA_ABORT_NONE)
        return 0;
    lua_pushstring(L, s->abort_msg);
    return 1;
}

/* After a caught error: a full collection when allocations were refused since the last
 * one (the unwound frames' garbage is what blocks them; LuaJIT has no emergency GC). */
static int l_relieve(lua_State *L)
{
    lc_lua_t *s = lc_lua_from(L);
    if (s->refused != s->refused_at_gc) {
        lua_gc(L, LUA_GCCOLLECT, 0);
        s->used_after_gc = s->used;
        s->refused_at_gc = s->refused;
    }
    return 0;
}

/* The function lc_lua_start named (checked there; looked up raw, as a script may have set a
 * metatable on _G). */
static int l_pick(lua_State *L)
{
    lc_lua_t *s = lc_lua_from(L);
    assert(s->start_fn != NULL);
    lua_pushstring(L, s->start_fn);
    lua_rawget(L, LUA_GLOBALSINDEX);
    if (lua_type(L, -1) != LUA_TFUNCTION)
        return luaL_error(L, "no function named %s", s->start_fn);
    return 1;
}

/* The start's values, pushed by the engine's callback inside the protected run. */
static int l_args(lua_State *L)
{
    lc_lua_t *s = lc_lua_from(L);
    lc_lua_push_cb push = s->push;
    s->push = NULL;
    lua_settop(L, 0);
    return push != NULL ? push(L, s->push_ud) : 0;
}

/* After a yielding host function: what lc_lua_resume's callback pushes, or, when the host
 * function returned without yielding, its own results. */
static int l_take(lua_State *L)
{
    lc_lua_t *s = lc_lua_from(L);
    if (!s->push_pending)
        return lua_gettop(L);
    lc_lua_push_cb push = s->push;
    s->push_pending = 0;
    s->push = NULL;
    lua_settop(L, 0);
    return push != NULL ? push(L, s->push_ud) : 0;
}

static int l_collectgarbage(lua_State *L)
{
    const char *opt = luaL_optstring(L, 1, "collect");
    if (strcmp(opt, "count") != 0)
        return luaL_error(L, "collectgarbage(\"%s\") is not allowed in a script (only "
                          "\"count\" is)", opt);
    lua_pushnumber(L, lua_gc(L, LUA_GCCOUNT, 0) + lua_gc(L, LUA_GCCOUNTB, 0) / 1024.0);
    return 1;
}

/* ---- math.random: the run's own generator ------------------------------------------- */

uint64_t lc_lua_rng_seed(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ULL; /* splitmix64: any seed, 0 included, gives a good state */
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    x ^= x >> 31;
    return x != 0 ? x : 1;
}

uint64_t lc_lua_rng_swap(lc_lua_t *s, uint64_t state)
{
    assert(s != NULL && state != 0);
    uint64_t was = s->rng;
    s->rng = state;
    return was;
}

static int l_random(lua_State *L)
{
    lc_lua_t *s = lc_lua_from(L);
    double u = lc_rng_unit(&s->rng), lo = 1, hi;
    switch (lua_gettop(L)) {
    case 0:
        lua_pushnumber(L, u);
        return 1;
    case 1:
        hi = floor(luaL_checknumber(L, 1));
        luaL_argcheck(L, lo <= hi, 1, "interval is empty");
        break;
    case 2:
        lo = floor(luaL_checknumber(L, 1));
        hi = floor(luaL_checknumber(L, 2));
        luaL_argcheck(L, lo <= hi, 2, "interval is empty");
        break;
    default:
        return luaL_error(L, "wrong number of arguments");
    }
    lua_pushnumber(L, floor(u * (hi - lo + 1)) + lo);
    return 1;
}

static int l_randomseed(lua_State *L)
{
    lc_lua_t *s = lc_lua_from(L);
    double x = luaL_checknumber(L, 1);
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    s->rng = lc_lua_rng_seed(bits);
    return 0;
}

/* ---- print()/log(): rate limited lines to the log callback --------------------------- */

static int log_token(lc_lua_t *s)
{
    uint64_t now = lc_mono_ns();
    s->log_tokens += (double)(now - s->log_refill_ns) * s->log_per_sec / 1e9;
    s->log_refill_ns = now;
    if (s->log_tokens > s->log_burst)
        s->log_tokens = s->log_burst;
    if (s->log_tokens < 1.0)
        return 0;
    s->log_tokens -= 1.0;
    return 1;
}

static void log_line(lc_lua_t *s, const char *line, size_t len)
{
    s->log_lines++;
    if (s->log != NULL)
        s->log(s->log_ud, line, len);
}

/* Appends text to line, control bytes as spaces (a line stays one line); sets *cut when
 * LC_LUA_LOG_LINE_MAX leaves some out. */
static size_t line_add(char *line, size_t at, const char *text, size_t len, int *cut)
{
    size_t i = 0;
    for (; i < len && at < LC_LUA_LOG_LINE_MAX; i++) {
        unsigned char c = (unsigned char)text[i];
        line[at++] = (c < 0x20 && c != '\t') || c == 0x7f ? ' ' : (char)c;
    }
    if (i < len)
        *cut = 1;
    return at;
}

static int l_print(lua_State *L)
{
    lc_lua_t *s = lc_lua_from(L);
    lc_lua_limits_check(s, L); /* __tostring = print recurses through here */
    if (!log_token(s)) {
        s->log_dropped++;
        s->log_unreported++;
        return 0;
    }
    if (s->log_unreported > 0) {
        char note[128];
        int n = snprintf(note, sizeof note, "script: %llu print() lines dropped (more than %u a "
                         "second)", (unsigned long long)s->log_unreported, s->log_per_sec);
        s->log_unreported = 0;
        log_line(s, note, (size_t)n);
    }
    char line[LC_LUA_LOG_LINE_MAX + 4];
    size_t at = 0;
    int n = lua_gettop(L), cut = 0;
    for (int i = 1; i <= n && !cut; i++) {
        lua_pushvalue(L, lua_upvalueindex(1)); /* the sandbox's tostring */
        lua_pushvalue(L, i);
        lua_call(L, 1, 1);
        size_t len;
        const char *text = lua_tolstring(L, -1, &len);
        if (text == NULL)
            return luaL_error(L, "'tostring' must return a string to 'print'");
        if (i > 1)
            at = line_add(line, at, "\t", 1, &cut);
        at = line_add(line, at, text, len, &cut);
        lua_pop(L, 1);
    }
    if (cut) {
        memcpy(line + at, "...", 3);
        at += 3;
    }
    log_line(s, line, at);
    return 0;
}

/* ---- require(): the scenario's modules and nothing else ------------------------------ */

static const lc_lua_mod_t *find_module(const lc_lua_t *s, const char *name)
{
    for (size_t i = 0; i < s->n_mods; i++)
        if (strcmp(s->mods[i].name, name) == 0)
            return &s->mods[i];
    return NULL;
}

static int no_module(lua_State *L, const lc_lua_t *s, const char *name)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (size_t i = 0; i < s->n_mods; i++) {
        luaL_addstring(&b, i > 0 ? ", " : "");
        luaL_addstring(&b, s->mods[i].name);
    }
    luaL_pushresult(&b);
    if (s->n_mods == 0)
        return luaL_error(L, "require: no module named '%s' (the scenario has no modules)", name);
    return luaL_error(L, "require: no module named '%s' (the scenario's modules: %s)", name,
                      lua_tostring(L, -1));
}

/* The names being loaded, outermost first, are upvalue 2 (an array); a name already in it
 * is a cycle, reported with the chain. */
static int in_chain(lua_State *L, const char *name)
{
    int n = (int)lua_objlen(L, lua_upvalueindex(2));
    for (int i = 1; i <= n; i++) {
        lua_rawgeti(L, lua_upvalueindex(2), i);
        int same = strcmp(lua_tostring(L, -1), name) == 0;
        lua_pop(L, 1);
        if (same)
            return 1;
    }
    return 0;
}

static int cycle_error(lua_State *L, const char *name)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    int n = (int)lua_objlen(L, lua_upvalueindex(2));
    for (int i = 1; i <= n; i++) {
        lua_rawgeti(L, lua_upvalueindex(2), i);
        luaL_addvalue(&b);
        luaL_addstring(&b, " -> ");
    }
    luaL_addstring(&b, name);
    luaL_pushresult(&b);
    return luaL_error(L, "require: a cycle: %s", lua_tostring(L, -1));
}

/* Runs the module once (its chunk gets its name as ..., like 5.1's require) and leaves its
 * result, true for none, at the top; the chain entry is removed whether it fails or not. */
static int load_module(lua_State *L, const lc_lua_mod_t *m)
{
    char chunk[LC_LUA_MODULE_NAME_MAX + 2];
    snprintf(chunk, sizeof chunk, "=%s", m->name);
    int depth = (int)lua_objlen(L, lua_upvalueindex(2)) + 1;
    lua_pushvalue(L, 1);
    lua_rawseti(L, lua_upvalueindex(2), depth);
    int status = luaL_loadbuffer(L, m->src, m->len, chunk);
    if (status == 0) {
        lua_pushvalue(L, 1);
        status = lua_pcall(L, 1, 1, 0); /* limit errors are re-raised below like any other */
    }
    lua_pushnil(L);
    lua_rawseti(L, lua_upvalueindex(2), depth);
    if (status != 0)
        return lua_error(L);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_pushboolean(L, 1);
    }
    return 1;
}

static int l_require(lua_State *L)
{
    lc_lua_t *s = lc_lua_from(L);
    const char *name = luaL_checkstring(L, 1);
    lua_settop(L, 1);
    lc_lua_limits_check(s, L);
    lua_pushvalue(L, 1);
    lua_rawget(L, lua_upvalueindex(1)); /* the cache */
    if (!lua_isnil(L, -1))
        return 1;
    lua_pop(L, 1);
    const lc_lua_mod_t *m = find_module(s, name);
    if (m == NULL)
        return no_module(L, s, name);
    if (in_chain(L, name))
        return cycle_error(L, name);
    load_module(L, m);
    lua_pushvalue(L, 1);
    lua_pushvalue(L, -2);
    lua_rawset(L, lua_upvalueindex(1));
    return 1;
}

/* ---- host functions, and the http the master's check gets ----------------------------- */

static int l_http_unavailable(lua_State *L)
{
    return luaL_error(L, "http is not available while the master checks the script");
}

static int l_http_index(lua_State *L)
{
    lua_pushcfunction(L, l_http_unavailable);
    return 1;
}

/* Every http.<name> is a function that raises: `local get = http.get` at the top level
 * passes the check, a call of it there does not. */
static void open_http_stub(lua_State *L)
{
    lua_newtable(L);
    lua_newtable(L);
    lua_pushcfunction(L, l_http_index);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_GLOBALSINDEX, "http");
}

/* Pushes global table ns, creating it if absent. */
static void push_namespace(lua_State *L, const char *ns)
{
    lua_pushstring(L, ns);
    lua_rawget(L, LUA_GLOBALSINDEX);
    if (lua_istable(L, -1))
        return;
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushstring(L, ns);
    lua_pushvalue(L, -2);
    lua_rawset(L, LUA_GLOBALSINDEX);
}

/* Runs the config's host prelude with the private host functions (the table at priv). */
static void run_host_prelude(lua_State *L, int priv, const lc_lua_config_t *cfg)
{
    if (cfg->host_prelude == NULL)
        return;
    if (luaL_loadbuffer(L, cfg->host_prelude, strlen(cfg->host_prelude), "=sandbox") != 0)
        lua_error(L);
    lua_pushvalue(L, priv);
    lua_call(L, 1, 0);
}

/* wrappers: the prelude's table, at index w. */
static void open_host(lua_State *L, int w, const lc_lua_config_t *cfg)
{
    int http = 0;
    lua_newtable(L);
    int priv = lua_gettop(L);
    for (size_t i = 0; i < cfg->n_host; i++) {
        const lc_lua_host_fn_t *h = &cfg->host[i];
        if (h->flags & LC_LUA_HOST_PRIVATE) {
            lua_pushcfunction(L, h->fn);
            lua_setfield(L, priv, h->name);
            continue;
        }
        if (h->ns != NULL) {
            push_namespace(L, h->ns);
            http |= strcmp(h->ns, "http") == 0;
        } else {
            lua_pushvalue(L, LUA_GLOBALSINDEX);
        }
        lua_pushstring(L, h->name);
        if (h->flags & LC_LUA_HOST_YIELDS) {
            lua_getfield(L, w, "yielding");
            lua_pushcfunction(L, h->fn);
            lua_call(L, 1, 1);
        } else {
            lua_pushcfunction(L, h->fn);
        }
        lua_rawset(L, -3);
        lua_pop(L, 1);
    }
    if (!http)
        open_http_stub(L);
    run_host_prelude(L, priv, cfg);
    lua_pop(L, 1);
}

/* ---- building it ---------------------------------------------------------------------- */

static int kept(const char *const *keep, const char *name)
{
    for (; *keep != NULL; keep++)
        if (strcmp(*keep, name) == 0)
            return 1;
    return 0;
}

/* Removes every field of the table at idx whose name is not in keep (clearing existing
 * fields during a traversal is allowed). */
static void allowlist(lua_State *L, int idx, const char *const *keep)
{
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING || !kept(keep, lua_tostring(L, -1))) {
            lua_pushvalue(L, -1);
            lua_pushnil(L);
            lua_rawset(L, idx);
        }
    }
}

static void push_global(lua_State *L, const char *name)
{
    lua_pushstring(L, name);
    lua_rawget(L, LUA_GLOBALSINDEX);
}

static void open_libs(lua_State *L)
{
    static const struct {
        const char *name;
        lua_CFunction open;
    } libs[] = {{"", luaopen_base},   {LUA_STRLIBNAME, luaopen_string},
                {LUA_TABLIBNAME, luaopen_table}, {LUA_MATHLIBNAME, luaopen_math},
                {LUA_BITLIBNAME, luaopen_bit}};
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        lua_pushcfunction(L, libs[i].open);
        lua_pushstring(L, libs[i].name);
        lua_call(L, 1, 0);
    }
}

/* Runs the prelude with the originals; leaves its table of wrappers at the top. */
static void run_prelude(lua_State *L)
{
    if (luaL_loadbuffer(L, prelude, sizeof prelude - 1, "=sandbox") != 0)
        lua_error(L);
    push_global(L, "pcall");
    push_global(L, "xpcall");
    push_global(L, "tostring");
    push_global(L, "table");
    lua_getfield(L, -1, "sort");
    lua_remove(L, -2);
    push_global(L, "error");
    lua_pushcfunction(L, l_aborting);
    lua_pushcfunction(L, l_relieve);
    lua_pushcfunction(L, l_pick);
    lua_pushcfunction(L, l_args);
    lua_pushcfunction(L, l_take);
    lua_call(L, 10, 1);
}

/* Sets field name of the table at idx to the value at the top (popped). */
static void set_field(lua_State *L, int idx, const char *name)
{
    lua_pushstring(L, name);
    lua_insert(L, -2);
    lua_rawset(L, idx);
}

static void open_lib_tables(lua_State *L, int w)
{
    static const struct {
        const char *name;
        const char *const *keep;
    } libs[] = {{LUA_STRLIBNAME, keep_string}, {LUA_TABLIBNAME, keep_table},
                {LUA_MATHLIBNAME, keep_math}, {LUA_BITLIBNAME, keep_bit}};
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        push_global(L, libs[i].name);
        int t = lua_gettop(L);
        allowlist(L, t, libs[i].keep);
        if (i == 0) {
            lc_lua_pattern_open(L);
        } else if (i == 1) {
            lua_getfield(L, w, "sort");
            set_field(L, t, "sort");
        } else if (i == 2) {
            lua_pushcfunction(L, l_random);
            set_field(L, t, "random");
            lua_pushcfunction(L, l_randomseed);
            set_field(L, t, "randomseed");
        }
        lua_pop(L, 1);
    }
}

static void open_base(lua_State *L, int w)
{
    allowlist(L, LUA_GLOBALSINDEX, keep_base);
    static const char *const from_prelude[] = {"pcall", "xpcall", "tostring"};
    for (size_t i = 0; i < sizeof from_prelude / sizeof from_prelude[0]; i++) {
        lua_getfield(L, w, from_prelude[i]);
        set_field(L, LUA_GLOBALSINDEX, from_prelude[i]);
    }
    lua_getfield(L, w, "tostring");
    lua_pushcclosure(L, l_print, 1);
    lua_pushvalue(L, -1);
    set_field(L, LUA_GLOBALSINDEX, "print");
    set_field(L, LUA_GLOBALSINDEX, "log");
    lua_pushcfunction(L, l_collectgarbage);
    set_field(L, LUA_GLOBALSINDEX, "collectgarbage");
    lua_newtable(L); /* require's cache */
    lua_newtable(L); /* the names being loaded */
    lua_pushcclosure(L, l_require, 2);
    set_field(L, LUA_GLOBALSINDEX, "require");
}

/* A copy of the globals as the sandbox made them, so a script's own can be told apart. */
static int snapshot_globals(lua_State *L)
{
    lua_newtable(L);
    lua_pushnil(L);
    while (lua_next(L, LUA_GLOBALSINDEX) != 0) {
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_rawset(L, -4);
    }
    return luaL_ref(L, LUA_REGISTRYINDEX);
}

int lc_lua_env_open(lua_State *L)
{
    const lc_lua_config_t *cfg = lua_touserdata(L, 1);
    lc_lua_t *s = lc_lua_from(L);
    assert(cfg != NULL && s != NULL);
    lua_settop(L, 0);
    s->rng = lc_lua_rng_seed(cfg->seed);
    open_libs(L);
    run_prelude(L);
    int w = lua_gettop(L);
    open_lib_tables(L, w);
    open_base(L, w);
    lc_lua_json_open(L);
    lc_lua_lib_open(L);
    lua_getfield(L, w, "run");
    s->run_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushcfunction(L, lc_lua_call_trampoline);
    s->call_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    open_host(L, w, cfg);
    s->builtins_ref = snapshot_globals(L);
    return 0;
}
