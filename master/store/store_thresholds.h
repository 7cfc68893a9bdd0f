/* store_thresholds.h — what threshold evaluation reads from the store (a run's
 * request totals and merged latency, all endpoints or one) and the results
 * kept with a finished run. */
#ifndef MASTER_STORE_THRESHOLDS_H
#define MASTER_STORE_THRESHOLDS_H

#include <jansson.h>
#include <stdint.h>

#include "lc_hist.h"
#include "store.h"

/* The table the summaries live in; store.c's schema creates it (a table of
 * its own, so databases restored from older snapshots need no migration). */
#define STORE_RUN_SUMMARIES_SQL                                                                    \
    "CREATE TABLE IF NOT EXISTS run_summaries(run INTEGER PRIMARY KEY,"                            \
    " summary_json TEXT NOT NULL);"

/* Sums run's per-endpoint totals, of the series named endpoint, or (endpoint NULL) of
 * every series with that method ("ITERATION", "GROUP"), or of every request series (both
 * NULL): OUT: *count, *failures; the histograms (µs) are merged into h. Returns 0 (zeros
 * when there is nothing yet) or LC_EIO. */
int store_threshold_totals(store_t *s, uint64_t run, const char *endpoint, const char *method,
                           uint64_t *count, uint64_t *failures, lc_hist_t *h);

/* Sums run's script check counts, of the check named name or (NULL) of every one.
 * Returns 0 (zeros when there is none) or LC_EIO. */
int store_check_totals(store_t *s, uint64_t run, const char *name, uint64_t *passed,
                       uint64_t *failed);

/* For store.c's apply of RunFinished (inside its transaction): keeps
 * c->summary_json with the run when it is not empty. Returns 0 or LC_EIO. */
int store_apply_run_summary(store_t *s, const Lc__RunFinished *c);

/* The per-threshold results kept with run (the "thresholds" member of its
 * RunFinished summary_json), a new reference: an array, empty while the run
 * is not over or when its scenario has no thresholds. */
json_t *store_run_thresholds_json(store_t *s, uint64_t run);

#endif
