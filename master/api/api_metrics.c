/* api_metrics.c — GET /metrics: the cluster's own series rendered on the
 * loop (cheap), the tenant series rendered off the loop from the database
 * and kept a second per scope, so that a scrape costs the loop a copy of
 * text, not a scan that decodes every histogram. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_internal.h"
#include "lc_clock.h"
#include "lc_err.h"

#define METRICS_CACHE_MS 1000
#define METRICS_CACHE_SLOTS 4
#define METRICS_CACHE_TEXT_MAX (64u << 20) /* a page larger than this is not kept */

typedef struct cached_s {
    bool used;
    char tenant[128]; /* the scope: "" for every tenant's series */
    uint64_t at_ms;   /* monotonic */
    lc_buf_t text;
} cached_t;

struct metrics_cache_s {
    cached_t slot[METRICS_CACHE_SLOTS];
};

int api_metrics_cache_new(master_t *m)
{
    m->metrics_cache = calloc(1, sizeof *m->metrics_cache);
    return m->metrics_cache != NULL ? 0 : LC_ENOMEM;
}

void api_metrics_cache_free(master_t *m)
{
    if (m->metrics_cache == NULL)
        return;
    for (size_t i = 0; i < METRICS_CACHE_SLOTS; i++)
        lc_buf_free(&m->metrics_cache->slot[i].text);
    free(m->metrics_cache);
    m->metrics_cache = NULL;
}

static cached_t *cache_fresh(metrics_cache_t *c, const char *tenant, uint64_t now)
{
    for (size_t i = 0; i < METRICS_CACHE_SLOTS; i++)
        if (c->slot[i].used && strcmp(c->slot[i].tenant, tenant) == 0 &&
            now - c->slot[i].at_ms < METRICS_CACHE_MS)
            return &c->slot[i];
    return NULL;
}

/* Keeps text (taken) for tenant's scope, in its slot or the oldest. */
static void cache_put(metrics_cache_t *c, const char *tenant, lc_buf_t *text, uint64_t now)
{
    cached_t *slot = &c->slot[0];
    for (size_t i = 0; i < METRICS_CACHE_SLOTS; i++) {
        if (c->slot[i].used && strcmp(c->slot[i].tenant, tenant) == 0) {
            slot = &c->slot[i];
            break;
        }
        if (!c->slot[i].used || c->slot[i].at_ms < slot->at_ms)
            slot = &c->slot[i];
    }
    lc_buf_free(&slot->text);
    slot->text = *text;
    memset(text, 0, sizeof *text);
    slot->used = true;
    slot->at_ms = now;
    snprintf(slot->tenant, sizeof slot->tenant, "%s", tenant);
}

static void respond_text(lc_http_exchange_t *ex, const lc_buf_t *tenant, const lc_buf_t *cluster)
{
    lc_buf_t page = {0};
    if (lc_buf_append(&page, tenant->data ? tenant->data : "", tenant->len) != 0 ||
        lc_buf_append(&page, cluster->data ? cluster->data : "", cluster->len) != 0) {
        lc_buf_free(&page);
        api_respond_error(ex, 500, "out of memory");
        return;
    }
    lc_http_exchange_respond(ex, 200, "text/plain; version=0.0.4", page.data, page.len, NULL);
    lc_buf_free(&page);
}

typedef struct metrics_job_s {
    api_read_t read;
    master_t *m;            /* for release, on the loop */
    metrics_scope_t scope;
    metrics_users_t users;  /* taken on the loop */
    lc_buf_t cluster;       /* rendered on the loop */
    lc_buf_t tenant;        /* rendered by the work */
    int rv;
} metrics_job_t;

static void metrics_work(read_job_t *job, store_t *reader)
{
    metrics_job_t *j = (metrics_job_t *)job;
    j->rv = metrics_render_tenant_series(reader, &j->scope, &j->users, &j->tenant);
    lc_buf_t page = {0};
    if (j->rv == 0 && (lc_buf_append(&page, j->tenant.data ? j->tenant.data : "", j->tenant.len) ||
                       lc_buf_append(&page, j->cluster.data ? j->cluster.data : "",
                                     j->cluster.len)))
        j->rv = LC_ENOMEM;
    if (j->rv != 0) {
        lc_buf_free(&page);
        api_read_error(&j->read, 500, "out of memory");
        return;
    }
    api_read_body(&j->read, 200, "text/plain; version=0.0.4", page.data, page.len);
}

static void metrics_release(api_read_t *r)
{
    metrics_job_t *j = (metrics_job_t *)r;
    if (!r->job.cancelled && j->rv == 0 && j->tenant.len <= METRICS_CACHE_TEXT_MAX)
        cache_put(j->m->metrics_cache, j->scope.tenant, &j->tenant, r->job.started_ms);
    lc_buf_free(&j->tenant);
    lc_buf_free(&j->cluster);
    metrics_users_free(&j->users);
}

void api_metrics_route(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req)
{
    metrics_scope_t scope;
    if (!api_metrics_scope(m, ex, req, &scope))
        return;
    lc_buf_t cluster = {0};
    if (metrics_render_cluster(m, &cluster) != 0) {
        lc_buf_free(&cluster);
        api_respond_error(ex, 500, "out of memory");
        return;
    }
    const cached_t *hit = scope.tenant_series
                              ? cache_fresh(m->metrics_cache, scope.tenant, lc_mono_ms())
                              : NULL;
    if (!scope.tenant_series || hit != NULL) {
        lc_buf_t none = {0};
        respond_text(ex, hit != NULL ? &hit->text : &none, &cluster);
        lc_buf_free(&cluster);
        return;
    }
    metrics_job_t *j = calloc(1, sizeof *j);
    if (j == NULL || metrics_users_take(m, &j->users) != 0) {
        free(j);
        lc_buf_free(&cluster);
        api_respond_error(ex, 503, "out of memory");
        return;
    }
    j->m = m;
    j->scope = scope;
    j->cluster = cluster;
    j->read.job.work = metrics_work;
    j->read.release = metrics_release;
    api_read_submit(m, ex, &j->read);
}
