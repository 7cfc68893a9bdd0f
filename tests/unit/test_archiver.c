/* test_archiver.c — each master's archiver (master/runs/archiver.c) on a real loop and a
 * store on disk: after RetainHistory archive it writes the run's file and deletes its rows
 * from state.db (the history reads the same), merges the file when retention coarsens the
 * run, removes it when retention deletes the seconds; a master without file or rows fetches
 * one through its io, refuses a tampered copy (counted, backed off) and takes a good one. */
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
#include <sqlite3.h>

#include "archiver.h"
#include "lc_clock.h"
#include "lc_err.h"
#include "run_seconds_fixture.h"
#include "store_archive.h"
#include "store_history.h"
#include "store_retention.h"

/* What the fake peer hands out, in order: a tampered copy, then a good one. */
typedef struct peer_s {
    uv_timer_t timer;
    char tampered[200], good[200];
    unsigned asked;
    archiver_fetched_cb done;
    void *done_arg;
} peer_t;

typedef struct {
    char dir[64], db[96], archive[160];
    uv_loop_t loop;
    store_t *writer, *reader;
    archiver_t *a;
    peer_t peer;
} fixture_t;

static void peer_answer_cb(uv_timer_t *t)
{
    peer_t *p = t->data;
    p->done(p->done_arg, 0, NULL);
}

static int copy_file(const char *from, const char *to)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cp %s %s", from, to);
    return system(cmd) == 0 ? 0 : LC_EIO;
}

static int fake_fetch(void *arg, uint64_t run, const char *tmp_path, archiver_fetched_cb done,
                      void *done_arg)
{
    peer_t *p = arg;
    assert_int_equal(run, RUN);
    if (copy_file(p->asked++ == 0 ? p->tampered : p->good, tmp_path) != 0)
        return LC_EIO;
    p->done = done;
    p->done_arg = done_arg;
    uv_timer_start(&p->timer, peer_answer_cb, 0, 0); /* answers later, as a peer does */
    return 0;
}

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/lc-test-archiver.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->db, sizeof f->db, "%s/state.db", f->dir);
    char err[256];
    assert_int_equal(uv_loop_init(&f->loop), 0);
    assert_int_equal(store_open_file(&f->writer, f->db, err, sizeof err), 0);
    assert_int_equal(store_open_reader(&f->reader, f->writer, err, sizeof err), 0);
    assert_int_equal(store_archive_path(f->db, RUN, f->archive, sizeof f->archive), 0);
    run_with_seconds(f->writer);
    finish(f->writer);
    uv_timer_init(&f->loop, &f->peer.timer);
    f->peer.timer.data = &f->peer;
    archiver_io_t io = {.fetch = fake_fetch, .arg = &f->peer};
    assert_int_equal(archiver_init(&f->a, &f->loop, f->writer, &io), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    archiver_close(f->a);
    uv_close((uv_handle_t *)&f->peer.timer, NULL);
    while (uv_run(&f->loop, UV_RUN_DEFAULT) != 0)
        ;
    assert_int_equal(uv_loop_close(&f->loop), 0);
    store_close(f->reader);
    store_close(f->writer);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

/* Runs the loop until done(f) holds, at most 20 s. */
static bool run_until(fixture_t *f, bool (*done)(fixture_t *f))
{
    archiver_kick(f->a);
    uint64_t deadline = lc_mono_ms() + 20000;
    while (!done(f) && lc_mono_ms() < deadline) {
        uv_run(&f->loop, UV_RUN_NOWAIT);
        usleep(2000);
    }
    return done(f);
}

static bool file_here(const fixture_t *f)
{
    struct stat st;
    return stat(f->archive, &st) == 0;
}

static bool archived(fixture_t *f)
{
    return file_here(f) && !store_has_seconds(f->writer, RUN) && !archiver_busy(f->a);
}

static bool merged(fixture_t *f)
{
    return archiver_stats(f->a).merged == 1 && !archiver_busy(f->a);
}

static bool removed(fixture_t *f)
{
    return !file_here(f) && !archiver_busy(f->a);
}

static bool fetched(fixture_t *f)
{
    return archiver_stats(f->a).fetched == 1 && file_here(f) && !archiver_busy(f->a);
}

static char *history_text(store_t *s)
{
    store_history_query_t q = {.since = INT64_MIN, .full = true};
    json_t *h = store_history_json(s, RUN, &q);
    assert_non_null(h);
    char *text = json_dumps(h, JSON_SORT_KEYS);
    json_decref(h);
    return text;
}

static void test_export_prune_merge_remove(void **state)
{
    fixture_t *f = *state;
    char *before = history_text(f->reader);
    assert_int_equal(retain_cmd(f->writer, 0, 0, 0, false, false, true), 0);
    assert_true(run_until(f, archived));
    archiver_stats_t st = archiver_stats(f->a);
    assert_int_equal(st.exported, 1);
    assert_int_equal(st.rows_pruned, SECONDS * 3 + SECONDS); /* a, b, run-wide; counters */
    char *after = history_text(f->reader);
    assert_string_equal(before, after);
    /* Retention coarsens the run: the file follows, off the loop. */
    assert_int_equal(retain_cmd(f->writer, 10, 0, STORE_RETENTION_CHUNK_S, false, false, false), 0);
    assert_true(run_until(f, merged));
    uint32_t res = 0;
    assert_int_equal(store_archive_resolution(f->archive, &res), 0);
    assert_int_equal(res, 10);
    /* Retention deletes the seconds: the file goes. */
    assert_int_equal(retain_cmd(f->writer, 0, 0, 0, false, true, false), 0);
    assert_true(run_until(f, removed));
    assert_int_equal(archiver_stats(f->a).removed, 1);
    free(before);
    free(after);
}

static void test_fetch_refuses_a_tampered_copy(void **state)
{
    fixture_t *f = *state;
    char *before = history_text(f->reader);
    assert_int_equal(retain_cmd(f->writer, 0, 0, 0, false, false, true), 0);
    assert_true(run_until(f, archived));
    /* The peer's copies: the good one, and one with a count changed. */
    snprintf(f->peer.good, sizeof f->peer.good, "%s/peer-good.db", f->dir);
    snprintf(f->peer.tampered, sizeof f->peer.tampered, "%s/peer-tampered.db", f->dir);
    assert_int_equal(copy_file(f->archive, f->peer.good), 0);
    assert_int_equal(copy_file(f->archive, f->peer.tampered), 0);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(f->peer.tampered, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "UPDATE run_seconds SET count = count + 1 WHERE rowid ="
                                  " (SELECT MIN(rowid) FROM run_seconds WHERE method = 'GET')",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    /* This master lost its file (and has no rows): it must fetch. */
    unlink(f->archive);
    assert_true(run_until(f, fetched));
    archiver_stats_t st = archiver_stats(f->a);
    assert_int_equal(st.refused, 1);
    assert_int_equal(f->peer.asked, 2);
    char *after = history_text(f->reader);
    assert_string_equal(before, after);
    /* No partial file is left behind. */
    char tmp[200];
    snprintf(tmp, sizeof tmp, "%s.fetch", f->archive);
    assert_int_not_equal(access(tmp, F_OK), 0);
    free(before);
    free(after);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_export_prune_merge_remove, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fetch_refuses_a_tampered_copy, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
