/* hostile_worker.c — lc_hostile_worker, a worker impostor that plays one
 * attack on a master's worker port per invocation (issue 12) and prints one
 * line saying what the master did: "welcomed", "refused: <reason>",
 * "closed", "open", "acked", "not acked", ... Diagnostics go to stderr.
 * Every attack is bounded to a few seconds.
 *
 * This file: the options and main(); the connections and the handshake are in
 * hostile_conn.c, the attacks in hostile_attacks.c. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostile_worker.h"
#include "lc_join.h"
#include "lc_protocol.h"

static const char usage[] =
    "usage: lc_hostile_worker ATTACK --connect IP:PORT [--secret-file F] [--proof legacy|bound]\n"
    "                         [--capacity N] [options]\n"
    "attacks (one per invocation):\n"
    "  double-hello --id A --id2 B     join as A, send a second Hello as B, disconnect\n"
    "  stats --id A --run N --seq S [--requests K] [--failures F] [--endpoint NAME]\n"
    "        [--kind KIND] [--interval T] [--final] [--claim RUN:GEN:USERS]\n"
    "                                  send a forged StatsBatch: acked / not acked / closed\n"
    "  refuse --id A --run N [--gen G] --reason TEXT | --reason-hex HEX\n"
    "                                  send an AssignRefused\n"
    "  claim --id A --run N --gen G --users U [--hold S]\n"
    "                                  Hello claiming run N, heartbeats every second\n"
    "  heartbeat-nan --id A [--name-bytes N] [--hold S]\n"
    "                                  a non-UTF-8 name of N bytes (10240), NaN/Inf CPU\n"
    "  oversize                        a 16 MiB length prefix and 1 MiB before any Hello\n"
    "  silent --count N --hold S       N connections that send nothing\n"
    "  takeover --id A                 join as A while the worker A is connected\n"
    "  proof-for-other-id --id A --as B  the join proof made for B in a Hello as A\n";

hw_opts_t hw;

/* ---- options -------------------------------------------------------------- */

static bool parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || s[0] == '-')
        return false;
    *out = v;
    return true;
}

static bool parse_claim(const char *s)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", s);
    char *run = strtok(buf, ":"), *gen = strtok(NULL, ":"), *users = strtok(NULL, ":");
    uint64_t r, g, u;
    if (run == NULL || gen == NULL || users == NULL || !parse_u64(run, &r) ||
        !parse_u64(gen, &g) || !parse_u64(users, &u) || u > UINT32_MAX)
        return false;
    hw.claim = (Lc__RunLoad)LC__RUN_LOAD__INIT;
    hw.claim.run = r;
    hw.claim.generation = g;
    hw.claim.users = (uint32_t)u;
    hw.claim.connections = (uint32_t)u;
    hw.have_claim = true;
    return true;
}

enum {
    OPT_CONNECT = 256, OPT_SECRET, OPT_PROOF, OPT_ID, OPT_ID2, OPT_AS, OPT_RUN, OPT_SEQ,
    OPT_REQUESTS, OPT_FAILURES, OPT_ENDPOINT, OPT_KIND, OPT_INTERVAL, OPT_FINAL, OPT_CLAIM,
    OPT_REASON, OPT_REASON_HEX, OPT_GEN, OPT_USERS, OPT_HOLD, OPT_COUNT, OPT_NAME_BYTES,
    OPT_CAPACITY,
};

static bool parse_option(int opt, const char *arg)
{
    uint64_t v = 0;
    switch (opt) {
    case OPT_CONNECT: hw.address = arg; return true;
    case OPT_SECRET: hw.secret_file = arg; return true;
    case OPT_PROOF: hw.proof = arg; return strcmp(arg, "legacy") == 0 || strcmp(arg, "bound") == 0;
    case OPT_ID: hw.id = arg; return true;
    case OPT_ID2: hw.id2 = arg; return true;
    case OPT_AS: hw.as = arg; return true;
    case OPT_ENDPOINT: hw.endpoint = arg; return true;
    case OPT_KIND: hw.kind = arg; return true;
    case OPT_REASON: hw.reason = arg; return true;
    case OPT_REASON_HEX: hw.reason_hex = arg; return true;
    case OPT_FINAL: hw.final = true; return true;
    case OPT_CLAIM: return parse_claim(arg);
    case OPT_HOLD: hw.hold = atof(arg); return hw.hold > 0 && hw.hold <= 60;
    default: break;
    }
    if (!parse_u64(arg, &v))
        return false;
    switch (opt) {
    case OPT_RUN: hw.run = v; return true;
    case OPT_SEQ: hw.seq = v; return true;
    case OPT_REQUESTS: hw.requests = v; return true;
    case OPT_FAILURES: hw.failures = v; return true;
    case OPT_INTERVAL: hw.interval = v; return v <= UINT32_MAX;
    case OPT_GEN: hw.gen = v; hw.have_gen = true; return true;
    case OPT_USERS: hw.users = (uint32_t)v; return v <= UINT32_MAX;
    case OPT_COUNT: hw.count = (uint32_t)v; return v >= 1 && v <= 4000;
    case OPT_NAME_BYTES: hw.name_bytes = (uint32_t)v; return v >= 1 && v <= (1u << 20);
    case OPT_CAPACITY: hw.capacity = (uint32_t)v; return v <= UINT32_MAX;
    default: return false;
    }
}

static bool needs(bool ok, const char *what)
{
    if (!ok)
        fprintf(stderr, "lc_hostile_worker %s: needs %s\n", hw.attack, what);
    return ok;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"connect", required_argument, NULL, OPT_CONNECT},
        {"secret-file", required_argument, NULL, OPT_SECRET},
        {"proof", required_argument, NULL, OPT_PROOF},
        {"id", required_argument, NULL, OPT_ID},
        {"id2", required_argument, NULL, OPT_ID2},
        {"as", required_argument, NULL, OPT_AS},
        {"run", required_argument, NULL, OPT_RUN},
        {"seq", required_argument, NULL, OPT_SEQ},
        {"requests", required_argument, NULL, OPT_REQUESTS},
        {"failures", required_argument, NULL, OPT_FAILURES},
        {"endpoint", required_argument, NULL, OPT_ENDPOINT},
        {"kind", required_argument, NULL, OPT_KIND},
        {"interval", required_argument, NULL, OPT_INTERVAL},
        {"final", no_argument, NULL, OPT_FINAL},
        {"claim", required_argument, NULL, OPT_CLAIM},
        {"reason", required_argument, NULL, OPT_REASON},
        {"reason-hex", required_argument, NULL, OPT_REASON_HEX},
        {"gen", required_argument, NULL, OPT_GEN},
        {"users", required_argument, NULL, OPT_USERS},
        {"hold", required_argument, NULL, OPT_HOLD},
        {"count", required_argument, NULL, OPT_COUNT},
        {"name-bytes", required_argument, NULL, OPT_NAME_BYTES},
        {"capacity", required_argument, NULL, OPT_CAPACITY},
        {NULL, 0, NULL, 0}};
    signal(SIGPIPE, SIG_IGN);
    setvbuf(stdout, NULL, _IOLBF, 0);
    hw.proof = "bound";
    hw.hold = 3;
    hw.requests = 1;
    hw.seq = 1;
    hw.count = 1;
    hw.name_bytes = 10240;
    if (argc < 2 || argv[1][0] == '-') {
        fputs(usage, stderr);
        return 2;
    }
    hw.attack = argv[1];
    optind = 2;
    for (int opt; (opt = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        if (opt == '?' || !parse_option(opt, optarg)) {
            if (opt != '?')
                fprintf(stderr, "lc_hostile_worker: bad value for an option: %s\n", optarg);
            fputs(usage, stderr);
            return 2;
        }
    }
    if (optind != argc || !needs(hw.address != NULL, "--connect"))
        return 2;
    char why[256];
    if (hw.secret_file && lc_join_secret_load(hw.secret_file, &hw.secret, why, sizeof why) != 0) {
        fprintf(stderr, "lc_hostile_worker: %s\n", why);
        return 2;
    }
    const char *a = hw.attack;
    if (strcmp(a, "double-hello") == 0)
        return needs(hw.id && hw.id2, "--id and --id2") ? hw_attack_double_hello() : 2;
    if (strcmp(a, "stats") == 0)
        return needs(hw.id && hw.run, "--id and --run") ? hw_attack_stats() : 2;
    if (strcmp(a, "refuse") == 0)
        return needs(hw.id && hw.run && (hw.reason || hw.reason_hex),
                     "--id, --run and --reason or --reason-hex") ? hw_attack_refuse() : 2;
    if (strcmp(a, "claim") == 0)
        return needs(hw.id && hw.run && hw.have_gen, "--id, --run and --gen") ? hw_attack_claim()
                                                                               : 2;
    if (strcmp(a, "heartbeat-nan") == 0)
        return needs(hw.id != NULL, "--id") ? hw_attack_heartbeat_nan() : 2;
    if (strcmp(a, "oversize") == 0)
        return hw_attack_oversize();
    if (strcmp(a, "silent") == 0)
        return hw_attack_silent();
    if (strcmp(a, "takeover") == 0)
        return needs(hw.id != NULL, "--id") ? hw_attack_takeover() : 2;
    if (strcmp(a, "proof-for-other-id") == 0)
        return needs(hw.id && hw.as, "--id and --as") ? hw_attack_proof_for_other_id() : 2;
    fprintf(stderr, "lc_hostile_worker: unknown attack %s\n", a);
    fputs(usage, stderr);
    return 2;
}
