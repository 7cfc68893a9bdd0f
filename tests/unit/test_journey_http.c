/* test_journey_http.c — a declarative journey's requests against a server on the engine's
 * loop (worker/journey_http.c): a cookie extract reads what the jar would send back to the URL
 * the response answered (its path, after redirects), and redirects follow their rules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "journey_fixture.h"

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

/* A 30x to /echo from /rNNN, and a few pages of their own. */
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
    } else if (strcmp(req->path, "/loop") == 0) {
        lc_http_exchange_respond(ex, 302, "text/plain", "", 0, "Location: /loop\r\n");
    } else if (strcmp(req->path, "/away") == 0) {
        lc_http_exchange_respond(ex, 302, "text/plain", "", 0,
                                 "Location: http://other.example/x\r\n");
    } else {
        lc_http_exchange_respond(ex, 200, "text/plain", "ok", 2, NULL);
    }
}

/* ---- cookie extracts ------------------------------------------------------------------- */

/* POST /api/login sets set_cookie; the step extracts cookie session and the next step sends
 * it back in its path (when it was found). */
static void run_login(jfx_t *f, srv_t *sv, const char *set_cookie)
{
    *sv = (srv_t){.set_cookie = set_cookie};
    jfx_open(f, srv_handle, sv,
             "'duration':5,'journeys':[{'name':'j','steps':["
             "{'name':'login','method':'POST','path':'/api/login','body':'x',"
             " 'extract':{'s':{'cookie':'session'}}},"
             "{'name':'me','path':'/api/me/${s}'}]}]");
    jfx_run_user(f, 1);
}

/* RFC 6265 5.1.4: no Path on a response to /api/login is the default path /api. */
static void test_cookie_default_path_of_a_nested_path(void **state)
{
    jfx_t f;
    srv_t sv;
    run_login(&f, &sv, "session=abc");
    assert_int_equal(jfx_errors(&f, "login", WORKER_ERR_EXTRACT), 0);
    assert_non_null(strstr(sv.log, "GET /api/me/abc \n"));
    jfx_close(&f);
}

static void test_cookie_with_root_path(void **state)
{
    jfx_t f;
    srv_t sv;
    run_login(&f, &sv, "session=root1; Path=/");
    assert_int_equal(jfx_errors(&f, "login", WORKER_ERR_EXTRACT), 0);
    assert_non_null(strstr(sv.log, "GET /api/me/root1 \n"));
    jfx_close(&f);
}

/* A cookie for /other is in the jar but would not go back to /api/login: not extracted. */
static void test_cookie_for_another_path_is_an_extract_error(void **state)
{
    jfx_t f;
    srv_t sv;
    run_login(&f, &sv, "session=elsewhere; Path=/other");
    assert_int_equal(jfx_errors(&f, "login", WORKER_ERR_EXTRACT), 1);
    assert_null(strstr(sv.log, "/api/me/"));
    assert_non_null(strstr(f.trace_text, "no cookie session that a request to 127.0.0.1/api/login "
                                         "would send"));
    jfx_close(&f);
}

/* After a redirect the response answered the final hop's URL: its cookie, default path
 * /api/login, is found. */
static void test_cookie_of_the_final_hop(void **state)
{
    jfx_t f;
    srv_t sv = {.set_cookie = ""};
    jfx_open(&f, srv_handle, &sv,
             "'duration':5,'journeys':[{'name':'j','steps':["
             "{'name':'go','path':'/go','extract':{'h':{'cookie':'hop'}}},"
             "{'name':'me','path':'/api/me/${h}'}]}]");
    jfx_run_user(&f, 1);
    assert_int_equal(jfx_errors(&f, "go", WORKER_ERR_EXTRACT), 0);
    assert_non_null(strstr(sv.log, "GET /api/login/done \nGET /api/me/h1 \n"));
    jfx_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cookie_default_path_of_a_nested_path),
        cmocka_unit_test(test_cookie_with_root_path),
        cmocka_unit_test(test_cookie_for_another_path_is_an_extract_error),
        cmocka_unit_test(test_cookie_of_the_final_hop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
