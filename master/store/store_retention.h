/* store_retention.h — how long a finished run's history stays at which
 * resolution (RetainHistory), and what the leader should propose next. */
#ifndef MASTER_STORE_RETENTION_H
#define MASTER_STORE_RETENTION_H

#include <stdbool.h>
#include <stdint.h>

#include "store.h"

/* Seconds one RetainHistory merges at most: bounds the work of one entry. */
#define STORE_RETENTION_CHUNK_S 600

/* Ages after a run finished, in ms (0: never). */
typedef struct store_retention_policy_s {
    uint64_t full_ms;  /* per-second points until then, 10 s points after */
    uint64_t ten_s_ms; /* 10 s points until then, 1 min points after */
    uint64_t max_ms;   /* then its seconds are deleted (summary and totals stay) */
    uint64_t acks_ms;  /* then its acks are dropped: no replay can come any more */
    bool archive;      /* and its seconds move to a file of their own (store_archive.h) */
} store_retention_policy_t;

typedef struct store_retention_s {
    uint32_t resolution_s;           /* of the whole history: 1, 10 or 60 */
    uint32_t progress_res, progress_t; /* a coarser level merged up to progress_t */
    bool acks_dropped, seconds_deleted;
    bool archived; /* its seconds are in its archive file, not in the database */
} store_retention_t;

/* A tenant's runs not over yet (pending, running, stopping), and its runs
 * whose history is still kept (not deleted by retention), for quotas. */
int store_tenant_run_counts(store_t *s, const char *tenant, uint64_t *active, uint64_t *kept);

/* Applies RetainHistory (store_apply's case). LC_ESTATE for a run not over,
 * LC_EINVAL for a resolution other than 10 or 60 or an unaligned range. */
int store_apply_retain_history(store_t *s, const Lc__RetainHistory *c);
/* OUT: *out, the retention state of run (resolution 1 when untouched). */
int store_retention_get(store_t *s, uint64_t run, store_retention_t *out);
/* OUT: *out, the next step due under p at now_ms (wall clock). Returns 0,
 * LC_ENOTFOUND when nothing is due, or LC_EIO. */
int store_retention_next(store_t *s, const store_retention_policy_t *p, uint64_t now_ms,
                         Lc__RetainHistory *out);

#endif
