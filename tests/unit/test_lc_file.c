/* test_lc_file.c — unit tests for common/lc_file.c: whole reads, the cap, and unreadable paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "lc_err.h"
#include "lc_file.h"

typedef struct fixture_s {
    char dir[64];
    char path[128];
} fixture_t;

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "/tmp/lc_file_XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/data", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    unlink(f->path);
    rmdir(f->dir);
    free(f);
    return 0;
}

/* Writes len bytes of a repeating pattern (with NULs) to path. */
static void write_pattern(const char *path, size_t len)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    for (size_t i = 0; i < len; i++)
        assert_int_not_equal(fputc((int)(i % 251), fp), EOF);
    assert_int_equal(fclose(fp), 0);
}

static void expect_pattern(const char *buf, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)buf[i] != i % 251)
            fail_msg("byte %zu: %u", i, (unsigned char)buf[i]);
    assert_int_equal(buf[len], '\0');
}

static void test_whole_file(void **state)
{
    fixture_t *f = *state;
    /* Past the first chunk, so the buffer grows; exactly at the cap is allowed. */
    static const size_t sizes[] = {0, 1, 1000, 64 * 1024, 64 * 1024 + 1, 300000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        write_pattern(f->path, sizes[i]);
        char *buf = NULL, err[256] = "";
        size_t len = 12345;
        assert_int_equal(lc_file_read(f->path, 300000, &buf, &len, err, sizeof err), 0);
        assert_int_equal(len, sizes[i]);
        assert_non_null(buf);
        expect_pattern(buf, len);
        assert_string_equal(err, "");
        free(buf);
    }
}

static void test_over_the_cap(void **state)
{
    fixture_t *f = *state;
    char *buf = (char *)"x", err[256], want[256];
    size_t len = 1;
    write_pattern(f->path, 65537);
    assert_int_equal(lc_file_read(f->path, 65536, &buf, &len, err, sizeof err), LC_ETOOBIG);
    assert_null(buf);
    assert_int_equal(len, 0);
    snprintf(want, sizeof want, "%s: larger than 65536 bytes", f->path);
    assert_string_equal(err, want);

    write_pattern(f->path, (1u << 20) + 1);
    assert_int_equal(lc_file_read(f->path, 1u << 20, &buf, &len, err, sizeof err), LC_ETOOBIG);
    snprintf(want, sizeof want, "%s: larger than 1 MiB", f->path);
    assert_string_equal(err, want);

    write_pattern(f->path, 11);
    assert_int_equal(lc_file_read(f->path, 10, &buf, &len, err, sizeof err), LC_ETOOBIG);
    assert_int_equal(lc_file_read(f->path, 0, &buf, &len, NULL, 0), LC_ETOOBIG);
}

/* Reading path fails with LC_EIO and "<path>: <why>", leaving *out NULL. */
static void expect_unreadable(const char *path, const char *why)
{
    char *buf = (char *)"x", err[256], want[256];
    size_t len = 1;
    assert_int_equal(lc_file_read(path, 100, &buf, &len, err, sizeof err), LC_EIO);
    assert_null(buf);
    assert_int_equal(len, 0);
    snprintf(want, sizeof want, "%s: %s", path, why);
    assert_string_equal(err, want);
}

static void test_missing_file(void **state)
{
    fixture_t *f = *state;
    expect_unreadable(f->path, "No such file or directory");
}

static void test_directory(void **state)
{
    fixture_t *f = *state;
    expect_unreadable(f->dir, "read error");
}

/* Names from outside (a scenario's tls.ca_file): a FIFO is refused at once
 * rather than blocking the caller, and so are links, devices and big files. */
static void test_read_at_refuses_what_is_not_a_small_regular_file(void **state)
{
    fixture_t *f = *state;
    char fifo[160], link[160], err[256];
    char *buf;
    size_t len;
    int dirfd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(dirfd >= 0);
    write_pattern(f->path, 1000);
    assert_int_equal(lc_file_read_at(dirfd, "data", 1000, &buf, &len, err, sizeof err), 0);
    assert_int_equal(len, 1000);
    expect_pattern(buf, len);
    free(buf);

    assert_int_equal(lc_file_read_at(dirfd, "data", 999, &buf, &len, err, sizeof err),
                     LC_ETOOBIG);
    assert_null(buf);
    assert_string_equal(err, "data: larger than 999 bytes");

    snprintf(fifo, sizeof fifo, "%s/fifo", f->dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(lc_file_read_at(dirfd, "fifo", 1000, &buf, &len, err, sizeof err),
                     LC_EINVAL);
    assert_string_equal(err, "fifo: not a regular file");
    unlink(fifo);

    snprintf(link, sizeof link, "%s/link", f->dir);
    assert_int_equal(symlink("data", link), 0);
    assert_int_equal(lc_file_read_at(dirfd, "link", 1000, &buf, &len, err, sizeof err), LC_EIO);
    unlink(link);

    assert_int_equal(lc_file_read_at(dirfd, "null", 1000, &buf, &len, err, sizeof err), LC_EIO);
    assert_int_equal(lc_file_read_at(dirfd, "../data", 1000, &buf, &len, err, sizeof err),
                     LC_EINVAL);
    assert_int_equal(lc_file_read_at(dirfd, "", 1000, &buf, &len, err, sizeof err), LC_EINVAL);
    int devfd = open("/dev", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(devfd >= 0);
    assert_int_equal(lc_file_read_at(devfd, "zero", 1000, &buf, &len, err, sizeof err),
                     LC_EINVAL);
    close(devfd);
    close(dirfd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_whole_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_over_the_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_directory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_at_refuses_what_is_not_a_small_regular_file,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
