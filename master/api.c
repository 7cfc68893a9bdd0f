/* api.c — the JSON HTTP API on :8089: routing, validation, responses. */
#include "api.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet.h"
#include "lc_clock.h"
#include "lc_err.h"
#include "lc_log.h"
#include "lc_scenario.h"
#include "metrics.h"
#include "peers.h"
#include "quorum.h"
#include "runs.h"
#include "store.h"

#define API_MAX_BODY (1u << 20)

static void respond_json(lc_http_exchange_t *ex, int status, json_t *body)
{
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    if (text == NULL) {
        const char *oom = "{\"error\":\"out of memory\"}";
        lc_http_exchange_respond(ex, 500, "application/json", oom, strlen(oom), NULL);
        return;
    }
    lc_http_exchange_respond(ex, status, "application/json", text, strlen(text), NULL);
    free(text);
}

static void respond_error(lc_http_exchange_t *ex, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void respond_error(lc_http_exchange_t *ex, int status, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    respond_json(ex, status, json_pack("{s:s}", "error", msg));
}

/* Parses "/api/v1/runs/<id>[/<rest>]": returns 1 with id and rest ("" when
 * none), 0 when the path is not of that form. */
static int parse_run_path(const char *path, uint64_t *id, const char **rest)
{
    static const char prefix[] = "/api/v1/runs/";
    if (strncmp(path, prefix, sizeof prefix - 1) != 0)
        return 0;
    const char *p = path + sizeof prefix - 1;
    if (*p < '1' || *p > '9')
        return 0;
    char *end;
    unsigned long long v = strtoull(p, &end, 10);
    if (end - p > 18 || (*end != '\0' && *end != '/'))
        return 0;
    *id = v;
    *rest = end;
    return 1;
}

typedef struct create_ctx_s {
    lc_http_exchange_t *ex;
    uint64_t id;
} create_ctx_t;

static void created_cb(void *arg, int status, int result)
{
    create_ctx_t *ctx = arg;
    if (status != 0)
        respond_error(ctx->ex, 503, "run not created: %s", lc_strerror(status));
    else if (result != 0)
        respond_error(ctx->ex, 500, "run not created: %s", lc_strerror(result));
    else
        respond_json(ctx->ex, 201, json_pack("{s:I}", "id", (json_int_t)ctx->id));
    free(ctx);
}

static void create_run(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req)
{
    lc_scenario_t sc;
    char why[512];
    if (lc_scenario_parse(req->body, req->body_len, &sc, why, sizeof why) != 0) {
        respond_error(ex, 400, "%s", why);
        return;
    }
    if (!quorum_is_leader(m->quorum)) {
        lc_scenario_free(&sc);
        respond_error(ex, 503, "this master is not the leader");
        return;
    }
    create_ctx_t *ctx = calloc(1, sizeof *ctx);
    Lc__CreateRun cr = LC__CREATE_RUN__INIT;
    cr.id = runs_next_id(m->runs);
    cr.tenant = sc.tenant;
    cr.name = sc.name;
    cr.scenario_json = (char *)req->body;
    cr.users = sc.arrival_rate > 0 ? sc.max_users : sc.users;
    cr.created_ms = lc_wall_ms();
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_CREATE_RUN;
    cmd.create_run = &cr;
    int rv = ctx ? quorum_propose(m->quorum, &cmd, created_cb, ctx) : LC_ENOMEM;
    lc_scenario_free(&sc);
    if (rv != 0) {
        free(ctx);
        respond_error(ex, 503, "run not created: %s", lc_strerror(rv));
        return;
    }
    ctx->ex = ex;
    ctx->id = cr.id;
}

static void stop_run(master_t *m, lc_http_exchange_t *ex, uint64_t id)
{
    char why[256] = "";
    int rv = runs_request_stop(m->runs, id, why, sizeof why);
    switch (rv) {
    case 0:
        respond_json(ex, 202, json_pack("{s:I,s:s}", "id", (json_int_t)id, "state", "stopping"));
        break;
    case LC_ENOTFOUND:
        respond_error(ex, 404, "run %llu not found", (unsigned long long)id);
        break;
    case LC_ESTATE:
        respond_error(ex, 409, "%s", why);
        break;
    default:
        respond_error(ex, 503, "cannot stop run %llu: %s", (unsigned long long)id, lc_strerror(rv));
        break;
    }
}

static void run_routes(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req)
{
    bool get = strcmp(req->method, "GET") == 0, post = strcmp(req->method, "POST") == 0;
    uint64_t id;
    const char *rest;
    if (strcmp(req->path, "/api/v1/runs") == 0) {
        if (post)
            create_run(m, ex, req);
        else if (get)
            respond_json(ex, 200, json_pack("{s:o}", "runs", store_runs_json(m->store, lc_wall_ms())));
        else
            respond_error(ex, 405, "%s not allowed on %s", req->method, req->path);
        return;
    }
    if (!parse_run_path(req->path, &id, &rest)) {
        respond_error(ex, 404, "no such endpoint: %s", req->path);
        return;
    }
    if (rest[0] == '\0' && get) {
        json_t *run = store_run_json(m->store, id, lc_wall_ms());
        if (run == NULL)
            respond_error(ex, 404, "run %llu not found", (unsigned long long)id);
        else
            respond_json(ex, 200, run);
    } else if (strcmp(rest, "/stop") == 0 && post) {
        stop_run(m, ex, id);
    } else if (rest[0] == '\0' || strcmp(rest, "/stop") == 0) {
        respond_error(ex, 405, "%s not allowed on %s", req->method, req->path);
    } else {
        respond_error(ex, 404, "no such endpoint: %s", req->path);
    }
}

/* Whether the query string holds name=value as one of its parameters. */
static bool query_has(const char *query, const char *param)
{
    size_t len = strlen(param);
    for (const char *p = query; p != NULL && *p != '\0'; p = strchr(p, '&') ? strchr(p, '&') + 1 : NULL)
        if (strncmp(p, param, len) == 0 && (p[len] == '\0' || p[len] == '&'))
            return true;
    return false;
}

/* On a follower, writes and ?consistent=1 reads go to the leader: 307 to
 * its API, or 503 when no leader is known. Returns true when it answered. */
static bool send_to_leader(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req)
{
    bool read = strcmp(req->method, "GET") == 0 || strcmp(req->method, "HEAD") == 0;
    if (quorum_is_leader(m->quorum) || strncmp(req->path, "/api/", 5) != 0 ||
        (read && !query_has(req->query, "consistent=1")))
        return false;
    uint64_t leader = quorum_leader_id(m->quorum);
    const lc_node_t *node = peers_node(m->peers, leader);
    if (leader == 0 || leader == m->cfg.id || node == NULL) {
        size_t reachable, total;
        peers_reachable(m->peers, &reachable, &total);
        respond_error(ex, 503, "no leader: %zu of %zu masters reachable", reachable, total);
        return true;
    }
    char api[LC_HOST_MAX + 8], location[2048];
    lc_hostport_format(&node->api, api, sizeof api);
    snprintf(location, sizeof location, "Location: http://%s%s%s%s\r\n", api, req->path,
             req->query[0] ? "?" : "", req->query);
    json_t *why = json_pack("{s:s,s:I}", "error", "not the leader", "leader", (json_int_t)leader);
    char *body = json_dumps(why, JSON_COMPACT);
    json_decref(why);
    lc_http_exchange_respond(ex, 307, "application/json", body ? body : "", body ? strlen(body) : 0,
                             location);
    free(body);
    return true;
}

/* A one-node quorum's member list: this node. */
static json_t *self_member_json(master_t *m)
{
    char api[LC_HOST_MAX + 8];
    lc_hostport_t hp = {.port = m->cfg.api_port};
    snprintf(hp.host, sizeof hp.host, "%s", m->cfg.api_host);
    lc_hostport_format(&hp, api, sizeof api);
    return json_pack("[{s:I,s:s,s:s,s:s,s:b,s:i}]", "id", (json_int_t)m->cfg.id, "raft",
                     m->cfg.raft_address, "worker", m->cfg.worker_advertise, "api", api,
                     "reachable", 1, "last_contact_ms_ago", 0);
}

static json_t *cluster_json(master_t *m)
{
    uint64_t leader = quorum_leader_id(m->quorum);
    const lc_node_t *node = peers_node(m->peers, leader);
    char api[LC_HOST_MAX + 16] = "";
    if (node != NULL) {
        char hp[LC_HOST_MAX + 8];
        lc_hostport_format(&node->api, hp, sizeof hp);
        snprintf(api, sizeof api, "http://%s", hp);
    }
    return json_pack("{s:I,s:s,s:I,s:s?,s:I,s:I,s:I,s:o}", "id", (json_int_t)m->cfg.id, "role",
                     quorum_is_leader(m->quorum) ? "leader" : "follower", "leader_id",
                     (json_int_t)leader, "leader_api", api[0] ? api : NULL, "term",
                     (json_int_t)quorum_term(m->quorum), "commit_index",
                     (json_int_t)quorum_commit_index(m->quorum), "applied_index",
                     (json_int_t)quorum_applied_index(m->quorum), "members",
                     m->cfg.clustered ? peers_json(m->peers) : self_member_json(m));
}

static void handle(void *arg, lc_http_exchange_t *ex, const lc_http_request_t *req)
{
    master_t *m = arg;
    bool get = strcmp(req->method, "GET") == 0;
    if (send_to_leader(m, ex, req))
        return;
    if (strcmp(req->path, "/api/v1/cluster") == 0 && get) {
        respond_json(ex, 200, cluster_json(m));
    } else if (strcmp(req->path, "/healthz") == 0 && get) {
        respond_json(ex, 200, json_pack("{s:s,s:s}", "status", "ok", "role",
                                        quorum_is_leader(m->quorum) ? "leader" : "follower"));
    } else if (strcmp(req->path, "/metrics") == 0 && get) {
        char *text = metrics_render(m);
        lc_http_exchange_respond(ex, 200, "text/plain; version=0.0.4", text ? text : "",
                                 text ? strlen(text) : 0, NULL);
        free(text);
    } else if (strcmp(req->path, "/api/v1/workers") == 0) {
        if (get)
            respond_json(ex, 200, json_pack("{s:o}", "workers", fleet_workers_json(m->fleet)));
        else
            respond_error(ex, 405, "%s not allowed on %s", req->method, req->path);
    } else if (strncmp(req->path, "/api/v1/runs", 12) == 0) {
        run_routes(m, ex, req);
    } else {
        respond_error(ex, 404, "no such endpoint: %s", req->path);
    }
}

int api_init(master_t *m, char *errmsg, size_t errlen)
{
    return lc_http_server_init(&m->api, m->loop, m->cfg.api_host, m->cfg.api_port, API_MAX_BODY,
                               handle, m, errmsg, errlen);
}
