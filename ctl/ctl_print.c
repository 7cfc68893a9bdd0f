/* ctl_print.c — loadctl's tables (runs, workers, a run's report) built from the master's JSON. */
#include "ctl_print.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lc_report.h"
#include "lc_table.h"
#include "lc_threshold.h"

/* ---- reading JSON fields: missing, null or mistyped values become "unknown" ---- */

static double jnum(const json_t *obj, const char *key)
{
    const json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* A non-negative count, or UINT64_MAX (printed "-") when unknown. */
static uint64_t jcount(const json_t *obj, const char *key)
{
    double d = jnum(obj, key);
    if (isnan(d) || d < 0 || d >= 1.8e19)
        return UINT64_MAX;
    const json_t *v = json_object_get(obj, key);
    return json_is_integer(v) ? (uint64_t)json_integer_value(v) : (uint64_t)llround(d);
}

static const char *jstr(const json_t *obj, const char *key)
{
    const json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Copies s into buf with control characters replaced, so text from the
 * server cannot move the terminal's cursor; NULL or "" becomes "-". */
static const char *clean(const char *s, char *buf, size_t len)
{
    if (s == NULL || s[0] == '\0')
        s = "-";
    size_t i = 0;
    for (; s[i] != '\0' && i + 1 < len; i++) {
        unsigned char c = (unsigned char)s[i];
        buf[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
    }
    buf[i] = '\0';
    return buf;
}

/* Any scalar as text: numbers, strings, booleans; "-" for null or missing. */
static const char *scalar(const json_t *obj, const char *key, char *buf, size_t len)
{
    const json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
    if (json_is_integer(v))
        snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, len, "%g", json_real_value(v));
    else if (json_is_boolean(v))
        snprintf(buf, len, "%s", json_is_true(v) ? "true" : "false");
    else
        return clean(json_is_string(v) ? json_string_value(v) : NULL, buf, len);
    return buf;
}

/* ---- formatting cells ---- */

static bool utf8_cont(unsigned char c)
{
    return (c & 0xc0) == 0x80;
}

/* Prints s in width columns (one per code point), cut with "~" when longer (the thresholds
 * list, whose lines scripts match). */
static void cell(FILE *out, const char *s, size_t width, bool right)
{
    char buf[512];
    clean(s, buf, sizeof(buf));
    size_t cols = 0, cut = 0;
    for (size_t i = 0; buf[i] != '\0'; i++) {
        if (utf8_cont((unsigned char)buf[i]))
            continue;
        if (cols == width - 1)
            cut = i;
        cols++;
    }
    if (cols > width) {
        fprintf(out, "%.*s~", (int)cut, buf);
        return;
    }
    if (right)
        fprintf(out, "%*s%s", (int)(width - cols), "", buf);
    else
        fprintf(out, "%s%*s", buf, (int)(width - cols), "");
}

/* ---- tables: one row per element of a JSON array, columns sized by lc_table ---- */

#define NAME_MAX_W 40 /* names, addresses: longer ones end in "…" */
#define TAG_MAX_W 24  /* tenants, ids, states and other short words from the server */
#define CELL_LEN 64

/* One row's cells as text; wide holds the one cell that may be long (a worker's runs). */
typedef struct cells_s {
    char buf[LC_TABLE_COLS_MAX][CELL_LEN];
    char wide[256];
    const char *cell[LC_TABLE_COLS_MAX];
} cells_t;

typedef void (*cells_fn)(const json_t *item, cells_t *c);

/* Text from the server as a cell: "-" when missing or empty (lc_table cleans the rest). */
static const char *text_cell(const char *s)
{
    return s == NULL || s[0] == '\0' ? "-" : s;
}

/* Prints the array items as a table; fn fills a row's cells, twice per item (fit, then print). */
static void print_table(FILE *out, const lc_table_col_t *cols, size_t ncols, const json_t *items,
                        cells_fn fn)
{
    lc_table_t t;
    cells_t c;
    size_t i;
    const json_t *item;
    lc_table_init(&t, cols, ncols);
    json_array_foreach(items, i, item) {
        fn(item, &c);
        lc_table_fit(&t, c.cell);
    }
    lc_table_print_titles(out, &t, NULL);
    json_array_foreach(items, i, item) {
        fn(item, &c);
        lc_table_print_row(out, &t, c.cell);
    }
}

#define COLS(a) (a), (sizeof(a) / sizeof((a)[0]))

static const char *fmt_count(uint64_t v, char *buf, size_t len)
{
    if (v == UINT64_MAX)
        return "-";
    snprintf(buf, len, "%llu", (unsigned long long)v);
    return buf;
}

static const char *fmt_fixed(double v, int decimals, char *buf, size_t len)
{
    if (isnan(v))
        return "-";
    snprintf(buf, len, "%.*f", decimals, v);
    return buf;
}

static const char *fmt_ms(double ms, char *buf, size_t len)
{
    if (isnan(ms) || ms < 0)
        return "-";
    snprintf(buf, len, "%.*fms", ms < 100 ? 2 : ms < 1000 ? 1 : 0, ms);
    return buf;
}

/* "2026-11-30T05:51:25.123Z" → "2026-11-30 05:51:25" (UTC); other text as is. */
static const char *fmt_time(const char *iso, char *buf, size_t len)
{
    clean(iso, buf, len);
    if (strlen(buf) >= 19 && buf[10] == 'T' && len > 19) {
        buf[10] = ' ';
        buf[19] = '\0';
    }
    return buf;
}

static const json_t *array_field(const json_t *obj, const char *key)
{
    const json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
    return json_is_array(v) ? v : NULL;
}

/* ---- loadctl runs ---- */

static const lc_table_col_t run_cols[] = {
    {"ID", true, TAG_MAX_W},     {"NAME", false, NAME_MAX_W},  {"TENANT", false, TAG_MAX_W},
    {"STATE", false, TAG_MAX_W}, {"CREATED (UTC)", false, TAG_MAX_W}, {"USERS", true, 0},
    {"REQUESTS", true, 0},       {"FAILURES", true, 0},        {"RPS", true, 0},
    {"GRANTED", true, 0},        {"VERDICT", false, TAG_MAX_W},
};

static void run_cells(const json_t *r, cells_t *c)
{
    c->cell[0] = scalar(r, "id", c->buf[0], CELL_LEN);
    c->cell[1] = text_cell(jstr(r, "name"));
    c->cell[2] = text_cell(jstr(r, "tenant"));
    c->cell[3] = text_cell(jstr(r, "state"));
    c->cell[4] = fmt_time(jstr(r, "created_at"), c->buf[4], CELL_LEN);
    c->cell[5] = fmt_count(jcount(r, "users"), c->buf[5], CELL_LEN);
    c->cell[6] = fmt_count(jcount(r, "requests"), c->buf[6], CELL_LEN);
    c->cell[7] = fmt_count(jcount(r, "failures"), c->buf[7], CELL_LEN);
    c->cell[8] = fmt_fixed(jnum(r, "rps"), 1, c->buf[8], CELL_LEN);
    c->cell[9] = fmt_count(jcount(r, "users_granted"), c->buf[9], CELL_LEN);
    c->cell[10] = text_cell(jstr(r, "verdict"));
}

int ctl_print_runs(FILE *out, const json_t *root)
{
    const json_t *runs = array_field(root, "runs");
    if (runs == NULL)
        return -1;
    if (json_array_size(runs) == 0) {
        fprintf(out, "no runs\n");
        return 0;
    }
    print_table(out, COLS(run_cols), runs, run_cells);
    return 0;
}

/* ---- loadctl workers ---- */

static const char *fmt_bytes(uint64_t v, char *buf, size_t len)
{
    if (v == UINT64_MAX)
        return "-";
    if (v >= (1ull << 30))
        snprintf(buf, len, "%.1f GiB", (double)v / (double)(1ull << 30));
    else if (v >= (1ull << 20))
        snprintf(buf, len, "%.1f MiB", (double)v / (double)(1ull << 20));
    else
        snprintf(buf, len, "%.1f KiB", (double)v / 1024.0);
    return buf;
}

/* "3:25 4:10" — each assignment as run:users. */
static const char *fmt_assignments(const json_t *w, char *buf, size_t len)
{
    const json_t *runs = array_field(w, "runs");
    if (runs == NULL || json_array_size(runs) == 0)
        return "-";
    size_t used = 0, i;
    const json_t *a;
    buf[0] = '\0';
    json_array_foreach(runs, i, a) {
        char id[32], users[32];
        int n = snprintf(buf + used, len - used, "%s%s:%s", i ? " " : "",
                         scalar(a, "run", id, sizeof(id)), fmt_count(jcount(a, "users"), users,
                                                                      sizeof(users)));
        if (n < 0 || (size_t)n >= len - used)
            break;
        used += (size_t)n;
    }
    return buf;
}

static const lc_table_col_t worker_cols[] = {
    {"ID", true, TAG_MAX_W},   {"NAME", false, NAME_MAX_W}, {"ADDRESS", false, NAME_MAX_W},
    {"THREADS", true, 0},      {"CAPACITY", true, 0},       {"CPU%", true, 0},
    {"RSS", true, 0},          {"SEEN", true, 0},           {"RUNS (run:users)", false, 0},
};

static void worker_cells(const json_t *w, cells_t *c)
{
    double seen = jnum(w, "last_seen_ms_ago");
    c->cell[0] = scalar(w, "id", c->buf[0], CELL_LEN);
    c->cell[1] = text_cell(jstr(w, "name"));
    c->cell[2] = text_cell(jstr(w, "address"));
    c->cell[3] = fmt_count(jcount(w, "threads"), c->buf[3], CELL_LEN);
    c->cell[4] = fmt_count(jcount(w, "capacity"), c->buf[4], CELL_LEN);
    c->cell[5] = fmt_fixed(jnum(w, "cpu_percent"), 1, c->buf[5], CELL_LEN);
    c->cell[6] = fmt_bytes(jcount(w, "rss_bytes"), c->buf[6], CELL_LEN);
    c->cell[7] = "-";
    if (!isnan(seen)) {
        snprintf(c->buf[7], CELL_LEN, "%.1fs", seen / 1000.0);
        c->cell[7] = c->buf[7];
    }
    c->cell[8] = fmt_assignments(w, c->wide, sizeof c->wide);
}

int ctl_print_workers(FILE *out, const json_t *root)
{
    const json_t *workers = array_field(root, "workers");
    if (workers == NULL)
        return -1;
    if (json_array_size(workers) == 0) {
        fprintf(out, "no workers\n");
        return 0;
    }
    print_table(out, COLS(worker_cols), workers, worker_cells);
    return 0;
}

/* ---- the quorum ---- */

static const lc_table_col_t member_cols[] = {
    {"ID", true, TAG_MAX_W},       {"RAFT", false, NAME_MAX_W},      {"WORKERS", false, NAME_MAX_W},
    {"API", false, NAME_MAX_W},    {"REACHABLE", false, 0},          {"LAST CONTACT", false, 0},
};

static void member_cells(const json_t *m, cells_t *c)
{
    double seen = jnum(m, "last_contact_ms_ago");
    c->cell[0] = scalar(m, "id", c->buf[0], CELL_LEN);
    c->cell[1] = text_cell(jstr(m, "raft"));
    c->cell[2] = text_cell(jstr(m, "worker"));
    c->cell[3] = text_cell(jstr(m, "api"));
    c->cell[4] = json_is_true(json_object_get(m, "reachable")) ? "yes" : "no";
    c->cell[5] = "-";
    if (!isnan(seen)) {
        snprintf(c->buf[5], CELL_LEN, "%.1fs ago", seen / 1000.0);
        c->cell[5] = c->buf[5];
    }
}

int ctl_print_cluster(FILE *out, const json_t *root)
{
    const json_t *members = array_field(root, "members");
    if (members == NULL)
        return -1;
    char b[64], leader[64], term[32], commit[32], applied[32];
    fprintf(out, "this master: %s (%s)  leader: %s %s  term %s  commit %s  applied %s\n",
            scalar(root, "id", b, sizeof b), jstr(root, "role") ? jstr(root, "role") : "-",
            scalar(root, "leader_id", leader, sizeof leader),
            jstr(root, "leader_api") ? jstr(root, "leader_api") : "(none)",
            scalar(root, "term", term, sizeof term), scalar(root, "commit_index", commit, sizeof commit),
            scalar(root, "applied_index", applied, sizeof applied));
    print_table(out, COLS(member_cols), members, member_cells);
    return 0;
}

/* ---- a run's report ---- */

static void fill_row(const json_t *obj, lc_report_row_t *row)
{
    const json_t *lat = json_is_object(obj) ? json_object_get(obj, "latency_ms") : NULL;
    row->requests = jcount(obj, "requests");
    row->failures = jcount(obj, "failures");
    row->rps = jnum(obj, "rps");
    row->latency = (lc_report_latency_t){
        .min = jnum(lat, "min"), .mean = jnum(lat, "mean"), .p50 = jnum(lat, "p50"),
        .p90 = jnum(lat, "p90"), .p95 = jnum(lat, "p95"), .p99 = jnum(lat, "p99"),
        .max = jnum(lat, "max"),
    };
}

const char *ctl_run_state(const json_t *run)
{
    return jstr(run, "state");
}

int ctl_print_report(FILE *out, const json_t *run)
{
    if (!json_is_object(run))
        return -1;
    const json_t *eps = array_field(run, "endpoints"), *errs = array_field(run, "errors");
    const json_t *chks = array_field(run, "checks");
    size_t n_rows = json_array_size(eps), n_errors = json_array_size(errs);
    size_t n_checks = json_array_size(chks);
    lc_report_row_t *rows = calloc(n_rows ? n_rows : 1, sizeof(*rows));
    lc_report_error_t *errors = calloc(n_errors ? n_errors : 1, sizeof(*errors));
    lc_report_check_t *checks = calloc(n_checks ? n_checks : 1, sizeof(*checks));
    if (rows == NULL || errors == NULL || checks == NULL) {
        free(rows);
        free(errors);
        free(checks);
        return -1;
    }
    for (size_t i = 0; i < n_rows; i++) {
        const json_t *ep = json_array_get(eps, i);
        fill_row(ep, &rows[i]);
        rows[i].name = jstr(ep, "name");
        rows[i].method = jstr(ep, "method");
    }
    for (size_t i = 0; i < n_errors; i++) {
        const json_t *e = json_array_get(errs, i);
        errors[i] = (lc_report_error_t){jstr(e, "endpoint"), jstr(e, "kind"), jcount(e, "count"),
                                        jstr(e, "first_message")};
    }
    for (size_t i = 0; i < n_checks; i++) {
        const json_t *c = json_array_get(chks, i);
        checks[i] = (lc_report_check_t){jstr(c, "name"), jcount(c, "passed"), jcount(c, "failed")};
    }
    char id[32], title[512];
    snprintf(title, sizeof(title), "run %s %s: %s", scalar(run, "id", id, sizeof(id)),
             jstr(run, "name") ? jstr(run, "name") : "-",
             ctl_run_state(run) ? ctl_run_state(run) : "-");
    lc_report_t report = {.title = title, .duration_s = jnum(run, "duration_s"), .rows = rows,
                          .n_rows = n_rows, .errors = errors, .n_errors = n_errors,
                          .checks = checks, .n_checks = n_checks};
    const json_t *totals = json_object_get(run, "totals");
    fill_row(totals, &report.total);
    report.total.name = "Total";
    /* Absent counters read as UINT64_MAX ("unknown"): print nothing then. */
    uint64_t dropped = jcount(totals, "dropped"), hs = jcount(totals, "tls_handshakes"),
             resumed = jcount(totals, "tls_resumed");
    report.dropped = dropped == UINT64_MAX ? 0 : dropped;
    report.tls_handshakes = hs == UINT64_MAX ? 0 : hs;
    report.tls_resumed = resumed == UINT64_MAX ? 0 : resumed;
    lc_report_print(out, &report);
    free(rows);
    free(errors);
    free(checks);
    return 0;
}

int ctl_print_run(FILE *out, const json_t *run)
{
    if (!json_is_object(run))
        return -1;
    char b[512];
    fprintf(out, "%-10s%s\n", "Tenant", clean(jstr(run, "tenant"), b, sizeof(b)));
    fprintf(out, "%-10s%s\n", "State", clean(jstr(run, "state"), b, sizeof(b)));
    fprintf(out, "%-10s%s\n", "Users", fmt_count(jcount(run, "users"), b, sizeof(b)));
    fprintf(out, "%-10s%s\n", "Created", fmt_time(jstr(run, "created_at"), b, sizeof(b)));
    fprintf(out, "%-10s%s\n", "Started", fmt_time(jstr(run, "started_at"), b, sizeof(b)));
    fprintf(out, "%-10s%s\n", "Finished", fmt_time(jstr(run, "finished_at"), b, sizeof(b)));
    if (jstr(run, "reason") != NULL && jstr(run, "reason")[0] != '\0')
        fprintf(out, "%-10s%s\n", "Reason", clean(jstr(run, "reason"), b, sizeof(b)));
    uint64_t bytes = jcount(json_object_get(run, "totals"), "bytes");
    if (bytes != UINT64_MAX)
        fprintf(out, "%-10s%s (%llu bytes)\n", "Received", fmt_bytes(bytes, b, sizeof(b)),
                (unsigned long long)bytes);
    fputc('\n', out);
    return ctl_print_report(out, run);
}

void ctl_print_progress(FILE *out, const json_t *run, long elapsed_s)
{
    const json_t *cur = json_object_get(run, "current");
    double t = jnum(run, "duration_s"); /* seconds since the run started */
    uint64_t users = jcount(cur, "users");
    if (users == UINT64_MAX)
        users = jcount(run, "users");
    char st[64], u[32], rps[32], p95[32], errs[32];
    if (!isnan(t) && t <= 0)
        t = NAN; /* not started yet: count from submission instead */
    fprintf(out, "[%4lds] state=%s users=%s rps=%s p95=%s errors=%s\n",
            isnan(t) || t < 0 ? elapsed_s : (long)t, clean(ctl_run_state(run), st, sizeof(st)),
            fmt_count(users, u, sizeof(u)), fmt_fixed(jnum(cur, "rps"), 1, rps, sizeof(rps)),
            fmt_ms(jnum(cur, "p95_ms"), p95, sizeof(p95)),
            fmt_count(jcount(json_object_get(run, "totals"), "failures"), errs, sizeof(errs)));
    fflush(out);
}

/* "45s", "2m05s", "1h02m": a compact duration for the progress bar. */
static const char *fmt_span(double secs, char *buf, size_t len)
{
    long s = isnan(secs) || secs < 0 ? 0 : secs > 1e9 ? 1000000000L : (long)secs;
    if (s < 60)
        snprintf(buf, len, "%lds", s);
    else if (s < 3600)
        snprintf(buf, len, "%ldm%02lds", s / 60, s % 60);
    else
        snprintf(buf, len, "%ldh%02ldm", s / 3600, (s / 60) % 60);
    return buf;
}

/* "[=======>      ]" for done of total (total <= 0: an empty bar). */
static void fmt_bar(double done, double total, char *buf, size_t width)
{
    size_t fill = 0;
    if (total > 0 && !isnan(done) && done > 0)
        fill = done >= total ? width : (size_t)(done / total * (double)width);
    buf[0] = '[';
    for (size_t i = 0; i < width; i++)
        buf[1 + i] = i < fill ? '=' : i == fill && fill > 0 ? '>' : ' ';
    buf[width + 1] = ']';
    buf[width + 2] = '\0';
}

void ctl_print_progress_bar(FILE *out, const json_t *run, long elapsed_s, double total_s,
                            int columns)
{
    const json_t *cur = json_object_get(run, "current");
    const char *state = ctl_run_state(run);
    double t = jnum(run, "duration_s");
    bool started = !isnan(t) && t > 0;
    char bar[32], el[32], tot[32], left[48], st[32], u[32], rps[32], p95[32], errs[32];
    char line[512];
    uint64_t users = jcount(cur, "users");
    fmt_bar(started ? t : 0, total_s, bar, 20);
    if (!started)
        snprintf(left, sizeof left, "waiting %lds", elapsed_s);
    else if (total_s > 0) /* from the whole seconds shown, so that both add up */
        snprintf(left, sizeof left, "%s left",
                 fmt_span(total_s > floor(t) ? total_s - floor(t) : 0, el, sizeof el));
    else
        snprintf(left, sizeof left, "-");
    snprintf(line, sizeof line, "%s %s/%s  %s  %s  users %s  rps %s  p95 %s  errors %s", bar,
             fmt_span(started ? t : 0, el, sizeof el),
             total_s > 0 ? fmt_span(total_s, tot, sizeof tot) : "?", left,
             clean(state, st, sizeof st),
             fmt_count(users == UINT64_MAX ? jcount(run, "users") : users, u, sizeof u),
             fmt_fixed(jnum(cur, "rps"), 1, rps, sizeof rps),
             fmt_ms(jnum(cur, "p95_ms"), p95, sizeof p95),
             fmt_count(jcount(json_object_get(run, "totals"), "failures"), errs, sizeof errs));
    if (columns > 1 && strlen(line) >= (size_t)columns)
        line[columns - 1] = '\0'; /* a wrapped line could not be redrawn in place */
    fprintf(out, "\r%s\033[K", line);
    fflush(out);
}

const char *ctl_run_verdict(const json_t *run)
{
    return jstr(run, "verdict");
}

/* A threshold's observed value in its metric's unit; "no data" for null. */
static const char *fmt_observed(const json_t *r, char *buf, size_t len)
{
    const char *metric = jstr(r, "metric"), *expr = jstr(r, "expression");
    double v = jnum(r, "observed");
    if (isnan(v))
        return "no data";
    if (metric != NULL && strcmp(metric, "http_req_duration") == 0)
        return fmt_ms(v, buf, len);
    if (metric != NULL && strcmp(metric, "http_req_failed") == 0)
        snprintf(buf, len, "%.4f (%.2f%%)", v, v * 100);
    else if (expr != NULL && strncmp(expr, "count", 5) == 0)
        snprintf(buf, len, "%.0f", v);
    else
        snprintf(buf, len, "%.1f/s", v);
    return buf;
}

/* "http_req_duration{endpoint:list} max<2000" */
static const char *threshold_label(const json_t *r, char *buf, size_t len)
{
    char m[64], e[160], x[96], f[200];
    const char *ep = jstr(r, "endpoint");
    clean(jstr(r, "metric"), m, sizeof m);
    clean(jstr(r, "expression"), x, sizeof x);
    if (ep != NULL) {
        lc_threshold_filter_text(m, clean(ep, e, sizeof e), f, sizeof f);
        snprintf(buf, len, "%s%s %s", m, f, x);
    }
    else
        snprintf(buf, len, "%s %s", m, x);
    return buf;
}

int ctl_print_thresholds(FILE *out, const json_t *run, bool fancy)
{
    const json_t *results = array_field(run, "thresholds");
    size_t n = json_array_size(results), failed = 0, width = 0, i;
    const json_t *r;
    char label[384], obs[64];
    if (n == 0)
        return 0;
    json_array_foreach(results, i, r) {
        size_t w = strlen(threshold_label(r, label, sizeof label));
        width = w > width ? w : width;
        failed += !json_is_true(json_object_get(r, "passed"));
    }
    width = width > 60 ? 60 : width;
    fprintf(out, "\nThresholds: %zu of %zu passed\n", n - failed, n);
    json_array_foreach(results, i, r) {
        bool passed = json_is_true(json_object_get(r, "passed"));
        fprintf(out, "  %s ", fancy ? (passed ? "\u2713" : "\u2717") : (passed ? "ok  " : "FAIL"));
        cell(out, threshold_label(r, label, sizeof label), width, false);
        fprintf(out, "  observed %s%s\n", fmt_observed(r, obs, sizeof obs),
                json_is_true(json_object_get(r, "abort_on_fail")) ? "  (abortOnFail)" : "");
    }
    return (int)failed;
}

/* ---- tenants and tokens ---- */

static const lc_table_col_t tenant_cols[] = {
    {"NAME", false, NAME_MAX_W}, {"WEIGHT", true, 0}, {"CREATED (UTC)", false, TAG_MAX_W}};

static void tenant_cells(const json_t *t, cells_t *c)
{
    c->cell[0] = text_cell(jstr(t, "name"));
    c->cell[1] = fmt_count(jcount(t, "weight"), c->buf[1], CELL_LEN);
    c->cell[2] = fmt_time(jstr(t, "created_at"), c->buf[2], CELL_LEN);
}

int ctl_print_tenants(FILE *out, const json_t *root)
{
    const json_t *tenants = array_field(root, "tenants");
    if (tenants == NULL)
        return -1;
    if (json_array_size(tenants) == 0) {
        fprintf(out, "no tenants\n");
        return 0;
    }
    print_table(out, COLS(tenant_cols), tenants, tenant_cells);
    return 0;
}

static const lc_table_col_t token_cols[] = {
    {"ID", false, TAG_MAX_W},     {"ROLE", false, TAG_MAX_W},         {"TENANT", false, TAG_MAX_W},
    {"NAME", false, NAME_MAX_W},  {"CREATED (UTC)", false, TAG_MAX_W},
};

static void token_cells(const json_t *t, cells_t *c)
{
    c->cell[0] = text_cell(jstr(t, "id"));
    c->cell[1] = text_cell(jstr(t, "role"));
    c->cell[2] = text_cell(jstr(t, "tenant"));
    c->cell[3] = text_cell(jstr(t, "name"));
    c->cell[4] = fmt_time(jstr(t, "created_at"), c->buf[4], CELL_LEN);
}

int ctl_print_tokens(FILE *out, const json_t *root)
{
    const json_t *tokens = array_field(root, "tokens");
    if (tokens == NULL)
        return -1;
    if (json_array_size(tokens) == 0) {
        fprintf(out, "no tokens\n");
        return 0;
    }
    print_table(out, COLS(token_cols), tokens, token_cells);
    return 0;
}

/* `loadctl tokens add`: the only time the secret is shown. */
int ctl_print_new_token(FILE *out, const json_t *created)
{
    const char *id = jstr(created, "id"), *secret = jstr(created, "token");
    if (id == NULL || secret == NULL)
        return -1;
    char b1[64], b2[64], b3[512], b4[160];
    const char *tenant = jstr(created, "tenant");
    fprintf(out, "token %s created (%s%s%s)\n", clean(id, b1, sizeof(b1)),
            clean(jstr(created, "role"), b2, sizeof(b2)), tenant ? ", tenant " : "",
            tenant ? clean(tenant, b4, sizeof(b4)) : "");
    fprintf(out, "%s\n", clean(secret, b3, sizeof(b3)));
    fprintf(out, "the secret above is shown only once: store it now\n");
    return 0;
}
