/* api_scenario.h — the scenario a request carries (JSON, or YAML converted here at the API's edge, off the loop), read and checked as a run would be; for POST /api/v1/runs and /api/v1/scenarios/validate. */
#ifndef MASTER_API_SCENARIO_H
#define MASTER_API_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>

#include "auth.h"
#include "lc_http_server.h"
#include "lc_scenario.h"
#include "master.h"

typedef struct api_scenario_s {
    const char *json; /* the JSON a run stores: the body as sent, or text */
    size_t len;
    char *text;       /* malloc'd when the body was YAML or was given the token's tenant */
    lc_scenario_t sc; /* json, parsed */
    bool parsed;      /* sc was parsed already (YAML: on the read_pool thread) */
} api_scenario_t;

/* Whether a Content-Type value names YAML: application/yaml,
 * application/x-yaml or text/yaml, any case, parameters (";charset=utf-8")
 * allowed. Anything else, or none, is read as JSON. */
bool api_scenario_is_yaml(const char *content_type);

/* Called on the loop with the scenario read; it takes *in (api_scenario_free)
 * and answers the exchange. who is valid during the call only. */
typedef void (*api_scenario_cb)(master_t *m, lc_http_exchange_t *ex, const auth_identity_t *who,
                                api_scenario_t *in);

/* Reads req's body as a scenario for who, then calls cb. A YAML body becomes
 * compact JSON with its keys in the order written (yaml_json.h); that runs
 * on a read_pool thread, as converting a large document takes libyaml a
 * tenth of a second or more, so cb is called later, from the loop. JSON is
 * read at once and cb called before this returns. A tenant token's scenario
 * without "tenant" gets the token's tenant. Then lc_scenario_parse, and the
 * tenant must exist and be the caller's to use. When the scenario is refused
 * this answers instead of cb: 400 naming the JSON path (and for YAML the line
 * and column, of a validation error too: lc_yaml_annotate), 403, or 503 (out of memory, the pool full or closing). */
void api_scenario_read(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req,
                       const auth_identity_t *who, api_scenario_cb cb);
void api_scenario_free(api_scenario_t *s);

#endif
