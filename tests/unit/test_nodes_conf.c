/* test_nodes_conf.c — unit tests for common/lc_nodes_conf.c: valid files and file:line errors. */
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
#include "lc_nodes_conf.h"

static bool is_zeroed(const lc_nodes_conf_t *c)
{
    static const lc_nodes_conf_t zero;
    return memcmp(c, &zero, sizeof zero) == 0;
}

/* Parses text as "nodes.conf" expecting exactly the message `want`. */
static void expect_error(const char *text, const char *want)
{
    lc_nodes_conf_t c;
    char err[512] = "";
    memset(&c, 0x77, sizeof c);
    int rv = lc_nodes_conf_parse(text, "nodes.conf", &c, err, sizeof err);
    if (rv != LC_EINVAL)
        fail_msg("expected LC_EINVAL for:\n%s\ngot %d", text, rv);
    assert_string_equal(err, want);
    assert_true(is_zeroed(&c));
}

static void test_valid(void **state)
{
    const char *text = "# id  raft-address     worker-address   api-address\n"
                       "\n"
                       "1     10.0.0.1:5556    10.0.0.1:5557    10.0.0.1:8089\n"
                       "   # indented comment\n"
                       "2\t10.0.0.2:5556\t10.0.0.2:5557\t10.0.0.2:8089   # trailing comment\r\n"
                       "\t \n"
                       "3     loadmaster-2.loadmaster.lc.svc:5556  loadmaster-2.loadmaster.lc.svc:5557"
                       "  loadmaster-2.loadmaster.lc.svc:8089\n"
                       "9000  [::1]:5556 [fe80::1]:5557 [::1]:8089"; /* no final newline */
    lc_nodes_conf_t c;
    char err[256] = "";
    int rv = lc_nodes_conf_parse(text, "nodes.conf", &c, err, sizeof err);
    if (rv != 0)
        fail_msg("unexpected error: %s", err);
    assert_int_equal(c.n, 4);
    assert_int_equal(c.nodes[0].id, 1);
    assert_string_equal(c.nodes[0].raft.host, "10.0.0.1");
    assert_int_equal(c.nodes[0].raft.port, 5556);
    assert_int_equal(c.nodes[0].worker.port, 5557);
    assert_int_equal(c.nodes[0].api.port, 8089);
    assert_int_equal(c.nodes[1].id, 2);
    assert_string_equal(c.nodes[1].api.host, "10.0.0.2");
    assert_int_equal(c.nodes[1].api.port, 8089);
    assert_int_equal(c.nodes[2].id, 3);
    assert_string_equal(c.nodes[2].worker.host, "loadmaster-2.loadmaster.lc.svc");
    assert_int_equal(c.nodes[2].worker.port, 5557);
    assert_int_equal(c.nodes[3].id, 9000);
    assert_string_equal(c.nodes[3].raft.host, "::1");
    assert_string_equal(c.nodes[3].worker.host, "fe80::1");
    assert_int_equal(c.nodes[3].api.port, 8089);

    const lc_node_t *n = lc_nodes_conf_find(&c, 3);
    assert_non_null(n);
    assert_ptr_equal(n, &c.nodes[2]);
    assert_null(lc_nodes_conf_find(&c, 4));
    assert_null(lc_nodes_conf_find(&c, 0));
}

static void test_max_nodes(void **state)
{
    char text[2048];
    size_t len = 0;
    for (int i = 1; i <= LC_NODES_MAX; i++)
        len += (size_t)snprintf(text + len, sizeof text - len, "%d h%d:1 h%d:2 h%d:3\n", i, i, i,
                                i);
    lc_nodes_conf_t c;
    char err[256];
    assert_int_equal(lc_nodes_conf_parse(text, "n.conf", &c, err, sizeof err), 0);
    assert_int_equal(c.n, LC_NODES_MAX);
    snprintf(text + len, sizeof text - len, "# one more\n10 h10:1 h10:2 h10:3\n");
    expect_error(text, "nodes.conf:11: more than 9 nodes");
}

static void test_field_count(void **state)
{
    expect_error("# header\n\n1 a:1\n",
                 "nodes.conf:3: expected 4 fields (id raft-address worker-address api-address), "
                 "got 2");
    expect_error("1 a:1 b:1 c:1 d:1\n",
                 "nodes.conf:1: expected 4 fields (id raft-address worker-address api-address), "
                 "got 5");
    /* A '#' inside the line cuts the rest, so the field count drops. */
    expect_error("1 a:1 b:1 #c:1\n",
                 "nodes.conf:1: expected 4 fields (id raft-address worker-address api-address), "
                 "got 3");
}

static void test_bad_ids(void **state)
{
    static const char *const ids[] = {"0", "9001", "-1", "abc", "1x", "+2", "99999999999999999999"};
    char text[256], want[256];
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        snprintf(text, sizeof text, "1 a:1 a:2 a:3\n%s b:1 b:2 b:3\n", ids[i]);
        snprintf(want, sizeof want, "nodes.conf:2: id must be an integer from 1 to 9000");
        expect_error(text, want);
    }
}

static void test_duplicates(void **state)
{
    expect_error("# c\n2 a:1 a:2 a:3\n\n2 b:1 b:2 b:3\n",
                 "nodes.conf:4: duplicate id 2 (first on line 2)");
    expect_error("1 a:1 a:2 a:3\n2 A:1 b:2 b:3\n",
                 "nodes.conf:2: raft address A:1 already used as raft address on line 1");
    expect_error("1 a:1 a:2 a:3\n2 b:1 b:2 a:2\n",
                 "nodes.conf:2: api address a:2 already used as worker address on line 1");
    expect_error("1 a:1 a:1 a:3\n",
                 "nodes.conf:1: worker address a:1 already used as raft address on line 1");
    expect_error("1 [::1]:1 [::1]:2 [::1]:3\n2 [::1]:3 b:2 b:3\n",
                 "nodes.conf:2: raft address [::1]:3 already used as api address on line 1");
}

static void test_bad_addresses(void **state)
{
    expect_error("1 a:1 a:2 a:3\n\n\n\n5 10.0.0.1 b:2 b:3\n",
                 "nodes.conf:5: raft address '10.0.0.1' expected host:port");
    expect_error("1 a:1 a:70000 a:3\n",
                 "nodes.conf:1: worker address 'a:70000' port must be a number from 1 to 65535");
    expect_error("1 a:1 a:2 a:0\n",
                 "nodes.conf:1: api address 'a:0' port must be a number from 1 to 65535");
    expect_error("1 a:1 [::1:2 a:3\n",
                 "nodes.conf:1: worker address '[::1:2' missing ']' after IPv6 address");
    expect_error("1 ::1 a:2 a:3\n", "nodes.conf:1: raft address '::1' expected host:port");
    expect_error("1 :80 a:2 a:3\n", "nodes.conf:1: raft address ':80' expected host:port");
}

static void test_no_nodes(void **state)
{
    expect_error("", "nodes.conf: no nodes");
    expect_error("# only a comment\n\n   \n", "nodes.conf: no nodes");
}

static void test_long_line(void **state)
{
    char text[1200];
    memset(text, 'a', sizeof text - 1);
    text[sizeof text - 1] = '\0';
    memcpy(text, "# x\n", 4);
    expect_error(text, "nodes.conf:2: line longer than 1024 characters");
}

static void write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void test_load(void **state)
{
    char dir[] = "/tmp/lc_nodes_conf_XXXXXX";
    char path[256], err[512];
    lc_nodes_conf_t c;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/nodes.conf", dir);

    const char *good = "1 a:1 a:2 a:3\n2 b:1 b:2 b:3\n";
    write_file(path, good, strlen(good));
    assert_int_equal(lc_nodes_conf_load(path, &c, err, sizeof err), 0);
    assert_int_equal(c.n, 2);

    const char *bad = "1 a:1 a:2 a:3\n1 b:1 b:2 b:3\n";
    write_file(path, bad, strlen(bad));
    assert_int_equal(lc_nodes_conf_load(path, &c, err, sizeof err), LC_EINVAL);
    char want[512];
    snprintf(want, sizeof want, "%s:2: duplicate id 1 (first on line 1)", path);
    assert_string_equal(err, want);

    size_t big = 64 * 1024 + 1;
    char *huge = malloc(big);
    assert_non_null(huge);
    memset(huge, '\n', big);
    write_file(path, huge, big);
    free(huge);
    assert_int_equal(lc_nodes_conf_load(path, &c, err, sizeof err), LC_EINVAL);
    assert_non_null(strstr(err, "larger than 65536 bytes"));

    write_file(path, "1 a:1\0 a:2 a:3\n", 15);
    assert_int_equal(lc_nodes_conf_load(path, &c, err, sizeof err), LC_EINVAL);
    assert_non_null(strstr(err, "NUL"));

    assert_int_equal(unlink(path), 0);
    assert_int_not_equal(lc_nodes_conf_load(path, &c, err, sizeof err), 0);
    snprintf(want, sizeof want, "%s: No such file or directory", path);
    assert_string_equal(err, want);
    assert_true(is_zeroed(&c));
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),         cmocka_unit_test(test_max_nodes),
        cmocka_unit_test(test_field_count),   cmocka_unit_test(test_bad_ids),
        cmocka_unit_test(test_duplicates),    cmocka_unit_test(test_bad_addresses),
        cmocka_unit_test(test_no_nodes),      cmocka_unit_test(test_long_line),
        cmocka_unit_test(test_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
