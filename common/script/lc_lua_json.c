/* lc_lua_json.c — json.encode / json.decode for scripts, and lc_lua_json_push for the engine:
 * bounded in depth and size, every malformed input a Lua error, never a crash. Decoding
 * reads with lc_json_scan's checked readers, so it accepts exactly RFC 8259's grammar. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "lc_err.h"
#include "lc_json_scan.h"
#include "lc_json_scan_internal.h"
#include "lc_lua_internal.h"

#define NUMBER_TEXT_MAX 512 /* a longer number literal is refused (no double needs it) */
#define CHECK_EVERY 256     /* values between two looks at the deadline */

/* json.null: a light userdata no script can make otherwise; decode gives it for null, and
 * encode writes it as null (a nil in an array would end the array). */
static const char null_key;

static void push_null(lua_State *L)
{
    lua_pushlightuserdata(L, (void *)&null_key);
}

void lc_lua_scratch_trim(lc_buf_t *b)
{
    if (b->cap > ((size_t)64 << 10))
        lc_buf_free(b);
}

/* ---- decode ---------------------------------------------------------------------------- */

typedef struct dec_s {
    lua_State *L;
    lc_lua_t *s;
    jcursor_t c;
    unsigned values;
} dec_t;

static int dec_fail(dec_t *d, const char *what)
{
    return lc_lua_errorf(d->L, "json.decode: %s at byte %zu", what, d->c.pos + 1);
}

/* The raw text of a JSON string (between its quotes), decoded, pushed. The sandbox's scratch
 * holds the decoded bytes: an error raised later cannot leak it. */
static void push_string(dec_t *d, const char *raw, size_t len, bool escaped)
{
    if (!escaped) {
        lua_pushlstring(d->L, raw, len);
        return;
    }
    d->s->scratch.len = 0;
    int rv = lc_json_string_decode(raw, len, &d->s->scratch);
    if (rv != 0)
        dec_fail(d, rv == LC_ENOMEM ? "out of memory" : "a bad escape or a lone surrogate");
    lua_pushlstring(d->L, d->s->scratch.data != NULL ? d->s->scratch.data : "", d->s->scratch.len);
    lc_lua_scratch_trim(&d->s->scratch);
}

static void push_number(dec_t *d, const char *text, size_t len)
{
    char buf[NUMBER_TEXT_MAX];
    if (len >= sizeof buf)
        dec_fail(d, "a number of more than 511 characters");
    memcpy(buf, text, len);
    buf[len] = '\0';
    lua_pushnumber(d->L, strtod(buf, NULL));
}

static void dec_value(dec_t *d, int depth, bool top);

static void dec_scalar(dec_t *d, bool top)
{
    size_t start = d->c.pos;
    uint8_t type;
    bool escaped = false;
    if (jscan_scalar(&d->c, top, &type, &escaped) != 0)
        dec_fail(d, "not JSON");
    const char *text = d->c.s + start;
    size_t len = d->c.pos - start;
    switch (type) {
    case LC_V_STRING: push_string(d, text + 1, len - 2, escaped); break;
    case LC_V_BOOL: lua_pushboolean(d->L, text[0] == 't'); break;
    case LC_V_NULL: push_null(d->L); break;
    default: push_number(d, text, len); break;
    }
}

/* After an element or member: true at a ',' (skipped), false at close (skipped). */
static bool dec_more(dec_t *d, char close)
{
    jcursor_skip_ws(&d->c);
    int ch = jcursor_peek(&d->c);
    if (ch == ',') {
        d->c.pos++;
        jcursor_skip_ws(&d->c);
        return true;
    }
    if (ch != close)
        dec_fail(d, close == ']' ? "expected ',' or ']'" : "expected ',' or '}'");
    d->c.pos++;
    return false;
}

static void dec_array(dec_t *d, int depth)
{
    lua_newtable(d->L);
    d->c.pos++;
    jcursor_skip_ws(&d->c);
    if (jcursor_peek(&d->c) == ']') {
        d->c.pos++;
        return;
    }
    int i = 1;
    do {
        dec_value(d, depth + 1, false);
        lua_rawseti(d->L, -2, i++);
    } while (dec_more(d, ']'));
}

static void dec_object(dec_t *d, int depth)
{
    lua_newtable(d->L);
    d->c.pos++;
    jcursor_skip_ws(&d->c);
    if (jcursor_peek(&d->c) == '}') {
        d->c.pos++;
        return;
    }
    do {
        const char *name;
        size_t len;
        bool escaped = false;
        if (jscan_member_name(&d->c, &name, &len, &escaped) != 0)
            dec_fail(d, "expected a member name and ':'");
        push_string(d, name, len, escaped);
        dec_value(d, depth + 1, false);
        lua_rawset(d->L, -3); /* a repeated name: the last one wins, as most decoders do */
    } while (dec_more(d, '}'));
}

static void dec_value(dec_t *d, int depth, bool top)
{
    if (++d->values % CHECK_EVERY == 0)
        lc_lua_limits_check(d->s, d->L);
    luaL_checkstack(d->L, 4, "json.decode: nested too deeply");
    jcursor_skip_ws(&d->c);
    int ch = jcursor_peek(&d->c);
    if ((ch == '[' || ch == '{') && depth >= LC_LUA_JSON_DEPTH_MAX)
        lc_lua_errorf(d->L, "json.decode: nested deeper than %d at byte %zu", LC_LUA_JSON_DEPTH_MAX,
                   d->c.pos + 1);
    if (ch == '[')
        dec_array(d, depth);
    else if (ch == '{')
        dec_object(d, depth);
    else if (ch < 0)
        dec_fail(d, "the text ends where a value was expected");
    else
        dec_scalar(d, top);
}

int lc_lua_json_push(lua_State *L, const char *text, size_t len)
{
    if (len > LC_LUA_JSON_BYTES_MAX)
        return lc_lua_errorf(L, "json.decode: %zu bytes, more than the %u allowed", len,
                          LC_LUA_JSON_BYTES_MAX);
    dec_t d = {.L = L, .s = lc_lua_from(L), .c = {text, len, 0}};
    dec_value(&d, 0, true);
    jcursor_skip_ws(&d.c);
    if (d.c.pos != len)
        dec_fail(&d, "more after the value");
    return 1;
}

static int l_decode(lua_State *L)
{
    size_t len;
    const char *text = luaL_checklstring(L, 1, &len);
    lua_settop(L, 1);
    return lc_lua_json_push(L, text, len);
}

/* ---- encode ---------------------------------------------------------------------------- */

/* The text grows in the sandbox's own buffer, not a luaL_Buffer: walking tables pushes and
 * pops between the appends, which a luaL_Buffer does not allow. */
typedef struct enc_s {
    lua_State *L;
    lc_lua_t *s;
    lc_buf_t *out;
    unsigned values;
} enc_t;

static int enc_fail(enc_t *e, const char *fmt, const char *arg)
{
    return luaL_error(e->L, fmt, arg);
}

static void enc_add(enc_t *e, const char *s, size_t len)
{
    if (e->out->len + len > LC_LUA_JSON_BYTES_MAX)
        lc_lua_errorf(e->L, "json.encode: the text would be more than %u bytes",
                   LC_LUA_JSON_BYTES_MAX);
    if (lc_buf_append(e->out, s, len) != 0)
        enc_fail(e, "json.encode: %s", "out of memory");
}

static void enc_string(enc_t *e, int idx)
{
    size_t len;
    const char *s = lua_tolstring(e->L, idx, &len);
    lc_buf_t *out = &e->s->scratch;
    out->len = 0;
    if (lc_json_string_encode(s, len, out) != 0)
        enc_fail(e, "json.encode: %s", "out of memory");
    enc_add(e, out->data, out->len);
    lc_lua_scratch_trim(out);
}

static void enc_number(enc_t *e, double d)
{
    char num[40];
    if (!isfinite(d))
        enc_fail(e, "json.encode: %s is not a JSON number", isnan(d) ? "nan" : "inf");
    int n = snprintf(num, sizeof num, "%.14g", d);
    if (strtod(num, NULL) != d) /* 14 digits lost something: as many as it takes */
        n = snprintf(num, sizeof num, "%.17g", d);
    enc_add(e, num, (size_t)n);
}

/* The length of the table at idx when it is a sequence 1..n (n > 0) with nothing else, else
 * 0 (an object). */
static size_t sequence_len(lua_State *L, int idx)
{
    size_t n = lua_objlen(L, idx), count = 0;
    if (n == 0)
        return 0;
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        lua_pop(L, 1);
        double k = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : 0;
        if (k < 1 || k > (double)n || k != floor(k)) {
            lua_pop(L, 1);
            return 0;
        }
        count++;
    }
    return count == n ? n : 0;
}

static void enc_value(enc_t *e, int idx, int depth);

static void enc_array(enc_t *e, int idx, size_t n, int depth)
{
    enc_add(e, "[", 1);
    for (size_t i = 1; i <= n; i++) {
        if (i > 1)
            enc_add(e, ",", 1);
        lua_rawgeti(e->L, idx, (int)i);
        enc_value(e, lua_gettop(e->L), depth + 1);
        lua_pop(e->L, 1);
    }
    enc_add(e, "]", 1);
}

static void enc_object(enc_t *e, int idx, int depth)
{
    bool first = true;
    enc_add(e, "{", 1);
    lua_pushnil(e->L);
    while (lua_next(e->L, idx) != 0) {
        int t = lua_type(e->L, -2);
        if (t != LUA_TSTRING && t != LUA_TNUMBER)
            enc_fail(e, "json.encode: a key of type %s (object keys are strings)",
                     lua_typename(e->L, t));
        if (!first)
            enc_add(e, ",", 1);
        first = false;
        lua_pushvalue(e->L, -2); /* a copy, so tostring of a number key leaves next's alone */
        lua_tostring(e->L, -1);
        enc_string(e, lua_gettop(e->L));
        lua_pop(e->L, 1);
        enc_add(e, ":", 1);
        enc_value(e, lua_gettop(e->L), depth + 1);
        lua_pop(e->L, 1);
    }
    enc_add(e, "}", 1);
}

static void enc_value(enc_t *e, int idx, int depth)
{
    lua_State *L = e->L;
    if (depth >= LC_LUA_JSON_DEPTH_MAX && lua_type(L, idx) == LUA_TTABLE)
        luaL_error(L, "json.encode: nested deeper than %d (a table that holds itself?)",
                   LC_LUA_JSON_DEPTH_MAX);
    if (++e->values % CHECK_EVERY == 0)
        lc_lua_limits_check(e->s, L);
    luaL_checkstack(L, 6, "json.encode: nested too deeply");
    switch (lua_type(L, idx)) {
    case LUA_TNIL: enc_add(e, "null", 4); break;
    case LUA_TBOOLEAN: lua_toboolean(L, idx) ? enc_add(e, "true", 4) : enc_add(e, "false", 5); break;
    case LUA_TNUMBER: enc_number(e, lua_tonumber(L, idx)); break;
    case LUA_TSTRING: enc_string(e, idx); break;
    case LUA_TTABLE: {
        size_t n = sequence_len(L, idx);
        if (n > 0)
            enc_array(e, idx, n, depth);
        else
            enc_object(e, idx, depth);
        break;
    }
    case LUA_TLIGHTUSERDATA:
        if (lua_touserdata(L, idx) == &null_key) {
            enc_add(e, "null", 4);
            break;
        }
        /* fall through */
    default:
        enc_fail(e, "json.encode: a %s has no JSON form", luaL_typename(L, idx));
    }
}

int lc_lua_json_encode(lua_State *L, int idx)
{
    lc_lua_t *s = lc_lua_from(L);
    enc_t e = {.L = L, .s = s, .out = &s->json_out};
    e.out->len = 0;
    enc_value(&e, idx, 0);
    lua_pushlstring(L, e.out->data != NULL ? e.out->data : "", e.out->len);
    lc_lua_scratch_trim(e.out);
    return 1;
}

static int l_encode(lua_State *L)
{
    luaL_checkany(L, 1);
    lua_settop(L, 1);
    return lc_lua_json_encode(L, 1);
}

void lc_lua_json_open(lua_State *L)
{
    lua_createtable(L, 0, 3);
    lua_pushcfunction(L, l_encode);
    lua_setfield(L, -2, "encode");
    lua_pushcfunction(L, l_decode);
    lua_setfield(L, -2, "decode");
    push_null(L);
    lua_setfield(L, -2, "null");
    lua_setfield(L, LUA_GLOBALSINDEX, "json");
}
