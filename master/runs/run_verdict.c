/* run_verdict.c — evaluates k6-style thresholds over a run's totals, per run
 * and per endpoint: the verdict at the end, abortOnFail while it runs. */
#include "run_verdict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_clock.h"
#include "lc_hist.h"
#include "lc_log.h"
#include "store_thresholds.h"

/* The totals of the whole run (endpoint NULL) or of one endpoint, loaded once per evaluation. */
typedef struct scope_s {
    const char *endpoint;
    const char *method;   /* with endpoint NULL: the series method summed (NULL: requests) */
    uint64_t count, failures;
    lc_hist_t *hist;
} scope_t;

typedef struct eval_s {
    store_t *store;
    uint64_t run;
    double elapsed_s;
    scope_t scopes[LC_THRESHOLDS_MAX + 1];
    size_t n_scopes;
} eval_t;

static void eval_init(eval_t *ev, store_t *store, uint64_t run, uint64_t elapsed_ms)
{
    ev->store = store;
    ev->run = run;
    ev->elapsed_s = (double)elapsed_ms / 1000.0;
    ev->n_scopes = 0;
}

static void eval_free(eval_t *ev)
{
    for (size_t i = 0; i < ev->n_scopes; i++)
        free(ev->scopes[i].hist);
    ev->n_scopes = 0;
}

static bool same_endpoint(const char *a, const char *b)
{
    return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

/* The scope of endpoint (or of every series of method), read from the store the first
 * time; NULL when that fails. */
static scope_t *scope_of(eval_t *ev, const char *endpoint, const char *method)
{
    for (size_t i = 0; i < ev->n_scopes; i++)
        if (same_endpoint(ev->scopes[i].endpoint, endpoint) &&
            same_endpoint(ev->scopes[i].method, method))
            return &ev->scopes[i];
    if (ev->n_scopes == sizeof ev->scopes / sizeof ev->scopes[0])
        return NULL;
    scope_t *sc = &ev->scopes[ev->n_scopes];
    sc->endpoint = endpoint;
    sc->method = method;
    if ((sc->hist = malloc(sizeof *sc->hist)) == NULL)
        return NULL;
    lc_hist_init(sc->hist);
    if (store_threshold_totals(ev->store, ev->run, endpoint, method, &sc->count, &sc->failures,
                               sc->hist) != 0) {
        free(sc->hist);
        return NULL;
    }
    ev->n_scopes++;
    return sc;
}

/* The value the threshold's aggregation observes; false when there is no data for it. */
static bool observe(eval_t *ev, const lc_threshold_t *t, double *out)
{
    if (t->metric == LC_METRIC_CHECKS) {
        uint64_t passed = 0, failed = 0;
        const char *name = t->endpoint != NULL ? strchr(t->endpoint, ':') + 1 : NULL;
        if (store_check_totals(ev->store, ev->run, name, &passed, &failed) != 0)
            return false;
        lc_threshold_data_t d = {passed + failed, failed, NULL, ev->elapsed_s};
        return lc_threshold_observe(t, &d, out);
    }
    scope_t *sc = scope_of(ev, t->endpoint, t->endpoint ? NULL : lc_metric_series_method(t->metric));
    if (sc == NULL)
        return false;
    lc_threshold_data_t d = {sc->count, sc->failures, sc->hist, ev->elapsed_s};
    return lc_threshold_observe(t, &d, out);
}

json_t *run_thresholds_eval(store_t *store, uint64_t run, const lc_scenario_t *sc,
                            uint64_t elapsed_ms, bool *all_passed)
{
    eval_t *ev = malloc(sizeof *ev);
    json_t *results = json_array();
    *all_passed = true;
    if (ev == NULL || results == NULL) {
        free(ev);
        json_decref(results);
        return NULL;
    }
    eval_init(ev, store, run, elapsed_ms);
    for (size_t i = 0; i < sc->n_thresholds; i++) {
        const lc_threshold_t *t = &sc->thresholds[i];
        double observed = 0;
        bool has_data = observe(ev, t, &observed);
        bool passed = has_data && lc_threshold_holds(t, observed);
        *all_passed = *all_passed && passed;
        json_array_append_new(results, lc_threshold_result_json(t, has_data, observed, passed));
    }
    eval_free(ev);
    free(ev);
    return results;
}

/* Marks the threshold named in an abort reason as failed (its figures may have
 * recovered in the last second); false when reason is not a threshold's. */
static bool mark_aborting(const lc_scenario_t *sc, const char *reason, json_t *results)
{
    size_t plen = strlen(RUN_THRESHOLD_ABORT_PREFIX);
    if (strncmp(reason, RUN_THRESHOLD_ABORT_PREFIX, plen) != 0)
        return false;
    char label[512];
    for (size_t i = 0; i < sc->n_thresholds; i++) {
        lc_threshold_label(&sc->thresholds[i], label, sizeof label);
        size_t n = strlen(label);
        if (strncmp(reason + plen, label, n) == 0 && strncmp(reason + plen + n, " (", 2) == 0)
            json_object_set_new(json_array_get(results, i), "passed", json_false());
    }
    return true;
}

void run_verdict(store_t *store, uint64_t run, const lc_scenario_t *sc, char *verdict, size_t len,
                 char **summary_json)
{
    snprintf(verdict, len, "%s", "");
    *summary_json = NULL;
    if (sc->n_thresholds == 0)
        return;
    store_run_t row;
    uint64_t now = lc_wall_ms(), elapsed = 0;
    bool aborted = false, passed;
    json_t *results = NULL;
    if (store_run_get(store, run, &row) == 0) {
        elapsed = row.started_ms != 0 && now > row.started_ms ? now - row.started_ms : 0;
        results = run_thresholds_eval(store, run, sc, elapsed, &passed);
        aborted = results != NULL && mark_aborting(sc, row.reason, results);
        store_run_free(&row);
    }
    if (results == NULL) {
        lc_error("verdict", "msg=\"cannot evaluate thresholds\" run=%llu", (unsigned long long)run);
        snprintf(verdict, len, "%s", "fail");
        return;
    }
    snprintf(verdict, len, "%s", passed && !aborted ? "pass" : "fail");
    json_t *summary = json_pack("{s:o}", "thresholds", results);
    *summary_json = summary ? json_dumps(summary, JSON_COMPACT) : NULL;
    json_decref(summary);
}

bool run_thresholds_should_abort(store_t *store, uint64_t run, const lc_scenario_t *sc,
                                 uint64_t elapsed_ms, char *why, size_t len)
{
    char label[512];
    eval_t *ev = NULL;
    bool abort = false;
    for (size_t i = 0; i < sc->n_thresholds && !abort; i++) {
        const lc_threshold_t *t = &sc->thresholds[i];
        if (!t->abort_on_fail || elapsed_ms < t->delay_abort_eval_ms)
            continue;
        if (ev == NULL) {
            if ((ev = malloc(sizeof *ev)) == NULL)
                return false;
            eval_init(ev, store, run, elapsed_ms);
        }
        double observed;
        if (!observe(ev, t, &observed) || lc_threshold_holds(t, observed))
            continue;
        lc_threshold_label(t, label, sizeof label);
        snprintf(why, len, RUN_THRESHOLD_ABORT_PREFIX "%s (observed %g)", label, observed);
        abort = true;
    }
    if (ev != NULL)
        eval_free(ev);
    free(ev);
    return abort;
}
