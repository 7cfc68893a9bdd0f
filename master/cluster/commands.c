/* commands.c — one builder per Raft command; the only place an
 * LC__COMMAND__INIT is written. */
#include "commands.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_err.h"

#define GRANT_WARNINGS_MAX 8

static int quorum_sink_propose(void *arg, const Lc__Command *cmd, quorum_applied_cb cb,
                               void *cb_arg)
{
    return quorum_propose(arg, cmd, cb, cb_arg);
}

command_sink_t command_sink_quorum(quorum_t *q)
{
    assert(q != NULL);
    return (command_sink_t){.propose = quorum_sink_propose, .arg = q};
}

static int propose(const command_sink_t *s, Lc__Command *cmd, quorum_applied_cb cb, void *arg)
{
    assert(s != NULL && s->propose != NULL);
    return s->propose(s->arg, cmd, cb, arg);
}

int command_create_run(const command_sink_t *s, const Lc__CreateRun *run, quorum_applied_cb cb,
                       void *arg)
{
    assert(run != NULL && run->id != 0);
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_CREATE_RUN;
    cmd.create_run = (Lc__CreateRun *)run;
    return propose(s, &cmd, cb, arg);
}

int command_run_state(const command_sink_t *s, uint64_t run, lc_run_state_t state,
                      const char *reason, uint64_t at_ms)
{
    assert(state < LC_RUN_STATE_COUNT && reason != NULL);
    Lc__RunState rs = LC__RUN_STATE__INIT;
    rs.run = run;
    rs.state = (char *)lc_run_state_name(state);
    rs.at_ms = at_ms;
    rs.reason = (char *)reason;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_RUN_STATE;
    cmd.run_state = &rs;
    return propose(s, &cmd, NULL, NULL);
}

int command_run_grant(const command_sink_t *s, uint64_t run, uint32_t granted, bool queued,
                      const char *warnings)
{
    char buf[512], *list[GRANT_WARNINGS_MAX], *save = NULL;
    size_t n = 0;
    snprintf(buf, sizeof buf, "%s", warnings);
    for (char *w = strtok_r(buf, "\n", &save); w != NULL && n < GRANT_WARNINGS_MAX;
         w = strtok_r(NULL, "\n", &save))
        list[n++] = w;
    Lc__RunGrant g = LC__RUN_GRANT__INIT;
    g.run = run;
    g.granted = granted;
    g.queued = queued;
    g.warnings = list;
    g.n_warnings = n;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_RUN_GRANT;
    cmd.run_grant = &g;
    return propose(s, &cmd, NULL, NULL);
}

int command_lease_rows(const command_sink_t *s, const command_lease_t *lease)
{
    assert(lease != NULL && lease->worker != NULL && lease->count > 0);
    Lc__LeaseRows lr = LC__LEASE_ROWS__INIT;
    lr.run = lease->run;
    lr.feeder = lease->feeder;
    lr.worker = (char *)lease->worker;
    lr.seq = lease->seq;
    lr.count = lease->count;
    lr.rows = lease->rows;
    lr.wrap = lease->wrap;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_LEASE_ROWS;
    cmd.lease_rows = &lr;
    return propose(s, &cmd, NULL, NULL);
}

int command_run_finished(const command_sink_t *s, uint64_t run, lc_run_state_t state,
                         const char *verdict, const char *summary_json, uint64_t at_ms)
{
    assert(lc_run_state_is_over(state) && verdict != NULL && summary_json != NULL);
    Lc__RunFinished fin = LC__RUN_FINISHED__INIT;
    fin.run = run;
    fin.state = (char *)lc_run_state_name(state);
    fin.at_ms = at_ms;
    fin.verdict = (char *)verdict;
    fin.summary_json = (char *)summary_json;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_RUN_FINISHED;
    cmd.run_finished = &fin;
    return propose(s, &cmd, NULL, NULL);
}

int command_run_assignment(const command_sink_t *s, uint64_t run, uint64_t generation,
                           const command_share_t *shares, size_t n)
{
    assert(n > 0 && shares[0].worker != NULL);
    Lc__RunAssignment ra = LC__RUN_ASSIGNMENT__INIT;
    ra.run = run;
    ra.worker = (char *)shares[0].worker;
    ra.generation = generation;
    ra.users = shares[0].users;
    Lc__RunShare *more = n > 1 ? calloc(n - 1, sizeof *more) : NULL;
    Lc__RunShare **refs = n > 1 ? calloc(n - 1, sizeof *refs) : NULL;
    if (n > 1 && (more == NULL || refs == NULL)) {
        free(more);
        free(refs);
        return LC_ENOMEM;
    }
    for (size_t i = 1; i < n; i++) {
        lc__run_share__init(&more[i - 1]);
        more[i - 1].worker = (char *)shares[i].worker;
        more[i - 1].users = shares[i].users;
        refs[i - 1] = &more[i - 1];
    }
    ra.n_more = n - 1;
    ra.more = refs;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_RUN_ASSIGNMENT;
    cmd.run_assignment = &ra;
    int rv = propose(s, &cmd, NULL, NULL);
    free(more);
    free(refs);
    return rv;
}

int command_retain_history(const command_sink_t *s, const Lc__RetainHistory *step,
                           quorum_applied_cb cb, void *arg)
{
    assert(step != NULL && step->run != 0);
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_RETAIN_HISTORY;
    cmd.retain_history = (Lc__RetainHistory *)step;
    return propose(s, &cmd, cb, arg);
}

int command_run_seconds(const command_sink_t *s, uint64_t run, Lc__StatsBatch **batches,
                        size_t n_batches, quorum_applied_cb cb, void *arg)
{
    assert(n_batches == 0 || batches != NULL);
    Lc__RunSeconds seconds = LC__RUN_SECONDS__INIT;
    seconds.run = run;
    seconds.batches = batches;
    seconds.n_batches = n_batches;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_RUN_SECONDS;
    cmd.run_seconds = &seconds;
    return propose(s, &cmd, cb, arg);
}

int command_put_member(const command_sink_t *s, uint64_t id, const char *raft, const char *worker,
                       const char *api, quorum_applied_cb cb, void *arg)
{
    assert(raft != NULL && worker != NULL && api != NULL);
    Lc__PutMember pm = LC__PUT_MEMBER__INIT;
    pm.id = id;
    pm.raft = (char *)raft;
    pm.worker = (char *)worker;
    pm.api = (char *)api;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_PUT_MEMBER;
    cmd.put_member = &pm;
    return propose(s, &cmd, cb, arg);
}

int command_remove_member(const command_sink_t *s, uint64_t id, quorum_applied_cb cb, void *arg)
{
    Lc__RemoveMember rm = LC__REMOVE_MEMBER__INIT;
    rm.id = id;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_REMOVE_MEMBER;
    cmd.remove_member = &rm;
    return propose(s, &cmd, cb, arg);
}

int command_create_tenant(const command_sink_t *s, const char *name, uint32_t weight,
                          uint64_t created_ms, quorum_applied_cb cb, void *arg)
{
    assert(name != NULL && weight > 0);
    Lc__CreateTenant ct = LC__CREATE_TENANT__INIT;
    ct.name = (char *)name;
    ct.weight = weight;
    ct.created_ms = created_ms;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_CREATE_TENANT;
    cmd.create_tenant = &ct;
    return propose(s, &cmd, cb, arg);
}

int command_set_tenant_weight(const command_sink_t *s, const char *name, uint32_t weight,
                              quorum_applied_cb cb, void *arg)
{
    assert(name != NULL && weight > 0);
    Lc__SetTenantWeight sw = LC__SET_TENANT_WEIGHT__INIT;
    sw.name = (char *)name;
    sw.weight = weight;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_SET_TENANT_WEIGHT;
    cmd.set_tenant_weight = &sw;
    return propose(s, &cmd, cb, arg);
}

int command_put_token(const command_sink_t *s, const char *id, const uint8_t *hash,
                      size_t hash_len, const char *role, const char *tenant, const char *name,
                      uint64_t created_ms, quorum_applied_cb cb, void *arg)
{
    assert(id != NULL && hash != NULL && role != NULL && tenant != NULL && name != NULL);
    Lc__PutToken pt = LC__PUT_TOKEN__INIT;
    pt.id = (char *)id;
    pt.hash.data = (uint8_t *)hash;
    pt.hash.len = hash_len;
    pt.role = (char *)role;
    pt.tenant = (char *)tenant;
    pt.name = (char *)name;
    pt.created_ms = created_ms;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_PUT_TOKEN;
    cmd.put_token = &pt;
    return propose(s, &cmd, cb, arg);
}

int command_revoke_token(const command_sink_t *s, const char *id, quorum_applied_cb cb, void *arg)
{
    assert(id != NULL);
    Lc__RevokeToken rt = LC__REVOKE_TOKEN__INIT;
    rt.id = (char *)id;
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_REVOKE_TOKEN;
    cmd.revoke_token = &rt;
    return propose(s, &cmd, cb, arg);
}
