/* api_access.c — who may call the API (the token gate every master applies
 * before redirecting), and /api/v1/tenants and /api/v1/tokens. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_internal.h"
#include "auth.h"
#include "commands.h"
#include "lc_clock.h"
#include "lc_err.h"
#include "quorum.h"
#include "runs.h"
#include "store.h"

#define TENANT_NAME_MAX 64
#define TOKEN_NAME_MAX 64
#define WEIGHT_MAX 1000

/* ---- the gate ---- */

/* path is prefix itself or below it ("prefix/…"). */
static bool is_under(const char *path, const char *prefix)
{
    size_t n = strlen(prefix);
    return strncmp(path, prefix, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Tenants, tokens and membership changes are the cluster operator's; any
 * valid token may read the cluster and the workers. */
static bool admin_only(const lc_http_request_t *req)
{
    bool get = strcmp(req->method, "GET") == 0;
    return is_under(req->path, "/api/v1/tenants") || is_under(req->path, "/api/v1/tokens") ||
           (is_under(req->path, "/api/v1/cluster") && !(get && strcmp(req->path, "/api/v1/cluster") == 0));
}

static void unauthorized(lc_http_exchange_t *ex)
{
    static const char body[] = "{\"error\":\"missing or unknown token\"}";
    lc_http_exchange_respond(ex, 401, "application/json", body, sizeof body - 1,
                             "WWW-Authenticate: Bearer realm=\"loadcluster\"\r\n");
}

/* A tenant token posting a run (or validating a scenario) that names
 * another tenant. Only JSON bodies are looked at here: a YAML one is
 * converted and checked by the route (api_scenario_read), as every scenario
 * is after parsing. */
static bool foreign_run(const lc_http_request_t *req, const auth_identity_t *who)
{
    if (who->role != AUTH_ROLE_TENANT || strcmp(req->method, "POST") != 0 ||
        (strcmp(req->path, "/api/v1/runs") != 0 && !api_validate_is_path(req->path)))
        return false;
    json_t *root = json_loadb(req->body, req->body_len, 0, NULL);
    const char *tenant = json_string_value(json_object_get(root, "tenant"));
    bool foreign = tenant != NULL && strcmp(tenant, who->tenant) != 0;
    json_decref(root);
    return foreign;
}

bool api_access_gate(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req,
                     auth_identity_t *who)
{
    int rv = auth_identify(m->store, req->authorization, who);
    const char *token;
    size_t len;
    if (rv == LC_EIO) {
        api_respond_error(ex, 500, "token lookup failed");
        return false;
    }
    if (rv != 0 && auth_bearer_parse(req->authorization, &token, &len) == 0 &&
        store_admin_tokens(m->store) == 0) {
        api_respond_error(ex, 503, "no API tokens known yet: the cluster is starting or this "
                          "master is catching up; try again");
        return false;
    }
    if (rv != 0) {
        unauthorized(ex);
        return false;
    }
    if (who->role == AUTH_ROLE_TENANT && admin_only(req)) {
        api_respond_error(ex, 403, "forbidden: %s %s needs an admin token", req->method, req->path);
        return false;
    }
    if (foreign_run(req, who)) {
        api_respond_error(ex, 403, "forbidden: a token of tenant '%s' cannot create runs for "
                          "another tenant", who->tenant);
        return false;
    }
    return true;
}

bool api_metrics_scope(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req,
                       metrics_scope_t *scope)
{
    memset(scope, 0, sizeof *scope);
    if (req->authorization == NULL)
        return true; /* the cluster's own series */
    if (m->metrics_hash_set && auth_header_matches(req->authorization, m->metrics_hash)) {
        scope->tenant_series = true;
        return true;
    }
    auth_identity_t who;
    int rv = auth_identify(m->store, req->authorization, &who);
    if (rv == LC_EIO) {
        api_respond_error(ex, 500, "token lookup failed");
        return false;
    }
    if (rv != 0) {
        unauthorized(ex); /* a scraper with a wrong token should notice, not get less */
        return false;
    }
    scope->tenant_series = true;
    snprintf(scope->tenant, sizeof scope->tenant, "%s", who.tenant); /* "" for admin: all */
    return true;
}

/* ---- proposals answered once applied ---- */

typedef struct access_op_s {
    master_t *m;
    lc_http_exchange_t *ex;
    int status;          /* of the answer once applied */
    json_t *answer;      /* its body */
    char what[160];      /* "tenant 'a'", for errors */
    int missing_status;  /* answer to LC_ENOTFOUND (404, or 400 for a token's tenant) */
    bool changes_shares; /* a tenant's weight: the fleet is divided again */
} access_op_t;

static void op_applied_cb(void *arg, int status, int result)
{
    access_op_t *op = arg;
    if (status != 0)
        api_respond_error(op->ex, 503, "%s: %s", op->what, lc_strerror(status));
    else if (result == LC_ESTATE)
        api_respond_error(op->ex, 409, "%s already exists", op->what);
    else if (result == LC_ENOTFOUND)
        api_respond_error(op->ex, op->missing_status, "%s: not found", op->what);
    else if (result != 0)
        api_respond_error(op->ex, 500, "%s: %s", op->what, lc_strerror(result));
    else
        api_respond_json(op->ex, op->status, op->answer);
    /* Weights decide every tenant's share of the fleet. */
    if (status == 0 && result == 0 && op->changes_shares)
        runs_reschedule(op->m->runs);
    if (status != 0 || result != 0)
        json_decref(op->answer);
    free(op);
}

/* Proposes cmd and answers (with answer, taken) once it is applied. */
/* The pending answer to one change: answer (201/200 with it) once applied. */
static access_op_t *op_new(master_t *m, lc_http_exchange_t *ex, int status, json_t *answer,
                           const char *what, int missing_status, bool changes_shares)
{
    access_op_t *op = answer != NULL ? calloc(1, sizeof *op) : NULL;
    if (op == NULL) {
        json_decref(answer);
        return NULL;
    }
    *op = (access_op_t){.m = m, .ex = ex, .status = status, .answer = answer,
                        .missing_status = missing_status, .changes_shares = changes_shares};
    snprintf(op->what, sizeof op->what, "%s", what);
    return op;
}

/* rv: what the command's proposal returned (op NULL: it was not proposed). */
static void op_proposed(lc_http_exchange_t *ex, access_op_t *op, int rv, const char *what)
{
    if (op == NULL)
        rv = LC_ENOMEM;
    if (rv == 0)
        return;
    api_respond_error(ex, rv == LC_ENOMEM ? 500 : 503, "%s: %s", what, lc_strerror(rv));
    if (op != NULL)
        json_decref(op->answer);
    free(op);
}

/* ---- request bodies ---- */

/* The body as a JSON object with no fields but allowed (NULL-terminated);
 * answers 400 and returns NULL otherwise. */
static json_t *body_object(lc_http_exchange_t *ex, const lc_http_request_t *req,
                           const char *const *allowed)
{
    json_error_t err;
    json_t *root = json_loadb(req->body, req->body_len, 0, &err);
    if (!json_is_object(root)) {
        api_respond_error(ex, 400, "expected a JSON object%s%s", root ? "" : ": ",
                          root ? "" : err.text);
        json_decref(root);
        return NULL;
    }
    const char *key;
    json_t *value;
    json_object_foreach(root, key, value) {
        size_t i = 0;
        while (allowed[i] != NULL && strcmp(allowed[i], key) != 0)
            i++;
        if (allowed[i] == NULL) {
            api_respond_error(ex, 400, "unknown field '%.64s'", key);
            json_decref(root);
            return NULL;
        }
    }
    return root;
}

static bool tenant_name_ok(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    return n >= 1 && n <= TENANT_NAME_MAX && strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

/* The "weight" field (def when absent and def > 0); answers 400 and returns 0 when bad. */
static uint32_t weight_field(lc_http_exchange_t *ex, json_t *body, uint32_t def)
{
    json_t *w = json_object_get(body, "weight");
    if (w == NULL && def > 0)
        return def;
    if (!json_is_integer(w) || json_integer_value(w) < 1 || json_integer_value(w) > WEIGHT_MAX) {
        api_respond_error(ex, 400, "weight: expected an integer from 1 to %d", WEIGHT_MAX);
        return 0;
    }
    return (uint32_t)json_integer_value(w);
}

/* ---- tenants ---- */

static void create_tenant(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req)
{
    static const char *const fields[] = {"name", "weight", NULL};
    json_t *body = body_object(ex, req, fields);
    if (body == NULL)
        return;
    char name[TENANT_NAME_MAX + 1], what[160];
    const char *text = json_string_value(json_object_get(body, "name"));
    uint32_t weight = 0, existing;
    if (!tenant_name_ok(text))
        api_respond_error(ex, 400, "name: expected 1 to %d of a-z, 0-9, '.', '_', '-'", TENANT_NAME_MAX);
    else
        weight = weight_field(ex, body, 1);
    if (weight > 0)
        snprintf(name, sizeof name, "%s", text);
    json_decref(body);
    if (weight == 0)
        return;
    snprintf(what, sizeof what, "tenant '%s'", name);
    if (store_tenant_weight(m->store, name, &existing) == 0) {
        api_respond_error(ex, 409, "%s already exists", what);
        return;
    }
    access_op_t *op = op_new(m, ex, 201,
                             json_pack("{s:s,s:I}", "name", name, "weight", (json_int_t)weight),
                             what, 404, true);
    command_sink_t sink = command_sink_quorum(m->quorum);
    int rv = op ? command_create_tenant(&sink, name, weight, lc_wall_ms(), op_applied_cb, op) : 0;
    op_proposed(ex, op, rv, what);
}

static void set_weight(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req,
                       const char *name)
{
    static const char *const fields[] = {"weight", NULL};
    char what[160];
    uint32_t existing;
    snprintf(what, sizeof what, "tenant '%.64s'", name);
    if (!tenant_name_ok(name) || store_tenant_weight(m->store, name, &existing) != 0) {
        api_respond_error(ex, 404, "no such tenant '%.64s'", name);
        return;
    }
    json_t *body = body_object(ex, req, fields);
    uint32_t weight = body ? weight_field(ex, body, 0) : 0;
    json_decref(body);
    if (weight == 0)
        return;
    access_op_t *op = op_new(m, ex, 200,
                             json_pack("{s:s,s:I}", "name", name, "weight", (json_int_t)weight),
                             what, 404, true);
    command_sink_t sink = command_sink_quorum(m->quorum);
    int rv = op ? command_set_tenant_weight(&sink, name, weight, op_applied_cb, op) : 0;
    op_proposed(ex, op, rv, what);
}

static void show_tenant(master_t *m, lc_http_exchange_t *ex, const char *name)
{
    uint32_t weight;
    if (!tenant_name_ok(name) || store_tenant_weight(m->store, name, &weight) != 0)
        api_respond_error(ex, 404, "no such tenant '%.64s'", name);
    else
        api_respond_json(ex, 200, json_pack("{s:s,s:I}", "name", name, "weight", (json_int_t)weight));
}

static void tenants_route(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req)
{
    static const char prefix[] = "/api/v1/tenants/";
    const char *method = req->method;
    if (strcmp(req->path, "/api/v1/tenants") == 0) {
        if (strcmp(method, "GET") == 0)
            api_respond_json(ex, 200, json_pack("{s:o}", "tenants", store_tenants_json(m->store)));
        else if (strcmp(method, "POST") == 0)
            create_tenant(m, ex, req);
        else
            api_respond_error(ex, 405, "%s not allowed on %s", method, req->path);
    } else if (strncmp(req->path, prefix, sizeof prefix - 1) == 0 &&
               strchr(req->path + sizeof prefix - 1, '/') == NULL) {
        const char *name = req->path + sizeof prefix - 1;
        if (strcmp(method, "PATCH") == 0)
            set_weight(m, ex, req, name);
        else if (strcmp(method, "GET") == 0)
            show_tenant(m, ex, name);
        else
            api_respond_error(ex, 405, "%s not allowed on %s", method, req->path);
    } else {
        api_respond_error(ex, 404, "no such endpoint: %s", req->path);
    }
}

/* ---- tokens ---- */

/* The "tenant" and "name" fields of a new token; answers 400 and returns
 * false when they do not fit the role. */
static bool token_fields(master_t *m, lc_http_exchange_t *ex, json_t *body, bool admin,
                         char *tenant, char *name)
{
    json_t *t = json_object_get(body, "tenant"), *n = json_object_get(body, "name");
    const char *text = json_string_value(t);
    uint32_t weight;
    if (admin && !(t == NULL || json_is_null(t) || (text != NULL && text[0] == '\0')))
        api_respond_error(ex, 400, "tenant: an admin token belongs to no tenant");
    else if (!admin && !tenant_name_ok(text))
        api_respond_error(ex, 400, "tenant: a tenant token needs the name of its tenant");
    else if (!admin && store_tenant_weight(m->store, text, &weight) != 0)
        api_respond_error(ex, 400, "tenant: no such tenant '%s'", text);
    else if (n != NULL && !json_is_null(n) &&
             (!json_is_string(n) || json_string_length(n) > TOKEN_NAME_MAX ||
              strspn(json_string_value(n), " abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                     "0123456789._-@:") != json_string_length(n)))
        api_respond_error(ex, 400, "name: expected up to %d letters, digits, spaces or ._-@:",
                          TOKEN_NAME_MAX);
    else {
        snprintf(tenant, TENANT_NAME_MAX + 1, "%s", admin ? "" : text);
        snprintf(name, TOKEN_NAME_MAX + 1, "%s", json_is_string(n) ? json_string_value(n) : "");
        return true;
    }
    return false;
}

/* POST /api/v1/tokens: the secret is in the answer only; the store keeps its hash. */
static void create_token(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req)
{
    static const char *const fields[] = {"role", "tenant", "name", NULL};
    json_t *body = body_object(ex, req, fields);
    if (body == NULL)
        return;
    const char *role = json_string_value(json_object_get(body, "role"));
    bool admin = role != NULL && strcmp(role, "admin") == 0;
    char tenant[TENANT_NAME_MAX + 1], name[TOKEN_NAME_MAX + 1];
    bool ok = admin || (role != NULL && strcmp(role, "tenant") == 0);
    if (!ok)
        api_respond_error(ex, 400, "role: expected \"admin\" or \"tenant\"");
    ok = ok && token_fields(m, ex, body, admin, tenant, name);
    json_decref(body);
    char id[AUTH_ID_LEN], secret[AUTH_TOKEN_LEN];
    uint8_t hash[STORE_TOKEN_HASH_LEN];
    if (ok && (auth_token_id_new(id) != 0 || auth_token_new(secret) != 0 ||
               auth_hash(secret, strlen(secret), hash) != 0)) {
        api_respond_error(ex, 500, "cannot generate a token");
        ok = false;
    }
    if (!ok)
        return;
    const char *role_name = admin ? "admin" : "tenant";
    char what[160];
    if (admin)
        snprintf(what, sizeof what, "admin token");
    else
        snprintf(what, sizeof what, "token for tenant '%s'", tenant);
    json_t *answer = json_pack("{s:s,s:s,s:s,s:o,s:s}", "id", id, "token", secret, "role",
                               role_name, "tenant", admin ? json_null() : json_string(tenant),
                               "name", name);
    access_op_t *op = op_new(m, ex, 201, answer, what, 400, false);
    command_sink_t sink = command_sink_quorum(m->quorum);
    int rv = op ? command_put_token(&sink, id, hash, sizeof hash, role_name, tenant, name,
                                    lc_wall_ms(), op_applied_cb, op)
                : 0;
    op_proposed(ex, op, rv, what);
}

/* The role of token id ("" when there is none). */
static void token_role(master_t *m, const char *id, char *role, size_t len)
{
    json_t *tokens = store_tokens_json(m->store), *t;
    size_t i;
    role[0] = '\0';
    json_array_foreach(tokens, i, t)
        if (strcmp(json_string_value(json_object_get(t, "id")), id) == 0)
            snprintf(role, len, "%s", json_string_value(json_object_get(t, "role")));
    json_decref(tokens);
}

static void revoke_token(master_t *m, lc_http_exchange_t *ex, const char *id)
{
    char role[16], what[128];
    snprintf(what, sizeof what, "token '%.64s'", id);
    token_role(m, id, role, sizeof role);
    if (role[0] == '\0') {
        api_respond_error(ex, 404, "no such token '%.64s'", id);
        return;
    }
    /* Without an admin token nobody could manage the cluster any more. */
    if (strcmp(role, "admin") == 0 && store_admin_tokens(m->store) <= 1) {
        api_respond_error(ex, 409, "%s is the last admin token; create another first", what);
        return;
    }
    access_op_t *op = op_new(m, ex, 200, json_pack("{s:s,s:b}", "id", id, "revoked", 1), what,
                             404, false);
    command_sink_t sink = command_sink_quorum(m->quorum);
    int rv = op ? command_revoke_token(&sink, id, op_applied_cb, op) : 0;
    op_proposed(ex, op, rv, what);
}

static void tokens_route(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req)
{
    static const char prefix[] = "/api/v1/tokens/";
    const char *method = req->method, *id = req->path + sizeof prefix - 1;
    if (strcmp(req->path, "/api/v1/tokens") == 0) {
        if (strcmp(method, "GET") == 0)
            api_respond_json(ex, 200, json_pack("{s:o}", "tokens", store_tokens_json(m->store)));
        else if (strcmp(method, "POST") == 0)
            create_token(m, ex, req);
        else
            api_respond_error(ex, 405, "%s not allowed on %s", method, req->path);
    } else if (strncmp(req->path, prefix, sizeof prefix - 1) == 0 && id[0] != '\0' &&
               strchr(id, '/') == NULL && strlen(id) < 64) {
        if (strcmp(method, "DELETE") == 0)
            revoke_token(m, ex, id);
        else
            api_respond_error(ex, 405, "%s not allowed on %s", method, req->path);
    } else {
        api_respond_error(ex, 404, "no such endpoint: %s", req->path);
    }
}

void api_access_route(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req)
{
    if (is_under(req->path, "/api/v1/tenants"))
        tenants_route(m, ex, req);
    else if (is_under(req->path, "/api/v1/tokens"))
        tokens_route(m, ex, req);
    else
        api_respond_error(ex, 404, "no such endpoint: %s", req->path);
}
