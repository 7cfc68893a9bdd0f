/* ctl_dry_run.h — `loadctl run --dry-run`: the master's canonical scenario traced by a local
 * loadworker (--local --trace): one user, one iteration, on_start and on_stop. */
#ifndef CTL_DRY_RUN_H
#define CTL_DRY_RUN_H

#include <jansson.h>

/* Writes scenario to a private temporary file, runs `loadworker --local FILE --trace` (the
 * loadworker next to this loadctl, else the one on PATH) with its output on ours, and
 * removes the file. Returns loadworker's exit status, or 1 with a message on stderr when
 * it cannot be run. */
int ctl_dry_run(const json_t *scenario);

#endif
