/* test_store_archive.c — a finished run's seconds in a file of their own
 * (master/store/store_archive.c): after archiving, exporting and pruning the database, the
 * history, the run's totals and /metrics' counters read exactly as before; a merge to 10 s
 * keeps totals and percentiles; a copy that is damaged, of another run, or whose counts
 * were changed is refused with what is wrong; an archived run whose file is not here yet
 * answers LC_EAGAIN; the pages of the pruned rows go back. */
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
#include "run_seconds_fixture.h"
#include "store_archive.h"
#include "store_history.h"
#include "store_internal.h"
#include "store_retention.h"

typedef struct {
    char dir[64], db[96], archive[160];
    store_t *writer, *reader;
} fixture_t;

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/lc-test-archive.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->db, sizeof f->db, "%s/state.db", f->dir);
    char err[256];
    assert_int_equal(store_open_file(&f->writer, f->db, err, sizeof err), 0);
    assert_int_equal(store_open_reader(&f->reader, f->writer, err, sizeof err), 0);
    char dir[128];
    assert_int_equal(store_archive_dir(f->db, dir, sizeof dir, err, sizeof err), 0);
    assert_int_equal(store_archive_path(f->db, RUN, f->archive, sizeof f->archive), 0);
    run_with_seconds(f->writer);
    finish(f->writer);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    store_close(f->reader);
    store_close(f->writer);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

static json_t *history(store_t *s)
{
    store_history_query_t q = {.since = INT64_MIN, .full = true};
    json_t *h = store_history_json(s, RUN, &q);
    assert_non_null(h);
    return h;
}

/* The run's JSON without what moves with the clock. */
static json_t *run_json(store_t *s)
{
    json_t *r = store_run_json(s, RUN, FINISHED_MS + 1000);
    assert_non_null(r);
    return r;
}

static void assert_same_json(json_t *a, json_t *b)
{
    char *ta = json_dumps(a, JSON_SORT_KEYS), *tb = json_dumps(b, JSON_SORT_KEYS);
    assert_string_equal(ta, tb);
    free(ta);
    free(tb);
}

/* RetainHistory archive, then what the archiver does: export, then prune to the end. */
static void archive_run(fixture_t *f)
{
    char err[256];
    assert_int_equal(retain_cmd(f->writer, 0, 0, 0, false, false, true), 0);
    assert_int_equal(store_archive_export(f->db, RUN, 1, f->archive, err, sizeof err), 0);
    assert_int_equal(store_archive_verify(f->reader, f->archive, RUN, err, sizeof err), 0);
    int deleted = 64, total = 0;
    while (deleted == 64) {
        assert_int_equal(store_archive_prune(f->writer, RUN, 64, &deleted), 0);
        total += deleted;
    }
    assert_false(store_has_seconds(f->writer, RUN));
    /* Both tables: SECONDS × (a, b and the run-wide row) and SECONDS run-wide counters. */
    assert_int_equal(total, SECONDS * 3 + SECONDS);
}

static void test_archived_run_reads_the_same(void **state)
{
    fixture_t *f = *state;
    json_t *before = history(f->reader), *run_before = run_json(f->reader);
    int64_t db_pages = store_run_int(f->writer, "PRAGMA page_count", 0, 0);
    archive_run(f);
    json_t *after = history(f->reader), *run_after = run_json(f->reader);
    assert_same_json(before, after);
    assert_same_json(run_before, run_after);
    /* The writer (the loop's connection) reads the archive too. */
    json_t *writer_view = history(f->writer);
    assert_same_json(before, writer_view);
    /* The freed pages go back, a step at a time. */
    bool left = true;
    for (int i = 0; i < 1000 && left; i++)
        assert_int_equal(store_vacuum_step(f->writer, 8, &left), 0);
    assert_false(left);
    assert_true(store_run_int(f->writer, "PRAGMA page_count", 0, 0) < db_pages);
    json_decref(before);
    json_decref(after);
    json_decref(writer_view);
    json_decref(run_before);
    json_decref(run_after);
}

static void test_merge_keeps_totals_and_percentiles(void **state)
{
    fixture_t *f = *state;
    json_t *run_before = run_json(f->reader);
    archive_run(f);
    char err[256];
    /* Retention asks for 10 s points: the state says so at once, the file follows. */
    assert_int_equal(retain_cmd(f->writer, 10, 0, STORE_RETENTION_CHUNK_S, false, false, false), 0);
    store_retention_t kept;
    assert_int_equal(store_retention_get(f->writer, RUN, &kept), 0);
    assert_int_equal(kept.resolution_s, 10);
    assert_int_equal(store_archive_merge(f->archive, RUN, 10, err, sizeof err), 0);
    uint32_t res = 0;
    assert_int_equal(store_archive_resolution(f->archive, &res), 0);
    assert_int_equal(res, 10);
    assert_int_equal(store_archive_verify(f->reader, f->archive, RUN, err, sizeof err), 0);
    json_t *run_after = run_json(f->reader);
    assert_same_json(json_object_get(run_before, "totals"), json_object_get(run_after, "totals"));
    assert_same_json(json_object_get(run_before, "endpoints"),
                     json_object_get(run_after, "endpoints"));
    json_t *h = history(f->reader);
    assert_int_equal(json_integer_value(json_object_get(h, "resolution_s")), 10);
    json_t *seconds = json_object_get(h, "seconds");
    assert_int_equal(json_array_size(seconds), (SECONDS + 9) / 10 + 0);
    /* The last entry's running total is the whole run's. */
    json_t *total = json_object_get(json_array_get(seconds, json_array_size(seconds) - 1), "total");
    assert_int_equal(json_integer_value(json_object_get(total, "requests")),
                     json_integer_value(json_object_get(json_object_get(run_before, "totals"),
                                                        "requests")));
    json_decref(h);
    json_decref(run_before);
    json_decref(run_after);
}

/* Runs sql on a writable connection to the archive (a peer's copy being tampered with). */
static void tamper(const char *path, const char *sql)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

static void assert_refused(fixture_t *f, const char *why)
{
    char err[256] = "";
    assert_int_equal(store_archive_verify(f->reader, f->archive, RUN, err, sizeof err), LC_EINVAL);
    if (strstr(err, why) == NULL)
        fail_msg("refused for \"%s\", expected \"%s\"", err, why);
}

static void test_verify_refuses_a_bad_copy(void **state)
{
    fixture_t *f = *state;
    archive_run(f);
    char saved[200], cmd[512];
    snprintf(saved, sizeof saved, "%s.good", f->archive);
    snprintf(cmd, sizeof cmd, "cp %s %s", f->archive, saved);
    assert_int_equal(system(cmd), 0);
    static const struct {
        const char *sql, *why;
    } attacks[] = {
        {"UPDATE run_seconds SET count = count + 1 WHERE rowid = (SELECT MIN(rowid) FROM"
         " run_seconds WHERE method = 'GET')", "requests per endpoint"},
        {"DELETE FROM run_seconds WHERE rowid = (SELECT MAX(rowid) FROM run_seconds"
         " WHERE method = 'GET')", "requests per endpoint"},
        {"UPDATE run_second_totals SET dropped = dropped + 1 WHERE t = 7", "run-wide counters"},
        {"UPDATE archive_meta SET run = 2", "does not name the run"},
        {"INSERT INTO run_seconds SELECT 2, t, endpoint, method, count, failures, bytes, hist"
         " FROM run_seconds WHERE t = 3", "another run"},
        /* A view under an expected name, or a trigger: never run, refused as a whole. */
        {"ALTER TABLE run_seconds RENAME TO real_seconds;"
         " CREATE VIEW run_seconds AS SELECT * FROM real_seconds", "not an archive"},
        {"CREATE TRIGGER t AFTER DELETE ON archive_meta BEGIN SELECT 1; END", "not an archive"},
    };
    for (size_t i = 0; i < sizeof attacks / sizeof attacks[0]; i++) {
        snprintf(cmd, sizeof cmd, "cp %s %s", saved, f->archive);
        assert_int_equal(system(cmd), 0);
        tamper(f->archive, attacks[i].sql);
        assert_refused(f, attacks[i].why);
    }
    /* Not SQLite at all, or cut short. */
    FILE *junk = fopen(f->archive, "w");
    fputs("not a database, but long enough to look like one's header......", junk);
    fclose(junk);
    char err[256];
    assert_int_equal(store_archive_verify(f->reader, f->archive, RUN, err, sizeof err), LC_EINVAL);
    snprintf(cmd, sizeof cmd, "head -c 8192 %s > %s", saved, f->archive);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(store_archive_verify(f->reader, f->archive, RUN, err, sizeof err), LC_EINVAL);
    unlink(saved);
}

static void test_not_here_yet(void **state)
{
    fixture_t *f = *state;
    archive_run(f);
    unlink(f->archive); /* as on a master that restored a snapshot without the file */
    store_t *src = NULL;
    assert_int_equal(store_seconds_open(f->reader, RUN, &src), LC_EAGAIN);
    store_history_query_t q = {.since = INT64_MIN};
    assert_null(store_history_json(f->reader, RUN, &q));
    /* The run itself still answers, with the counters archiving recorded. */
    json_t *r = run_json(f->reader);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "totals"), "dropped")),
                     2 * SECONDS);
    json_decref(r);
    /* Once retention deleted its seconds there is nothing to fetch: an empty history. */
    assert_int_equal(retain_cmd(f->writer, 0, 0, 0, false, true, false), 0);
    assert_int_equal(store_seconds_open(f->reader, RUN, &src), 0);
    store_seconds_close(f->reader, src);
    json_t *h = store_history_json(f->reader, RUN, &q);
    assert_non_null(h);
    assert_int_equal(json_array_size(json_object_get(h, "seconds")), 0);
    json_decref(h);
}

static void test_before_export_the_database_answers(void **state)
{
    fixture_t *f = *state;
    json_t *before = history(f->reader);
    assert_int_equal(retain_cmd(f->writer, 0, 0, 0, false, false, true), 0);
    store_retention_t kept;
    assert_int_equal(store_retention_get(f->writer, RUN, &kept), 0);
    assert_true(kept.archived && kept.acks_dropped);
    json_t *after = history(f->reader);
    assert_same_json(before, after);
    json_decref(before);
    json_decref(after);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_archived_run_reads_the_same, setup, teardown),
        cmocka_unit_test_setup_teardown(test_merge_keeps_totals_and_percentiles, setup, teardown),
        cmocka_unit_test_setup_teardown(test_verify_refuses_a_bad_copy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_here_yet, setup, teardown),
        cmocka_unit_test_setup_teardown(test_before_export_the_database_answers, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
