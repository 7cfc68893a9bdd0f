/* run_verdict.c — p95 and error-rate thresholds over a run's totals. */
#include "run_verdict.h"

#include <stdbool.h>
#include <stdio.h>

#include "lc_clock.h"

void run_verdict(store_t *store, uint64_t run, const lc_scenario_t *sc, char *verdict, size_t len)
{
    bool has_p95 = sc->thresholds.p95_ms >= 0, has_errors = sc->thresholds.error_rate >= 0;
    snprintf(verdict, len, "%s", "");
    if (!has_p95 && !has_errors)
        return;
    json_t *view = store_run_json(store, run, lc_wall_ms());
    json_t *totals = json_object_get(view, "totals");
    double requests = json_number_value(json_object_get(totals, "requests"));
    double failures = json_number_value(json_object_get(totals, "failures"));
    json_t *p95 = json_object_get(json_object_get(totals, "latency_ms"), "p95");
    bool pass = true;
    if (has_p95 && (!json_is_number(p95) || json_number_value(p95) > sc->thresholds.p95_ms))
        pass = false;
    if (has_errors && (requests == 0 || failures / requests > sc->thresholds.error_rate))
        pass = false;
    snprintf(verdict, len, "%s", pass ? "pass" : "fail");
    json_decref(view);
}
