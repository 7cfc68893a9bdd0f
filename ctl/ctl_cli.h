/* ctl_cli.h — what loadctl's commands share: the parsed options, the exit codes, the usage
 * text, and API calls that print their own errors and return an exit code. */
#ifndef CTL_CLI_H
#define CTL_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "ctl_http.h"

/* Exit codes, documented in the usage text. 99 is k6's "thresholds have failed". */
enum { CTL_EXIT_OK = 0, CTL_EXIT_FAIL = 1, CTL_EXIT_USAGE = 2, CTL_EXIT_UNREACHABLE = 3,
       CTL_EXIT_THRESHOLDS = 99, CTL_EXIT_INTERRUPTED = 130 };

#define CTL_DEFAULT_MASTER "http://127.0.0.1:8089"
#define CTL_MAX_ARGS 6

typedef struct ctl_opts_s {
    const char *master;
    const char *token; /* NULL when none */
    bool json;
    bool wait;
    bool dry_run;       /* run --dry-run */
    const char *weight; /* tenants add --weight N */
    const char *name;   /* tokens add --name N */
    const char *format; /* report --format F */
    const char *output; /* report -o FILE */
    const char *args[CTL_MAX_ARGS]; /* the command and its operands */
    int n_args;
} ctl_opts_t;

/* A table printer of ctl_print.h: 0, or -1 when the JSON has not the expected shape. */
typedef int (*ctl_cli_print_fn)(FILE *out, const json_t *root);

void ctl_cli_usage(FILE *out);
/* Prints "loadctl: " fmt (with arg), then the usage, to stderr; returns CTL_EXIT_USAGE. */
int ctl_cli_usage_error(const char *fmt, const char *arg);

/* One API call with a body of content_type (NULL: JSON). Returns 0 with resp
 * filled (and *json parsed when json is non-NULL) for a 2xx answer; otherwise
 * prints why and returns an exit code. */
int ctl_cli_call_as(const ctl_opts_t *o, const char *method, const char *path,
                    const char *content_type, const char *body, size_t body_len,
                    ctl_http_response_t *resp, json_t **json);
/* ctl_cli_call_as with a JSON body. */
int ctl_cli_call(const ctl_opts_t *o, const char *method, const char *path, const char *body,
                 size_t body_len, ctl_http_response_t *resp, json_t **json);

/* Writes the answer's body as it came, ending it with a newline when it has none. */
void ctl_cli_print_raw(FILE *out, const ctl_http_response_t *resp);
/* Says the master's answer about what had an unexpected shape; returns CTL_EXIT_FAIL. */
int ctl_cli_bad_shape(const char *what);

/* Sends method path with body (of content_type; NULL: JSON) and prints the
 * answer with print, or raw with --json. */
int ctl_cli_call_and_print(const ctl_opts_t *o, const char *method, const char *path,
                           const char *content_type, const char *body, size_t body_len,
                           ctl_cli_print_fn print, const char *what);
/* GETs path and prints it as a table with print, or raw with --json. */
int ctl_cli_get_and_print(const ctl_opts_t *o, const char *path, ctl_cli_print_fn print,
                          const char *what);
/* Sends a change (membership, tenant, token revocation; body NULL: none) and prints done,
 * or the answer with --json. */
int ctl_cli_send_change(const ctl_opts_t *o, const char *method, const char *path,
                        const char *body, const char *done);

/* A run or master ID: 1 to 18 decimal digits. */
bool ctl_cli_valid_id(const char *s);

#endif
