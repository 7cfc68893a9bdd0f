/* health.c — /healthz and /metrics on the worker's --health-addr. */
#include "health.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_addr.h"
#include "lc_buf.h"
#include "lc_err.h"
#include "lc_http_server.h"

#define HEALTH_MAX_BODY 1024u

struct worker_health_s {
    lc_http_server_t *server;
    worker_health_fill_cb fill;
    void *arg;
};

static bool gauge(lc_buf_t *b, const char *name, const char *help, double value)
{
    return lc_buf_appendf(b, "# HELP %s %s\n# TYPE %s gauge\n%s %.17g\n", name, help, name, name,
                          value) == 0;
}

char *worker_health_metrics(const worker_health_view_t *v)
{
    lc_buf_t b = {0};
    bool ok = gauge(&b, "loadworker_up", "1 while the process serves.", 1) &&
              gauge(&b, "loadworker_joined", "1 while a leader has welcomed this worker.",
                    v->joined) &&
              gauge(&b, "loadworker_cpu_percent",
                    "CPU use of the engine threads' time at the last heartbeat.",
                    v->cpu_percent) &&
              gauge(&b, "loadworker_rss_bytes", "Resident memory.", (double)v->rss_bytes) &&
              gauge(&b, "loadworker_capacity_users", "Users this worker offers to the scheduler.",
                    v->capacity) &&
              gauge(&b, "loadworker_users", "Users running, over every run.", v->users) &&
              gauge(&b, "loadworker_connections", "Open connections to targets, over every run.",
                    v->connections) &&
              gauge(&b, "loadworker_runs", "Runs with users on this worker.", v->runs) &&
              gauge(&b, "loadworker_outbox_bytes", "Stats not yet acknowledged by the leader.",
                    (double)v->outbox_bytes) &&
              gauge(&b, "loadworker_engine_loop_lag_seconds",
                    "Worst lateness of an engine's event loop since the last scrape.",
                    (double)v->loop_lag_us / 1e6);
    if (!ok) {
        lc_buf_free(&b);
        return NULL;
    }
    return b.data;
}

static void respond_text(lc_http_exchange_t *ex, int status, const char *type, char *body)
{
    if (body == NULL) {
        const char *oom = "{\"error\":\"out of memory\"}";
        lc_http_exchange_respond(ex, 500, "application/json", oom, strlen(oom), NULL);
        return;
    }
    lc_http_exchange_respond(ex, status, type, body, strlen(body), NULL);
    free(body);
}

static char *healthz_body(const worker_health_view_t *v)
{
    char *body = malloc(256);
    if (body != NULL)
        snprintf(body, 256, "{\"status\":\"ok\",\"worker\":\"%s\",\"joined\":%s}\n",
                 v->worker_id ? v->worker_id : "", v->joined ? "true" : "false");
    return body;
}

static void handle(void *arg, lc_http_exchange_t *ex, const lc_http_request_t *req)
{
    worker_health_t *h = arg;
    worker_health_view_t view = {0};
    h->fill(h->arg, &view);
    if (strcmp(req->method, "GET") != 0) {
        const char *body = "{\"error\":\"only GET is served here\"}";
        lc_http_exchange_respond(ex, 405, "application/json", body, strlen(body), NULL);
    } else if (strcmp(req->path, "/healthz") == 0) {
        /* Alive is healthy: a worker waiting for a leader is doing its job. */
        respond_text(ex, 200, "application/json", healthz_body(&view));
    } else if (strcmp(req->path, "/metrics") == 0) {
        respond_text(ex, 200, "text/plain; version=0.0.4", worker_health_metrics(&view));
    } else {
        const char *body = "{\"error\":\"not found: try /healthz or /metrics\"}";
        lc_http_exchange_respond(ex, 404, "application/json", body, strlen(body), NULL);
    }
}

int worker_health_start(worker_health_t **out, uv_loop_t *loop, const char *addr,
                        worker_health_fill_cb fill, void *arg, char *errmsg, size_t errlen)
{
    lc_hostport_t hp;
    char why[200];
    if (lc_hostport_parse(addr, 0, &hp, why, sizeof why) != 0)
        return lc_errf(errmsg, errlen, LC_EINVAL, "--health-addr: %s", why);
    worker_health_t *h = calloc(1, sizeof *h);
    if (h == NULL)
        return LC_ENOMEM;
    h->fill = fill;
    h->arg = arg;
    int rv = lc_http_server_init(&h->server, loop, hp.host, hp.port, HEALTH_MAX_BODY, handle, h,
                                 errmsg, errlen);
    if (rv != 0) {
        free(h);
        return rv;
    }
    *out = h;
    return 0;
}

void worker_health_close(worker_health_t *h)
{
    if (h == NULL)
        return;
    lc_http_server_close(h->server);
    free(h); /* the server keeps no pointer to h once closed: handle() is not called again */
}
