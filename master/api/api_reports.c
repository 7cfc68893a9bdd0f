/* api_reports.c — GET /api/v1/runs/{id}/history (the dashboard polls it with
 * ?since=) and the run's reports: report.json, report.csv, failures.csv, history.csv,
 * report.html, report.junit.xml. Reads only this master's database. */
#include "api_reports.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_internal.h"
#include "lc_clock.h"
#include "lc_err.h"
#include "lc_text.h"
#include "report.h"
#include "store.h"
#include "store_archive.h"
#include "store_history.h"

/* What a report needs besides the run view. */
enum { PART_HISTORY = 1, PART_STATS = 2, PART_SCENARIO = 4, PART_ALL = 7 };

typedef enum { DOC_HISTORY, DOC_FULL_HISTORY, DOC_REPORT } doc_kind_t;

/* The reports that grow with the run's length, streamed (stream_report). */
typedef enum { STREAM_NONE, STREAM_HISTORY_CSV, STREAM_REPORT_JSON, STREAM_REPORT_HTML } stream_t;

typedef struct report_route_s {
    const char *rest;
    doc_kind_t doc;
    unsigned parts;           /* for DOC_REPORT */
    const char *content_type;
    const char *filename;     /* downloaded as run-<id>-<filename>; NULL: shown (JSON) */
    int (*render)(FILE *, const json_t *); /* NULL: the JSON itself */
    stream_t stream;
} report_route_t;

static const report_route_t routes[] = {
    {"/history", DOC_HISTORY, 0, "application/json", NULL, NULL, STREAM_NONE},
    {"/report.json", DOC_REPORT, PART_ALL, "application/json", NULL, NULL, STREAM_REPORT_JSON},
    {"/report.csv", DOC_REPORT, PART_STATS, "text/csv; charset=utf-8", "report.csv",
     report_csv_stats, STREAM_NONE},
    {"/failures.csv", DOC_REPORT, PART_STATS, "text/csv; charset=utf-8", "failures.csv",
     report_csv_failures, STREAM_NONE},
    {"/history.csv", DOC_FULL_HISTORY, 0, "text/csv; charset=utf-8", "history.csv",
     report_csv_history, STREAM_HISTORY_CSV},
    {"/report.html", DOC_REPORT, PART_ALL, "text/html; charset=utf-8", "report.html", report_html,
     STREAM_REPORT_HTML},
    {"/report.junit.xml", DOC_REPORT, 0, "application/xml", "report.junit.xml", report_junit,
     STREAM_NONE},
};

static const report_route_t *route_of(const char *rest)
{
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
        if (strcmp(rest, routes[i].rest) == 0)
            return &routes[i];
    return NULL;
}

bool api_reports_handles(const char *rest)
{
    return route_of(rest) != NULL;
}

/* Percent-decodes a query value in place ('+' is a space); false for a bad
 * escape or an encoded NUL. */
static bool query_decode(char *s)
{
    char *w = s;
    for (const char *r = s; *r != '\0'; r++) {
        if (*r == '+') {
            *w++ = ' ';
        } else if (*r != '%') {
            *w++ = *r;
        } else {
            int hi = lc_hex_digit(r[1]), lo = hi < 0 ? -1 : lc_hex_digit(r[2]);
            if (lo < 0 || (hi == 0 && lo == 0))
                return false;
            *w++ = (char)(hi << 4 | lo);
            r += 2;
        }
    }
    *w = '\0';
    return true;
}

/* Whether the query names parameter `name` at all (with any value). */
static bool query_names(const char *query, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = query; p != NULL && *p != '\0'; p = strchr(p, '&') ? strchr(p, '&') + 1 : NULL)
        if (strncmp(p, name, n) == 0 && (p[n] == '=' || p[n] == '&' || p[n] == '\0'))
            return true;
    return false;
}

/* Reads ?since=T and ?endpoint=NAME into q (the name into buf); answers 400
 * and returns false when one is malformed. */
static bool parse_query(lc_http_exchange_t *ex, const char *query, store_history_query_t *q,
                        char *buf, size_t len)
{
    char since[32];
    q->since = INT64_MIN;
    q->endpoint = NULL;
    if (query_names(query, "since")) {
        char *end = NULL;
        errno = 0;
        long long v = api_query_value(query, "since", since, sizeof since)
                          ? strtoll(since, &end, 10) : 0;
        if (end == NULL || end == since || *end != '\0' || errno != 0) {
            api_respond_error(ex, 400, "since: expected unix seconds (an integer)");
            return false;
        }
        q->since = v;
    }
    q->limit = 0;
    if (query_names(query, "limit")) {
        char *end = NULL, text[32];
        errno = 0;
        unsigned long long v = api_query_value(query, "limit", text, sizeof text)
                                   ? strtoull(text, &end, 10) : 0;
        if (end == NULL || end == text || *end != '\0' || errno != 0 || v == 0 || v > 1000000) {
            api_respond_error(ex, 400, "limit: expected a number of entries from 1 to 1000000");
            return false;
        }
        q->limit = (size_t)v;
    }
    if (query_names(query, "endpoint")) {
        if (!api_query_value(query, "endpoint", buf, len) || !query_decode(buf)) {
            api_respond_error(ex, 400, "endpoint: expected a percent-encoded endpoint name");
            return false;
        }
        q->endpoint = buf;
    }
    return true;
}

/* The scenario as submitted: its JSON, or its text should it not parse. */
static json_t *scenario_json(store_t *s, uint64_t id)
{
    store_run_t r;
    if (store_run_get(s, id, &r) != 0)
        return json_null();
    json_t *sc = json_loads(r.scenario_json, 0, NULL);
    if (sc == NULL)
        sc = json_string(r.scenario_json);
    store_run_free(&r);
    return sc ? sc : json_null();
}

/* The history a report holds: every second, merged, without running totals
 * (report_json's), whatever the request's query says. */
static const store_history_query_t report_history = {.endpoint = NULL, .since = INT64_MIN};

/* The report JSON (report.h): the run view plus the parts asked for. */
static json_t *report_json(store_t *s, uint64_t id, unsigned parts, uint64_t now_ms)
{
    json_t *run = store_run_json(s, id, now_ms);
    if (run == NULL)
        return NULL;
    if (parts & PART_SCENARIO)
        json_object_set_new(run, "scenario", scenario_json(s, id));
    if (parts & PART_STATS) {
        json_t *stats = store_report_stats_json(s, id, now_ms);
        json_object_set_new(run, "stats", stats ? stats : json_array());
    }
    if (parts & PART_HISTORY) {
        json_t *history = store_history_json(s, id, &report_history);
        json_t *seconds = json_object_get(history, "seconds");
        json_object_set_new(run, "history", seconds ? json_incref(seconds) : json_array());
        json_decref(history);
    }
    return run;
}

/* A report or history rendered off the loop. */
typedef struct report_job_s {
    api_read_t read;
    const report_route_t *route; /* in routes[] */
    uint64_t id, now_ms;
    store_history_query_t q;     /* q.endpoint points into endpoint */
    char endpoint[1024];
    char spool_dir[PATH_MAX];    /* where a streamed answer is written */
} report_job_t;

static void render_into(api_read_t *a, const report_route_t *r, uint64_t id, const json_t *doc)
{
    char *body = NULL;
    size_t len = 0;
    if (report_render(r->render, doc, &body, &len) != 0) {
        api_read_error(a, 500, "run %llu: cannot render %s", (unsigned long long)id, r->rest + 1);
        return;
    }
    snprintf(a->headers, sizeof a->headers,
             "Content-Disposition: attachment; filename=\"run-%llu-%s\"\r\n",
             (unsigned long long)id, r->filename);
    api_read_body(a, 200, r->content_type, body, len);
}

/* stdio's buffer for a spool file. */
#define SPOOL_BUFFER (64 * 1024)

/* A file of the spool directory that nobody else can see: unlinked at once,
 * so that nothing is left behind, whatever happens next. -1 on failure. */
static int spool_file(const char *dir)
{
    char path[PATH_MAX + 32];
    if ((size_t)snprintf(path, sizeof path, "%s/.answer-XXXXXX", dir) >= sizeof path)
        return -1;
    int fd = mkstemp(path);
    if (fd >= 0)
        unlink(path);
    return fd;
}

/* The walk's entries into a document: one of csv_row, json_row, points_row. */
static int csv_row(void *arg, const store_history_head_t *head, const store_history_entry_t *e)
{
    return report_csv_history_entry(arg, head, e) == 0 ? 0 : LC_EIO;
}

static int json_row(void *arg, const store_history_head_t *head, const store_history_entry_t *e)
{
    (void)head;
    return report_json_entry(arg, e) == 0 ? 0 : LC_EIO;
}

static int points_row(void *arg, const store_history_head_t *head, const store_history_entry_t *e)
{
    (void)head;
    return report_html_points_add(arg, e) == 0 ? 0 : LC_EIO;
}

/* history.csv: the header, then a row per entry. */
static int write_history_csv(report_job_t *j, store_t *reader, FILE *f)
{
    report_csv_history_t w;
    report_csv_history_init(&w, f);
    int rv = store_history_each(reader, j->id, &j->q, csv_row, &w, NULL);
    if (report_csv_history_done(&w) != 0 && rv == 0)
        rv = LC_EIO;
    return rv;
}

/* The report JSON without "history" (report_json's head), or NULL. */
static json_t *report_head(report_job_t *j, store_t *reader)
{
    return report_json(reader, j->id, j->route->parts & ~(unsigned)PART_HISTORY, j->now_ms);
}

/* report.json: the head but its closing brace, then the history an entry at a time. */
static int write_report_json(report_job_t *j, store_t *reader, FILE *f)
{
    json_t *head = report_head(j, reader);
    if (head == NULL)
        return LC_ENOTFOUND;
    report_json_stream_t w;
    int rv = report_json_begin(&w, f, head) == 0 ? 0 : LC_EIO;
    json_decref(head);
    if (rv == 0)
        rv = store_history_each(reader, j->id, &report_history, json_row, &w, NULL);
    if (rv == 0 && report_json_end(&w) != 0)
        rv = LC_EIO;
    return rv;
}

/* report.html: the history's chart points to a second spool file, then the page. */
static int write_report_html(report_job_t *j, store_t *reader, FILE *f)
{
    int fd = spool_file(j->spool_dir);
    FILE *spool = fd >= 0 ? fdopen(fd, "w+") : NULL;
    if (spool == NULL) {
        if (fd >= 0)
            close(fd);
        return LC_EIO;
    }
    json_t *head = report_head(j, reader);
    report_html_points_t points;
    report_html_points_init(&points, spool);
    int rv = head == NULL ? LC_ENOTFOUND
                          : store_history_each(reader, j->id, &report_history, points_row, &points,
                                               NULL);
    if (rv == 0 && report_html_streamed(f, head, &points) != 0)
        rv = LC_EIO;
    json_decref(head);
    fclose(spool);
    return rv;
}

/* A report that grows with the run (history.csv, report.json, report.html):
 * written to a spool file as the walk makes it, so that a long history is
 * never whole in memory, and the loop sends the file as the client reads it. */
static void stream_report(report_job_t *j, store_t *reader)
{
    const report_route_t *r = j->route;
    int fd = spool_file(j->spool_dir);
    int copy = fd >= 0 ? dup(fd) : -1;
    FILE *f = copy >= 0 ? fdopen(copy, "w") : NULL;
    if (f != NULL) /* rows of ~200 bytes: a write per 64 KiB, not per 4 */
        setvbuf(f, NULL, _IOFBF, SPOOL_BUFFER);
    if (f == NULL) {
        if (copy >= 0)
            close(copy);
        if (fd >= 0)
            close(fd);
        api_read_error(&j->read, 500, "run %llu: cannot open a spool file in %s",
                       (unsigned long long)j->id, j->spool_dir);
        return;
    }
    int rv = r->stream == STREAM_HISTORY_CSV ? write_history_csv(j, reader, f)
             : r->stream == STREAM_REPORT_JSON ? write_report_json(j, reader, f)
                                               : write_report_html(j, reader, f);
    off_t len = rv == 0 && fflush(f) == 0 ? ftello(f) : -1;
    fclose(f);
    if (rv == LC_ENOTFOUND || len < 0) {
        close(fd);
        if (rv == LC_ENOTFOUND)
            api_read_error(&j->read, 404, "run %llu not found", (unsigned long long)j->id);
        else
            api_read_error(&j->read, 500, "run %llu: cannot render %s (%s)",
                           (unsigned long long)j->id, r->rest + 1, lc_strerror(rv ? rv : LC_EIO));
        return;
    }
    if (r->filename != NULL)
        snprintf(j->read.headers, sizeof j->read.headers,
                 "Content-Disposition: attachment; filename=\"run-%llu-%s\"\r\n",
                 (unsigned long long)j->id, r->filename);
    api_read_file(&j->read, 200, r->content_type, fd, (size_t)len);
}

/* Whether the route reads the run's seconds (its history). */
static bool reads_seconds(const report_route_t *r)
{
    return r->doc != DOC_REPORT || (r->parts & PART_HISTORY) != 0;
}

static void report_work(read_job_t *job, store_t *reader)
{
    report_job_t *j = (report_job_t *)job;
    const report_route_t *r = j->route;
    if (reads_seconds(r) && store_seconds_here(reader, j->id) == LC_EAGAIN) {
        snprintf(j->read.headers, sizeof j->read.headers, "Retry-After: 2\r\n");
        api_read_error(&j->read, 503,
                       "run %llu: its history is archived and this master is still fetching the"
                       " archive from another master; try again shortly, or ask another master",
                       (unsigned long long)j->id);
        return;
    }
    if (r->stream != STREAM_NONE) {
        stream_report(j, reader);
        return;
    }
    json_t *doc = r->doc == DOC_REPORT ? report_json(reader, j->id, r->parts, j->now_ms)
                                       : store_history_json(reader, j->id, &j->q);
    if (doc == NULL)
        api_read_error(&j->read, 404, "run %llu not found", (unsigned long long)j->id);
    else if (r->render == NULL)
        api_read_json(&j->read, 200, json_incref(doc));
    else
        render_into(&j->read, r, j->id, doc);
    json_decref(doc);
}

void api_reports_route(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req,
                       uint64_t id, const char *rest)
{
    const report_route_t *r = route_of(rest);
    if (r == NULL) {
        api_respond_error(ex, 404, "no such endpoint: %s", req->path);
        return;
    }
    if (strcmp(req->method, "GET") != 0) {
        api_respond_error(ex, 405, "%s not allowed on %s", req->method, req->path);
        return;
    }
    report_job_t *j = calloc(1, sizeof *j);
    if (j == NULL) {
        api_respond_error(ex, 503, "out of memory");
        return;
    }
    if (!parse_query(ex, req->query, &j->q, j->endpoint, sizeof j->endpoint)) {
        free(j);
        return;
    }
    j->route = r;
    snprintf(j->spool_dir, sizeof j->spool_dir, "%s", m->cfg.data_dir);
    j->id = id;
    j->now_ms = lc_wall_ms();
    j->q.full = r->doc == DOC_FULL_HISTORY;
    j->read.job.work = report_work;
    api_read_submit(m, ex, &j->read);
}
