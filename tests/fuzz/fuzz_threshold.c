/* fuzz_threshold.c — thresholds: the scenario's "thresholds" object parsed
 * (the input as JSON) and each threshold judged on data drawn from the
 * input; also each expression parser on the raw text. Property: a judged
 * threshold's result renders, and parsed thresholds have sane fields. */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "lc_hist.h"
#include "lc_threshold.h"

static void judge(const lc_threshold_t *t, const lc_threshold_data_t *d)
{
    double observed = 0;
    bool has = lc_threshold_observe(t, d, &observed);
    bool passed = has && lc_threshold_holds(t, observed);
    json_t *r = lc_threshold_result_json(t, has, observed, passed);
    FUZZ_CHECK(r != NULL, "result of %s does not render", t->expression ? t->expression : "?");
    char *text = json_dumps(r, JSON_COMPACT | JSON_ALLOW_NUL);
    FUZZ_CHECK(text != NULL, "result JSON does not serialize");
    free(text);
    json_decref(r);
    char label[256];
    lc_threshold_label(t, label, sizeof label);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[] = {"list", "GET /items", "home"};
    lc_hist_t *h = malloc(sizeof *h);
    if (h == NULL)
        abort();
    lc_hist_init(h);
    /* Up to 16 latencies from the input's first bytes. */
    for (size_t i = 0; i + 3 < size && i < 64; i += 4)
        lc_hist_record(h, (uint64_t)data[i] << 16 | (uint64_t)data[i + 1] << 8 | data[i + 2]);
    lc_threshold_data_t d = {.count = h->total, .failures = size ? data[0] % (h->total + 1) : 0,
                             .hist = h, .elapsed_s = size ? data[size - 1] / 8.0 : 0};
    lc_hist_t *none = malloc(sizeof *none);
    if (none == NULL)
        abort();
    lc_hist_init(none);
    lc_threshold_data_t empty = {.hist = none};

    json_t *obj = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
    if (obj != NULL) {
        lc_threshold_t *ts = NULL;
        size_t n = 0;
        char err[256];
        if (lc_thresholds_parse(obj, names, 3, &ts, &n, err, sizeof err) == 0) {
            FUZZ_CHECK(n <= LC_THRESHOLDS_MAX, "%zu thresholds", n);
            for (size_t i = 0; i < n; i++) {
                FUZZ_CHECK(ts[i].agg != LC_AGG_PCT || (ts[i].pct > 0 && ts[i].pct <= 100),
                           "percentile %g accepted", ts[i].pct);
                judge(&ts[i], &d);
                judge(&ts[i], &empty);
            }
            lc_thresholds_free(ts, n);
        }
        json_decref(obj);
    }

    char *text = fuzz_strndup(data, size);
    if (text == NULL)
        abort();
    for (int m = LC_METRIC_REQ_DURATION; m <= LC_METRIC_REQS; m++) {
        lc_threshold_t t;
        memset(&t, 0, sizeof t);
        t.metric = (enum lc_metric)m;
        if (lc_threshold_parse_expr(text, (enum lc_metric)m, &t) == 0) {
            FUZZ_CHECK(!isnan(t.value), "NaN threshold value from \"%s\"", text);
            t.expression = text;
            judge(&t, &d);
            judge(&t, &empty);
        }
    }
    free(text);
    free(h);
    free(none);
    return 0;
}
