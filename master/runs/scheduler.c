/* scheduler.c — largest-remainder splits, weighted max-min fairness between
 * tenants and runs, and stable placement of users on workers. */
#include "scheduler.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "lc_err.h"

/* Capacities above this count as this, so grant * capacity fits 64 bits. */
#define CAPACITY_MAX 1000000000u

void sched_split(uint32_t total, const uint32_t *weights, size_t n, uint32_t *out)
{
    assert(n > 0 && weights != NULL && out != NULL);
    uint64_t weight_sum = 0;
    for (size_t i = 0; i < n; i++)
        weight_sum += weights[i];
    uint64_t given = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t w = weight_sum ? weights[i] : 1;
        uint64_t sum = weight_sum ? weight_sum : n;
        out[i] = (uint32_t)((uint64_t)total * w / sum);
        given += out[i];
    }
    /* Hand out what rounding down left, largest remainder first. */
    while (given < total) {
        size_t best = 0;
        uint64_t best_rem = 0;
        int found = 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t w = weight_sum ? weights[i] : 1;
            uint64_t sum = weight_sum ? weight_sum : n;
            uint64_t rem = ((uint64_t)total * w) % sum;
            /* A share that already got its extra user has remainder "used". */
            if (out[i] > (uint64_t)total * w / sum)
                continue;
            if (!found || rem > best_rem) {
                best = i;
                best_rem = rem;
                found = 1;
            }
        }
        out[best]++;
        given++;
    }
}

/* Working state of one sched_plan call; arrays in canonical (sorted) order. */
typedef struct plan_s {
    size_t nw, nr, ng;
    const sched_worker_t **w;   /* workers by id */
    const sched_run_t **r;      /* runs by (tenant, created, id) */
    size_t *group_of;           /* per r[]: its tenant group */
    size_t *group_first;        /* ng + 1 entries: r[] range of each group */
    uint32_t *group_weight;
    size_t *age;                /* r[] indices by (created, id): oldest first */
    bool *admitted;             /* per r[] */
    uint32_t *grant;            /* per r[] */
    uint32_t *tenant_grant;     /* per group */
    uint32_t *demand, *weight, *split_w, *split_out; /* scratch, max(nr, ng) entries */
    bool *done;                 /* scratch, max(nr, ng) entries */
    uint64_t *free;             /* per w[]: capacity older runs left */
    uint32_t capacity;          /* the fleet's, clamped to 32 bits */
} plan_t;

static int cmp_worker(const void *a, const void *b)
{
    const sched_worker_t *x = *(const sched_worker_t *const *)a;
    const sched_worker_t *y = *(const sched_worker_t *const *)b;
    return strcmp(x->id ? x->id : "", y->id ? y->id : "");
}

static const char *tenant_of(const sched_run_t *r)
{
    return r->tenant ? r->tenant : "";
}

static int cmp_age(const sched_run_t *x, const sched_run_t *y)
{
    if (x->created != y->created)
        return x->created < y->created ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_run(const void *a, const void *b)
{
    const sched_run_t *x = *(const sched_run_t *const *)a;
    const sched_run_t *y = *(const sched_run_t *const *)b;
    int c = strcmp(tenant_of(x), tenant_of(y));
    return c != 0 ? c : cmp_age(x, y);
}

/* Water-filling: out[i] = min(demand[i], level * weight[i]) with the level
 * set so the outs use up cap (or satisfy everyone); the constrained shares
 * are rounded by largest remainder. done is scratch (n entries). */
static void water_fill(uint32_t cap, const uint32_t *demand, const uint32_t *weight, size_t n,
                       uint32_t *out, bool *done, uint32_t *split_w, uint32_t *split_out)
{
    uint64_t rem = cap;
    for (size_t i = 0; i < n; i++) {
        out[i] = 0;
        done[i] = demand[i] == 0;
    }
    for (;;) {
        uint64_t wsum = 0, level_rem = rem;
        for (size_t i = 0; i < n; i++)
            wsum += done[i] ? 0 : weight[i];
        if (wsum == 0)
            return;
        bool progress = false;
        /* Whoever asks no more than the current level gets all it asks; the
         * level only rises as they leave, so one pass may satisfy several. */
        for (size_t i = 0; i < n; i++) {
            if (done[i] || (uint64_t)demand[i] * wsum > level_rem * weight[i])
                continue;
            out[i] = demand[i];
            rem -= demand[i];
            done[i] = progress = true;
        }
        if (progress)
            continue;
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (!done[i])
                split_w[k++] = weight[i];
        sched_split((uint32_t)rem, split_w, k, split_out);
        k = 0;
        for (size_t i = 0; i < n; i++)
            if (!done[i])
                out[i] = split_out[k++];
        return;
    }
}

static void plan_free(plan_t *p)
{
    free(p->w);
    free(p->r);
    free(p->group_of);
    free(p->group_first);
    free(p->group_weight);
    free(p->age);
    free(p->admitted);
    free(p->grant);
    free(p->tenant_grant);
    free(p->demand);
    free(p->weight);
    free(p->split_w);
    free(p->split_out);
    free(p->done);
    free(p->free);
}

static int plan_alloc(plan_t *p, size_t nw, size_t nr)
{
    size_t w = nw ? nw : 1, r = nr ? nr : 1;
    p->w = calloc(w, sizeof *p->w);
    p->r = calloc(r, sizeof *p->r);
    p->group_of = calloc(r, sizeof *p->group_of);
    p->group_first = calloc(r + 1, sizeof *p->group_first);
    p->group_weight = calloc(r, sizeof *p->group_weight);
    p->age = calloc(r, sizeof *p->age);
    p->admitted = calloc(r, sizeof *p->admitted);
    p->grant = calloc(r, sizeof *p->grant);
    p->tenant_grant = calloc(r, sizeof *p->tenant_grant);
    p->demand = calloc(r, sizeof *p->demand);
    p->weight = calloc(r, sizeof *p->weight);
    p->split_w = calloc(r, sizeof *p->split_w);
    p->split_out = calloc(r, sizeof *p->split_out);
    p->done = calloc(r, sizeof *p->done);
    p->free = calloc(w, sizeof *p->free);
    if (!p->w || !p->r || !p->group_of || !p->group_first || !p->group_weight || !p->age ||
        !p->admitted || !p->grant || !p->tenant_grant || !p->demand || !p->weight ||
        !p->split_w || !p->split_out || !p->done || !p->free)
        return LC_ENOMEM;
    return 0;
}

static uint32_t weight_of(const char *name, const sched_tenant_t *tenants, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(tenants[i].name ? tenants[i].name : "", name) != 0)
            continue;
        uint32_t w = tenants[i].weight;
        return w == 0 ? 1 : w > SCHED_WEIGHT_MAX ? SCHED_WEIGHT_MAX : w;
    }
    return 1;
}

/* Runs grouped by tenant (names sorted), each group oldest first. */
static void build_groups(plan_t *p, const sched_tenant_t *tenants, size_t n_tenants)
{
    qsort(p->r, p->nr, sizeof *p->r, cmp_run);
    p->ng = 0;
    for (size_t i = 0; i < p->nr; i++) {
        if (i == 0 || strcmp(tenant_of(p->r[i]), tenant_of(p->r[i - 1])) != 0) {
            p->group_first[p->ng] = i;
            p->group_weight[p->ng] = weight_of(tenant_of(p->r[i]), tenants, n_tenants);
            p->ng++;
        }
        p->group_of[i] = p->ng - 1;
    }
    p->group_first[p->ng] = p->nr;
}

/* age[] = indices into r[] oldest first; an insertion sort, because qsort
 * has no context argument and a file-static one would make this impure. */
static void sort_by_age(plan_t *p)
{
    for (size_t i = 0; i < p->nr; i++) {
        size_t j = i;
        for (; j > 0 && cmp_age(p->r[p->age[j - 1]], p->r[i]) > 0; j--)
            p->age[j] = p->age[j - 1];
        p->age[j] = i;
    }
}

/* Tenants by weighted water-filling, then each tenant's runs equally. */
static void compute_grants(plan_t *p)
{
    for (size_t g = 0; g < p->ng; g++) {
        uint64_t d = 0;
        for (size_t i = p->group_first[g]; i < p->group_first[g + 1]; i++)
            d += p->admitted[i] ? p->r[i]->requested : 0;
        p->demand[g] = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
        p->weight[g] = p->group_weight[g];
    }
    water_fill(p->capacity, p->demand, p->weight, p->ng, p->tenant_grant, p->done, p->split_w,
               p->split_out);
    for (size_t g = 0; g < p->ng; g++) {
        size_t first = p->group_first[g], n = p->group_first[g + 1] - first;
        for (size_t k = 0; k < n; k++) {
            p->demand[k] = p->admitted[first + k] ? p->r[first + k]->requested : 0;
            p->weight[k] = 1;
        }
        water_fill(p->tenant_grant[g], p->demand, p->weight, n, &p->grant[first], p->done,
                   p->split_w, p->split_out);
    }
}

static bool queued_runs_granted_in_full(const plan_t *p)
{
    for (size_t i = 0; i < p->nr; i++)
        if (p->admitted[i] && p->r[i]->queue && !p->r[i]->started &&
            p->grant[i] < p->r[i]->requested)
            return false;
    return true;
}

/* Queue runs waiting to start are admitted oldest first while every admitted
 * one still gets all it asks; the others wait with nothing. */
static void admit(plan_t *p)
{
    for (size_t i = 0; i < p->nr; i++)
        p->admitted[i] = !p->r[i]->queue || p->r[i]->started;
    for (size_t k = 0; k < p->nr; k++) {
        size_t i = p->age[k];
        if (p->admitted[i])
            continue;
        p->admitted[i] = true;
        compute_grants(p);
        p->admitted[i] = queued_runs_granted_in_full(p);
    }
    compute_grants(p);
}

typedef struct extra_s {
    size_t w;      /* index into plan w[] */
    bool keep;     /* the worker has at least the rounded-up share now */
    uint64_t rem;  /* remainder of the exact share */
} extra_t;

static int cmp_extra(const void *a, const void *b)
{
    const extra_t *x = a, *y = b;
    if (x->keep != y->keep)
        return x->keep ? -1 : 1;
    if (x->rem != y->rem)
        return x->rem > y->rem ? -1 : 1;
    return x->w < y->w ? -1 : x->w > y->w;
}

/* Spreads one run's grant over the workers' free capacity: everyone gets the
 * rounded-down exact share, and the users rounding left go first to workers
 * that carry the rounded-up share already (so they stay), then by largest
 * remainder. users[] is indexed like the caller's workers. */
static int place_run(plan_t *p, const sched_worker_t *workers, const sched_run_t *run,
                     uint32_t grant, uint32_t *users)
{
    uint64_t total_free = 0, given = 0;
    for (size_t j = 0; j < p->nw; j++)
        total_free += p->free[j];
    if (grant == 0 || total_free == 0)
        return 0;
    extra_t *extra = calloc(p->nw, sizeof *extra);
    if (extra == NULL)
        return LC_ENOMEM;
    size_t n_extra = 0;
    for (size_t j = 0; j < p->nw; j++) {
        size_t wi = (size_t)(p->w[j] - workers);
        uint64_t num = (uint64_t)grant * p->free[j];
        users[wi] = (uint32_t)(num / total_free);
        given += users[wi];
        uint32_t now = run->current ? run->current[wi] : 0;
        if (num % total_free != 0)
            extra[n_extra++] = (extra_t){j, now > users[wi], num % total_free};
    }
    qsort(extra, n_extra, sizeof *extra, cmp_extra);
    for (size_t k = 0; k < n_extra && given < grant; k++, given++)
        users[p->w[extra[k].w] - workers]++;
    for (size_t j = 0; j < p->nw; j++)
        p->free[j] -= users[p->w[j] - workers];
    free(extra);
    return 0;
}

static int place(plan_t *p, const sched_worker_t *workers, const sched_run_t *runs,
                 sched_grant_t *out)
{
    for (size_t j = 0; j < p->nw; j++)
        p->free[j] = p->w[j]->capacity > CAPACITY_MAX ? CAPACITY_MAX : p->w[j]->capacity;
    for (size_t k = 0; k < p->nr; k++) {
        size_t i = p->age[k];
        sched_grant_t *o = &out[p->r[i] - runs];
        o->granted = p->grant[i];
        o->queued = !p->admitted[i] || p->grant[i] == 0;
        if (p->nw > 0)
            memset(o->users, 0, p->nw * sizeof *o->users);
        if (place_run(p, workers, p->r[i], p->grant[i], o->users) != 0)
            return LC_ENOMEM;
    }
    return 0;
}

int sched_plan(const sched_worker_t *workers, size_t n_workers, const sched_tenant_t *tenants,
               size_t n_tenants, const sched_run_t *runs, size_t n_runs, sched_grant_t *out)
{
    assert((n_workers == 0 || workers != NULL) && (n_runs == 0 || (runs != NULL && out != NULL)));
    plan_t p;
    memset(&p, 0, sizeof p);
    p.nw = n_workers;
    p.nr = n_runs;
    int rv = plan_alloc(&p, n_workers, n_runs);
    if (rv == 0) {
        uint64_t capacity = 0;
        for (size_t j = 0; j < n_workers; j++) {
            p.w[j] = &workers[j];
            capacity += workers[j].capacity > CAPACITY_MAX ? CAPACITY_MAX : workers[j].capacity;
        }
        p.capacity = capacity > UINT32_MAX ? UINT32_MAX : (uint32_t)capacity;
        qsort(p.w, n_workers, sizeof *p.w, cmp_worker);
        for (size_t i = 0; i < n_runs; i++)
            p.r[i] = &runs[i];
        build_groups(&p, tenants, n_tenants);
        sort_by_age(&p);
        admit(&p);
        rv = place(&p, workers, runs, out);
    }
    plan_free(&p);
    return rv;
}
