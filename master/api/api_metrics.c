/* api_metrics.c — GET /metrics: the cluster's own series rendered on the
 * loop (cheap), the tenant series rendered off the loop from the database
 * and kept a second per scope, so that a scrape costs the loop neither a
 * scan that decodes every histogram nor a copy of the page: the text is
 * shared by the cache and the answers being written. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_internal.h"
#include "lc_clock.h"
#include "lc_err.h"

#define METRICS_CACHE_MS 1000
#define METRICS_CACHE_SLOTS 4
#define METRICS_CACHE_TEXT_MAX (64u << 20) /* a page larger than this is not kept */
#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4"

/* A rendered page of tenant series, shared by the cache and the answers
 * being written from it (all on the loop, so the count needs no atomics). */
typedef struct shared_text_s {
    unsigned refs;
    lc_buf_t text;
} shared_text_t;

typedef struct cached_s {
    bool used;
    char tenant[128]; /* the scope: "" for every tenant's series */
    uint64_t at_ms;   /* monotonic */
    shared_text_t *text;
} cached_t;

struct metrics_cache_s {
    cached_t slot[METRICS_CACHE_SLOTS];
};

/* Wraps text (taken) with one reference; NULL when out of memory. */
static shared_text_t *shared_text_new(lc_buf_t *text)
{
    shared_text_t *t = malloc(sizeof *t);
    if (t == NULL)
        return NULL;
    t->refs = 1;
    t->text = *text;
    memset(text, 0, sizeof *text);
    return t;
}

static void shared_text_unref(void *arg)
{
    shared_text_t *t = arg;
    if (t == NULL)
        return;
    assert(t->refs > 0);
    if (--t->refs > 0)
        return;
    lc_buf_free(&t->text);
    free(t);
}

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
        shared_text_unref(m->metrics_cache->slot[i].text);
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

/* Keeps a reference to text for tenant's scope, in its slot or the oldest. */
static void cache_put(metrics_cache_t *c, const char *tenant, shared_text_t *text, uint64_t now)
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
    shared_text_unref(slot->text);
    text->refs++;
    slot->text = text;
    slot->used = true;
    slot->at_ms = now;
    snprintf(slot->tenant, sizeof slot->tenant, "%s", tenant);
}

/* The page's two parts: the tenant series (a reference taken, or none) and
 * the cluster's (taken), sent as they are: a scrape costs the loop no copy. */
static size_t page_parts(lc_http_part_t parts[2], shared_text_t *tenant, lc_buf_t *cluster)
{
    size_t n = 0;
    if (tenant != NULL) {
        tenant->refs++;
        parts[n++] = (lc_http_part_t){.data = tenant->text.data, .len = tenant->text.len,
                                      .release = shared_text_unref, .arg = tenant};
    }
    parts[n++] = (lc_http_part_t){.data = cluster->data, .len = cluster->len, .release = free,
                                  .arg = cluster->data};
    memset(cluster, 0, sizeof *cluster);
    return n;
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
    if (j->rv != 0)
        api_read_error(&j->read, 500, "out of memory");
}

/* On the loop: the rendered tenant series go into the cache and, with the
 * cluster's, into the answer. */
static void metrics_release(api_read_t *r)
{
    metrics_job_t *j = (metrics_job_t *)r;
    shared_text_t *tenant = NULL;
    if (!r->job.cancelled && j->rv == 0 && (tenant = shared_text_new(&j->tenant)) == NULL)
        api_read_error(r, 500, "out of memory");
    if (tenant != NULL) {
        if (tenant->text.len <= METRICS_CACHE_TEXT_MAX)
            cache_put(j->m->metrics_cache, j->scope.tenant, tenant, r->job.started_ms);
        r->status = 200;
        r->content_type = METRICS_CONTENT_TYPE;
        r->nparts = page_parts(r->parts, tenant, &j->cluster);
        shared_text_unref(tenant);
    }
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
        lc_http_part_t parts[2];
        size_t n = page_parts(parts, hit != NULL ? hit->text : NULL, &cluster);
        lc_http_exchange_respond_parts(ex, 200, METRICS_CONTENT_TYPE, parts, n, NULL);
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
