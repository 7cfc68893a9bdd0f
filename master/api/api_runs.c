/* api_runs.c — /api/v1/runs: create, list, show and stop runs. */
#include <stdlib.h>
#include <string.h>

#include "api_internal.h"
#include "api_reports.h"
#include "api_scenario.h"
#include "auth.h"
#include "commands.h"
#include "lc_clock.h"
#include "lc_err.h"
#include "lc_run_state.h"
#include "lc_scenario.h"
#include "quorum.h"
#include "runs.h"
#include "store.h"
#include "store_retention.h"

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
        api_respond_error(ctx->ex, 503, "run not created: %s", lc_strerror(status));
    else if (result != 0)
        api_respond_error(ctx->ex, 500, "run not created: %s", lc_strerror(result));
    else
        api_respond_json(ctx->ex, 201, json_pack("{s:I}", "id", (json_int_t)ctx->id));
    free(ctx);
}

/* The tenant's quotas (0: none); answers 429 naming the one a new run would
 * exceed. Checked by the leader against its applied state. */
static bool within_quotas(master_t *m, lc_http_exchange_t *ex, const lc_scenario_t *sc,
                          size_t scenario_bytes)
{
    const master_config_t *c = &m->cfg;
    uint64_t active = 0, kept = 0;
    if (c->quota_scenario_bytes && scenario_bytes > c->quota_scenario_bytes) {
        api_respond_error(ex, 429, "quota: tenant '%s' may submit scenarios of at most %u bytes "
                          "(this one has %zu)", sc->tenant, c->quota_scenario_bytes,
                          scenario_bytes);
        return false;
    }
    if ((c->quota_active_runs || c->quota_kept_runs) &&
        store_tenant_run_counts(m->store, sc->tenant, &active, &kept) != 0) {
        api_respond_error(ex, 500, "quota: cannot count tenant '%s''s runs", sc->tenant);
        return false;
    }
    if (c->quota_active_runs && active >= c->quota_active_runs) {
        api_respond_error(ex, 429, "quota: tenant '%s' has %llu active runs, its quota is %u",
                          sc->tenant, (unsigned long long)active, c->quota_active_runs);
        return false;
    }
    if (c->quota_kept_runs && kept >= c->quota_kept_runs) {
        api_respond_error(ex, 429, "quota: tenant '%s' keeps the history of %llu runs, its quota "
                          "is %u (older histories are deleted after --history-max)",
                          sc->tenant, (unsigned long long)kept, c->quota_kept_runs);
        return false;
    }
    return true;
}

/* With the scenario read: proposes CreateRun. The scenario's JSON (YAML
 * converted) is what the run stores and shows. */
static void create_checked(master_t *m, lc_http_exchange_t *ex, const auth_identity_t *who,
                           api_scenario_t *in)
{
    bool leader = quorum_is_leader(m->quorum);
    if (!leader)
        api_respond_error(ex, 503, "this master is not the leader");
    if (!leader || !within_quotas(m, ex, &in->sc, in->len)) {
        api_scenario_free(in);
        return;
    }
    create_ctx_t *ctx = calloc(1, sizeof *ctx);
    Lc__CreateRun cr = LC__CREATE_RUN__INIT;
    cr.id = runs_next_id(m->runs);
    cr.tenant = in->sc.tenant;
    cr.name = in->sc.name;
    cr.scenario_json = (char *)in->json;
    cr.users = in->sc.arrival_rate > 0 ? in->sc.max_users : in->sc.users;
    cr.created_ms = lc_wall_ms();
    command_sink_t sink = command_sink_quorum(m->quorum);
    int rv = ctx ? command_create_run(&sink, &cr, created_cb, ctx) : LC_ENOMEM;
    api_scenario_free(in);
    if (rv != 0) {
        free(ctx);
        api_respond_error(ex, 503, "run not created: %s", lc_strerror(rv));
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
        api_respond_json(ex, 202, json_pack("{s:I,s:s}", "id", (json_int_t)id, "state",
                                            lc_run_state_name(LC_RUN_STOPPING)));
        break;
    case LC_ENOTFOUND:
        api_respond_error(ex, 404, "run %llu not found", (unsigned long long)id);
        break;
    case LC_ESTATE:
        api_respond_error(ex, 409, "%s", why);
        break;
    default:
        api_respond_error(ex, 503, "cannot stop run %llu: %s", (unsigned long long)id, lc_strerror(rv));
        break;
    }
}

/* The run list, rendered off the loop. */
typedef struct list_job_s {
    api_read_t read;
    char tenant[128], state[128]; /* "" for no filter */
    uint64_t now_ms;
} list_job_t;

static void list_work(read_job_t *job, store_t *reader)
{
    list_job_t *j = (list_job_t *)job;
    json_t *runs = store_runs_json(reader, j->tenant[0] ? j->tenant : NULL,
                                   j->state[0] ? j->state : NULL, j->now_ms);
    api_read_json(&j->read, 200, runs != NULL ? json_pack("{s:o}", "runs", runs) : NULL);
}

/* The run list: a tenant token's own tenant, an admin's all (or ?tenant=);
 * ?state= keeps the runs in one state. */
static void list_runs(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req,
                      const auth_identity_t *who)
{
    char tenant_filter[128] = "", state_filter[128] = "";
    if (who->role == AUTH_ROLE_TENANT)
        snprintf(tenant_filter, sizeof tenant_filter, "%s", who->tenant);
    else if (!api_query_value(req->query, "tenant", tenant_filter, sizeof tenant_filter))
        tenant_filter[0] = '\0';
    bool by_state = api_query_value(req->query, "state", state_filter, sizeof state_filter);
    lc_run_state_t known;
    if (by_state && lc_run_state_parse(state_filter, &known) != 0) {
        api_respond_error(ex, 400, "state: expected one of pending, running, stopping, finished, "
                          "failed, aborted");
        return;
    }
    list_job_t *j = calloc(1, sizeof *j);
    if (j == NULL) {
        api_respond_error(ex, 503, "out of memory");
        return;
    }
    snprintf(j->tenant, sizeof j->tenant, "%s", tenant_filter);
    snprintf(j->state, sizeof j->state, "%s", by_state ? state_filter : "");
    j->now_ms = lc_wall_ms();
    j->read.job.work = list_work;
    api_read_submit(m, ex, &j->read);
}

/* One run, rendered off the loop. */
typedef struct run_job_s {
    api_read_t read;
    uint64_t id, now_ms;
} run_job_t;

static void run_work(read_job_t *job, store_t *reader)
{
    run_job_t *j = (run_job_t *)job;
    json_t *run = store_run_json(reader, j->id, j->now_ms);
    if (run == NULL)
        api_read_error(&j->read, 404, "run %llu not found", (unsigned long long)j->id);
    else
        api_read_json(&j->read, 200, run);
}

static void get_run(master_t *m, lc_http_exchange_t *ex, uint64_t id)
{
    run_job_t *j = calloc(1, sizeof *j);
    if (j == NULL) {
        api_respond_error(ex, 503, "out of memory");
        return;
    }
    j->id = id;
    j->now_ms = lc_wall_ms();
    j->read.job.work = run_work;
    api_read_submit(m, ex, &j->read);
}

/* Whether the caller may see run id: another tenant's run answers exactly
 * like a missing one, so its existence is not confirmed. */
static bool run_visible(master_t *m, const auth_identity_t *who, uint64_t id)
{
    if (who->role == AUTH_ROLE_ADMIN)
        return true;
    char tenant[sizeof who->tenant];
    return store_run_tenant(m->store, id, tenant, sizeof tenant) == 0 &&
           strcmp(tenant, who->tenant) == 0;
}

void api_runs_route(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req,
                    const auth_identity_t *who)
{
    bool get = strcmp(req->method, "GET") == 0, post = strcmp(req->method, "POST") == 0;
    uint64_t id;
    const char *rest;
    if (strcmp(req->path, "/api/v1/runs") == 0) {
        if (post)
            api_scenario_read(m, ex, req, who, create_checked);
        else if (get)
            list_runs(m, ex, req, who);
        else
            api_respond_error(ex, 405, "%s not allowed on %s", req->method, req->path);
        return;
    }
    if (!parse_run_path(req->path, &id, &rest)) {
        api_respond_error(ex, 404, "no such endpoint: %s", req->path);
        return;
    }
    if (!run_visible(m, who, id) &&
        (rest[0] == '\0' || strcmp(rest, "/stop") == 0 || api_reports_handles(rest))) {
        api_respond_error(ex, 404, "run %llu not found", (unsigned long long)id);
        return;
    }
    if (rest[0] == '\0' && get) {
        get_run(m, ex, id);
    } else if (strcmp(rest, "/stop") == 0 && post) {
        stop_run(m, ex, id);
    } else if (api_reports_handles(rest)) {
        api_reports_route(m, ex, req, id, rest);
    } else if (rest[0] == '\0' || strcmp(rest, "/stop") == 0) {
        api_respond_error(ex, 405, "%s not allowed on %s", req->method, req->path);
    } else {
        api_respond_error(ex, 404, "no such endpoint: %s", req->path);
    }
}

