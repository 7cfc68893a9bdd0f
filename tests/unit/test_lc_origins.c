/* test_lc_origins.c — a scenario's "targets" beside "target": validation with errors naming
 * the JSON path, the origin of each request step (its "origin" or its absolute URL, which must
 * be listed), and where a redirect's Location leads among the listed origins. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lc_err.h"
#include "lc_origins.h"
#include "lc_scenario.h"

#define DOC_MAX 4096

/* A journey scenario (' for ") with targets and steps, parsed. */
static int parse(const char *targets, const char *steps, lc_scenario_t *s, char *err, size_t len)
{
    char doc[DOC_MAX];
    int n = snprintf(doc, sizeof doc, "{'name':'o','target':'http://127.0.0.1:8080/base',"
                                      "'duration':5%s%s,'journeys':[{'name':'j','steps':[%s]}]}",
                     targets[0] ? "," : "", targets, steps);
    assert_true(n > 0 && (size_t)n < sizeof doc);
    for (char *c = doc; *c != '\0'; c++)
        if (*c == '\'')
            *c = '"';
    return lc_scenario_parse(doc, strlen(doc), s, err, len);
}

static const char two[] = "'targets':{'auth':'http://127.0.0.1:9001','api':'HTTPS://Api.Example'}";

static void expect_error(const char *targets, const char *steps, const char *want)
{
    lc_scenario_t s;
    char err[512];
    if (parse(targets, steps, &s, err, sizeof err) == 0) {
        lc_scenario_free(&s);
        fail_msg("accepted; wanted \"%s\"", want);
    }
    if (strstr(err, want) == NULL)
        fail_msg("got \"%s\"; wanted \"%s\"", err, want);
}

static void test_targets_parsed(void **state)
{
    (void)state;
    lc_scenario_t s;
    char err[512];
    assert_int_equal(parse(two, "{'path':'/'}", &s, err, sizeof err), 0);
    assert_int_equal(s.origins.n, 3);
    assert_string_equal(s.origins.at[0].name, "default");
    assert_string_equal(s.origins.at[0].url.base_path, "/base");
    assert_string_equal(s.origins.at[1].name, "auth");
    assert_int_equal(s.origins.at[1].url.hp.port, 9001);
    assert_false(s.origins.at[1].url.tls);
    assert_true(s.origins.at[2].url.tls);
    assert_int_equal(s.origins.at[2].url.hp.port, 443);
    assert_int_equal(lc_origins_find(&s.origins, "api"), 2);
    assert_int_equal(lc_origins_find(&s.origins, "nope"), -1);
    assert_int_equal(s.idle_timeout_ms, 30000);
    lc_scenario_free(&s);
    assert_int_equal(parse("'idle_timeout_ms':250", "{'path':'/'}", &s, err, sizeof err), 0);
    assert_int_equal(s.origins.n, 1);
    assert_int_equal(s.idle_timeout_ms, 250);
    assert_false(s.close_idle_target);
    lc_scenario_free(&s);
    assert_int_equal(parse("'close_idle_target':true", "{'path':'/'}", &s, err, sizeof err), 0);
    assert_true(s.close_idle_target);
    lc_scenario_free(&s);
}

static void test_targets_refused(void **state)
{
    (void)state;
    const char *step = "{'path':'/'}";
    expect_error("'targets':{'Auth':'http://a.example'}", step,
                 "targets: 'Auth': a name is 1 to 32 of a-z, 0-9, '_' and '-'");
    expect_error("'targets':{'default':'http://a.example'}", step,
                 "targets.default: \"default\" is the name of target");
    expect_error("'targets':{'a':'ftp://a.example'}", step,
                 "targets.a: 'ftp://a.example': expected a URL starting with http:// or https://");
    expect_error("'targets':{'a':'http://a.example/v2'}", step,
                 "targets.a: expected an origin (scheme://host[:port]), without the path /v2");
    expect_error("'targets':{'a':7}", step, "targets.a: expected a URL like");
    expect_error("'targets':{'a':'http://127.0.0.1:8080/'}", step,
                 "targets.a: http://127.0.0.1:8080 is already listed as target");
    expect_error("'targets':{'a':'http://X.example','b':'http://x.example:80'}", step,
                 "targets.b: http://x.example:80 is already listed as targets.a");
    expect_error("'targets':[]", step, "targets: expected an object");
    expect_error("'idle_timeout_ms':0", step, "idle_timeout_ms");
    expect_error("'close_idle_target':1", step, "close_idle_target: expected true or false");
    char many[DOC_MAX];
    size_t n = (size_t)snprintf(many, sizeof many, "'targets':{");
    for (unsigned i = 0; i <= LC_TARGETS_MAX; i++)
        n += (size_t)snprintf(many + n, sizeof many - n, "%s'o%u':'http://h%u.example'",
                              i ? "," : "", i, i);
    snprintf(many + n, sizeof many - n, "}");
    expect_error(many, step, "targets: at most 16 origins beside target");
}

static void test_v1_tasks_have_no_targets(void **state)
{
    (void)state;
    const char *doc = "{\"name\":\"v1\",\"target\":\"http://127.0.0.1:1\",\"duration\":5,"
                      "\"targets\":{\"a\":\"http://a.example\"},\"tasks\":[{\"path\":\"/\"}]}";
    lc_scenario_t s;
    char err[256];
    assert_int_equal(lc_scenario_parse(doc, strlen(doc), &s, err, sizeof err), LC_EINVAL);
    assert_string_equal(err, "targets: belongs to journeys (add \"journeys\")");
}

static void test_step_origins(void **state)
{
    (void)state;
    lc_scenario_t s;
    char err[512];
    assert_int_equal(parse(two, "{'path':'/a'},{'origin':'auth','method':'POST','path':'/login'},"
                                "{'path':'https://api.example:443/v1/me?x=${iteration}#top'},"
                                "{'name':'home','path':'http://127.0.0.1:8080'},"
                                "{'origin':'default','path':'/d'}",
                     &s, err, sizeof err),
                     0);
    const lc_program_t *p = s.program;
    assert_int_equal(p->n_reqs, 5);
    assert_int_equal(p->reqs[0].origin, 0);
    assert_false(p->reqs[0].absolute);
    assert_int_equal(p->reqs[1].origin, 1);
    assert_string_equal(p->endpoints[p->reqs[1].endpoint].name, "POST auth:/login");
    assert_int_equal(p->reqs[2].origin, 2);
    assert_true(p->reqs[2].absolute);
    assert_string_equal(p->endpoints[p->reqs[2].endpoint].name, "GET api:/v1/me?x=${iteration}");
    assert_int_equal(p->reqs[3].origin, 0); /* target's own origin, by URL: no base path */
    assert_true(p->reqs[3].absolute);
    assert_int_equal(p->reqs[4].origin, 0);
    assert_string_equal(p->endpoints[p->reqs[4].endpoint].name, "GET /d");
    lc_scenario_free(&s);
}

static void test_step_origins_refused(void **state)
{
    (void)state;
    expect_error(two, "{'path':'/a'},{'path':'http://evil.example/x'}",
                 "journeys[0].steps[1].path: http://evil.example is not an origin of target or "
                 "targets (listed: default, auth, api); add it to targets");
    expect_error(two, "{'path':'http://127.0.0.1:9002/x'}", "journeys[0].steps[0].path: "
                 "http://127.0.0.1:9002 is not an origin");
    expect_error(two, "{'path':'https://127.0.0.1:9001/x'}", "is not an origin"); /* scheme */
    expect_error(two, "{'path':'http://u@127.0.0.1:9001/x'}", "is not an origin");
    expect_error(two, "{'origin':'nope','path':'/x'}",
                 "journeys[0].steps[0].origin: no origin named \"nope\" (listed: default, auth, api)");
    expect_error(two, "{'origin':3,'path':'/x'}", "journeys[0].steps[0].origin: expected the name");
    expect_error(two, "{'origin':'api','path':'http://127.0.0.1:9001/x'}",
                 "journeys[0].steps[0].origin: \"api\", but the path is a URL of auth");
    expect_error(two, "{'path':'http://${host}/x'}",
                 "journeys[0].steps[0].path: the origin of an absolute URL cannot be a template");
    expect_error("", "{'origin':'auth','path':'/x'}", "no origin named \"auth\" (listed: default)");
    expect_error(two, "{'origin':'auth','path':'login'}", "journeys[0].steps[0].path: must start");
}

static void test_match(void **state)
{
    (void)state;
    lc_scenario_t s;
    char err[512];
    size_t rest = 0;
    assert_int_equal(parse(two, "{'path':'/'}", &s, err, sizeof err), 0);
    const lc_origins_t *o = &s.origins;
    assert_int_equal(lc_origins_match(o, "https://API.example/x", 21, &rest), 2);
    assert_int_equal(rest, 19);
    assert_int_equal(lc_origins_match(o, "http://127.0.0.1:9001", 21, &rest), 1);
    assert_int_equal(rest, 21);
    assert_int_equal(lc_origins_match(o, "http://127.0.0.1:8080?q", 23, &rest), 0);
    assert_int_equal(rest, 21);
    assert_int_equal(lc_origins_match(o, "http://api.example/x", 20, &rest), -1);
    assert_int_equal(lc_origins_match(o, "https://api.example:444/", 24, &rest), -1);
    assert_int_equal(lc_origins_match(o, "/x", 2, &rest), -1);
    assert_int_equal(lc_origins_match(o, "https://", 8, &rest), -1);
    char text[LC_ORIGIN_TEXT_MAX];
    lc_origin_format(&o->at[2].url, text, sizeof text);
    assert_string_equal(text, "https://Api.Example:443");
    lc_scenario_free(&s);
}

/* Where loc leads from origin cur (base: the answered path), as "<origin> <target>". */
static void expect_locate(const lc_origins_t *o, unsigned cur, const char *base, const char *loc,
                          const char *want)
{
    char out[256], got[300] = "refused";
    int i = lc_origins_locate(o, cur, base, loc, strlen(loc), out, sizeof out);
    if (i >= 0)
        snprintf(got, sizeof got, "%d %s", i, out);
    if (strcmp(got, want) != 0)
        fail_msg("from %u, %s: got \"%s\", want \"%s\"", cur, loc, got, want);
}

static void test_locate(void **state)
{
    (void)state;
    lc_scenario_t s;
    char err[512];
    assert_int_equal(parse(two, "{'path':'/'}", &s, err, sizeof err), 0);
    const lc_origins_t *o = &s.origins;
    expect_locate(o, 0, "/a/b", "http://127.0.0.1:9001/login?next=1#f", "1 /login?next=1");
    expect_locate(o, 1, "/a/b", "https://api.example", "2 /");
    expect_locate(o, 1, "/a/b", "https://api.example?q=1", "2 /?q=1");
    expect_locate(o, 0, "/a/b", "//127.0.0.1:9001/x", "1 /x");     /* target's scheme: http */
    expect_locate(o, 2, "/a/b", "//127.0.0.1:9001/x", "refused"); /* api's: https */
    expect_locate(o, 1, "/a/b", "/c/../d", "1 /d");
    expect_locate(o, 1, "/a/b", "c", "1 /a/c");
    expect_locate(o, 1, NULL, "c", "refused");
    expect_locate(o, 0, "/a/b", "http://other.example/", "refused");
    expect_locate(o, 0, "/a/b", "mailto:x@example", "refused");
    expect_locate(o, 0, "/a/b", "", "refused");
    lc_scenario_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_targets_parsed),
        cmocka_unit_test(test_targets_refused),
        cmocka_unit_test(test_v1_tasks_have_no_targets),
        cmocka_unit_test(test_step_origins),
        cmocka_unit_test(test_step_origins_refused),
        cmocka_unit_test(test_match),
        cmocka_unit_test(test_locate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
