/* lc_run_state.c — run state names. */
#include "lc_run_state.h"

#include <stddef.h>
#include <string.h>

#include "lc_err.h"

static const char *const names[LC_RUN_STATE_COUNT] = {
    [LC_RUN_PENDING] = "pending",   [LC_RUN_RUNNING] = "running",
    [LC_RUN_STOPPING] = "stopping", [LC_RUN_FINISHED] = "finished",
    [LC_RUN_FAILED] = "failed",     [LC_RUN_ABORTED] = "aborted",
};

const char *lc_run_state_name(lc_run_state_t state)
{
    return (unsigned)state < LC_RUN_STATE_COUNT ? names[state] : "?";
}

int lc_run_state_parse(const char *name, lc_run_state_t *out)
{
    if (name == NULL)
        return LC_EINVAL;
    for (unsigned i = 0; i < LC_RUN_STATE_COUNT; i++) {
        if (strcmp(name, names[i]) == 0) {
            *out = (lc_run_state_t)i;
            return 0;
        }
    }
    return LC_EINVAL;
}

bool lc_run_state_is_over(lc_run_state_t state)
{
    return state == LC_RUN_FINISHED || state == LC_RUN_FAILED || state == LC_RUN_ABORTED;
}
