/* test_store_file.c — unit tests of master/store/store_file.c: the store on
 * disk in WAL mode, readers beside the writer, snapshots pinned at begin and
 * serialized later, and restores that readers see whole. */
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

#include "lc_err.h"
#include "store.h"
#include "store_commands.h"

typedef struct {
    char dir[64];
    char path[96];
    store_t *writer;
} fixture_t;

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/lc-test-store-file.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/state.db", f->dir);
    char err[256];
    assert_int_equal(store_open_file(&f->writer, f->path, err, sizeof err), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    store_close(f->writer);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

static store_t *reader_of(const fixture_t *f)
{
    store_t *r;
    char err[256];
    assert_int_equal(store_open_reader(&r, f->writer, err, sizeof err), 0);
    return r;
}

static void add_runs(store_t *s, uint64_t from, uint64_t to)
{
    for (uint64_t id = from; id <= to; id++)
        assert_int_equal(test_store_create_run(s, id, "r", "{}", 1, 1000 + id), 0);
}

/* A reader on another connection sees what the writer applied. */
static void test_reader_sees_writes(void **state)
{
    fixture_t *f = *state;
    store_t *r = reader_of(f);
    assert_int_equal(store_max_run_id(r), 0);
    add_runs(f->writer, 1, 3);
    assert_int_equal(store_max_run_id(r), 3);
    /* It cannot write. */
    assert_int_not_equal(test_store_create_run(r, 9, "x", "{}", 1, 1), 0);
    assert_int_equal(store_max_run_id(f->writer), 3);
    store_close(r);
}

/* Whatever the file held before is gone: Raft rebuilds the state. */
static void test_open_starts_empty(void **state)
{
    fixture_t *f = *state;
    add_runs(f->writer, 1, 2);
    store_close(f->writer);
    char err[256];
    assert_int_equal(store_open_file(&f->writer, f->path, err, sizeof err), 0);
    assert_int_equal(store_max_run_id(f->writer), 0);
}

static void test_memory_store_has_no_readers(void **state)
{
    (void)state;
    store_t *m = test_store_open(), *r = NULL;
    char err[256];
    assert_false(store_has_readers(m));
    assert_int_equal(store_open_reader(&r, m, err, sizeof err), LC_ESTATE);
    assert_null(r);
    store_close(m);
}

/* The image is the state at begin, even though commands were applied
 * before it was serialized. */
static void test_snapshot_pinned_at_begin(void **state)
{
    fixture_t *f = *state;
    add_runs(f->writer, 1, 5);
    store_snapshot_t *snap;
    assert_int_equal(store_snapshot_begin(f->writer, &snap), 0);
    add_runs(f->writer, 6, 9);
    uint8_t *image;
    size_t len;
    assert_int_equal(store_snapshot_image(snap, &image, &len), 0);
    store_snapshot_end(snap);
    store_t *copy = test_store_open();
    assert_int_equal(store_deserialize(copy, image, len), 0);
    assert_int_equal(store_max_run_id(copy), 5);
    assert_int_equal(store_max_run_id(f->writer), 9);
    store_image_free(image);
    store_close(copy);
}

/* A restore into the file store: a reader opened before sees the new state
 * (the file is kept, its pages replaced), and writes go on after it. */
static void test_restore_seen_by_readers(void **state)
{
    fixture_t *f = *state;
    store_t *other = test_store_open();
    add_runs(other, 1, 7);
    uint8_t *image;
    size_t len;
    assert_int_equal(store_serialize(other, &image, &len), 0);
    store_close(other);

    add_runs(f->writer, 1, 2);
    store_t *r = reader_of(f);
    assert_int_equal(store_max_run_id(r), 2);
    assert_int_equal(store_deserialize(f->writer, image, len), 0);
    assert_int_equal(store_max_run_id(r), 7);
    add_runs(f->writer, 8, 8);
    assert_int_equal(store_max_run_id(r), 8);
    free(image);
    store_close(r);
}

/* An image from the file store round-trips through another file store. */
static void test_file_image_round_trip(void **state)
{
    fixture_t *f = *state;
    add_runs(f->writer, 1, 4);
    uint8_t *image;
    size_t len;
    assert_int_equal(store_serialize(f->writer, &image, &len), 0);
    char path[128], err[256];
    snprintf(path, sizeof path, "%s/second.db", f->dir);
    store_t *second;
    assert_int_equal(store_open_file(&second, path, err, sizeof err), 0);
    assert_int_equal(store_deserialize(second, image, len), 0);
    assert_int_equal(store_max_run_id(second), 4);
    free(image);
    store_close(second);
}

/* A bad image changes nothing, readers included. */
static void test_bad_image_refused(void **state)
{
    fixture_t *f = *state;
    add_runs(f->writer, 1, 3);
    store_t *r = reader_of(f);
    uint8_t junk[4096];
    memset(junk, 0x5a, sizeof junk);
    assert_int_equal(store_deserialize(f->writer, junk, sizeof junk), LC_EPROTO);
    assert_int_equal(store_max_run_id(r), 3);
    assert_int_equal(store_max_run_id(f->writer), 3);
    store_close(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reader_sees_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_starts_empty, setup, teardown),
        cmocka_unit_test(test_memory_store_has_no_readers),
        cmocka_unit_test_setup_teardown(test_snapshot_pinned_at_begin, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restore_seen_by_readers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_image_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_image_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
