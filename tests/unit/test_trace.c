/* test_trace.c — worker/trace.c: the dry run's trace masks the values of secret feeder columns
 * wherever it prints a request or a value, as they are or percent-encoded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../worker/trace.h"

typedef struct traced_s {
    char *text;
    size_t len;
    FILE *out;
    worker_trace_t trace;
} traced_t;

static void open_trace(traced_t *t)
{
    t->text = NULL;
    t->len = 0;
    t->out = open_memstream(&t->text, &t->len);
    assert_non_null(t->out);
    worker_trace_init(&t->trace, t->out);
}

/* Closes the stream: t->text holds what the trace printed (freed by the caller). */
static void close_trace(traced_t *t)
{
    assert_int_equal(fclose(t->out), 0);
}

static worker_trace_secrets_t secrets_of(const char *a, const char *b)
{
    worker_trace_secrets_t s = {.n = 0};
    s.v[s.n++] = (lc_value_t){.data = a, .len = strlen(a)};
    if (b != NULL)
        s.v[s.n++] = (lc_value_t){.data = b, .len = strlen(b)};
    return s;
}

/* The request line: a raw secret, its url-filter encoding and a form's '+' for a space are
 * all "***"; what is not secret stays readable. */
static void test_request_line_masked(void **state)
{
    (void)state;
    traced_t t;
    worker_trace_secrets_t sec = secrets_of("Pa55 w0rd!", "alice-key");
    const char req[] = "GET /login/Pa55 w0rd!?u=bob&pw=Pa55%20w0rd%21&f=Pa55+w0rd%21"
                       "&k=alice-key HTTP/1.1\r\nAuthorization: Pa55 w0rd!\r\n\r\n";
    open_trace(&t);
    worker_trace_request(&t.trace, req, sizeof req - 1, 0, &sec);
    close_trace(&t);
    assert_null(strstr(t.text, "Pa55"));
    assert_null(strstr(t.text, "w0rd"));
    assert_null(strstr(t.text, "alice-key"));
    assert_non_null(strstr(t.text, "GET /login/***?u=bob&pw=***&f=***&k=*** HTTP/1.1\n"));
    free(t.text);
}

/* Without secrets the line is printed as it was; a secret cut by the 400-byte limit is still
 * masked whole. */
static void test_no_secrets_and_the_cut(void **state)
{
    (void)state;
    traced_t t;
    char req[512];
    memset(req, 'a', sizeof req);
    memcpy(req, "GET /", 5);
    memcpy(req + 398, "SECRETVALUE", 11);
    worker_trace_secrets_t sec = secrets_of("SECRETVALUE", NULL);
    open_trace(&t);
    worker_trace_request(&t.trace, "GET /x HTTP/1.1\r\n\r\n", 19, 1, NULL);
    worker_trace_request(&t.trace, req, sizeof req, 0, &sec);
    close_trace(&t);
    assert_non_null(strstr(t.text, "(redirect) GET /x HTTP/1.1\n"));
    assert_null(strstr(t.text, "SECRET"));
    assert_non_null(strstr(t.text, "aa***\n"));
    free(t.text);
}

/* An extracted value that echoes a secret column prints as "***"; another value does not;
 * a variable named password is redacted as before. */
static void test_values_masked(void **state)
{
    (void)state;
    traced_t t;
    worker_trace_secrets_t sec = secrets_of("hunter2", NULL);
    lc_value_t echoed = {.data = "hunter2", .len = 7};
    lc_value_t around = {.data = "pw=hunter2;", .len = 11};
    lc_value_t plain = {.data = "t1.abc", .len = 6};
    open_trace(&t);
    worker_trace_value(&t.trace, "echoed", &echoed, true, &sec);
    worker_trace_value(&t.trace, "cookie", &around, true, &sec);
    worker_trace_value(&t.trace, "token", &plain, true, &sec);
    worker_trace_value(&t.trace, "my_password", &plain, true, NULL);
    close_trace(&t);
    assert_null(strstr(t.text, "hunter2"));
    assert_non_null(strstr(t.text, "echoed = \"***\""));
    assert_non_null(strstr(t.text, "cookie = \"pw=***;\""));
    assert_non_null(strstr(t.text, "token = \"t1.abc\" (6 bytes)"));
    assert_non_null(strstr(t.text, "my_password = <redacted>"));
    free(t.text);
}

/* More secret values than the trace holds: the whole line is masked rather than any shown. */
static void test_overflow_masks_all(void **state)
{
    (void)state;
    traced_t t;
    worker_trace_secrets_t sec = secrets_of("x", NULL);
    sec.overflow = true;
    open_trace(&t);
    worker_trace_request(&t.trace, "GET /anything HTTP/1.1\r\n\r\n", 26, 0, &sec);
    close_trace(&t);
    assert_null(strstr(t.text, "anything"));
    assert_non_null(strstr(t.text, "***"));
    free(t.text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_line_masked),
        cmocka_unit_test(test_no_secrets_and_the_cut),
        cmocka_unit_test(test_values_masked),
        cmocka_unit_test(test_overflow_masks_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
