/* ctl_cmd.h — loadctl's commands, one function each: they take the parsed options (the
 * command in args[0], its operands after it) and return the process's exit code. */
#ifndef CTL_CMD_H
#define CTL_CMD_H

#include "ctl_cli.h"

/* ctl_cmd_run.c: a scenario sent to the master. */
int ctl_cmd_run(const ctl_opts_t *o);      /* run SCENARIO [--wait | --dry-run] */
int ctl_cmd_validate(const ctl_opts_t *o); /* validate SCENARIO */

/* ctl_cmd_view.c: runs and workers as the master has them. */
int ctl_cmd_runs(const ctl_opts_t *o);    /* runs */
int ctl_cmd_show(const ctl_opts_t *o);    /* show ID */
int ctl_cmd_stop(const ctl_opts_t *o);    /* stop ID */
int ctl_cmd_report(const ctl_opts_t *o);  /* report ID [--format F] [-o FILE] */
int ctl_cmd_workers(const ctl_opts_t *o); /* workers */

/* ctl_cmd_admin.c: the cluster's members, tenants and tokens; they check their own operands. */
int ctl_cmd_cluster(const ctl_opts_t *o);
int ctl_cmd_tenants(const ctl_opts_t *o);
int ctl_cmd_tokens(const ctl_opts_t *o);

#endif
