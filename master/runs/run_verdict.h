/* run_verdict.h — judging a run against its scenario's k6-style thresholds:
 * at the end (verdict and per-threshold results) and, while it runs, the
 * thresholds flagged abortOnFail. */
#ifndef MASTER_RUN_VERDICT_H
#define MASTER_RUN_VERDICT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lc_scenario.h"
#include "store.h"

/* The prefix of the stop reason of a run aborted by a threshold. */
#define RUN_THRESHOLD_ABORT_PREFIX "threshold failed: "

/* Judges every threshold of sc on the run's totals as they are now: writes
 * "pass" or "fail" into verdict ("" when sc has none). OUT: *summary_json,
 * malloc'd {"thresholds": [{"metric", "endpoint", "expression", "observed",
 * "passed", "abort_on_fail"}]} for RunFinished, NULL without thresholds. A run
 * aborted by a threshold (its stop reason says so) fails, and so does that
 * threshold whatever the final figures say. */
void run_verdict(store_t *store, uint64_t run, const lc_scenario_t *sc, char *verdict, size_t len,
                 char **summary_json);

/* True when a threshold flagged abortOnFail whose delayAbortEval has passed
 * (elapsed_ms since the run started) fails on the totals so far; why then
 * reads "threshold failed: <metric>[{endpoint:NAME}] <expression> (observed
 * <value>)". A threshold with no data yet is not judged. */
bool run_thresholds_should_abort(store_t *store, uint64_t run, const lc_scenario_t *sc,
                                 uint64_t elapsed_ms, char *why, size_t len);

/* The results array as run_verdict stores it (a new reference), judged over
 * elapsed_ms; *all_passed tells whether every threshold passed. A threshold
 * without data (no requests, no latencies) fails with "observed": null. */
json_t *run_thresholds_eval(store_t *store, uint64_t run, const lc_scenario_t *sc,
                            uint64_t elapsed_ms, bool *all_passed);

#endif
