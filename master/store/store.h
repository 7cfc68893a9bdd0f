/* store.h — the cluster state in SQLite (the Raft state machine's data): the
 * only module that talks to sqlite3. Writes come from applied commands only. */
#ifndef MASTER_STORE_H
#define MASTER_STORE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "state.pb-c.h"

typedef struct store_s store_t;

/* Opens an empty in-memory database with the schema (tests, tools).
 * Returns 0 or LC_EIO with errmsg. */
int store_open(store_t **out, char *errmsg, size_t errlen);
/* Opens path (<data-dir>/state.db) as an empty database in WAL mode: what
 * it held before is removed, since Raft rebuilds the state from the latest
 * snapshot and the log on every start. Only this connection writes; with
 * synchronous=OFF, as durability is the Raft log's. Returns 0 or LC_EIO. */
int store_open_file(store_t **out, const char *path, char *errmsg, size_t errlen);
/* A read-only connection to writer's file, for one thread at a time: WAL
 * gives it a consistent view of the applied commands while the writer goes
 * on. Returns 0, LC_ESTATE for an in-memory writer, or LC_EIO. */
int store_open_reader(store_t **out, const store_t *writer, char *errmsg, size_t errlen);
/* The same by the writer's path (<data-dir>/state.db), for a thread that may outlive it. */
int store_open_reader_at(store_t **out, const char *path, char *errmsg, size_t errlen);
/* Whether store_open_reader can give readers of s. */
bool store_has_readers(const store_t *s);
void store_close(store_t *s);

/* Applies one command as one transaction. Application-level problems (a run
 * that does not exist, a batch already applied) are not errors of the store:
 * they return LC_ENOTFOUND / LC_ESTATE and change nothing. LC_EIO means SQLite
 * itself failed. */
int store_apply(store_t *s, const Lc__Command *cmd);

/* Serializes the whole database into a malloc'd buffer (snapshot). */
int store_serialize(store_t *s, uint8_t **out, size_t *out_len);
/* The same without a copy: *out is SQLite's, freed with store_image_free. */
int store_serialize_image(store_t *s, uint8_t **out, size_t *out_len);
void store_image_free(uint8_t *image);
/* Replaces the whole database with a serialized image (restore): the image
 * is checked on a connection of its own first, then copied in with SQLite's
 * backup API, so readers see the old state or the new one. */
int store_deserialize(store_t *s, const uint8_t *buf, size_t len);

/* A snapshot taken off the loop: begin pins the state as it is now (on the
 * loop, between two applies: a read transaction on a connection of its own;
 * an in-memory store copies its image at once), image serializes the pinned
 * state on any thread and releases the view, end frees. */
typedef struct store_snapshot_s store_snapshot_t;
int store_snapshot_begin(store_t *s, store_snapshot_t **out);
/* OUT: *out (freed with store_image_free), *len. Call once. */
int store_snapshot_image(store_snapshot_t *snap, uint8_t **out, size_t *len);
void store_snapshot_end(store_snapshot_t *snap);

/* Runs ---------------------------------------------------------------- */

typedef struct store_run_s {
    uint64_t id;
    char tenant[128];
    char name[256];
    char state[16];
    uint32_t users;
    uint64_t created_ms, started_ms, finished_ms; /* 0 when unset */
    char reason[256];
    char verdict[16];
    char *scenario_json; /* malloc'd; caller frees (store_run_free) */
} store_run_t;

void store_run_free(store_run_t *r);
/* Loads one run. Returns 0, LC_ENOTFOUND or LC_EIO. */
int store_run_get(store_t *s, uint64_t id, store_run_t *out);
/* Whether run id exists and is finished, failed or aborted. */
bool store_run_is_over(store_t *s, uint64_t id);
/* The tenant of run id, without loading the rest of it (access checks).
 * Returns 0, LC_ENOTFOUND (tenant set to "") or LC_EIO. */
int store_run_tenant(store_t *s, uint64_t id, char *tenant, size_t len);
/* Ids of runs in the given state ("pending", "running", …), oldest first;
 * *ids is malloc'd. */
int store_runs_in_state(store_t *s, const char *state, uint64_t **ids, size_t *n);
/* Largest run id ever created (0 when none). */
uint64_t store_max_run_id(store_t *s);
/* True when (worker, run, seq) has been applied already. */
int store_batch_applied(store_t *s, const char *worker, uint64_t run, uint64_t seq);

/* A worker's share of an active run as the leader last recorded it
 * (RunAssignment). OUT: *generation, *users. Returns 0, LC_ENOTFOUND (no
 * share: never assigned, taken back, or the run is over) or LC_EIO. */
int store_assignment_get(store_t *s, uint64_t run, const char *worker, uint64_t *generation,
                         uint32_t *users);
/* Calls each(arg, worker) for every worker with a recorded share of run, while each returns
 * true. Returns 0 or LC_EIO. */
int store_assignments_each(store_t *s, uint64_t run, bool (*each)(void *arg, const char *worker),
                           void *arg);

/* Feeder leases (LeaseRows) -------------------------------------------- */

#define STORE_LEASE_ROWS_MAX 4096u  /* rows one lease may take */
#define STORE_LEASE_FEEDERS_MAX 16u /* feeders of a run (LC_JOURNEY_FEEDERS_MAX) */

/* A worker's latest lease of a feeder: tickets [start, start + count) of its sequential
 * order, given for its FeedRequest seq; exhausted: the cursor reached the last row. */
typedef struct store_lease_s {
    uint64_t seq, start;
    uint32_t count;
    bool exhausted;
} store_lease_t;

/* OUT: *out. Returns 0, LC_ENOTFOUND (no lease yet, or the run is over) or LC_EIO. */
int store_lease_get(store_t *s, uint64_t run, uint32_t feeder, const char *worker,
                    store_lease_t *out);
/* The feeder's cursor: tickets handed out so far (*next) and its rows. Returns 0,
 * LC_ENOTFOUND (no lease yet) or LC_EIO. */
int store_feed_cursor(store_t *s, uint64_t run, uint32_t feeder, uint64_t *next, uint32_t *rows);

/* Members --------------------------------------------------------------- */

/* The worker and API addresses of master `id` as last put (buffers get ""
 * when unknown). Returns 0 or LC_ENOTFOUND. */
int store_member_get(store_t *s, uint64_t id, char *raft, char *worker, char *api, size_t len);

/* Tenants and tokens ---------------------------------------------------- */

#define STORE_TOKEN_HASH_LEN 32 /* SHA-256 */

/* A tenant's weight. Returns 0 or LC_ENOTFOUND. */
int store_tenant_weight(store_t *s, const char *tenant, uint32_t *weight);
/* [{"name","weight","created_at"}], by name. */
json_t *store_tenants_json(store_t *s);

typedef struct store_token_s {
    char id[64];
    char role[16];   /* "admin" or "tenant" */
    char tenant[128];
} store_token_t;

/* The token whose SHA-256 is hash. Returns 0 or LC_ENOTFOUND. The lookup is
 * by hash (an index), so timing does not depend on how much of a guess
 * matched; callers compare the hash again in constant time. */
int store_token_by_hash(store_t *s, const uint8_t hash[STORE_TOKEN_HASH_LEN], store_token_t *out,
                        uint8_t stored_hash[STORE_TOKEN_HASH_LEN]);
/* Number of admin tokens (0 means the cluster still needs its first). */
int store_admin_tokens(store_t *s);
/* [{"id","role","tenant","name","created_at"}] — never the hashes. */
json_t *store_tokens_json(store_t *s);

/* JSON views for the API (new references; NULL on LC_ENOTFOUND). ----- */

/* The run list, newest first (at most 1000): [{"id","name","tenant","state",
 * "created_at","started_at","finished_at","users","requests","failures","rps",
 * "verdict","users_requested","users_granted","queued","warnings"}], only tenant's runs
 * unless tenant is NULL, only those in state unless state is NULL. A summary
 * that decodes no histogram: latencies (p95 and the rest) are in
 * store_run_json only; the grant fields are the same as there. */
json_t *store_runs_json(store_t *s, const char *tenant, const char *state, uint64_t now_ms);
/* One run with totals, endpoints, errors, the latest second, and the
 * scheduler's "users_requested", "users_granted", "queued", "warnings". */
json_t *store_run_json(store_t *s, uint64_t id, uint64_t now_ms);

#endif
