/* test_journey_lua_http.c — a script's requests (worker/journey_lua_http.c) against a real
 * server: http.put, http.patch and http.del send their method, path and body (del takes opts
 * second, put and patch third) and get the answer; a URL of a listed origin (target or one of
 * targets) reaches that origin, while URLs that dress another host as a listed one (user
 * information, a port that is not one, no "//", a backslash) are refused or stay on target. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "journey_run_fixture.h"

#define SCRIPT_MAX 4096

/* The server's /e/ answers "METHOD PATH?QUERY host=HOST body=BODY". Lua strings are long
 * brackets: the fixture turns every ' into ". */
static void test_put_patch_del(void **state)
{
    journey_run_t f = {0};
    server_thread_t sv;
    char script[SCRIPT_MAX];
    server_thread_start(&sv, answer_script_pages);
    snprintf(script, sizeof script,
             "function f(u) local host = [=[host=127.0.0.1:%u]=] "
             "local r = http.put([=[/e/p1?q=1]=], [=[b-put]=]) "
             "check(r.status == 200 and r.body == [=[PUT /e/p1?q=1 ]=] .. host .. [=[ body=b-put]=], [=[put]=]) "
             "r = http.patch([=[/e/p2]=], [=[b-patch]=], {name = [=[patch]=]}) "
             "check(r.ok and r.body == [=[PATCH /e/p2? ]=] .. host .. [=[ body=b-patch]=], [=[patch]=]) "
             "r = http.del([=[/e/d1?id=3]=], {name = [=[del]=]}) "
             "check(r.ok and r.body == [=[DELETE /e/d1?id=3 ]=] .. host .. [=[ body=]=], [=[del]=]) "
             "r = http.put([=[/e/p3]=], nil, {json = {a = 1}}) "
             "check(r.body == [=[PUT /e/p3? ]=] .. host .. [=[ body={\\\"a\\\":1}]=], [=[put json]=]) "
             "end",
             sv.port);
    journey_run_open_script(
        &f, sv.port, script,
        "'script_cpu_ms':50,"
        "'journeys':[{'name':'j','steps':[{'lua':'f','endpoints':['patch','del']}]}]");
    journey_run_users(&f, 1);
    assert_checks_passed(&f, 4);
    assert_int_equal(server_requests(&sv), 4);
    /* opts is the third argument of patch and the second of del: each counted by its name */
    assert_int_equal(ep_stats(&f, "lua f")->count, 2);
    assert_int_equal(ep_stats(&f, "patch")->count, 1);
    assert_int_equal(ep_stats(&f, "del")->count, 1);
    assert_non_null(strstr(f.trace_text, "PUT /e/p1?q=1 HTTP/1.1"));
    assert_non_null(strstr(f.trace_text, "PATCH /e/p2 HTTP/1.1"));
    assert_non_null(strstr(f.trace_text, "DELETE /e/d1?id=3 HTTP/1.1"));
    journey_run_close(&f);
    server_thread_stop(&sv);
}

/* Writes a script into out (len bytes) that names the target's and the api's ports. */
typedef void (*script_writer)(char *out, size_t len, uint16_t target, uint16_t api);

/* Starts target on sv and targets.api (http://api.test:PORT) on api, each a server of its
 * own, then one user runs f, of the script that write_script writes, once. */
static void run_two_origins(journey_run_t *f, server_thread_t *sv, server_thread_t *api,
                            script_writer write_script)
{
    char script[SCRIPT_MAX], journeys[512];
    server_thread_start(sv, answer_script_pages);
    server_thread_start(api, answer_script_pages);
    write_script(script, sizeof script, sv->port, api->port);
    snprintf(journeys, sizeof journeys,
             "'targets':{'api':'http://api.test:%u'},'script_cpu_ms':50,"
             "'journeys':[{'name':'j','steps':[{'lua':'f'}]}]", api->port);
    journey_run_open_script(f, sv->port, script, journeys);
    journey_run_aim(f, 1, api->port);
    journey_run_users(f, 1);
}

static void close_two_origins(journey_run_t *f, server_thread_t *sv, server_thread_t *api)
{
    journey_run_close(f);
    server_thread_stop(api);
    server_thread_stop(sv);
}

/* Target on one server and targets.api (http://api.test:PORT2) on another: a URL of either
 * reaches its own, the host compared without case, with that origin's Host header. */
static void write_urls_of_both(char *script, size_t len, uint16_t target, uint16_t api)
{
    snprintf(script, len,
             "function f(u) "
             "local r = http.get([=[http://api.test:%u/e/o?x=1]=]) "
             "check(r.status == 200 and r.body == [=[GET /e/o?x=1 host=api.test:%u body=]=], [=[api]=]) "
             "r = http.post([=[HTTP://API.Test:%u/e/o2]=], [=[b]=]) "
             "check(r.body == [=[POST /e/o2? host=api.test:%u body=b]=], [=[any case]=]) "
             "r = http.get([=[http://127.0.0.1:%u/e/t]=]) "
             "check(r.body == [=[GET /e/t? host=127.0.0.1:%u body=]=], [=[target by URL]=]) "
             "r = http.get([=[//api.test:%u/e/n]=]) "
             "check(r.body == [=[GET /e/n? host=api.test:%u body=]=], [=[network path]=]) end",
             api, api, api, api, target, target, api, api);
}

static void test_listed_origins_by_url(void **state)
{
    journey_run_t f = {0};
    server_thread_t sv, api;
    run_two_origins(&f, &sv, &api, write_urls_of_both);
    assert_checks_passed(&f, 4);
    assert_int_equal(server_requests(&api), 3);
    assert_int_equal(server_requests(&sv), 1);
    assert_int_equal(ep_stats(&f, "lua f")->errors[WORKER_ERR_SCRIPT], 0);
    close_two_origins(&f, &sv, &api);
}

/* URLs that name a listed origin somewhere but another host where a client looks for it:
 * each call is refused before anything is sent (pcall sees the error: were one sent, it
 * would return an answer), and a path with a backslash stays a path on target. */
static void write_disguised_hosts(char *script, size_t len, uint16_t target, uint16_t api)
{
    snprintf(script, len,
             "local function refused(url) local ok, e = pcall(http.get, url) "
             "return not ok and e:find([=[is neither a path of the run.s target]=]) ~= nil end "
             "function f(u) "
             "check(refused([=[http://127.0.0.1:%u@evil/]=]), [=[target as user]=]) "
             "check(refused([=[http://api.test:%u@evil/x]=]), [=[api as user]=]) "
             "check(refused([=[http://evil@127.0.0.1:%u/]=]), [=[evil as user]=]) "
             "check(refused([=[http://evil@api.test:%u/x]=]), [=[evil as user of api]=]) "
             "check(refused([=[http://127.0.0.1:1.evil/]=]), [=[port 1.evil]=]) "
             "check(refused([=[http://127.0.0.1:%u.evil/]=]), [=[port PORT.evil]=]) "
             "check(refused([=[http://api.test:1.evil/]=]), [=[api port 1.evil]=]) "
             "check(refused([=[http:evil/]=]), [=[no slashes]=]) "
             "check(refused([=[http:/evil/x]=]), [=[one slash]=]) "
             "check(refused([=[http:\\\\\\\\evil/x]=]), [=[backslashes]=]) "
             "local r = http.get([=[/\\\\evil/x]=]) "
             "check(r.status == 404 and r.body == [=[no GET /\\\\evil/x host=127.0.0.1:%u]=], "
             "[=[backslash path on target]=]) end",
             target, api, target, api, target, target);
}

static void test_disguised_hosts_refused(void **state)
{
    journey_run_t f = {0};
    server_thread_t sv, api;
    run_two_origins(&f, &sv, &api, write_disguised_hosts);
    assert_checks_passed(&f, 11);
    assert_int_equal(server_requests(&sv), 1); /* the backslash path, on target */
    assert_int_equal(server_requests(&api), 0);
    assert_int_equal(ep_stats(&f, "lua f")->count, 1);
    close_two_origins(&f, &sv, &api);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_patch_del),
        cmocka_unit_test(test_listed_origins_by_url),
        cmocka_unit_test(test_disguised_hosts_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
