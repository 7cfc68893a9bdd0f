/* scenario_fixture.h — what test_scenario and test_scenario_thresholds share: a scenario
 * document written with ' for ", a minimal valid one with members added or left out, and
 * parses expected to succeed or to fail naming a path. Include it after cmocka.h. */
#ifndef TESTS_UNIT_SCENARIO_FIXTURE_H
#define TESTS_UNIT_SCENARIO_FIXTURE_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lc_err.h"
#include "lc_scenario.h"

#define DOC_MAX 8192

/* JSON is written with ' for " to keep the C readable; \\' stays an escaped quote. */
static inline char *json_of(const char *text)
{
    static char buf[DOC_MAX];
    size_t n = strlen(text);
    assert_true(n < sizeof buf);
    for (size_t i = 0; i <= n; i++)
        buf[i] = text[i] == '\'' ? '"' : text[i];
    return buf;
}

/* A minimal valid document plus `extra` members; defaults whose key appears in
 * extra or in omit (a space-separated list) are left out. */
static inline char *doc(const char *extra, const char *omit)
{
    static const char *const defaults[][2] = {
        {"name", "'name':'t'"},
        {"target", "'target':'http://localhost:8080'"},
        {"duration", "'duration':10"},
        {"tasks", "'tasks':[{'path':'/'}]"},
    };
    static char out[DOC_MAX];
    char key[64];
    size_t len = 0;
    out[len++] = '{';
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
        snprintf(key, sizeof key, "'%s':", defaults[i][0]);
        bool omitted = omit != NULL && strstr(omit, defaults[i][0]) != NULL;
        if (omitted || (extra != NULL && strstr(extra, key) == extra))
            continue;
        len += (size_t)snprintf(out + len, sizeof out - len, "%s%s", len > 1 ? "," : "",
                                defaults[i][1]);
    }
    if (extra != NULL && extra[0] != '\0')
        len += (size_t)snprintf(out + len, sizeof out - len, "%s%s", len > 1 ? "," : "", extra);
    snprintf(out + len, sizeof out - len, "}");
    return json_of(out);
}

static inline int parse(const char *json, lc_scenario_t *s, char *err, size_t errlen)
{
    return lc_scenario_parse(json, strlen(json), s, err, errlen);
}

static inline bool is_zeroed(const lc_scenario_t *s)
{
    static const lc_scenario_t zero;
    return memcmp(s, &zero, sizeof zero) == 0;
}

/* Parses json expecting LC_EINVAL with "<path>: …<what>…" and a zeroed result. */
static inline void expect_error(const char *json, const char *path, const char *what)
{
    lc_scenario_t s;
    char err[512] = "";
    char prefix[256];
    memset(&s, 0xa5, sizeof s);
    int rv = parse(json, &s, err, sizeof err);
    if (rv != LC_EINVAL)
        fail_msg("expected LC_EINVAL for %s, got %d (%s)", json, rv, err);
    const char *colon = strstr(err, ": ");
    assert_non_null(colon);
    size_t n = (size_t)(colon - err);
    assert_true(n < sizeof prefix);
    memcpy(prefix, err, n);
    prefix[n] = '\0';
    assert_string_equal(prefix, path);
    if (strstr(colon + 2, what) == NULL)
        fail_msg("error '%s' does not mention '%s'", err, what);
    assert_true(is_zeroed(&s));
}

static inline void expect_ok(const char *json, lc_scenario_t *s)
{
    char err[512] = "";
    int rv = parse(json, s, err, sizeof err);
    if (rv != 0)
        fail_msg("unexpected error for %s: %s", json, err);
}

struct error_case {
    const char *extra;
    const char *path;
    const char *what;
};

static inline void run_cases(const struct error_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++)
        expect_error(doc(cases[i].extra, NULL), cases[i].path, cases[i].what);
}

#endif
