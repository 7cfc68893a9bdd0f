/* api.c — the JSON HTTP API on :8089: routing, validation, responses. */
#include "api.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dashboard.h"
#include "fleet.h"
#include "lc_clock.h"
#include "lc_err.h"
#include "lc_utf8.h"
#include "api_internal.h"
#include "metrics.h"
#include "members.h"
#include "peers.h"
#include "quorum.h"

#define API_MAX_BODY (1u << 20)
/* The longest URL a follower redirects to: clients keep a Location of about
 * 2 KiB (loadctl's is 2048 bytes); a cut one would send the request elsewhere. */
#define REDIRECT_URL_MAX 2000

void api_respond_json(lc_http_exchange_t *ex, int status, json_t *body)
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

json_t *api_error_vjson(const char *fmt, va_list ap)
{
    char msg[512], clean[512];
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    /* Paths and names in messages are the caller's bytes, and vsnprintf may
     * cut one in the middle of a sequence: jansson takes only valid UTF-8. */
    size_t len = n < 0 ? 0 : (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1;
    lc_utf8_clean(clean, sizeof clean, msg, len);
    return json_pack("{s:s}", "error", clean);
}

void api_respond_error(lc_http_exchange_t *ex, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    json_t *body = api_error_vjson(fmt, ap);
    va_end(ap);
    api_respond_json(ex, status, body);
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

bool api_query_value(const char *query, const char *name, char *out, size_t len)
{
    size_t n = strlen(name);
    for (const char *p = query; p != NULL && *p != '\0'; p = strchr(p, '&') ? strchr(p, '&') + 1 : NULL) {
        if (strncmp(p, name, n) != 0 || p[n] != '=')
            continue;
        size_t vlen = strcspn(p + n + 1, "&");
        if (vlen >= len)
            return false;
        memcpy(out, p + n + 1, vlen);
        out[vlen] = '\0';
        return true;
    }
    return false;
}

/* On a follower, writes and ?consistent=1 reads go to the leader: 307 to
 * its API, or 503 when no leader is known. Returns true when it answered. */
static bool send_to_leader(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req)
{
    bool read = strcmp(req->method, "GET") == 0 || strcmp(req->method, "HEAD") == 0 ||
                api_validate_is_path(req->path);
    if (quorum_is_leader(m->quorum) || strncmp(req->path, "/api/", 5) != 0 ||
        (read && !query_has(req->query, "consistent=1")))
        return false;
    uint64_t leader = quorum_leader_id(m->quorum);
    lc_node_t node;
    if (leader == 0 || leader == m->cfg.id || !members_find(m, leader, &node) ||
        node.api.port == 0) {
        size_t reachable, total;
        peers_reachable(m->peers, &reachable, &total);
        api_respond_error(ex, 503, "no leader: %zu of %zu masters reachable", reachable, total);
        return true;
    }
    char api[LC_HOST_MAX + 8], location[REDIRECT_URL_MAX + 32];
    lc_hostport_format(&node.api, api, sizeof api);
    size_t url_len = strlen("http://") + strlen(api) + strlen(req->path) +
                     (req->query[0] ? 1 + strlen(req->query) : 0);
    if (url_len > REDIRECT_URL_MAX) {
        api_respond_error(ex, 414, "the URL is too long to redirect to the leader (%zu bytes, "
                          "at most %d); send the request to the leader at http://%s", url_len,
                          REDIRECT_URL_MAX, api);
        return true;
    }
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

/* Ready to serve: a leader is known and this node has applied every entry it
 * knows committed (a leader: its barrier passed). 503 says what is missing. */
static void respond_readyz(master_t *m, lc_http_exchange_t *ex)
{
    uint64_t leader = quorum_leader_id(m->quorum);
    uint64_t applied = quorum_applied_index(m->quorum), commit = quorum_commit_index(m->quorum);
    char why[96] = "";
    if (leader == 0)
        snprintf(why, sizeof why, "no leader known");
    else if (leader == m->cfg.id && !quorum_is_leader(m->quorum))
        snprintf(why, sizeof why, "elected; applying the log before acting as leader");
    else if (applied < commit)
        snprintf(why, sizeof why, "applying the log: %llu of %llu entries",
                 (unsigned long long)applied, (unsigned long long)commit);
    json_t *body = json_pack("{s:b,s:I,s:I,s:I}", "ready", why[0] == '\0', "leader",
                             (json_int_t)leader, "applied_index", (json_int_t)applied,
                             "commit_index", (json_int_t)commit);
    if (why[0] != '\0')
        json_object_set_new(body, "reason", json_string(why));
    api_respond_json(ex, why[0] == '\0' ? 200 : 503, body);
}

/* Probes: answered on a full server too (its probe slots). */
static const char *const probe_paths[] = {"/healthz", "/readyz", NULL};
#define API_PROBE_CONNS 32

/* What handle_open answers without a token; everything else needs one. */
static bool is_open(const lc_http_request_t *req)
{
    return dashboard_owns(req->path) ||
           (strcmp(req->method, "GET") == 0 &&
            (strcmp(req->path, "/healthz") == 0 || strcmp(req->path, "/readyz") == 0 ||
             strcmp(req->path, "/metrics") == 0));
}

/* /healthz, /readyz and /metrics answer without a token (probes and
 * scrapers; /metrics shows more with one), and so does the dashboard's page
 * ("/", "/ui/…"; its API calls carry tokens); returns true when it answered. */
static bool handle_open(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req)
{
    if (!is_open(req))
        return false;
    if (dashboard_serve(ex, req))
        return true;
    if (strcmp(req->path, "/healthz") == 0) {
        api_respond_json(ex, 200, json_pack("{s:s,s:s}", "status", "ok", "role",
                                        quorum_is_leader(m->quorum) ? "leader" : "follower"));
    } else if (strcmp(req->path, "/readyz") == 0) {
        respond_readyz(m, ex);
    } else {
        api_metrics_route(m, ex, req);
    }
    return true;
}

/* When the headers are complete: a request that needs a token and has no
 * valid one is answered (401, 403, 503) before a byte of its body is read. */
static bool refuse_before_body(void *arg, lc_http_exchange_t *ex, const lc_http_request_t *req)
{
    auth_identity_t who;
    return !is_open(req) && !api_access_gate(arg, ex, req, &who);
}

static void handle(void *arg, lc_http_exchange_t *ex, const lc_http_request_t *req)
{
    master_t *m = arg;
    auth_identity_t who;
    if (handle_open(m, ex, req) || !api_access_gate(m, ex, req, &who) ||
        send_to_leader(m, ex, req))
        return;
    if (strncmp(req->path, "/api/v1/cluster", 15) == 0) {
        api_cluster_route(m, ex, req);
    } else if (strncmp(req->path, "/api/v1/tenants", 15) == 0 ||
               strncmp(req->path, "/api/v1/tokens", 14) == 0) {
        api_access_route(m, ex, req);
    } else if (strcmp(req->path, "/api/v1/workers") == 0) {
        api_workers_route(m, ex, req, &who);
    } else if (strncmp(req->path, "/api/v1/runs", 12) == 0) {
        api_runs_route(m, ex, req, &who);
    } else if (strncmp(req->path, "/api/v1/scenarios", 17) == 0) {
        api_validate_route(m, ex, req, &who);
    } else {
        api_respond_error(ex, 404, "no such endpoint: %s", req->path);
    }
}

int api_init(master_t *m, char *errmsg, size_t errlen)
{
    if (m->cfg.metrics_token_file[0] != '\0') {
        int rv = auth_token_file_read("--metrics-token-file", m->cfg.metrics_token_file,
                                      m->metrics_hash, errmsg, errlen);
        if (rv == LC_ENOTFOUND)
            snprintf(errmsg, errlen, "--metrics-token-file %s: no such file",
                     m->cfg.metrics_token_file);
        if (rv != 0)
            return rv;
        m->metrics_hash_set = true;
    }
    int rv = read_pool_init(&m->reads, m->loop, m->store, m->cfg.api_read_threads, errmsg,
                            errlen);
    if (rv == 0 && api_metrics_cache_new(m) != 0)
        rv = lc_errf(errmsg, errlen, LC_ENOMEM, "API: out of memory");
    if (rv != 0)
        return rv;
    rv = lc_http_server_init(&m->api, m->loop, m->cfg.api_host, m->cfg.api_port,
                             API_MAX_BODY, handle, m, errmsg, errlen);
    if (rv != 0)
        return rv;
    lc_http_limits_t limits = {.max_conns = m->cfg.api_max_conns,
                               .probe_conns = API_PROBE_CONNS,
                               .probe_paths = probe_paths};
    lc_http_server_set_limits(m->api, &limits);
    lc_http_server_on_headers(m->api, refuse_before_body);
    return 0;
}

void api_close(master_t *m)
{
    lc_http_server_close(m->api);
    read_pool_close(m->reads);
    m->reads = NULL;
    api_metrics_cache_free(m);
}
