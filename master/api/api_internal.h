/* api_internal.h — what the API's route files share; not for other modules. */
#ifndef MASTER_API_INTERNAL_H
#define MASTER_API_INTERNAL_H

#include <jansson.h>
#include <stdarg.h>

#include "auth.h"
#include "lc_http_server.h"
#include "master.h"
#include "metrics.h"
#include "read_pool.h"

/* Answers with body as compact JSON (takes the reference). */
void api_respond_json(lc_http_exchange_t *ex, int status, json_t *body);
/* {"error": "<formatted>"}, the message cut to valid UTF-8 (a new reference). */
json_t *api_error_vjson(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
/* Answers {"error": "<formatted>"}. */
void api_respond_error(lc_http_exchange_t *ex, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A read rendered off the loop (read_pool.h). Embedded first in a route's
 * malloc'd job, whose work fills the answer; the loop then answers ex and
 * frees the whole job. */
typedef struct api_read_s {
    read_job_t job;
    lc_http_exchange_t *ex;
    int status;
    const char *content_type; /* static */
    char *body;               /* malloc'd */
    size_t len;
    int body_fd;              /* >= 0: the body is this file's len bytes instead */
    lc_http_part_t parts[2];  /* nparts > 0: the body is these instead (set by release) */
    size_t nparts;
    char headers[192];        /* extra header lines, "" for none */
    /* NULL, or run on the loop before the answer (also when the job was
     * cancelled): keeps or frees what the job holds besides the answer. */
    void (*release)(struct api_read_s *r);
} api_read_t;

/* Queues r (job.work set): answered once the work ran, or 503 at once when
 * the pool is full. r is freed either way. */
void api_read_submit(master_t *m, lc_http_exchange_t *ex, api_read_t *r);
/* For the work: the answer's body (malloc'd, taken), as JSON (the
 * reference taken), or {"error": "<formatted>"}. */
void api_read_body(api_read_t *r, int status, const char *content_type, char *body, size_t len);
void api_read_json(api_read_t *r, int status, json_t *doc);
/* For the work: the answer's body is the first len bytes of fd (taken). */
void api_read_file(api_read_t *r, int status, const char *content_type, int fd, size_t len);
void api_read_error(api_read_t *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Copies the value of query parameter name (not percent-decoded) into out;
 * false when absent or longer than len - 1. */
bool api_query_value(const char *query, const char *name, char *out, size_t len);

/* Authenticates the request and applies the checks every master can make
 * locally (admin-only endpoints, a tenant creating runs for another tenant):
 * true with *who filled when the request may go on, false once it has been
 * answered (401, 403 or 503). Runs before a follower's redirect, so an
 * unauthenticated caller never learns the leader. */
bool api_access_gate(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req,
                     auth_identity_t *who);
/* Who may read which /metrics series: without a token the cluster's own only;
 * the admin token or --metrics-token-file's every series; a tenant token the
 * cluster's and its own tenant's. True with *scope filled, or false once it
 * has answered (401 for a token given but unknown, 500 when the lookup failed). */
bool api_metrics_scope(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req,
                       metrics_scope_t *scope);
/* GET /metrics (api_metrics.c). */
void api_metrics_route(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req);
/* The per-scope cache of tenant series; freed with api_metrics_cache_free. */
int api_metrics_cache_new(master_t *m);
void api_metrics_cache_free(master_t *m);

/* /api/v1/tenants… and /api/v1/tokens… (admin only, checked by the gate). */
void api_access_route(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req);

/* /api/v1/runs…: a tenant token sees and stops only its tenant's runs. */
void api_runs_route(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req,
                    const auth_identity_t *who);
/* /api/v1/scenarios…: POST /api/v1/scenarios/validate (api_validate.c). */
void api_validate_route(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req,
                        const auth_identity_t *who);
/* Whether path is the validate endpoint: it changes nothing, so a follower
 * answers it like a read, and the gate checks its tenant like a new run's. */
bool api_validate_is_path(const char *path);
/* /api/v1/cluster… */
void api_cluster_route(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req);
/* GET /api/v1/workers: every worker's capacity, CPU and assignments; a
 * tenant token sees only its own tenant's runs among the assignments (other
 * runs are left out, ids included). */
void api_workers_route(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req,
                       const auth_identity_t *who);

#endif
