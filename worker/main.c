/* main.c — loadworker's command line: flags, limits, then --local or --join. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "lc_err.h"
#include "lc_log.h"
#include "busy_poll.h"
#include "opts.h"
#include "sysinfo.h"
#include "tls.h"

#define USERS_PER_THREAD 10000u

static void usage(FILE *out)
{
    fprintf(out,
            "usage: loadworker --join HOST:PORT[,HOST:PORT…] [options]\n"
            "       loadworker --local SCENARIO.json [--threads N] [--json]\n"
            "\n"
            "  --join LIST       connect to the masters' worker port (tries each in turn)\n"
            "  --local FILE      run FILE on this machine without a master and print a report;\n"
            "                    exits 99 when one of its thresholds failed (as k6)\n"
            "  --threads N       engine threads (default: number of cores)\n"
            "  --busy-poll-us N  while responses come less than N µs apart, an engine polls\n"
            "                    for the next instead of sleeping, sparing the target the\n"
            "                    cost of waking it; the time polled is not counted as busy\n"
            "                    in the CPU use reported (default 200; 0: always sleep; <= 1000)\n"
            "  --capacity N      users this worker offers (default: min(threads*10000,\n"
            "                    open-file limit - 64))\n"
            "  --source-addrs A,B,…  local IPv4/IPv6 addresses to spread connections over\n"
            "                    (each gives its own range of ephemeral ports)\n"
            "  --name NAME       name shown to people (default: host name)\n"
            "  --data-dir DIR    where the worker id is kept (default: ./loadworker-data)\n"
            "  --orphan-timeout S  with no leader reachable, keep running for S seconds,\n"
            "                    then stop the runs (default 60; 0: never stop; 1..86400)\n"
            "  --outbox-max-mb N  bound of the unacknowledged stats kept for the master;\n"
            "                    beyond it the oldest are dropped and counted (default 64)\n"
            "  --outbox-max-kb N  the same bound in KiB (for tests and small machines)\n"
            "  --join-secret-file F  the cluster's join secret: answers the master's\n"
            "                    challenge (HMAC-SHA256) when it requires one\n"
            "  --tls-cert F      mutual TLS with the masters: this worker's certificate\n"
            "                    chain (PEM), given with --tls-key and --tls-ca\n"
            "  --tls-key F       its private key\n"
            "  --tls-ca F        CAs the masters' certificates chain to (they must also\n"
            "                    name the host dialed)\n"
            "  --tls-ca-dir DIR  where scenarios' tls.ca_file names CA files (plain names,\n"
            "                    regular files up to 1 MiB; without it ca_file is refused)\n"
            "  --health-addr HOST:PORT  serve /healthz and /metrics here\n"
            "  --log-level L     debug, info, warn or error (default: info)\n"
            "  --log-file F      append logs to F instead of stderr; SIGHUP reopens it\n"
            "  --json            with --local: print the report as JSON\n"
            "  --trace           with --local: a dry run of one user and one iteration (with\n"
            "                    on_start and on_stop), tracing each request, status, latency,\n"
            "                    extracted value (secrets redacted) and error\n"
            "  --help, --version\n");
}

static int parse_range(const char *flag, const char *text, unsigned long min, unsigned long max,
                       unsigned long *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(text, &end, 10);
    if (*text < '0' || *text > '9' || *end != '\0' || errno != 0 || v < min || v > max) {
        fprintf(stderr, "loadworker: %s: expected an integer from %lu to %lu, got '%s'\n", flag,
                min, max, text);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_uint(const char *flag, const char *text, unsigned long max, unsigned long *out)
{
    return parse_range(flag, text, 1, max, out);
}

enum {
    OPT_THREADS = 256,
    OPT_CAPACITY,
    OPT_NAME,
    OPT_DATA_DIR,
    OPT_LOG_LEVEL,
    OPT_JSON,
    OPT_TRACE,
    OPT_SOURCE_ADDRS,
    OPT_ORPHAN_TIMEOUT,
    OPT_OUTBOX_MAX_MB,
    OPT_OUTBOX_MAX_KB,
    OPT_JOIN_SECRET,
    OPT_TLS_CERT,
    OPT_TLS_KEY,
    OPT_TLS_CA,
    OPT_HEALTH_ADDR,
    OPT_LOG_FILE,
    OPT_TLS_CA_DIR,
    OPT_BUSY_POLL
};

static const struct option long_opts[] = {
    {"join", required_argument, NULL, 'j'},
    {"local", required_argument, NULL, 'l'},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"capacity", required_argument, NULL, OPT_CAPACITY},
    {"busy-poll-us", required_argument, NULL, OPT_BUSY_POLL},
    {"name", required_argument, NULL, OPT_NAME},
    {"data-dir", required_argument, NULL, OPT_DATA_DIR},
    {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
    {"json", no_argument, NULL, OPT_JSON},
    {"trace", no_argument, NULL, OPT_TRACE},
    {"source-addrs", required_argument, NULL, OPT_SOURCE_ADDRS},
    {"orphan-timeout", required_argument, NULL, OPT_ORPHAN_TIMEOUT},
    {"outbox-max-mb", required_argument, NULL, OPT_OUTBOX_MAX_MB},
    {"outbox-max-kb", required_argument, NULL, OPT_OUTBOX_MAX_KB},
    {"join-secret-file", required_argument, NULL, OPT_JOIN_SECRET},
    {"tls-cert", required_argument, NULL, OPT_TLS_CERT},
    {"tls-key", required_argument, NULL, OPT_TLS_KEY},
    {"tls-ca", required_argument, NULL, OPT_TLS_CA},
    {"tls-ca-dir", required_argument, NULL, OPT_TLS_CA_DIR},
    {"health-addr", required_argument, NULL, OPT_HEALTH_ADDR},
    {"log-file", required_argument, NULL, OPT_LOG_FILE},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

/* One option; returns 0, 1 to exit 0 (help/version), or -1 for a bad flag. */
static int apply_opt(int c, worker_opts_t *o)
{
    unsigned long v;
    int level;
    char why[300];
    switch (c) {
    case 'j': o->join = optarg; return 0;
    case 'l': o->local = optarg; return 0;
    case OPT_NAME: o->name = optarg; return 0;
    case OPT_DATA_DIR: o->data_dir = optarg; return 0;
    case OPT_JSON: o->json = true; return 0;
    case OPT_TRACE: o->trace = true; return 0;
    case OPT_TLS_CERT: o->tls.cert = optarg; return 0;
    case OPT_TLS_KEY: o->tls.key = optarg; return 0;
    case OPT_TLS_CA: o->tls.ca = optarg; return 0;
    case OPT_HEALTH_ADDR: o->health_addr = optarg; return 0;
    case OPT_LOG_FILE: o->log_file = optarg; return 0;
    case OPT_THREADS:
        if (parse_uint("--threads", optarg, 1024, &v) != 0)
            return -1;
        o->threads = (unsigned)v;
        return 0;
    case OPT_CAPACITY:
        if (parse_uint("--capacity", optarg, 100000000, &v) != 0)
            return -1;
        o->capacity = (uint32_t)v;
        return 0;
    case OPT_BUSY_POLL:
        if (parse_range("--busy-poll-us", optarg, 0, WORKER_BUSY_POLL_MAX_US, &v) != 0)
            return -1;
        o->busy_poll_us = (uint32_t)v;
        return 0;
    case OPT_ORPHAN_TIMEOUT:
        /* 0 disables: runs then go on without a leader until their own end. */
        if (parse_range("--orphan-timeout", optarg, 0, 86400, &v) != 0)
            return -1;
        o->orphan_timeout_s = (uint32_t)v;
        return 0;
    case OPT_OUTBOX_MAX_MB:
        if (parse_uint("--outbox-max-mb", optarg, 4096, &v) != 0)
            return -1;
        o->outbox_max_bytes = (size_t)v << 20;
        return 0;
    case OPT_OUTBOX_MAX_KB:
        if (parse_uint("--outbox-max-kb", optarg, 4096ul << 10, &v) != 0)
            return -1;
        o->outbox_max_bytes = (size_t)v << 10;
        return 0;
    case OPT_LOG_LEVEL:
        if ((level = lc_log_level_parse(optarg)) < 0) {
            fprintf(stderr, "loadworker: --log-level: expected debug, info, warn or error\n");
            return -1;
        }
        lc_log_set_level((enum lc_log_level)level);
        return 0;
    case OPT_JOIN_SECRET:
        if (lc_join_secret_load(optarg, &o->join_secret, why, sizeof why) != 0) {
            fprintf(stderr, "loadworker: --join-secret-file: %s\n", why);
            return -1;
        }
        return 0;
    case OPT_TLS_CA_DIR:
        if (worker_tls_ca_dir_set(optarg, why, sizeof why) != 0) {
            fprintf(stderr, "loadworker: %s\n", why);
            return -1;
        }
        return 0;
    case OPT_SOURCE_ADDRS:
        if (worker_source_addrs_set(optarg, why, sizeof why) != 0) {
            fprintf(stderr, "loadworker: %s\n", why);
            return -1;
        }
        return 0;
    case 'h': usage(stdout); return 1;
    case 'V': printf("loadworker %s\n", LC_VERSION); return 1;
    default: return -1;
    }
}

static int parse_args(int argc, char **argv, worker_opts_t *o)
{
    int c, rv;
    opterr = 1;
    while ((c = getopt_long(argc, argv, "", long_opts, NULL)) != -1)
        if ((rv = apply_opt(c, o)) != 0)
            return rv;
    if (optind < argc) {
        fprintf(stderr, "loadworker: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    if ((o->join == NULL) == (o->local == NULL)) {
        fprintf(stderr, "loadworker: give exactly one of --join or --local (see --help)\n");
        return -1;
    }
    if (o->trace && o->local == NULL) {
        fprintf(stderr, "loadworker: --trace goes with --local\n");
        return -1;
    }
    if (o->json && o->local == NULL) {
        fprintf(stderr, "loadworker: --json goes with --local\n");
        return -1;
    }
    char why[256];
    if (lc_tls_files_check(&o->tls, why, sizeof why) == LC_EINVAL) {
        fprintf(stderr, "loadworker: %s\n", why);
        return -1;
    }
    if (o->log_file != NULL && lc_log_open_file(o->log_file, why, sizeof why) != 0) {
        fprintf(stderr, "loadworker: --log-file: %s\n", why);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    worker_opts_t o = {.data_dir = "./loadworker-data", .orphan_timeout_s = 60,
                       .busy_poll_us = WORKER_BUSY_POLL_DEFAULT_US,
                       .outbox_max_bytes = (size_t)64 << 20};
    int rv = parse_args(argc, argv, &o);
    if (rv != 0)
        return rv > 0 ? 0 : 2;
    /* A peer that resets a connection must cost an error count, not the process. */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGHUP, SIG_IGN); /* a reload during start must not end the process */
    if (o.threads == 0) {
        int n = uv_available_parallelism();
        o.threads = n > 0 ? (unsigned)n : 1;
    }
    uint64_t nofile = worker_raise_nofile();
    uint64_t by_fd = nofile > WORKER_FD_RESERVE ? nofile - WORKER_FD_RESERVE : 1;
    if (o.capacity == 0) {
        uint64_t by_threads = (uint64_t)o.threads * USERS_PER_THREAD;
        o.capacity = (uint32_t)(by_fd < by_threads ? by_fd : by_threads);
    } else if (o.capacity > by_fd) {
        lc_warn("worker", "msg=\"--capacity exceeds what the open-file limit holds: larger "
                          "assignments will be refused\" capacity=%u nofile=%llu fit=%llu",
                o.capacity, (unsigned long long)nofile, (unsigned long long)by_fd);
    }
    return o.local ? worker_local_main(&o) : worker_join_main(&o);
}
