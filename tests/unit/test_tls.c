/* test_tls.c — worker/tls.c: the run's TLS client as the plan builds it, and
 * CAs inline or from the operator's directory, and one refusal, whatever the
 * reason, for a tls.ca_file that cannot be used. Handshakes are
 * tested against nginx in tests/integration/test_tls.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "ca_pem.h"
#include "lc_err.h"
#include "lc_scenario.h"
#include "plan.h"
#include "tls.h"

/* Builds the plan of a one-task scenario for target with the given "tls"
 * object (or none); returns the plan's rv and errmsg. */
static int build(const char *target, const char *tls, worker_plan_t **p, char *err, size_t len)
{
    char json[4096];
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
    assert_null(p->origins[0].tls);
    worker_plan_free(p);
}

static void test_https_defaults(void **state)
{
    worker_plan_t *p;
    char err[256];
    /* System CAs, a name (SNI and host check) or an IP literal (address check). */
    assert_int_equal(build("https://shop.example:8443", NULL, &p, err, sizeof err), 0);
    assert_non_null(p->origins[0].tls);
    worker_plan_free(p);
    assert_int_equal(build("https://[::1]:8443", NULL, &p, err, sizeof err), 0);
    assert_non_null(p->origins[0].tls);
    worker_plan_free(p);
    assert_int_equal(build("https://127.0.0.1", "{\"insecure\": true}", &p, err, sizeof err), 0);
    assert_non_null(p->origins[0].tls);
    worker_plan_free(p);
}

/* Each https origin of a journey scenario (target or one of targets) has its own client. */
static void test_tls_per_origin(void **state)
{
    (void)state;
    static const char doc[] =
        "{\"name\": \"o\", \"target\": \"http://127.0.0.1:8080\", \"duration\": \"1s\","
        " \"targets\": {\"api\": \"https://api.example\", \"auth\": \"https://[::1]:9443\","
        " \"plain\": \"http://127.0.0.1:9000\"},"
        " \"journeys\": [{\"name\": \"j\", \"steps\": [{\"origin\": \"api\", \"path\": \"/\"}]}]}";
    lc_scenario_t sc;
    worker_plan_t *p;
    char err[256];
    assert_int_equal(lc_scenario_parse(doc, strlen(doc), &sc, err, sizeof err), 0);
    assert_int_equal(worker_plan_build(&p, &sc, err, sizeof err), 0);
    assert_int_equal(p->n_origins, 4);
    assert_null(p->origins[0].tls);
    assert_non_null(p->origins[1].tls);
    assert_non_null(p->origins[2].tls);
    assert_ptr_not_equal(p->origins[1].tls, p->origins[2].tls);
    assert_null(p->origins[3].tls);
    assert_memory_equal(p->origins[1].host_line.data, "Host: api.example\r\n", 19);
    assert_memory_equal(p->origins[2].host_line.data, "Host: [::1]:9443\r\n", 18);
    worker_plan_free(p);
}

#define CA_FILE_UNAVAILABLE "tls.ca_file: not available on this worker ("

static void test_inline_ca_pem(void **state)
{
    worker_plan_t *p;
    char err[256];
    assert_int_equal(
        build("https://127.0.0.1", "{\"ca_pem\": \"" TEST_CA_PEM_JSON "\"}", &p, err, sizeof err),
        0);
    assert_non_null(p->origins[0].tls);
    worker_plan_free(p);
}

/* A directory of CA files as an operator sets one up, with a FIFO, a link and
 * a big file a tenant might name. */
typedef struct ca_dir_s {
    char dir[64];
} ca_dir_t;

static void put(const ca_dir_t *d, const char *name, const char *text, size_t len)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", d->dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static int ca_dir_setup(void **state)
{
    static const char pem[] = TEST_CA_PEM_JSON;
    static ca_dir_t d;
    char path[128], json_unescaped[sizeof pem];
    size_t n = 0;
    snprintf(d.dir, sizeof d.dir, "/tmp/lc-test-cadir-XXXXXX");
    assert_non_null(mkdtemp(d.dir));
    for (size_t i = 0; pem[i] != '\0'; i++) /* "\\n" (JSON) -> '\n' */
        json_unescaped[n++] = pem[i] == '\\' && pem[i + 1] == 'n' ? (i++, '\n') : pem[i];
    put(&d, "ca.pem", json_unescaped, n);
    put(&d, "garbage.pem", "not a certificate\n", 18);
    char *big = calloc(1, 1024 * 1024 + 1);
    assert_non_null(big);
    put(&d, "big.pem", big, 1024 * 1024 + 1);
    free(big);
    snprintf(path, sizeof path, "%s/fifo.pem", d.dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    snprintf(path, sizeof path, "%s/link.pem", d.dir);
    assert_int_equal(symlink("ca.pem", path), 0);
    *state = &d;
    return 0;
}

static int ca_dir_teardown(void **state)
{
    static const char *const names[] = {"ca.pem", "garbage.pem", "big.pem", "fifo.pem",
                                        "link.pem"};
    ca_dir_t *d = *state;
    char path[128];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", d->dir, names[i]);
        unlink(path);
    }
    rmdir(d->dir);
    worker_tls_ca_dir_set(NULL, NULL, 0);
    return 0;
}

static int build_ca_file(const char *name, char *err, size_t len)
{
    char tls[128];
    worker_plan_t *p = NULL;
    snprintf(tls, sizeof tls, "{\"ca_file\": \"%s\"}", name);
    int rv = build("https://127.0.0.1", tls, &p, err, len);
    if (rv == 0)
        worker_plan_free(p);
    return rv;
}

static void test_ca_file_from_the_operators_directory(void **state)
{
    ca_dir_t *d = *state;
    char err[256];
    assert_int_equal(worker_tls_ca_dir_set(d->dir, err, sizeof err), 0);
    assert_int_equal(build_ca_file("ca.pem", err, sizeof err), 0);
    /* Whatever is wrong, a tenant hears the same: it learns nothing about the
     * worker's files. A FIFO returns at once instead of blocking. */
    static const char *const refused[] = {"missing.pem", "garbage.pem", "big.pem", "fifo.pem",
                                          "link.pem"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        err[0] = '\0';
        assert_int_equal(build_ca_file(refused[i], err, sizeof err), LC_EINVAL);
        if (strncmp(err, CA_FILE_UNAVAILABLE, strlen(CA_FILE_UNAVAILABLE)) != 0)
            fail_msg("%s: %s", refused[i], err);
        assert_null(strstr(err, refused[i]));
    }
}

static void test_ca_file_without_a_directory(void **state)
{
    ca_dir_t *d = *state;
    char err[256], generic[256];
    assert_int_equal(worker_tls_ca_dir_set(d->dir, err, sizeof err), 0);
    assert_int_equal(build_ca_file("missing.pem", generic, sizeof generic), LC_EINVAL);
    assert_int_equal(worker_tls_ca_dir_set(NULL, err, sizeof err), 0);
    /* Even a file that exists there is refused, with the very same words. */
    assert_int_equal(build_ca_file("ca.pem", err, sizeof err), LC_EINVAL);
    assert_string_equal(err, generic);
    assert_int_equal(worker_tls_ca_dir_set("/nonexistent-dir", err, sizeof err), LC_EIO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_http_has_no_tls),
        cmocka_unit_test(test_https_defaults),
        cmocka_unit_test(test_tls_per_origin),
        cmocka_unit_test(test_inline_ca_pem),
        cmocka_unit_test_setup_teardown(test_ca_file_from_the_operators_directory,
                                        ca_dir_setup, ca_dir_teardown),
        cmocka_unit_test_setup_teardown(test_ca_file_without_a_directory, ca_dir_setup,
                                        ca_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
