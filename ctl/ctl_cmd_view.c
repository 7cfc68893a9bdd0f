/* ctl_cmd_view.c — the loadctl commands that read or stop what the master has: runs, show,
 * stop, report and workers. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ctl_cli.h"
#include "ctl_cmd.h"
#include "ctl_http.h"
#include "ctl_print.h"
#include "ctl_report.h"

int ctl_cmd_show(const ctl_opts_t *o)
{
    char path[64];
    snprintf(path, sizeof(path), "/api/v1/runs/%s", o->args[1]);
    return ctl_cli_get_and_print(o, path, ctl_print_run, "the run");
}

int ctl_cmd_stop(const ctl_opts_t *o)
{
    char path[64];
    snprintf(path, sizeof(path), "/api/v1/runs/%s/stop", o->args[1]);
    ctl_http_response_t resp;
    int rv = ctl_cli_call(o, "POST", path, NULL, 0, &resp, NULL);
    if (rv != CTL_EXIT_OK)
        return rv;
    if (o->json)
        ctl_cli_print_raw(stdout, &resp);
    else
        printf("run %s stopping\n", o->args[1]);
    ctl_http_response_free(&resp);
    return CTL_EXIT_OK;
}

int ctl_cmd_runs(const ctl_opts_t *o)
{
    return ctl_cli_get_and_print(o, "/api/v1/runs", ctl_print_runs, "the run list");
}

/* report ID [--format F] [-o FILE]: the API's bytes, unchanged. */
int ctl_cmd_report(const ctl_opts_t *o)
{
    char path[96];
    const char *format = o->format ? o->format : "json";
    if (!ctl_report_path(format, o->args[1], path, sizeof path)) {
        fprintf(stderr, "loadctl: unknown report format '%s' (expected %s)\n", format,
                ctl_report_formats);
        return CTL_EXIT_USAGE;
    }
    ctl_http_response_t resp;
    int rv = ctl_cli_call(o, "GET", path, NULL, 0, &resp, NULL);
    if (rv != CTL_EXIT_OK)
        return rv;
    if (ctl_report_write(o->output, resp.body, resp.body_len) != 0) {
        fprintf(stderr, "loadctl: cannot write %s: %s\n", o->output ? o->output : "the report",
                strerror(errno));
        rv = CTL_EXIT_USAGE;
    }
    ctl_http_response_free(&resp);
    return rv;
}

int ctl_cmd_workers(const ctl_opts_t *o)
{
    return ctl_cli_get_and_print(o, "/api/v1/workers", ctl_print_workers, "the worker list");
}
