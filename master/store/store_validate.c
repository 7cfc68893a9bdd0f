/* store_validate.c — every text of a command is checked before it is
 * applied: a log entry is input too (a forged or corrupt one must not make a
 * run unrenderable), and the check is the same on every master. */
#include <string.h>

#include "lc_text.h"
#include "lc_utf8.h"
#include "store_internal.h"

#define NAME_MAX_BYTES 1024       /* names, reasons, ids, addresses */
#define DOCUMENT_MAX_BYTES (16u << 20) /* scenario and summary JSON */

/* Valid UTF-8 of at most max bytes; control characters allowed (JSON text). */
static bool utf8_ok(const char *s, size_t max)
{
    size_t n = strnlen(s, max + 1);
    if (n > max)
        return false;
    for (size_t i = 0; i < n;) {
        size_t len = lc_utf8_seq_len(s + i, n - i);
        if (len == 0)
            return false;
        i += len;
    }
    return true;
}

static bool name_ok(const char *s)
{
    return s != NULL && lc_text_ok(s, NAME_MAX_BYTES);
}

static bool names_ok(char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!name_ok(list[i]))
            return false;
    return true;
}

static bool batch_ok(const Lc__StatsBatch *b)
{
    if (!name_ok(b->worker_id))
        return false;
    for (size_t i = 0; i < b->n_endpoints; i++)
        if (!name_ok(b->endpoints[i]->name) || !name_ok(b->endpoints[i]->method))
            return false;
    for (size_t i = 0; i < b->n_errors; i++)
        if (!name_ok(b->errors[i]->endpoint) || !name_ok(b->errors[i]->kind) ||
            !name_ok(b->errors[i]->message))
            return false;
    for (size_t i = 0; i < b->n_checks; i++)
        if (b->checks[i] == NULL || !name_ok(b->checks[i]->name))
            return false;
    return true;
}

static bool seconds_ok(const Lc__RunSeconds *c)
{
    for (size_t i = 0; i < c->n_batches; i++)
        if (!batch_ok(c->batches[i]))
            return false;
    return true;
}

static bool assignment_ok(const Lc__RunAssignment *a)
{
    if (!name_ok(a->worker))
        return false;
    for (size_t i = 0; i < a->n_more; i++)
        if (a->more[i] == NULL || !name_ok(a->more[i]->worker))
            return false;
    return true;
}

bool store_command_text_ok(const Lc__Command *cmd)
{
    switch (cmd->cmd_case) {
    case LC__COMMAND__CMD_CREATE_RUN:
        return name_ok(cmd->create_run->tenant) && name_ok(cmd->create_run->name) &&
               utf8_ok(cmd->create_run->scenario_json, DOCUMENT_MAX_BYTES);
    case LC__COMMAND__CMD_RUN_STATE:
        return name_ok(cmd->run_state->state) && name_ok(cmd->run_state->reason);
    case LC__COMMAND__CMD_RUN_SECONDS:
        return seconds_ok(cmd->run_seconds);
    case LC__COMMAND__CMD_RUN_FINISHED:
        return name_ok(cmd->run_finished->state) && name_ok(cmd->run_finished->verdict) &&
               utf8_ok(cmd->run_finished->summary_json, DOCUMENT_MAX_BYTES);
    case LC__COMMAND__CMD_PUT_MEMBER:
        return name_ok(cmd->put_member->raft) && name_ok(cmd->put_member->worker) &&
               name_ok(cmd->put_member->api);
    case LC__COMMAND__CMD_CREATE_TENANT:
        return name_ok(cmd->create_tenant->name);
    case LC__COMMAND__CMD_SET_TENANT_WEIGHT:
        return name_ok(cmd->set_tenant_weight->name);
    case LC__COMMAND__CMD_PUT_TOKEN:
        return name_ok(cmd->put_token->id) && name_ok(cmd->put_token->role) &&
               name_ok(cmd->put_token->tenant) && name_ok(cmd->put_token->name);
    case LC__COMMAND__CMD_REVOKE_TOKEN:
        return name_ok(cmd->revoke_token->id);
    case LC__COMMAND__CMD_RUN_GRANT:
        return names_ok(cmd->run_grant->warnings, cmd->run_grant->n_warnings);
    case LC__COMMAND__CMD_RUN_ASSIGNMENT:
        return assignment_ok(cmd->run_assignment);
    case LC__COMMAND__CMD_LEASE_ROWS:
        return name_ok(cmd->lease_rows->worker);
    default:
        return true; /* no text */
    }
}
