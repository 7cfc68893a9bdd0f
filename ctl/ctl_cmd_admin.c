/* ctl_cmd_admin.c — loadctl's administration commands: the cluster's members (cluster add,
 * remove), tenants and their weights, API tokens. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ctl_cli.h"
#include "ctl_cmd.h"
#include "ctl_print.h"

/* cluster | cluster add ID RAFT WORKERS API | cluster remove ID */
int ctl_cmd_cluster(const ctl_opts_t *o)
{
    char path[96], done[128];
    if (o->n_args == 1)
        return ctl_cli_get_and_print(o, "/api/v1/cluster", ctl_print_cluster, "the cluster");
    if (strcmp(o->args[1], "add") == 0 && o->n_args == 6 && ctl_cli_valid_id(o->args[2])) {
        json_t *req = json_pack("{s:I,s:s,s:s,s:s}", "id", (json_int_t)strtoll(o->args[2], NULL, 10),
                                "raft", o->args[3], "worker", o->args[4], "api", o->args[5]);
        char *body = json_dumps(req, JSON_COMPACT);
        json_decref(req);
        snprintf(done, sizeof done, "master %s added as a voter", o->args[2]);
        int rv = ctl_cli_send_change(o, "POST", "/api/v1/cluster/members", body, done);
        free(body);
        return rv;
    }
    if (strcmp(o->args[1], "remove") == 0 && o->n_args == 3 && ctl_cli_valid_id(o->args[2])) {
        snprintf(path, sizeof path, "/api/v1/cluster/members/%s", o->args[2]);
        snprintf(done, sizeof done, "master %s removed", o->args[2]);
        return ctl_cli_send_change(o, "DELETE", path, NULL, done);
    }
    ctl_cli_usage_error("%s", "expected 'cluster', 'cluster add ID RAFT WORKERS API' or "
                              "'cluster remove ID'");
    return CTL_EXIT_USAGE;
}

/* Tenant names as the API takes them; checked here too, as they go into paths. */
static bool valid_tenant(const char *s)
{
    size_t n = strlen(s);
    return n >= 1 && n <= 64 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

static bool valid_weight(const char *s)
{
    return ctl_cli_valid_id(s) && strtoll(s, NULL, 10) >= 1 && strtoll(s, NULL, 10) <= 1000;
}

/* POSTs or PATCHes {"name"?, "weight"} for `tenants add` and `tenants weight`. */
static int send_tenant(const ctl_opts_t *o, const char *name, const char *weight, bool add)
{
    if (!valid_tenant(name))
        return ctl_cli_usage_error("'%s' is not a tenant name (1 to 64 of a-z, 0-9, '.', '_', '-')",
                                   name);
    if (!valid_weight(weight))
        return ctl_cli_usage_error("'%s' is not a weight (an integer from 1 to 1000)", weight);
    json_int_t w = (json_int_t)strtoll(weight, NULL, 10);
    json_t *req = add ? json_pack("{s:s,s:I}", "name", name, "weight", w) : json_pack("{s:I}", "weight", w);
    char *body = json_dumps(req, JSON_COMPACT), path[128], done[160];
    json_decref(req);
    snprintf(path, sizeof path, "/api/v1/tenants%s%s", add ? "" : "/", add ? "" : name);
    snprintf(done, sizeof done, "tenant %s %s weight %s", name, add ? "added with" : "now has", weight);
    int rv = body ? ctl_cli_send_change(o, add ? "POST" : "PATCH", path, body, done)
                  : CTL_EXIT_USAGE;
    free(body);
    return rv;
}

/* tenants | tenants add NAME [WEIGHT] | tenants weight NAME WEIGHT */
int ctl_cmd_tenants(const ctl_opts_t *o)
{
    if (o->n_args == 1 && o->weight == NULL)
        return ctl_cli_get_and_print(o, "/api/v1/tenants", ctl_print_tenants, "the tenant list");
    if (o->n_args == 3 && strcmp(o->args[1], "add") == 0)
        return send_tenant(o, o->args[2], o->weight ? o->weight : "1", true);
    if (o->n_args == 4 && strcmp(o->args[1], "add") == 0 && o->weight == NULL)
        return send_tenant(o, o->args[2], o->args[3], true);
    if (o->n_args == 4 && strcmp(o->args[1], "weight") == 0 && o->weight == NULL)
        return send_tenant(o, o->args[2], o->args[3], false);
    return ctl_cli_usage_error("%s", "expected 'tenants', 'tenants add NAME [WEIGHT]' or "
                               "'tenants weight NAME WEIGHT'");
}

/* tokens add admin|tenant [TENANT] [--name NAME]: prints the secret once. */
static int add_token(const ctl_opts_t *o)
{
    bool admin = strcmp(o->args[2], "admin") == 0;
    if (admin ? o->n_args != 3 : strcmp(o->args[2], "tenant") != 0 || o->n_args != 4)
        return ctl_cli_usage_error("%s",
                                   "expected 'tokens add admin' or 'tokens add tenant TENANT'");
    if (!admin && !valid_tenant(o->args[3]))
        return ctl_cli_usage_error("'%s' is not a tenant name", o->args[3]);
    json_t *req = json_pack("{s:s}", "role", o->args[2]);
    if (!admin)
        json_object_set_new(req, "tenant", json_string(o->args[3]));
    if (o->name != NULL)
        json_object_set_new(req, "name", json_string(o->name));
    char *body = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    int rv = body ? ctl_cli_call_and_print(o, "POST", "/api/v1/tokens", NULL, body, strlen(body),
                                           ctl_print_new_token, "the created token")
                  : CTL_EXIT_USAGE;
    free(body);
    return rv;
}

/* tokens | tokens add admin|tenant [TENANT] [--name NAME] | tokens revoke ID */
int ctl_cmd_tokens(const ctl_opts_t *o)
{
    if (o->n_args == 1 && o->name == NULL)
        return ctl_cli_get_and_print(o, "/api/v1/tokens", ctl_print_tokens, "the token list");
    if (o->n_args >= 3 && strcmp(o->args[1], "add") == 0)
        return add_token(o);
    const char *id = o->n_args == 3 ? o->args[2] : "";
    size_t n = strlen(id);
    if (o->n_args > 1 && strcmp(o->args[1], "revoke") == 0 && o->name == NULL && n >= 1 &&
        n < 64 && strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == n) {
        char path[128], done[128];
        snprintf(path, sizeof path, "/api/v1/tokens/%s", id);
        snprintf(done, sizeof done, "token %s revoked", id);
        return ctl_cli_send_change(o, "DELETE", path, NULL, done);
    }
    return ctl_cli_usage_error("%s", "expected 'tokens', 'tokens add admin|tenant [TENANT] "
                               "[--name NAME]' or 'tokens revoke ID'");
}
