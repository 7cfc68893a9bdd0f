/* lc_lua_check.c — the master's check of a run's script (see lc_lua_check.h). */
#include "lc_lua_check.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>

#include "lc_err.h"

#define SUGGEST_MAX 8 /* names listed next to "no function named x" */

static const char *type_name(int type)
{
    static const char *const names[] = {"nil", "boolean", "light userdata", "number", "string",
                                        "table", "function", "userdata", "thread"};
    return type >= 0 && type < (int)(sizeof names / sizeof names[0]) ? names[type] : "?";
}

static int missing_function(lc_lua_t *s, const lc_lua_fn_ref_t *f, int type, char *errmsg,
                            size_t errlen)
{
    char at[256] = "";
    if (f->where != NULL)
        snprintf(at, sizeof at, "%s: ", f->where);
    if (type != LUA_TNIL && type != LUA_TNONE)
        return lc_errf(errmsg, errlen, LC_EINVAL, "script: %s%s is a %s, not a function", at,
                       f->name, type_name(type));
    char names[512];
    size_t n = lc_lua_global_functions(s, names, sizeof names, SUGGEST_MAX);
    if (n == 0)
        return lc_errf(errmsg, errlen, LC_EINVAL, "script: %sno function named %s (the script "
                       "defines no global function)", at, f->name);
    return lc_errf(errmsg, errlen, LC_EINVAL, "script: %sno function named %s (the script's "
                   "global functions: %s%s)", at, f->name, names, n > SUGGEST_MAX ? ", ..." : "");
}

static int check_functions(lc_lua_t *s, const lc_lua_fn_ref_t *functions, size_t n,
                           char *errmsg, size_t errlen)
{
    for (size_t i = 0; i < n; i++) {
        const lc_lua_fn_ref_t *f = &functions[i];
        if (f->name == NULL || f->name[0] == '\0')
            return lc_errf(errmsg, errlen, LC_EINVAL, "script: %s: no function name",
                           f->where != NULL ? f->where : "a lua step");
        int type = lc_lua_global_type(s, f->name);
        if (type != LUA_TFUNCTION)
            return missing_function(s, f, type, errmsg, errlen);
    }
    return 0;
}

int lc_lua_check(const char *script, size_t len, const lc_lua_module_t *modules, size_t n,
                 const lc_lua_fn_ref_t *functions, size_t n_functions, char *errmsg,
                 size_t errlen)
{
    assert(script != NULL || len == 0);
    assert(functions != NULL || n_functions == 0);
    lc_lua_config_t cfg = {
        .script = script,
        .script_len = len,
        .modules = modules,
        .n_modules = n,
        .load_deadline_us = LC_LUA_CHECK_DEADLINE_US,
    };
    lc_lua_t *s;
    int rv = lc_lua_new(&s, &cfg, errmsg, errlen);
    if (rv != 0)
        return rv;
    rv = check_functions(s, functions, n_functions, errmsg, errlen);
    lc_lua_free(s);
    return rv;
}

int lc_lua_scenario_modules(const lc_scenario_t *sc, lc_lua_module_t **out, size_t *n)
{
    assert(sc != NULL && out != NULL && n != NULL);
    *out = NULL;
    *n = 0;
    if (sc->n_modules == 0)
        return 0;
    if ((*out = calloc(sc->n_modules, sizeof **out)) == NULL)
        return LC_ENOMEM;
    for (size_t i = 0; i < sc->n_modules; i++)
        (*out)[i] = (lc_lua_module_t){sc->modules[i].name, sc->modules[i].src, sc->modules[i].len};
    *n = sc->n_modules;
    return 0;
}

int lc_lua_check_scenario(const lc_scenario_t *sc, char *errmsg, size_t errlen)
{
    assert(sc != NULL);
    if (sc->script == NULL)
        return 0;
    const lc_program_t *p = sc->program;
    lc_lua_module_t *mods;
    size_t n_mods;
    lc_lua_fn_ref_t *fns = calloc(p != NULL && p->n_luas > 0 ? p->n_luas : 1, sizeof *fns);
    if (fns == NULL || lc_lua_scenario_modules(sc, &mods, &n_mods) != 0) {
        free(fns);
        return lc_errf(errmsg, errlen, LC_ENOMEM, "script: out of memory");
    }
    size_t n_fns = 0;
    int rv = 0;
    for (; rv == 0 && p != NULL && n_fns < p->n_luas; n_fns++) {
        char *where = NULL; /* "journeys[0].steps[2].lua", the member that names it */
        if (asprintf(&where, "%s.lua", p->luas[n_fns].path_json) < 0)
            rv = lc_errf(errmsg, errlen, LC_ENOMEM, "script: out of memory");
        fns[n_fns] = (lc_lua_fn_ref_t){rv == 0 ? where : NULL, p->luas[n_fns].fn};
    }
    if (rv == 0)
        rv = lc_lua_check(sc->script, sc->script_len, mods, n_mods, fns, n_fns, errmsg, errlen);
    for (size_t i = 0; i < n_fns; i++)
        free((char *)fns[i].where);
    free(mods);
    free(fns);
    return rv;
}
