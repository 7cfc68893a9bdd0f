/* lua_sandbox_fixture.h — what test_lc_lua_sandbox and test_lc_lua_sandbox_limits share: host
 * functions, sandboxes made from a script, calls and probes of a snippet's outcome. Include it
 * after cmocka.h. */
#ifndef TESTS_UNIT_LUA_SANDBOX_FIXTURE_H
#define TESTS_UNIT_LUA_SANDBOX_FIXTURE_H

/* ---- fixture ------------------------------------------------------------------------- */

/* test.park(): yields, as http.get will; test.echo(...): returns its arguments. */
static inline int park(lua_State *L)
{
    return lua_yield(L, 0);
}

static inline int echo(lua_State *L)
{
    return lua_gettop(L);
}

static inline int maybe_park(lua_State *L)
{
    if (lua_toboolean(L, 1))
        return lua_yield(L, 0);
    lua_pushstring(L, "no wait");
    return 1;
}

static const lc_lua_host_fn_t test_host[] = {
    {"test", "park", park, LC_LUA_HOST_YIELDS},
    {"test", "echo", echo, 0},
    {"test", "maybe_park", maybe_park, LC_LUA_HOST_YIELDS},
};

/* The deadline is on the wall clock, and this machine is shared: tests that are not about the
 * 2 ms default run with the 50 ms maximum, so a preemption cannot fail them. */
static inline lc_lua_config_t config(const char *script)
{
    return (lc_lua_config_t){.script = script, .script_len = strlen(script),
                             .deadline_us = LC_LUA_DEADLINE_US_MAX, .host = test_host,
                             .n_host = sizeof test_host / sizeof test_host[0]};
}

static inline lc_lua_t *sandbox_with(lc_lua_config_t cfg)
{
    lc_lua_t *s = NULL;
    char err[512];
    int rv = lc_lua_new(&s, &cfg, err, sizeof err);
    if (rv != 0)
        fail_msg("lc_lua_new: %s", err);
    return s;
}

static inline lc_lua_t *sandbox(const char *script)
{
    return sandbox_with(config(script));
}

static inline int push_number(lua_State *co, void *ud)
{
    lua_pushnumber(co, *(double *)ud);
    return 1;
}

/* Runs fn in a new coroutine to its end; OUT: err. Frees the coroutine. */
static inline int call(lc_lua_t *s, const char *fn, char *err, size_t errlen)
{
    int ref;
    lua_State *co = lc_lua_thread_new(s, &ref, err, errlen);
    assert_non_null(co);
    int rv = lc_lua_start(s, co, fn, NULL, NULL, err, errlen);
    lc_lua_thread_free(s, ref);
    return rv;
}

/* Runs `function probe() <body> end` in a fresh sandbox with a deadline (0: the default);
 * OUT: the first result as a string (tostring'd by the body when needed) or the error. */
static inline int probe_within(const char *body, uint32_t deadline_us, char *out, size_t outlen)
{
    char script[4096];
    snprintf(script, sizeof script, "function probe()\n%s\nend\n", body);
    lc_lua_config_t cfg = config(script);
    cfg.deadline_us = deadline_us;
    lc_lua_t *s = sandbox_with(cfg);
    int ref;
    lua_State *co = lc_lua_thread_new(s, &ref, out, outlen);
    assert_non_null(co);
    int rv = lc_lua_start(s, co, "probe", NULL, NULL, out, outlen);
    if (rv == 0)
        snprintf(out, outlen, "%s", lua_isstring(co, 1) ? lua_tostring(co, 1) : "(not a string)");
    lc_lua_thread_free(s, ref);
    lc_lua_free(s);
    return rv;
}

static inline int probe(const char *body, char *out, size_t outlen)
{
    return probe_within(body, LC_LUA_DEADLINE_US_MAX, out, outlen);
}

static inline void assert_probe_within(const char *body, uint32_t deadline_us, int want_rv,
                                const char *want_in_out)
{
    char out[1024];
    int rv = probe_within(body, deadline_us, out, sizeof out);
    if (rv != want_rv || strstr(out, want_in_out) == NULL)
        fail_msg("probe {%s}: rv %d (want %d), \"%s\" (want it to contain \"%s\")", body, rv,
                 want_rv, out, want_in_out);
}

static inline void assert_probe(const char *body, int want_rv, const char *want_in_out)
{
    assert_probe_within(body, LC_LUA_DEADLINE_US_MAX, want_rv, want_in_out);
}

#endif
