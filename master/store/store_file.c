/* store_file.c — the store on disk: the writer's file in WAL mode, read-only
 * connections for other threads, and snapshots taken from a pinned read
 * transaction instead of on the loop. */
#include <assert.h>
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lc_err.h"
#include "lc_log.h"
#include "store.h"
#include "store_internal.h"

/* Readers wait this long for a lock the writer holds briefly (a checkpoint). */
#define READER_BUSY_MS 2000

/* Removes path and its WAL and shared-memory files; what Raft will rebuild. */
static int remove_old(const char *path, char *errmsg, size_t errlen)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        char name[4096];
        if ((size_t)snprintf(name, sizeof name, "%s%s", path, suffixes[i]) >= sizeof name)
            return lc_errf(errmsg, errlen, LC_EIO, "store: path too long: %.200s", path);
        if (unlink(name) != 0 && errno != ENOENT)
            return lc_errf(errmsg, errlen, LC_EIO, "store: remove %s: %s", name, strerror(errno));
    }
    return 0;
}

static int open_fail(store_t *s, const char *what, char *errmsg, size_t errlen)
{
    snprintf(errmsg, errlen, "store: %s %s: %s", what, s->path ? s->path : "",
             s->db ? sqlite3_errmsg(s->db) : "out of memory");
    store_close(s);
    return LC_EIO;
}

int store_open_file(store_t **out, const char *path, char *errmsg, size_t errlen)
{
    assert(path != NULL && path[0] != '\0');
    if (remove_old(path, errmsg, errlen) != 0)
        return LC_EIO;
    store_t *s = calloc(1, sizeof *s);
    if (s == NULL || (s->path = strdup(path)) == NULL) {
        free(s);
        return lc_errf(errmsg, errlen, LC_ENOMEM, "store: out of memory");
    }
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(path, &s->db, flags, NULL) != SQLITE_OK)
        return open_fail(s, "open", errmsg, errlen);
    /* WAL: readers on other connections see committed commands while the
     * FSM writes. synchronous=OFF: a crash loses the file, and Raft rebuilds
     * it at the next start anyway. */
    /* auto_vacuum=INCREMENTAL (before any table): the pages of an archived run's seconds
     * go back to the file system in steps (store_vacuum_step), so that snapshots, which
     * copy every page, shrink with them. */
    if (sqlite3_exec(s->db, "PRAGMA auto_vacuum=INCREMENTAL; PRAGMA journal_mode=WAL;"
                            " PRAGMA synchronous=OFF;", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(s->db, store_schema_sql, NULL, NULL, NULL) != SQLITE_OK)
        return open_fail(s, "set up", errmsg, errlen);
    *out = s;
    return 0;
}

bool store_has_readers(const store_t *s)
{
    return s->path != NULL;
}

int store_open_reader(store_t **out, const store_t *writer, char *errmsg, size_t errlen)
{
    if (!store_has_readers(writer))
        return lc_errf(errmsg, errlen, LC_ESTATE, "store: an in-memory store has no readers");
    return store_open_reader_at(out, writer->path, errmsg, errlen);
}

int store_open_reader_at(store_t **out, const char *path, char *errmsg, size_t errlen)
{
    store_t *s = calloc(1, sizeof *s);
    if (s == NULL || (s->path = strdup(path)) == NULL) {
        free(s);
        return lc_errf(errmsg, errlen, LC_ENOMEM, "store: out of memory");
    }
    s->read_only = true;
    int flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(path, &s->db, flags, NULL) != SQLITE_OK)
        return open_fail(s, "open reader on", errmsg, errlen);
    sqlite3_busy_timeout(s->db, READER_BUSY_MS);
    *out = s;
    return 0;
}

/* ---- snapshots --------------------------------------------------------- */

struct store_snapshot_s {
    store_t *reader;  /* holds the read transaction; NULL for an in-memory store */
    uint8_t *image;   /* in-memory store: copied at begin */
    size_t len;
};

int store_snapshot_begin(store_t *s, store_snapshot_t **out)
{
    store_snapshot_t *snap = calloc(1, sizeof *snap);
    if (snap == NULL)
        return LC_ENOMEM;
    if (!store_has_readers(s)) {
        int rv = store_serialize_image(s, &snap->image, &snap->len);
        if (rv != 0) {
            free(snap);
            return rv;
        }
        *out = snap;
        return 0;
    }
    char err[256];
    /* A read transaction starts at its first read: the count pins the view. */
    if (store_open_reader(&snap->reader, s, err, sizeof err) != 0 ||
        store_exec(snap->reader, "BEGIN") != 0 ||
        store_exec(snap->reader, "SELECT count(*) FROM sqlite_master") != 0) {
        lc_error("store", "msg=\"snapshot: cannot pin the state\" error=\"%s\"",
                 snap->reader ? sqlite3_errmsg(snap->reader->db) : err);
        store_snapshot_end(snap);
        return LC_EIO;
    }
    *out = snap;
    return 0;
}

int store_snapshot_image(store_snapshot_t *snap, uint8_t **out, size_t *len)
{
    if (snap->reader == NULL) {
        assert(snap->image != NULL);
        *out = snap->image;
        *len = snap->len;
        snap->image = NULL;
        return 0;
    }
    int rv = store_serialize_image(snap->reader, out, len);
    store_exec(snap->reader, "COMMIT"); /* the writer may checkpoint past us now */
    store_close(snap->reader);
    snap->reader = NULL;
    return rv;
}

void store_snapshot_end(store_snapshot_t *snap)
{
    if (snap == NULL)
        return;
    store_close(snap->reader);
    store_image_free(snap->image);
    free(snap);
}
