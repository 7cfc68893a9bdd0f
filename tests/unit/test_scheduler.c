/* test_scheduler.c — largest-remainder splitting, and sched_plan's fairness,
 * capacity, queueing, stability and order independence on random fleets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scheduler.h"

static void test_proportional_split(void **state)
{
    (void)state;
    uint32_t caps[] = {100, 200, 300}, out[3];
    sched_split(600, caps, 3, out);
    assert_int_equal(out[0], 100);
    assert_int_equal(out[1], 200);
    assert_int_equal(out[2], 300);
    sched_split(7, caps, 3, out); /* 7/6, 14/6, 21/6 → 1.17, 2.33, 3.5 */
    assert_int_equal(out[0] + out[1] + out[2], 7);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 2);
    assert_int_equal(out[2], 4);
}

static void test_zero_weights_split_evenly(void **state)
{
    (void)state;
    uint32_t caps[] = {0, 0}, out[2];
    sched_split(5, caps, 2, out);
    assert_int_equal(out[0], 3);
    assert_int_equal(out[1], 2);
}

/* On random inputs the shares sum to the total and each share is within one
 * user of its exact proportion. */
static void test_random_sums_and_bounds(void **state)
{
    (void)state;
    srand(7);
    for (int round = 0; round < 10000; round++) {
        size_t n = 1 + (size_t)(rand() % 16);
        uint32_t caps[16], out[16], total = (uint32_t)(rand() % 100000);
        uint64_t sum_caps = 0, sum_out = 0;
        for (size_t i = 0; i < n; i++)
            sum_caps += caps[i] = (uint32_t)(rand() % 5000);
        sched_split(total, caps, n, out);
        for (size_t i = 0; i < n; i++) {
            sum_out += out[i];
            double exact = sum_caps ? (double)total * caps[i] / (double)sum_caps
                                    : (double)total / (double)n;
            assert_true((double)out[i] > exact - 1.0 && (double)out[i] < exact + 1.0);
        }
        assert_int_equal(sum_out, total);
    }
}

/* sched_plan ------------------------------------------------------------ */

#define MAXW 10
#define MAXT 4
#define MAXR 8

typedef struct plan_case_s {
    size_t nw, nt, nr;
    char wid[MAXW][8], tname[MAXT][8];
    sched_worker_t w[MAXW];
    sched_tenant_t t[MAXT];
    sched_run_t r[MAXR];
    uint32_t cur[MAXR][MAXW];
    uint32_t users[MAXR][MAXW];
    sched_grant_t out[MAXR];
} plan_case_t;

static void add_worker(plan_case_t *c, const char *id, uint32_t capacity)
{
    snprintf(c->wid[c->nw], sizeof c->wid[c->nw], "%s", id);
    c->w[c->nw] = (sched_worker_t){c->wid[c->nw], capacity};
    c->nw++;
}

static void add_tenant(plan_case_t *c, const char *name, uint32_t weight)
{
    snprintf(c->tname[c->nt], sizeof c->tname[c->nt], "%s", name);
    c->t[c->nt] = (sched_tenant_t){c->tname[c->nt], weight};
    c->nt++;
}

static void add_run(plan_case_t *c, uint64_t id, const char *tenant, uint32_t requested,
                    bool queue, bool started)
{
    c->r[c->nr] = (sched_run_t){id, id, tenant, requested, queue, started, c->cur[c->nr]};
    c->nr++;
}

static void plan(plan_case_t *c)
{
    for (size_t i = 0; i < c->nr; i++) {
        c->r[i].current = c->cur[i];
        c->out[i].users = c->users[i];
    }
    assert_int_equal(sched_plan(c->w, c->nw, c->t, c->nt, c->r, c->nr, c->out), 0);
}

/* The plan becomes the current assignment (what the workers then run). */
static void adopt(plan_case_t *c)
{
    memcpy(c->cur, c->users, sizeof c->cur);
}

static void assert_users(const plan_case_t *c, size_t run, const uint32_t *want)
{
    for (size_t j = 0; j < c->nw; j++)
        assert_int_equal(c->users[run][j], want[j]);
}

/* The issue's case: 100/200/300, A (weight 3) and B (weight 1) each ask 600. */
static void issue_case(plan_case_t *c)
{
    memset(c, 0, sizeof *c);
    add_worker(c, "w1", 100);
    add_worker(c, "w2", 200);
    add_worker(c, "w3", 300);
    add_tenant(c, "A", 3);
    add_tenant(c, "B", 1);
    add_run(c, 1, "A", 600, false, true);
    add_run(c, 2, "B", 600, false, true);
}

static void test_issue_case(void **state)
{
    (void)state;
    plan_case_t c;
    issue_case(&c);
    plan(&c);
    assert_int_equal(c.out[0].granted, 450);
    assert_int_equal(c.out[1].granted, 150);
    assert_false(c.out[0].queued);
    assert_users(&c, 0, (uint32_t[]){75, 150, 225});
    assert_users(&c, 1, (uint32_t[]){25, 50, 75});
}

/* Losing the 300 worker: A 225 and B 75 over 100/200, and nobody on the
 * survivors moves (their shares only shrink to the new grants). */
static void test_worker_lost_moves_nothing_else(void **state)
{
    (void)state;
    plan_case_t c;
    issue_case(&c);
    plan(&c);
    adopt(&c);
    c.nw = 2; /* w3 is gone; cur keeps the survivors' columns */
    plan(&c);
    assert_int_equal(c.out[0].granted, 225);
    assert_int_equal(c.out[1].granted, 75);
    assert_users(&c, 0, (uint32_t[]){75, 150});
    assert_users(&c, 1, (uint32_t[]){25, 50});
    adopt(&c);
    c.cur[0][2] = c.cur[1][2] = 0;
    add_worker(&c, "w3", 300); /* back (empty): grants return */
    plan(&c);
    assert_int_equal(c.out[0].granted, 450);
    assert_int_equal(c.out[1].granted, 150);
    assert_users(&c, 0, (uint32_t[]){75, 150, 225});
}

/* A queue run granted less than it asks waits with nothing, and its share
 * goes to the other tenant; degrade runs with the grant instead. */
static void test_queue_and_degrade(void **state)
{
    (void)state;
    plan_case_t c;
    memset(&c, 0, sizeof c);
    add_worker(&c, "w1", 500);
    add_run(&c, 1, "A", 400, false, true);
    add_run(&c, 2, "B", 300, true, false);
    plan(&c);
    assert_int_equal(c.out[0].granted, 400);
    assert_int_equal(c.out[1].granted, 0);
    assert_true(c.out[1].queued);
    c.r[1].queue = false; /* degrade: equal weights, 250 each */
    plan(&c);
    assert_int_equal(c.out[0].granted, 250);
    assert_int_equal(c.out[1].granted, 250);
    assert_false(c.out[1].queued);
    c.r[1].queue = true;
    c.r[1].started = true; /* a started queue run is never preempted */
    plan(&c);
    assert_int_equal(c.out[1].granted, 250);
    c.r[1].started = false;
    c.w[0].capacity = 700; /* room for all of it: admitted */
    plan(&c);
    assert_int_equal(c.out[0].granted, 400);
    assert_int_equal(c.out[1].granted, 300);
    assert_false(c.out[1].queued);
}

/* Of two queue runs that do not both fit, the older starts. */
static void test_older_queue_run_first(void **state)
{
    (void)state;
    plan_case_t c;
    memset(&c, 0, sizeof c);
    add_worker(&c, "w1", 500);
    add_run(&c, 7, "A", 300, true, false);
    add_run(&c, 3, "A", 300, true, false);
    plan(&c);
    assert_int_equal(c.out[1].granted, 300);
    assert_int_equal(c.out[0].granted, 0);
    assert_true(c.out[0].queued);
    assert_users(&c, 1, (uint32_t[]){300});
}

static void test_no_workers_queues_everything(void **state)
{
    (void)state;
    plan_case_t c;
    memset(&c, 0, sizeof c);
    add_run(&c, 1, "A", 10, false, false);
    add_run(&c, 2, "B", 10, true, false);
    plan(&c);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(c.out[i].granted, 0);
        assert_true(c.out[i].queued);
    }
}


/* Random fleets ---------------------------------------------------------- */

/* xorshift64*: the same sequence on every libc, so a failure reproduces. */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

static uint32_t rng_below(uint64_t *s, uint32_t n)
{
    return n ? (uint32_t)(rng_next(s) % n) : 0;
}

/* Up to 8 workers (some with no capacity), up to 4 tenants (one absent from
 * the tenant list: weight 1), up to 6 runs of either policy, started or not,
 * and either no current assignment or a random one. */
static void random_case(plan_case_t *c, uint64_t *rng)
{
    static const char *tenants[] = {"t0", "t1", "t2", "t3"};
    memset(c, 0, sizeof *c);
    size_t nw = rng_below(rng, 9), nr = rng_below(rng, 7);
    uint32_t letter = rng_below(rng, 26); /* ids not in index order */
    for (size_t j = 0; j < nw; j++) {
        char id[3] = {'w', (char)('a' + (letter + 7 * j) % 26), '\0'};
        add_worker(c, id, rng_below(rng, 5) == 0 ? 0 : rng_below(rng, 400));
    }
    for (size_t t = 0; t < 3; t++)
        add_tenant(c, tenants[t], 1 + rng_below(rng, 5));
    bool with_current = rng_below(rng, 2);
    for (size_t i = 0; i < nr; i++) {
        add_run(c, 1 + rng_below(rng, 1000), tenants[rng_below(rng, 4)],
                1 + rng_below(rng, 600), rng_below(rng, 2), rng_below(rng, 2));
        c->r[i].created = rng_below(rng, 4); /* ties broken by id */
        for (size_t j = 0; j < nw && with_current; j++)
            c->cur[i][j] = rng_below(rng, 100);
    }
    for (size_t i = 0; i < nr; i++) /* ids must be unique */
        for (size_t k = 0; k < i; k++)
            if (c->r[k].id == c->r[i].id)
                c->r[i].id += 1000 * (i + 1);
}

static uint32_t weight_in(const plan_case_t *c, const char *tenant)
{
    for (size_t t = 0; t < c->nt; t++)
        if (strcmp(c->t[t].name, tenant) == 0)
            return c->t[t].weight;
    return 1;
}

/* A queue run that has not started is admitted only when granted in full. */
static bool admitted(const plan_case_t *c, size_t i)
{
    return !c->r[i].queue || c->r[i].started || c->out[i].granted == c->r[i].requested;
}

/* Sums, capacities, policies, and no more than asked. */
static void check_sums_and_policies(const plan_case_t *c)
{
    uint64_t load[MAXW] = {0}, capacity = 0, granted = 0, demand = 0;
    for (size_t i = 0; i < c->nr; i++) {
        uint64_t sum = 0;
        for (size_t j = 0; j < c->nw; j++) {
            sum += c->users[i][j];
            load[j] += c->users[i][j];
        }
        assert_int_equal(sum, c->out[i].granted);
        assert_true(c->out[i].granted <= c->r[i].requested);
        assert_int_equal(c->out[i].queued, !admitted(c, i) || c->out[i].granted == 0);
        if (c->r[i].queue && !c->r[i].started)
            assert_true(c->out[i].granted == 0 || c->out[i].granted == c->r[i].requested);
        granted += c->out[i].granted;
        demand += admitted(c, i) ? c->r[i].requested : 0;
    }
    for (size_t j = 0; j < c->nw; j++) {
        assert_true(load[j] <= c->w[j].capacity);
        capacity += c->w[j].capacity;
    }
    /* Work-conserving: all of the fleet, or all that admitted runs ask. */
    assert_int_equal(granted, demand < capacity ? demand : capacity);
}

/* Within one user of a common level λ: every constrained b (granted less
 * than asked) has g_b > λ w_b - 1 and everyone has g_a < λ w_a + 1 (a
 * satisfied tenant asked no more than the level), so for every a and
 * constrained b: (g_a - 1) / w_a < (g_b + 1) / w_b. */
static void check_level(const uint64_t *g, const uint64_t *d, const uint64_t *w, size_t n)
{
    for (size_t a = 0; a < n; a++)
        for (size_t b = 0; b < n; b++)
            if (a != b && g[b] < d[b] && d[a] > 0) /* kept unsigned: */
                assert_true(g[a] * w[b] < (g[b] + 1) * w[a] + w[b]);
}

/* Tenants follow their weights, and a tenant's admitted runs share equally. */
static void check_fairness(const plan_case_t *c)
{
    static const char *tenants[] = {"t0", "t1", "t2", "t3"};
    uint64_t g[MAXT] = {0}, d[MAXT] = {0}, w[MAXT];
    for (size_t t = 0; t < MAXT; t++) {
        w[t] = weight_in(c, tenants[t]);
        uint64_t rg[MAXR], rd[MAXR], rw[MAXR];
        size_t n = 0;
        for (size_t i = 0; i < c->nr; i++) {
            if (strcmp(c->r[i].tenant, tenants[t]) != 0 || !admitted(c, i))
                continue;
            g[t] += rg[n] = c->out[i].granted;
            d[t] += rd[n] = c->r[i].requested;
            rw[n++] = 1;
        }
        check_level(rg, rd, rw, n);
    }
    check_level(g, d, w, MAXT);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Oldest run first, each worker within one user of its exact share of the
 * free capacity older runs left. */
static void check_proportions(const plan_case_t *c)
{
    size_t order[MAXR], wo[MAXW];
    const char *ids[MAXW];
    uint64_t free_cap[MAXW];
    for (size_t j = 0; j < c->nw; j++)
        ids[j] = c->w[j].id;
    qsort(ids, c->nw, sizeof *ids, cmp_str);
    for (size_t k = 0; k < c->nw; k++)
        for (size_t j = 0; j < c->nw; j++)
            if (ids[k] == c->w[j].id)
                wo[k] = j;
    for (size_t i = 0; i < c->nr; i++) {
        size_t k = i;
        for (; k > 0 && (c->r[order[k - 1]].created > c->r[i].created ||
                         (c->r[order[k - 1]].created == c->r[i].created &&
                          c->r[order[k - 1]].id > c->r[i].id)); k--)
            order[k] = order[k - 1];
        order[k] = i;
    }
    for (size_t k = 0; k < c->nw; k++)
        free_cap[k] = c->w[wo[k]].capacity;
    for (size_t n = 0; n < c->nr; n++) {
        size_t i = order[n];
        uint64_t total = 0, grant = c->out[i].granted;
        for (size_t k = 0; k < c->nw; k++)
            total += free_cap[k];
        for (size_t k = 0; k < c->nw && grant > 0; k++) {
            uint64_t x = c->users[i][wo[k]], num = grant * free_cap[k];
            assert_true(x >= num / total && x <= (num + total - 1) / total);
            free_cap[k] -= x;
        }
    }
}

/* The same inputs in another order give the same plan. */
static void check_order_independence(const plan_case_t *c, uint64_t *rng)
{
    plan_case_t *s = calloc(1, sizeof *s);
    size_t pw[MAXW], pr[MAXR], pt[MAXT];
    size_t *perms[] = {pw, pr, pt}, sizes[] = {c->nw, c->nr, c->nt};
    for (size_t p = 0; p < 3; p++) {
        for (size_t k = 0; k < sizes[p]; k++)
            perms[p][k] = k;
        for (size_t k = sizes[p]; k > 1; k--) {
            size_t o = rng_below(rng, (uint32_t)k), tmp = perms[p][k - 1];
            perms[p][k - 1] = perms[p][o];
            perms[p][o] = tmp;
        }
    }
    s->nw = c->nw, s->nr = c->nr, s->nt = c->nt;
    for (size_t k = 0; k < c->nw; k++)
        s->w[k] = c->w[pw[k]];
    for (size_t k = 0; k < c->nt; k++)
        s->t[k] = c->t[pt[k]];
    for (size_t i = 0; i < c->nr; i++) {
        s->r[i] = c->r[pr[i]];
        for (size_t k = 0; k < c->nw; k++)
            s->cur[i][k] = c->cur[pr[i]][pw[k]];
    }
    plan(s);
    for (size_t i = 0; i < c->nr; i++) {
        assert_int_equal(s->out[i].granted, c->out[pr[i]].granted);
        assert_int_equal(s->out[i].queued, c->out[pr[i]].queued);
        for (size_t k = 0; k < c->nw; k++)
            assert_int_equal(s->users[i][k], c->users[pr[i]][pw[k]]);
    }
    free(s);
}

/* Planning again from what the plan assigned moves nobody. */
static void check_idempotent(plan_case_t *c)
{
    plan_case_t *again = malloc(sizeof *again);
    memcpy(again, c, sizeof *c);
    adopt(again);
    plan(again);
    for (size_t i = 0; i < c->nr; i++) {
        assert_int_equal(again->out[i].granted, c->out[i].granted);
        for (size_t j = 0; j < c->nw; j++)
            assert_int_equal(again->users[i][j], c->users[i][j]);
    }
    free(again);
}

/* One more worker joins a settled fleet (the current assignment is the last
 * plan). Per run, the users that change worker are min(users taken off the
 * old workers, users added anywhere), so users a grant change adds or
 * removes do not count. Its fair share is what the newcomer carries for the
 * run in the new plan (itself within one user of its exact share, checked
 * by check_proportions); rounding may round one old worker up where it was
 * rounded down before, hence: moved <= newcomer's users + 1, per run. */
static void check_add_worker(const plan_case_t *c, uint64_t *rng)
{
    if (c->nw == MAXW)
        return;
    plan_case_t *n = malloc(sizeof *n);
    memcpy(n, c, sizeof *c);
    adopt(n);
    size_t nw = n->nw;
    for (size_t i = 0; i < n->nr; i++)
        n->cur[i][nw] = 0;
    add_worker(n, "wnew", 1 + rng_below(rng, 400));
    plan(n);
    check_sums_and_policies(n);
    check_proportions(n);
    for (size_t i = 0; i < n->nr; i++) {
        uint64_t lost = 0, gained = 0;
        for (size_t j = 0; j < n->nw; j++) {
            if (n->cur[i][j] > n->users[i][j])
                lost += n->cur[i][j] - n->users[i][j];
            else
                gained += n->users[i][j] - n->cur[i][j];
        }
        uint64_t moved = lost < gained ? lost : gained;
        assert_true(moved <= (uint64_t)n->users[i][nw] + 1);
    }
    free(n);
}

/* 20,000 random fleets and demands, seeded: every property on each. */
static void test_random_plans(void **state)
{
    (void)state;
    uint64_t rng = 0x5eed5eed12345ull;
    plan_case_t *c = malloc(sizeof *c);
    for (int round = 0; round < 20000; round++) {
        random_case(c, &rng);
        plan(c);
        check_sums_and_policies(c);
        check_fairness(c);
        check_proportions(c);
        check_order_independence(c, &rng);
        check_idempotent(c);
        check_add_worker(c, &rng);
    }
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_proportional_split),
        cmocka_unit_test(test_zero_weights_split_evenly),
        cmocka_unit_test(test_random_sums_and_bounds),
        cmocka_unit_test(test_issue_case),
        cmocka_unit_test(test_worker_lost_moves_nothing_else),
        cmocka_unit_test(test_queue_and_degrade),
        cmocka_unit_test(test_older_queue_run_first),
        cmocka_unit_test(test_no_workers_queues_everything),
        cmocka_unit_test(test_random_plans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
