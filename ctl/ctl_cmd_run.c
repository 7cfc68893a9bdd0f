/* ctl_cmd_run.c — `loadctl run` (create a run; --wait follows it with a progress bar or line
 * a second, then prints its report; --dry-run traces it locally) and `loadctl validate`. */
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

#include "ctl_cli.h"
#include "ctl_cmd.h"
#include "ctl_dry_run.h"
#include "ctl_http.h"
#include "ctl_print.h"
#include "ctl_summary.h"
#include "lc_file.h"
#include "lc_run_state.h"
#include "lc_scenario.h"

#define WAIT_MAX_UNREACHABLE 10 /* consecutive failed polls before --wait gives up */

/* How `run --wait` shows progress. */
typedef struct wait_view_s {
    FILE *out;      /* progress: stdout, or stderr with --json */
    bool tty;       /* out is a terminal: one bar redrawn in place */
    int columns;    /* the terminal's width; 0 when unknown */
    double total_s; /* the scenario's duration; 0 when unknown */
    bool drawn;     /* a bar is on screen: end its line before anything else */
} wait_view_t;

/* Set by SIGINT while `run --wait` polls; the only mutable global. */
static volatile sig_atomic_t interrupted;

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
        ctl_cli_print_raw(stdout, resp);
    else if (ctl_print_report(stdout, run) != 0)
        return ctl_cli_bad_shape("the run");
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
    int rv = ctl_cli_call(o, "GET", path, NULL, 0, &resp, &run);
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
    int rv = ctl_cli_call_as(o, "POST", "/api/v1/scenarios/validate", scenario_type(o->args[1]),
                             scenario, len, &resp, &answer);
    ctl_http_response_free(&resp);
    if (rv == CTL_EXIT_FAIL && resp.status == 400)
        rv = CTL_EXIT_USAGE;
    if (rv == CTL_EXIT_OK)
        rv = ctl_dry_run(json_object_get(answer, "scenario"));
    json_decref(answer);
    return rv;
}

int ctl_cmd_run(const ctl_opts_t *o)
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
    rv = ctl_cli_call_as(o, "POST", "/api/v1/runs", scenario_type(o->args[1]), scenario, len, &resp,
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
        rv = ctl_cli_bad_shape("the created run");
    if (rv == CTL_EXIT_OK && o->json && !o->wait)
        ctl_cli_print_raw(stdout, &resp);
    else if (rv == CTL_EXIT_OK)
        fprintf(o->json ? stderr : stdout, "run %s created\n", ids);
    json_decref(created);
    ctl_http_response_free(&resp);
    if (rv == CTL_EXIT_OK && o->wait)
        rv = wait_run(o, ids, total_s);
    return rv;
}

/* validate SCENARIO: 0 valid (the summary printed), 1 invalid (the error). */
int ctl_cmd_validate(const ctl_opts_t *o)
{
    size_t len = 0;
    char *scenario;
    int rv = read_scenario(o, &scenario, &len);
    if (rv != CTL_EXIT_OK)
        return rv;
    rv = ctl_cli_call_and_print(o, "POST", "/api/v1/scenarios/validate", scenario_type(o->args[1]),
                                scenario, len, ctl_print_summary, "the validation");
    free(scenario);
    return rv;
}
