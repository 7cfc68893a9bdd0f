/* lc_threshold.c — parses k6-style thresholds from a scenario's JSON and judges values. */
#include "lc_threshold.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_err.h"
#include "lc_scenario.h"

#define KEY_SHOW_MAX 100     /* characters of a JSON key quoted in an error */
#define LEGACY_P95_MAX_MS 3600000.0
#define DELAY_MAX_MS (7ull * 24 * 3600 * 1000)

#define EXPECT_DURATION                                                                            \
    "expected \"<agg><op><number>\" like \"p(95)<500\" (<agg>: p(N), med, avg, min or max, "      \
    "in ms; <op>: <, <=, >, >=, == or !=)"
#define EXPECT_FAILED                                                                              \
    "expected \"rate<op><number>\" like \"rate<0.01\" (<op>: <, <=, >, >=, == or !=)"
#define EXPECT_REQS                                                                                \
    "expected \"<agg><op><number>\" like \"rate>100\" or \"count>1000\" (<agg>: rate or count; "  \
    "<op>: <, <=, >, >=, == or !=)"

#define EXPECT_CHECKS                                                                              \
    "expected \"rate<op><number>\" like \"rate>0.99\" (the share of checks that passed; "      \
    "<op>: <, <=, >, >=, == or !=)"
#define CHECK_NAME_MAX 64 /* bytes of a check's name, as workers keep them */

#define EXPECT_FILTER "expected a filter {endpoint:NAME} or {name:NAME} after the metric"

/* The caller's error buffer. */
typedef struct th_err_s {
    char *buf;
    size_t len;
} th_err_t;

/* Writes "<path>: <what>" and returns LC_EINVAL. */
__attribute__((format(printf, 3, 4))) static int fail_at(th_err_t *e, const char *path,
                                                         const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    lc_verrf(e->buf, e->len, LC_EINVAL, fmt, ap);
    va_end(ap);
    return lc_err_wrap(e->buf, e->len, LC_EINVAL, "%s", path);
}

static int no_memory(th_err_t *e)
{
    return lc_errf(e->buf, e->len, LC_ENOMEM, "thresholds: out of memory");
}

static const char *const metric_names[] = {"http_req_duration", "http_req_failed", "http_reqs",
                                           "iteration_duration", "group_duration", "checks"};

bool lc_metric_is_duration(enum lc_metric m)
{
    return m == LC_METRIC_REQ_DURATION || m == LC_METRIC_ITER_DURATION ||
           m == LC_METRIC_GROUP_DURATION;
}

const char *lc_metric_series_method(enum lc_metric m)
{
    return m == LC_METRIC_ITER_DURATION ? "ITERATION" : m == LC_METRIC_GROUP_DURATION ? "GROUP"
                                                                                       : NULL;
}

const char *lc_metric_name(enum lc_metric m)
{
    return (size_t)m < sizeof metric_names / sizeof metric_names[0] ? metric_names[m] : "?";
}

/* ---- one expression ---- */

static const char *skip_spaces(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* A finite number at *s; advances *s past it. */
static int parse_number(const char **s, double *out)
{
    const char *p = *s;
    char *end;
    if (!((*p >= '0' && *p <= '9') || *p == '.' || *p == '-' || *p == '+'))
        return LC_EINVAL;
    errno = 0;
    *out = strtod(p, &end);
    if (end == p || errno == ERANGE || !isfinite(*out))
        return LC_EINVAL;
    *s = end;
    return 0;
}

/* The metrics (a bit per enum lc_metric) whose values are durations. */
#define DURATIONS                                                                          \
    ((1u << LC_METRIC_REQ_DURATION) | (1u << LC_METRIC_ITER_DURATION) |                      \
     (1u << LC_METRIC_GROUP_DURATION))

/* The aggregation at *s, as allowed for metric. */
static int parse_agg(const char **s, enum lc_metric metric, lc_threshold_t *t)
{
    static const struct {
        const char *word;
        enum lc_agg agg;
        unsigned metrics; /* bit per enum lc_metric */
    } aggs[] = {{"med", LC_AGG_MED, DURATIONS}, {"avg", LC_AGG_AVG, DURATIONS},
                {"min", LC_AGG_MIN, DURATIONS}, {"max", LC_AGG_MAX, DURATIONS},
                {"rate", LC_AGG_RATE, (1u << LC_METRIC_REQ_FAILED) | (1u << LC_METRIC_REQS) |
                                      (1u << LC_METRIC_CHECKS)},
                {"count", LC_AGG_COUNT, 1u << LC_METRIC_REQS}};
    if (lc_metric_is_duration(metric) && strncmp(*s, "p(", 2) == 0) {
        const char *p = skip_spaces(*s + 2);
        if (parse_number(&p, &t->pct) != 0 || t->pct <= 0 || t->pct > 100)
            return LC_EINVAL;
        p = skip_spaces(p);
        if (*p != ')')
            return LC_EINVAL;
        *s = p + 1;
        t->agg = LC_AGG_PCT;
        return 0;
    }
    for (size_t i = 0; i < sizeof aggs / sizeof aggs[0]; i++) {
        size_t n = strlen(aggs[i].word);
        if (strncmp(*s, aggs[i].word, n) == 0 && (aggs[i].metrics & (1u << metric)) != 0) {
            *s += n;
            t->agg = aggs[i].agg;
            t->pct = aggs[i].agg == LC_AGG_MED ? 50 : 0;
            return 0;
        }
    }
    return LC_EINVAL;
}

/* The comparison at *s; k6's "===" is taken as "==". */
static int parse_op(const char **s, enum lc_cmp *op)
{
    static const struct {
        const char *text;
        enum lc_cmp op;
    } ops[] = {{"===", LC_CMP_EQ}, {"<=", LC_CMP_LE}, {">=", LC_CMP_GE}, {"==", LC_CMP_EQ},
               {"!=", LC_CMP_NE},  {"<", LC_CMP_LT},  {">", LC_CMP_GT}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        size_t n = strlen(ops[i].text);
        if (strncmp(*s, ops[i].text, n) == 0) {
            *s += n;
            *op = ops[i].op;
            return 0;
        }
    }
    return LC_EINVAL;
}

int lc_threshold_parse_expr(const char *text, enum lc_metric metric, lc_threshold_t *t)
{
    const char *s = skip_spaces(text);
    if (parse_agg(&s, metric, t) != 0)
        return LC_EINVAL;
    s = skip_spaces(s);
    if (parse_op(&s, &t->op) != 0)
        return LC_EINVAL;
    s = skip_spaces(s);
    if (parse_number(&s, &t->value) != 0)
        return LC_EINVAL;
    return *skip_spaces(s) == '\0' ? 0 : LC_EINVAL;
}

bool lc_threshold_holds(const lc_threshold_t *t, double observed)
{
    switch (t->op) {
    case LC_CMP_LT: return observed < t->value;
    case LC_CMP_LE: return observed <= t->value;
    case LC_CMP_GT: return observed > t->value;
    case LC_CMP_GE: return observed >= t->value;
    case LC_CMP_EQ: return observed == t->value;
    case LC_CMP_NE: return observed != t->value;
    }
    return false;
}

bool lc_threshold_observe(const lc_threshold_t *t, const lc_threshold_data_t *d, double *out)
{
    const lc_hist_t *h = d->hist;
    switch (t->metric) {
    case LC_METRIC_REQ_DURATION:
    case LC_METRIC_ITER_DURATION:
    case LC_METRIC_GROUP_DURATION:
        if (h->total == 0)
            return false;
        if (t->agg == LC_AGG_AVG)
            *out = lc_hist_mean(h) / 1000.0;
        else if (t->agg == LC_AGG_MIN)
            *out = (double)h->min / 1000.0;
        else if (t->agg == LC_AGG_MAX)
            *out = (double)h->max / 1000.0;
        else
            *out = (double)lc_hist_percentile(h, t->pct) / 1000.0;
        return true;
    case LC_METRIC_REQ_FAILED:
        if (d->count == 0)
            return false;
        *out = (double)d->failures / (double)d->count;
        return true;
    case LC_METRIC_CHECKS:
        if (d->count == 0)
            return false;
        *out = (double)(d->count - d->failures) / (double)d->count;
        return true;
    case LC_METRIC_REQS:
        if (t->agg == LC_AGG_COUNT)
            *out = (double)d->count;
        else
            *out = d->elapsed_s > 0 ? (double)d->count / d->elapsed_s : 0;
        return true;
    }
    return false;
}

json_t *lc_threshold_result_json(const lc_threshold_t *t, bool has_data, double observed,
                                 bool passed)
{
    json_t *obs = !has_data                ? json_null()
                  : t->agg == LC_AGG_COUNT ? json_integer((json_int_t)observed)
                                           : json_real(observed);
    return json_pack("{s:s,s:o,s:s,s:o,s:b,s:b}", "metric", lc_metric_name(t->metric),
                     "endpoint", t->endpoint ? json_string(t->endpoint) : json_null(),
                     "expression", t->expression ? t->expression : "", "observed", obs,
                     "passed", passed, "abort_on_fail", t->abort_on_fail);
}

static const char *filter_tag(enum lc_metric m, const char **prefix);

void lc_threshold_filter_text(const char *metric, const char *series, char *buf, size_t len)
{
    enum lc_metric m = LC_METRIC_REQ_DURATION;
    for (size_t i = 0; metric != NULL && i < sizeof metric_names / sizeof metric_names[0]; i++)
        if (strcmp(metric_names[i], metric) == 0)
            m = (enum lc_metric)i;
    const char *prefix, *tag = filter_tag(m, &prefix);
    if (strncmp(series, prefix, strlen(prefix)) == 0)
        series += strlen(prefix);
    snprintf(buf, len, "{%s:%s}", tag, series);
}

void lc_threshold_label(const lc_threshold_t *t, char *buf, size_t len)
{
    const char *prefix, *tag = filter_tag(t->metric, &prefix);
    if (t->endpoint != NULL)
        snprintf(buf, len, "%s{%s:%s} %s", lc_metric_name(t->metric), tag,
                 t->endpoint + strlen(prefix), t->expression ? t->expression : "?");
    else
        snprintf(buf, len, "%s %s", lc_metric_name(t->metric), t->expression ? t->expression : "?");
}

/* ---- keys: "<metric>" or "<metric>{endpoint:NAME}" (k6's {name:NAME} too) ---- */

static bool is_legacy_key(const char *key)
{
    return strcmp(key, "p95_ms") == 0 || strcmp(key, "error_rate") == 0 ||
           strcmp(key, "abort_on_fail") == 0;
}

/* Copies [from, to) without surrounding spaces into a new string. */
static char *trimmed_dup(const char *from, const char *to)
{
    while (from < to && (*from == ' ' || *from == '\t'))
        from++;
    while (to > from && (to[-1] == ' ' || to[-1] == '\t'))
        to--;
    return strndup(from, (size_t)(to - from));
}

/* The task name of a "{endpoint:NAME}" filter (braces included in [open, end)). */
/* The filter's tag for metric ("endpoint", "journey", "group") and the prefix the series
 * name takes. */
static const char *filter_tag(enum lc_metric m, const char **prefix)
{
    *prefix = m == LC_METRIC_ITER_DURATION    ? "iteration:"
              : m == LC_METRIC_GROUP_DURATION ? "group:"
              : m == LC_METRIC_CHECKS         ? "check:"
                                              : "";
    return m == LC_METRIC_ITER_DURATION    ? "journey"
           : m == LC_METRIC_GROUP_DURATION ? "group"
           : m == LC_METRIC_CHECKS         ? "check"
                                           : "endpoint";
}

static int parse_filter(th_err_t *e, const char *path, const char *open, const char *end,
                        enum lc_metric metric, const char *const *names, size_t n_names,
                        char **endpoint)
{
    const char *prefix, *want = filter_tag(metric, &prefix);
    const char *colon = memchr(open, ':', (size_t)(end - open));
    if (end - open < 2 || end[-1] != '}' || colon == NULL)
        return fail_at(e, path, "%s", EXPECT_FILTER);
    char *tag = trimmed_dup(open + 1, colon);
    if (tag == NULL || (*endpoint = trimmed_dup(colon + 1, end - 1)) == NULL) {
        free(tag);
        return no_memory(e);
    }
    bool tag_ok = strcmp(tag, want) == 0 || (want[0] == 'e' && strcmp(tag, "name") == 0);
    free(tag);
    if (!tag_ok)
        return want[0] == 'e' ? fail_at(e, path, "%s", EXPECT_FILTER)
                              : fail_at(e, path, "expected {%s:NAME}", want);
    size_t len = strlen(prefix) + strlen(*endpoint) + 1;
    char *series = malloc(len);
    if (series == NULL)
        return no_memory(e);
    snprintf(series, len, "%s%s", prefix, *endpoint);
    free(*endpoint);
    *endpoint = series;
    if (metric == LC_METRIC_CHECKS) {
        /* A script names its checks as it runs: any name a worker can report. */
        size_t n = strlen(series) - strlen(prefix);
        if (n == 0 || n > CHECK_NAME_MAX)
            return fail_at(e, path, "a check's name is 1 to %d bytes", CHECK_NAME_MAX);
        return 0;
    }
    for (size_t i = 0; i < n_names; i++)
        if (strcmp(names[i], *endpoint) == 0)
            return 0;
    if (want[0] == 'e')
        return fail_at(e, path, "no task named \"%.*s\" (the filter must name one of the tasks, "
                       "or of the journeys' requests)", KEY_SHOW_MAX, *endpoint);
    return fail_at(e, path, "no %s named \"%.*s\" (the filter must name one of the scenario's)",
                   want, KEY_SHOW_MAX, *endpoint + strlen(prefix));
}

/* Splits key into its metric and optional endpoint (malloc'd, NULL for none). */
static int parse_key(th_err_t *e, const char *key, const char *path, const char *const *names,
                     size_t n_names, enum lc_metric *metric, char **endpoint)
{
    const char *brace = strchr(key, '{');
    size_t len = brace ? (size_t)(brace - key) : strlen(key);
    *endpoint = NULL;
    for (size_t m = 0; m < sizeof metric_names / sizeof metric_names[0]; m++) {
        if (strlen(metric_names[m]) == len && strncmp(key, metric_names[m], len) == 0) {
            *metric = (enum lc_metric)m;
            return brace ? parse_filter(e, path, brace, key + strlen(key), *metric, names, n_names,
                                        endpoint)
                         : 0;
        }
    }
    return fail_at(e, path, "unknown metric or field; expected http_req_duration, "
                   "http_req_failed or http_reqs (optionally with {endpoint:NAME}), "
                   "iteration_duration{journey:NAME}, group_duration{group:NAME}, "
                   "checks (optionally with {check:NAME}), or p95_ms, error_rate, abort_on_fail");
}

/* ---- one array element: "expr" or {"threshold", "abortOnFail", "delayAbortEval"} ---- */

/* The member named camel or snake (at most one of them); NULL when neither. */
static int get_either(th_err_t *e, const json_t *obj, const char *path, const char *camel,
                      const char *snake, const json_t **out, const char **used)
{
    const json_t *a = json_object_get(obj, camel), *b = json_object_get(obj, snake);
    if (a != NULL && b != NULL)
        return fail_at(e, path, "give %s or %s, not both", camel, snake);
    *out = a ? a : b;
    *used = a ? camel : snake;
    return 0;
}

static int check_option_fields(th_err_t *e, const json_t *obj, const char *path)
{
    static const char *const fields[] = {"threshold", "abortOnFail", "abort_on_fail",
                                         "delayAbortEval", "delay_abort_eval", NULL};
    const char *key;
    const json_t *v = NULL;
    json_object_foreach((json_t *)obj, key, v) {
        size_t i = 0;
        while (fields[i] != NULL && strcmp(fields[i], key) != 0)
            i++;
        if (fields[i] == NULL)
            return fail_at(e, path, "unknown field \"%.*s\"; expected threshold, abortOnFail, "
                           "delayAbortEval", KEY_SHOW_MAX, key);
    }
    return 0;
}

/* delayAbortEval: a duration string ("10s", "1m30s") or whole seconds, at most 7 days. */
static int delay_value(const json_t *v, uint64_t *ms)
{
    if (json_is_string(v))
        return lc_duration_parse(json_string_value(v), ms) == 0 && *ms <= DELAY_MAX_MS
                   ? 0
                   : LC_EINVAL;
    if (!json_is_integer(v) || json_integer_value(v) < 0 ||
        (uint64_t)json_integer_value(v) > DELAY_MAX_MS / 1000)
        return LC_EINVAL;
    *ms = (uint64_t)json_integer_value(v) * 1000;
    return 0;
}

static int parse_options(th_err_t *e, const json_t *obj, const char *path, lc_threshold_t *t)
{
    char sub[256];
    const char *name;
    const json_t *v = NULL;
    int rv = check_option_fields(e, obj, path);
    if (rv != 0 || (rv = get_either(e, obj, path, "abortOnFail", "abort_on_fail", &v, &name)) != 0)
        return rv;
    snprintf(sub, sizeof sub, "%s.%s", path, name);
    if (v != NULL && !json_is_boolean(v))
        return fail_at(e, sub, "expected true or false");
    t->abort_on_fail = json_is_true(v);
    if ((rv = get_either(e, obj, path, "delayAbortEval", "delay_abort_eval", &v, &name)) != 0 ||
        v == NULL)
        return rv;
    snprintf(sub, sizeof sub, "%s.%s", path, name);
    if (delay_value(v, &t->delay_abort_eval_ms) != 0)
        return fail_at(e, sub, "expected a duration like \"10s\" or \"1m30s\" (at most 7d)");
    return 0;
}

static int parse_element(th_err_t *e, const json_t *v, const char *path, const char *expect,
                         lc_threshold_t *t)
{
    char sub[256];
    const char *text = json_is_string(v) ? json_string_value(v) : NULL;
    const char *where = path;
    int rv;
    if (json_is_object(v)) {
        if ((rv = parse_options(e, v, path, t)) != 0)
            return rv;
        const json_t *expr = json_object_get(v, "threshold");
        snprintf(sub, sizeof sub, "%s.threshold", path);
        where = sub;
        if (expr == NULL)
            return fail_at(e, sub, "required (%s)", expect + strlen("expected "));
        text = json_is_string(expr) ? json_string_value(expr) : NULL;
    } else if (text == NULL) {
        return fail_at(e, path, "expected a string like \"p(95)<500\" or an object "
                       "{\"threshold\": …, \"abortOnFail\": …, \"delayAbortEval\": …}");
    }
    if (text == NULL || strlen(text) > LC_THRESHOLD_EXPR_MAX ||
        lc_threshold_parse_expr(text, t->metric, t) != 0)
        return fail_at(e, where, "%s", expect);
    return (t->expression = strdup(text)) == NULL ? no_memory(e) : 0;
}

/* ---- the whole object ---- */

static const char *expect_of(enum lc_metric m)
{
    return lc_metric_is_duration(m) ? EXPECT_DURATION
           : m == LC_METRIC_REQ_FAILED ? EXPECT_FAILED
           : m == LC_METRIC_CHECKS     ? EXPECT_CHECKS
                                       : EXPECT_REQS;
}

/* One metric key and its array; appends to t[*used]. */
static int parse_metric(th_err_t *e, const char *key, const json_t *arr, const char *const *names,
                        size_t n_names, lc_threshold_t *t, size_t *used)
{
    char path[KEY_SHOW_MAX + 32], sub[KEY_SHOW_MAX + 64];
    enum lc_metric metric;
    char *endpoint;
    snprintf(path, sizeof path, "thresholds[\"%.*s\"]", KEY_SHOW_MAX, key);
    int rv = parse_key(e, key, path, names, n_names, &metric, &endpoint);
    if (rv != 0) {
        free(endpoint);
        return rv;
    }
    size_t i;
    const json_t *v = NULL;
    json_array_foreach(arr, i, v) {
        lc_threshold_t *th = &t[(*used)++];
        th->metric = metric;
        if (endpoint != NULL && (th->endpoint = strdup(endpoint)) == NULL) {
            rv = no_memory(e);
            break;
        }
        snprintf(sub, sizeof sub, "%s[%zu]", path, i);
        if ((rv = parse_element(e, v, sub, expect_of(metric), th)) != 0)
            break;
    }
    free(endpoint);
    return rv;
}

/* Checks every key and value shape, and counts the thresholds (bounded). */
static int count_thresholds(th_err_t *e, const json_t *obj, const char *const *names,
                            size_t n_names, size_t *total)
{
    char path[KEY_SHOW_MAX + 32];
    const char *key;
    const json_t *v = NULL;
    *total = 0;
    json_object_foreach((json_t *)obj, key, v) {
        if (is_legacy_key(key)) {
            *total += strcmp(key, "abort_on_fail") != 0;
            continue;
        }
        enum lc_metric metric;
        char *endpoint;
        snprintf(path, sizeof path, "thresholds[\"%.*s\"]", KEY_SHOW_MAX, key);
        int rv = parse_key(e, key, path, names, n_names, &metric, &endpoint);
        free(endpoint);
        if (rv != 0)
            return rv;
        if (!json_is_array(v))
            return fail_at(e, path, "expected an array of expressions like [\"%s\"]",
                           lc_metric_is_duration(metric) ? "p(95)<500"
                           : metric == LC_METRIC_REQ_FAILED ? "rate<0.01"
                                                            : "rate>100");
        *total += json_array_size(v);
        if (*total > LC_THRESHOLDS_MAX)
            return fail_at(e, "thresholds", "at most %u thresholds", LC_THRESHOLDS_MAX);
    }
    if (*total > LC_THRESHOLDS_MAX)
        return fail_at(e, "thresholds", "at most %u thresholds", LC_THRESHOLDS_MAX);
    return 0;
}

/* A number in (min, max] (or [min, max] when min_inclusive) under thresholds.key. */
static int legacy_number(th_err_t *e, const json_t *obj, const char *key, double min, double max,
                         bool min_inclusive, double *out)
{
    char path[64];
    const json_t *v = json_object_get(obj, key);
    snprintf(path, sizeof path, "thresholds.%s", key);
    if (!json_is_number(v))
        return fail_at(e, path, "expected a number");
    *out = json_number_value(v);
    if (min_inclusive && (*out < min || *out > max))
        return fail_at(e, path, "must be between %g and %g", min, max);
    if (!min_inclusive && (*out <= min || *out > max))
        return fail_at(e, path, "must be greater than %g and at most %g", min, max);
    return 0;
}

/* One legacy threshold, "agg<=value", as the expression text shows it. */
static int legacy_add(th_err_t *e, lc_threshold_t *t, enum lc_metric metric, double value,
                      bool abort_on_fail)
{
    char text[64];
    snprintf(text, sizeof text, "%s<=%g", metric == LC_METRIC_REQ_DURATION ? "p(95)" : "rate",
             value);
    t->metric = metric;
    t->agg = metric == LC_METRIC_REQ_DURATION ? LC_AGG_PCT : LC_AGG_RATE;
    t->pct = metric == LC_METRIC_REQ_DURATION ? 95 : 0;
    t->op = LC_CMP_LE;
    t->value = value;
    t->abort_on_fail = abort_on_fail;
    return (t->expression = strdup(text)) == NULL ? no_memory(e) : 0;
}

/* p95_ms (ms, > 0) and error_rate (0..1) fail when exceeded; abort_on_fail applies to both. */
static int parse_legacy(th_err_t *e, const json_t *obj, lc_threshold_t *t, size_t *used)
{
    const json_t *abort = json_object_get(obj, "abort_on_fail");
    double v;
    int rv;
    if (json_object_get(obj, "p95_ms") != NULL) {
        if ((rv = legacy_number(e, obj, "p95_ms", 0, LEGACY_P95_MAX_MS, false, &v)) != 0 ||
            (rv = legacy_add(e, &t[(*used)++], LC_METRIC_REQ_DURATION, v, json_is_true(abort))) !=
                0)
            return rv;
    }
    if (json_object_get(obj, "error_rate") != NULL) {
        if ((rv = legacy_number(e, obj, "error_rate", 0, 1, true, &v)) != 0 ||
            (rv = legacy_add(e, &t[(*used)++], LC_METRIC_REQ_FAILED, v, json_is_true(abort))) != 0)
            return rv;
    }
    return 0;
}

int lc_thresholds_parse(const json_t *obj, const char *const *task_names, size_t n_tasks,
                        lc_threshold_t **out, size_t *n, char *errmsg, size_t errlen)
{
    th_err_t e = {errmsg, errlen};
    size_t total, used = 0;
    *out = NULL;
    *n = 0;
    if (!json_is_object(obj))
        return fail_at(&e, "thresholds", "expected an object");
    const json_t *abort = json_object_get(obj, "abort_on_fail");
    if (abort != NULL && !json_is_boolean(abort))
        return fail_at(&e, "thresholds.abort_on_fail", "expected true or false");
    int rv = count_thresholds(&e, obj, task_names, n_tasks, &total);
    if (rv != 0 || total == 0)
        return rv;
    lc_threshold_t *t = calloc(total, sizeof *t);
    if (t == NULL)
        return no_memory(&e);
    rv = parse_legacy(&e, obj, t, &used);
    const char *key;
    const json_t *v = NULL;
    json_object_foreach((json_t *)obj, key, v) {
        if (rv != 0)
            break;
        if (!is_legacy_key(key))
            rv = parse_metric(&e, key, v, task_names, n_tasks, t, &used);
    }
    if (rv != 0) {
        lc_thresholds_free(t, total);
        return rv;
    }
    *out = t;
    *n = used;
    return 0;
}

void lc_thresholds_free(lc_threshold_t *t, size_t n)
{
    for (size_t i = 0; t != NULL && i < n; i++) {
        free(t[i].endpoint);
        free(t[i].expression);
    }
    free(t);
}
