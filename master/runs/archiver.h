/* archiver.h — on every master, keeps <data-dir>/archive in step with what the replicated
 * state says of each archived run (store/store_archive.h): writes a run's file from the
 * database and then deletes its rows there a few thousand at a time, merges a file to the
 * resolution retention asks for, removes the file of a run whose seconds retention deleted,
 * and fetches from a peer the file of a run this master holds neither file nor rows of (it
 * restored a snapshot taken after the run was archived). File work runs on libuv's thread
 * pool, one job at a time; the loop only reads the state and deletes rows in short steps. */
#ifndef MASTER_ARCHIVER_H
#define MASTER_ARCHIVER_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "store.h"

/* A fetch ended: status 0 (the file is at tmp_path, not yet checked) or an LC_ error, with
 * why saying what went wrong (may be NULL). */
typedef void (*archiver_fetched_cb)(void *arg, int status, const char *why);

typedef struct archiver_io_s {
    /* Fetches run's archive from a peer into tmp_path; done(done_arg, …) follows exactly
     * once unless it returns an error (no peer to ask). */
    int (*fetch)(void *arg, uint64_t run, const char *tmp_path, archiver_fetched_cb done,
                 void *done_arg);
    void *arg;
} archiver_io_t;

typedef struct archiver_stats_s {
    uint64_t exported, merged, fetched, removed; /* files */
    uint64_t refused;                            /* fetched copies that failed the check */
    uint64_t rows_pruned;
    uint64_t max_step_us;                        /* the longest loop step (prune or vacuum) */
} archiver_stats_t;

typedef struct archiver_s archiver_t;

/* store must be on disk (store_has_readers); io may be NULL (never fetch: tests, tools). */
int archiver_init(archiver_t **out, uv_loop_t *loop, store_t *store, const archiver_io_t *io);
/* Looks at the state now rather than at the next tick (a command was applied). */
void archiver_kick(archiver_t *a);
/* Whether a job, a fetch or pruning is under way (tests, tools: run the loop until idle). */
bool archiver_busy(const archiver_t *a);
archiver_stats_t archiver_stats(const archiver_t *a);
/* Stops; a job still running frees the archiver when it ends. */
void archiver_close(archiver_t *a);

#endif
