/* history_gen.c — lc_history_gen: a master data directory whose Raft snapshot holds a generated
 * run history (issue 13: "1,000 run-hours at 20 endpoints"), made through the real state machine.
 *
 * Every command goes through the leader's own builders (master/cluster/commands.c), is encoded as
 * a log entry (fsm_encode_command) and applied by the FSM's apply callback (master/cluster/fsm.c)
 * to a store in the order a leader proposes them: CreateTenant, then per run
 * CreateRun, RunGrant, RunAssignment, RunState running, one RunSeconds per run-second (one
 * worker's StatsBatch with every endpoint: counts, failures, bytes, error kinds and a sparse
 * histogram of a few dozen distinct latencies), RunState stopping, RunFinished with the verdict
 * and threshold results the runs controller computes (run_thresholds_eval); at the end the
 * leader's retention module (master/runs/retention.c) proposes the steps due by now under the
 * master's default policy (a run finished more than an hour ago has its acks dropped).
 *
 * The store is an SQLite file in WAL mode, as loadmaster's state.db (store_open_file), built in
 * the data directory as history-gen.db and removed once the image is taken, so memory stays
 * small until then; taking the image needs about twice its size (sqlite3_serialize's copy and
 * store_serialize's), then once while raft compresses it (lz4, as loadmaster does).
 *
 * The snapshot is taken with the FSM's own snapshot callbacks (snapshot, snapshot_async,
 * snapshot_finalize: the serialized SQLite image) and written with raft's libuv I/O, the one
 * loadmaster uses: io.init, io.bootstrap with the one-voter configuration (term 1, the
 * configuration entry at index 1), io.load, then io.snapshot_put with trailing 0 at index
 * 1 + commands applied. Trailing 0 is raft's "install" mode: it moves the next append index past
 * the snapshot and deletes every closed segment, so the bootstrap entry goes and the directory
 * holds metadata (term 1) and the snapshot only. loadmaster started on it with the same --id and
 * --raft-addr finds term 1 (raft_bootstrap answers RAFT_CANTBOOTSTRAP, which it ignores),
 * restores the snapshot and elects itself.
 *
 * Limit: raft 0.15 reads a snapshot file with a single read() (UvFsReadInto), which returns at
 * most 2 GiB - 4 KiB on Linux, and calls the rest a "short read": a snapshot file larger than
 * that (about 360 run-hours at 20 endpoints, lz4 making the image about 0.7 of its size) is
 * written but cannot be loaded. The tool warns when it wrote one. */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <raft.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "commands.h"
#include "fsm.h"
#include "history_snapshot.h"
#include "lc_clock.h"
#include "lc_err.h"
#include "lc_hist.h"
#include "lc_log.h"
#include "lc_scenario.h"
#include "retention.h"
#include "run_verdict.h"
#include "store.h"
#include "store_archive.h"

static const char usage[] =
    "usage: lc_history_gen --data-dir DIR [options]\n"
    "  --data-dir DIR          master data directory to create (must not exist or be empty)\n"
    "  --runs N                runs to generate (10), the long run included\n"
    "  --hours-per-run H       length of each run in hours (1; fractions allowed: 0.05)\n"
    "  --long-run-hours L      make the newest-finishing run L hours long instead (0: none)\n"
    "  --endpoints E           endpoints (tasks) per run (20, at most 256)\n"
    "  --users U               users per run (50)\n"
    "  --raft-addr HOST:PORT   the one voter of the stored configuration (127.0.0.1:5556);\n"
    "                          loadmaster must be started with the same --raft-addr\n"
    "  --id N                  its Raft id (1); loadmaster's --id\n"
    "  --tenant NAME           tenant of the runs (default)\n"
    "  --span-days D           runs lie within the last D days (29: inside --history-full 30d);\n"
    "                          runs that do not fit one after the other overlap\n"
    "  --no-retention          do not apply the retention steps due by now\n"
    "  --archive               archive each run once generated (RetainHistory archive, then\n"
    "                          what each master's archiver does: its seconds go to\n"
    "                          DIR/archive/run-N.db, out of the database and the snapshot)\n"
    "  --seed N                random seed (1)\n"
    "Prints one line: runs, run-hours, rows, image and snapshot bytes, seconds taken.\n";

#define GEN_WORKER "gen-worker-1"
#define GEN_SEQ_EPOCH (UINT64_C(1) << 32)
#define GEN_RAMP_S 30u             /* users spawn over the first 30 s */
#define GEN_GAP_MS (5u * 60u * 1000u) /* between runs of one timeline, and before now */
#define GEN_STAGGER_MS (17u * 60u * 1000u) /* between the ends of two timelines */
#define GEN_ENDPOINTS_MAX 256u
#define GEN_RETENTION_STEPS_MAX 10000000u
#define GEN_DB_NAME "history-gen.db" /* in the data dir while it is built, removed after */

typedef struct gen_opts_s {
    const char *data_dir;
    unsigned runs;
    double hours_per_run, long_run_hours, span_days;
    unsigned endpoints, users;
    const char *raft_addr;
    uint64_t id;
    const char *tenant;
    bool retention;
    bool archive;
    uint64_t seed;
} gen_opts_t;

/* How one endpoint behaves: its share of the load, latency and failures. */
typedef struct endpoint_s {
    char name[16], method[8];
    double rps;         /* requests per second with every user running */
    double median_us, sigma;
    double fail_rate;
    uint32_t resp_bytes;
} endpoint_t;

/* When one run happened. */
typedef struct run_plan_s {
    uint64_t created_ms, started_ms;
    uint32_t seconds;
} run_plan_t;

typedef struct gen_s {
    gen_opts_t o;
    store_t *store;
    fsm_t fsm;
    command_sink_t sink;
    uint64_t rng;
    endpoint_t eps[GEN_ENDPOINTS_MAX];
    lc_hist_t *scratch;
    /* what was applied */
    uint64_t commands, rows, requests, retention_steps;
    uint64_t archived, archive_bytes;
    double archive_s;          /* export, prune and vacuum, all runs */
    int first_error;           /* the first command that did not apply: its code */
    int first_error_case;      /* and its Command case */
    uint64_t largest_run, largest_requests;
    char db_path[4096];        /* the store while it is built; "" before */
} gen_t;

/* ---- options ------------------------------------------------------------ */

static int parse_number(const char *flag, const char *arg, double min, double max, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    if (errno != 0 || end == arg || *end != '\0' || !(v >= min && v <= max)) {
        fprintf(stderr, "lc_history_gen: %s: expected a number in [%g, %g], got \"%s\"\n", flag,
                min, max, arg);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_opt(gen_opts_t *o, int opt, const char *arg)
{
    double v = 0;
    int rv = 0;
    switch (opt) {
    case 'd': o->data_dir = arg; break;
    case 'r': rv = parse_number("--runs", arg, 1, 1e6, &v); o->runs = (unsigned)v; break;
    case 'h': rv = parse_number("--hours-per-run", arg, 1.0 / 3600, 168, &o->hours_per_run); break;
    case 'l': rv = parse_number("--long-run-hours", arg, 0, 168, &o->long_run_hours); break;
    case 'e':
        rv = parse_number("--endpoints", arg, 1, GEN_ENDPOINTS_MAX, &v);
        o->endpoints = (unsigned)v;
        break;
    case 'u': rv = parse_number("--users", arg, 1, 100000, &v); o->users = (unsigned)v; break;
    case 'a': o->raft_addr = arg; break;
    case 'i': rv = parse_number("--id", arg, 1, 1e15, &v); o->id = (uint64_t)v; break;
    case 't': o->tenant = arg; break;
    case 's': rv = parse_number("--span-days", arg, 1.0 / 24, 3650, &o->span_days); break;
    case 'n': o->retention = false; break;
    case 'A': o->archive = true; break;
    case 'S': rv = parse_number("--seed", arg, 1, 1e18, &v); o->seed = (uint64_t)v; break;
    default: rv = -1;
    }
    return rv;
}

static int parse_opts(int argc, char **argv, gen_opts_t *o)
{
    static const struct option opts[] = {
        {"data-dir", required_argument, NULL, 'd'},   {"runs", required_argument, NULL, 'r'},
        {"hours-per-run", required_argument, NULL, 'h'},
        {"long-run-hours", required_argument, NULL, 'l'},
        {"endpoints", required_argument, NULL, 'e'},  {"users", required_argument, NULL, 'u'},
        {"raft-addr", required_argument, NULL, 'a'},  {"id", required_argument, NULL, 'i'},
        {"tenant", required_argument, NULL, 't'},     {"span-days", required_argument, NULL, 's'},
        {"no-retention", no_argument, NULL, 'n'},     {"seed", required_argument, NULL, 'S'},
        {"archive", no_argument, NULL, 'A'},
        {NULL, 0, NULL, 0}};
    *o = (gen_opts_t){.runs = 10, .hours_per_run = 1, .span_days = 29, .endpoints = 20,
                      .users = 50, .raft_addr = "127.0.0.1:5556", .id = 1, .tenant = "default",
                      .retention = true, .seed = 1};
    for (int opt; (opt = getopt_long(argc, argv, "", opts, NULL)) != -1;)
        if (parse_opt(o, opt, optarg) != 0)
            return -1;
    if (optind != argc || o->data_dir == NULL) {
        fprintf(stderr, "lc_history_gen: %s\n",
                o->data_dir == NULL ? "--data-dir is required" : "unexpected argument");
        return -1;
    }
    return 0;
}

/* ---- the data directory -------------------------------------------------- */

/* Creates dir, or accepts it when it exists and is empty. */
static int prepare_dir(const char *dir, char *errmsg, size_t len)
{
    if (mkdir(dir, 0750) == 0)
        return 0;
    if (errno != EEXIST)
        return lc_errf(errmsg, len, LC_EIO, "create %s: %s", dir, strerror(errno));
    DIR *d = opendir(dir);
    if (d == NULL)
        return lc_errf(errmsg, len, LC_EIO, "open %s: %s", dir, strerror(errno));
    int rv = 0;
    for (struct dirent *e; rv == 0 && (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            rv = lc_errf(errmsg, len, LC_ESTATE, "%s is not empty (it holds %s)", dir, e->d_name);
    closedir(d);
    return rv;
}

/* ---- the FSM sink: what the leader proposes, applied at once ------------ */

static int fsm_sink_propose(void *arg, const Lc__Command *cmd, quorum_applied_cb cb, void *cb_arg)
{
    gen_t *g = arg;
    struct raft_buffer entry;
    int rv = fsm_encode_command(cmd, &entry);
    if (rv != 0)
        return rv;
    void *result = NULL;
    rv = g->fsm.raft.apply(&g->fsm.raft, &entry, &result);
    raft_free(entry.base);
    assert(rv == 0); /* fsm_apply never fails the log: the store's code is the result */
    int code = fsm_result_code(result);
    g->commands++;
    /* The leader proposes CreateTenant "default" at every election: ESTATE when it exists. */
    bool existing_tenant = code == LC_ESTATE && cmd->cmd_case == LC__COMMAND__CMD_CREATE_TENANT;
    if (code != 0 && !existing_tenant && g->first_error == 0) {
        g->first_error = code;
        g->first_error_case = (int)cmd->cmd_case;
    }
    if (cb != NULL)
        cb(cb_arg, 0, code);
    return 0;
}

/* ---- synthetic statistics ------------------------------------------------ */

/* xorshift64*: fast, and the same history for the same --seed. */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * UINT64_C(2685821657736338717);
}

static double rng_unit(uint64_t *s)
{
    return (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* A standard normal deviate (Box-Muller). */
static double rng_gauss(uint64_t *s)
{
    double u = rng_unit(s), v = rng_unit(s);
    return sqrt(-2.0 * log(u > 0 ? u : 1e-300)) * cos(2.0 * M_PI * v);
}

/* Endpoint i: a mix of fast reads, slower writes and one or two slow, failing ones. */
static void endpoints_init(gen_t *g)
{
    static const uint32_t sizes[] = {512, 2048, 8192, 32768, 1200, 300};
    for (unsigned i = 0; i < g->o.endpoints; i++) {
        endpoint_t *e = &g->eps[i];
        bool write = i % 4 == 3;
        snprintf(e->name, sizeof e->name, "ep%02u", i + 1);
        snprintf(e->method, sizeof e->method, "%s", write ? "POST" : "GET");
        e->rps = (write ? 10.0 : 40.0) * (0.5 + rng_unit(&g->rng));
        e->median_us = (write ? 30000.0 : 6000.0) * (0.5 + 1.5 * rng_unit(&g->rng));
        e->sigma = 0.35 + 0.4 * rng_unit(&g->rng);
        e->fail_rate = i % 7 == 6 ? 0.03 : 0.002 * rng_unit(&g->rng);
        e->resp_bytes = sizes[i % (sizeof sizes / sizeof sizes[0])];
    }
}

/* The load at second t: users ramp up, then a slow wave and ±10 % noise. */
static double load_factor(gen_t *g, uint32_t t)
{
    double ramp = t < GEN_RAMP_S ? (double)t / GEN_RAMP_S : 1.0;
    double wave = 1.0 + 0.15 * sin(2.0 * M_PI * (double)t / 600.0);
    return ramp * wave * (0.9 + 0.2 * rng_unit(&g->rng));
}

/* A latency for e: log-normal around its median, three times slower in the
 * one minute of every fifteen when the system under test struggles. */
static uint64_t latency_us(gen_t *g, const endpoint_t *e, bool slow)
{
    double v = e->median_us * (slow ? 3.0 : 1.0) * exp(e->sigma * rng_gauss(&g->rng));
    return v < 50 ? 50 : v > 60e6 ? 60000000u : (uint64_t)v;
}

/* Fills es with count requests of e: a few dozen distinct latencies sharing the count. */
static int endpoint_second(gen_t *g, const endpoint_t *e, uint64_t count, bool slow,
                           Lc__EndpointStats *es)
{
    assert(count > 0);
    lc_hist_init(g->scratch);
    uint64_t distinct = 24 + rng_next(&g->rng) % 25;
    distinct = distinct < count ? distinct : count;
    for (uint64_t k = 0; k < distinct; k++) {
        uint64_t v = latency_us(g, e, slow);
        uint64_t n = count / distinct + (k < count % distinct);
        for (uint64_t j = 0; j < n; j++)
            lc_hist_record(g->scratch, v);
    }
    double p = e->fail_rate * (slow ? 5.0 : 1.0);
    double f = (double)count * p + sqrt((double)count * p) * rng_gauss(&g->rng);
    uint64_t failures = f < 0.5 ? 0 : (uint64_t)(f + 0.5);
    failures = failures > count ? count : failures;
    lc__endpoint_stats__init(es);
    es->name = (char *)e->name;
    es->method = (char *)e->method;
    es->count = count;
    es->failures = failures;
    es->bytes = (count - failures) * e->resp_bytes + failures * 120u;
    size_t len;
    int rv = lc_hist_encode(g->scratch, &es->hist.data, &len);
    es->hist.len = len;
    return rv;
}

/* The batch of second t (1-based, as a worker stamps it): every endpoint, and
 * the failures split into status and timeout errors. */
typedef struct second_s {
    Lc__StatsBatch batch;
    Lc__EndpointStats eps[GEN_ENDPOINTS_MAX], *ep_ptrs[GEN_ENDPOINTS_MAX];
    Lc__ErrorCount errs[2 * GEN_ENDPOINTS_MAX], *err_ptrs[2 * GEN_ENDPOINTS_MAX];
} second_t;

static void add_errors(second_t *s, const Lc__EndpointStats *es)
{
    uint64_t timeouts = es->failures / 5;
    const char *kinds[2] = {"status", "timeout"};
    uint64_t counts[2] = {es->failures - timeouts, timeouts};
    for (int k = 0; k < 2; k++) {
        if (counts[k] == 0)
            continue;
        Lc__ErrorCount *ec = &s->errs[s->batch.n_errors];
        lc__error_count__init(ec);
        ec->endpoint = es->name;
        ec->kind = (char *)kinds[k];
        ec->count = counts[k];
        s->err_ptrs[s->batch.n_errors++] = ec;
    }
}

static int second_build(gen_t *g, second_t *s, uint64_t run, uint32_t t, uint32_t seconds)
{
    lc__stats_batch__init(&s->batch);
    s->batch.run = run;
    s->batch.worker_id = GEN_WORKER;
    s->batch.seq = GEN_SEQ_EPOCH + t;
    s->batch.interval = t;
    s->batch.final = t == seconds;
    double factor = load_factor(g, t);
    s->batch.users = s->batch.final ? 0 : (uint32_t)(g->o.users * (factor < 1 ? factor : 1) + 0.5);
    s->batch.endpoints = s->ep_ptrs;
    s->batch.errors = s->err_ptrs;
    bool slow = t % 900 >= 840;
    for (unsigned i = 0; i < g->o.endpoints; i++) {
        double want = g->eps[i].rps * factor;
        uint64_t count = want < 1 ? 1 : (uint64_t)(want + 0.5);
        s->ep_ptrs[i] = &s->eps[i];
        s->batch.n_endpoints = i + 1;
        if (endpoint_second(g, &g->eps[i], count, slow, &s->eps[i]) != 0)
            return LC_ENOMEM;
        g->requests += count;
        add_errors(s, &s->eps[i]);
    }
    return 0;
}

static void second_free(second_t *s)
{
    for (size_t i = 0; i < s->batch.n_endpoints; i++)
        free(s->eps[i].hist.data);
}

/* ---- runs ---------------------------------------------------------------- */

/* The scenario the run was created from (a valid one: it is parsed back). */
static char *scenario_json(gen_t *g, uint64_t id, uint32_t seconds)
{
    json_t *tasks = json_array();
    for (unsigned i = 0; i < g->o.endpoints; i++) {
        char path[32];
        snprintf(path, sizeof path, "/api/%s", g->eps[i].name);
        json_array_append_new(tasks, json_pack("{s:s,s:s,s:s,s:i}", "name", g->eps[i].name,
                                               "method", g->eps[i].method, "path", path,
                                               "weight", (int)(g->eps[i].rps + 1)));
    }
    char name[64], duration[32];
    snprintf(name, sizeof name, "history-%" PRIu64, id);
    snprintf(duration, sizeof duration, "%us", seconds);
    json_t *thresholds = json_pack("{s:[s,s],s:[s],s:[s]}", "http_req_duration", "p(95)<500",
                                   "max<60000", "http_req_failed", "rate<0.01",
                                   "http_req_duration{endpoint:ep01}", "p(99)<1000");
    json_t *sc = json_pack("{s:s,s:s,s:s,s:s,s:i,s:i,s:o,s:o}", "name", name, "tenant",
                           g->o.tenant, "target", "http://127.0.0.1:9", "duration", duration,
                           "users", (int)g->o.users, "spawn_rate", (int)g->o.users, "tasks", tasks,
                           "thresholds", thresholds);
    char *text = sc ? json_dumps(sc, JSON_COMPACT) : NULL;
    json_decref(sc);
    return text;
}

/* What finish() in master/runs/runs.c proposes: the verdict and the threshold results over
 * the run's totals, judged over its own duration (not the wall clock, which is later). */
static int finish_run(gen_t *g, uint64_t id, const lc_scenario_t *sc, const run_plan_t *p)
{
    uint64_t stop_ms = p->started_ms + (uint64_t)p->seconds * 1000u;
    int rv = command_run_state(&g->sink, id, LC_RUN_STOPPING, "duration reached", stop_ms);
    if (rv != 0)
        return rv;
    bool passed = false;
    json_t *results = run_thresholds_eval(g->store, id, sc, (uint64_t)p->seconds * 1000u, &passed);
    json_t *summary = results ? json_pack("{s:o}", "thresholds", results) : NULL;
    char *text = summary ? json_dumps(summary, JSON_COMPACT) : NULL;
    json_decref(summary);
    if (text == NULL)
        return LC_ENOMEM;
    rv = command_run_finished(&g->sink, id, LC_RUN_FINISHED, passed ? "pass" : "fail", text,
                              stop_ms + 1500);
    free(text);
    return rv;
}

static int run_seconds(gen_t *g, uint64_t id, uint32_t seconds)
{
    second_t *s = malloc(sizeof *s);
    if (s == NULL)
        return LC_ENOMEM;
    int rv = 0;
    for (uint32_t t = 1; rv == 0 && t <= seconds && g->first_error == 0; t++) {
        rv = second_build(g, s, id, t, seconds);
        Lc__StatsBatch *b = &s->batch;
        if (rv == 0)
            rv = command_run_seconds(&g->sink, id, &b, 1, NULL, NULL);
        g->rows += rv == 0 ? s->batch.n_endpoints : 0;
        second_free(s);
    }
    free(s);
    return rv;
}

static int gen_run(gen_t *g, uint64_t id, const run_plan_t *p, char *errmsg, size_t len)
{
    assert(id > 0 && p->seconds > 0 && p->started_ms > p->created_ms);
    char *json = scenario_json(g, id, p->seconds);
    lc_scenario_t sc;
    char why[256];
    if (json == NULL)
        return lc_errf(errmsg, len, LC_ENOMEM, "run %" PRIu64 ": out of memory", id);
    if (lc_scenario_parse(json, strlen(json), &sc, why, sizeof why) != 0) {
        free(json);
        return lc_errf(errmsg, len, LC_EINVAL, "run %" PRIu64 ": generated scenario: %s", id, why);
    }
    Lc__CreateRun cr = LC__CREATE_RUN__INIT;
    cr.id = id;
    cr.tenant = (char *)g->o.tenant;
    cr.name = sc.name;
    cr.scenario_json = json;
    cr.users = g->o.users;
    cr.created_ms = p->created_ms;
    uint64_t before = g->requests;
    int rv = command_create_run(&g->sink, &cr, NULL, NULL);
    if (rv == 0)
        rv = command_run_grant(&g->sink, id, g->o.users, false, "");
    if (rv == 0)
        rv = command_run_assignment(&g->sink, id, 1,
                                    &(command_share_t){GEN_WORKER, g->o.users}, 1);
    if (rv == 0)
        rv = command_run_state(&g->sink, id, LC_RUN_RUNNING, "", p->started_ms);
    if (rv == 0)
        rv = run_seconds(g, id, p->seconds);
    if (rv == 0)
        rv = finish_run(g, id, &sc, p);
    if (g->requests - before > g->largest_requests) {
        g->largest_requests = g->requests - before;
        g->largest_run = id;
    }
    lc_scenario_free(&sc);
    free(json);
    return rv != 0 ? lc_errf(errmsg, len, rv, "run %" PRIu64 ": %s", id, lc_strerror(rv)) : 0;
}

/* ---- archiving -------------------------------------------------------------- */

/* RetainHistory archive through the FSM, then what every master's archiver does
 * (runs/archiver.c): the run's file from the database, its rows deleted, pages given back. */
static int archive_run(gen_t *g, uint64_t id, char *errmsg, size_t len)
{
    uint64_t t0 = lc_mono_ns();
    Lc__RetainHistory step = LC__RETAIN_HISTORY__INIT;
    step.run = id;
    step.archive = true;
    int rv = command_retain_history(&g->sink, &step, NULL, NULL);
    char path[4096], dir[4096];
    struct stat st;
    if (rv == 0)
        rv = store_archive_dir(g->db_path, dir, sizeof dir, errmsg, len);
    if (rv == 0)
        rv = store_archive_path(g->db_path, id, path, sizeof path);
    if (rv == 0)
        rv = store_archive_export(g->db_path, id, 1, path, errmsg, len);
    for (int deleted = 65536; rv == 0 && deleted == 65536;)
        rv = store_archive_prune(g->store, id, 65536, &deleted);
    for (bool left = rv == 0; rv == 0 && left;)
        rv = store_vacuum_step(g->store, 65536, &left);
    if (rv == 0 && stat(path, &st) == 0)
        g->archive_bytes += (uint64_t)st.st_size;
    g->archived += rv == 0;
    g->archive_s += (double)(lc_mono_ns() - t0) / 1e9;
    return rv != 0 && errmsg[0] == '\0' ? lc_errf(errmsg, len, rv, "archive run %" PRIu64, id) : rv;
}

/* ---- when the runs happened ------------------------------------------------ */

static int plan_by_start(const void *a, const void *b)
{
    const run_plan_t *x = a, *y = b;
    return x->started_ms < y->started_ms ? -1 : x->started_ms > y->started_ms;
}

/* Runs one after the other on as few timelines as fit into --span-days back from now, the
 * long run finishing last on the first; sorted by start, so ids grow with time as a leader
 * gives them. */
static run_plan_t *plan_runs(const gen_opts_t *o, uint64_t now_ms)
{
    assert(o->runs > 0 && o->span_days > 0);
    run_plan_t *plans = calloc(o->runs, sizeof *plans);
    double span_ms = o->span_days * 86400e3, total_ms = 0;
    for (unsigned i = 0; plans != NULL && i < o->runs; i++) {
        double hours = i == 0 && o->long_run_hours > 0 ? o->long_run_hours : o->hours_per_run;
        plans[i].seconds = (uint32_t)(hours * 3600 + 0.5);
        plans[i].seconds = plans[i].seconds ? plans[i].seconds : 1;
        total_ms += plans[i].seconds * 1000.0 + GEN_GAP_MS;
    }
    if (plans == NULL)
        return NULL;
    size_t lanes = (size_t)ceil(total_ms / span_ms);
    uint64_t *cursor = calloc(lanes, sizeof *cursor);
    if (cursor == NULL) {
        free(plans);
        return NULL;
    }
    for (size_t k = 0; k < lanes; k++) /* staggered: concurrent runs rarely start together */
        cursor[k] = now_ms - GEN_GAP_MS - k * GEN_STAGGER_MS;
    for (unsigned i = 0; i < o->runs; i++) {
        size_t best = 0; /* the timeline that reaches least far back */
        for (size_t k = 1; k < lanes; k++)
            best = cursor[k] > cursor[best] ? k : best;
        uint64_t end = cursor[best];
        plans[i].started_ms = end - (uint64_t)plans[i].seconds * 1000u - 1500u;
        plans[i].created_ms = plans[i].started_ms - 2000u;
        cursor[best] = plans[i].created_ms - GEN_GAP_MS;
    }
    free(cursor);
    qsort(plans, o->runs, sizeof *plans, plan_by_start);
    return plans;
}

/* ---- retention ------------------------------------------------------------ */

/* The steps the leader's retention timer would have proposed by now under loadmaster's
 * default policy (--history-full 30d --history-10s 90d --acks-keep 1h). */
static int apply_retention(gen_t *g, uint64_t now_ms)
{
    const store_retention_policy_t policy = {.full_ms = 30 * 86400000ull,
                                             .ten_s_ms = 90 * 86400000ull,
                                             .max_ms = 0,
                                             .acks_ms = 3600000};
    retention_t *r;
    int rv = retention_init(&r, NULL, g->store, &g->sink, &policy, 200);
    if (rv != 0)
        return rv;
    retention_on_leader(r, true);
    while (g->first_error == 0 && g->retention_steps < GEN_RETENTION_STEPS_MAX &&
           retention_step(r, now_ms))
        g->retention_steps++;
    retention_close(r);
    return g->first_error;
}

/* ---- the snapshot ---------------------------------------------------------- */

/* Removes the scratch database and its WAL files (what store_open_file leaves). */
static void remove_db(gen_t *g)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    char name[sizeof g->db_path + 16];
    for (size_t i = 0; g->db_path[0] != '\0' && i < sizeof suffixes / sizeof suffixes[0]; i++) {
        snprintf(name, sizeof name, "%s%s", g->db_path, suffixes[i]);
        if (unlink(name) != 0 && errno != ENOENT)
            fprintf(stderr, "lc_history_gen: remove %s: %s\n", name, strerror(errno));
    }
}

/* The FSM takes the image as raft would (snapshot on the loop, snapshot_async on a thread,
 * here both at once), raft's I/O writes it, and snapshot_finalize frees it. */
static int write_snapshot(gen_t *g, size_t *image_bytes, char *errmsg, size_t len)
{
    struct raft_fsm *fsm = &g->fsm.raft;
    struct raft_buffer *bufs = NULL;
    unsigned n = 0;
    if (fsm->snapshot(fsm, &bufs, &n) != 0 || fsm->snapshot_async(fsm, &bufs, &n) != 0) {
        fsm->snapshot_finalize(fsm, &bufs, &n);
        return lc_errf(errmsg, len, LC_ENOMEM, "the FSM could not take a snapshot");
    }
    *image_bytes = 0;
    for (unsigned i = 0; i < n; i++)
        *image_bytes += bufs[i].len;
    /* The image is all we need now: the database goes before raft compresses and writes. */
    store_close(g->store);
    g->store = NULL;
    remove_db(g);
    int rv = history_raft_dir_write(g->o.data_dir, g->o.id, g->o.raft_addr, 1 + g->commands,
                                    bufs, n, errmsg, len);
    fsm->snapshot_finalize(fsm, &bufs, &n);
    return rv;
}

/* ---- main ------------------------------------------------------------------ */

static double since_s(uint64_t start_ns)
{
    return (double)(lc_mono_ns() - start_ns) / 1e9;
}

static int generate(gen_t *g, uint64_t now_ms, char *errmsg, size_t len)
{
    run_plan_t *plans = plan_runs(&g->o, now_ms);
    if (plans == NULL)
        return lc_errf(errmsg, len, LC_ENOMEM, "out of memory");
    command_create_tenant(&g->sink, "default", 1, plans[0].created_ms - 60000, NULL, NULL);
    if (strcmp(g->o.tenant, "default") != 0)
        command_create_tenant(&g->sink, g->o.tenant, 1, plans[0].created_ms - 60000, NULL, NULL);
    uint64_t start_ns = lc_mono_ns(), last_ns = start_ns;
    int rv = 0;
    for (unsigned i = 0; rv == 0 && i < g->o.runs && g->first_error == 0; i++) {
        rv = gen_run(g, i + 1, &plans[i], errmsg, len);
        if (rv == 0 && g->o.archive)
            rv = archive_run(g, i + 1, errmsg, len);
        if (lc_mono_ns() - last_ns > 10000000000ull || i + 1 == g->o.runs) {
            last_ns = lc_mono_ns();
            fprintf(stderr, "lc_history_gen: %u/%u runs, %" PRIu64 " rows, %.0f rows/s\n", i + 1,
                    g->o.runs, g->rows, (double)g->rows / since_s(start_ns));
        }
    }
    free(plans);
    if (rv == 0 && g->first_error == 0 && g->o.retention)
        apply_retention(g, now_ms);
    if (rv == 0 && g->first_error != 0)
        rv = lc_errf(errmsg, len, g->first_error, "command case %d did not apply: %s",
                     g->first_error_case, lc_strerror(g->first_error));
    return rv;
}

static double run_hours(const gen_opts_t *o)
{
    double long_h = o->long_run_hours > 0 ? o->long_run_hours : o->hours_per_run;
    return long_h + (o->runs - 1) * o->hours_per_run;
}

int main(int argc, char **argv)
{
    static gen_t gen;
    gen_t *g = &gen;
    char errmsg[512] = "";
    if (parse_opts(argc, argv, &g->o) != 0) {
        fputs(usage, stderr);
        return 2;
    }
    lc_log_set_level(LC_LOG_WARN);
    uint64_t start_ns = lc_mono_ns(), now_ms = lc_wall_ms();
    g->rng = g->o.seed * UINT64_C(0x9E3779B97F4A7C15) | 1;
    endpoints_init(g);
    g->scratch = malloc(sizeof *g->scratch);
    int rv = g->scratch ? 0 : LC_ENOMEM;
    if (rv == 0)
        rv = prepare_dir(g->o.data_dir, errmsg, sizeof errmsg);
    if (rv == 0 && (size_t)snprintf(g->db_path, sizeof g->db_path, "%s/%s", g->o.data_dir,
                                    GEN_DB_NAME) >= sizeof g->db_path)
        rv = lc_errf(errmsg, sizeof errmsg, LC_EINVAL, "--data-dir is too long");
    if (rv == 0)
        rv = store_open_file(&g->store, g->db_path, errmsg, sizeof errmsg);
    if (rv == 0) {
        fsm_init(&g->fsm, g->store);
        g->sink = (command_sink_t){.propose = fsm_sink_propose, .arg = g};
        rv = generate(g, now_ms, errmsg, sizeof errmsg);
    }
    double apply_s = since_s(start_ns);
    size_t image = 0;
    if (rv == 0)
        rv = write_snapshot(g, &image, errmsg, sizeof errmsg);
    store_close(g->store);
    remove_db(g);
    free(g->scratch);
    if (rv != 0) {
        fprintf(stderr, "lc_history_gen: %s\n", errmsg[0] ? errmsg : lc_strerror(rv));
        return 1;
    }
    double total_s = since_s(start_ns);
    uint64_t file = history_snapshot_file_bytes(g->o.data_dir);
    if (file > HISTORY_RAFT_READ_MAX)
        fprintf(stderr, "lc_history_gen: warning: the snapshot file has %" PRIu64 " bytes; raft"
                " 0.15 loads it with one read(), which returns at most %u bytes, so loadmaster"
                " cannot start on %s (\"short read\")\n", file, HISTORY_RAFT_READ_MAX,
                g->o.data_dir);
    printf("lc_history_gen: runs=%u run_hours=%.2f endpoints=%u rows=%" PRIu64
           " requests=%" PRIu64 " commands=%" PRIu64 " retention_steps=%" PRIu64
           " archived=%" PRIu64 " archive_bytes=%" PRIu64 " archive_s=%.2f"
           " image_bytes=%zu snapshot_bytes=%" PRIu64 " largest_run=%" PRIu64
           " apply_s=%.2f snapshot_s=%.2f seconds=%.2f rows_per_s=%.0f\n",
           g->o.runs, run_hours(&g->o), g->o.endpoints, g->rows, g->requests, g->commands,
           g->retention_steps, g->archived, g->archive_bytes, g->archive_s, image, file, g->largest_run, apply_s, total_s - apply_s, total_s,
           (double)g->rows / apply_s);
    return 0;
}
