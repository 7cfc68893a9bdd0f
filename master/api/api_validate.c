/* api_validate.c — POST /api/v1/scenarios/validate: a scenario read and checked exactly as POST /api/v1/runs reads it, answered with its JSON and summary; nothing is created. */
#include <string.h>

#include <jansson.h>

#include "api_internal.h"
#include "api_scenario.h"
#include "fleet.h"
#include "lc_scenario_summary.h"
#include "quorum.h"

#define VALIDATE_PATH "/api/v1/scenarios/validate"

/* What the fleet can grant now: the connected workers' effective capacity (what saturation
 * leaves of it), as the scheduler splits it. Only the leader has the workers; the tenant's
 * share depends on the runs active when one starts, so it is not counted here. */
static lc_fleet_grant_t fleet_grant(master_t *m)
{
    lc_fleet_grant_t g = {.known = m->fleet != NULL && quorum_is_leader(m->quorum)};
    size_t n = 0;
    fleet_worker_t **ws = g.known ? fleet_connected(m->fleet, &n) : NULL;
    for (size_t i = 0; i < n; i++)
        g.users += ws[i]->sat.effective_capacity;
    g.workers = (uint32_t)n;
    return g;
}

/* With the scenario read: 200 {"valid": true, "scenario": <the JSON a run
 * would store>, "summary": lc_scenario_summary with this master's "capacity"}. Refusals were answered as
 * creating the run would be. No Raft command, so any master answers (api.c
 * treats it as a read). */
static void validated(master_t *m, lc_http_exchange_t *ex, const auth_identity_t *who,
                      api_scenario_t *in)
{
    json_t *doc = json_loadb(in->json, in->len, JSON_DECODE_ANY, NULL);
    json_t *summary = lc_scenario_summary(&in->sc);
    lc_fleet_grant_t grant = fleet_grant(m);
    if (summary != NULL &&
        json_object_set_new(summary, "capacity", lc_scenario_capacity_json(&in->sc, &grant)) != 0) {
        json_decref(summary);
        summary = NULL;
    }
    api_scenario_free(in);
    if (doc == NULL || summary == NULL) {
        json_decref(doc);
        json_decref(summary);
        api_respond_error(ex, 503, "out of memory");
        return;
    }
    api_respond_json(ex, 200, json_pack("{s:b,s:o,s:o}", "valid", 1, "scenario", doc, "summary",
                                        summary));
}

bool api_validate_is_path(const char *path)
{
    return strcmp(path, VALIDATE_PATH) == 0;
}

void api_validate_route(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req,
                        const auth_identity_t *who)
{
    if (!api_validate_is_path(req->path))
        api_respond_error(ex, 404, "no such endpoint: %s", req->path);
    else if (strcmp(req->method, "POST") != 0)
        api_respond_error(ex, 405, "%s not allowed on %s", req->method, req->path);
    else
        api_scenario_read(m, ex, req, who, validated);
}
