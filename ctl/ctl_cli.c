/* ctl_cli.c — loadctl's usage text, and the API calls its commands share: each prints what
 * went wrong (the master's error, an unreachable master, a bad answer) and maps it to an exit
 * code. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ctl_cli.h"
#include "ctl_http.h"

void ctl_cli_usage(FILE *out)
{
    fprintf(out,
            "usage: loadctl [--master URL] [--token T] [--json] COMMAND [ARGS]\n"
            "\n"
            "commands:\n"
            "  run SCENARIO [--wait]       create a run (\"-\" reads stdin); a file ending\n"
            "                              in .yaml or .yml is sent as YAML, else as JSON;\n"
            "                              --wait follows it and prints the report;\n"
            "                              --dry-run: the master checks it, then a local\n"
            "                              loadworker traces one user and one iteration\n"
            "                              (each request, status, latency, extracted value)\n"
            "                              and nothing is created\n"
            "  validate SCENARIO           check a scenario as a run would, create nothing;\n"
            "                              prints its endpoints, thresholds and the\n"
            "                              estimated memory per idle user\n"
            "  runs                        list runs\n"
            "  show ID                     a run's state, times and report\n"
            "  report ID [--format F] [-o FILE]\n"
            "                              a run's report as the API serves it: json\n"
            "                              (default), csv, failures-csv, html, junit or history-csv\n"
            "  stop ID                     stop a run\n"
            "  workers                     list connected workers\n"
            "  cluster                     the masters: roles, leader, term, reachability\n"
            "  cluster add ID RAFT WORKERS API\n"
            "                              add a master (started with --join-quorum)\n"
            "  cluster remove ID           remove a master from the quorum\n"
            "  tenants                     list tenants and their weights (admin)\n"
            "  tenants add NAME [WEIGHT]   add a tenant (weight 1 to 1000, default 1;\n"
            "                              or --weight N)\n"
            "  tenants weight NAME WEIGHT  change a tenant's weight\n"
            "  tokens                      list API tokens, never their secrets (admin)\n"
            "  tokens add admin|tenant [TENANT] [--name NAME]\n"
            "                              create a token; prints its secret once\n"
            "  tokens revoke ID            revoke a token\n"
            "\n"
            "options (before or after the command):\n"
            "  --master URL   master API (default $LOADCTL_MASTER, else " CTL_DEFAULT_MASTER ")\n"
            "  --token T      bearer token (default $LOADCTL_TOKEN)\n"
            "  --json         print the API's JSON instead of tables\n"
            "  --help, --version\n"
            "\n"
            "exit status: 0 ok (run --wait: the run finished and every threshold passed,\n"
            "or it has none; validate: the scenario is valid), 1 API error, or the run\n"
            "failed or was stopped, or validate found the scenario invalid, 2 usage or\n"
            "local error, or run's scenario was refused (400), 3 master unreachable,\n"
            "99 a threshold failed or aborted the run (as k6), 130 interrupted\n"
            "\n"
            "run --wait draws a progress bar on a terminal, else prints a line a second;\n"
            "then the report and each threshold (a check mark or cross; ok/FAIL in files)\n");
}

int ctl_cli_usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "loadctl: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    ctl_cli_usage(stderr);
    return CTL_EXIT_USAGE;
}

/* Prints an API error answer: "loadctl: <status>: <error field>". */
static void print_api_error(const ctl_opts_t *o, const ctl_http_response_t *resp)
{
    json_t *root = json_loadb(resp->body, resp->body_len, 0, NULL);
    const json_t *e = json_object_get(root, "error");
    char msg[512];
    if (json_is_string(e)) {
        snprintf(msg, sizeof(msg), "%s", json_string_value(e));
    } else {
        size_t n = strcspn(resp->body, "\r\n");
        if (n == 0)
            snprintf(msg, sizeof(msg), "(no error message)");
        else
            snprintf(msg, sizeof(msg), "%.*s", (int)(n < 200 ? n : 200), resp->body);
    }
    for (char *p = msg; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    fprintf(stderr, "loadctl: %d: %s\n", resp->status, msg);
    if (resp->status == 401 && o->token == NULL)
        fprintf(stderr, "loadctl: no token given; use --token or LOADCTL_TOKEN\n");
    json_decref(root);
}

/* One API call with a body of content_type (NULL: JSON). Returns 0 with resp
 * filled (and *json parsed when json is non-NULL) for a 2xx answer; otherwise
 * prints why and returns an exit code. */
int ctl_cli_call_as(const ctl_opts_t *o, const char *method, const char *path,
                    const char *content_type, const char *body, size_t body_len,
                    ctl_http_response_t *resp, json_t **json)
{
    char err[1024];
    int rv = ctl_http_request_as(o->master, o->token, method, path, content_type, body, body_len,
                                 resp, err, sizeof(err));
    if (rv == CTL_HTTP_EINTR)
        return CTL_EXIT_INTERRUPTED;
    if (rv != CTL_HTTP_OK) {
        fprintf(stderr, "loadctl: %s\n", err);
        return rv == CTL_HTTP_EREACH ? CTL_EXIT_UNREACHABLE : CTL_EXIT_FAIL;
    }
    if (resp->status < 200 || resp->status > 299) {
        print_api_error(o, resp);
        ctl_http_response_free(resp);
        return CTL_EXIT_FAIL;
    }
    if (json == NULL)
        return CTL_EXIT_OK;
    json_error_t jerr;
    *json = json_loadb(resp->body, resp->body_len, 0, &jerr);
    if (*json == NULL) {
        fprintf(stderr, "loadctl: bad answer from the master (%d): %s\n", resp->status, jerr.text);
        ctl_http_response_free(resp);
        return CTL_EXIT_FAIL;
    }
    return CTL_EXIT_OK;
}

int ctl_cli_call(const ctl_opts_t *o, const char *method, const char *path, const char *body,
                 size_t body_len, ctl_http_response_t *resp, json_t **json)
{
    return ctl_cli_call_as(o, method, path, NULL, body, body_len, resp, json);
}

void ctl_cli_print_raw(FILE *out, const ctl_http_response_t *resp)
{
    fwrite(resp->body, 1, resp->body_len, out);
    if (resp->body_len == 0 || resp->body[resp->body_len - 1] != '\n')
        fputc('\n', out);
}

int ctl_cli_bad_shape(const char *what)
{
    fprintf(stderr, "loadctl: bad answer from the master: unexpected shape of %s\n", what);
    return CTL_EXIT_FAIL;
}

/* Sends method path with body (of content_type; NULL: JSON) and prints the
 * answer with print, or raw with --json. */
int ctl_cli_call_and_print(const ctl_opts_t *o, const char *method, const char *path,
                           const char *content_type, const char *body, size_t body_len,
                           ctl_cli_print_fn print, const char *what)
{
    ctl_http_response_t resp;
    json_t *root = NULL;
    int rv = ctl_cli_call_as(o, method, path, content_type, body, body_len, &resp,
                             o->json ? NULL : &root);
    if (rv != CTL_EXIT_OK)
        return rv;
    if (o->json)
        ctl_cli_print_raw(stdout, &resp);
    else if (print(stdout, root) != 0)
        rv = ctl_cli_bad_shape(what);
    json_decref(root);
    ctl_http_response_free(&resp);
    return rv;
}

/* GETs path and prints it as a table with print, or raw with --json. */
int ctl_cli_get_and_print(const ctl_opts_t *o, const char *path,
                          ctl_cli_print_fn print, const char *what)
{
    return ctl_cli_call_and_print(o, "GET", path, NULL, NULL, 0, print, what);
}

bool ctl_cli_valid_id(const char *s)
{
    size_t n = strspn(s, "0123456789");
    return n > 0 && n <= 18 && s[n] == '\0';
}

/* Sends a change (membership, tenant, token revocation) and prints done,
 * or the answer with --json. */
int ctl_cli_send_change(const ctl_opts_t *o, const char *method, const char *path,
                        const char *body, const char *done)
{
    ctl_http_response_t resp;
    int rv = ctl_cli_call(o, method, path, body, body ? strlen(body) : 0, &resp, NULL);
    if (rv != CTL_EXIT_OK)
        return rv;
    if (o->json)
        ctl_cli_print_raw(stdout, &resp);
    else
        printf("%s\n", done);
    ctl_http_response_free(&resp);
    return CTL_EXIT_OK;
}
