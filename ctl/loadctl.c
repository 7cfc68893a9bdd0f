/* loadctl.c — the command-line client of the master's HTTP API: its options, the table of
 * commands (ctl_cmd.h: run, validate, runs, show, report, stop, workers, cluster, tenants,
 * tokens) and main(). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_cli.h"
#include "ctl_cmd.h"
#include "ctl_http.h"

/* Matches "--name VALUE" and "--name=VALUE"; advances *i past the value. */
static int option_value(int argc, char **argv, int *i, const char *name, const char **value)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0)
        return 0;
    if (argv[*i][n] == '=') {
        *value = argv[*i] + n + 1;
        return 1;
    }
    if (argv[*i][n] != '\0')
        return 0;
    if (*i + 1 >= argc)
        return -1;
    *value = argv[++*i];
    return 1;
}

/* Returns -1 to go on, else the exit code (after --help/--version or an error). */
static int parse_args(int argc, char **argv, ctl_opts_t *o)
{
    bool operands_only = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int m;
        if (operands_only || a[0] != '-' || a[1] == '\0') {
            if (o->n_args == CTL_MAX_ARGS)
                return ctl_cli_usage_error("too many arguments at '%s'", a);
            o->args[o->n_args++] = a;
        } else if (strcmp(a, "--") == 0) {
            operands_only = true;
        } else if ((m = option_value(argc, argv, &i, "--master", &o->master)) != 0 ||
                   (m = option_value(argc, argv, &i, "--token", &o->token)) != 0 ||
                   (m = option_value(argc, argv, &i, "--weight", &o->weight)) != 0 ||
                   (m = option_value(argc, argv, &i, "--name", &o->name)) != 0 ||
                   (m = option_value(argc, argv, &i, "--format", &o->format)) != 0 ||
                   (m = option_value(argc, argv, &i, "--output", &o->output)) != 0 ||
                   (m = option_value(argc, argv, &i, "-o", &o->output)) != 0) {
            if (m < 0)
                return ctl_cli_usage_error("%s needs a value", a);
        } else if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else if (strcmp(a, "--wait") == 0) {
            o->wait = true;
        } else if (strcmp(a, "--dry-run") == 0) {
            o->dry_run = true;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            ctl_cli_usage(stdout);
            return CTL_EXIT_OK;
        } else if (strcmp(a, "--version") == 0) {
            printf("loadctl %s\n", LC_VERSION);
            return CTL_EXIT_OK;
        } else {
            return ctl_cli_usage_error("unknown option '%s'", a);
        }
    }
    return -1;
}

/* Checks the master URL and token; returns -1 when usable, else an exit code. */
static int check_opts(ctl_opts_t *o)
{
    if (o->token != NULL && o->token[0] == '\0')
        o->token = NULL;
    for (const char *p = o->token; p != NULL && *p != '\0'; p++)
        if ((unsigned char)*p <= 0x20 || (unsigned char)*p == 0x7f) {
            fprintf(stderr, "loadctl: the token contains spaces or control characters\n");
            return CTL_EXIT_USAGE;
        }
    char err[512];
    if (ctl_http_check_url(o->master, err, sizeof(err)) != CTL_HTTP_OK) {
        fprintf(stderr, "loadctl: --master %s\n", err);
        return CTL_EXIT_USAGE;
    }
    return -1;
}

typedef struct ctl_command_s {
    const char *name;
    int n_operands;
    const char *operand; /* its name in messages, or NULL */
    int (*run)(const ctl_opts_t *o);
} ctl_command_t;

static const ctl_command_t commands[] = {
    {"run", 1, "SCENARIO", ctl_cmd_run},       {"runs", 0, NULL, ctl_cmd_runs},
    {"validate", 1, "SCENARIO", ctl_cmd_validate},
    {"report", 1, "ID", ctl_cmd_report},
    {"show", 1, "ID", ctl_cmd_show},          {"stop", 1, "ID", ctl_cmd_stop},
    {"workers", 0, NULL, ctl_cmd_workers},     {"cluster", -1, NULL, ctl_cmd_cluster},
    {"tenants", -1, NULL, ctl_cmd_tenants},    {"tokens", -1, NULL, ctl_cmd_tokens},
};

/* Finds the command and checks its operands; NULL after printing a usage error. */
static const ctl_command_t *find_command(const ctl_opts_t *o)
{
    if (o->n_args == 0) {
        ctl_cli_usage_error("%s", "missing COMMAND");
        return NULL;
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        const ctl_command_t *c = &commands[i];
        if (strcmp(o->args[0], c->name) != 0)
            continue;
        if ((o->wait || o->dry_run) && c->run != ctl_cmd_run)
            ctl_cli_usage_error("--wait and --dry-run only go with '%s'", "run");
        else if (o->wait && o->dry_run)
            ctl_cli_usage_error("%s", "--dry-run creates no run to --wait for");
        else if ((o->weight != NULL && c->run != ctl_cmd_tenants) ||
                 (o->name != NULL && c->run != ctl_cmd_tokens))
            ctl_cli_usage_error("%s",
                                "--weight only goes with 'tenants add', --name with 'tokens add'");
        else if ((o->format != NULL || o->output != NULL) && c->run != ctl_cmd_report)
            ctl_cli_usage_error("%s", "--format and -o only go with 'report'");
        else if (c->n_operands < 0) /* checks its own operands */
            return c;
        else if (o->n_args - 1 < c->n_operands)
            ctl_cli_usage_error("missing %s", c->operand);
        else if (o->n_args - 1 > c->n_operands)
            ctl_cli_usage_error("unexpected argument '%s'", o->args[c->n_operands + 1]);
        else if (c->operand != NULL && strcmp(c->operand, "ID") == 0 &&
                 !ctl_cli_valid_id(o->args[1]))
            ctl_cli_usage_error("'%s' is not a run ID", o->args[1]);
        else
            return c;
        return NULL;
    }
    ctl_cli_usage_error("unknown command '%s'", o->args[0]);
    return NULL;
}

int main(int argc, char **argv)
{
    ctl_opts_t o = {.master = getenv("LOADCTL_MASTER"), .token = getenv("LOADCTL_TOKEN")};
    if (o.master == NULL || o.master[0] == '\0')
        o.master = CTL_DEFAULT_MASTER;
    int rv = parse_args(argc, argv, &o);
    if (rv < 0)
        rv = check_opts(&o);
    if (rv >= 0)
        return rv;
    const ctl_command_t *cmd = find_command(&o);
    if (cmd == NULL)
        return CTL_EXIT_USAGE;
    rv = cmd->run(&o);
    if (fflush(stdout) != 0 && rv == CTL_EXIT_OK)
        rv = CTL_EXIT_FAIL;
    return rv;
}
