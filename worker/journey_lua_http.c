/* journey_lua_http.c — http.get/post/put/patch/del/head/request for scripts: the request is
 * checked and built from the call's arguments (the run's target only), sent through the
 * user's connection, and the coroutine yields until the answer; a redirect the request may
 * follow is sent again from what it kept (journey_lua.c decides when). */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <lauxlib.h>

#include "bufpool.h"
#include "journey_http.h"
#include "journey_lua_internal.h"
#include "lc_err.h"
#include "redirect.h"
#include "user_internal.h"

#define HEADERS_MAX 64u        /* per request, as a scenario's (LC_SCENARIO_MAX_HEADERS) */
#define HEADER_NAME_MAX 256u
#define HEADER_VALUE_MAX 8192u

static const lc_program_t *prog_of(const worker_user_t *u)
{
    return u->run->plan->program;
}

/* What one call asks for: where its arguments are. */
typedef struct call_s {
    const char *fn;     /* "http.get", for errors */
    const char *method; /* static text */
    int url;            /* argument index of the URL */
    int body;           /* of the body, 0: none */
    int opts;           /* of opts */
} call_t;

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

static void append(lua_State *L, const call_t *c, lc_buf_t *out, const char *s, size_t len)
{
    if (lc_buf_append(out, s, len) != 0)
        worker_lua_error(L, "%s: out of memory", c->fn);
}

/* One "name: value" of opts.headers (key at -2, value at -1) into out. */
static void add_header(lua_State *L, const call_t *c, lc_buf_t *out, worker_script_req_t *sr,
                       bool *content_type)
{
    static const char *const ours[] = {"Host", "Content-Length", "Transfer-Encoding", NULL};
    size_t nlen, vlen;
    if (lua_type(L, -2) != LUA_TSTRING || !(lua_type(L, -1) == LUA_TSTRING ||
                                            lua_type(L, -1) == LUA_TNUMBER))
        worker_lua_error(L, "%s: opts.headers: expected name = value strings", c->fn);
    const char *name = lua_tolstring(L, -2, &nlen);
    lua_pushvalue(L, -1); /* tolstring on a copy: converting the value in place is fine, but */
    const char *value = lua_tolstring(L, -1, &vlen); /* not a habit to have next to lua_next */
    if (!header_name_ok(name, nlen))
        worker_lua_error(L, "%s: opts.headers: \"%s\" is not a header name", c->fn, name);
    if (!header_value_ok(value, vlen))
        worker_lua_error(L, "%s: opts.headers.%s: a CR, LF or NUL byte, or longer than %u bytes",
                         c->fn, name, HEADER_VALUE_MAX);
    for (size_t i = 0; ours[i] != NULL; i++)
        if (strcasecmp(name, ours[i]) == 0)
            worker_lua_error(L, "%s: opts.headers: %s is set by the worker", c->fn, ours[i]);
    sr->sets_user_agent |= strcasecmp(name, "User-Agent") == 0;
    *content_type |= strcasecmp(name, "Content-Type") == 0;
    append(L, c, out, name, nlen);
    append(L, c, out, ": ", 2);
    append(L, c, out, value, vlen);
    append(L, c, out, "\r\n", 2);
    lua_pop(L, 1);
}

/* opts.headers (a table at idx) into out. */
static void read_headers(lua_State *L, const call_t *c, int idx, lc_buf_t *out,
                         worker_script_req_t *sr, bool *content_type)
{
    size_t n = 0;
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        if (++n > HEADERS_MAX)
            worker_lua_error(L, "%s: opts.headers: more than %u", c->fn, HEADERS_MAX);
        add_header(L, c, out, sr, content_type);
        lua_pop(L, 1);
    }
}

/* The options a call reads. */
enum { OPT_NAME, OPT_TIMEOUT, OPT_FOLLOW, OPT_HEADERS, OPT_BODY, OPT_JSON, N_OPTS };
static const char *const opt_names[N_OPTS] = {"name", "timeout_ms", "follow_redirects",
                                              "headers", "body", "json"};

/* Where each option's value is on the stack (0: not given): one pass over opts, rather than a
 * lookup, with its key's string interned again, per option and request. */
typedef struct opts_s {
    int at[N_OPTS];
} opts_t;

static size_t opt_index(lua_State *L, int key)
{
    size_t len, i = 0;
    const char *k = lua_type(L, key) == LUA_TSTRING ? lua_tolstring(L, key, &len) : NULL;
    while (k != NULL && i < N_OPTS && !(strlen(opt_names[i]) == len &&
                                        memcmp(k, opt_names[i], len) == 0))
        i++;
    return k != NULL ? i : N_OPTS;
}

/* Any other key is ignored; the values stay on the stack until the call yields. */
static void gather_opts(lua_State *L, const call_t *c, opts_t *o)
{
    memset(o, 0, sizeof *o);
    if (c->opts == 0 || lua_isnoneornil(L, c->opts))
        return;
    luaL_checktype(L, c->opts, LUA_TTABLE);
    lua_pushnil(L);
    while (lua_next(L, c->opts) != 0) {
        size_t i = opt_index(L, -2);
        if (i == N_OPTS) {
            lua_pop(L, 1);
            continue;
        }
        lua_insert(L, -2); /* the value below the key lua_next goes on from */
        o->at[i] = lua_gettop(L) - 1;
    }
}

/* Option i's value pushed, or nothing pushed when it was not given. */
static bool opt(lua_State *L, const opts_t *o, int i)
{
    if (o->at[i] == 0)
        return false;
    lua_pushvalue(L, o->at[i]);
    return true;
}

static uint32_t opt_uint(lua_State *L, const call_t *c, const opts_t *o, int i, uint32_t lo,
                         uint32_t hi, uint32_t def)
{
    if (!opt(L, o, i))
        return def;
    lua_Number v = lua_tonumber(L, -1);
    lua_pop(L, 1);
    if (!(v >= lo && v <= hi))
        worker_lua_error(L, "%s: opts.%s: expected %u to %u", c->fn, opt_names[i], lo, hi);
    return (uint32_t)v;
}

/* opts.name, opts.timeout_ms, opts.follow_redirects into lu. */
static void read_counting(lua_State *L, worker_user_t *u, const call_t *c, const opts_t *o,
                          worker_lua_user_t *lu)
{
    if (opt(L, o, OPT_NAME)) {
        const char *name = lua_tostring(L, -1);
        int ep = name != NULL ? lc_program_endpoint(prog_of(u), name) : -1;
        if (ep < 0)
            worker_lua_error(L, "%s: opts.name: no endpoint named \"%s\" (a lua step's "
                             "\"endpoints\" names those its requests may be counted under)",
                             c->fn, name ? name : "?");
        lu->endpoint = (uint32_t)ep;
        lua_pop(L, 1);
    }
    lu->timeout_ms = opt_uint(L, c, o, OPT_TIMEOUT, 1, 3600000, lu->timeout_ms);
    lu->follow = (uint8_t)opt_uint(L, c, o, OPT_FOLLOW, 0, LC_JOURNEY_REDIRECTS_MAX, lu->follow);
}

/* The body: the call's argument, or opts.body, or opts.json encoded (which makes the
 * Content-Type application/json unless the headers name one). */
static void read_body(lua_State *L, const call_t *c, const opts_t *o, worker_script_req_t *sr,
                      bool *json)
{
    *json = false;
    if (c->body != 0 && !lua_isnoneornil(L, c->body)) {
        sr->body = luaL_checklstring(L, c->body, &sr->body_len);
        return;
    }
    if (opt(L, o, OPT_BODY)) {
        if (lua_type(L, -1) != LUA_TSTRING)
            worker_lua_error(L, "%s: opts.body: expected a string", c->fn);
        sr->body = lua_tolstring(L, -1, &sr->body_len); /* on the stack until the call ends */
        return;
    }
    if (opt(L, o, OPT_JSON)) {
        lc_lua_json_encode(L, lua_gettop(L));
        sr->body = lua_tolstring(L, -1, &sr->body_len);
        *json = true;
    }
}

/* Headers and options into sr (the headers into the engine's body scratch, free while a host
 * function runs: nothing else renders on this thread meanwhile). */
static void read_request(lua_State *L, worker_user_t *u, const call_t *c, worker_script_req_t *sr,
                         worker_lua_user_t *lu)
{
    lc_buf_t *out = &u->run->engine->body_scratch;
    bool content_type = false, json;
    opts_t o;
    gather_opts(L, c, &o);
    out->len = 0;
    append(L, c, out, "", 0);
    read_counting(L, u, c, &o, lu);
    if (opt(L, &o, OPT_HEADERS)) {
        if (!lua_istable(L, -1))
            worker_lua_error(L, "%s: opts.headers: expected a table of name = value", c->fn);
        read_headers(L, c, lua_gettop(L), out, sr, &content_type);
    }
    read_body(L, c, &o, sr, &json);
    if (json && !content_type)
        append(L, c, out, "Content-Type: application/json\r\n", 32);
    sr->headers = out->data;
    sr->headers_len = out->len;
}

/* The request target: a path on the run's target (its base path before it), or a URL of one
 * of the scenario's origins (target or targets). Anything else is another host: a script
 * error. *owned: free it after. */
static void read_target(lua_State *L, worker_user_t *u, const call_t *c, worker_script_req_t *sr,
                        char **owned)
{
    size_t len;
    const char *path = luaL_checklstring(L, c->url, &len);
    const char *base = u->run->plan->scenario.url.base_path;
    *owned = NULL;
    sr->origin = 0;
    if (len > 0 && path[0] == '/' && (len == 1 || path[1] != '/')) {
        if (base[0] != '\0') {
            lua_pushstring(L, base);
            lua_pushvalue(L, c->url);
            lua_concat(L, 2);
            path = lua_tolstring(L, -1, &len); /* on the stack until the call yields */
        }
        sr->target = path;
        sr->target_len = len;
        return;
    }
    if (!worker_journey_listed_url(u, path, len, owned, &sr->origin))
        worker_lua_error(L, "%s: \"%.200s\" is neither a path of the run's target (%.200s) nor a "
                         "URL of one of its targets: a script reaches those only", c->fn, path,
                         u->run->plan->scenario.target);
    sr->target = *owned;
    sr->target_len = strlen(*owned);
}

/* What the answer needs of the request (lu->hold): its target when the answer's cookies go
 * into the jar, and its headers and body too when it may follow a redirect (the Lua values
 * they came from may be collected while it waits). A buffer of the engine's pool: nothing is
 * allocated per request, and a user that waits on anything else holds none. */
static int hold(worker_user_t *u, worker_lua_user_t *lu, const worker_script_req_t *sr)
{
    bool again = lu->follow > 0;
    assert(lu->hold == NULL);
    lu->method = sr->method;
    lu->hold_target = (uint32_t)sr->target_len;
    lu->hold_headers = again ? (uint32_t)sr->headers_len : 0;
    lu->hold_body = again && sr->body != NULL;
    if (!again && !sr->cookies)
        return 0;
    lc_buf_t *h = lu->hold = worker_bufpool_take(&u->run->engine->pool);
    if (h == NULL)
        return LC_ENOMEM;
    int rv = lc_buf_append(h, sr->target, sr->target_len);
    if (rv == 0 && again)
        rv = lc_buf_append(h, sr->headers, sr->headers_len);
    if (rv == 0 && lu->hold_body)
        rv = lc_buf_append(h, sr->body, sr->body_len);
    return rv;
}

void worker_lua_unhold(worker_user_t *u)
{
    worker_lua_user_t *lu = u->js != NULL ? u->js->lua : NULL;
    if (lu == NULL || lu->hold == NULL)
        return;
    worker_bufpool_give(&u->run->engine->pool, lu->hold);
    lu->hold = NULL;
}

static const char *send_error(int rv)
{
    return rv == LC_EINVAL   ? "a space or a control byte in the path"
           : rv == LC_ETOOBIG ? "the request is over 8 MiB"
                              : "out of memory";
}

static int http_call(lua_State *L, const call_t *c)
{
    worker_user_t *u = worker_lua_current(L, c->fn);
    worker_lua_user_t *lu = u->js->lua;
    const lc_jlua_t *l = &prog_of(u)->luas[lu->step];
    worker_script_req_t sr = {.method = c->method, .headers = "", .cookies = l->cookies};
    char *owned;
    assert(lu != NULL && lu->wait == WORKER_LUA_IDLE);
    lu->endpoint = l->endpoint;
    lu->timeout_ms = l->timeout_ms;
    lu->follow = (uint8_t)l->follow_redirects;
    lu->hops = 0;
    lu->head = strcmp(c->method, "HEAD") == 0;
    luaL_checklstring(L, c->url, NULL);
    read_request(L, u, c, &sr, lu);
    read_target(L, u, c, &sr, &owned); /* last: nothing raises between it and the free */
    lu->origin = sr.origin;
    int rv = hold(u, lu, &sr);
    lu->wait = WORKER_LUA_HTTP;
    if (rv == 0)
        rv = worker_journey_send_script(u, &sr);
    free(owned);
    if (rv != 0) {
        lu->wait = WORKER_LUA_IDLE;
        worker_lua_unhold(u);
        return worker_lua_error(L, "%s: %s", c->fn, send_error(rv));
    }
    return lua_yield(L, 0);
}

int worker_lua_send_hop(worker_user_t *u, int status, const char *target)
{
    worker_lua_user_t *lu = u->js->lua;
    assert(lu->hold != NULL); /* a request that may follow redirects holds its parts */
    const char *h = lu->hold->data;
    if (worker_redirect_to_get(status, lu->method)) {
        lu->method = "GET";
        lu->hold_body = false;
    }
    size_t body_at = lu->hold_target + lu->hold_headers;
    worker_script_req_t sr = {
        .method = lu->method,
        .origin = lu->origin,
        .target = target,
        .target_len = strlen(target),
        .headers = h + lu->hold_target,
        .headers_len = lu->hold_headers,
        .body = lu->hold_body ? h + body_at : NULL,
        .body_len = lu->hold_body ? lu->hold->len - body_at : 0,
        .cookies = prog_of(u)->luas[lu->step].cookies,
    };
    sr.sets_user_agent = memmem(sr.headers, sr.headers_len, "User-Agent:", 11) != NULL;
    lu->hops++;
    return worker_journey_send_script(u, &sr);
}

#define HTTP_FN(cname, name, method, body, opts)                                             \
    static int cname(lua_State *L)                                                           \
    {                                                                                        \
        static const call_t c = {"http." name, method, 1, body, opts};                       \
        return http_call(L, &c);                                                             \
    }

HTTP_FN(l_get, "get", "GET", 0, 2)
HTTP_FN(l_head, "head", "HEAD", 0, 2)
HTTP_FN(l_del, "del", "DELETE", 0, 2)
HTTP_FN(l_post, "post", "POST", 2, 3)
HTTP_FN(l_put, "put", "PUT", 2, 3)
HTTP_FN(l_patch, "patch", "PATCH", 2, 3)

/* http.request(method, url, opts): any of the methods below, in any case. */
static int l_request(lua_State *L)
{
    static const char *const methods[] = {"GET",    "HEAD", "POST",    "PUT",
                                          "PATCH",  "DELETE", "OPTIONS", NULL};
    size_t len;
    const char *m = luaL_checklstring(L, 1, &len);
    for (size_t i = 0; methods[i] != NULL; i++) {
        if (strcasecmp(m, methods[i]) == 0 && strlen(methods[i]) == len) {
            call_t c = {"http.request", methods[i], 2, 0, 3};
            return http_call(L, &c);
        }
    }
    return worker_lua_error(L, "http.request: method \"%.32s\": expected one of GET, HEAD, POST, "
                            "PUT, PATCH, DELETE, OPTIONS", m);
}

const lc_lua_host_fn_t worker_lua_http_fns[] = {
    {"http", "get", l_get, LC_LUA_HOST_YIELDS},         {"http", "head", l_head, LC_LUA_HOST_YIELDS},
    {"http", "post", l_post, LC_LUA_HOST_YIELDS},       {"http", "put", l_put, LC_LUA_HOST_YIELDS},
    {"http", "patch", l_patch, LC_LUA_HOST_YIELDS},     {"http", "del", l_del, LC_LUA_HOST_YIELDS},
    {"http", "request", l_request, LC_LUA_HOST_YIELDS},
};
const size_t worker_lua_n_http_fns = sizeof worker_lua_http_fns / sizeof worker_lua_http_fns[0];
