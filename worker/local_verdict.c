/* local_verdict.c — thresholds of a --local run from its counters. */
#include "local_verdict.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_threshold.h"

/* The counters a threshold looks at: one endpoint's, or the whole run's in *total. */
static const worker_ep_stats_t *scope_of(const worker_run_t *r, const char *endpoint,
                                         const worker_ep_stats_t *total)
{
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
    worker_ep_stats_t *total = malloc(sizeof *total);
    *passed = true;
    if (results == NULL || total == NULL) {
        free(total);
        json_decref(results);
        return NULL;
    }
    worker_stats_total(r->acc, worker_plan_requests(r->plan), total);
    for (size_t i = 0; i < sc->n_thresholds; i++) {
        const lc_threshold_t *t = &sc->thresholds[i];
        const worker_ep_stats_t *e = scope_of(r, t->endpoint, total);
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
            snprintf(where, sizeof where, "{endpoint:%s}", json_string_value(ep));
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
