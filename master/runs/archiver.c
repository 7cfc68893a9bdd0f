/* archiver.c — each master's archive directory kept in step with the state (archiver.h):
 * a scan on the loop picks the next thing to do, one at a time — export, merge, inspect or
 * remove a file on libuv's thread pool, fetch one from a peer, or delete a run's exported
 * rows from the database in short steps and give the pages back. */
#include "archiver.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lc_clock.h"
#include "lc_err.h"
#include "lc_log.h"
#include "store_archive.h"

#define SCAN_MS 1000u          /* the state is looked at this often (and when kicked) */
#define STEP_MS 5u             /* between two prune or vacuum steps */
#define STEP_TARGET_US 4000u   /* what one step should hold the loop */
#define PRUNE_ROWS_MIN 256
#define PRUNE_ROWS_MAX 32768
#define VACUUM_PAGES_MIN 32
#define VACUUM_PAGES_MAX 8192
#define RETRY_MS 1000u         /* after a failed job or fetch of a run, doubled each time */
#define RETRY_MAX_MS 60000u

typedef enum {
    JOB_EXPORT, JOB_MERGE, JOB_INSPECT, JOB_REMOVE, JOB_VERIFY,
    JOB_INSPECT_ALL /* at start: the resolution of every file already here */
} job_kind_t;

/* What this master knows of one archived run's file. */
typedef struct known_s {
    uint64_t run;
    uint32_t resolution_s;  /* of the file here; 0: not looked at */
    uint32_t failures;      /* jobs or fetches of it that failed in a row */
    uint64_t next_try_ms;   /* monotonic: nothing is tried for it before */
} known_t;

typedef struct job_s {
    uv_work_t req;
    archiver_t *a;
    job_kind_t kind;
    uint64_t run;
    uint32_t resolution_s; /* wanted (export, merge) or found (inspect) */
    char path[PATH_MAX], tmp[PATH_MAX];
    int rv;
    char err[256];
    known_t *found;        /* JOB_INSPECT_ALL: a run and resolution per file */
    size_t n_found;
} job_t;

struct archiver_s {
    uv_loop_t *loop;
    store_t *store;
    archiver_io_t io;
    char db_path[PATH_MAX];
    uv_timer_t *scan, *step;
    known_t *known;
    size_t n_known, cap_known;
    job_t *job;         /* on the thread pool */
    bool fetching;      /* io.fetch in flight */
    uint64_t fetch_run;
    char fetch_tmp[PATH_MAX];
    uint64_t prune_run; /* rows being deleted; 0: none */
    bool vacuuming;
    int prune_rows, vacuum_pages;
    bool closed;
    archiver_stats_t stats;
};

static void scan_soon(archiver_t *a, uint64_t ms);

/* ---- what is known of each run ------------------------------------------------ */

static known_t *known_find(archiver_t *a, uint64_t run, bool add)
{
    size_t lo = 0, hi = a->n_known;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (a->known[mid].run < run)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < a->n_known && a->known[lo].run == run)
        return &a->known[lo];
    if (!add)
        return NULL;
    if (a->n_known == a->cap_known) {
        size_t cap = a->cap_known ? a->cap_known * 2 : 64;
        known_t *grown = realloc(a->known, cap * sizeof *grown);
        if (grown == NULL)
            return NULL;
        a->known = grown;
        a->cap_known = cap;
    }
    memmove(&a->known[lo + 1], &a->known[lo], (a->n_known - lo) * sizeof *a->known);
    a->n_known++;
    a->known[lo] = (known_t){.run = run};
    return &a->known[lo];
}

/* After a failure, k is left alone for a while (1 s, doubling, at most a minute), so that a
 * run whose file cannot be written or fetched neither spins nor floods the log. Returns the
 * wait in ms. */
static uint64_t back_off(known_t *k)
{
    if (k == NULL)
        return 0;
    uint64_t wait = (uint64_t)RETRY_MS << (k->failures < 6 ? k->failures : 6);
    wait = wait < RETRY_MAX_MS ? wait : RETRY_MAX_MS;
    k->failures++;
    k->next_try_ms = lc_mono_ms() + wait;
    return wait;
}

/* ---- jobs on the thread pool ------------------------------------------------------ */

static void verify_copy(job_t *j)
{
    store_t *reader = NULL;
    j->rv = store_open_reader_at(&reader, j->a->db_path, j->err, sizeof j->err);
    if (j->rv == 0)
        j->rv = store_archive_verify(reader, j->tmp, j->run, j->err, sizeof j->err);
    store_close(reader);
    if (j->rv == 0 && rename(j->tmp, j->path) != 0)
        j->rv = lc_errf(j->err, sizeof j->err, LC_EIO, "rename %s: %s", j->tmp, strerror(errno));
    if (j->rv != 0)
        unlink(j->tmp);
    if (j->rv == 0)
        j->rv = store_archive_resolution(j->path, &j->resolution_s);
}

/* Every run-N.db of the archive directory with its resolution. */
static void inspect_all(job_t *j)
{
    char dir[PATH_MAX];
    DIR *d = store_archive_dir(j->a->db_path, dir, sizeof dir, j->err, sizeof j->err) == 0
                 ? opendir(dir)
                 : NULL;
    size_t cap = 0;
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
        unsigned long long run;
        char tail[4], path[PATH_MAX];
        uint32_t res;
        if (sscanf(e->d_name, "run-%llu.%3s", &run, tail) != 2 || strcmp(tail, "db") != 0 ||
            (size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path ||
            store_archive_resolution(path, &res) != 0)
            continue;
        if (j->n_found == cap) {
            cap = cap ? cap * 2 : 64;
            known_t *grown = realloc(j->found, cap * sizeof *grown);
            if (grown == NULL)
                break;
            j->found = grown;
        }
        j->found[j->n_found++] = (known_t){.run = run, .resolution_s = res};
    }
    if (d != NULL)
        closedir(d);
}

static void work_cb(uv_work_t *req)
{
    job_t *j = req->data;
    switch (j->kind) {
    case JOB_EXPORT:
        j->rv = store_archive_export(j->a->db_path, j->run, j->resolution_s, j->path, j->err,
                                     sizeof j->err);
        break;
    case JOB_MERGE:
        j->rv = store_archive_merge(j->path, j->run, j->resolution_s, j->err, sizeof j->err);
        break;
    case JOB_INSPECT:
        j->rv = store_archive_resolution(j->path, &j->resolution_s);
        break;
    case JOB_REMOVE:
        j->rv = unlink(j->path) == 0 || errno == ENOENT ? 0 : LC_EIO;
        break;
    case JOB_VERIFY:
        verify_copy(j);
        break;
    case JOB_INSPECT_ALL:
        inspect_all(j);
        break;
    }
}

static const char *const job_names[] = {"export", "merge", "inspect", "remove", "verify",
                                        "inspect all"};

static void job_done(archiver_t *a, job_t *j)
{
    if (j->kind == JOB_INSPECT_ALL) {
        for (size_t i = 0; i < j->n_found; i++) {
            known_t *k = known_find(a, j->found[i].run, true);
            if (k != NULL)
                k->resolution_s = j->found[i].resolution_s;
        }
        lc_info("archiver", "msg=\"archives found\" files=%zu", j->n_found);
        scan_soon(a, 0);
        return;
    }
    known_t *k = known_find(a, j->run, true);
    if (j->rv != 0) {
        uint64_t wait = back_off(k);
        lc_error("archiver", "msg=\"%s failed\" run=%llu error=\"%s\" retry_ms=%llu",
                 job_names[j->kind], (unsigned long long)j->run,
                 j->err[0] ? j->err : lc_strerror(j->rv), (unsigned long long)wait);
        a->stats.refused += j->kind == JOB_VERIFY;
        scan_soon(a, 0); /* the others go on meanwhile */
        return;
    }
    lc_info("archiver", "msg=\"%s done\" run=%llu resolution_s=%u", job_names[j->kind],
            (unsigned long long)j->run, j->resolution_s);
    if (j->kind == JOB_EXPORT)
        a->stats.exported++;
    else if (j->kind == JOB_MERGE)
        a->stats.merged++;
    else if (j->kind == JOB_VERIFY)
        a->stats.fetched++;
    else if (j->kind == JOB_REMOVE)
        a->stats.removed++;
    if (k != NULL) {
        k->resolution_s = j->kind == JOB_REMOVE ? 0 : j->resolution_s;
        k->failures = 0;
    }
    scan_soon(a, 0);
}

static void after_work_cb(uv_work_t *req, int status)
{
    job_t *j = req->data;
    archiver_t *a = j->a;
    a->job = NULL;
    if (status != 0 && j->rv == 0)
        j->rv = LC_ECLOSED;
    if (!a->closed)
        job_done(a, j);
    free(j->found);
    free(j);
    if (a->closed && !a->fetching)
        free(a);
}

static void job_start(archiver_t *a, job_kind_t kind, uint64_t run, uint32_t resolution_s)
{
    job_t *j = calloc(1, sizeof *j);
    if (j == NULL || store_archive_path(a->db_path, run, j->path, sizeof j->path) != 0) {
        free(j);
        return;
    }
    j->req.data = j;
    j->a = a;
    j->kind = kind;
    j->run = run;
    j->resolution_s = resolution_s;
    if (kind == JOB_VERIFY)
        snprintf(j->tmp, sizeof j->tmp, "%s", a->fetch_tmp);
    if (uv_queue_work(a->loop, &j->req, work_cb, after_work_cb) != 0) {
        free(j);
        return;
    }
    a->job = j;
}

/* ---- fetching from a peer -------------------------------------------------------------- */

static void fetched_cb(void *arg, int status, const char *why)
{
    archiver_t *a = arg;
    a->fetching = false;
    if (a->closed) {
        unlink(a->fetch_tmp);
        if (a->job == NULL)
            free(a);
        return;
    }
    known_t *k = known_find(a, a->fetch_run, true);
    if (status != 0) {
        unlink(a->fetch_tmp);
        uint64_t wait = back_off(k);
        lc_warn("archiver", "msg=\"cannot fetch a run's archive from a peer\" run=%llu error=\"%s\""
                " retry_ms=%llu", (unsigned long long)a->fetch_run,
                why ? why : lc_strerror(status), (unsigned long long)wait);
        scan_soon(a, 0);
        return;
    }
    job_start(a, JOB_VERIFY, a->fetch_run, 0); /* checked before it takes the file's name */
    if (a->job == NULL)
        scan_soon(a, SCAN_MS);
}

static bool fetch_start(archiver_t *a, uint64_t run, known_t *k)
{
    if (a->io.fetch == NULL)
        return false;
    char path[PATH_MAX];
    if (store_archive_path(a->db_path, run, path, sizeof path) != 0 ||
        (size_t)snprintf(a->fetch_tmp, sizeof a->fetch_tmp, "%s.fetch", path) >=
            sizeof a->fetch_tmp)
        return false;
    a->fetch_run = run;
    a->fetching = true;
    if (a->io.fetch(a->io.arg, run, a->fetch_tmp, fetched_cb, a) != 0) {
        a->fetching = false;
        back_off(k);
        return false;
    }
    lc_info("archiver", "msg=\"fetching a run's archive from a peer\" run=%llu",
            (unsigned long long)run);
    return true;
}

/* ---- deleting exported rows, giving pages back: short steps on the loop -------------- */

/* Grows or shrinks a step's size so that it holds the loop about STEP_TARGET_US. */
static int adapt(int size, uint64_t took_us, int lo, int hi)
{
    if (took_us > 2 * STEP_TARGET_US)
        size /= 2;
    else if (took_us < STEP_TARGET_US / 2)
        size *= 2;
    return size < lo ? lo : size > hi ? hi : size;
}

static void step_cb(uv_timer_t *t)
{
    archiver_t *a = t->data;
    uint64_t t0 = lc_mono_ns() / 1000u;
    bool left = false;
    int rv;
    if (a->prune_run != 0) {
        int deleted = 0;
        rv = store_archive_prune(a->store, a->prune_run, a->prune_rows, &deleted);
        a->stats.rows_pruned += rv == 0 ? (uint64_t)deleted : 0;
        left = deleted == a->prune_rows;
    } else {
        rv = store_vacuum_step(a->store, a->vacuum_pages, &left);
    }
    uint64_t took = lc_mono_ns() / 1000u - t0;
    if (took > a->stats.max_step_us)
        a->stats.max_step_us = took;
    if (a->prune_run != 0)
        a->prune_rows = adapt(a->prune_rows, took, PRUNE_ROWS_MIN, PRUNE_ROWS_MAX);
    else
        a->vacuum_pages = adapt(a->vacuum_pages, took, VACUUM_PAGES_MIN, VACUUM_PAGES_MAX);
    if (rv == 0 && left)
        return; /* the repeating timer steps again */
    if (rv != 0)
        lc_error("archiver", "msg=\"%s step failed\" run=%llu", a->prune_run ? "prune" : "vacuum",
                 (unsigned long long)a->prune_run);
    else if (a->prune_run != 0)
        lc_info("archiver", "msg=\"database rows of an archived run deleted\" run=%llu",
                (unsigned long long)a->prune_run);
    a->prune_run = 0;
    a->vacuuming = false;
    uv_timer_stop(t);
    scan_soon(a, rv == 0 ? 0 : SCAN_MS);
}

static void steps_start(archiver_t *a, uint64_t run)
{
    a->prune_run = run;
    a->vacuuming = run == 0;
    uv_timer_start(a->step, step_cb, 0, STEP_MS);
}

/* ---- the scan ------------------------------------------------------------------------- */

/* Starts what run needs first; returns whether something started. */
static bool act_on(archiver_t *a, const store_archived_t *w)
{
    char path[PATH_MAX];
    struct stat st;
    if (store_archive_path(a->db_path, w->run, path, sizeof path) != 0)
        return false;
    known_t *k = known_find(a, w->run, true);
    if (k != NULL && lc_mono_ms() < k->next_try_ms)
        return false; /* failed lately: the others first */
    bool here = stat(path, &st) == 0;
    if (w->deleted) {
        if (here)
            job_start(a, JOB_REMOVE, w->run, 0);
        return here;
    }
    if (!here && w->has_rows) {
        job_start(a, JOB_EXPORT, w->run, w->resolution_s);
        return true;
    }
    if (!here)
        return fetch_start(a, w->run, k);
    if (w->has_rows) {
        steps_start(a, w->run);
        return true;
    }
    if (k != NULL && k->resolution_s == 0) {
        job_start(a, JOB_INSPECT, w->run, 0);
        return true;
    }
    if (k != NULL && k->resolution_s < w->resolution_s) {
        job_start(a, JOB_MERGE, w->run, w->resolution_s);
        return true;
    }
    return false;
}

static bool scan_one(void *arg, const store_archived_t *w)
{
    return act_on(arg, w); /* true: something started, the scan stops */
}

static void scan(archiver_t *a)
{
    if (a->job != NULL || a->fetching || a->prune_run != 0 || a->vacuuming)
        return; /* one thing at a time; its end scans again */
    int started = store_archived_each(a->store, scan_one, a);
    bool left = false;
    if (started == 0 && store_vacuum_step(a->store, 0, &left) == 0 && left)
        steps_start(a, 0);
}

static void scan_cb(uv_timer_t *t)
{
    archiver_t *a = t->data;
    scan(a);
    uv_timer_start(t, scan_cb, SCAN_MS, 0);
}

static void scan_soon(archiver_t *a, uint64_t ms)
{
    uv_timer_start(a->scan, scan_cb, ms, 0);
}

/* ---- life ------------------------------------------------------------------------------ */

/* Removes what a crash left half-written (*.tmp, *.fetch) in the archive directory. */
static void remove_leftovers(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        bool partial = (n > 4 && strcmp(e->d_name + n - 4, ".tmp") == 0) ||
                       (n > 6 && strcmp(e->d_name + n - 6, ".fetch") == 0);
        char path[PATH_MAX];
        if (partial && (size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < sizeof path)
            unlink(path);
    }
    if (d != NULL)
        closedir(d);
}

int archiver_init(archiver_t **out, uv_loop_t *loop, store_t *store, const archiver_io_t *io)
{
    assert(loop != NULL && store != NULL && store_has_readers(store));
    archiver_t *a = calloc(1, sizeof *a);
    char dir[PATH_MAX], err[256];
    if (a == NULL)
        return LC_ENOMEM;
    a->loop = loop;
    a->store = store;
    if (io != NULL)
        a->io = *io;
    a->prune_rows = 4096;
    a->vacuum_pages = 512;
    int rv = store_file_path(store, a->db_path, sizeof a->db_path);
    if (rv == 0)
        rv = store_archive_dir(a->db_path, dir, sizeof dir, err, sizeof err);
    a->scan = malloc(sizeof *a->scan);
    a->step = malloc(sizeof *a->step);
    if (rv != 0 || a->scan == NULL || a->step == NULL) {
        if (rv != 0)
            lc_error("archiver", "msg=\"cannot set up\" error=\"%s\"", err);
        free(a->scan);
        free(a->step);
        free(a);
        return rv != 0 ? rv : LC_ENOMEM;
    }
    remove_leftovers(dir);
    uv_timer_init(loop, a->scan);
    uv_timer_init(loop, a->step);
    a->scan->data = a->step->data = a;
    job_start(a, JOB_INSPECT_ALL, 0, 0); /* its end scans */
    if (a->job == NULL)
        scan_soon(a, SCAN_MS);
    *out = a;
    return 0;
}

void archiver_kick(archiver_t *a)
{
    if (a != NULL && !a->closed)
        scan_soon(a, 0);
}

bool archiver_busy(const archiver_t *a)
{
    return a->job != NULL || a->fetching || a->prune_run != 0 || a->vacuuming;
}

archiver_stats_t archiver_stats(const archiver_t *a)
{
    return a->stats;
}

static void timer_closed_cb(uv_handle_t *h)
{
    free(h);
}

void archiver_close(archiver_t *a)
{
    if (a == NULL)
        return;
    uv_close((uv_handle_t *)a->scan, timer_closed_cb);
    uv_close((uv_handle_t *)a->step, timer_closed_cb);
    free(a->known);
    a->known = NULL;
    a->closed = true;
    if (a->job == NULL && !a->fetching)
        free(a);
}
