/* store_access.c — tenants (weights) and API tokens (SHA-256 hashes only). */
#include <string.h>

#include "lc_err.h"
#include "store_internal.h"

static int tenant_exists(store_t *s, const char *name)
{
    uint32_t weight;
    return store_tenant_weight(s, name, &weight) == 0;
}

static int apply_create_tenant(store_t *s, const Lc__CreateTenant *c)
{
    if (tenant_exists(s, c->name))
        return LC_ESTATE;
    sqlite3_stmt *st = store_prepare(s, "INSERT INTO tenants(name, weight, created) VALUES (?, ?, ?)");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_text(st, 1, c->name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, c->weight);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)c->created_ms);
    return store_step_done(s, st);
}

static int apply_set_weight(store_t *s, const Lc__SetTenantWeight *c)
{
    if (!tenant_exists(s, c->name))
        return LC_ENOTFOUND;
    sqlite3_stmt *st = store_prepare(s, "UPDATE tenants SET weight = ? WHERE name = ?");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_int64(st, 1, c->weight);
    sqlite3_bind_text(st, 2, c->name, -1, SQLITE_STATIC);
    return store_step_done(s, st);
}

static int apply_put_token(store_t *s, const Lc__PutToken *c)
{
    if (c->hash.len != STORE_TOKEN_HASH_LEN)
        return LC_EINVAL;
    if (c->tenant[0] != '\0' && !tenant_exists(s, c->tenant))
        return LC_ENOTFOUND;
    sqlite3_stmt *st = store_prepare(
        s, "INSERT INTO tokens(id, hash, role, tenant, name, created) VALUES (?, ?, ?, ?, ?, ?)");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_text(st, 1, c->id, -1, SQLITE_STATIC);
    sqlite3_bind_blob(st, 2, c->hash.data, (int)c->hash.len, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, c->role, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, c->tenant, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, c->name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 6, (sqlite3_int64)c->created_ms);
    return store_step_done(s, st) == 0 ? 0 : LC_ESTATE; /* a duplicate id or hash */
}

static int apply_revoke_token(store_t *s, const Lc__RevokeToken *c)
{
    sqlite3_stmt *st = store_prepare(s, "DELETE FROM tokens WHERE id = ?");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_text(st, 1, c->id, -1, SQLITE_STATIC);
    int rv = store_step_done(s, st);
    return rv == 0 && sqlite3_changes(s->db) == 0 ? LC_ENOTFOUND : rv;
}

int store_apply_access(store_t *s, const Lc__Command *cmd)
{
    switch (cmd->cmd_case) {
    case LC__COMMAND__CMD_CREATE_TENANT: return apply_create_tenant(s, cmd->create_tenant);
    case LC__COMMAND__CMD_SET_TENANT_WEIGHT: return apply_set_weight(s, cmd->set_tenant_weight);
    case LC__COMMAND__CMD_PUT_TOKEN: return apply_put_token(s, cmd->put_token);
    case LC__COMMAND__CMD_REVOKE_TOKEN: return apply_revoke_token(s, cmd->revoke_token);
    default: return LC_EINVAL;
    }
}

int store_tenant_weight(store_t *s, const char *tenant, uint32_t *weight)
{
    sqlite3_stmt *st = store_prepare(s, "SELECT weight FROM tenants WHERE name = ?");
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_text(st, 1, tenant, -1, SQLITE_STATIC);
    int rv = LC_ENOTFOUND;
    if (sqlite3_step(st) == SQLITE_ROW) {
        *weight = (uint32_t)sqlite3_column_int64(st, 0);
        rv = 0;
    }
    sqlite3_finalize(st);
    return rv;
}

json_t *store_tenants_json(store_t *s)
{
    json_t *list = json_array();
    sqlite3_stmt *st = store_prepare(s, "SELECT name, weight, created FROM tenants ORDER BY name");
    while (st != NULL && sqlite3_step(st) == SQLITE_ROW)
        json_array_append_new(list, json_pack("{s:s,s:I,s:o}", "name",
                                              (const char *)sqlite3_column_text(st, 0), "weight",
                                              (json_int_t)sqlite3_column_int64(st, 1), "created_at",
                                              store_time_json(sqlite3_column_int64(st, 2))));
    sqlite3_finalize(st);
    return list;
}

int store_token_by_hash(store_t *s, const uint8_t hash[STORE_TOKEN_HASH_LEN], store_token_t *out,
                        uint8_t stored_hash[STORE_TOKEN_HASH_LEN])
{
    /* Every API request asks, on the loop: kept prepared rather than parsed each time. */
    static const char sql[] = "SELECT id, role, tenant, hash FROM tokens WHERE hash = ?";
    sqlite3_stmt *st = store_cached(s, sql);
    if (st == NULL)
        return LC_EIO;
    sqlite3_bind_blob(st, 1, hash, STORE_TOKEN_HASH_LEN, SQLITE_STATIC);
    int rv = LC_ENOTFOUND;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_bytes(st, 3) == STORE_TOKEN_HASH_LEN) {
        store_copy_text(out->id, sizeof out->id, st, 0);
        store_copy_text(out->role, sizeof out->role, st, 1);
        store_copy_text(out->tenant, sizeof out->tenant, st, 2);
        memcpy(stored_hash, sqlite3_column_blob(st, 3), STORE_TOKEN_HASH_LEN);
        rv = 0;
    }
    store_cached_done(st);
    return rv;
}

int store_admin_tokens(store_t *s)
{
    sqlite3_stmt *st = store_prepare(s, "SELECT COUNT(*) FROM tokens WHERE role = 'admin'");
    int n = (st != NULL && sqlite3_step(st) == SQLITE_ROW) ? (int)sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return n;
}

json_t *store_tokens_json(store_t *s)
{
    json_t *list = json_array();
    sqlite3_stmt *st =
        store_prepare(s, "SELECT id, role, tenant, name, created FROM tokens ORDER BY created, id");
    while (st != NULL && sqlite3_step(st) == SQLITE_ROW) {
        const char *tenant = (const char *)sqlite3_column_text(st, 2);
        json_array_append_new(
            list, json_pack("{s:s,s:s,s:o,s:s,s:o}", "id", (const char *)sqlite3_column_text(st, 0),
                            "role", (const char *)sqlite3_column_text(st, 1), "tenant",
                            tenant && tenant[0] ? json_string(tenant) : json_null(), "name",
                            (const char *)sqlite3_column_text(st, 3), "created_at",
                            store_time_json(sqlite3_column_int64(st, 4))));
    }
    sqlite3_finalize(st);
    return list;
}
