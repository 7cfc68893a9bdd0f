/* commands.h — every Raft command the master proposes (proto/state.proto),
 * each built in exactly one function and handed to a sink: the quorum in the
 * process, a recorder in unit tests. */
#ifndef MASTER_COMMANDS_H
#define MASTER_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lc_run_state.h"
#include "quorum.h"
#include "state.pb-c.h"

/* Where proposals go. propose has quorum_propose's contract: 0 and cb (which
 * may be NULL) follows once applied or failed, or an error and no cb. */
typedef struct command_sink_s {
    int (*propose)(void *arg, const Lc__Command *cmd, quorum_applied_cb cb, void *cb_arg);
    void *arg;
} command_sink_t;

/* A sink that proposes through q. */
command_sink_t command_sink_quorum(quorum_t *q);

/* Each returns what the sink's propose returned. Strings are copied by the
 * encoder before the call returns; at_ms/created_ms are wall-clock ms. */
int command_create_run(const command_sink_t *s, const Lc__CreateRun *run, quorum_applied_cb cb,
                       void *arg);
int command_run_state(const command_sink_t *s, uint64_t run, lc_run_state_t state,
                      const char *reason, uint64_t at_ms);
/* warnings: '\n'-separated, at most 8 are kept. */
int command_run_grant(const command_sink_t *s, uint64_t run, uint32_t granted, bool queued,
                      const char *warnings);
/* One worker's share of a run; users 0: the worker has no share any more. */
typedef struct command_share_s {
    const char *worker;
    uint32_t users;
} command_share_t;
/* The shares that changed in one reschedule of run, all at generation, as
 * one command (n > 0). */
int command_run_assignment(const command_sink_t *s, uint64_t run, uint64_t generation,
                           const command_share_t *shares, size_t n);
/* state: finished, failed or aborted. */
int command_run_finished(const command_sink_t *s, uint64_t run, lc_run_state_t state,
                         const char *verdict, const char *summary_json, uint64_t at_ms);
/* What store_retention_next found due (store/store_retention.h). */
int command_retain_history(const command_sink_t *s, const Lc__RetainHistory *step,
                           quorum_applied_cb cb, void *arg);
/* Up to count rows of feeder (rows in all; wrap: on_exhausted wrap) of run for worker's
 * FeedRequest seq (store_feeds.c decides which). */
typedef struct command_lease_s {
    uint64_t run;
    uint32_t feeder;
    const char *worker;
    uint64_t seq;
    uint32_t count, rows;
    bool wrap;
} command_lease_t;
int command_lease_rows(const command_sink_t *s, const command_lease_t *lease);
int command_run_seconds(const command_sink_t *s, uint64_t run, Lc__StatsBatch **batches,
                        size_t n_batches, quorum_applied_cb cb, void *arg);
int command_put_member(const command_sink_t *s, uint64_t id, const char *raft, const char *worker,
                       const char *api, quorum_applied_cb cb, void *arg);
int command_remove_member(const command_sink_t *s, uint64_t id, quorum_applied_cb cb, void *arg);
int command_create_tenant(const command_sink_t *s, const char *name, uint32_t weight,
                          uint64_t created_ms, quorum_applied_cb cb, void *arg);
int command_set_tenant_weight(const command_sink_t *s, const char *name, uint32_t weight,
                              quorum_applied_cb cb, void *arg);
/* hash is STORE_TOKEN_HASH_LEN bytes; tenant "" for an admin token. */
int command_put_token(const command_sink_t *s, const char *id, const uint8_t *hash,
                      size_t hash_len, const char *role, const char *tenant, const char *name,
                      uint64_t created_ms, quorum_applied_cb cb, void *arg);
int command_revoke_token(const command_sink_t *s, const char *id, quorum_applied_cb cb,
                         void *arg);

#endif
