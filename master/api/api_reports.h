/* api_reports.h — GET /api/v1/runs/{id}/history and the run's reports (JSON, CSV, HTML, JUnit XML). */
#ifndef MASTER_API_REPORTS_H
#define MASTER_API_REPORTS_H

#include <stdbool.h>
#include <stdint.h>

#include "lc_http_server.h"
#include "master.h"

/* Whether rest, the path after "/api/v1/runs/<id>" ("/history",
 * "/report.csv", …), is answered by api_reports_route. */
bool api_reports_handles(const char *rest);

/* Answers a GET of one of those (405 otherwise). The caller has already
 * checked that the caller may see run id. Query parameters: since=T (unix
 * seconds, /history) and endpoint=NAME (/history and /history.csv). */
void api_reports_route(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req,
                       uint64_t id, const char *rest);

#endif
