/* store_archive.h — a finished run's seconds in a file of their own
 * (<data-dir>/archive/run-N.db), out of the replicated database and its Raft snapshots:
 * writing it from the database, merging it to a coarser resolution, checking one fetched
 * from a peer, and pointing a reader's history queries at it.
 *
 * A RetainHistory with archive marks the run in run_archives on every master; each
 * master's archiver (runs/archiver.h) then writes the file from its own database,
 * deletes the rows, and keeps the file at the resolution retention asks for. The file is
 * an SQLite database with the store's schema holding only that run's run_seconds and
 * run_second_totals, plus archive_meta(run, resolution_s). It is written beside its name
 * and renamed into place, never changed in place, so readers open it immutable. Every
 * function but store_seconds_open/close may block for seconds: call them off the loop. */
#ifndef MASTER_STORE_ARCHIVE_H
#define MASTER_STORE_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

#define STORE_ARCHIVE_DIR "archive" /* under the data dir, beside state.db */

/* <dir of db_path>/archive/run-<run>.db into out. Returns 0 or LC_EINVAL (too long). */
int store_archive_path(const char *db_path, uint64_t run, char *out, size_t cap);
/* The archive directory beside db_path, created when missing. Returns 0 or LC_EIO. */
int store_archive_dir(const char *db_path, char *out, size_t cap, char *errmsg, size_t errlen);

/* Writes run's seconds as the database file db_path holds them now into the archive at
 * path, merged to resolution_s (1, 10 or 60): through path.tmp, synced, then renamed.
 * Returns 0, LC_ENOTFOUND (the database has no seconds of run), LC_EIO, LC_ENOMEM. */
int store_archive_export(const char *db_path, uint64_t run, uint32_t resolution_s,
                         const char *path, char *errmsg, size_t errlen);
/* Rewrites the archive at path merged to resolution_s (coarser than what it holds; a
 * finer one changes nothing). Returns 0, LC_EIO or LC_ENOMEM. */
int store_archive_merge(const char *path, uint64_t run, uint32_t resolution_s, char *errmsg,
                        size_t errlen);
/* The resolution of the archive at path. Returns 0, LC_ENOTFOUND or LC_EIO. */
int store_archive_resolution(const char *path, uint32_t *out);
/* Checks the archive at path (one fetched from a peer) against what reader (a connection to
 * the database) records of run: an intact SQLite file of the store's schema, archive_meta
 * naming run, no row of another run, and its requests, failures and bytes per endpoint and
 * its run-wide counters summing to the run's totals. Returns 0, or LC_EINVAL with errmsg
 * saying what differs, or LC_EIO. */
int store_archive_verify(store_t *reader, const char *path, uint64_t run, char *errmsg,
                         size_t errlen);

/* Deletes up to max_rows of run's rows left in the database after its archive was
 * written (writer, on the loop: each call is one short transaction). OUT: *deleted, how
 * many (fewer than max_rows: none are left). Returns 0 or LC_EIO. */
int store_archive_prune(store_t *s, uint64_t run, int max_rows, int *deleted);
/* Gives back up to pages free pages to the file system (state.db is incremental
 * auto-vacuum; pages 0 only looks). OUT: *left, whether free pages remain. Returns 0 or
 * LC_EIO. */
int store_vacuum_step(store_t *s, int pages, bool *left);
/* Whether the database holds rows of run's seconds. */
bool store_has_seconds(store_t *s, uint64_t run);

/* One archived run as the state has it. */
typedef struct store_archived_s {
    uint64_t run;
    uint32_t resolution_s; /* what retention asks its seconds to be at */
    bool deleted;          /* retention deleted its seconds: the file goes too */
    bool has_rows;         /* the database still holds rows of its seconds */
} store_archived_t;
/* Calls fn for each archived run in ascending order until it returns true. Returns 1 when
 * fn stopped it, 0 when every run was seen, LC_EIO. */
int store_archived_each(store_t *s, bool (*fn)(void *arg, const store_archived_t *r), void *arg);
/* The database file's path into out. Returns 0, LC_ESTATE (in memory) or LC_EINVAL. */
int store_file_path(const store_t *s, char *out, size_t cap);

/* Where a reader's queries of run's seconds (run_seconds, run_second_totals) go: *src is
 * reader itself, or a read-only connection to the run's archive. Returns 0, LC_EAGAIN when
 * the run is archived but its file is not on this master yet (the archiver is fetching it
 * from a peer), LC_EIO. Falling back to the database pins a read transaction on reader
 * until store_seconds_close, so that the archiver's deletion of rows it finds already
 * written cannot cut the walk short. */
int store_seconds_open(store_t *reader, uint64_t run, store_t **src);
void store_seconds_close(store_t *reader, store_t *src);
/* The resolution the archive open as src holds (what its points are at: retention's newer
 * ask is merged later), or fallback when it says none. */
uint32_t store_archive_resolution_of(store_t *src, uint32_t fallback);
/* Whether run's seconds can be read on this master now: 0, or LC_EAGAIN as above. */
int store_seconds_here(store_t *reader, uint64_t run);

#endif
