/* fuzz_store_render.h — renders every view of a store the master serves
 * (run list, each run, its reports, /metrics' rows), checking that a run the
 * list shows always renders. For fuzz_fsm.c and fuzz_snapshot.c. */
#ifndef TESTS_FUZZ_STORE_RENDER_H
#define TESTS_FUZZ_STORE_RENDER_H

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "lc_hist.h"
#include "report.h"
#include "store.h"
#include "store_history.h"
#include "store_metrics.h"
#include "store_thresholds.h"

#define FUZZ_NOW_MS 1700000000000ull

static void fuzz_endpoint_row(void *arg, const store_endpoint_metrics_t *e)
{
    size_t *sum = arg;
    *sum += strlen(e->tenant) + strlen(e->state) + strlen(e->endpoint) + strlen(e->method);
    if (e->hist != NULL)
        *sum += (size_t)lc_hist_percentile(e->hist, 99.0);
}

static void fuzz_run_row(void *arg, const store_run_metrics_t *r)
{
    size_t *sum = arg;
    *sum += strlen(r->tenant) + strlen(r->state) + r->users_granted;
}

/* Renders one document with one renderer; a run the store shows must render. */
static void fuzz_render_doc(int (*render)(FILE *, const json_t *), const json_t *doc,
                            uint64_t id, const char *what)
{
    char *out = NULL;
    size_t len = 0;
    int rv = report_render(render, doc, &out, &len);
    FUZZ_CHECK(rv == 0, "run %llu: %s does not render", (unsigned long long)id, what);
    free(out);
}

static void fuzz_same(const char *what, uint64_t id, const char *a, size_t alen, const char *b,
                      size_t blen)
{
    FUZZ_CHECK(alen == blen && memcmp(a, b, alen) == 0,
               "run %llu: streamed %s (%zu bytes) differs from the whole (%zu)",
               (unsigned long long)id, what, alen, blen);
}

static int fuzz_csv_row(void *arg, const store_history_head_t *head,
                        const store_history_entry_t *e)
{
    return report_csv_history_entry(arg, head, e) == 0 ? 0 : -1;
}

/* Property: history.csv streamed an entry at a time (as api_reports.c
 * sends it) is byte for byte the one rendered from the whole document. */
static void fuzz_streamed_history_csv(store_t *s, uint64_t id, const json_t *history)
{
    char *whole = NULL, *streamed = NULL;
    size_t whole_len = 0, streamed_len = 0;
    FUZZ_CHECK(report_render(report_csv_history, history, &whole, &whole_len) == 0,
               "run %llu: history.csv does not render", (unsigned long long)id);
    FILE *f = open_memstream(&streamed, &streamed_len);
    FUZZ_CHECK(f != NULL, "open_memstream");
    report_csv_history_t w;
    report_csv_history_init(&w, f);
    store_history_query_t full = {.endpoint = NULL, .since = INT64_MIN, .full = true};
    int rv = store_history_each(s, id, &full, fuzz_csv_row, &w, NULL);
    FUZZ_CHECK(report_csv_history_done(&w) == 0, "run %llu: history.csv write failed",
               (unsigned long long)id);
    fclose(f);
    FUZZ_CHECK(rv == 0, "run %llu: streamed history.csv failed (%d)", (unsigned long long)id, rv);
    fuzz_same("history.csv", id, streamed, streamed_len, whole, whole_len);
    free(whole);
    free(streamed);
}

/* The report JSON as api_reports.c assembles it, without "history": what
 * report.json and report.html are streamed after. */
static json_t *fuzz_report_head(store_t *s, uint64_t id)
{
    json_t *run = store_run_json(s, id, FUZZ_NOW_MS);
    if (run == NULL)
        return NULL;
    store_run_t r;
    json_t *sc = NULL;
    if (store_run_get(s, id, &r) == 0) {
        sc = json_loads(r.scenario_json ? r.scenario_json : "", 0, NULL);
        if (sc == NULL)
            sc = json_string(r.scenario_json ? r.scenario_json : "");
        store_run_free(&r);
    }
    json_object_set_new(run, "scenario", sc ? sc : json_null());
    json_t *stats = store_report_stats_json(s, id, FUZZ_NOW_MS);
    json_object_set_new(run, "stats", stats ? stats : json_array());
    return run;
}

/* The whole report JSON for report.json/.csv/.html. */
static json_t *fuzz_report_json(store_t *s, uint64_t id)
{
    json_t *run = fuzz_report_head(s, id);
    if (run == NULL)
        return NULL;
    store_history_query_t q = {.endpoint = NULL, .since = INT64_MIN};
    json_t *history = store_history_json(s, id, &q);
    json_t *seconds = json_object_get(history, "seconds");
    json_object_set_new(run, "history", seconds ? json_incref(seconds) : json_array());
    json_decref(history);
    return run;
}

static int fuzz_json_row(void *arg, const store_history_head_t *head,
                         const store_history_entry_t *e)
{
    (void)head;
    return report_json_entry(arg, e) == 0 ? 0 : -1;
}

static int fuzz_points_row(void *arg, const store_history_head_t *head,
                           const store_history_entry_t *e)
{
    (void)head;
    return report_html_points_add(arg, e) == 0 ? 0 : -1;
}

/* Property: report.json and report.html streamed as api_reports.c streams
 * them (the head, then the history an entry at a time) are byte for byte
 * the ones made from the whole report. */
static void fuzz_streamed_reports(store_t *s, uint64_t id, const json_t *report)
{
    json_t *head = fuzz_report_head(s, id);
    FUZZ_CHECK(head != NULL, "run %llu: no report head", (unsigned long long)id);
    store_history_query_t q = {.endpoint = NULL, .since = INT64_MIN};
    char *streamed = NULL, *whole = json_dumps(report, JSON_COMPACT);
    size_t streamed_len = 0;
    FILE *f = open_memstream(&streamed, &streamed_len);
    report_json_stream_t w;
    FUZZ_CHECK(f != NULL && report_json_begin(&w, f, head) == 0, "report.json: no head");
    FUZZ_CHECK(store_history_each(s, id, &q, fuzz_json_row, &w, NULL) == 0 &&
                   report_json_end(&w) == 0, "run %llu: streamed report.json failed",
               (unsigned long long)id);
    fclose(f);
    fuzz_same("report.json", id, streamed, streamed_len, whole, strlen(whole));
    free(streamed);
    free(whole);

    size_t whole_len = 0;
    FUZZ_CHECK(report_render(report_html, report, &whole, &whole_len) == 0,
               "run %llu: report.html does not render", (unsigned long long)id);
    FILE *spool = tmpfile();
    f = open_memstream(&streamed, &streamed_len);
    FUZZ_CHECK(spool != NULL && f != NULL, "tmpfile / open_memstream");
    report_html_points_t points;
    report_html_points_init(&points, spool);
    FUZZ_CHECK(store_history_each(s, id, &q, fuzz_points_row, &points, NULL) == 0 &&
                   report_html_streamed(f, head, &points) == 0,
               "run %llu: streamed report.html failed", (unsigned long long)id);
    fclose(f);
    fclose(spool);
    fuzz_same("report.html", id, streamed, streamed_len, whole, whole_len);
    free(streamed);
    free(whole);
    json_decref(head);
}

static void fuzz_render_run(store_t *s, uint64_t id)
{
    json_t *view = store_run_json(s, id, FUZZ_NOW_MS);
    if (view == NULL && fuzz_ignored("render-null"))
        return;
    FUZZ_CHECK(view != NULL, "run %llu is listed but store_run_json gives NULL",
               (unsigned long long)id);
    json_decref(view);

    json_t *report = fuzz_report_json(s, id);
    FUZZ_CHECK(report != NULL, "run %llu: no report JSON", (unsigned long long)id);
    char *text = json_dumps(report, JSON_COMPACT);
    FUZZ_CHECK(text != NULL, "run %llu: report JSON does not serialize", (unsigned long long)id);
    free(text);
    fuzz_render_doc(report_csv_stats, report, id, "report.csv");
    fuzz_render_doc(report_html, report, id, "report.html");
    fuzz_render_doc(report_junit, report, id, "report.junit.xml");
    fuzz_streamed_reports(s, id, report);
    json_decref(report);

    store_history_query_t full = {.endpoint = NULL, .since = INT64_MIN, .full = true};
    json_t *history = store_history_json(s, id, &full);
    FUZZ_CHECK(history != NULL, "run %llu: no history", (unsigned long long)id);
    fuzz_streamed_history_csv(s, id, history);
    /* One endpoint's history, as /history?endpoint= asks for it. */
    json_t *stats = store_report_stats_json(s, id, FUZZ_NOW_MS);
    json_t *first = json_array_get(stats, 0);
    const char *name = json_string_value(json_object_get(first, "name"));
    if (name != NULL) {
        store_history_query_t one = {.endpoint = name, .since = 0, .full = true};
        json_decref(store_history_json(s, id, &one));
    }
    json_decref(stats);
    json_decref(history);
    json_decref(store_run_thresholds_json(s, id));

    char tenant[128];
    FUZZ_CHECK(store_run_tenant(s, id, tenant, sizeof tenant) == 0, "run %llu: no tenant",
               (unsigned long long)id);
    uint64_t count, failures;
    lc_hist_t h;
    lc_hist_init(&h);
    store_threshold_totals(s, id, NULL, NULL, &count, &failures, &h);
}

/* Every view of the store; aborts when a listed run does not render. */
static void fuzz_render_store(store_t *s)
{
    static const char *const states[] = {"pending", "running", "stopping", "finished",
                                         "failed",  "aborted", NULL};
    json_t *runs = store_runs_json(s, NULL, NULL, FUZZ_NOW_MS);
    size_t i;
    json_t *run;
    json_array_foreach(runs, i, run) {
        json_t *id = json_object_get(run, "id");
        FUZZ_CHECK(json_is_integer(id), "a listed run has no integer id");
        fuzz_render_run(s, (uint64_t)json_integer_value(id));
        const char *tenant = json_string_value(json_object_get(run, "tenant"));
        if (tenant != NULL && i == 0)
            json_decref(store_runs_json(s, tenant, NULL, FUZZ_NOW_MS));
    }
    json_decref(runs);
    for (size_t k = 0; states[k] != NULL; k++) {
        uint64_t *ids = NULL;
        size_t n = 0;
        if (store_runs_in_state(s, states[k], &ids, &n) == 0)
            for (size_t j = 0; j < n && j < 4; j++)
                fuzz_render_run(s, ids[j]);
        free(ids);
        json_decref(store_runs_json(s, NULL, states[k], FUZZ_NOW_MS));
    }
    json_decref(store_tenants_json(s));
    json_decref(store_tokens_json(s));
    store_admin_tokens(s);
    size_t sum = 0;
    store_each_endpoint_metrics(s, fuzz_endpoint_row, &sum);
    store_each_run_metrics(s, fuzz_run_row, &sum);
    store_max_run_id(s);
}

#endif
