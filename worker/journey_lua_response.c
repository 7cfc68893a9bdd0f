/* journey_lua_response.c — the response a script's http.* call returns: status, ok, error,
 * latency_ms, and on demand headers, body, header(n), cookie(n) (the user's jar), json(path)
 * (lc_json_scan, no tree) and regex(re) (PCRE2 with its match limits, as declarative
 * extracts), with the compiled paths and patterns cached per run on each engine. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "journey_http.h"
#include "journey_lua_internal.h"
#include "lc_err.h"
#include "lc_extract.h"
#include "stats.h"
#include "user_internal.h"
#include "user_conns.h"

#define HEADER_NAME_MAX 256u
#define SOURCE_MAX 1024u /* bytes of a json path or a regex */

static const char meta_key; /* its address keys the responses' shared metatable */

/* ---- the extractor cache -------------------------------------------------------------- */

static const char *const pick_names[] = {"first", "last", "random", "all", "count", NULL};

/* The compiled json path or regex for (kind, pick, src): from the run's cache, or compiled
 * (and cached while there is room; else *temp says the caller frees it). */
static lc_extractor_t *extractor(lua_State *L, worker_lua_run_t *lr, char kind, int pick,
                                 const char *src, size_t len, bool *temp)
{
    char err[256];
    *temp = false;
    for (uint32_t i = 0; i < lr->n_cache; i++) {
        const worker_lua_xcache_t *c = &lr->cache[i];
        if (c->kind == kind && c->pick == pick && c->len == len && memcmp(c->src, src, len) == 0)
            return c->x;
    }
    lc_extractor_t *x = NULL;
    int rv = kind == 'j' ? lc_extractor_json(&x, src, (enum lc_pick)pick, err, sizeof err)
                         : lc_extractor_regex(&x, src, NULL, (enum lc_pick)pick, err, sizeof err);
    if (rv != 0)
        worker_lua_error(L, "%s: %s", kind == 'j' ? "json" : "regex",
                         rv == LC_ENOMEM ? "out of memory" : err);
    char *copy = lr->n_cache < WORKER_LUA_XCACHE_MAX ? malloc(len + 1) : NULL;
    if (copy == NULL) {
        *temp = true;
        return x;
    }
    memcpy(copy, src, len + 1);
    lr->cache[lr->n_cache++] = (worker_lua_xcache_t){copy, len, kind, (uint8_t)pick, x};
    return x;
}

void worker_lua_cache_free(worker_lua_run_t *lr)
{
    for (uint32_t i = 0; i < lr->n_cache; i++) {
        free(lr->cache[i].src);
        lc_extractor_free(lr->cache[i].x);
    }
    lr->n_cache = 0;
}

/* ---- methods ---------------------------------------------------------------------------- */

/* Methods are closures over their response (upvalue 1), so r.json(p) and r:json(p) both
 * work: the first argument is skipped when it is the response itself. */
static int first_arg(lua_State *L)
{
    return lua_rawequal(L, 1, lua_upvalueindex(1)) ? 2 : 1;
}

/* What a response is: one userdata at index 1 of its table (an array slot LuaJIT keeps in the
 * table's own allocation: no hash part until the script stores something), with the answer's
 * outcome and bytes: its header block (name\0value\0..., lowercase names, as
 * worker_conn_header_next reads it), then its body, then the path of the URL it answered
 * (NUL-terminated, for cookie(n)). status, ok, error and latency_ms are read from it by the
 * metatable's __index. */
typedef struct kept_s {
    double latency_ms; /* < 0: none (the request was not sent) */
    uint32_t headers_len;
    uint16_t status;   /* 0: no complete answer */
    int8_t kind;       /* WORKER_KIND_OK (-1), or the error kind it was counted with */
    uint8_t origin;    /* of the URL answered */
    uint16_t path_len; /* its path's bytes with their NUL, after the body */
    char bytes[];
} kept_t;

/* The kept answer of the response at idx, and the length of its bytes. A script may have
 * stored something else at r[1] (a raw slot: no metamethod sees the write); the only full
 * userdata it can reach are responses' kept answers, so the type and size tell them apart. */
static const kept_t *kept_of(lua_State *L, int idx, size_t *len)
{
    lua_rawgeti(L, idx, 1);
    const kept_t *k = lua_type(L, -1) == LUA_TUSERDATA ? lua_touserdata(L, -1) : NULL;
    size_t n = k != NULL ? lua_objlen(L, -1) : 0;
    if (n < sizeof *k)
        worker_lua_error(L, "this response's [1] was replaced: it is the response's own");
    *len = n - sizeof *k;
    lua_pop(L, 1); /* the response holds it: the bytes stay valid meanwhile */
    return k;
}

/* The body of the response at idx: bytes and length. */
static const char *body_at(lua_State *L, int idx, size_t *len)
{
    size_t n;
    const kept_t *k = kept_of(L, idx, &n);
    *len = n - k->headers_len - k->path_len;
    return k->bytes + k->headers_len;
}

/* The header block of the response at idx, for worker_conn_header_next. */
static worker_conn_result_t headers_at(lua_State *L, int idx)
{
    size_t n;
    const kept_t *k = kept_of(L, idx, &n);
    return (worker_conn_result_t){.headers = k->bytes, .headers_len = k->headers_len};
}

/* A value out of lc_extractor_run as Lua has it: numbers and booleans typed, null as nil,
 * lists and objects (and pick "all") decoded into tables. */
static int push_extracted(lua_State *L, const lc_buf_t *out, uint8_t type)
{
    const char *d = out->data != NULL ? out->data : "";
    switch (type) {
    case LC_V_NUMBER:
        lua_pushnumber(L, strtod(d, NULL));
        return 1;
    case LC_V_BOOL:
        lua_pushboolean(L, d[0] == 't');
        return 1;
    case LC_V_NULL:
        lua_pushnil(L);
        return 1;
    case LC_V_JSON:
        return lc_lua_json_push(L, d, out->len);
    default:
        lua_pushlstring(L, d, out->len);
        return 1;
    }
}

/* r:json(path [, pick]) and r:regex(re [, pick]): the first match (or pick's: "last",
 * "random", "all" as a list, "count"); nil when nothing matches. */
static int extract(lua_State *L, char kind)
{
    const char *fn = kind == 'j' ? "json" : "regex";
    worker_user_t *u = worker_lua_current(L, fn);
    int a = first_arg(L);
    size_t len, blen;
    const char *src = luaL_checklstring(L, a, &len);
    int pick = luaL_checkoption(L, a + 1, "first", pick_names);
    if (len > SOURCE_MAX || strlen(src) != len)
        return worker_lua_error(L, "%s: at most %u bytes, without NUL", fn, SOURCE_MAX);
    const char *body = body_at(L, lua_upvalueindex(1), &blen); /* nothing raises once x is */
    bool temp;
    lc_extractor_t *x = extractor(L, u->run->lua, kind, pick, src, len, &temp);
    lc_buf_t *out = &u->run->engine->body_scratch; /* free while the script runs */
    uint8_t type = LC_V_STRING;
    out->len = 0;
    int rv = lc_extractor_run(x, body, blen, &u->run->engine->rng, out, &type);
    if (temp)
        lc_extractor_free(x);
    lc_lua_check_limits(L); /* a long match: the deadline is met here */
    if (rv == LC_ENOTFOUND)
        return 0;
    if (rv != 0)
        return worker_lua_error(L, "%s: %s", fn, rv == LC_ENOMEM ? "out of memory"
                                : kind == 'j' ? "the body is not JSON where the path goes"
                                              : "the pattern reached its match limit");
    return push_extracted(L, out, type);
}

static int l_json(lua_State *L)
{
    return extract(L, 'j');
}

static int l_regex(lua_State *L)
{
    return extract(L, 'r');
}

/* r:header(name): the header, any case (a repeated one's values joined by ", "); nil when
 * it did not come. */
static int l_header(lua_State *L)
{
    size_t len, vlen, pos = 0;
    const char *name = luaL_checklstring(L, first_arg(L), &len), *hname, *value;
    char low[HEADER_NAME_MAX + 1];
    if (len > HEADER_NAME_MAX)
        return 0;
    for (size_t i = 0; i < len; i++)
        low[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] | 0x20 : name[i]);
    low[len] = '\0';
    worker_conn_result_t h = headers_at(L, lua_upvalueindex(1));
    int found = 0;
    while (worker_conn_header_next(&h, &pos, &hname, &value, &vlen)) {
        if (strcmp(hname, low) != 0)
            continue;
        if (found++ > 0)
            lua_pushliteral(L, ", ");
        lua_pushlstring(L, value, vlen);
    }
    if (found > 1)
        lua_concat(L, 2 * found - 1);
    return found > 0;
}

/* r:cookie(name): the cookie the user's jar, as it is now, would send back to the URL r
 * answered (its host and path, after redirects), as a declarative cookie extract reads it;
 * nil when it has none. */
static int l_cookie(lua_State *L)
{
    worker_user_t *u = worker_lua_current(L, "cookie");
    size_t len, n;
    const char *name = luaL_checklstring(L, first_arg(L), &len);
    const kept_t *k = kept_of(L, lua_upvalueindex(1), &n);
    const char *path = k->bytes + n - k->path_len;
    lc_value_t v;
    assert(k->path_len > 0 && path[k->path_len - 1] == '\0');
    if (!worker_journey_cookie(u, k->origin, path, name, len, &v))
        return 0;
    lua_pushlstring(L, v.data, v.len);
    return 1;
}

/* The response's headers as a table (lowercase names; a repeated one's values joined with
 * ", "), from the header block of the response at idx. */
static void push_headers(lua_State *L, int idx)
{
    const char *name, *value;
    size_t vlen, pos = 0;
    worker_conn_result_t h = headers_at(L, idx);
    lua_newtable(L);
    while (worker_conn_header_next(&h, &pos, &name, &value, &vlen)) {
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

/* r.status, r.ok, r.error or r.latency_ms of the response at 1, pushed; false for another
 * key (nothing pushed). */
static bool outcome(lua_State *L, const char *key)
{
    size_t n;
    const kept_t *k = kept_of(L, 1, &n);
    if (strcmp(key, "status") == 0)
        lua_pushnumber(L, k->status);
    else if (strcmp(key, "ok") == 0)
        lua_pushboolean(L, k->kind == WORKER_KIND_OK);
    else if (strcmp(key, "error") == 0 && k->kind != WORKER_KIND_OK)
        lua_pushstring(L, worker_err_kind_name(k->kind));
    else if (strcmp(key, "latency_ms") == 0 && k->latency_ms >= 0)
        lua_pushnumber(L, k->latency_ms);
    else if (strcmp(key, "error") == 0 || strcmp(key, "latency_ms") == 0)
        lua_pushnil(L);
    else
        return false;
    return true;
}

/* r.status, r.ok, r.error, r.latency_ms (from the kept answer), r.body and r.headers (made on
 * first use and kept in the response), and the methods (a
 * closure over the response at each use: keeping them would grow every response that a
 * script reads one value of). */
static int resp_index(lua_State *L)
{
    static const struct {
        const char *name;
        lua_CFunction fn;
    } methods[] = {{"header", l_header}, {"cookie", l_cookie}, {"json", l_json},
                   {"regex", l_regex}};
    if (lua_type(L, 2) != LUA_TSTRING)
        return 0;
    const char *k = lua_tostring(L, 2);
    size_t i = 0;
    while (i < sizeof methods / sizeof methods[0] && strcmp(k, methods[i].name) != 0)
        i++;
    if (i < sizeof methods / sizeof methods[0]) {
        lua_pushvalue(L, 1);
        lua_pushcclosure(L, methods[i].fn, 1);
        return 1;
    }
    if (outcome(L, k))
        return 1;
    if (strcmp(k, "body") == 0) {
        size_t len;
        const char *b = body_at(L, 1, &len);
        lua_pushlstring(L, b, len);
    } else if (strcmp(k, "headers") == 0) {
        push_headers(L, 1);
    } else {
        return 0;
    }
    lua_pushvalue(L, 2);
    lua_pushvalue(L, -2);
    lua_rawset(L, 1); /* cached in the response */
    return 1;
}

/* ---- the response --------------------------------------------------------------------- */

/* The outcome, the header block and the body go into one userdata the response holds
 * (counted against the run's memory cap): r.headers and r.body become Lua values only if the
 * script reads them; header(), json() and regex() read the bytes where they are. */
static void keep(lua_State *L, const worker_lua_answer_t *a)
{
    const worker_conn_result_t *res = a->res;
    size_t hlen = res->headers != NULL ? res->headers_len : 0;
    size_t blen = res->body != NULL ? res->body_len : 0;
    size_t plen = strlen(a->path) + 1;
    assert(hlen <= UINT32_MAX && a->kind >= WORKER_KIND_OK && a->kind <= INT8_MAX);
    assert(a->path[0] == '/' && plen <= WORKER_COOKIE_PATH_MAX);
    kept_t *k = lua_newuserdata(L, sizeof *k + hlen + blen + plen);
    k->latency_ms = res->latency_us != WORKER_NO_LATENCY ? (double)res->latency_us / 1000.0 : -1;
    k->headers_len = (uint32_t)hlen;
    k->status = res->kind == WORKER_KIND_OK ? (uint16_t)res->status : 0;
    k->kind = (int8_t)a->kind;
    k->origin = a->origin;
    k->path_len = (uint16_t)plen;
    memcpy(k->bytes + hlen + blen, a->path, plen);
    if (hlen > 0)
        memcpy(k->bytes, res->headers, hlen);
    if (blen > 0)
        memcpy(k->bytes + hlen, res->body, blen);
    lua_rawseti(L, -2, 1);
}

int worker_lua_push_response(lua_State *co, void *ud)
{
    const worker_lua_answer_t *a = ud;
    lua_createtable(co, 1, 0); /* the kept answer at [1], in the table's allocation */
    keep(co, a);
    worker_lua_push_meta(co, &meta_key, resp_index, NULL, "response");
    lua_setmetatable(co, -2);
    worker_conn_release(worker_user_conn(a->u)); /* copied: the script's next request may reuse them */
    return 1;
}
