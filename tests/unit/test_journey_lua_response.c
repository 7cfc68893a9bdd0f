/* test_journey_lua_response.c — a script's response (worker/journey_lua_response.c) against a
 * server on the engine's loop: r:cookie(name) is the cookie the user's jar would send back to
 * the URL r answered (its host and path, after redirects), whatever was requested since. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "journey_run_fixture.h"

/* Each page sets its cookie; /go redirects to /api/login/done. */
static void srv_handle(void *arg, lc_http_exchange_t *ex, const lc_http_request_t *req)
{
    static const struct {
        const char *path, *headers;
    } pages[] = {
        {"/api/login", "Set-Cookie: session=abc\r\n"},        /* default path /api */
        {"/api/root", "Set-Cookie: rs=r1; Path=/\r\n"},
        {"/api/scoped", "Set-Cookie: sc=s1; Path=/other\r\n"},
        {"/go", "Location: /api/login/done\r\n"},
        {"/api/login/done", "Set-Cookie: hop=h1\r\n"},         /* default path /api/login */
    };
    (void)arg;
    for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++)
        if (strcmp(req->path, pages[i].path) == 0) {
            int status = strcmp(req->path, "/go") == 0 ? 302 : 200;
            lc_http_exchange_respond(ex, status, "text/plain", "", 0, pages[i].headers);
            return;
        }
    lc_http_exchange_respond(ex, 200, "text/plain", "", 0, NULL);
}

/* Lua strings are long brackets: the fixture turns every ' into ". */
static void test_cookie_of_the_url_answered(void **state)
{
    static const char *const checks[] = {"nested default path", "root path", "other path",
                                         "kept by its response", "sent to /other",
                                         "final hop", "narrower path"};
    journey_run_t f;
    journey_run_open(
        &f, "t", journey_run_serve_here(&f, srv_handle, NULL), true,
        "'duration':5,'script_cpu_ms':50,'script':'"
        "function f(u) local r = http.post([=[/api/login]=], [=[x]=]) "
        "check(r:cookie([=[session]=]) == [=[abc]=], [=[nested default path]=]) "
        "local root = http.get([=[/api/root]=]) "
        "check(root:cookie([=[rs]=]) == [=[r1]=], [=[root path]=]) "
        "local sc = http.get([=[/api/scoped]=]) "
        "check(sc:cookie([=[sc]=]) == nil, [=[other path]=]) "
        "local o = http.get([=[/other/x]=]) "
        "check(r:cookie([=[session]=]) == [=[abc]=] and o:cookie([=[session]=]) == nil, "
        "[=[kept by its response]=]) "
        "check(o:cookie([=[sc]=]) == [=[s1]=], [=[sent to /other]=]) "
        "local h = http.get([=[/go]=]) "
        "check(h.status == 200 and h:cookie([=[hop]=]) == [=[h1]=], [=[final hop]=]) "
        "local plain = http.get([=[/api/x]=]) "
        "check(plain:cookie([=[hop]=]) == nil, [=[narrower path]=]) end',"
        "'journeys':[{'name':'j','steps':[{'lua':'f'}]}]");
    journey_run_users(&f, 1);
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++)
        assert_int_equal(check_passes(&f, checks[i]), 1);
    journey_run_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cookie_of_the_url_answered),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
