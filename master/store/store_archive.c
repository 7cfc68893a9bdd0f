/* store_archive.c — a finished run's seconds in a file of their own: export from the
 * database, merge to a coarser resolution, verification of a fetched copy, pruning the
 * database after export, and the reader's choice between the two (store_archive.h). */
#include "store_archive.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lc_err.h"
#include "lc_log.h"
#include "store_internal.h"
#include "store_retention.h"

#define META_SQL                                                                                   \
    "CREATE TABLE IF NOT EXISTS archive_meta(run INTEGER NOT NULL,"                                \
    " resolution_s INTEGER NOT NULL);"

/* ---- paths --------------------------------------------------------------- */

/* The directory part of db_path ("." when it has none) into out. */
static int dir_of(const char *db_path, char *out, size_t cap)
{
    const char *slash = strrchr(db_path, '/');
    int n = slash == NULL ? snprintf(out, cap, ".")
                          : snprintf(out, cap, "%.*s", (int)(slash - db_path + (slash == db_path)),
                                     db_path);
    return n < 0 || (size_t)n >= cap ? LC_EINVAL : 0;
}

int store_archive_dir(const char *db_path, char *out, size_t cap, char *errmsg, size_t errlen)
{
    char dir[PATH_MAX];
    if (dir_of(db_path, dir, sizeof dir) != 0 ||
        (size_t)snprintf(out, cap, "%s/%s", dir, STORE_ARCHIVE_DIR) >= cap)
        return lc_errf(errmsg, errlen, LC_EIO, "archive: path too long: %.200s", db_path);
    if (mkdir(out, 0700) != 0 && errno != EEXIST)
        return lc_errf(errmsg, errlen, LC_EIO, "archive: create %s: %s", out, strerror(errno));
    return 0;
}

int store_archive_path(const char *db_path, uint64_t run, char *out, size_t cap)
{
    char dir[PATH_MAX];
    if (dir_of(db_path, dir, sizeof dir) != 0)
        return LC_EINVAL;
    int n = snprintf(out, cap, "%s/%s/run-%llu.db", dir, STORE_ARCHIVE_DIR,
                     (unsigned long long)run);
    return n < 0 || (size_t)n >= cap ? LC_EINVAL : 0;
}

/* "file:" URI of path with query (percent-encoding what a URI path may not hold). */
static int uri_of(const char *path, const char *query, char *out, size_t cap)
{
    size_t n = (size_t)snprintf(out, cap, "file:");
    for (const unsigned char *p = (const unsigned char *)path; *p != '\0' && n + 4 < cap; p++) {
        bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                     (*p >= '0' && *p <= '9') || strchr("/._-", *p) != NULL;
        n += plain ? (size_t)snprintf(out + n, cap - n, "%c", *p)
                   : (size_t)snprintf(out + n, cap - n, "%%%02X", *p);
    }
    int m = snprintf(out + n, cap > n ? cap - n : 0, "?%s", query);
    return m < 0 || n + (size_t)m >= cap ? LC_EINVAL : 0;
}

/* ---- connections ---------------------------------------------------------- */

static store_t *archive_store(const char *path)
{
    store_t *a = calloc(1, sizeof *a);
    if (a != NULL && (a->path = strdup(path)) == NULL) {
        free(a);
        a = NULL;
    }
    return a;
}

/* A new archive being written at path (no journal: a failed write is deleted whole). */
static int open_rw(const char *path, store_t **out, char *errmsg, size_t errlen)
{
    store_t *a = archive_store(path);
    if (a == NULL)
        return lc_errf(errmsg, errlen, LC_ENOMEM, "archive: out of memory");
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(path, &a->db, flags, NULL) != SQLITE_OK ||
        sqlite3_exec(a->db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;", NULL, NULL,
                     NULL) != SQLITE_OK ||
        sqlite3_exec(a->db, store_schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(a->db, META_SQL, NULL, NULL, NULL) != SQLITE_OK) {
        int rv = lc_errf(errmsg, errlen, LC_EIO, "archive: create %s: %s", path,
                         a->db ? sqlite3_errmsg(a->db) : "out of memory");
        store_close(a);
        return rv;
    }
    *out = a;
    return 0;
}

/* An archive read as it is: immutable (never changed in place, only replaced). */
static int open_ro(const char *path, store_t **out)
{
    char uri[PATH_MAX + 64];
    if (uri_of(path, "immutable=1", uri, sizeof uri) != 0)
        return LC_EINVAL;
    store_t *a = archive_store(path);
    if (a == NULL)
        return LC_ENOMEM;
    a->read_only = true;
    int flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX;
    /* Defensive: the file may be a peer's (store_archive_verify reads it before trusting it). */
    if (sqlite3_open_v2(uri, &a->db, flags, NULL) != SQLITE_OK ||
        sqlite3_db_config(a->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL) != SQLITE_OK ||
        sqlite3_db_config(a->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL) != SQLITE_OK) {
        store_close(a);
        return LC_EIO;
    }
    *out = a;
    return 0;
}

/* fsync of a file or directory by path. */
static int sync_path(const char *path, int flags)
{
    int fd = open(path, flags | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rv = fsync(fd);
    close(fd);
    return rv;
}

/* Closes a, syncs tmp and renames it to path (then syncs the directory). */
static int finish(store_t *a, const char *tmp, const char *path, char *errmsg, size_t errlen)
{
    store_close(a);
    char dir[PATH_MAX];
    /* Tenants' history: readable by this master's user only, as the Raft files are. */
    if (chmod(tmp, 0600) != 0 || sync_path(tmp, O_RDONLY) != 0 || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return lc_errf(errmsg, errlen, LC_EIO, "archive: write %s: %s", path, strerror(e));
    }
    if (dir_of(path, dir, sizeof dir) == 0)
        sync_path(dir, O_RDONLY | O_DIRECTORY);
    return 0;
}

static int fail(store_t *a, const char *tmp, int rv, char *errmsg, size_t errlen,
                const char *what)
{
    if (rv == LC_EIO && a != NULL && errmsg[0] == '\0')
        snprintf(errmsg, errlen, "archive: %s: %s", what, sqlite3_errmsg(a->db));
    store_close(a);
    unlink(tmp);
    return rv;
}

/* ---- writing ---------------------------------------------------------------- */

static int set_meta(store_t *a, uint64_t run, uint32_t resolution_s)
{
    sqlite3_stmt *st = store_prepare(a, "INSERT INTO archive_meta(run, resolution_s)"
                                        " VALUES (?, ?)");
    if (st == NULL || store_exec(a, "DELETE FROM archive_meta") != 0) {
        sqlite3_finalize(st);
        return LC_EIO;
    }
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    sqlite3_bind_int64(st, 2, resolution_s);
    return store_step_done(a, st);
}

/* Merges the whole of run in a to resolution_s, a chunk of seconds at a time. */
static int merge_all(store_t *a, uint64_t run, uint32_t resolution_s)
{
    if (resolution_s <= 1)
        return 0;
    uint64_t last = store_last_second(a, run);
    int rv = store_exec(a, "BEGIN");
    /* 64-bit steps: a second near UINT32_MAX must not wrap the walk into a loop. */
    for (uint64_t from = 0; rv == 0 && from <= last; from += STORE_RETENTION_CHUNK_S) {
        uint64_t to = from + STORE_RETENTION_CHUNK_S;
        rv = store_compact_range(a, run, resolution_s, (uint32_t)from,
                                 to > UINT32_MAX ? UINT32_MAX : (uint32_t)to);
    }
    if (rv == 0)
        rv = store_exec(a, "COMMIT");
    if (rv == 0)
        rv = store_exec(a, "VACUUM"); /* the merged seconds' pages go */
    return rv;
}

/* Copies run's rows of the database at db_path into a. OUT: *rows. */
static int copy_rows(store_t *a, const char *db_path, uint64_t run, sqlite3_int64 *rows)
{
    char uri[PATH_MAX + 64];
    if (uri_of(db_path, "mode=ro", uri, sizeof uri) != 0)
        return LC_EINVAL;
    sqlite3_stmt *attach = store_prepare(a, "ATTACH ? AS src");
    if (attach == NULL)
        return LC_EIO;
    sqlite3_bind_text(attach, 1, uri, -1, SQLITE_STATIC);
    int rv = store_step_done(a, attach);
    /* One transaction: both tables read from the same view of the database. */
    static const char *const copies[] = {
        "INSERT INTO main.run_seconds SELECT * FROM src.run_seconds WHERE run = ?"
        " ORDER BY t, endpoint",
        "INSERT INTO main.run_second_totals SELECT * FROM src.run_second_totals WHERE run = ?"
        " ORDER BY t",
    };
    if (rv == 0)
        rv = store_exec(a, "BEGIN");
    for (size_t i = 0; rv == 0 && i < 2; i++) {
        sqlite3_stmt *st = store_prepare(a, copies[i]);
        if (st != NULL)
            sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
        rv = store_step_done(a, st);
        if (i == 0)
            *rows = sqlite3_changes64(a->db);
    }
    if (rv == 0)
        rv = store_exec(a, "COMMIT");
    else
        sqlite3_exec(a->db, "ROLLBACK", NULL, NULL, NULL);
    if (store_exec(a, "DETACH src") != 0 && rv == 0)
        rv = LC_EIO;
    return rv;
}

int store_archive_export(const char *db_path, uint64_t run, uint32_t resolution_s,
                         const char *path, char *errmsg, size_t errlen)
{
    assert(db_path != NULL && path != NULL);
    errmsg[0] = '\0';
    char tmp[PATH_MAX];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
        return lc_errf(errmsg, errlen, LC_EINVAL, "archive: path too long: %.200s", path);
    unlink(tmp);
    store_t *a = NULL;
    int rv = open_rw(tmp, &a, errmsg, errlen);
    if (rv != 0)
        return rv;
    sqlite3_int64 rows = 0;
    rv = copy_rows(a, db_path, run, &rows);
    if (rv == 0 && rows == 0)
        return fail(a, tmp, LC_ENOTFOUND, errmsg, errlen, "export");
    if (rv == 0)
        rv = merge_all(a, run, resolution_s);
    if (rv == 0)
        rv = set_meta(a, run, resolution_s > 1 ? resolution_s : 1);
    if (rv != 0)
        return fail(a, tmp, rv, errmsg, errlen, "export");
    return finish(a, tmp, path, errmsg, errlen);
}

/* Copies the file src to dst. */
static int copy_file(const char *src, const char *dst)
{
    FILE *in = fopen(src, "rb"), *out = in ? fopen(dst, "wb") : NULL;
    char buf[1 << 16];
    size_t n;
    int rv = in && out ? 0 : LC_EIO;
    while (rv == 0 && (n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            rv = LC_EIO;
    if (in != NULL && ferror(in))
        rv = LC_EIO;
    if (out != NULL && fclose(out) != 0)
        rv = LC_EIO;
    if (in != NULL)
        fclose(in);
    return rv;
}

int store_archive_merge(const char *path, uint64_t run, uint32_t resolution_s, char *errmsg,
                        size_t errlen)
{
    errmsg[0] = '\0';
    uint32_t have = 0;
    int rv = store_archive_resolution(path, &have);
    if (rv != 0)
        return lc_errf(errmsg, errlen, rv, "archive: read %s", path);
    if (resolution_s <= have)
        return 0;
    char tmp[PATH_MAX];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
        return lc_errf(errmsg, errlen, LC_EINVAL, "archive: path too long: %.200s", path);
    if (copy_file(path, tmp) != 0) {
        unlink(tmp);
        return lc_errf(errmsg, errlen, LC_EIO, "archive: copy %s: %s", path, strerror(errno));
    }
    store_t *a = NULL;
    rv = open_rw(tmp, &a, errmsg, errlen);
    if (rv == 0)
        rv = merge_all(a, run, resolution_s);
    if (rv == 0)
        rv = set_meta(a, run, resolution_s);
    if (rv != 0)
        return fail(a, tmp, rv, errmsg, errlen, "merge");
    return finish(a, tmp, path, errmsg, errlen);
}

int store_archive_resolution(const char *path, uint32_t *out)
{
    if (access(path, F_OK) != 0)
        return LC_ENOTFOUND;
    store_t *a = NULL;
    if (open_ro(path, &a) != 0)
        return LC_EIO;
    sqlite3_stmt *st = store_prepare(a, "SELECT resolution_s FROM archive_meta");
    int rv = st != NULL && sqlite3_step(st) == SQLITE_ROW ? 0 : LC_EIO;
    if (rv == 0)
        *out = (uint32_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    store_close(a);
    return rv;
}

/* ---- checking a copy from a peer --------------------------------------------- */

/* The checks of store_archive_verify, in order; each query returns 1 when it holds. */
static const struct {
    const char *sql, *what;
} checks[] = {
    /* Tables and indexes only: no view or trigger of a peer's making runs here. */
    {"SELECT ?1 > 0 AND NOT EXISTS (SELECT 1 FROM sqlite_master WHERE type NOT IN ('table', 'index'))"
     " AND (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN"
     " ('run_seconds', 'run_second_totals', 'archive_meta')) = 3",
     "it is not an archive (views, triggers or missing tables)"},
    {"SELECT COUNT(*) = 1 AND MIN(run) = ?1 FROM archive_meta", "its archive_meta does not name the run"},
    {"SELECT NOT EXISTS (SELECT 1 FROM run_seconds WHERE run <> ?1)"
     " AND NOT EXISTS (SELECT 1 FROM run_second_totals WHERE run <> ?1)",
     "it holds rows of another run"},
    /* Requests, failures and bytes per endpoint against the run's totals, both ways. */
    {"SELECT NOT EXISTS (SELECT endpoint, SUM(count), SUM(failures), SUM(bytes)"
     " FROM main.run_seconds WHERE run = ?1 AND " STORE_REQUESTS_ONLY " GROUP BY endpoint"
     " EXCEPT SELECT endpoint, count, failures, bytes FROM db.run_endpoints"
     " WHERE run = ?1 AND " STORE_REQUESTS_ONLY ")"
     " AND NOT EXISTS (SELECT endpoint, count, failures, bytes FROM db.run_endpoints"
     " WHERE run = ?1 AND " STORE_REQUESTS_ONLY " AND count > 0"
     " EXCEPT SELECT endpoint, SUM(count), SUM(failures), SUM(bytes) FROM main.run_seconds"
     " WHERE run = ?1 AND " STORE_REQUESTS_ONLY " GROUP BY endpoint)",
     "its requests per endpoint do not add up to the run's totals"},
    {"SELECT (SELECT COALESCE(SUM(dropped), 0), COALESCE(SUM(tls_handshakes), 0),"
     " COALESCE(SUM(tls_resumed), 0), COALESCE(SUM(lost_batches), 0),"
     " COALESCE(SUM(lost_requests), 0) FROM main.run_second_totals WHERE run = ?1)"
     " IS (SELECT dropped, tls_handshakes, tls_resumed, lost_batches, lost_requests"
     " FROM db.run_archives WHERE run = ?1)",
     "its run-wide counters do not add up to the run's"},
};

int store_archive_verify(store_t *reader, const char *path, uint64_t run, char *errmsg,
                         size_t errlen)
{
    assert(reader != NULL && reader->path != NULL);
    store_t *a = NULL;
    char uri[PATH_MAX + 64];
    if (open_ro(path, &a) != 0)
        return lc_errf(errmsg, errlen, LC_EINVAL, "archive of run %llu: not an SQLite file",
                       (unsigned long long)run);
    sqlite3_stmt *st = store_prepare(a, "PRAGMA quick_check");
    bool intact = st != NULL && sqlite3_step(st) == SQLITE_ROW &&
                  strcmp((const char *)sqlite3_column_text(st, 0), "ok") == 0;
    sqlite3_finalize(st);
    int rv = intact ? 0 : lc_errf(errmsg, errlen, LC_EINVAL, "archive of run %llu: damaged",
                                  (unsigned long long)run);
    sqlite3_stmt *attach = rv == 0 && uri_of(reader->path, "mode=ro", uri, sizeof uri) == 0
                               ? store_prepare(a, "ATTACH ? AS db")
                               : NULL;
    if (attach != NULL)
        sqlite3_bind_text(attach, 1, uri, -1, SQLITE_STATIC);
    if (rv == 0 && store_step_done(a, attach) != 0)
        rv = lc_errf(errmsg, errlen, LC_EIO, "archive of run %llu: cannot read the database",
                     (unsigned long long)run);
    for (size_t i = 0; rv == 0 && i < sizeof checks / sizeof checks[0]; i++)
        if (store_run_int(a, checks[i].sql, run, -1) != 1)
            rv = lc_errf(errmsg, errlen, LC_EINVAL, "archive of run %llu: %s",
                         (unsigned long long)run, checks[i].what);
    store_close(a);
    return rv;
}

/* ---- the database after export ----------------------------------------------- */

bool store_has_seconds(store_t *s, uint64_t run)
{
    return store_run_int(s, "SELECT EXISTS (SELECT 1 FROM run_seconds WHERE run = ?1)"
                            " OR EXISTS (SELECT 1 FROM run_second_totals WHERE run = ?1)",
                         run, 0) == 1;
}

int store_archive_prune(store_t *s, uint64_t run, int max_rows, int *deleted)
{
    assert(!s->read_only && max_rows > 0);
    static const char *const sql[] = {
        "DELETE FROM run_seconds WHERE rowid IN"
        " (SELECT rowid FROM run_seconds WHERE run = ? LIMIT ?)",
        "DELETE FROM run_second_totals WHERE rowid IN"
        " (SELECT rowid FROM run_second_totals WHERE run = ? LIMIT ?)",
    };
    int budget = max_rows;
    for (size_t i = 0; i < 2 && budget > 0; i++) {
        sqlite3_stmt *st = store_prepare(s, sql[i]);
        if (st == NULL)
            return LC_EIO;
        sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
        sqlite3_bind_int(st, 2, budget);
        if (store_step_done(s, st) != 0)
            return LC_EIO;
        budget -= sqlite3_changes(s->db);
    }
    *deleted = max_rows - budget;
    return 0;
}

int store_vacuum_step(store_t *s, int pages, bool *left)
{
    *left = store_run_int(s, "PRAGMA freelist_count", 0, 0) > 0;
    if (pages <= 0 || !*left)
        return 0;
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA incremental_vacuum(%d)", pages);
    sqlite3_stmt *st = store_prepare(s, sql);
    if (st == NULL)
        return LC_EIO;
    while (sqlite3_step(st) == SQLITE_ROW)
        ;
    int rc = sqlite3_finalize(st);
    *left = store_run_int(s, "PRAGMA freelist_count", 0, 0) > 0;
    return rc == SQLITE_OK ? 0 : LC_EIO;
}

int store_archived_each(store_t *s, bool (*fn)(void *arg, const store_archived_t *r), void *arg)
{
    sqlite3_stmt *st = store_prepare(
        s, "SELECT a.run, COALESCE(x.resolution_s, 1), COALESCE(x.seconds_deleted, 0),"
           " EXISTS (SELECT 1 FROM run_seconds WHERE run = a.run)"
           " OR EXISTS (SELECT 1 FROM run_second_totals WHERE run = a.run)"
           " FROM run_archives a LEFT JOIN run_retention x ON x.run = a.run ORDER BY a.run");
    if (st == NULL)
        return LC_EIO;
    int rv = 0, rc;
    while (rv == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        store_archived_t r = {.run = (uint64_t)sqlite3_column_int64(st, 0),
                              .resolution_s = (uint32_t)sqlite3_column_int64(st, 1),
                              .deleted = sqlite3_column_int(st, 2) != 0,
                              .has_rows = sqlite3_column_int(st, 3) != 0};
        if (fn(arg, &r))
            rv = 1;
    }
    if (rv == 0 && rc != SQLITE_DONE)
        rv = LC_EIO;
    sqlite3_finalize(st);
    return rv;
}

int store_file_path(const store_t *s, char *out, size_t cap)
{
    if (s->path == NULL)
        return LC_ESTATE;
    return (size_t)snprintf(out, cap, "%s", s->path) < cap ? 0 : LC_EINVAL;
}

/* ---- readers ------------------------------------------------------------------- */

int store_seconds_open(store_t *reader, uint64_t run, store_t **src)
{
    store_retention_t kept;
    if (store_retention_get(reader, run, &kept) != 0)
        return LC_EIO;
    *src = reader;
    if (!kept.archived || kept.seconds_deleted || reader->path == NULL)
        return 0; /* in the database, or deleted (an empty history) */
    char path[PATH_MAX];
    if (store_archive_path(reader->path, run, path, sizeof path) != 0)
        return LC_EIO;
    /* Pin the database's view first: a file missing after the pin means its rows were
     * not yet being deleted when the view was taken (deletion starts once it exists). */
    bool own = sqlite3_get_autocommit(reader->db) != 0;
    if (own && store_exec(reader, "BEGIN") != 0)
        return LC_EIO;
    bool rows = store_has_seconds(reader, run);
    if (access(path, F_OK) == 0 && open_ro(path, src) == 0) {
        if (own)
            store_exec(reader, "COMMIT");
        return 0;
    }
    if (rows) {
        reader->pinned = own;
        return 0;
    }
    if (own)
        store_exec(reader, "COMMIT");
    return LC_EAGAIN;
}

void store_seconds_close(store_t *reader, store_t *src)
{
    if (src != NULL && src != reader) {
        store_close(src);
    } else if (reader->pinned) {
        reader->pinned = false;
        store_exec(reader, "COMMIT");
    }
}

int store_seconds_here(store_t *reader, uint64_t run)
{
    store_t *src = NULL;
    int rv = store_seconds_open(reader, run, &src);
    if (rv == 0)
        store_seconds_close(reader, src);
    return rv == LC_EAGAIN ? LC_EAGAIN : 0;
}

uint32_t store_archive_resolution_of(store_t *src, uint32_t fallback)
{
    int64_t res = store_run_int(src, "SELECT MAX(resolution_s) + 0 * ? FROM archive_meta", 0, 0);
    return res > 0 ? (uint32_t)res : fallback;
}
