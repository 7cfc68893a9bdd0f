/* api_validate.c — POST /api/v1/scenarios/validate: a scenario read and checked exactly as POST /api/v1/runs reads it, answered with its JSON and summary; nothing is created. */
#include <string.h>

#include <jansson.h>

#include "api_internal.h"
#include "api_scenario.h"
#include "lc_scenario_summary.h"

#define VALIDATE_PATH "/api/v1/scenarios/validate"

/* With the scenario read: 200 {"valid": true, "scenario": <the JSON a run
 * would store>, "summary": lc_scenario_summary}. Refusals were answered as
 * creating the run would be. No Raft command, so any master answers (api.c
 * treats it as a read). */
static void validated(master_t *m, lc_http_exchange_t *ex, const auth_identity_t *who,
                      api_scenario_t *in)
{
    json_t *doc = json_loadb(in->json, in->len, JSON_DECODE_ANY, NULL);
    json_t *summary = lc_scenario_summary(&in->sc);
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
