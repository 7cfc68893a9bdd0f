/* store_stats_sum.c — a RunSeconds command's new batches summed before they
 * are written: endpoint figures by (second, endpoint) and by endpoint, error
 * counts by (endpoint, kind), run-wide counters by second, so that a command
 * of 200 batches upserts each row once, not 200 times. Each group's
 * histograms are decoded into one dense histogram and encoded once (merging
 * encodings one by one cost the square of a group's size); the sums are the
 * same whatever the batches' order, so every master writes the same bytes. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "lc_err.h"
#include "lc_hist.h"
#include "lc_log.h"
#include "store_internal.h"

typedef struct item_s {
    uint32_t t;
    size_t order; /* position in the command: ties keep it, so sorting is deterministic */
    const Lc__EndpointStats *e;
} item_t;

static int by_second_then_name(const void *pa, const void *pb)
{
    const item_t *a = pa, *b = pb;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    int c = strcmp(a->e->name, b->e->name);
    return c != 0 ? c : (a->order > b->order) - (a->order < b->order);
}

static int by_name(const void *pa, const void *pb)
{
    const item_t *a = pa, *b = pb;
    int c = strcmp(a->e->name, b->e->name);
    return c != 0 ? c : (a->order > b->order) - (a->order < b->order);
}

/* Adds e's counts to sum and its histogram to acc (the group's, dense: each batch is
 * decoded once, however many share the row). A histogram that is not a valid encoding is
 * dropped with a warning, its counts kept, as a batch's alone always was. */
static bool add_into(store_stats_sum_t *sum, lc_hist_t *acc, const Lc__EndpointStats *e)
{
    sum->e.count += e->count;
    sum->e.failures += e->failures;
    sum->e.bytes += e->bytes;
    if (e->hist.len == 0)
        return false;
    if (lc_hist_decode_add(acc, e->hist.data, e->hist.len) == 0)
        return true;
    lc_warn("store", "msg=\"batch histogram is corrupt; counts kept, latencies dropped\"");
    return false;
}

/* The group's histogram as sum's encoding (none when no batch brought one), the bytes
 * lc_hist_merge_encoded of its batches' encodings would give. */
static int finish_group(store_stats_sum_t *sum, const lc_hist_t *acc, bool any)
{
    if (!any)
        return 0;
    size_t len = 0;
    int rv = lc_hist_encode(acc, &sum->e.hist.data, &len);
    sum->e.hist.len = len;
    return rv;
}

enum group_key { BY_SECOND_AND_NAME, BY_NAME, BY_SECOND };

/* Sums sorted items into *out, one row per run of equal keys. */
static int sum_groups(const item_t *items, size_t n, enum group_key key, store_stats_sum_t **out,
                      size_t *n_out)
{
    bool by_t = key != BY_NAME, by_name = key != BY_SECOND;
    store_stats_sum_t *rows = calloc(n > 0 ? n : 1, sizeof *rows);
    lc_hist_t *acc = malloc(sizeof *acc);
    if (rows == NULL || acc == NULL) {
        free(rows);
        free(acc);
        return LC_ENOMEM;
    }
    size_t k = 0;
    int rv = 0;
    bool any = false; /* the group has a histogram */
    for (size_t i = 0; i < n && rv == 0; i++) {
        bool same = k > 0 && (!by_name || strcmp(rows[k - 1].e.name, items[i].e->name) == 0) &&
                    (!by_t || rows[k - 1].t == items[i].t);
        if (!same) {
            if (k > 0)
                rv = finish_group(&rows[k - 1], acc, any);
            store_stats_sum_t *r = &rows[k++];
            lc__endpoint_stats__init(&r->e);
            r->t = by_t ? items[i].t : 0;
            r->e.name = by_name ? items[i].e->name : "";  /* points into the command */
            r->e.method = by_name ? items[i].e->method    /* the first the command gives */
                                  : STORE_RUN_ROW_METHOD;
            lc_hist_init(acc);
            any = false;
        }
        any = add_into(&rows[k - 1], acc, items[i].e) || any;
    }
    if (rv == 0 && k > 0)
        rv = finish_group(&rows[k - 1], acc, any);
    free(acc);
    if (rv != 0) {
        store_stats_sums_free(rows, k);
        return rv;
    }
    *out = rows;
    *n_out = k;
    return 0;
}

int store_stats_sum_seconds(const Lc__RunSeconds *c, const bool *keep,
                            store_stats_sum_t **out, size_t *n_out)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n_batches; i++)
        n += keep[i] ? c->batches[i]->n_endpoints : 0;
    item_t *items = calloc(n > 0 ? n : 1, sizeof *items);
    if (items == NULL)
        return LC_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < c->n_batches; i++)
        for (size_t j = 0; keep[i] && j < c->batches[i]->n_endpoints; j++, k++)
            items[k] = (item_t){c->batches[i]->interval, k, c->batches[i]->endpoints[j]};
    assert(k == n);
    qsort(items, n, sizeof *items, by_second_then_name);
    int rv = sum_groups(items, n, BY_SECOND_AND_NAME, out, n_out);
    free(items);
    return rv;
}

int store_stats_sum_totals(const store_stats_sum_t *seconds, size_t n, store_stats_sum_t **out,
                           size_t *n_out)
{
    item_t *items = calloc(n > 0 ? n : 1, sizeof *items);
    if (items == NULL)
        return LC_ENOMEM;
    for (size_t i = 0; i < n; i++)
        items[i] = (item_t){0, i, &seconds[i].e};
    qsort(items, n, sizeof *items, by_name);
    int rv = sum_groups(items, n, BY_NAME, out, n_out);
    free(items);
    return rv;
}

/* A request series (not a journey's iteration or group timer). */
static bool is_request(const char *method)
{
    return strcmp(method, "ITERATION") != 0 && strcmp(method, "GROUP") != 0;
}

int store_stats_sum_run_seconds(const store_stats_sum_t *seconds, size_t n,
                                store_stats_sum_t **out, size_t *n_out)
{
    item_t *items = calloc(n > 0 ? n : 1, sizeof *items);
    if (items == NULL)
        return LC_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) /* already in second order */
        if (is_request(seconds[i].e.method))
            items[k++] = (item_t){seconds[i].t, i, &seconds[i].e};
    int rv = sum_groups(items, k, BY_SECOND, out, n_out);
    free(items);
    return rv;
}

typedef struct error_item_s {
    size_t order;
    const Lc__ErrorCount *e;
} error_item_t;

static int by_endpoint_then_kind(const void *pa, const void *pb)
{
    const error_item_t *a = pa, *b = pb;
    int c = strcmp(a->e->endpoint, b->e->endpoint);
    if (c == 0)
        c = strcmp(a->e->kind, b->e->kind);
    return c != 0 ? c : (a->order > b->order) - (a->order < b->order);
}

int store_stats_sum_errors(const Lc__RunSeconds *c, const bool *keep, store_error_sum_t **out,
                           size_t *n_out)
{
    size_t n = 0, k = 0;
    for (size_t i = 0; i < c->n_batches; i++)
        n += keep[i] ? c->batches[i]->n_errors : 0;
    error_item_t *items = malloc((n > 0 ? n : 1) * sizeof *items);
    store_error_sum_t *rows = malloc((n > 0 ? n : 1) * sizeof *rows);
    if (items == NULL || rows == NULL) {
        free(items);
        free(rows);
        return LC_ENOMEM;
    }
    for (size_t i = 0; i < c->n_batches; i++)
        for (size_t j = 0; keep[i] && j < c->batches[i]->n_errors; j++, k++)
            items[k] = (error_item_t){k, c->batches[i]->errors[j]};
    assert(k == n);
    qsort(items, n, sizeof *items, by_endpoint_then_kind);
    k = 0;
    for (size_t i = 0; i < n; i++) {
        const Lc__ErrorCount *e = items[i].e;
        if (k == 0 || strcmp(rows[k - 1].endpoint, e->endpoint) != 0 ||
            strcmp(rows[k - 1].kind, e->kind) != 0)
            rows[k++] = (store_error_sum_t){e->endpoint, e->kind, 0};
        rows[k - 1].count += e->count;
    }
    free(items);
    *out = rows;
    *n_out = k;
    return 0;
}

static int by_interval(const void *pa, const void *pb)
{
    const Lc__StatsBatch *a = *(const Lc__StatsBatch *const *)pa;
    const Lc__StatsBatch *b = *(const Lc__StatsBatch *const *)pb;
    return (a->interval > b->interval) - (a->interval < b->interval);
}

int store_stats_sum_second_totals(const Lc__RunSeconds *c, const bool *keep,
                                  Lc__StatsBatch **out, size_t *n_out)
{
    size_t n = 0, k = 0;
    const Lc__StatsBatch **kept = malloc((c->n_batches > 0 ? c->n_batches : 1) * sizeof *kept);
    Lc__StatsBatch *rows = malloc((c->n_batches > 0 ? c->n_batches : 1) * sizeof *rows);
    if (kept == NULL || rows == NULL) {
        free(kept);
        free(rows);
        return LC_ENOMEM;
    }
    for (size_t i = 0; i < c->n_batches; i++)
        if (keep[i])
            kept[n++] = c->batches[i];
    qsort(kept, n, sizeof *kept, by_interval); /* sums: ties need no order */
    for (size_t i = 0; i < n; i++) {
        const Lc__StatsBatch *b = kept[i];
        if (k == 0 || rows[k - 1].interval != b->interval) {
            lc__stats_batch__init(&rows[k]);
            rows[k].run = c->run;
            rows[k++].interval = b->interval;
        }
        Lc__StatsBatch *r = &rows[k - 1];
        r->users += b->users;
        r->dropped += b->dropped;
        r->tls_handshakes += b->tls_handshakes;
        r->tls_resumed += b->tls_resumed;
        r->lost_batches += b->lost_batches;
        r->lost_requests += b->lost_requests;
    }
    free(kept);
    *out = rows;
    *n_out = k;
    return 0;
}

void store_stats_sums_free(store_stats_sum_t *rows, size_t n)
{
    for (size_t i = 0; rows != NULL && i < n; i++)
        free(rows[i].e.hist.data);
    free(rows);
}
