/* api_internal.h — what the API's route files share; not for other modules. */
#ifndef MASTER_API_INTERNAL_H
#define MASTER_API_INTERNAL_H

#include <jansson.h>

#include "lc_http_server.h"
#include "master.h"

/* Answers with body as compact JSON (takes the reference). */
void api_respond_json(lc_http_exchange_t *ex, int status, json_t *body);
/* Answers {"error": "<formatted>"}. */
void api_respond_error(lc_http_exchange_t *ex, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* /api/v1/runs… */
void api_runs_route(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req);
/* /api/v1/cluster… */
void api_cluster_route(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req);

#endif
