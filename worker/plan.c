/* plan.c — compiles a scenario into the shared, read-only plan of a run. */
#include "plan.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lc_err.h"
#include "lc_lua_check.h"
#include "rng.h"

static bool task_sets_header(const lc_task_t *t, const char *name)
{
    for (size_t i = 0; i < t->n_headers; i++)
        if (strcasecmp(t->headers[i].name, name) == 0)
            return true;
    return false;
}

static int render_host(const lc_url_t *url, lc_buf_t *b)
{
    const lc_hostport_t *hp = &url->hp;
    bool v6 = strchr(hp->host, ':') != NULL;
    bool default_port = hp->port == (url->tls ? 443 : 80);
    int rv = lc_buf_appendf(b, "Host: %s%s%s", v6 ? "[" : "", hp->host, v6 ? "]" : "");
    if (rv == 0 && !default_port)
        rv = lc_buf_appendf(b, ":%u", hp->port);
    return rv == 0 ? lc_buf_append(b, "\r\n", 2) : rv;
}

/* " HTTP/1.1\r\nHost: …\r\nUser-Agent: …\r\n<task headers>" */
static int render_head2(const lc_scenario_t *sc, const lc_task_t *t, lc_buf_t *b)
{
    int rv = lc_buf_append(b, " HTTP/1.1\r\n", 11);
    if (rv == 0) /* lc_scenario_parse refuses a task's own Host */
        rv = render_host(&sc->url, b);
    if (rv == 0 && !task_sets_header(t, "User-Agent"))
        rv = lc_buf_appendf(b, "User-Agent: loadcluster/%s\r\n", LC_VERSION);
    for (size_t i = 0; rv == 0 && i < t->n_headers; i++)
        rv = lc_buf_appendf(b, "%s: %s\r\n", t->headers[i].name, t->headers[i].value);
    char accept[LC_CODINGS_HEADER_MAX];
    size_t len = lc_codings_header(&t->compression, accept);
    return rv == 0 ? lc_buf_append(b, accept, len) : rv;
}

/* Renders head1 + path + head2 + [Content-Length + body] into out. */
static int render_dynamic(const worker_task_plan_t *tp, const worker_tpl_vars_t *vars,
                          lc_buf_t *scratch, lc_buf_t *out)
{
    int rv;
    out->len = 0;
    if ((rv = lc_buf_append(out, tp->head1.data, tp->head1.len)) != 0 ||
        (rv = worker_tpl_render(&tp->path, vars, out)) != 0 ||
        (rv = lc_buf_append(out, tp->head2.data, tp->head2.len)) != 0)
        return rv;
    if (!tp->has_body)
        return lc_buf_append(out, "\r\n", 2);
    scratch->len = 0;
    if ((rv = lc_buf_append(scratch, "", 0)) != 0 ||
        (rv = worker_tpl_render(&tp->body, vars, scratch)) != 0 ||
        (rv = lc_buf_appendf(out, "Content-Length: %zu\r\n\r\n", scratch->len)) != 0)
        return rv;
    return lc_buf_append(out, scratch->data, scratch->len);
}

/* Writes the whole request of a task without templates once. */
static int prerender(worker_task_plan_t *tp)
{
    worker_tpl_vars_t none = {0};
    lc_buf_t scratch = {0};
    int rv = render_dynamic(tp, &none, &scratch, &tp->fixed);
    lc_buf_free(&scratch);
    return rv;
}

static int compile_task(const lc_scenario_t *sc, const lc_task_t *t, worker_task_plan_t *tp,
                        char *errmsg, size_t errlen)
{
    char sub[160];
    int rv;
    tp->task = t;
    tp->head = strcmp(t->method, "HEAD") == 0;
    if ((rv = lc_buf_appendf(&tp->head1, "%s %s", t->method, sc->url.base_path)) != 0 ||
        (rv = render_head2(sc, t, &tp->head2)) != 0)
        return rv;
    if ((rv = worker_tpl_compile(&tp->path, t->path, sub, sizeof sub)) != 0) {
        snprintf(errmsg, errlen, "path: %s", sub);
        return rv;
    }
    tp->has_body = t->body != NULL;
    if (tp->has_body && (rv = worker_tpl_compile(&tp->body, t->body, sub, sizeof sub)) != 0) {
        snprintf(errmsg, errlen, "body: %s", sub);
        return rv;
    }
    tp->dynamic = tp->path.dynamic || (tp->has_body && tp->body.dynamic);
    return tp->dynamic ? 0 : prerender(tp);
}

/* One endpoint per distinct task name, so two tasks with one name share counters. */
static int assign_endpoints(worker_plan_t *p)
{
    p->endpoints = calloc(p->n_tasks, sizeof *p->endpoints);
    if (p->endpoints == NULL)
        return LC_ENOMEM;
    for (size_t i = 0; i < p->n_tasks; i++) {
        const lc_task_t *t = p->tasks[i].task;
        size_t e = 0;
        while (e < p->n_endpoints && strcmp(p->endpoints[e].name, t->name) != 0)
            e++;
        if (e == p->n_endpoints) {
            p->endpoints[e].name = t->name;
            p->endpoints[e].method = t->method;
            p->n_endpoints++;
        }
        p->tasks[i].endpoint = e;
    }
    return 0;
}

/* FNV-1a of both names: a seed every worker computes alike. */
static uint64_t seed_of(const char *a, const char *b)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const char *s = a; *s != '\0'; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    h = (h ^ '/') * 0x100000001b3ULL;
    for (const char *s = b; *s != '\0'; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return h != 0 ? h : 1;
}

void worker_plan_slice_feeds(worker_plan_t *p, uint64_t user_base, uint32_t users)
{
    const lc_program_t *prog = p->program;
    const lc_scenario_t *sc = &p->scenario;
    uint64_t run_users = sc->arrival_rate > 0 ? sc->max_users : sc->users;
    for (size_t f = 0; prog != NULL && run_users > 0 && f < prog->n_feeders; f++) {
        const lc_feeder_t *fd = &prog->feeders[f];
        if (p->feeds[f].stock != NULL)
            continue; /* the leader hands out its rows */
        if (fd->on_exhausted == LC_FEED_WRAP && fd->table.n_rows < run_users)
            continue; /* rows repeat anyway: every worker walks them all */
        uint64_t n = fd->table.n_rows, off = user_base % run_users;
        uint64_t end = off + users > run_users ? run_users : off + users;
        p->feeds[f].first = (uint32_t)(off * n / run_users);
        p->feeds[f].count = (uint32_t)(end * n / run_users - off * n / run_users);
    }
}

int worker_plan_lease_feeds(worker_plan_t *p)
{
    const lc_program_t *prog = p->program;
    for (size_t f = 0; prog != NULL && f < prog->n_feeders; f++) {
        if (!lc_feeder_leased(&prog->feeders[f]) || p->feeds[f].stock != NULL)
            continue;
        worker_stock_t *s = malloc(sizeof *s);
        if (s == NULL || worker_stock_init(s) != 0) {
            free(s);
            return LC_ENOMEM;
        }
        p->feeds[f].stock = s;
    }
    return 0;
}

/* Every feeder's rows, whole until the master hands out slices (worker_plan_slice_feeds);
 * shuffle orders get their permutation once per run. */
static int build_feeds(worker_plan_t *p)
{
    const lc_program_t *prog = p->program;
    /* The same order on every worker (per-user rows are indexed by ${user_id}): seeded by
     * the scenario's and the feeder's names. */
    uint64_t rng = 0x9E3779B97F4A7C15ULL;
    p->feeds = calloc(prog->n_feeders ? prog->n_feeders : 1, sizeof *p->feeds);
    if (p->feeds == NULL)
        return LC_ENOMEM;
    for (size_t f = 0; f < prog->n_feeders; f++) {
        worker_feed_t *fd = &p->feeds[f];
        fd->count = (uint32_t)prog->feeders[f].table.n_rows;
        if (prog->feeders[f].order != LC_FEED_SHUFFLE)
            continue;
        rng = seed_of(p->scenario.name, prog->feeders[f].name);
        if ((fd->perm = malloc(fd->count * sizeof *fd->perm)) == NULL)
            return LC_ENOMEM;
        for (uint32_t i = 0; i < fd->count; i++)
            fd->perm[i] = i;
        for (uint32_t i = fd->count; i > 1; i--) { /* Fisher-Yates */
            uint32_t j = (uint32_t)(worker_rng_next(&rng) % i);
            uint32_t t = fd->perm[i - 1];
            fd->perm[i - 1] = fd->perm[j];
            fd->perm[j] = t;
        }
    }
    return 0;
}

/* Journeys: the endpoints are the program's requests, then its timers (iterations and
 * groups), each a series of the run's statistics. */
static int build_journeys(worker_plan_t *p)
{
    const lc_program_t *prog = p->scenario.program;
    size_t n = lc_scenario_series_count(&p->scenario);
    p->program = prog;
    p->endpoints = calloc(n, sizeof *p->endpoints);
    p->jreqs = calloc(prog->n_reqs ? prog->n_reqs : 1, sizeof *p->jreqs);
    if (p->endpoints == NULL || p->jreqs == NULL)
        return LC_ENOMEM;
    for (size_t i = 0; i < n; i++)
        lc_scenario_series_at(&p->scenario, i, &p->endpoints[i].name, &p->endpoints[i].method);
    p->n_endpoints = n;
    p->first_timer = prog->n_endpoints;
    for (size_t i = 0; i < prog->n_reqs; i++) {
        const lc_jreq_t *r = &prog->reqs[i];
        worker_jreq_plan_t *jp = &p->jreqs[i];
        size_t k = 0;
        if (r->cookies)
            jp->want_names[k++] = "set-cookie";
        if (r->follow_redirects > 0)
            jp->want_names[k++] = "location";
        for (size_t x = 0; x < r->n_extracts; x++)
            if (r->extracts[x].kind == LC_EXTRACT_HEADER)
                jp->want_names[k++] = r->extracts[x].name; /* lowercased by the compiler */
        if (r->needs_body) /* asked for or not: a body is read as its coding says */
            jp->want_names[k++] = "content-encoding";
        jp->accept_len = lc_codings_header(&r->compression, jp->accept);
        for (size_t w = 0; w < k; w++)
            jp->want_lens[w] = strlen(jp->want_names[w]);
        jp->want = (worker_hdr_want_t){.names = jp->want_names, .lens = jp->want_lens, .n = k};
        for (size_t h = 0; h < r->n_headers; h++)
            jp->sets_user_agent |= strcasecmp(r->headers[h].name, "User-Agent") == 0;
    }
    return build_feeds(p);
}

/* Every origin's Host line and, for https, its TLS client; addresses come later. */
static int build_origins(worker_plan_t *p, char *errmsg, size_t errlen)
{
    const lc_origins_t *o = &p->scenario.origins;
    if ((p->origins = calloc(o->n ? o->n : 1, sizeof *p->origins)) == NULL)
        return LC_ENOMEM;
    p->n_origins = o->n;
    for (size_t i = 0; i < o->n; i++) {
        worker_origin_t *wo = &p->origins[i];
        wo->def = &o->at[i];
        int rv = render_host(&wo->def->url, &wo->host_line);
        if (rv == 0 && wo->def->url.tls)
            rv = worker_tls_new(&wo->tls, &p->scenario, wo->def->url.hp.host, errmsg, errlen);
        if (rv != 0)
            return rv;
    }
    return 0;
}

/* The master checked the script before it accepted the run; a worker checks it again (a
 * --local run has no master), on the control thread, so an engine's sandbox loads it. */
static int build_script(worker_plan_t *p, char *errmsg, size_t errlen)
{
    int rv = lc_lua_check_scenario(&p->scenario, errmsg, errlen);
    if (rv != 0)
        return rv == LC_ENOMEM ? LC_EINVAL : rv; /* over the sandbox's cap: the script's */
    return lc_lua_scenario_modules(&p->scenario, &p->lua_modules, &p->n_lua_modules);
}

int worker_plan_build(worker_plan_t **out, lc_scenario_t *sc, char *errmsg, size_t errlen)
{
    worker_plan_t *p = calloc(1, sizeof *p);
    if (p == NULL)
        return LC_ENOMEM;
    p->scenario = *sc;
    memset(sc, 0, sizeof *sc);
    p->n_tasks = p->scenario.n_tasks;
    p->tasks = calloc(p->n_tasks ? p->n_tasks : 1, sizeof *p->tasks);
    p->cum_weights = calloc(p->n_tasks ? p->n_tasks : 1, sizeof *p->cum_weights);
    int rv = p->tasks && p->cum_weights ? 0 : LC_ENOMEM;
    for (size_t i = 0; rv == 0 && i < p->n_tasks; i++) {
        char sub[200];
        sub[0] = '\0';
        rv = compile_task(&p->scenario, &p->scenario.tasks[i], &p->tasks[i], sub, sizeof sub);
        if (rv == LC_EINVAL)
            snprintf(errmsg, errlen, "tasks[%zu].%s", i, sub);
        p->total_weight += p->scenario.tasks[i].weight ? p->scenario.tasks[i].weight : 1;
        p->cum_weights[i] = p->total_weight;
    }
    if (rv == 0)
        rv = p->scenario.program ? build_journeys(p) : assign_endpoints(p);
    if (rv == 0)
        rv = build_origins(p, errmsg, errlen);
    if (rv == 0 && p->scenario.script != NULL)
        rv = build_script(p, errmsg, errlen);
    if (rv != 0) {
        if (rv == LC_ENOMEM)
            snprintf(errmsg, errlen, "out of memory");
        worker_plan_free(p);
        return rv;
    }
    *out = p;
    return 0;
}

void worker_plan_free(worker_plan_t *p)
{
    if (p == NULL)
        return;
    for (size_t i = 0; p->tasks && i < p->n_tasks; i++) {
        worker_task_plan_t *tp = &p->tasks[i];
        lc_buf_free(&tp->fixed);
        lc_buf_free(&tp->head1);
        lc_buf_free(&tp->head2);
        worker_tpl_free(&tp->path);
        worker_tpl_free(&tp->body);
    }
    free(p->tasks);
    free(p->cum_weights);
    free(p->endpoints);
    free(p->jreqs);
    for (size_t f = 0; p->feeds && p->program && f < p->program->n_feeders; f++) {
        free(p->feeds[f].perm);
        worker_stock_close(p->feeds[f].stock);
        free(p->feeds[f].stock);
    }
    free(p->feeds);
    free(p->lua_modules);
    for (size_t i = 0; p->origins && i < p->n_origins; i++) {
        lc_buf_free(&p->origins[i].host_line);
        worker_tls_free(p->origins[i].tls);
    }
    free(p->origins);
    lc_scenario_free(&p->scenario);
    free(p);
}

size_t worker_plan_requests(const worker_plan_t *p)
{
    return p->program != NULL ? p->first_timer : p->n_endpoints;
}

size_t worker_plan_pick(const worker_plan_t *p, uint64_t *rng)
{
    if (p->n_tasks <= 1)
        return 0;
    uint64_t r = worker_rng_next(rng) % p->total_weight;
    size_t lo = 0, hi = p->n_tasks - 1;
    while (lo < hi) { /* first i with cum_weights[i] > r */
        size_t mid = lo + (hi - lo) / 2;
        if (p->cum_weights[mid] > r)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

int worker_plan_render(const worker_plan_t *p, size_t i, const worker_tpl_vars_t *vars,
                       lc_buf_t *scratch, lc_buf_t *out, const char **req,
                       size_t *len)
{
    const worker_task_plan_t *tp = &p->tasks[i];
    if (!tp->dynamic) {
        *req = tp->fixed.data;
        *len = tp->fixed.len;
        return 0;
    }
    int rv = render_dynamic(tp, vars, scratch, out);
    *req = out->data;
    *len = out->len;
    return rv;
}
