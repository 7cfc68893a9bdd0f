/* ctl_summary.h — `loadctl validate`: the answer of POST /api/v1/scenarios/validate as text. */
#ifndef CTL_SUMMARY_H
#define CTL_SUMMARY_H

#include <stdio.h>

#include <jansson.h>

/* Prints the summary: what the scenario runs, its endpoints as a table, its
 * thresholds and the estimated memory per idle user. Returns 0, or -1 when
 * answer has no "summary" object (fields missing inside print as "-"). */
int ctl_print_summary(FILE *out, const json_t *answer);

#endif
