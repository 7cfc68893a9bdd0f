/* lc_journey_lua.c — compiles lua steps ({"lua": "fname"}), and finds the variables a script
 * may set (u.vars.x), which the dataflow check counts as set after a lua step. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_err.h"
#include "lc_journey_internal.h"

#define TIMEOUT_MAX_MS 3600000u
#define NAME_MAX_LEN 128u
#define SCAN_NAMES_MAX 4096u /* names past these are not counted as set by a lua step */

static const char *const lua_fields[] = {"lua",     "name",     "endpoints", "groups",
                                         "timeout_ms", "cookies", "follow_redirects",
                                         "on_error", NULL};

static bool ident_char(char ch, bool first)
{
    return ch == '_' || ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'z') ||
           (!first && ch >= '0' && ch <= '9');
}

/* A Lua identifier (and a journey variable's name): a letter or _, then letters, digits, _. */
static bool is_ident(const char *s, size_t len, size_t max)
{
    if (len == 0 || len > max || !ident_char(s[0], true))
        return false;
    for (size_t i = 1; i < len; i++)
        if (!ident_char(s[i], false))
            return false;
    return true;
}

static int fn_name(jc_t *c, json_t *obj, const char *path, lc_jlua_t *l)
{
    json_t *v = json_object_get(obj, "lua");
    if (!json_is_string(v) || !is_ident(json_string_value(v), json_string_length(v),
                                        LC_JOURNEY_LUA_FN_MAX))
        return lc_jp_fail(&c->jp, path, "lua", "expected the name of a global function of the "
                          "script (a Lua identifier of at most %u bytes)", LC_JOURNEY_LUA_FN_MAX);
    /* One that is there but wrong is lc_scenario_parse_script's to name. */
    if (json_object_get(c->root, "script") == NULL)
        return lc_jp_fail(&c->jp, path, "lua", "a lua step runs a function of the scenario's "
                                               "\"script\" (Lua source text), which it lacks");
    return lc_jp_dup(&c->jp, json_string_value(v), &l->fn);
}

/* obj[key], when there: an array of at most max names (1 to NAME_MAX_LEN characters, no
 * control byte), each given to add (an endpoint or a group) with its JSON path. */
static int names(jc_t *c, json_t *obj, const char *path, const char *key, size_t max,
                 int (*add)(jc_t *c, const char *name, const char *where))
{
    char sub[JPATH_MAX];
    json_t *list = json_object_get(obj, key);
    int rv = 0;
    if (list == NULL)
        return 0;
    if (!json_is_array(list) || json_array_size(list) > max)
        return lc_jp_fail(&c->jp, path, key, "expected an array of at most %zu names", max);
    for (size_t i = 0; rv == 0 && i < json_array_size(list); i++) {
        json_t *e = json_array_get(list, i);
        jc_path(sub, "%s.%s[%zu]", path, key, i);
        if (!json_is_string(e) || json_string_length(e) == 0 ||
            json_string_length(e) > NAME_MAX_LEN)
            return lc_jp_fail(&c->jp, sub, NULL, "expected a name (1 to %u characters)",
                              NAME_MAX_LEN);
        if ((rv = lc_jp_controls(&c->jp, sub, NULL, "", json_string_value(e),
                                 json_string_length(e))) == 0)
            rv = add(c, json_string_value(e), sub);
    }
    return rv;
}

static int add_endpoint(jc_t *c, const char *name, const char *where)
{
    uint32_t index;
    return jc_endpoint(c, name, LC_LUA_METHOD, where, NULL, &index);
}

/* A group group(name, fn) may time: a group series, shared with declarative groups of the
 * same name. */
static int add_group(jc_t *c, const char *name, const char *where)
{
    uint32_t index;
    return jc_group(c, name, where, &index);
}

/* "name" (default "lua <fn>") is the step's endpoint; "endpoints" adds names its requests
 * may be counted under (opts.name), each an endpoint of method LUA unless a request step
 * has it already; "groups" adds the groups its function may time. */
static int endpoints(jc_t *c, json_t *obj, const char *path, lc_jlua_t *l)
{
    char def[LC_JOURNEY_LUA_FN_MAX + 8];
    char *name = NULL;
    int rv = lc_jp_text(&c->jp, obj, path, "name", 1, NAME_MAX_LEN, &name);
    snprintf(def, sizeof def, "lua %s", l->fn);
    if (rv == 0)
        rv = jc_endpoint(c, name != NULL ? name : def, LC_LUA_METHOD, path, "name", &l->endpoint);
    free(name);
    if (rv == 0)
        rv = names(c, obj, path, "endpoints", LC_JOURNEY_LUA_ENDPOINTS_MAX, add_endpoint);
    if (rv == 0)
        rv = names(c, obj, path, "groups", LC_JOURNEY_GROUPS_MAX, add_group);
    return rv;
}

static int compile_lua(jc_t *c, json_t *obj, const char *path, lc_jlua_t *l)
{
    int rv;
    l->timeout_ms = c->defaults.timeout_ms;
    l->follow_redirects = c->defaults.follow_redirects;
    l->cookies = c->defaults.cookies;
    l->on_error = c->defaults.on_error;
    if ((rv = lc_jp_fields(&c->jp, obj, path, lua_fields)) != 0 ||
        (rv = lc_jp_dup(&c->jp, path, &l->path_json)) != 0 || (rv = fn_name(c, obj, path, l)) != 0 ||
        (rv = endpoints(c, obj, path, l)) != 0 ||
        (rv = lc_jp_uint(&c->jp, obj, path, "follow_redirects", 0, LC_JOURNEY_REDIRECTS_MAX,
                         &l->follow_redirects)) != 0 ||
        (rv = lc_jp_uint(&c->jp, obj, path, "timeout_ms", 1, TIMEOUT_MAX_MS, &l->timeout_ms)) != 0 ||
        (rv = lc_jp_bool(&c->jp, obj, path, "cookies", &l->cookies)) != 0)
        return rv;
    c->prog->uses_cookies = c->prog->uses_cookies || l->cookies;
    return jc_on_error(c, obj, path, &l->on_error);
}

int jc_lua_step(jc_t *c, json_t *obj, const char *path)
{
    lc_program_t *p = c->prog;
    int rv = jc_grow(c, (void **)&p->luas, &c->cap_luas, p->n_luas, sizeof *p->luas);
    if (rv != 0)
        return rv;
    lc_jlua_t *l = &p->luas[p->n_luas++];
    if ((rv = compile_lua(c, obj, path, l)) != 0)
        return rv;
    return jc_emit(c, LC_OP_LUA, (uint32_t)(p->n_luas - 1), 0, path, NULL);
}

/* ---- which variables a script may set ------------------------------------------------ */

static int add_name(jc_t *c, const char *s, size_t len)
{
    if (!is_ident(s, len, 64) || c->n_lua_vars >= SCAN_NAMES_MAX)
        return 0;
    for (size_t i = 0; i < c->n_lua_vars; i++)
        if (strlen(c->lua_vars[i]) == len && memcmp(c->lua_vars[i], s, len) == 0)
            return 0;
    int rv = jc_grow(c, (void **)&c->lua_vars, &c->cap_lua_vars, c->n_lua_vars,
                     sizeof *c->lua_vars);
    if (rv != 0)
        return rv;
    if ((c->lua_vars[c->n_lua_vars] = strndup(s, len)) == NULL)
        return lc_jp_oom(&c->jp);
    c->n_lua_vars++;
    return 0;
}

static size_t skip_space(const char *s, size_t len, size_t i)
{
    while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))
        i++;
    return i;
}

/* After "vars" at s[i]: ".name" or "['name']" / "[\"name\"]", spaces allowed between. */
static int scan_member(jc_t *c, const char *s, size_t len, size_t i)
{
    i = skip_space(s, len, i);
    if (i < len && s[i] == '.') {
        size_t from = i = skip_space(s, len, i + 1);
        while (i < len && ident_char(s[i], i == from))
            i++;
        return add_name(c, s + from, i - from);
    }
    if (i >= len || s[i] != '[')
        return 0;
    i = skip_space(s, len, i + 1);
    if (i >= len || (s[i] != '"' && s[i] != '\''))
        return 0;
    char q = s[i];
    size_t from = ++i;
    while (i < len && s[i] != q && s[i] != '\\' && s[i] != '\n')
        i++;
    return i < len && s[i] == q ? add_name(c, s + from, i - from) : 0;
}

/* Every "vars" token followed by a member: u.vars.x, and also vars.x after `local vars =
 * u.vars`. A mention in a comment or a string counts too: the check is on the lenient side,
 * and a variable a lua step did not set fails at run time as a template error. */
static int scan_text(jc_t *c, const char *s, size_t len)
{
    for (size_t i = 0; i + 4 <= len; i++) {
        if (memcmp(s + i, "vars", 4) != 0 || (i > 0 && ident_char(s[i - 1], false)) ||
            (i + 4 < len && ident_char(s[i + 4], false)))
            continue;
        int rv = scan_member(c, s, len, i + 4);
        if (rv != 0)
            return rv;
    }
    return 0;
}

int jc_lua_scan(jc_t *c)
{
    json_t *script = json_object_get(c->root, "script"), *mods = json_object_get(c->root, "modules");
    const char *name;
    json_t *v;
    int rv = 0;
    if (json_is_string(script))
        rv = scan_text(c, json_string_value(script), json_string_length(script));
    if (!json_is_object(mods))
        return rv;
    json_object_foreach(mods, name, v) {
        if (rv == 0 && json_is_string(v))
            rv = scan_text(c, json_string_value(v), json_string_length(v));
    }
    return rv;
}

bool jc_lua_sets(const jc_t *c, const char *name)
{
    for (size_t i = 0; i < c->n_lua_vars; i++)
        if (strcmp(c->lua_vars[i], name) == 0)
            return true;
    return false;
}

void jc_lua_free(jc_t *c)
{
    for (size_t i = 0; i < c->n_lua_vars; i++)
        free(c->lua_vars[i]);
    free(c->lua_vars);
    c->lua_vars = NULL;
    c->n_lua_vars = 0;
}
