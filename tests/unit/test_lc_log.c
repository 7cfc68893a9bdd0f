/* test_lc_log.c — common/lc_log.c: values from the network cannot forge
 * lines or keys, clean lines come out as they always did, and the format's
 * conversions behave as printf's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lc_log.h"

/* Points stderr at a temporary file for the length of one test. */
typedef struct capture_s {
    char path[64];
    int saved;
} capture_t;

static int setup(void **state)
{
    static capture_t c;
    snprintf(c.path, sizeof c.path, "/tmp/lc-test-log-XXXXXX");
    int fd = mkstemp(c.path);
    assert_true(fd >= 0);
    fflush(stderr);
    c.saved = dup(STDERR_FILENO);
    assert_true(c.saved >= 0);
    assert_true(dup2(fd, STDERR_FILENO) >= 0);
    close(fd);
    *state = &c;
    return 0;
}

static int teardown(void **state)
{
    capture_t *c = *state;
    fflush(stderr);
    dup2(c->saved, STDERR_FILENO);
    close(c->saved);
    unlink(c->path);
    return 0;
}

/* What was logged so far, without the "ts=… " prefix of each line checked:
 * returns the text after "module=<m> " of the only line, failing unless
 * there is exactly one. */
static char *only_line(capture_t *c, const char *module)
{
    static char buf[16384];
    char want[64];
    fflush(stderr);
    dup2(c->saved, STDERR_FILENO); /* cmocka's failure messages go to stderr */
    FILE *f = fopen(c->path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    assert_true(n > 0);
    assert_int_equal(buf[n - 1], '\n');
    const char *nl = strchr(buf, '\n');
    if (nl != buf + n - 1)
        fail_msg("more than one line: %s", buf);
    buf[n - 1] = '\0';
    assert_memory_equal(buf, "ts=", 3);
    snprintf(want, sizeof want, " module=%s ", module);
    char *m = strstr(buf, want);
    assert_non_null(m);
    return m + strlen(want);
}

static void test_clean_lines_are_unchanged(void **state)
{
    lc_info("runs", "msg=\"run finished\" run=%llu state=%s reason=\"%s\"", 7ull, "finished",
            "all users done, 100% (of 3)");
    assert_string_equal(only_line(*state, "runs"),
                        "msg=\"run finished\" run=7 state=finished reason=\"all users done, "
                        "100% (of 3)\"");
}

/* The attack: a worker or a target puts a newline and a fake line in a value. */
static void test_a_newline_cannot_forge_a_line(void **state)
{
    lc_warn("fleet", "msg=\"assignment refused\" worker=%s reason=\"%s\"",
            "w1\nts=2026-01-01T00:00:00.000Z level=error module=api msg=\"admin token reset\"",
            "a\r\nb\tc\x01\x7f");
    assert_string_equal(only_line(*state, "fleet"),
                        "msg=\"assignment refused\" "
                        "worker=w1\\nts=2026-01-01T00:00:00.000Z level=error module=api "
                        "msg=\"admin token reset\" reason=\"a\\r\\nb\\tc\\x01\\x7f\"");
}

/* A quote inside a quoted value cannot close it and add keys. */
static void test_a_quote_cannot_end_a_quoted_value(void **state)
{
    lc_error("api", "msg=\"%s\" path=\"%s\" n=%d", "bad \"request\"",
             "/x\" level=\"debug", 3);
    assert_string_equal(only_line(*state, "api"),
                        "msg=\"bad \\\"request\\\"\" path=\"/x\\\" level=\\\"debug\" n=3");
}

static void test_backslashes_in_quoted_values(void **state)
{
    lc_info("store", "msg=\"open\" path=\"%s\" raw=%s", "C:\\data\\n", "a\\b");
    assert_string_equal(only_line(*state, "store"),
                        "msg=\"open\" path=\"C:\\\\data\\\\n\" raw=a\\b");
}

static void test_conversions_are_printfs(void **state)
{
    char want[512];
    size_t big = (size_t)1 << 40;
    snprintf(want, sizeof want,
             "d=%d u=%u zu=%zu llu=%llu x=%x f=%.1f w=%5d| s=%-4s| p=%.3s c=%c pct=%% "
             "star=%*d| sp=%.*s ld=%ld",
             -42, 42u, big, 18446744073709551615ull, 255u, 2.25, 7, "ab", "abcdef", 'q', 6, 5,
             2, "xyz", -5l);
    lc_info("m",
            "d=%d u=%u zu=%zu llu=%llu x=%x f=%.1f w=%5d| s=%-4s| p=%.3s c=%c pct=%% "
            "star=%*d| sp=%.*s ld=%ld",
            -42, 42u, big, 18446744073709551615ull, 255u, 2.25, 7, "ab", "abcdef", 'q', 6, 5, 2,
            "xyz", -5l);
    assert_string_equal(only_line(*state, "m"), want);
}

/* A huge value is cut, and the line still ends once. */
static void test_long_values_are_cut_to_one_line(void **state)
{
    char *v = malloc(20000);
    assert_non_null(v);
    memset(v, '\n', 19999);
    v[19999] = '\0';
    lc_warn("m", "msg=\"long\" v=\"%s\"", v);
    free(v);
    char *rest = only_line(*state, "m");
    assert_memory_equal(rest, "msg=\"long\" v=\"\\n\\n", 18);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_clean_lines_are_unchanged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_newline_cannot_forge_a_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_quote_cannot_end_a_quoted_value, setup, teardown),
        cmocka_unit_test_setup_teardown(test_backslashes_in_quoted_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_conversions_are_printfs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_long_values_are_cut_to_one_line, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
