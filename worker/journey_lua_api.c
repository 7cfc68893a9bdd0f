/* journey_lua_api.c — what a lua step's function can call: http.get/post/put/patch/del (they
 * yield until the answer is in), sleep(ms), check(cond, name), and its u table (u.id,
 * u.iteration, u.vars: the user's journey variables, shared with the declarative steps). */
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

int worker_lua_error(lua_State *L, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    lua_Debug ar;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* The script's line: the first caller that is not the sandbox's prelude (a yielding
     * function is called through one of its wrappers). */
    for (int level = 1; level <= 3; level++) {
        if (lua_getstack(L, level, &ar) && lua_getinfo(L, "Sl", &ar) && ar.currentline > 0 &&
            strcmp(ar.short_src, "sandbox") != 0) {
            lua_pushfstring(L, "%s:%d: %s", ar.short_src, ar.currentline, msg);
            return lua_error(L);
        }
    }
    lua_pushstring(L, msg);
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

/* The metatable every u.vars shares (made once per state). */
static void push_vars_meta(lua_State *L)
{
    lua_pushlightuserdata(L, (void *)&vars_meta_key);
    lua_rawget(L, LUA_REGISTRYINDEX);
    if (lua_istable(L, -1))
        return;
    lua_pop(L, 1);
    lua_createtable(L, 0, 3);
    lua_pushcfunction(L, vars_index);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, vars_newindex);
    lua_setfield(L, -2, "__newindex");
    lua_pushliteral(L, "u.vars");
    lua_setfield(L, -2, "__metatable"); /* getmetatable gives this; setmetatable refuses */
    lua_pushlightuserdata(L, (void *)&vars_meta_key);
    lua_pushvalue(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
}

static void set_number(lua_State *L, const char *key, double v)
{
    lua_pushstring(L, key);
    lua_pushnumber(L, v);
    lua_rawset(L, -3);
}

int worker_lua_push_user(lua_State *co, void *ud)
{
    worker_user_t *u = ud;
    worker_lua_user_t *lu = u->js->lua;
    if (lu->u_ref == LUA_NOREF) {
        lua_createtable(co, 0, 3);
        lua_pushliteral(co, "vars");
        lua_newtable(co);
        push_vars_meta(co);
        lua_setmetatable(co, -2);
        lua_rawset(co, -3);
        lu->u_ref = luaL_ref(co, LUA_REGISTRYINDEX);
    }
    lua_rawgeti(co, LUA_REGISTRYINDEX, lu->u_ref);
    set_number(co, "id", (double)u->id); /* again each time: the script may have changed them */
    set_number(co, "iteration", (double)u->iteration);
    return 1;
}

/* ---- http.* ------------------------------------------------------------------------- */

static bool token_char(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           (ch != '\0' && strchr("!#$%&'*+-.^_`|~", ch) != NULL);
}

static bool header_name_ok(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!token_char((unsigned char)s[i]))
            return false;
    return len > 0 && len <= HEADER_NAME_MAX;
}

static bool header_value_ok(const char *s, size_t len)
{
    return len <= HEADER_VALUE_MAX && memchr(s, '\r', len) == NULL &&
           memchr(s, '\n', len) == NULL && memchr(s, '\0', len) == NULL;
}

/* One "name: value" of opts.headers (key at -2, value at -1) into out. */
static void add_header(lua_State *L, const char *fn, lc_buf_t *out, worker_script_req_t *sr)
{
    static const char *const ours[] = {"Host", "Content-Length", "Transfer-Encoding", NULL};
    size_t nlen, vlen;
    if (lua_type(L, -2) != LUA_TSTRING || !(lua_type(L, -1) == LUA_TSTRING ||
                                            lua_type(L, -1) == LUA_TNUMBER))
        worker_lua_error(L, "%s: opts.headers: expected name = value strings", fn);
    const char *name = lua_tolstring(L, -2, &nlen);
    lua_pushvalue(L, -1); /* tolstring on a copy: converting the value in place is fine, but */
    const char *value = lua_tolstring(L, -1, &vlen); /* not a habit to have next to lua_next */
    if (!header_name_ok(name, nlen))
        worker_lua_error(L, "%s: opts.headers: \"%s\" is not a header name", fn, name);
    if (!header_value_ok(value, vlen))
        worker_lua_error(L, "%s: opts.headers.%s: a CR, LF or NUL byte, or longer than %u bytes", fn,
                   name, HEADER_VALUE_MAX);
    for (size_t i = 0; ours[i] != NULL; i++)
        if (strcasecmp(name, ours[i]) == 0)
            worker_lua_error(L, "%s: opts.headers: %s is set by the worker", fn, ours[i]);
    sr->sets_user_agent |= strcasecmp(name, "User-Agent") == 0;
    if (lc_buf_append(out, name, nlen) != 0 || lc_buf_append(out, ": ", 2) != 0 ||
        lc_buf_append(out, value, vlen) != 0 || lc_buf_append(out, "\r\n", 2) != 0)
        worker_lua_error(L, "%s: out of memory", fn);
    lua_pop(L, 1);
}

/* opts.headers (a table at idx) into the engine's body scratch, free while a host function
 * runs (nothing else renders on this thread meanwhile). */
static void read_headers(lua_State *L, worker_user_t *u, const char *fn, int idx,
                         worker_script_req_t *sr)
{
    lc_buf_t *out = &u->run->engine->body_scratch;
    size_t n = 0;
    out->len = 0;
    if (lc_buf_append(out, "", 0) != 0)
        worker_lua_error(L, "%s: out of memory", fn);
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        if (++n > HEADERS_MAX)
            worker_lua_error(L, "%s: opts.headers: more than %u", fn, HEADERS_MAX);
        add_header(L, fn, out, sr);
        lua_pop(L, 1);
    }
    sr->headers = out->data;
    sr->headers_len = out->len;
}

/* opts: {headers = {...}, name = "endpoint", timeout_ms = n}, read raw. */
static void read_opts(lua_State *L, worker_user_t *u, const char *fn, int idx,
                      worker_script_req_t *sr, worker_lua_user_t *lu)
{
    if (lua_isnoneornil(L, idx))
        return;
    luaL_checktype(L, idx, LUA_TTABLE);
    lua_pushliteral(L, "name");
    lua_rawget(L, idx);
    if (!lua_isnil(L, -1)) {
        const char *name = lua_tostring(L, -1);
        int ep = name != NULL ? lc_program_endpoint(prog_of(u), name) : -1;
        if (ep < 0)
            worker_lua_error(L, "%s: opts.name: no endpoint named \"%s\" (a lua step's \"endpoints\" "
                       "names those its requests may be counted under)", fn, name ? name : "?");
        lu->endpoint = (uint32_t)ep;
    }
    lua_pushliteral(L, "timeout_ms");
    lua_rawget(L, idx);
    if (!lua_isnil(L, -1)) {
        lua_Number ms = lua_tonumber(L, -1);
        if (!(ms >= 1 && ms <= 3600000))
            worker_lua_error(L, "%s: opts.timeout_ms: expected 1 to 3600000", fn);
        lu->timeout_ms = (uint32_t)ms;
    }
    lua_pushliteral(L, "headers");
    lua_rawget(L, idx);
    if (lua_istable(L, -1))
        read_headers(L, u, fn, lua_gettop(L), sr);
    else if (!lua_isnil(L, -1))
        worker_lua_error(L, "%s: opts.headers: expected a table of name = value", fn);
    lua_pop(L, 3);
}

/* The request target: a path on the run's target (its base path before it), or a URL of the
 * same origin. Anything else is another host: a script error. *owned: free it after. */
static void read_target(lua_State *L, worker_user_t *u, const char *fn, worker_script_req_t *sr,
                        char **owned)
{
    size_t len;
    const char *path = luaL_checklstring(L, 1, &len);
    const char *base = u->run->plan->scenario.url.base_path;
    *owned = NULL;
    if (len > 0 && path[0] == '/' && (len == 1 || path[1] != '/')) {
        if (base[0] != '\0') {
            lua_pushstring(L, base);
            lua_pushvalue(L, 1);
            lua_concat(L, 2);
            path = lua_tolstring(L, -1, &len); /* on the stack until the call yields */
        }
        sr->target = path;
        sr->target_len = len;
        return;
    }
    if (!worker_journey_same_origin(u, path, len, owned))
        worker_lua_error(L, "%s: \"%.200s\" is not a path of the run's target (%.200s): a script "
                   "reaches its target only", fn, path, u->run->plan->scenario.target);
    sr->target = *owned;
    sr->target_len = strlen(*owned);
}

static int http_call(lua_State *L, const char *fn, const char *method, bool has_body)
{
    worker_user_t *u = worker_lua_current(L, fn);
    worker_lua_user_t *lu = u->js->lua;
    const lc_jlua_t *l = step_of(u);
    worker_script_req_t sr = {.method = method, .headers = "", .cookies = l->cookies};
    char *owned;
    assert(lu != NULL && lu->wait == WORKER_LUA_IDLE);
    lu->endpoint = l->endpoint;
    lu->timeout_ms = l->timeout_ms;
    lu->head = false;
    luaL_checklstring(L, 1, NULL);
    if (has_body) {
        sr.body = lua_isnoneornil(L, 2) ? "" : luaL_checklstring(L, 2, &sr.body_len);
    }
    read_opts(L, u, fn, has_body ? 3 : 2, &sr, lu);
    read_target(L, u, fn, &sr, &owned); /* last: nothing raises between it and the free */
    lu->wait = WORKER_LUA_HTTP;
    int rv = worker_journey_send_script(u, &sr);
    free(owned);
    if (rv != 0) {
        lu->wait = WORKER_LUA_IDLE;
        return worker_lua_error(L, "%s: %s", fn, rv == LC_EINVAL   ? "a space or a control byte in the path"
                                           : rv == LC_ETOOBIG ? "the request is over 8 MiB"
                                                              : "out of memory");
    }
    return lua_yield(L, 0);
}

static int l_get(lua_State *L)
{
    return http_call(L, "http.get", "GET", false);
}

static int l_post(lua_State *L)
{
    return http_call(L, "http.post", "POST", true);
}

static int l_put(lua_State *L)
{
    return http_call(L, "http.put", "PUT", true);
}

static int l_patch(lua_State *L)
{
    return http_call(L, "http.patch", "PATCH", true);
}

static int l_del(lua_State *L)
{
    return http_call(L, "http.del", "DELETE", false);
}

/* ---- the response ----------------------------------------------------------------------- */

/* r.header(name) or r:header(name): the header, any case; nil when it did not come. */
static int l_header(lua_State *L)
{
    int arg = lua_istable(L, 1) && lua_gettop(L) >= 2 ? 2 : 1;
    size_t len;
    const char *name = luaL_checklstring(L, arg, &len);
    char low[HEADER_NAME_MAX + 1];
    if (len > HEADER_NAME_MAX)
        return 0;
    for (size_t i = 0; i < len; i++)
        low[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] | 0x20 : name[i]);
    lua_pushlstring(L, low, len);
    lua_rawget(L, lua_upvalueindex(1));
    return 1;
}

/* The response's headers (lowercase names; a repeated one's values joined with ", "). */
static void push_headers(lua_State *L, const worker_conn_result_t *res)
{
    const char *name, *value;
    size_t vlen, pos = 0;
    lua_newtable(L);
    while (worker_conn_header_next(res, &pos, &name, &value, &vlen)) {
        lua_pushstring(L, name);
        lua_pushvalue(L, -1);
        lua_rawget(L, -3);
        if (lua_isstring(L, -1)) {
            lua_pushliteral(L, ", ");
            lua_pushlstring(L, value, vlen);
            lua_concat(L, 3);
        } else {
            lua_pop(L, 1);
            lua_pushlstring(L, value, vlen);
        }
        lua_rawset(L, -3);
    }
}

static void set_field(lua_State *L, const char *key)
{
    lua_pushstring(L, key);
    lua_insert(L, -2);
    lua_rawset(L, -3);
}

int worker_lua_push_response(lua_State *co, void *ud)
{
    const worker_lua_answer_t *a = ud;
    const worker_conn_result_t *res = a->res;
    bool complete = res->kind == WORKER_KIND_OK;
    lua_createtable(co, 0, 8);
    lua_pushnumber(co, complete ? res->status : 0);
    set_field(co, "status");
    lua_pushboolean(co, a->kind == WORKER_KIND_OK);
    set_field(co, "ok");
    if (a->kind != WORKER_KIND_OK) {
        lua_pushstring(co, worker_err_kind_name(a->kind));
        set_field(co, "error");
    }
    if (res->latency_us != WORKER_NO_LATENCY) {
        lua_pushnumber(co, (double)res->latency_us / 1000.0);
        set_field(co, "latency_ms");
    }
    lua_pushlstring(co, res->body != NULL ? res->body : "", res->body != NULL ? res->body_len : 0);
    set_field(co, "body");
    push_headers(co, res);
    lua_pushliteral(co, "headers");
    lua_pushvalue(co, -2);
    lua_rawset(co, -4);
    lua_pushcclosure(co, l_header, 1); /* takes the headers */
    set_field(co, "header");
    worker_conn_release(&a->u->conn); /* copied: the script's next request may reuse them */
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
        worker_stats_error(u->run->stats, step_of(u)->endpoint, WORKER_ERR_CHECK);
    lua_pushboolean(L, ok);
    return 1;
}

const lc_lua_host_fn_t worker_lua_host_fns[] = {
    {"http", "get", l_get, LC_LUA_HOST_YIELDS},     {"http", "post", l_post, LC_LUA_HOST_YIELDS},
    {"http", "put", l_put, LC_LUA_HOST_YIELDS},     {"http", "patch", l_patch, LC_LUA_HOST_YIELDS},
    {"http", "del", l_del, LC_LUA_HOST_YIELDS},     {NULL, "sleep", l_sleep, LC_LUA_HOST_YIELDS},
    {NULL, "check", l_check, 0},
};
const size_t worker_lua_n_host_fns = sizeof worker_lua_host_fns / sizeof worker_lua_host_fns[0];
