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
    uint32_t rank; /* of its name: see rank_names() */
    size_t order;  /* position in the command: ties keep it, so sorting is deterministic */
    const Lc__EndpointStats *e;
} item_t;

static uint64_t name_hash(const char *name)
{
    uint64_t h = 14695981039346656037ull;
    for (const unsigned char *p = (const unsigned char *)name; *p != '\0'; p++)
        h = (h ^ *p) * 1099511628211ull;
    return h;
}

typedef struct distinct_s {
    const char *name;
    uint32_t index; /* its place in the order names first came */
} distinct_t;

static int by_distinct_name(const void *pa, const void *pb)
{
    return strcmp(((const distinct_t *)pa)->name, ((const distinct_t *)pb)->name);
}

/* Puts names[i]'s index among the distinct names, in the order they first come, in
 * ranks[i], and those distinct names in *distinct; returns how many there are. slot and
 * hash have cap entries (a power of two above n). */
static uint32_t index_names(const char *const *names, size_t n, uint32_t *ranks,
                            distinct_t *distinct, uint32_t *slot, uint64_t *hash, size_t cap)
{
    uint32_t d = 0;
    for (size_t i = 0; i < cap; i++)
        slot[i] = UINT32_MAX;
    for (size_t i = 0; i < n; i++) {
        uint64_t h = name_hash(names[i]);
        size_t j = (size_t)h & (cap - 1);
        while (slot[j] != UINT32_MAX &&
               (hash[j] != h || strcmp(distinct[slot[j]].name, names[i]) != 0))
            j = (j + 1) & (cap - 1);
        if (slot[j] == UINT32_MAX) {
            hash[j] = h;
            distinct[d] = (distinct_t){names[i], d};
            slot[j] = d++;
        }
        ranks[i] = slot[j];
    }
    return d;
}

/* Gives names[i] its rank among the distinct names (strcmp order) in ranks[i], so that
 * sorting by rank sorts by name with integer comparisons: a command of 256 batches of 20
 * endpoints holds 5,120 names but 20 distinct ones. Returns 0 or LC_ENOMEM. */
static int rank_names(const char *const *names, size_t n, uint32_t *ranks)
{
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    uint32_t *slot = malloc(cap * sizeof *slot), *rank_of = malloc((n + 1) * sizeof *rank_of);
    uint64_t *hash = malloc(cap * sizeof *hash);
    distinct_t *distinct = malloc((n + 1) * sizeof *distinct);
    int rv = slot && rank_of && hash && distinct ? 0 : LC_ENOMEM;
    if (rv == 0) {
        uint32_t d = index_names(names, n, ranks, distinct, slot, hash, cap);
        qsort(distinct, d, sizeof *distinct, by_distinct_name);
        for (uint32_t k = 0; k < d; k++)
            rank_of[distinct[k].index] = k;
        for (size_t i = 0; i < n; i++)
            ranks[i] = rank_of[ranks[i]];
    }
    free(slot);
    free(rank_of);
    free(hash);
    free(distinct);
    return rv;
}

/* Fills each item's rank from its endpoint's name. */
static int rank_items(item_t *items, size_t n)
{
    const char **names = malloc((n > 0 ? n : 1) * sizeof *names);
    uint32_t *ranks = malloc((n > 0 ? n : 1) * sizeof *ranks);
    int rv = names && ranks ? 0 : LC_ENOMEM;
    for (size_t i = 0; rv == 0 && i < n; i++)
        names[i] = items[i].e->name;
    if (rv == 0)
        rv = rank_names(names, n, ranks);
    for (size_t i = 0; rv == 0 && i < n; i++)
        items[i].rank = ranks[i];
    free(names);
    free(ranks);
    return rv;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
    return (a > b) - (a < b);
}

static int by_second_then_name(const void *pa, const void *pb)
{
    const item_t *a = pa, *b = pb;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return a->rank != b->rank ? cmp_u64(a->rank, b->rank) : cmp_u64(a->order, b->order);
}

static int by_name(const void *pa, const void *pb)
{
    const item_t *a = pa, *b = pb;
    return a->rank != b->rank ? cmp_u64(a->rank, b->rank) : cmp_u64(a->order, b->order);
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
        bool same = i > 0 && (!by_name || items[i - 1].rank == items[i].rank) &&
                    (!by_t || items[i - 1].t == items[i].t);
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
            items[k] = (item_t){c->batches[i]->interval, 0, k, c->batches[i]->endpoints[j]};
    assert(k == n);
    int rv = rank_items(items, n);
    if (rv == 0) {
        qsort(items, n, sizeof *items, by_second_then_name);
        rv = sum_groups(items, n, BY_SECOND_AND_NAME, out, n_out);
    }
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
        items[i] = (item_t){0, 0, i, &seconds[i].e};
    int rv = rank_items(items, n);
    if (rv == 0) {
        qsort(items, n, sizeof *items, by_name);
        rv = sum_groups(items, n, BY_NAME, out, n_out);
    }
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
            items[k++] = (item_t){seconds[i].t, 0, i, &seconds[i].e};
    int rv = sum_groups(items, k, BY_SECOND, out, n_out);
    free(items);
    return rv;
}

typedef struct error_item_s {
    uint32_t endpoint, kind; /* ranks of the names (rank_names) */
    size_t order;
    const Lc__ErrorCount *e;
} error_item_t;

static int by_endpoint_then_kind(const void *pa, const void *pb)
{
    const error_item_t *a = pa, *b = pb;
    if (a->endpoint != b->endpoint)
        return cmp_u64(a->endpoint, b->endpoint);
    return a->kind != b->kind ? cmp_u64(a->kind, b->kind) : cmp_u64(a->order, b->order);
}

/* Fills each item's ranks: endpoints and kinds ranked together, which keeps each
 * in strcmp order. */
static int rank_error_items(error_item_t *items, size_t n)
{
    const char **names = malloc((2 * n + 1) * sizeof *names);
    uint32_t *ranks = malloc((2 * n + 1) * sizeof *ranks);
    int rv = names && ranks ? 0 : LC_ENOMEM;
    for (size_t i = 0; rv == 0 && i < n; i++) {
        names[i] = items[i].e->endpoint;
        names[n + i] = items[i].e->kind;
    }
    if (rv == 0)
        rv = rank_names(names, 2 * n, ranks);
    for (size_t i = 0; rv == 0 && i < n; i++) {
        items[i].endpoint = ranks[i];
        items[i].kind = ranks[n + i];
    }
    free(names);
    free(ranks);
    return rv;
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
            items[k] = (error_item_t){0, 0, k, c->batches[i]->errors[j]};
    assert(k == n);
    if (rank_error_items(items, n) != 0) {
        free(items);
        free(rows);
        return LC_ENOMEM;
    }
    qsort(items, n, sizeof *items, by_endpoint_then_kind);
    k = 0;
    for (size_t i = 0; i < n; i++) {
        const Lc__ErrorCount *e = items[i].e;
        if (i == 0 || items[i - 1].endpoint != items[i].endpoint ||
            items[i - 1].kind != items[i].kind)
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
