/* api_cluster.c — /api/v1/cluster: the quorum's state, and membership
 * changes (add a master as a voter, remove one); /api/v1/workers: the fleet. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_internal.h"
#include "archiver.h"
#include "commands.h"
#include "fleet.h"
#include "lc_err.h"
#include "members.h"
#include "peers.h"
#include "quorum.h"
#include "store.h"

/* What this master's archiver did since it started (archiver.h). */
static json_t *archives_json(const master_t *m)
{
    if (m->archiver == NULL)
        return json_null();
    archiver_stats_t a = archiver_stats(m->archiver);
    return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:f}", "exported", (json_int_t)a.exported,
                     "merged", (json_int_t)a.merged, "fetched", (json_int_t)a.fetched, "removed",
                     (json_int_t)a.removed, "refused", (json_int_t)a.refused, "rows_pruned",
                     (json_int_t)a.rows_pruned, "longest_step_ms", (double)a.max_step_us / 1e3);
}

static json_t *cluster_json(master_t *m)
{
    uint64_t leader = quorum_leader_id(m->quorum);
    lc_node_t node;
    char api[LC_HOST_MAX + 16] = "";
    if (leader != 0 && members_find(m, leader, &node) && node.api.port != 0) {
        char hp[LC_HOST_MAX + 8];
        lc_hostport_format(&node.api, hp, sizeof hp);
        snprintf(api, sizeof api, "http://%s", hp);
    }
    json_t *lag = json_pack("{s:f,s:f,s:f}", "recent_ms",
                            (double)lc_loop_lag_recent_us(&m->loop_lag) / 1e3, "last_second_ms",
                            (double)lc_loop_lag_last_second_us(&m->loop_lag) / 1e3, "max_ms",
                            (double)lc_loop_lag_max_us(&m->loop_lag) / 1e3);
    const lc_worst_t *hb = fleet_heartbeat_delay(m->fleet);
    json_t *heartbeats = json_pack("{s:I,s:I,s:I}", "recent_ms",
                                   (json_int_t)lc_worst_recent(hb), "last_second_ms",
                                   (json_int_t)lc_worst_last_second(hb), "max_ms",
                                   (json_int_t)lc_worst_max(hb));
    return json_pack("{s:I,s:s,s:I,s:s?,s:I,s:I,s:I,s:o,s:o,s:o,s:o}", "id", (json_int_t)m->cfg.id,
                     "role", quorum_is_leader(m->quorum) ? "leader" : "follower", "leader_id",
                     (json_int_t)leader, "leader_api", api[0] ? api : NULL, "term",
                     (json_int_t)quorum_term(m->quorum), "commit_index",
                     (json_int_t)quorum_commit_index(m->quorum), "applied_index",
                     (json_int_t)quorum_applied_index(m->quorum), "members", peers_json(m->peers),
                     "loop_lag", lag, "heartbeat_delay", heartbeats, "archives",
                     archives_json(m));
}

typedef struct member_change_s {
    master_t *m;
    lc_http_exchange_t *ex;
    uint64_t id;
    char raft[LC_HOST_MAX + 8];
} member_change_t;

static void added_cb(void *arg, int status, const char *errmsg)
{
    member_change_t *c = arg;
    if (status == 0)
        api_respond_json(c->ex, 201, json_pack("{s:I,s:s,s:s}", "id", (json_int_t)c->id,
                                               "raft", c->raft, "role", "voter"));
    else
        api_respond_error(c->ex, status == LC_ENOTLEADER ? 503 : 500,
                          "adding master %llu: %s", (unsigned long long)c->id, errmsg);
    free(c);
}

/* Parses one "host:port" member field; answers 400 and returns false when bad. */
static bool member_address(lc_http_exchange_t *ex, json_t *body, const char *field, char *out,
                           size_t len)
{
    const char *text = json_string_value(json_object_get(body, field));
    lc_hostport_t hp;
    char why[256];
    if (text == NULL || lc_hostport_parse(text, 0, &hp, why, sizeof why) != 0) {
        api_respond_error(ex, 400, "%s: expected \"host:port\"", field);
        return false;
    }
    snprintf(out, len, "%s", text);
    return true;
}

static void add_member(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req)
{
    json_t *body = json_loadb(req->body, req->body_len, 0, NULL);
    json_int_t id = json_integer_value(json_object_get(body, "id"));
    char raft[LC_HOST_MAX + 8], worker[LC_HOST_MAX + 8], api[LC_HOST_MAX + 8];
    bool valid = json_is_object(body) && id >= 1 && id <= 9000;
    if (!valid)
        api_respond_error(ex, 400, "id: expected an integer from 1 to 9000");
    valid = valid && member_address(ex, body, "raft", raft, sizeof raft) &&
            member_address(ex, body, "worker", worker, sizeof worker) &&
            member_address(ex, body, "api", api, sizeof api);
    json_decref(body);
    lc_node_t existing;
    if (valid && members_find(m, (uint64_t)id, &existing)) {
        api_respond_error(ex, 409, "master %lld is already in the quorum", (long long)id);
        valid = false;
    }
    if (!valid)
        return;
    member_change_t *c = calloc(1, sizeof *c);
    command_sink_t sink = command_sink_quorum(m->quorum);
    int rv = c == NULL ? LC_ENOMEM
                       : command_put_member(&sink, (uint64_t)id, raft, worker, api, NULL, NULL);
    if (rv == 0) {
        *c = (member_change_t){.m = m, .ex = ex, .id = (uint64_t)id};
        snprintf(c->raft, sizeof c->raft, "%s", raft);
        rv = quorum_add_voter(m->quorum, c->id, c->raft, added_cb, c);
    }
    if (rv == 0)
        return;
    free(c);
    api_respond_error(ex, rv == LC_ESTATE ? 409 : 503, "adding master %lld: %s", (long long)id,
                      rv == LC_ESTATE ? "id or address already in the quorum" : lc_strerror(rv));
}

static void removed_cb(void *arg, int status, const char *errmsg)
{
    member_change_t *c = arg;
    if (status == 0) {
        command_sink_t sink = command_sink_quorum(c->m->quorum);
        command_remove_member(&sink, c->id, NULL, NULL);
        api_respond_json(c->ex, 200, json_pack("{s:I,s:b}", "id", (json_int_t)c->id, "removed", 1));
    } else {
        api_respond_error(c->ex, status == LC_ENOTLEADER ? 503 : 500, "removing master %llu: %s",
                          (unsigned long long)c->id, errmsg);
    }
    free(c);
}

static void remove_member(master_t *m, lc_http_exchange_t *ex, const char *id_text)
{
    char *end;
    unsigned long long id = strtoull(id_text, &end, 10);
    member_change_t *c = calloc(1, sizeof *c);
    if (c == NULL || *id_text == '\0' || *end != '\0' || id == 0) {
        free(c);
        api_respond_error(ex, 404, "no such master: %s", id_text);
        return;
    }
    *c = (member_change_t){.m = m, .ex = ex, .id = id};
    int rv = quorum_remove(m->quorum, id, removed_cb, c);
    if (rv != 0) {
        free(c);
        api_respond_error(ex, rv == LC_ENOTFOUND ? 404 : 503, "removing master %llu: %s", id,
                          rv == LC_ENOTFOUND ? "not a member" : lc_strerror(rv));
    }
}

void api_cluster_route(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req)
{
    static const char members[] = "/api/v1/cluster/members";
    bool get = strcmp(req->method, "GET") == 0;
    if (strcmp(req->path, "/api/v1/cluster") == 0 && get)
        api_respond_json(ex, 200, cluster_json(m));
    else if (strcmp(req->path, members) == 0 && strcmp(req->method, "POST") == 0)
        add_member(m, ex, req);
    else if (strncmp(req->path, members, sizeof members - 1) == 0 &&
             req->path[sizeof members - 1] == '/' && strcmp(req->method, "DELETE") == 0)
        remove_member(m, ex, req->path + sizeof members);
    else
        api_respond_error(ex, 404, "no such endpoint: %s %s", req->method, req->path);
}

/* Whether run belongs to tenant; a run this master does not know (yet) is
 * treated as another tenant's. */
static bool run_of_tenant(store_t *s, uint64_t run, const char *tenant)
{
    char owner[128];
    return store_run_tenant(s, run, owner, sizeof owner) == 0 && strcmp(owner, tenant) == 0;
}

/* Drops from each worker's "runs" the runs of other tenants. */
static void keep_tenant_runs(store_t *s, json_t *workers, const char *tenant)
{
    size_t i;
    json_t *w;
    json_array_foreach(workers, i, w) {
        json_t *runs = json_object_get(w, "runs");
        for (size_t j = json_array_size(runs); j-- > 0;) {
            json_int_t run = json_integer_value(json_object_get(json_array_get(runs, j), "run"));
            if (!run_of_tenant(s, (uint64_t)run, tenant))
                json_array_remove(runs, j);
        }
    }
}

void api_workers_route(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req,
                       const auth_identity_t *who)
{
    if (strcmp(req->method, "GET") != 0) {
        api_respond_error(ex, 405, "%s not allowed on %s", req->method, req->path);
        return;
    }
    json_t *workers = fleet_workers_json(m->fleet);
    if (workers == NULL) {
        api_respond_error(ex, 500, "listing workers: out of memory");
        return;
    }
    if (who->role != AUTH_ROLE_ADMIN)
        keep_tenant_runs(m->store, workers, who->tenant);
    api_respond_json(ex, 200, json_pack("{s:o}", "workers", workers));
}
