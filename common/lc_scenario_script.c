/* lc_scenario_script.c — a scenario's "script" (Lua source for lua steps) and "modules": read
 * and bounded here; compiled and run only by the sandbox (common/script), which lc_common
 * does not link. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "lc_err.h"
#include "lc_scenario.h"

/* Source text only: the sandbox would refuse a chunk starting with ESC (LuaJIT bytecode)
 * too, but the error names the field here. A NUL byte is refused as well: it is no part of
 * any Lua source, and would cut the text where C reads it (jansson refuses one before us
 * unless JSON_ALLOW_NUL; this holds whatever the parser's flags). */
static int check_source(lc_jp_t *p, const char *parent, const char *key, json_t *v)
{
    if (!json_is_string(v) || json_string_length(v) == 0)
        return lc_jp_fail(p, parent, key, "expected Lua source text");
    const char *src = json_string_value(v);
    size_t len = json_string_length(v);
    if (src[0] == '\033')
        return lc_jp_fail(p, parent, key, "bytecode is not accepted, only source text");
    const char *nul = memchr(src, '\0', len);
    if (nul != NULL)
        return lc_jp_fail(p, parent, key, "a NUL byte at offset %zu", (size_t)(nul - src));
    return 0;
}

static bool valid_module_name(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > LC_SCENARIO_MODULE_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return false;
    }
    return true;
}

static int copy_text(lc_jp_t *p, json_t *v, char **out, size_t *len)
{
    *len = json_string_length(v);
    if ((*out = malloc(*len + 1)) == NULL)
        return lc_jp_oom(p);
    memcpy(*out, json_string_value(v), *len + 1);
    return 0;
}

static int parse_modules(lc_jp_t *p, json_t *mods, lc_scenario_t *s)
{
    const char *name;
    json_t *v;
    if (!json_is_object(mods))
        return lc_jp_fail(p, "", "modules", "expected an object of module name: Lua source");
    if (json_object_size(mods) > LC_SCENARIO_MODULES_MAX)
        return lc_jp_fail(p, "", "modules", "at most %u modules", LC_SCENARIO_MODULES_MAX);
    if ((s->modules = calloc(json_object_size(mods) + 1, sizeof *s->modules)) == NULL)
        return lc_jp_oom(p);
    json_object_foreach(mods, name, v) {
        lc_script_module_t *m = &s->modules[s->n_modules];
        int rv;
        if (!valid_module_name(name))
            return lc_jp_fail(p, "modules", name, "a module's name is 1 to %u letters, digits, "
                              "'_', '.' or '-'", LC_SCENARIO_MODULE_NAME_MAX);
        if ((rv = check_source(p, "modules", name, v)) != 0 ||
            (rv = lc_jp_dup(p, name, &m->name)) != 0)
            return rv;
        s->n_modules++; /* freed from here on */
        if ((rv = copy_text(p, v, &m->src, &m->len)) != 0)
            return rv;
    }
    return 0;
}

/* FNV-1a of the scenario's name: the default seed, alike on every worker and every run. */
static uint64_t name_seed(const char *name)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const char *c = name; c != NULL && *c != '\0'; c++)
        h = (h ^ (unsigned char)*c) * 0x100000001b3ULL;
    return h & LC_SCENARIO_SEED_MAX;
}

/* "script_cpu_ms" (the CPU a step's function may run between two waits) and "seed". */
static int parse_limits(lc_jp_t *p, json_t *root, lc_scenario_t *s)
{
    json_t *seed = json_object_get(root, "seed");
    s->script_cpu_ms = LC_SCENARIO_SCRIPT_CPU_MS_DEFAULT;
    s->seed = name_seed(s->name);
    int rv = lc_jp_uint(p, root, "", "script_cpu_ms", 1, LC_SCENARIO_SCRIPT_CPU_MS_MAX,
                        &s->script_cpu_ms);
    if (rv == 0 && seed != NULL)
        rv = lc_jp_uint_value(p, seed, "", "seed", 0, LC_SCENARIO_SEED_MAX, &s->seed);
    return rv;
}

int lc_scenario_parse_script(lc_jp_t *p, json_t *root, lc_scenario_t *s)
{
    assert(p != NULL && root != NULL && s != NULL);
    json_t *script = json_object_get(root, "script"), *mods = json_object_get(root, "modules");
    int rv = parse_limits(p, root, s);
    if (rv != 0)
        return rv;
    if (script == NULL && json_object_get(root, "script_cpu_ms") != NULL)
        return lc_jp_fail(p, "", "script_cpu_ms", "needs a script (it bounds the CPU a lua "
                                                  "step's function runs between two waits)");
    if (script == NULL)
        return mods == NULL ? 0 : lc_jp_fail(p, "", "modules", "needs a script (the modules "
                                                             "are what its require sees)");
    if (s->program == NULL)
        return lc_jp_fail(p, "", "script", "belongs to journeys (a lua step runs one of its "
                                           "functions; add \"journeys\")");
    rv = check_source(p, "", "script", script);
    if (rv == 0)
        rv = copy_text(p, script, &s->script, &s->script_len);
    if (rv == 0 && mods != NULL)
        rv = parse_modules(p, mods, s);
    return rv;
}

void lc_scenario_free_script(lc_scenario_t *s)
{
    free(s->script);
    for (size_t i = 0; i < s->n_modules; i++) {
        free(s->modules[i].name);
        free(s->modules[i].src);
    }
    free(s->modules);
    s->script = NULL;
    s->modules = NULL;
    s->script_len = s->n_modules = 0;
}
