/* loadctl.c — the command-line client of the master's HTTP API: run, validate, runs, show, stop,
 * workers, cluster, tenants, tokens. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "ctl_dry_run.h"
#include "ctl_http.h"
#include "ctl_print.h"
#include "ctl_report.h"
#include "ctl_summary.h"
#include "lc_file.h"
#include "lc_run_state.h"
#include "lc_scenario.h"

/* Exit codes, documented in the usage text. 99 is k6's "thresholds have failed". */
enum { CTL_EXIT_OK = 0, CTL_EXIT_FAIL = 1, CTL_EXIT_USAGE = 2, CTL_EXIT_UNREACHABLE = 3,
       CTL_EXIT_THRESHOLDS = 99, CTL_EXIT_INTERRUPTED = 130 };

#define DEFAULT_MASTER "http://127.0.0.1:8089"
#define MAX_ARGS 6
#define WAIT_MAX_UNREACHABLE 10 /* consecutive failed polls before --wait gives up */

/* How `run --wait` shows progress. */
typedef struct wait_view_s {
    FILE *out;      /* progress: stdout, or stderr with --json */
    bool tty;       /* out is a terminal: one bar redrawn in place */
    int columns;    /* the terminal's width; 0 when unknown */
    double total_s; /* the scenario's duration; 0 when unknown */
    bool drawn;     /* a bar is on screen: end its line before anything else */
} wait_view_t;

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
    const char *args[MAX_ARGS]; /* the command and its operands */
    int n_args;
} ctl_opts_t;

/* Set by SIGINT while `run --wait` polls; the only mutable global. */
static volatile sig_atomic_t interrupted;

static void usage(FILE *out)
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
            "                              (default), csv, html, junit or history-csv\n"
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
            "  --master URL   master API (default $LOADCTL_MASTER, else " DEFAULT_MASTER ")\n"
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

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "loadctl: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    usage(stderr);
    return CTL_EXIT_USAGE;
}

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
            if (o->n_args == MAX_ARGS)
                return usage_error("too many arguments at '%s'", a);
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
                return usage_error("%s needs a value", a);
        } else if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else if (strcmp(a, "--wait") == 0) {
            o->wait = true;
        } else if (strcmp(a, "--dry-run") == 0) {
            o->dry_run = true;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return CTL_EXIT_OK;
        } else if (strcmp(a, "--version") == 0) {
            printf("loadctl %s\n", LC_VERSION);
            return CTL_EXIT_OK;
        } else {
            return usage_error("unknown option '%s'", a);
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
static int api_call_as(const ctl_opts_t *o, const char *method, const char *path,
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

static int api_call(const ctl_opts_t *o, const char *method, const char *path, const char *body,
                    size_t body_len, ctl_http_response_t *resp, json_t **json)
{
    return api_call_as(o, method, path, NULL, body, body_len, resp, json);
}

static void print_raw(FILE *out, const ctl_http_response_t *resp)
{
    fwrite(resp->body, 1, resp->body_len, out);
    if (resp->body_len == 0 || resp->body[resp->body_len - 1] != '\n')
        fputc('\n', out);
}

static int bad_shape(const char *what)
{
    fprintf(stderr, "loadctl: bad answer from the master: unexpected shape of %s\n", what);
    return CTL_EXIT_FAIL;
}

/* Sends method path with body (of content_type; NULL: JSON) and prints the
 * answer with print, or raw with --json. */
static int call_and_print(const ctl_opts_t *o, const char *method, const char *path,
                          const char *content_type, const char *body, size_t body_len,
                          int (*print)(FILE *, const json_t *), const char *what)
{
    ctl_http_response_t resp;
    json_t *root = NULL;
    int rv = api_call_as(o, method, path, content_type, body, body_len, &resp,
                         o->json ? NULL : &root);
    if (rv != CTL_EXIT_OK)
        return rv;
    if (o->json)
        print_raw(stdout, &resp);
    else if (print(stdout, root) != 0)
        rv = bad_shape(what);
    json_decref(root);
    ctl_http_response_free(&resp);
    return rv;
}

/* GETs path and prints it as a table with print, or raw with --json. */
static int get_and_print(const ctl_opts_t *o, const char *path,
                         int (*print)(FILE *, const json_t *), const char *what)
{
    return call_and_print(o, "GET", path, NULL, NULL, 0, print, what);
}

static bool valid_id(const char *s)
{
    size_t n = strspn(s, "0123456789");
    return n > 0 && n <= 18 && s[n] == '\0';
}

static void on_sigint(int sig)
{
    interrupted = 1;
}

static int stop_waiting(const char *id)
{
    fflush(stdout);
    fprintf(stderr, "\nloadctl: stopped waiting; run %s continues (stop it with: loadctl stop %s)\n",
            id, id);
    return CTL_EXIT_INTERRUPTED;
}

/* Sleeps until *next (monotonic), then advances it by a second; false if interrupted. */
static bool sleep_tick(struct timespec *next)
{
    next->tv_sec += 1;
    while (!interrupted) {
        int e = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, next, NULL);
        if (e == 0)
            return true;
        if (e != EINTR)
            return true;
    }
    return false;
}

static bool is_terminal(const char *state)
{
    lc_run_state_t s;
    return lc_run_state_parse(state, &s) == 0 && lc_run_state_is_over(s);
}

/* Ends the progress bar's line, so what follows starts on a line of its own. */
static void end_bar(wait_view_t *v)
{
    if (v->drawn)
        fputc('\n', v->out);
    v->drawn = false;
}

/* 0: finished, every threshold passed (or none); 99: a threshold failed or
 * aborted the run; 1: the run failed or was stopped otherwise. */
static int run_exit_code(const json_t *run)
{
    const char *state = ctl_run_state(run), *verdict = ctl_run_verdict(run);
    const char *reason = json_string_value(json_object_get(run, "reason"));
    bool threshold_failed = verdict != NULL && strcmp(verdict, "fail") == 0;
    lc_run_state_t s = LC_RUN_FAILED;
    lc_run_state_parse(state, &s);
    if (s == LC_RUN_FINISHED)
        return threshold_failed ? CTL_EXIT_THRESHOLDS : CTL_EXIT_OK;
    if (s == LC_RUN_ABORTED && threshold_failed && reason != NULL &&
        strncmp(reason, "threshold failed: ", 18) == 0)
        return CTL_EXIT_THRESHOLDS;
    return CTL_EXIT_FAIL;
}

/* Prints the final state of a finished run, its report and its thresholds;
 * returns run_exit_code. */
static int wait_done(const ctl_opts_t *o, const ctl_http_response_t *resp, const json_t *run)
{
    const char *verdict = ctl_run_verdict(run);
    if (o->json)
        print_raw(stdout, resp);
    else if (ctl_print_report(stdout, run) != 0)
        return bad_shape("the run");
    else if (ctl_print_thresholds(stdout, run, isatty(STDOUT_FILENO)) == 0 && verdict != NULL &&
             strcmp(verdict, "fail") == 0)
        printf("\nThresholds: failed\n"); /* from a master that does not list them */
    int rv = run_exit_code(run);
    fflush(stdout); /* the report first, then why the exit status is not 0 */
    if (rv == CTL_EXIT_THRESHOLDS)
        fprintf(stderr, "loadctl: run %s: thresholds failed\n", ctl_run_state(run));
    else if (rv != CTL_EXIT_OK)
        fprintf(stderr, "loadctl: run %s\n", ctl_run_state(run));
    return rv;
}

/* One poll: shows progress; returns -1 to keep waiting, else the exit code. */
static int poll_run(const ctl_opts_t *o, const char *path, long elapsed, int *unreachable,
                    wait_view_t *v)
{
    ctl_http_response_t resp;
    json_t *run = NULL;
    int rv = api_call(o, "GET", path, NULL, 0, &resp, &run);
    if (rv == CTL_EXIT_UNREACHABLE && !interrupted && ++*unreachable < WAIT_MAX_UNREACHABLE) {
        end_bar(v);
        fprintf(stderr, "loadctl: retrying (%d/%d)\n", *unreachable, WAIT_MAX_UNREACHABLE - 1);
        return -1;
    }
    if (rv != CTL_EXIT_OK)
        return rv;
    *unreachable = 0;
    rv = -1;
    if (v->tty) {
        ctl_print_progress_bar(v->out, run, elapsed, v->total_s, v->columns);
        v->drawn = true;
    } else {
        ctl_print_progress(v->out, run, elapsed);
    }
    if (is_terminal(ctl_run_state(run))) {
        end_bar(v);
        rv = wait_done(o, &resp, run);
    }
    json_decref(run);
    ctl_http_response_free(&resp);
    return rv;
}

/* Polls the run once a second until it ends. Ctrl-C only stops the waiting. */
static int wait_run(const ctl_opts_t *o, const char *id, double total_s)
{
    struct sigaction sa = {.sa_handler = on_sigint}; /* no SA_RESTART: a poll must give way */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    wait_view_t v = {.out = o->json ? stderr : stdout, .total_s = total_s};
    struct winsize ws;
    v.tty = isatty(fileno(v.out));
    if (v.tty && ioctl(fileno(v.out), TIOCGWINSZ, &ws) == 0)
        v.columns = ws.ws_col;
    char path[64];
    snprintf(path, sizeof(path), "/api/v1/runs/%s", id);
    struct timespec start, next;
    clock_gettime(CLOCK_MONOTONIC, &start);
    next = start;
    for (int unreachable = 0;;) {
        long elapsed = (long)(next.tv_sec - start.tv_sec);
        int rv = interrupted ? CTL_EXIT_INTERRUPTED : poll_run(o, path, elapsed, &unreachable, &v);
        if (rv == -1 && sleep_tick(&next))
            continue;
        end_bar(&v);
        if (rv == -1 || rv == CTL_EXIT_INTERRUPTED || (interrupted && rv == CTL_EXIT_UNREACHABLE))
            return stop_waiting(id);
        return rv;
    }
}

/* A scenario file is YAML when its name ends in .yaml or .yml. OUT: the
 * Content-Type to send it with (NULL: JSON). */
static const char *scenario_type(const char *path)
{
    size_t n = strlen(path);
    bool yaml = (n > 5 && strcmp(path + n - 5, ".yaml") == 0) ||
                (n > 4 && strcmp(path + n - 4, ".yml") == 0);
    return yaml ? "application/yaml" : NULL;
}

/* Reads the scenario operand ("-": stdin). Returns 0 with *text (malloc'd),
 * or CTL_EXIT_USAGE after saying why. */
static int read_scenario(const ctl_opts_t *o, char **text, size_t *len)
{
    char why[600];
    const char *path = strcmp(o->args[1], "-") == 0 ? "/dev/stdin" : o->args[1];
    if (lc_file_read(path, CTL_HTTP_MAX_BODY, text, len, why, sizeof why) != 0) {
        fprintf(stderr, "loadctl: cannot read %s\n", why);
        return CTL_EXIT_USAGE;
    }
    return CTL_EXIT_OK;
}

/* The scenario's duration in seconds, for the progress bar only (the master
 * validates the scenario); 0 when unknown. JSON is parsed here; YAML is
 * converted by the master only, so its validate endpoint is asked. */
static double scenario_seconds(const ctl_opts_t *o, const char *scenario, size_t len)
{
    const char *type = scenario_type(o->args[1]);
    if (type != NULL) {
        ctl_http_response_t resp;
        json_t *answer = NULL;
        char err[256];
        if (ctl_http_request_as(o->master, o->token, "POST", "/api/v1/scenarios/validate", type,
                                scenario, len, &resp, err, sizeof err) != CTL_HTTP_OK)
            return 0;
        if (resp.status == 200)
            answer = json_loadb(resp.body, resp.body_len, 0, NULL);
        ctl_http_response_free(&resp);
        json_t *ms = json_object_get(json_object_get(answer, "summary"), "duration_ms");
        double secs = json_is_integer(ms) ? (double)json_integer_value(ms) / 1000.0 : 0;
        json_decref(answer);
        return secs;
    }
    lc_scenario_t sc;
    if (lc_scenario_parse(scenario, len, &sc, NULL, 0) != 0)
        return 0;
    double secs = (double)sc.duration_ms / 1000.0;
    lc_scenario_free(&sc);
    return secs;
}

/* run --dry-run: the master checks the scenario (YAML converted, the tenant's rules), then
 * a local loadworker traces one user through it; nothing is created. */
static int dry_run(const ctl_opts_t *o, const char *scenario, size_t len)
{
    ctl_http_response_t resp = {0};
    json_t *answer = NULL;
    int rv = api_call_as(o, "POST", "/api/v1/scenarios/validate", scenario_type(o->args[1]),
                         scenario, len, &resp, &answer);
    ctl_http_response_free(&resp);
    if (rv == CTL_EXIT_FAIL && resp.status == 400)
        rv = CTL_EXIT_USAGE;
    if (rv == CTL_EXIT_OK)
        rv = ctl_dry_run(json_object_get(answer, "scenario"));
    json_decref(answer);
    return rv;
}

static int cmd_run(const ctl_opts_t *o)
{
    size_t len = 0;
    char *scenario;
    int rv = read_scenario(o, &scenario, &len);
    if (rv != CTL_EXIT_OK)
        return rv;
    if (o->dry_run) {
        rv = dry_run(o, scenario, len);
        free(scenario);
        return rv;
    }
    ctl_http_response_t resp = {0};
    json_t *created = NULL;
    double total_s = o->wait ? scenario_seconds(o, scenario, len) : 0;
    rv = api_call_as(o, "POST", "/api/v1/runs", scenario_type(o->args[1]), scenario, len, &resp,
                     &created);
    free(scenario);
    if (rv == CTL_EXIT_FAIL && resp.status == 400)
        return CTL_EXIT_USAGE; /* the master refused the scenario (its error is printed) */
    if (rv != CTL_EXIT_OK)
        return rv;
    const json_t *id = json_object_get(created, "id");
    char ids[32];
    if (json_is_integer(id) && json_integer_value(id) >= 0)
        snprintf(ids, sizeof(ids), "%" JSON_INTEGER_FORMAT, json_integer_value(id));
    else
        rv = bad_shape("the created run");
    if (rv == CTL_EXIT_OK && o->json && !o->wait)
        print_raw(stdout, &resp);
    else if (rv == CTL_EXIT_OK)
        fprintf(o->json ? stderr : stdout, "run %s created\n", ids);
    json_decref(created);
    ctl_http_response_free(&resp);
    if (rv == CTL_EXIT_OK && o->wait)
        rv = wait_run(o, ids, total_s);
    return rv;
}

/* validate SCENARIO: 0 valid (the summary printed), 1 invalid (the error). */
static int cmd_validate(const ctl_opts_t *o)
{
    size_t len = 0;
    char *scenario;
    int rv = read_scenario(o, &scenario, &len);
    if (rv != CTL_EXIT_OK)
        return rv;
    rv = call_and_print(o, "POST", "/api/v1/scenarios/validate", scenario_type(o->args[1]),
                        scenario, len, ctl_print_summary, "the validation");
    free(scenario);
    return rv;
}

static int cmd_show(const ctl_opts_t *o)
{
    char path[64];
    snprintf(path, sizeof(path), "/api/v1/runs/%s", o->args[1]);
    return get_and_print(o, path, ctl_print_run, "the run");
}

static int cmd_stop(const ctl_opts_t *o)
{
    char path[64];
    snprintf(path, sizeof(path), "/api/v1/runs/%s/stop", o->args[1]);
    ctl_http_response_t resp;
    int rv = api_call(o, "POST", path, NULL, 0, &resp, NULL);
    if (rv != CTL_EXIT_OK)
        return rv;
    if (o->json)
        print_raw(stdout, &resp);
    else
        printf("run %s stopping\n", o->args[1]);
    ctl_http_response_free(&resp);
    return CTL_EXIT_OK;
}

static int cmd_runs(const ctl_opts_t *o)
{
    return get_and_print(o, "/api/v1/runs", ctl_print_runs, "the run list");
}

/* Sends a change (membership, tenant, token revocation) and prints done,
 * or the answer with --json. */
static int send_change(const ctl_opts_t *o, const char *method, const char *path,
                       const char *body, const char *done)
{
    ctl_http_response_t resp;
    int rv = api_call(o, method, path, body, body ? strlen(body) : 0, &resp, NULL);
    if (rv != CTL_EXIT_OK)
        return rv;
    if (o->json)
        print_raw(stdout, &resp);
    else
        printf("%s\n", done);
    ctl_http_response_free(&resp);
    return CTL_EXIT_OK;
}

/* cluster | cluster add ID RAFT WORKERS API | cluster remove ID */
static int cmd_cluster(const ctl_opts_t *o)
{
    char path[96], done[128];
    if (o->n_args == 1)
        return get_and_print(o, "/api/v1/cluster", ctl_print_cluster, "the cluster");
    if (strcmp(o->args[1], "add") == 0 && o->n_args == 6 && valid_id(o->args[2])) {
        json_t *req = json_pack("{s:I,s:s,s:s,s:s}", "id", (json_int_t)strtoll(o->args[2], NULL, 10),
                                "raft", o->args[3], "worker", o->args[4], "api", o->args[5]);
        char *body = json_dumps(req, JSON_COMPACT);
        json_decref(req);
        snprintf(done, sizeof done, "master %s added as a voter", o->args[2]);
        int rv = send_change(o, "POST", "/api/v1/cluster/members", body, done);
        free(body);
        return rv;
    }
    if (strcmp(o->args[1], "remove") == 0 && o->n_args == 3 && valid_id(o->args[2])) {
        snprintf(path, sizeof path, "/api/v1/cluster/members/%s", o->args[2]);
        snprintf(done, sizeof done, "master %s removed", o->args[2]);
        return send_change(o, "DELETE", path, NULL, done);
    }
    usage_error("%s", "expected 'cluster', 'cluster add ID RAFT WORKERS API' or 'cluster remove ID'");
    return CTL_EXIT_USAGE;
}

/* Tenant names as the API takes them; checked here too, as they go into paths. */
static bool valid_tenant(const char *s)
{
    size_t n = strlen(s);
    return n >= 1 && n <= 64 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

static bool valid_weight(const char *s)
{
    return valid_id(s) && strtoll(s, NULL, 10) >= 1 && strtoll(s, NULL, 10) <= 1000;
}

/* POSTs or PATCHes {"name"?, "weight"} for `tenants add` and `tenants weight`. */
static int send_tenant(const ctl_opts_t *o, const char *name, const char *weight, bool add)
{
    if (!valid_tenant(name))
        return usage_error("'%s' is not a tenant name (1 to 64 of a-z, 0-9, '.', '_', '-')", name);
    if (!valid_weight(weight))
        return usage_error("'%s' is not a weight (an integer from 1 to 1000)", weight);
    json_int_t w = (json_int_t)strtoll(weight, NULL, 10);
    json_t *req = add ? json_pack("{s:s,s:I}", "name", name, "weight", w) : json_pack("{s:I}", "weight", w);
    char *body = json_dumps(req, JSON_COMPACT), path[128], done[160];
    json_decref(req);
    snprintf(path, sizeof path, "/api/v1/tenants%s%s", add ? "" : "/", add ? "" : name);
    snprintf(done, sizeof done, "tenant %s %s weight %s", name, add ? "added with" : "now has", weight);
    int rv = body ? send_change(o, add ? "POST" : "PATCH", path, body, done) : CTL_EXIT_USAGE;
    free(body);
    return rv;
}

/* tenants | tenants add NAME [WEIGHT] | tenants weight NAME WEIGHT */
static int cmd_tenants(const ctl_opts_t *o)
{
    if (o->n_args == 1 && o->weight == NULL)
        return get_and_print(o, "/api/v1/tenants", ctl_print_tenants, "the tenant list");
    if (o->n_args == 3 && strcmp(o->args[1], "add") == 0)
        return send_tenant(o, o->args[2], o->weight ? o->weight : "1", true);
    if (o->n_args == 4 && strcmp(o->args[1], "add") == 0 && o->weight == NULL)
        return send_tenant(o, o->args[2], o->args[3], true);
    if (o->n_args == 4 && strcmp(o->args[1], "weight") == 0 && o->weight == NULL)
        return send_tenant(o, o->args[2], o->args[3], false);
    return usage_error("%s", "expected 'tenants', 'tenants add NAME [WEIGHT]' or "
                       "'tenants weight NAME WEIGHT'");
}

/* tokens add admin|tenant [TENANT] [--name NAME]: prints the secret once. */
static int add_token(const ctl_opts_t *o)
{
    bool admin = strcmp(o->args[2], "admin") == 0;
    if (admin ? o->n_args != 3 : strcmp(o->args[2], "tenant") != 0 || o->n_args != 4)
        return usage_error("%s", "expected 'tokens add admin' or 'tokens add tenant TENANT'");
    if (!admin && !valid_tenant(o->args[3]))
        return usage_error("'%s' is not a tenant name", o->args[3]);
    json_t *req = json_pack("{s:s}", "role", o->args[2]);
    if (!admin)
        json_object_set_new(req, "tenant", json_string(o->args[3]));
    if (o->name != NULL)
        json_object_set_new(req, "name", json_string(o->name));
    char *body = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    int rv = body ? call_and_print(o, "POST", "/api/v1/tokens", NULL, body, strlen(body),
                                   ctl_print_new_token, "the created token")
                  : CTL_EXIT_USAGE;
    free(body);
    return rv;
}

/* tokens | tokens add admin|tenant [TENANT] [--name NAME] | tokens revoke ID */
static int cmd_tokens(const ctl_opts_t *o)
{
    if (o->n_args == 1 && o->name == NULL)
        return get_and_print(o, "/api/v1/tokens", ctl_print_tokens, "the token list");
    if (o->n_args >= 3 && strcmp(o->args[1], "add") == 0)
        return add_token(o);
    const char *id = o->n_args == 3 ? o->args[2] : "";
    size_t n = strlen(id);
    if (o->n_args > 1 && strcmp(o->args[1], "revoke") == 0 && o->name == NULL && n >= 1 &&
        n < 64 && strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == n) {
        char path[128], done[128];
        snprintf(path, sizeof path, "/api/v1/tokens/%s", id);
        snprintf(done, sizeof done, "token %s revoked", id);
        return send_change(o, "DELETE", path, NULL, done);
    }
    return usage_error("%s", "expected 'tokens', 'tokens add admin|tenant [TENANT] [--name NAME]' "
                       "or 'tokens revoke ID'");
}

/* report ID [--format F] [-o FILE]: the API's bytes, unchanged. */
static int cmd_report(const ctl_opts_t *o)
{
    char path[96];
    const char *format = o->format ? o->format : "json";
    if (!ctl_report_path(format, o->args[1], path, sizeof path)) {
        fprintf(stderr, "loadctl: unknown report format '%s' (expected %s)\n", format,
                ctl_report_formats);
        return CTL_EXIT_USAGE;
    }
    ctl_http_response_t resp;
    int rv = api_call(o, "GET", path, NULL, 0, &resp, NULL);
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

static int cmd_workers(const ctl_opts_t *o)
{
    return get_and_print(o, "/api/v1/workers", ctl_print_workers, "the worker list");
}

typedef struct ctl_command_s {
    const char *name;
    int n_operands;
    const char *operand; /* its name in messages, or NULL */
    int (*run)(const ctl_opts_t *o);
} ctl_command_t;

static const ctl_command_t commands[] = {
    {"run", 1, "SCENARIO", cmd_run},       {"runs", 0, NULL, cmd_runs},
    {"validate", 1, "SCENARIO", cmd_validate},
    {"report", 1, "ID", cmd_report},
    {"show", 1, "ID", cmd_show},          {"stop", 1, "ID", cmd_stop},
    {"workers", 0, NULL, cmd_workers},     {"cluster", -1, NULL, cmd_cluster},
    {"tenants", -1, NULL, cmd_tenants},    {"tokens", -1, NULL, cmd_tokens},
};

/* Finds the command and checks its operands; NULL after printing a usage error. */
static const ctl_command_t *find_command(const ctl_opts_t *o)
{
    if (o->n_args == 0) {
        usage_error("%s", "missing COMMAND");
        return NULL;
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        const ctl_command_t *c = &commands[i];
        if (strcmp(o->args[0], c->name) != 0)
            continue;
        if ((o->wait || o->dry_run) && c->run != cmd_run)
            usage_error("--wait and --dry-run only go with '%s'", "run");
        else if (o->wait && o->dry_run)
            usage_error("%s", "--dry-run creates no run to --wait for");
        else if ((o->weight != NULL && c->run != cmd_tenants) || (o->name != NULL && c->run != cmd_tokens))
            usage_error("%s", "--weight only goes with 'tenants add', --name with 'tokens add'");
        else if ((o->format != NULL || o->output != NULL) && c->run != cmd_report)
            usage_error("%s", "--format and -o only go with 'report'");
        else if (c->n_operands < 0) /* checks its own operands */
            return c;
        else if (o->n_args - 1 < c->n_operands)
            usage_error("missing %s", c->operand);
        else if (o->n_args - 1 > c->n_operands)
            usage_error("unexpected argument '%s'", o->args[c->n_operands + 1]);
        else if (c->operand != NULL && strcmp(c->operand, "ID") == 0 && !valid_id(o->args[1]))
            usage_error("'%s' is not a run ID", o->args[1]);
        else
            return c;
        return NULL;
    }
    usage_error("unknown command '%s'", o->args[0]);
    return NULL;
}

int main(int argc, char **argv)
{
    ctl_opts_t o = {.master = getenv("LOADCTL_MASTER"), .token = getenv("LOADCTL_TOKEN")};
    if (o.master == NULL || o.master[0] == '\0')
        o.master = DEFAULT_MASTER;
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
