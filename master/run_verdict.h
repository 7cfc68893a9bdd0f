/* run_verdict.h — judging a finished run against its scenario's thresholds. */
#ifndef MASTER_RUN_VERDICT_H
#define MASTER_RUN_VERDICT_H

#include <stddef.h>
#include <stdint.h>

#include "lc_scenario.h"
#include "store.h"

/* Writes "pass" or "fail" into verdict, or "" when the scenario sets no
 * threshold. Reads the run's totals from the store. */
void run_verdict(store_t *store, uint64_t run, const lc_scenario_t *sc, char *verdict,
                 size_t len);

#endif
