/* test_read_pool.c — unit tests of master/api/read_pool.c: jobs run on the
 * pool's threads with a reader of their own and come back to the loop, a
 * full queue refuses, closing cancels what never ran, and a pool over an
 * in-memory store runs each job at once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include <cmocka.h>

#include "lc_err.h"
#include "read_pool.h"
#include "store.h"
#include "store_commands.h"

typedef struct job_s {
    read_job_t job;
    pthread_t ran_on;
    store_t *reader;
    uint64_t max_run; /* what the reader saw */
    atomic_bool *gate; /* NULL, or the work waits until it is set */
    int *done_count;
    bool cancelled;
} job_t;

static pthread_t loop_thread;

static void work(read_job_t *j, store_t *reader)
{
    job_t *t = (job_t *)j;
    while (t->gate != NULL && !atomic_load(t->gate))
        usleep(1000);
    t->ran_on = pthread_self();
    t->reader = reader;
    t->max_run = store_max_run_id(reader);
}

static void done(read_job_t *j)
{
    job_t *t = (job_t *)j;
    assert_true(pthread_equal(pthread_self(), loop_thread));
    t->cancelled = j->cancelled;
    (*t->done_count)++;
}

typedef struct fixture_s {
    char dir[64], path[96];
    uv_loop_t loop;
    store_t *writer;
} fixture_t;

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/lc-test-read-pool.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/state.db", f->dir);
    char err[256];
    assert_int_equal(store_open_file(&f->writer, f->path, err, sizeof err), 0);
    assert_int_equal(uv_loop_init(&f->loop), 0);
    loop_thread = pthread_self();
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    uv_run(&f->loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    store_close(f->writer);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

static void run_until(uv_loop_t *loop, const int *count, int want)
{
    for (int i = 0; i < 5000 && *count < want; i++) {
        uv_run(loop, UV_RUN_NOWAIT);
        usleep(1000);
    }
    assert_int_equal(*count, want);
}

/* Jobs run on the pool's threads, each with a reader that sees the
 * writer's commands, and are answered on the loop. */
static void test_jobs_run_off_the_loop(void **state)
{
    fixture_t *f = *state;
    assert_int_equal(test_store_create_run(f->writer, 7, "r", "{}", 1, 1), 0);
    read_pool_t *p;
    char err[256];
    assert_int_equal(read_pool_init(&p, &f->loop, f->writer, 2, err, sizeof err), 0);
    int count = 0;
    job_t jobs[8];
    for (int i = 0; i < 8; i++) {
        jobs[i] = (job_t){.job = {.work = work, .done = done}, .done_count = &count};
        assert_int_equal(read_pool_submit(p, &jobs[i].job), 0);
    }
    run_until(&f->loop, &count, 8);
    for (int i = 0; i < 8; i++) {
        assert_false(pthread_equal(jobs[i].ran_on, loop_thread));
        assert_true(jobs[i].reader != f->writer);
        assert_int_equal(jobs[i].max_run, 7);
        assert_false(jobs[i].cancelled);
    }
    read_pool_close(p);
}

/* With every thread held, READ_POOL_MAX_QUEUED jobs wait and one more is
 * refused; closing lets the running ones finish and cancels the rest. */
static void test_full_queue_and_close(void **state)
{
    fixture_t *f = *state;
    read_pool_t *p;
    char err[256];
    assert_int_equal(read_pool_init(&p, &f->loop, f->writer, 2, err, sizeof err), 0);
    atomic_bool gate = false;
    int count = 0;
    size_t n = READ_POOL_MAX_QUEUED + 2;
    job_t *jobs = calloc(n + 1, sizeof *jobs);
    for (size_t i = 0; i <= n; i++)
        jobs[i] = (job_t){.job = {.work = work, .done = done}, .gate = &gate,
                          .done_count = &count};
    for (size_t i = 0; i < 2; i++)
        assert_int_equal(read_pool_submit(p, &jobs[i].job), 0);
    for (int i = 0; i < 1000 && read_pool_queued(p) > 0; i++)
        usleep(1000); /* both threads took one */
    for (size_t i = 2; i < n; i++)
        assert_int_equal(read_pool_submit(p, &jobs[i].job), 0);
    assert_int_equal(read_pool_queued(p), READ_POOL_MAX_QUEUED);
    assert_int_equal(read_pool_submit(p, &jobs[n].job), LC_EAGAIN);
    atomic_store(&gate, true);
    read_pool_close(p); /* joins: the two running finish, the queued may be cancelled */
    assert_int_equal(count, (int)n);
    assert_false(jobs[0].cancelled);
    assert_false(jobs[1].cancelled);
    free(jobs);
}

/* An in-memory store has no readers: each job runs at once, on the loop,
 * with the writer. */
static void test_without_threads(void **state)
{
    (void)state;
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    loop_thread = pthread_self();
    store_t *mem = test_store_open();
    read_pool_t *p;
    char err[256];
    assert_int_equal(read_pool_init(&p, &loop, mem, 2, err, sizeof err), 0);
    int count = 0;
    job_t j = {.job = {.work = work, .done = done}, .done_count = &count};
    assert_int_equal(read_pool_submit(p, &j.job), 0);
    assert_int_equal(count, 1);
    assert_true(j.reader == mem);
    assert_true(pthread_equal(j.ran_on, loop_thread));
    read_pool_close(p);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    store_close(mem);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_jobs_run_off_the_loop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_queue_and_close, setup, teardown),
        cmocka_unit_test(test_without_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
