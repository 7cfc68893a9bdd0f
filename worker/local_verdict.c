/* local_verdict.c — thresholds of a --local run from its counters. */
#include "local_verdict.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_threshold.h"

/* Every series of method (iterations or groups) summed into *out. */
static const worker_ep_stats_t *series_sum(const worker_run_t *r, const char *method,
                                           worker_ep_stats_t *out)
{
    memset(out, 0, sizeof *out);
    lc_hist_init(&out->hist);
    for (size_t i = 0; i < r->plan->n_endpoints && i < r->acc->n; i++) {
        const worker_ep_stats_t *e = &r->acc->ep[i];
        if (strcmp(r->plan->endpoints[i].method, method) != 0)
            continue;
        out->count += e->count;
        out->failures += e->failures;
        lc_hist_merge(&out->hist, &e->hist);
    }
    return out;
}

/* A checks threshold's counters: the check named by series ("check:NAME") or every one. */
static const worker_ep_stats_t *checks_sum(const worker_run_t *r, const char *series,
                                           worker_ep_stats_t *out)
{
    const char *name = series != NULL ? strchr(series, ':') + 1 : NULL;
    const worker_checks_t *cs = r->acc->checks;
    memset(out, 0, sizeof *out);
    lc_hist_init(&out->hist);
    for (size_t i = 0; cs != NULL && i < cs->n; i++) {
        if (name != NULL && strcmp(cs->c[i].name, name) != 0)
            continue;
        out->count += cs->c[i].passed + cs->c[i].failed;
        out->failures += cs->c[i].failed;
    }
    return out;
}

/* The counters a threshold looks at: one series', the requests' in *total, or (unfiltered
 * iteration or group durations) every such series' summed into *scratch. */
static const worker_ep_stats_t *scope_of(const worker_run_t *r, const lc_threshold_t *t,
                                         const worker_ep_stats_t *total,
                                         worker_ep_stats_t *scratch)
{
    const char *endpoint = t->endpoint;
    if (t->metric == LC_METRIC_CHECKS)
        return checks_sum(r, endpoint, scratch);
    if (endpoint == NULL && lc_metric_series_method(t->metric) != NULL)
        return series_sum(r, lc_metric_series_method(t->metric), scratch);
    if (endpoint == NULL)
        return total;
    for (size_t i = 0; i < r->plan->n_endpoints && i < r->acc->n; i++)
        if (strcmp(r->plan->endpoints[i].name, endpoint) == 0)
            return &r->acc->ep[i];
    assert(!"a threshold on an unknown endpoint: the scenario parser checks the names");
    return NULL;
}

json_t *local_verdict(const worker_run_t *r, double secs, bool *passed)
{
    const lc_scenario_t *sc = &r->plan->scenario;
    json_t *results = json_array();
    worker_ep_stats_t *total = malloc(2 * sizeof *total); /* the requests', then scratch */
    *passed = true;
    if (results == NULL || total == NULL) {
        free(total);
        json_decref(results);
        return NULL;
    }
    worker_stats_total(r->acc, worker_plan_requests(r->plan), total);
    for (size_t i = 0; i < sc->n_thresholds; i++) {
        const lc_threshold_t *t = &sc->thresholds[i];
        const worker_ep_stats_t *e = scope_of(r, t, total, total + 1);
        double observed = 0;
        bool has_data = false;
        if (e != NULL) {
            lc_threshold_data_t d = {e->count, e->failures, &e->hist, secs};
            has_data = lc_threshold_observe(t, &d, &observed);
        }
        bool ok = has_data && lc_threshold_holds(t, observed);
        *passed = *passed && ok;
        json_array_append_new(results, lc_threshold_result_json(t, has_data, observed, ok));
    }
    free(total);
    return results;
}

void local_verdict_print(FILE *out, const json_t *results)
{
    size_t i, n = json_array_size(results), failed = 0;
    const json_t *res;
    if (n == 0)
        return;
    json_array_foreach(results, i, res)
        failed += !json_is_true(json_object_get(res, "passed"));
    fprintf(out, "\nThresholds: %zu of %zu passed\n", n - failed, n);
    json_array_foreach(results, i, res) {
        const json_t *ep = json_object_get(res, "endpoint");
        const json_t *obs = json_object_get(res, "observed");
        char where[200] = "";
        if (json_is_string(ep))
            lc_threshold_filter_text(json_string_value(json_object_get(res, "metric")),
                                     json_string_value(ep), where, sizeof where);
        fprintf(out, "  %s %s%s %s  observed ",
                json_is_true(json_object_get(res, "passed")) ? "ok  " : "FAIL",
                json_string_value(json_object_get(res, "metric")), where,
                json_string_value(json_object_get(res, "expression")));
        if (json_is_number(obs))
            fprintf(out, "%g\n", json_number_value(obs));
        else
            fprintf(out, "no data\n");
    }
}
