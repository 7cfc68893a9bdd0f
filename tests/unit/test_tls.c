/* test_tls.c — worker/tls.c: the run's TLS client as the plan builds it, and
 * the clear refusal of a tls.ca_file that cannot be loaded. Handshakes are
 * tested against nginx in tests/integration/test_tls.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lc_err.h"
#include "lc_scenario.h"
#include "plan.h"
#include "tls.h"

/* Builds the plan of a one-task scenario for target with the given "tls"
 * object (or none); returns the plan's rv and errmsg. */
static int build(const char *target, const char *tls, worker_plan_t **p, char *err, size_t len)
{
    char json[1024];
    lc_scenario_t sc;
    snprintf(json, sizeof json,
             "{\"name\": \"t\", \"target\": \"%s\", \"duration\": \"1s\"%s%s,"
             " \"tasks\": [{\"path\": \"/\"}]}",
             target, tls ? ", \"tls\": " : "", tls ? tls : "");
    assert_int_equal(lc_scenario_parse(json, strlen(json), &sc, err, len), 0);
    err[0] = '\0';
    int rv = worker_plan_build(p, &sc, err, len);
    lc_scenario_free(&sc);
    return rv;
}

static void test_http_has_no_tls(void **state)
{
    worker_plan_t *p;
    char err[256];
    assert_int_equal(build("http://127.0.0.1:8080", NULL, &p, err, sizeof err), 0);
    assert_null(p->tls);
    worker_plan_free(p);
}

static void test_https_defaults(void **state)
{
    worker_plan_t *p;
    char err[256];
    /* System CAs, a name (SNI and host check) or an IP literal (address check). */
    assert_int_equal(build("https://shop.example:8443", NULL, &p, err, sizeof err), 0);
    assert_non_null(p->tls);
    worker_plan_free(p);
    assert_int_equal(build("https://[::1]:8443", NULL, &p, err, sizeof err), 0);
    assert_non_null(p->tls);
    worker_plan_free(p);
    assert_int_equal(build("https://127.0.0.1", "{\"insecure\": true}", &p, err, sizeof err), 0);
    assert_non_null(p->tls);
    worker_plan_free(p);
}

static void test_missing_ca_file(void **state)
{
    worker_plan_t *p = NULL;
    char err[256];
    int rv = build("https://127.0.0.1", "{\"ca_file\": \"/nonexistent/ca.pem\"}", &p, err,
                   sizeof err);
    assert_int_equal(rv, LC_EINVAL);
    assert_string_equal(err, "tls.ca_file: /nonexistent/ca.pem: No such file or directory");
}

static void test_unloadable_ca_file(void **state)
{
    char path[] = "/tmp/lc-test-tls-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "not a certificate\n", 18), 18);
    close(fd);
    char tls[128], err[256], want[128];
    worker_plan_t *p = NULL;
    snprintf(tls, sizeof tls, "{\"ca_file\": \"%s\"}", path);
    int rv = build("https://127.0.0.1", tls, &p, err, sizeof err);
    unlink(path);
    assert_int_equal(rv, LC_EINVAL);
    snprintf(want, sizeof want, "tls.ca_file: %s: ", path);
    assert_memory_equal(err, want, strlen(want));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_http_has_no_tls),
        cmocka_unit_test(test_https_defaults),
        cmocka_unit_test(test_missing_ca_file),
        cmocka_unit_test(test_unloadable_ca_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
