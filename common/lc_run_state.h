/* lc_run_state.h — the states of a run, and their names in the database, the API and loadctl. */
#ifndef LC_RUN_STATE_H
#define LC_RUN_STATE_H

#include <stdbool.h>

/* pending -> running -> stopping -> finished / failed / aborted. */
typedef enum {
    LC_RUN_PENDING,
    LC_RUN_RUNNING,
    LC_RUN_STOPPING,
    LC_RUN_FINISHED,
    LC_RUN_FAILED,
    LC_RUN_ABORTED,
    LC_RUN_STATE_COUNT
} lc_run_state_t;

/* "pending", "running", …; "?" for a value out of range. */
const char *lc_run_state_name(lc_run_state_t state);
/* OUT: *out, the state named name. Returns 0, or LC_EINVAL for NULL or an
 * unknown name (*out untouched). */
int lc_run_state_parse(const char *name, lc_run_state_t *out);
/* Whether the run has ended: finished, failed or aborted. */
bool lc_run_state_is_over(lc_run_state_t state);

#endif
