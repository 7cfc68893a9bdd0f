/* ctl_print.h — turns the master API's JSON answers into loadctl's tables and progress lines. */
#ifndef CTL_PRINT_H
#define CTL_PRINT_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

/* Each returns 0, or -1 when the JSON does not have the expected shape at
 * all (missing or null fields inside are printed as "-"). */
int ctl_print_runs(FILE *out, const json_t *root);
int ctl_print_workers(FILE *out, const json_t *root);
/* GET /api/v1/cluster: this node, the leader, every member. */
int ctl_print_cluster(FILE *out, const json_t *root);
/* GET /api/v1/tenants and /api/v1/tokens (never holds secrets). */
int ctl_print_tenants(FILE *out, const json_t *root);
int ctl_print_tokens(FILE *out, const json_t *root);
/* POST /api/v1/tokens's answer: the id, then the secret on a line of its own. */
int ctl_print_new_token(FILE *out, const json_t *created);
/* `loadctl show`: state, times, then the report table. */
int ctl_print_run(FILE *out, const json_t *run);
/* The report table of a run (lc_report_print of its endpoints, totals, errors). */
int ctl_print_report(FILE *out, const json_t *run);
/* One `--wait` line: "[  12s] state=running users=50 rps=1503.2 p95=1.42ms errors=0";
 * elapsed_s is used when the run has no "current.t". */
void ctl_print_progress(FILE *out, const json_t *run, long elapsed_s);

/* The `--wait` progress on a terminal: one line redrawn in place ("\r", then
 * erase to the end): a bar of the run's time over total_s (the scenario's
 * duration; <= 0 when unknown), time left, state, users, rps, p95, errors.
 * Cut to columns - 1 characters when columns > 1. */
void ctl_print_progress_bar(FILE *out, const json_t *run, long elapsed_s, double total_s,
                            int columns);
/* The run's "thresholds" results, one line each marked with a check mark or
 * a cross (fancy) or "ok"/"FAIL"; nothing when there are none. Returns how
 * many failed. */
int ctl_print_thresholds(FILE *out, const json_t *run, bool fancy);

/* The run's "state" string, or NULL. */
const char *ctl_run_state(const json_t *run);
/* The run's "verdict": "pass", "fail", "" (no thresholds), or NULL. */
const char *ctl_run_verdict(const json_t *run);

#endif
