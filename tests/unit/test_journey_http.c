/* test_journey_http.c — a declarative journey's requests against a server on the engine's
 * loop (worker/journey_http.c): a cookie extract reads what the jar would send back to the URL
 * the response answered (its path, after redirects), and redirects follow their rules: 301 and
 * 302 turn a POST into a GET without its body, 303 anything, 307 and 308 keep method and body
 * (of the request they answer, also in a chain), 10 hops by default, listed origins only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "journey_run_fixture.h"

/* What the server answers and what it heard: one "METHOD path body" line per request. */
typedef struct srv_s {
    const char *set_cookie; /* the Set-Cookie of POST /api/login ("" none) */
    char log[4096];
    size_t log_len;
} srv_t;

static void srv_log(srv_t *sv, const lc_http_request_t *req)
{
    int n = snprintf(sv->log + sv->log_len, sizeof sv->log - sv->log_len, "%s %s %s\n",
                     req->method, req->path, req->body);
    assert_true(n > 0 && (size_t)n < sizeof sv->log - sv->log_len);
    sv->log_len += (size_t)n;
}

/* A 30x to /echo from /rNNN, /c303 a 303 to /r307, and a few pages of their own. */
static void srv_handle(void *arg, lc_http_exchange_t *ex, const lc_http_request_t *req)
{
    srv_t *sv = arg;
    char hdr[256];
    int status = 0;
    srv_log(sv, req);
    if (sscanf(req->path, "/r%d", &status) == 1) {
        lc_http_exchange_respond(ex, status, "text/plain", "", 0, "Location: /echo\r\n");
    } else if (strcmp(req->path, "/api/login") == 0) {
        snprintf(hdr, sizeof hdr, "Set-Cookie: %s\r\n", sv->set_cookie);
        lc_http_exchange_respond(ex, 200, "text/plain", "", 0, sv->set_cookie[0] ? hdr : NULL);
    } else if (strcmp(req->path, "/go") == 0) { /* the cookie comes with the final hop */
        lc_http_exchange_respond(ex, 302, "text/plain", "", 0, "Location: /api/login/done\r\n");
    } else if (strcmp(req->path, "/api/login/done") == 0) {
        lc_http_exchange_respond(ex, 200, "text/plain", "", 0, "Set-Cookie: hop=h1\r\n");
    } else if (strcmp(req->path, "/c303") == 0) {
        lc_http_exchange_respond(ex, 303, "text/plain", "", 0, "Location: /r307\r\n");
    } else if (strcmp(req->path, "/loop") == 0) {
        lc_http_exchange_respond(ex, 302, "text/plain", "", 0, "Location: /loop\r\n");
    } else if (strcmp(req->path, "/away") == 0) {
        lc_http_exchange_respond(ex, 302, "text/plain", "", 0,
                                 "Location: http://other.example/x\r\n");
    } else {
        lc_http_exchange_respond(ex, 200, "text/plain", "ok", 2, NULL);
    }
}

/* One user of the journeys in rest (after 'duration':5,) through on_start, one iteration and
 * on_stop, POST /api/login setting set_cookie. */
static void run_journey(journey_run_t *f, srv_t *sv, const char *set_cookie, const char *rest)
{
    char text[4096];
    *sv = (srv_t){.set_cookie = set_cookie};
    snprintf(text, sizeof text, "'duration':5,%s", rest);
    journey_run_open(f, "t", journey_run_serve_here(f, srv_handle, sv), true, text);
    journey_run_users(f, 1);
}

/* ---- cookie extracts ------------------------------------------------------------------- */

/* POST /api/login sets set_cookie; the step extracts cookie session and the next step sends
 * it back in its path (when it was found). */
static void run_login(journey_run_t *f, srv_t *sv, const char *set_cookie)
{
    run_journey(f, sv, set_cookie,
                "'journeys':[{'name':'j','steps':["
                "{'name':'login','method':'POST','path':'/api/login','body':'x',"
                " 'extract':{'s':{'cookie':'session'}}},"
                "{'name':'me','path':'/api/me/${s}'}]}]");
}

/* The login's cookie set_cookie is extracted and sent back: the server heard request. */
static void expect_login_cookie_sent(const char *set_cookie, const char *request)
{
    journey_run_t f;
    srv_t sv;
    run_login(&f, &sv, set_cookie);
    assert_int_equal(ep_stats(&f, "login")->errors[WORKER_ERR_EXTRACT], 0);
    assert_non_null(strstr(sv.log, request));
    journey_run_close(&f);
}

/* RFC 6265 5.1.4: no Path on a response to /api/login is the default path /api. */
static void test_cookie_default_path_of_a_nested_path(void **state)
{
    expect_login_cookie_sent("session=abc", "GET /api/me/abc \n");
}

static void test_cookie_with_root_path(void **state)
{
    expect_login_cookie_sent("session=root1; Path=/", "GET /api/me/root1 \n");
}

/* A cookie for /other is in the jar but would not go back to /api/login: not extracted. */
static void test_cookie_for_another_path_is_an_extract_error(void **state)
{
    journey_run_t f;
    srv_t sv;
    run_login(&f, &sv, "session=elsewhere; Path=/other");
    assert_int_equal(ep_stats(&f, "login")->errors[WORKER_ERR_EXTRACT], 1);
    assert_null(strstr(sv.log, "/api/me/"));
    assert_non_null(strstr(f.trace_text, "no cookie session that a request to 127.0.0.1/api/login "
                                         "would send"));
    journey_run_close(&f);
}

/* After a redirect the response answered the final hop's URL: its cookie, default path
 * /api/login, is found. */
static void test_cookie_of_the_final_hop(void **state)
{
    journey_run_t f;
    srv_t sv;
    run_journey(&f, &sv, "",
                "'journeys':[{'name':'j','steps':["
                "{'name':'go','path':'/go','extract':{'h':{'cookie':'hop'}}},"
                "{'name':'me','path':'/api/me/${h}'}]}]");
    assert_int_equal(ep_stats(&f, "go")->errors[WORKER_ERR_EXTRACT], 0);
    assert_non_null(strstr(sv.log, "GET /api/login/done \nGET /api/me/h1 \n"));
    journey_run_close(&f);
}

/* ---- redirects -------------------------------------------------------------------------- */

/* What reached the server, hop by hop: "METHOD path body" of each request. */
static void test_redirect_methods(void **state)
{
    journey_run_t f;
    srv_t sv;
    run_journey(&f, &sv, "",
                "'journeys':[{'name':'j','steps':["
                "{'name':'p301','method':'POST','path':'/r301','body':'b1'},"
                "{'name':'p302','method':'POST','path':'/r302','body':'b2'},"
                "{'name':'u303','method':'PUT','path':'/r303','body':'b3'},"
                "{'name':'p307','method':'POST','path':'/r307','body':'b4'},"
                "{'name':'p308','method':'POST','path':'/r308','body':'b5'},"
                "{'name':'chain','method':'POST','path':'/c303','body':'b6'}]}]");
    assert_string_equal(sv.log, "POST /r301 b1\nGET /echo \n"
                                "POST /r302 b2\nGET /echo \n"
                                "PUT /r303 b3\nGET /echo \n"
                                "POST /r307 b4\nPOST /echo b4\n"
                                "POST /r308 b5\nPOST /echo b5\n"
                                "POST /c303 b6\nGET /r307 \nGET /echo \n");
    assert_int_equal(ep_stats(&f, "chain")->errors[WORKER_ERR_REDIRECT], 0);
    journey_run_close(&f);
}

/* How many requests of path the server heard. */
static size_t heard(const srv_t *sv, const char *line)
{
    size_t n = 0;
    for (const char *p = strstr(sv->log, line); p != NULL; p = strstr(p + 1, line))
        n++;
    return n;
}

/* Ten hops by default: the 11th redirect is error kind redirect, after 11 requests, each
 * counted on the step; follow_redirects 2 stops after 3; another origin is refused at once. */
static void test_redirect_limits(void **state)
{
    journey_run_t f;
    srv_t sv;
    run_journey(&f, &sv, "",
                "'journeys':[{'name':'j','on_error':'continue','steps':["
                "{'name':'loop','path':'/loop'},"
                "{'name':'two','path':'/loop?two','follow_redirects':2},"
                "{'name':'away','path':'/away'}]}]");
    assert_int_equal(heard(&sv, "GET /loop "), 11 + 3);
    assert_int_equal(ep_stats(&f, "loop")->errors[WORKER_ERR_REDIRECT], 1);
    assert_int_equal(f.r->stats->ep[lc_program_endpoint(f.plan->program, "loop")].count, 11);
    assert_int_equal(ep_stats(&f, "two")->errors[WORKER_ERR_REDIRECT], 1);
    assert_int_equal(f.r->stats->ep[lc_program_endpoint(f.plan->program, "two")].count, 3);
    assert_int_equal(heard(&sv, "GET /away "), 1);
    assert_int_equal(heard(&sv, "/x"), 0);
    assert_int_equal(ep_stats(&f, "away")->errors[WORKER_ERR_REDIRECT], 1);
    journey_run_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cookie_default_path_of_a_nested_path),
        cmocka_unit_test(test_cookie_with_root_path),
        cmocka_unit_test(test_cookie_for_another_path_is_an_extract_error),
        cmocka_unit_test(test_cookie_of_the_final_hop),
        cmocka_unit_test(test_redirect_methods),
        cmocka_unit_test(test_redirect_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
