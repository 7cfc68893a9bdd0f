/* lc_lua_pattern.c — string.find, match, gmatch and gsub for the sandbox: Lua 5.1 patterns
 * as LuaJIT 2.1 matches them, by a matcher that counts its steps and looks at the deadline
 * as it goes. LuaJIT's own runs in C where the count hook never fires, and backtracks
 * exponentially: ("a"):rep(40):find(("a?"):rep(40)..("a"):rep(40)) would take hours. */
#include <assert.h>
#include <string.h>

#include <lauxlib.h>

#include "lc_lua_internal.h"

#define MAXCAPTURES 32   /* LUA_MAXCAPTURES */
#define MAXDEPTH 200     /* LuaJIT's LJ_MAX_XLEVEL: "pattern too complex" past it */
#define STEP_CHECK 1024u /* steps (match calls, characters scanned) between two checks */
#define CAP_UNFINISHED (-1)
#define CAP_POSITION (-2)

typedef struct pm_s {
    lua_State *L;
    lc_lua_t *s;
    const char *init, *end; /* the subject; Lua keeps a '\0' at *end */
    int level, depth;
    unsigned steps, next_check;
    struct {
        const char *at;
        ptrdiff_t len;
    } cap[MAXCAPTURES];
} pm_t;

static void pm_init(pm_t *m, lua_State *L, const char *str, size_t len)
{
    m->L = L;
    m->s = lc_lua_from(L);
    m->init = str;
    m->end = str + len;
    m->level = m->depth = 0;
    m->steps = 0;
    m->next_check = STEP_CHECK;
}

/* Counts n steps of work; past each STEP_CHECK, the deadline may raise from here. */
static void spend(pm_t *m, unsigned n)
{
    m->steps += n;
    if (m->steps >= m->next_check) {
        m->next_check = m->steps + STEP_CHECK;
        lc_lua_limits_check(m->s, m->L);
    }
}

/* ---- character classes: ASCII, as LuaJIT's (no locale) ------------------------------- */

static int c_lower(int c) { return c >= 'a' && c <= 'z'; }
static int c_upper(int c) { return c >= 'A' && c <= 'Z'; }
static int c_digit(int c) { return c >= '0' && c <= '9'; }
static int c_alpha(int c) { return c_lower(c) || c_upper(c); }

/* Whether c is in %cl; -1 when cl names no class (it then stands for itself). */
static int class_of(int c, int cl)
{
    int r;
    if (!c_alpha(cl))
        return -1;
    switch (cl | 0x20) {
    case 'a': r = c_alpha(c); break;
    case 'c': r = c < 0x20 || c == 0x7f; break;
    case 'd': r = c_digit(c); break;
    case 'g': r = c > 0x20 && c < 0x7f; break;
    case 'l': r = c_lower(c); break;
    case 'p': r = c > 0x20 && c < 0x7f && !c_alpha(c) && !c_digit(c); break;
    case 's': r = c == ' ' || (c >= '\t' && c <= '\r'); break;
    case 'u': r = c_upper(c); break;
    case 'w': r = c_alpha(c) || c_digit(c); break;
    case 'x': r = c_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'); break;
    case 'z': r = c == 0; break;
    default: return -1;
    }
    return c_upper(cl) ? !r : r;
}

static int match_class(int c, int cl)
{
    int r = class_of(c, cl);
    return r >= 0 ? r : cl == c;
}

/* p at '[', last at its ']'. */
static int in_set(int c, const char *p, const char *last)
{
    int yes = 1;
    if (p[1] == '^') {
        yes = 0;
        p++;
    }
    while (++p < last) {
        if (*p == '%') {
            p++;
            if (match_class(c, (unsigned char)*p))
                return yes;
        } else if (p[1] == '-' && p + 2 < last) {
            p += 2;
            if ((unsigned char)p[-2] <= c && c <= (unsigned char)*p)
                return yes;
        } else if ((unsigned char)*p == c) {
            return yes;
        }
    }
    return !yes;
}

/* Where the single-character class at p ends. */
static const char *class_end(pm_t *m, const char *p)
{
    char c = *p++;
    if (c == '%') {
        if (*p == '\0')
            luaL_error(m->L, "malformed pattern (ends with '%%')");
        return p + 1;
    }
    if (c == '[') {
        if (*p == '^')
            p++;
        do { /* the first character is in the set even if it is ']' */
            if (*p == '\0')
                luaL_error(m->L, "malformed pattern (missing ']')");
            if (*p++ == '%' && *p != '\0')
                p++;
        } while (*p != ']');
        return p + 1;
    }
    return p;
}

static int single(int c, const char *p, const char *ep)
{
    switch (*p) {
    case '.': return 1;
    case '%': return match_class(c, (unsigned char)p[1]);
    case '[': return in_set(c, p, ep - 1);
    default: return (unsigned char)*p == c;
    }
}

/* ---- matching ------------------------------------------------------------------------ */

static const char *match(pm_t *m, const char *s, const char *p);

static const char *balance(pm_t *m, const char *s, const char *p)
{
    if (p[0] == '\0' || p[1] == '\0')
        luaL_error(m->L, "unbalanced pattern");
    if (*s != *p)
        return NULL;
    int open = *p, close = p[1], depth = 1;
    while (++s < m->end) {
        spend(m, 1);
        if (*s == close) {
            if (--depth == 0)
                return s + 1;
        } else if (*s == open) {
            depth++;
        }
    }
    return NULL;
}

static const char *max_expand(pm_t *m, const char *s, const char *p, const char *ep)
{
    ptrdiff_t i = 0;
    while (s + i < m->end && single((unsigned char)s[i], p, ep)) {
        i++;
        spend(m, 1);
    }
    for (; i >= 0; i--) { /* the longest repetition that lets the rest match */
        const char *r = match(m, s + i, ep + 1);
        if (r != NULL)
            return r;
    }
    return NULL;
}

static const char *min_expand(pm_t *m, const char *s, const char *p, const char *ep)
{
    for (;;) {
        const char *r = match(m, s, ep + 1);
        if (r != NULL)
            return r;
        if (s < m->end && single((unsigned char)*s, p, ep))
            s++;
        else
            return NULL;
    }
}

static const char *start_capture(pm_t *m, const char *s, const char *p, ptrdiff_t what)
{
    if (m->level >= MAXCAPTURES)
        luaL_error(m->L, "too many captures");
    m->cap[m->level].at = s;
    m->cap[m->level].len = what;
    m->level++;
    const char *r = match(m, s, p);
    if (r == NULL)
        m->level--;
    return r;
}

static const char *end_capture(pm_t *m, const char *s, const char *p)
{
    int l = m->level - 1;
    while (l >= 0 && m->cap[l].len != CAP_UNFINISHED)
        l--;
    if (l < 0)
        luaL_error(m->L, "invalid pattern capture");
    m->cap[l].len = s - m->cap[l].at;
    const char *r = match(m, s, p);
    if (r == NULL)
        m->cap[l].len = CAP_UNFINISHED;
    return r;
}

/* %1-%9: the text of an earlier, closed capture again. */
static const char *back_reference(pm_t *m, const char *s, int digit)
{
    int l = digit - '1';
    if (l < 0 || l >= m->level || m->cap[l].len == CAP_UNFINISHED)
        luaL_error(m->L, "invalid capture index");
    size_t len = (size_t)m->cap[l].len; /* a position capture's -2 matches nothing, as in LuaJIT */
    if ((size_t)(m->end - s) >= len && memcmp(m->cap[l].at, s, len) == 0)
        return s + len;
    return NULL;
}

/* %f[set]: p after the 'f'; s stays, or NULL when the frontier is not there. */
static const char *frontier(pm_t *m, const char *s, const char **p)
{
    if (**p != '[')
        luaL_error(m->L, "missing '[' after '%%f' in pattern");
    const char *ep = class_end(m, *p);
    int prev = s == m->init ? '\0' : (unsigned char)s[-1];
    if (in_set(prev, *p, ep - 1) || !in_set((unsigned char)*s, *p, ep - 1))
        return NULL;
    *p = ep;
    return s;
}

/* A single-character class at p, maybe repeated: the rest of match(). Returns 1 to go on
 * with *s and *p (the loop LuaJIT writes with goto), 0 when *s is the result. */
static int item(pm_t *m, const char **s, const char **p)
{
    const char *ep = class_end(m, *p), *r;
    int hit = *s < m->end && single((unsigned char)**s, *p, ep);
    switch (*ep) {
    case '?':
        if (hit && (r = match(m, *s + 1, ep + 1)) != NULL) {
            *s = r;
            return 0;
        }
        *p = ep + 1;
        return 1;
    case '*': *s = max_expand(m, *s, *p, ep); return 0;
    case '+': *s = hit ? max_expand(m, *s + 1, *p, ep) : NULL; return 0;
    case '-': *s = min_expand(m, *s, *p, ep); return 0;
    default:
        if (!hit) {
            *s = NULL;
            return 0;
        }
        (*s)++;
        *p = ep;
        return 1;
    }
}

static const char *match(pm_t *m, const char *s, const char *p)
{
    spend(m, 1);
    if (++m->depth > MAXDEPTH)
        luaL_error(m->L, "pattern too complex");
    for (int more = 1; more && s != NULL;) {
        switch (*p) {
        case '\0':
            more = 0;
            break;
        case '(':
            s = p[1] == ')' ? start_capture(m, s, p + 2, CAP_POSITION)
                            : start_capture(m, s, p + 1, CAP_UNFINISHED);
            more = 0;
            break;
        case ')':
            s = end_capture(m, s, p + 1);
            more = 0;
            break;
        case '$':
            if (p[1] == '\0') { /* only at the end is '$' an anchor */
                s = s == m->end ? s : NULL;
                more = 0;
                break;
            }
            more = item(m, &s, &p);
            break;
        case '%':
            if (p[1] == 'b') {
                s = balance(m, s, p + 2);
                p += 4;
            } else if (p[1] == 'f') {
                p += 2;
                s = frontier(m, s, &p);
            } else if (c_digit((unsigned char)p[1])) {
                s = back_reference(m, s, (unsigned char)p[1]);
                p += 2;
            } else {
                more = item(m, &s, &p);
            }
            break;
        default:
            more = item(m, &s, &p);
            break;
        }
    }
    m->depth--;
    return s;
}

/* ---- captures ------------------------------------------------------------------------ */

static void push_one(pm_t *m, int i, const char *s, const char *e)
{
    if (i >= m->level) {
        if (i != 0)
            luaL_error(m->L, "invalid capture index");
        lua_pushlstring(m->L, s, (size_t)(e - s)); /* no captures: the whole match */
        return;
    }
    ptrdiff_t len = m->cap[i].len;
    if (len == CAP_UNFINISHED)
        luaL_error(m->L, "unfinished capture");
    if (len == CAP_POSITION)
        lua_pushinteger(m->L, m->cap[i].at - m->init + 1);
    else
        lua_pushlstring(m->L, m->cap[i].at, (size_t)len);
}

/* s NULL (find): only the captures, none when there are none. */
static int push_captures(pm_t *m, const char *s, const char *e)
{
    int n = m->level == 0 && s != NULL ? 1 : m->level;
    luaL_checkstack(m->L, n, "too many captures");
    for (int i = 0; i < n; i++)
        push_one(m, i, s, e);
    return n;
}

/* ---- the library functions ----------------------------------------------------------- */

/* LuaJIT searches for the text itself when the pattern has none of these. */
static int has_specials(const char *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (p[i] != '\0' && strchr("^$*+?.([%-", p[i]) != NULL)
            return 1;
    return 0;
}

/* The start index of find/match: negative from the end, clamped to the subject. */
static size_t start_at(lua_State *L, int arg, size_t len)
{
    lua_Integer start = luaL_optinteger(L, arg, 1);
    if (start < 0)
        start += (lua_Integer)len;
    else
        start--;
    if (start < 0)
        start = 0;
    return (size_t)start > len ? len : (size_t)start;
}

static int find_aux(lua_State *L, int find)
{
    size_t ls, lp;
    const char *str = luaL_checklstring(L, 1, &ls);
    const char *pat = luaL_checklstring(L, 2, &lp);
    size_t start = start_at(L, 3, ls);
    if (find && (lua_toboolean(L, 4) || !has_specials(pat, lp))) {
        const char *q = memmem(str + start, ls - start, pat, lp);
        if (q == NULL) {
            lua_pushnil(L);
            return 1;
        }
        lua_pushinteger(L, q - str + 1);
        lua_pushinteger(L, q - str + (ptrdiff_t)lp);
        return 2;
    }
    pm_t m;
    pm_init(&m, L, str, ls);
    int anchor = *pat == '^';
    const char *p = pat + anchor, *at = str + start;
    do {
        m.level = m.depth = 0;
        const char *e = match(&m, at, p);
        if (e != NULL && find) {
            lua_pushinteger(L, at - str + 1);
            lua_pushinteger(L, e - str);
            return push_captures(&m, NULL, NULL) + 2;
        }
        if (e != NULL)
            return push_captures(&m, at, e);
    } while (at++ < m.end && !anchor);
    lua_pushnil(L);
    return 1;
}

static int l_find(lua_State *L) { return find_aux(L, 1); }
static int l_match(lua_State *L) { return find_aux(L, 0); }

/* Upvalues: the subject, the pattern, where the next search starts. */
static int gmatch_next(lua_State *L)
{
    size_t ls;
    const char *str = lua_tolstring(L, lua_upvalueindex(1), &ls);
    const char *p = lua_tostring(L, lua_upvalueindex(2));
    pm_t m;
    pm_init(&m, L, str, ls);
    for (const char *at = str + lua_tointeger(L, lua_upvalueindex(3)); at <= m.end; at++) {
        m.level = m.depth = 0;
        const char *e = match(&m, at, p);
        if (e != NULL) {
            lua_pushinteger(L, e - str + (e == at)); /* an empty match moves on by one */
            lua_replace(L, lua_upvalueindex(3));
            return push_captures(&m, at, e);
        }
    }
    return 0;
}

static int l_gmatch(lua_State *L)
{
    luaL_checkstring(L, 1);
    luaL_checkstring(L, 2);
    lua_settop(L, 2);
    lua_pushinteger(L, 0);
    lua_pushcclosure(L, gmatch_next, 3);
    return 1;
}

/* The replacement string, with %0-%9 and %x for a literal x. */
static void add_string(pm_t *m, luaL_Buffer *b, const char *s, const char *e)
{
    size_t len;
    const char *r = lua_tolstring(m->L, 3, &len);
    spend(m, (unsigned)(len / 16));
    for (size_t i = 0; i < len; i++) {
        if (r[i] != '%') {
            luaL_addchar(b, r[i]);
            continue;
        }
        i++; /* a '%' at the very end takes the '\0' after it, as LuaJIT does */
        if (!c_digit((unsigned char)r[i])) {
            luaL_addchar(b, r[i]);
        } else if (r[i] == '0') {
            luaL_addlstring(b, s, (size_t)(e - s));
        } else {
            push_one(m, r[i] - '1', s, e);
            luaL_addvalue(b);
        }
    }
}

static void add_value(pm_t *m, luaL_Buffer *b, const char *s, const char *e)
{
    lua_State *L = m->L;
    switch (lua_type(L, 3)) {
    case LUA_TFUNCTION:
        lua_pushvalue(L, 3);
        lua_call(L, push_captures(m, s, e), 1);
        break;
    case LUA_TTABLE:
        push_one(m, 0, s, e);
        lua_gettable(L, 3);
        break;
    default: /* a string or a number */
        add_string(m, b, s, e);
        return;
    }
    if (!lua_toboolean(L, -1)) { /* nil or false: keep the match */
        lua_pop(L, 1);
        lua_pushlstring(L, s, (size_t)(e - s));
    } else if (!lua_isstring(L, -1)) {
        luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
    }
    luaL_addvalue(b);
}

static int l_gsub(lua_State *L)
{
    size_t ls;
    const char *src = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checkstring(L, 2);
    int type = lua_type(L, 3);
    int max = luaL_optint(L, 4, (int)(ls + 1));
    luaL_argcheck(L, type == LUA_TNUMBER || type == LUA_TSTRING || type == LUA_TFUNCTION ||
                         type == LUA_TTABLE, 3, "string/function/table expected");
    lc_lua_limits_check(lc_lua_from(L), L); /* a replacement function may recurse to here */
    int anchor = *p == '^', n = 0;
    p += anchor;
    pm_t m;
    pm_init(&m, L, src, ls);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    while (n < max) {
        m.level = m.depth = 0;
        const char *e = match(&m, src, p);
        if (e != NULL) {
            n++;
            add_value(&m, &b, src, e);
        }
        if (e != NULL && e > src)
            src = e;
        else if (src < m.end)
            luaL_addchar(&b, *src++);
        else
            break;
        if (anchor)
            break;
    }
    luaL_addlstring(&b, src, (size_t)(m.end - src));
    luaL_pushresult(&b);
    lua_pushinteger(L, n);
    return 2;
}

void lc_lua_pattern_open(lua_State *L)
{
    assert(lua_istable(L, -1));
    static const luaL_Reg fns[] = {
        {"find", l_find}, {"match", l_match}, {"gmatch", l_gmatch}, {"gsub", l_gsub}};
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        lua_pushcfunction(L, fns[i].func);
        lua_setfield(L, -2, fns[i].name);
    }
}
