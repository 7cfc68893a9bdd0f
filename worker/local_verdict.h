/* local_verdict.h — any thread (pure): the thresholds of a `loadworker --local` run,
 * judged from its merged counters the way the master judges a cluster run. */
#ifndef WORKER_LOCAL_VERDICT_H
#define WORKER_LOCAL_VERDICT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "control.h"

/* The run's threshold results (the master's run view "thresholds" shape),
 * an empty array when the scenario has none, NULL without memory; *passed
 * is false when one failed or had no data. */
json_t *local_verdict(const worker_run_t *r, double secs, bool *passed);

/* "Thresholds: N of M passed" and a line per threshold ("ok"/"FAIL"). */
void local_verdict_print(FILE *out, const json_t *results);

#endif
