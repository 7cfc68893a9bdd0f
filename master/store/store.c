/* store.c — SQLite schema, command application and snapshots. */
#include "store.h"

#include <assert.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_clock.h"
#include "lc_err.h"
#include "lc_log.h"
#include "lc_utf8.h"
#include "store_internal.h"
#include "store_retention.h"
#include "store_thresholds.h"

const char store_schema_sql[] =
    "CREATE TABLE IF NOT EXISTS runs(id INTEGER PRIMARY KEY, tenant TEXT NOT NULL,"
    " name TEXT NOT NULL, scenario_json TEXT NOT NULL, users INTEGER NOT NULL,"
    " state TEXT NOT NULL, created INTEGER NOT NULL, started INTEGER NOT NULL DEFAULT 0,"
    " finished INTEGER NOT NULL DEFAULT 0, verdict TEXT NOT NULL DEFAULT '',"
    " reason TEXT NOT NULL DEFAULT '');"
    STORE_RUN_SUMMARIES_SQL
    "CREATE TABLE IF NOT EXISTS run_seconds(run INTEGER NOT NULL, t INTEGER NOT NULL,"
    " endpoint TEXT NOT NULL, method TEXT NOT NULL, count INTEGER NOT NULL,"
    " failures INTEGER NOT NULL, bytes INTEGER NOT NULL, hist BLOB,"
    " PRIMARY KEY(run, t, endpoint));"
    /* A run's run-wide rows (endpoint ''), one per second, for a history walk that would
     * otherwise scan every endpoint's row of each second; a statement uses it only when
     * its WHERE says endpoint = '' literally (not through a bound parameter). */
    "CREATE INDEX IF NOT EXISTS run_seconds_run_rows ON run_seconds(run, t)"
    " WHERE endpoint = '';"
    "CREATE TABLE IF NOT EXISTS run_endpoints(run INTEGER NOT NULL, endpoint TEXT NOT NULL,"
    " method TEXT NOT NULL, count INTEGER NOT NULL, failures INTEGER NOT NULL,"
    " bytes INTEGER NOT NULL, hist BLOB, PRIMARY KEY(run, endpoint));"
    /* The run list's requests and failures of every run without reading the rows, whose
     * histograms make them a page or more each: at a thousand runs the table scan was most
     * of a 50 ms list. */
    "CREATE INDEX IF NOT EXISTS run_endpoints_counts ON run_endpoints(run, method, count,"
    " failures);"
    "CREATE TABLE IF NOT EXISTS run_errors(run INTEGER NOT NULL, endpoint TEXT NOT NULL,"
    " kind TEXT NOT NULL, count INTEGER NOT NULL, PRIMARY KEY(run, endpoint, kind));"
    "CREATE TABLE IF NOT EXISTS run_error_notes(run INTEGER NOT NULL, endpoint TEXT NOT NULL,"
    " kind TEXT NOT NULL, message TEXT NOT NULL, PRIMARY KEY(run, endpoint, kind));"
    "CREATE TABLE IF NOT EXISTS run_sums(run INTEGER PRIMARY KEY);"
    "CREATE TABLE IF NOT EXISTS run_checks(run INTEGER NOT NULL, name TEXT NOT NULL,"
    " passed INTEGER NOT NULL, failed INTEGER NOT NULL, PRIMARY KEY(run, name));"
    "CREATE TABLE IF NOT EXISTS run_second_totals(run INTEGER NOT NULL, t INTEGER NOT NULL,"
    " users INTEGER NOT NULL, dropped INTEGER NOT NULL, tls_handshakes INTEGER NOT NULL,"
    " tls_resumed INTEGER NOT NULL, lost_batches INTEGER NOT NULL DEFAULT 0,"
    " lost_requests INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(run, t));"
    "CREATE TABLE IF NOT EXISTS run_grants(run INTEGER PRIMARY KEY, granted INTEGER NOT NULL,"
    " queued INTEGER NOT NULL, warnings TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS tenants(name TEXT PRIMARY KEY, weight INTEGER NOT NULL,"
    " created INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS tokens(id TEXT PRIMARY KEY, hash BLOB NOT NULL UNIQUE,"
    " role TEXT NOT NULL, tenant TEXT NOT NULL, name TEXT NOT NULL, created INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS members(id INTEGER PRIMARY KEY, raft TEXT NOT NULL,"
    " worker TEXT NOT NULL, api TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS acks(worker TEXT NOT NULL, run INTEGER NOT NULL,"
    " seq INTEGER NOT NULL, PRIMARY KEY(worker, run, seq));"
    "CREATE TABLE IF NOT EXISTS run_assignments(run INTEGER NOT NULL, worker TEXT NOT NULL,"
    " generation INTEGER NOT NULL, users INTEGER NOT NULL, PRIMARY KEY(run, worker));"
    /* Sequential feeders' rows handed out (LeaseRows, store_feeds.c): each feeder's cursor,
     * and each worker's latest lease of it. */
    "CREATE TABLE IF NOT EXISTS feed_cursors(run INTEGER NOT NULL, feeder INTEGER NOT NULL,"
    " next INTEGER NOT NULL, rows INTEGER NOT NULL, PRIMARY KEY(run, feeder));"
    "CREATE TABLE IF NOT EXISTS feed_leases(run INTEGER NOT NULL, feeder INTEGER NOT NULL,"
    " worker TEXT NOT NULL, seq INTEGER NOT NULL, start INTEGER NOT NULL,"
    " count INTEGER NOT NULL, exhausted INTEGER NOT NULL, PRIMARY KEY(run, feeder, worker));"
    "CREATE TABLE IF NOT EXISTS run_retention(run INTEGER PRIMARY KEY,"
    " resolution_s INTEGER NOT NULL, progress_res INTEGER NOT NULL, progress_t INTEGER NOT NULL,"
    " acks_dropped INTEGER NOT NULL, seconds_deleted INTEGER NOT NULL);"
    /* Runs whose seconds (run_seconds, run_second_totals) left this database for a file of
     * their own (store_archive.h), with the whole-run sums of run_second_totals. */
    "CREATE TABLE IF NOT EXISTS run_archives(run INTEGER PRIMARY KEY, dropped INTEGER NOT NULL,"
    " tls_handshakes INTEGER NOT NULL, tls_resumed INTEGER NOT NULL,"
    " lost_batches INTEGER NOT NULL, lost_requests INTEGER NOT NULL);";

int store_open(store_t **out, char *errmsg, size_t errlen)
{
    store_t *s = calloc(1, sizeof *s);
    if (s == NULL)
        return LC_ENOMEM;
    if (sqlite3_open_v2(":memory:", &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
            SQLITE_OK ||
        sqlite3_exec(s->db, store_schema_sql, NULL, NULL, NULL) != SQLITE_OK) {
        snprintf(errmsg, errlen, "store: open database: %s",
                 s->db ? sqlite3_errmsg(s->db) : "out of memory");
        store_close(s);
        return LC_EIO;
    }
    *out = s;
    return 0;
}

void store_close(store_t *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < STORE_CACHED_MAX; i++)
        sqlite3_finalize(s->cached[i].st);
    sqlite3_close(s->db);
    free(s->path);
    free(s);
}

int store_exec(store_t *s, const char *sql)
{
    if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
        lc_error("store", "msg=\"sql failed\" sql=\"%.40s\" error=\"%s\"", sql, sqlite3_errmsg(s->db));
        return LC_EIO;
    }
    return 0;
}

sqlite3_stmt *store_prepare(store_t *s, const char *sql)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
        lc_error("store", "msg=\"prepare failed\" error=\"%s\"", sqlite3_errmsg(s->db));
        return NULL;
    }
    return st;
}

sqlite3_stmt *store_cached(store_t *s, const char *sql)
{
    size_t i = 0;
    for (; i < STORE_CACHED_MAX && s->cached[i].sql != NULL; i++)
        if (s->cached[i].sql == sql)
            return s->cached[i].st;
    sqlite3_stmt *st = store_prepare(s, sql);
    if (st != NULL && i < STORE_CACHED_MAX) {
        s->cached[i].sql = sql;
        s->cached[i].st = st;
    } else if (st != NULL) {
        /* Full: a programming error (more call sites than slots). */
        lc_error("store", "msg=\"statement cache full\" slots=%d", STORE_CACHED_MAX);
        sqlite3_finalize(st);
        st = NULL;
    }
    return st;
}

void store_cached_done(sqlite3_stmt *st)
{
    if (st == NULL)
        return;
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

int store_cached_step_done(store_t *s, sqlite3_stmt *st)
{
    int rc = st ? sqlite3_step(st) : SQLITE_ERROR;
    store_cached_done(st);
    if (rc != SQLITE_DONE) {
        lc_error("store", "msg=\"write failed\" error=\"%s\"", sqlite3_errmsg(s->db));
        return LC_EIO;
    }
    return 0;
}

int64_t store_run_int(store_t *s, const char *sql, uint64_t run, int64_t none)
{
    sqlite3_stmt *st = store_prepare(s, sql);
    int64_t v = none;
    if (st == NULL)
        return v;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

int store_step_done(store_t *s, sqlite3_stmt *st)
{
    int rc = st ? sqlite3_step(st) : SQLITE_ERROR;
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        lc_error("store", "msg=\"write failed\" error=\"%s\"", sqlite3_errmsg(s->db));
        return LC_EIO;
    }
    return 0;
}

/* A long text is cut at a character boundary: half a UTF-8 sequence would
 * make every JSON view of the row fail. */
void store_copy_text(char *dst, size_t cap, sqlite3_stmt *st, int col)
{
    const char *text = (const char *)sqlite3_column_text(st, col);
    int len = sqlite3_column_bytes(st, col);
    lc_utf8_clean(dst, cap, text ? text : "", text ? (size_t)len : 0);
}

json_t *store_time_json(int64_t ms)
{
    char buf[32];
    if (ms <= 0)
        return json_null();
    lc_iso8601((uint64_t)ms, buf, sizeof buf);
    return json_string(buf);
}

static int run_exists(store_t *s, uint64_t id)
{
    sqlite3_stmt *st = store_prepare(s, "SELECT 1 FROM runs WHERE id = ?");
    if (st == NULL)
        return 0;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)id);
    int found = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return found;
}

static int apply_create_run(store_t *s, const Lc__CreateRun *c)
{
    if (run_exists(s, c->id))
        return LC_ESTATE;
    sqlite3_stmt *st = store_prepare(
        s, "INSERT INTO runs(id, tenant, name, scenario_json, users, state, created)"
           " VALUES (?, ?, ?, ?, ?, 'pending', ?)");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)c->id);
    sqlite3_bind_text(st, 2, c->tenant, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, c->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, c->scenario_json, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, c->users);
    sqlite3_bind_int64(st, 6, (sqlite3_int64)c->created_ms);
    int rv = store_step_done(s, st);
    /* Its seconds get run-wide rows from the start (a run created before this FSM had
     * none: readers sum its endpoints instead). */
    st = rv == 0 ? store_prepare(s, "INSERT INTO run_sums(run) VALUES (?)") : NULL;
    if (rv != 0 || st == NULL)
        return rv != 0 ? rv : LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)c->id);
    return store_step_done(s, st);
}

static int apply_run_state(store_t *s, const Lc__RunState *c)
{
    if (!run_exists(s, c->run))
        return LC_ENOTFOUND;
    /* started is set on the first move to running; reason is kept once given. */
    sqlite3_stmt *st = store_prepare(
        s, "UPDATE runs SET state = ?1,"
           " started = CASE WHEN ?1 = 'running' AND started = 0 THEN ?2 ELSE started END,"
           " reason = CASE WHEN ?3 <> '' THEN ?3 ELSE reason END WHERE id = ?4");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_text(st, 1, c->state, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)c->at_ms);
    sqlite3_bind_text(st, 3, c->reason, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)c->run);
    return store_step_done(s, st);
}

static int apply_run_finished(store_t *s, const Lc__RunFinished *c)
{
    if (!run_exists(s, c->run))
        return LC_ENOTFOUND;
    sqlite3_stmt *st = store_prepare(
        s, "UPDATE runs SET state = ?, finished = ?, verdict = ? WHERE id = ?");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_text(st, 1, c->state, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)c->at_ms);
    sqlite3_bind_text(st, 3, c->verdict, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)c->run);
    int rv = store_step_done(s, st);
    if (rv == 0)
        rv = store_forget_assignments(s, c->run); /* no worker speaks for it any more */
    if (rv == 0)
        rv = store_forget_feeds(s, c->run); /* no worker takes rows of it any more */
    return rv == 0 ? store_apply_run_summary(s, c) : rv;
}

/* The grant is kept after the run ends: what it last had. warnings is
 * stored as a JSON array of strings. */
static int apply_run_grant(store_t *s, const Lc__RunGrant *c)
{
    if (!run_exists(s, c->run))
        return LC_ENOTFOUND;
    json_t *warnings = json_array();
    for (size_t i = 0; i < c->n_warnings; i++)
        json_array_append_new(warnings, json_string(c->warnings[i]));
    char *text = json_dumps(warnings, JSON_COMPACT);
    json_decref(warnings);
    sqlite3_stmt *st = store_prepare(
        s, "INSERT OR REPLACE INTO run_grants(run, granted, queued, warnings) VALUES (?, ?, ?, ?)");
    if (st == NULL || text == NULL) {
        sqlite3_finalize(st);
        free(text);
        return st == NULL ? LC_EIO : LC_ENOMEM;
    }
    sqlite3_bind_int64(st, 1, (sqlite3_int64)c->run);
    sqlite3_bind_int64(st, 2, c->granted);
    sqlite3_bind_int(st, 3, c->queued ? 1 : 0);
    sqlite3_bind_text(st, 4, text, -1, SQLITE_TRANSIENT);
    free(text);
    return store_step_done(s, st);
}

static int apply_put_member(store_t *s, const Lc__PutMember *c)
{
    sqlite3_stmt *st = store_prepare(
        s, "INSERT INTO members(id, raft, worker, api) VALUES (?1, ?2, ?3, ?4)"
           " ON CONFLICT(id) DO UPDATE SET raft = ?2, worker = ?3, api = ?4");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)c->id);
    sqlite3_bind_text(st, 2, c->raft, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, c->worker, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, c->api, -1, SQLITE_STATIC);
    return store_step_done(s, st);
}

static int apply_remove_member(store_t *s, const Lc__RemoveMember *c)
{
    sqlite3_stmt *st = store_prepare(s, "DELETE FROM members WHERE id = ?");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)c->id);
    return store_step_done(s, st);
}

static int apply_one(store_t *s, const Lc__Command *cmd)
{
    if (!store_command_text_ok(cmd))
        return LC_EINVAL; /* a forged or corrupt entry: nothing changes */
    switch (cmd->cmd_case) {
    case LC__COMMAND__CMD_CREATE_RUN:
        return apply_create_run(s, cmd->create_run);
    case LC__COMMAND__CMD_RUN_STATE:
        return apply_run_state(s, cmd->run_state);
    case LC__COMMAND__CMD_RUN_SECONDS:
        return store_apply_run_seconds(s, cmd->run_seconds);
    case LC__COMMAND__CMD_RUN_FINISHED:
        return apply_run_finished(s, cmd->run_finished);
    case LC__COMMAND__CMD_RUN_GRANT:
        return apply_run_grant(s, cmd->run_grant);
    case LC__COMMAND__CMD_RUN_ASSIGNMENT:
        return run_exists(s, cmd->run_assignment->run)
                   ? store_apply_run_assignment(s, cmd->run_assignment)
                   : LC_ENOTFOUND;
    case LC__COMMAND__CMD_RETAIN_HISTORY:
        return store_apply_retain_history(s, cmd->retain_history);
    case LC__COMMAND__CMD_LEASE_ROWS:
        return store_apply_lease_rows(s, cmd->lease_rows);
    case LC__COMMAND__CMD_PUT_MEMBER:
        return apply_put_member(s, cmd->put_member);
    case LC__COMMAND__CMD_REMOVE_MEMBER:
        return apply_remove_member(s, cmd->remove_member);
    case LC__COMMAND__CMD_CREATE_TENANT:
    case LC__COMMAND__CMD_SET_TENANT_WEIGHT:
    case LC__COMMAND__CMD_PUT_TOKEN:
    case LC__COMMAND__CMD_REVOKE_TOKEN:
        return store_apply_access(s, cmd);
    default:
        return LC_EINVAL;
    }
}

int store_apply(store_t *s, const Lc__Command *cmd)
{
    assert(s != NULL && cmd != NULL);
    if (store_exec(s, "BEGIN") != 0)
        return LC_EIO;
    int rv = apply_one(s, cmd);
    if (rv == 0)
        return store_exec(s, "COMMIT");
    store_exec(s, "ROLLBACK");
    return rv;
}

/* Bytes 18 and 19 of a database header say WAL (2) or rollback journal (1);
 * an image in memory cannot be opened in WAL mode, so images say 1. */
static void image_without_wal(unsigned char *image, size_t len)
{
    if (len >= 20 && image[18] == 2 && image[19] == 2)
        image[18] = image[19] = 1;
}

int store_serialize_image(store_t *s, uint8_t **out, size_t *out_len)
{
    sqlite3_int64 size = 0;
    unsigned char *image = sqlite3_serialize(s->db, "main", &size, 0);
    if (image == NULL)
        return LC_ENOMEM;
    image_without_wal(image, (size_t)size);
    *out = image;
    *out_len = (size_t)size;
    return 0;
}

void store_image_free(uint8_t *image)
{
    sqlite3_free(image);
}

int store_serialize(store_t *s, uint8_t **out, size_t *out_len)
{
    uint8_t *image;
    size_t size;
    if (store_serialize_image(s, &image, &size) != 0)
        return LC_ENOMEM;
    *out = malloc(size > 0 ? size : 1);
    if (*out == NULL) {
        store_image_free(image);
        return LC_ENOMEM;
    }
    memcpy(*out, image, size);
    *out_len = size;
    store_image_free(image);
    return 0;
}

/* Whether each of our tables the image holds is defined exactly as ours (a
 * table it lacks is created after the restore): a sound file whose schema
 * text was altered (a column renamed, a key dropped) would break queries. */
static bool image_schema_ours(sqlite3 *image)
{
    sqlite3 *ref = NULL;
    sqlite3_stmt *want = NULL, *have = NULL;
    bool ours = sqlite3_open(":memory:", &ref) == SQLITE_OK &&
                sqlite3_exec(ref, store_schema_sql, NULL, NULL, NULL) == SQLITE_OK &&
                sqlite3_prepare_v2(ref, "SELECT name, sql FROM sqlite_master WHERE type = 'table'",
                                   -1, &want, NULL) == SQLITE_OK &&
                sqlite3_prepare_v2(image, "SELECT sql FROM sqlite_master WHERE type = 'table'"
                                          " AND name = ?1", -1, &have, NULL) == SQLITE_OK;
    while (ours && sqlite3_step(want) == SQLITE_ROW) {
        sqlite3_reset(have);
        sqlite3_bind_text(have, 1, (const char *)sqlite3_column_text(want, 0), -1,
                          SQLITE_TRANSIENT);
        if (sqlite3_step(have) != SQLITE_ROW)
            continue; /* an older image without this table */
        const char *sql = (const char *)sqlite3_column_text(have, 0);
        ours = sql != NULL && strcmp(sql, (const char *)sqlite3_column_text(want, 1)) == 0;
    }
    sqlite3_finalize(want);
    sqlite3_finalize(have);
    sqlite3_close(ref);
    return ours;
}

/* Opens an image, read-only, on a connection of its own, over buf itself: a
 * restore holds no second copy of a large image. (A copy only when its
 * header says WAL, which a database in memory cannot open.) Returns 0,
 * LC_ENOMEM, or LC_EPROTO when SQLite refuses the bytes. */
static int image_open(sqlite3 **out, const uint8_t *buf, size_t len)
{
    sqlite3 *db = NULL;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK) {
        sqlite3_close(db);
        return LC_ENOMEM;
    }
    unsigned char *data = (unsigned char *)buf; /* READONLY: SQLite never writes to it */
    unsigned flags = SQLITE_DESERIALIZE_READONLY;
    if (len >= 20 && buf[18] == 2 && buf[19] == 2) {
        if ((data = sqlite3_malloc64(len)) == NULL) {
            sqlite3_close(db);
            return LC_ENOMEM;
        }
        memcpy(data, buf, len);
        image_without_wal(data, len);
        flags |= SQLITE_DESERIALIZE_FREEONCLOSE; /* freed by SQLite, also on failure */
    }
    if (sqlite3_deserialize(db, "main", data, (sqlite3_int64)len, (sqlite3_int64)len, flags) !=
        SQLITE_OK) {
        sqlite3_close(db);
        return LC_EPROTO;
    }
    *out = db;
    return 0;
}

/* Whether an opened image is a sound database of ours (PRAGMA quick_check,
 * our tables as we define them), checked before it replaces the store. */
static bool image_sound(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    bool sound = false;
    if (sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        sound = strcmp((const char *)sqlite3_column_text(st, 0), "ok") == 0;
    sqlite3_finalize(st);
    return sound && image_schema_ours(db);
}

/* Copies the image into s's main database with the backup API: an on-disk
 * store in WAL mode keeps its file (readers have it open) and readers see the
 * old state or the new one. */
static int copy_image_in(store_t *s, sqlite3 *src)
{
    int rc = SQLITE_ERROR;
    sqlite3_backup *b = sqlite3_backup_init(s->db, "main", src, "main");
    if (b != NULL) {
        rc = sqlite3_backup_step(b, -1);
        rc = sqlite3_backup_finish(b) == SQLITE_OK && rc == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    }
    if (rc != SQLITE_OK) {
        lc_error("store", "msg=\"restore failed\" error=\"%s\"", sqlite3_errmsg(s->db));
        return LC_EIO;
    }
    return 0;
}

int store_deserialize(store_t *s, const uint8_t *buf, size_t len)
{
    assert(!s->read_only);
    sqlite3 *src = NULL;
    int rv = image_open(&src, buf, len);
    if (rv == LC_ENOMEM)
        return rv;
    if (rv != 0 || !image_sound(src)) {
        sqlite3_close(src);
        lc_error("store", "msg=\"restore refused: the snapshot image is not a sound database\" "
                 "bytes=%zu", len);
        return LC_EPROTO;
    }
    rv = copy_image_in(s, src);
    sqlite3_close(src);
    return rv != 0 ? rv : store_exec(s, store_schema_sql);
}
