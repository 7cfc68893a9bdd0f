/* journey_lua_api.c — what a lua step's function can call besides http.*: its u table (u.id,
 * u.iteration, u.vars: the user's journey variables, shared with the declarative steps),
 * sleep(ms), check(cond, name), fail(msg), group(name, fn) and feed(name). */
#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <lauxlib.h>

#include "journey_http.h"
#include "journey_lua_internal.h"
#include "lc_err.h"
#include "stats.h"
#include "user_internal.h"

#define HEADERS_MAX 64u        /* per request, as a scenario's (LC_SCENARIO_MAX_HEADERS) */
#define HEADER_NAME_MAX 256u
#define HEADER_VALUE_MAX 8192u

static const lc_program_t *prog_of(const worker_user_t *u)
{
    return u->run->plan->program;
}

/* "script:12: " for the script's line: the first caller that is not the sandbox's prelude
 * (a yielding function is called through one of its wrappers, group through its own). */
static void where(lua_State *L, char *buf, size_t len)
{
    lua_Debug ar;
    buf[0] = '\0';
    for (int level = 1; level <= 3; level++) {
        if (lua_getstack(L, level, &ar) && lua_getinfo(L, "Sl", &ar) && ar.currentline > 0 &&
            strcmp(ar.short_src, "sandbox") != 0) {
            snprintf(buf, len, "%s:%d: ", ar.short_src, ar.currentline);
            return;
        }
    }
}

int worker_lua_error(lua_State *L, const char *fmt, ...)
{
    char msg[512], at[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    where(L, at, sizeof at);
    lua_pushfstring(L, "%s%s", at, msg);
    return lua_error(L);
}

static const lc_jlua_t *step_of(const worker_user_t *u)
{
    return &prog_of(u)->luas[u->js->lua->step];
}

/* ---- u.vars ------------------------------------------------------------------------- */

static const char vars_meta_key; /* its address keys the metatable of u.vars in the registry */

/* A variable's value as Lua sees it: numbers and booleans by their type, null as nil, text
 * (and a JSON list or object's text) as a string. */
static int push_value(lua_State *L, const lc_value_t *v)
{
    char num[64];
    char *end;
    switch (v->type) {
    case LC_V_NUMBER:
        if (v->len > 0 && v->len < sizeof num) {
            memcpy(num, v->data, v->len);
            num[v->len] = '\0';
            double d = strtod(num, &end);
            if (*end == '\0') {
                lua_pushnumber(L, d);
                return 1;
            }
        }
        break;
    case LC_V_BOOL:
        lua_pushboolean(L, v->len == 4 && memcmp(v->data, "true", 4) == 0);
        return 1;
    case LC_V_NULL:
        lua_pushnil(L);
        return 1;
    default:
        break;
    }
    lua_pushlstring(L, v->data, v->len);
    return 1;
}

/* u.vars.x: the journey's variable x (or a feeder's column, "feeder.column"); a name that
 * is neither was the table's own (raw) if the script set it, else it is nil. */
static int vars_index(lua_State *L)
{
    worker_user_t *u = worker_lua_current(L, "u.vars");
    size_t len;
    lc_value_t v;
    if (lua_type(L, 2) != LUA_TSTRING)
        return 0;
    const char *k = lua_tolstring(L, 2, &len);
    int slot = lc_program_slot(prog_of(u), k, len);
    if (slot < 0 || !worker_session_get(u->js->session, prog_of(u), (uint32_t)slot, &v))
        return 0;
    return push_value(L, &v);
}

/* The text a Lua value is stored as, and its type; false for a table, a function... */
static bool stored_as(lua_State *L, int idx, char *num, size_t numlen, const char **data,
                      size_t *len, uint8_t *type)
{
    switch (lua_type(L, idx)) {
    case LUA_TSTRING:
        *data = lua_tolstring(L, idx, len);
        *type = LC_V_STRING;
        return true;
    case LUA_TNUMBER: {
        double d = lua_tonumber(L, idx);
        if (!isfinite(d))
            return false;
        *len = (size_t)snprintf(num, numlen, "%.14g", d);
        *data = num;
        *type = LC_V_NUMBER;
        return true;
    }
    case LUA_TBOOLEAN:
        *data = lua_toboolean(L, idx) ? "true" : "false";
        *len = strlen(*data);
        *type = LC_V_BOOL;
        return true;
    default:
        return false;
    }
}

/* u.vars.x = v: a journey variable takes a string, a finite number, a boolean or nil
 * (unset); any other name is the table's own, for the script to keep what it likes. */
static int vars_newindex(lua_State *L)
{
    worker_user_t *u = worker_lua_current(L, "u.vars");
    size_t klen, len;
    const char *data;
    char num[64];
    uint8_t type;
    int slot = -1;
    if (lua_type(L, 2) == LUA_TSTRING) {
        const char *k = lua_tolstring(L, 2, &klen);
        slot = lc_program_slot(prog_of(u), k, klen);
    }
    if (slot < 0) {
        lua_rawset(L, 1);
        return 0;
    }
    const char *k = lua_tostring(L, 2);
    if ((uint32_t)slot >= LC_JOURNEY_FEEDER_SLOT0)
        return worker_lua_error(L, "u.vars.%s: a feeder's column is read-only", k);
    worker_session_t *s = worker_journey_session(u);
    if (s == NULL)
        return worker_lua_error(L, "u.vars.%s: out of memory", k);
    if (lua_isnil(L, 3)) {
        worker_session_unset(s, (uint32_t)slot);
        return 0;
    }
    if (!stored_as(L, 3, num, sizeof num, &data, &len, &type))
        return worker_lua_error(L, "u.vars.%s: a journey variable holds a string, a finite number, "
                          "a boolean or nil, not a %s", k, luaL_typename(L, 3));
    int rv = worker_session_set(s, (uint32_t)slot, data, len, type);
    if (rv != 0)
        return worker_lua_error(L, "u.vars.%s: %s", k, rv == LC_ETOOBIG ? "over the 1 MiB a user's "
                                                                    "variables may hold"
                                                                  : "out of memory");
    return 0;
}

void worker_lua_push_meta(lua_State *L, const void *key, lua_CFunction index,
                          lua_CFunction newindex, const char *shown)
{
    lua_pushlightuserdata(L, (void *)key);
    lua_rawget(L, LUA_REGISTRYINDEX);
    if (lua_istable(L, -1))
        return;
    lua_pop(L, 1);
    lua_createtable(L, 0, 3);
    lua_pushcfunction(L, index);
    lua_setfield(L, -2, "__index");
    if (newindex != NULL) {
        lua_pushcfunction(L, newindex);
        lua_setfield(L, -2, "__newindex");
    }
    lua_pushstring(L, shown);
    lua_setfield(L, -2, "__metatable"); /* getmetatable gives this; setmetatable refuses */
    lua_pushlightuserdata(L, (void *)key);
    lua_pushvalue(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
}

static const char u_meta_key; /* its address keys the metatable every u table shares */

static bool is_key(const char *k, size_t len, const char *want)
{
    return k != NULL && len == strlen(want) && memcmp(k, want, len) == 0;
}

/* u.id and u.iteration (the running user's, when u is its table), and u.vars, made on the
 * first use and kept raw in u from then on: a u table holds nothing until a script stores
 * something in it (most never do). */
static int u_index(lua_State *L)
{
    size_t len = 0;
    const char *k = lua_type(L, 2) == LUA_TSTRING ? lua_tolstring(L, 2, &len) : NULL;
    bool id = is_key(k, len, "id");
    if (id || is_key(k, len, "iteration")) {
        const worker_user_t *u = worker_lua_current(L, "u");
        lua_rawgeti(L, LUA_REGISTRYINDEX, u->js->lua->u_ref);
        if (!lua_rawequal(L, 1, -1))
            return 0; /* another user's u, kept by the script: not the one running */
        lua_pushnumber(L, id ? (double)u->id : (double)u->iteration);
        return 1;
    }
    if (!is_key(k, len, "vars"))
        return 0;
    lua_newtable(L);
    worker_lua_push_meta(L, &vars_meta_key, vars_index, vars_newindex, "u.vars");
    lua_setmetatable(L, -2);
    lua_pushvalue(L, 2);
    lua_pushvalue(L, -2);
    lua_rawset(L, 1);
    return 1;
}

int worker_lua_push_user(lua_State *co, void *ud)
{
    worker_user_t *u = ud;
    worker_lua_user_t *lu = u->js->lua;
    if (lu->u_ref == LUA_NOREF) {
        lua_createtable(co, 0, 0); /* id, iteration and vars come from u_index */
        worker_lua_push_meta(co, &u_meta_key, u_index, NULL, "u"); /* they stay ours */
        lua_setmetatable(co, -2);
        lu->u_ref = luaL_ref(co, LUA_REGISTRYINDEX);
    }
    lua_rawgeti(co, LUA_REGISTRYINDEX, lu->u_ref);
    return 1;
}

/* ---- sleep, check -------------------------------------------------------------------- */

/* sleep(ms): on the user's timer; the coroutine yields until it fires. At least 1 ms: a
 * 0 ms timer would fire in the same turn of the loop (libuv 1.44), so `while true do
 * sleep(0) end` would hold the loop without ever meeting the CPU deadline. */
static int l_sleep(lua_State *L)
{
    worker_user_t *u = worker_lua_current(L, "sleep");
    lua_Number ms = luaL_checknumber(L, 1);
    if (!(ms >= 0 && ms <= WORKER_LUA_SLEEP_MAX_MS))
        return worker_lua_error(L, "sleep: expected 0 to %u ms", WORKER_LUA_SLEEP_MAX_MS);
    u->js->lua->wait = WORKER_LUA_SLEEP;
    worker_user_wait_cb(u, ms < 1 ? 1 : (uint64_t)ms, worker_lua_on_sleep);
    return lua_yield(L, 0);
}

/* check(cond, name): counted per name, passed or not; a failure is also an error of kind
 * check on the step's endpoint. Never fatal: returns whether it passed. */
static int l_check(lua_State *L)
{
    worker_user_t *u = worker_lua_current(L, "check");
    bool ok = lua_toboolean(L, 1);
    size_t len;
    const char *name = luaL_checklstring(L, 2, &len);
    worker_stats_check(u->run->stats, name, len, ok);
    if (!ok)
        worker_stats_error_note(u->run->stats, step_of(u)->endpoint, WORKER_ERR_CHECK,
                                "%s: check \"%.*s\" failed", step_of(u)->path_json,
                                (int)(len < 64 ? len : 64), name);
    lua_pushboolean(L, ok);
    return 1;
}

/* ---- fail, group, feed ---------------------------------------------------------------- */

/* fail(msg): the step's function ends here as a script error with msg, and so does the
 * iteration (whatever the step's on_error; in on_stop, the next step runs). pcall cannot
 * catch it. */
static int l_fail(lua_State *L)
{
    worker_user_t *u = worker_lua_current(L, "fail");
    const char *msg = lua_isnoneornil(L, 1) ? "failed" : luaL_checkstring(L, 1);
    char at[128], text[512];
    where(L, at, sizeof at);
    snprintf(text, sizeof text, "%sfail: %s", at, msg);
    u->js->lua->exit = WORKER_LUA_EXIT_FAIL;
    return lc_lua_abort(L, text);
}

/* The group's timer and start: the private half of group() (worker_lua_prelude). */
static int l_group_begin(lua_State *L)
{
    worker_user_t *u = worker_lua_current(L, "group");
    const char *name = luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    int timer = lc_program_timer(prog_of(u), LC_TIMER_GROUP, name);
    if (timer < 0)
        return worker_lua_error(L, "group: no group named \"%.128s\" (a lua step's \"groups\" "
                                "names those its function may use)", name);
    lua_pushnumber(L, timer);
    lua_pushnumber(L, (double)(uv_hrtime() / 1000u));
    return 2;
}

/* Records the group's time (it ended without an error), returns what its function did. */
static int l_group_end(lua_State *L)
{
    worker_user_t *u = worker_lua_current(L, "group");
    uint32_t timer = (uint32_t)lua_tonumber(L, 1);
    uint64_t t0 = (uint64_t)lua_tonumber(L, 2), now = uv_hrtime() / 1000u;
    assert(timer < prog_of(u)->n_timers);
    worker_stats_record_timer(u->run->stats, u->run->plan->first_timer + timer, true,
                              now > t0 ? now - t0 : 0);
    lua_remove(L, 1);
    lua_remove(L, 1);
    return lua_gettop(L);
}

/* Lua, so that fn may yield (http inside a group): a C function cannot yield across the call
 * it makes. Errors in fn pass through unrecorded, as a declarative group's do. */
#define STR_(x) #x
#define STR(x) STR_(x)
const char worker_lua_prelude[] =
    "local p = ...\n"
    "local begin, finish = p.group_begin, p.group_end\n"
    "function group(name, fn, ...)\n"
    "  local g, t0 = begin(name, fn)\n"
    "  return finish(g, t0, fn(...))\n"
    "end\n"
    "local take, nap = p.feed_take, sleep\n"
    "function feed(name)\n"
    "  for _ = 1, " STR(WORKER_LUA_FEED_WAIT_MS) " / " STR(WORKER_LUA_FEED_POLL_MS) " do\n"
    "    local row = take(name, false)\n"
    "    if row then return row end\n"
    "    nap(" STR(WORKER_LUA_FEED_POLL_MS) ")\n"
    "  end\n"
    "  return take(name, true)\n"
    "end\n";

/* feed(name): the feeder's next row for this user, as a {column = value} table, taken as a
 * feed step takes it (its mode and order; ${name.column} sees it too). This is its private
 * half, feed_take(name, last) (worker_lua_prelude): false while the leader's lease is on its
 * way, and the prelude sleeps and asks again; on the last try it fails the iteration. An
 * exhausted feeder whose on_exhausted stops the user (or the run) stops the user here. */
static int l_feed_take(lua_State *L)
{
    worker_user_t *u = worker_lua_current(L, "feed");
    const lc_program_t *p = prog_of(u);
    const char *name = luaL_checkstring(L, 1);
    bool last = lua_toboolean(L, 2);
    uint32_t f = 0;
    while (f < p->n_feeders && strcmp(p->feeders[f].name, name) != 0)
        f++;
    if (f == p->n_feeders)
        return worker_lua_error(L, "feed: no feeder named \"%.128s\" (the scenario's "
                                "\"feeders\" are those a script may feed from)", name);
    enum worker_take got = worker_journey_take_row(u, f);
    if (got == WORKER_TAKE_WAIT && !last) {
        lua_pushboolean(L, 0);
        return 1;
    }
    if (got != WORKER_TAKE_ROW) {
        char text[256];
        snprintf(text, sizeof text, got == WORKER_TAKE_WAIT
                     ? "feed: feeder %.128s had no row in hand for %u ms (the leader's lease "
                       "did not come): the iteration fails"
                     : "feed: feeder %.128s is exhausted: the user stops", name,
                 (unsigned)WORKER_LUA_FEED_WAIT_MS);
        u->js->lua->exit = got == WORKER_TAKE_WAIT ? WORKER_LUA_EXIT_FAIL : WORKER_LUA_EXIT_USER;
        return lc_lua_abort(L, text);
    }
    const lc_table_t *t = &p->feeders[f].table;
    uint32_t row = u->js->session->rows[f];
    lua_createtable(L, 0, (int)t->n_cols);
    for (size_t c = 0; c < t->n_cols; c++) {
        lc_value_t v = lc_table_cell(t, row, c);
        lua_pushstring(L, t->cols[c]);
        lua_pushlstring(L, v.data, v.len);
        lua_rawset(L, -3);
    }
    return 1;
}

const lc_lua_host_fn_t worker_lua_host_fns[] = {
    {NULL, "sleep", l_sleep, LC_LUA_HOST_YIELDS},
    {NULL, "check", l_check, 0},
    {NULL, "fail", l_fail, 0},
    {NULL, "feed_take", l_feed_take, LC_LUA_HOST_PRIVATE},
    {NULL, "group_begin", l_group_begin, LC_LUA_HOST_PRIVATE},
    {NULL, "group_end", l_group_end, LC_LUA_HOST_PRIVATE},
};
const size_t worker_lua_n_host_fns = sizeof worker_lua_host_fns / sizeof worker_lua_host_fns[0];
