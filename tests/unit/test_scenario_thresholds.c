/* test_scenario_thresholds.c — common/lc_scenario.c's thresholds: k6's form, expressions,
 * what holds, and the errors naming the threshold. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lc_err.h"
#include "lc_scenario.h"
#include "scenario_fixture.h"

/* Two named tasks, so thresholds can filter on them. */
#define TWO_TASKS "'tasks':[{'name':'list','path':'/l'},{'name':'create','path':'/c'}],"

static void test_thresholds_k6(void **state)
{
    lc_scenario_t s;
    expect_ok(doc(TWO_TASKS "'thresholds':{'http_req_duration':['p(95)<500','p(99) <= 1500'],"
                  "'http_req_duration{endpoint:list}':['max<2000'],"
                  "'http_req_duration{name:create}':[{'threshold':'avg>=1.5','abortOnFail':true,"
                  "'delayAbortEval':'10s'}],"
                  "'http_req_failed':['rate<0.01'],'http_reqs':['rate>100','count>=1000'],"
                  "'http_reqs{ endpoint : list }':[{'threshold':'count!=0','abort_on_fail':false,"
                  "'delay_abort_eval':5}]}",
                  NULL),
              &s);
    assert_int_equal(s.n_thresholds, 8);
    const lc_threshold_t *t = s.thresholds;
    assert_int_equal(t[0].metric, LC_METRIC_REQ_DURATION);
    assert_null(t[0].endpoint);
    assert_int_equal(t[0].agg, LC_AGG_PCT);
    assert_true(t[0].pct == 95);
    assert_int_equal(t[0].op, LC_CMP_LT);
    assert_true(t[0].value == 500);
    assert_string_equal(t[0].expression, "p(95)<500");
    assert_false(t[0].abort_on_fail);
    assert_true(t[1].pct == 99 && t[1].op == LC_CMP_LE && t[1].value == 1500);
    assert_string_equal(t[1].expression, "p(99) <= 1500");
    assert_string_equal(t[2].endpoint, "list");
    assert_int_equal(t[2].agg, LC_AGG_MAX);
    assert_string_equal(t[3].endpoint, "create");
    assert_int_equal(t[3].agg, LC_AGG_AVG);
    assert_int_equal(t[3].op, LC_CMP_GE);
    assert_true(t[3].value == 1.5);
    assert_true(t[3].abort_on_fail);
    assert_int_equal(t[3].delay_abort_eval_ms, 10000);
    assert_int_equal(t[4].metric, LC_METRIC_REQ_FAILED);
    assert_int_equal(t[4].agg, LC_AGG_RATE);
    assert_true(t[4].value == 0.01);
    assert_int_equal(t[5].metric, LC_METRIC_REQS);
    assert_int_equal(t[5].agg, LC_AGG_RATE);
    assert_int_equal(t[5].op, LC_CMP_GT);
    assert_int_equal(t[6].agg, LC_AGG_COUNT);
    assert_string_equal(t[7].endpoint, "list");
    assert_int_equal(t[7].op, LC_CMP_NE);
    assert_false(t[7].abort_on_fail);
    assert_int_equal(t[7].delay_abort_eval_ms, 5000);
    char label[128];
    lc_threshold_label(&t[2], label, sizeof label);
    assert_string_equal(label, "http_req_duration{endpoint:list} max<2000");
    lc_threshold_label(&t[0], label, sizeof label);
    assert_string_equal(label, "http_req_duration p(95)<500");
    lc_scenario_free(&s);
    assert_true(is_zeroed(&s));

    /* Old and new keys together; an empty array adds nothing. */
    expect_ok(doc("'thresholds':{'error_rate':0,'http_reqs':[],'http_req_duration':['med<1']}",
                  NULL),
              &s);
    assert_int_equal(s.n_thresholds, 2);
    assert_string_equal(s.thresholds[0].expression, "rate<=0");
    assert_int_equal(s.thresholds[1].agg, LC_AGG_MED);
    assert_true(s.thresholds[1].pct == 50);
    lc_scenario_free(&s);
}

static void test_threshold_expressions(void **state)
{
    static const struct {
        const char *text;
        enum lc_metric metric;
        enum lc_agg agg;
        double pct;
        enum lc_cmp op;
        double value;
    } ok[] = {
        {"p(50)<1", LC_METRIC_REQ_DURATION, LC_AGG_PCT, 50, LC_CMP_LT, 1},
        {"p(90)>2", LC_METRIC_REQ_DURATION, LC_AGG_PCT, 90, LC_CMP_GT, 2},
        {" p( 99.9 ) >= 2.5 ", LC_METRIC_REQ_DURATION, LC_AGG_PCT, 99.9, LC_CMP_GE, 2.5},
        {"med==3", LC_METRIC_REQ_DURATION, LC_AGG_MED, 50, LC_CMP_EQ, 3},
        {"min===3", LC_METRIC_REQ_DURATION, LC_AGG_MIN, 0, LC_CMP_EQ, 3},
        {"max!=1e3", LC_METRIC_REQ_DURATION, LC_AGG_MAX, 0, LC_CMP_NE, 1000},
        {"avg<=.5", LC_METRIC_REQ_DURATION, LC_AGG_AVG, 0, LC_CMP_LE, 0.5},
        {"rate<0.01", LC_METRIC_REQ_FAILED, LC_AGG_RATE, 0, LC_CMP_LT, 0.01},
        {"rate>100", LC_METRIC_REQS, LC_AGG_RATE, 0, LC_CMP_GT, 100},
        {"count>=-1", LC_METRIC_REQS, LC_AGG_COUNT, 0, LC_CMP_GE, -1},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        lc_threshold_t t;
        memset(&t, 0, sizeof t);
        if (lc_threshold_parse_expr(ok[i].text, ok[i].metric, &t) != 0)
            fail_msg("'%s' did not parse", ok[i].text);
        assert_int_equal(t.agg, ok[i].agg);
        assert_true(t.pct == ok[i].pct);
        assert_int_equal(t.op, ok[i].op);
        assert_true(t.value == ok[i].value);
    }
    static const struct {
        const char *text;
        enum lc_metric metric;
    } bad[] = {
        {"", LC_METRIC_REQ_DURATION},        {"p95<500", LC_METRIC_REQ_DURATION},
        {"p(95)", LC_METRIC_REQ_DURATION},    {"p(95)<", LC_METRIC_REQ_DURATION},
        {"p(95)<abc", LC_METRIC_REQ_DURATION}, {"p(95)<500ms", LC_METRIC_REQ_DURATION},
        {"p(0)<1", LC_METRIC_REQ_DURATION},   {"p(101)<1", LC_METRIC_REQ_DURATION},
        {"p(95<1", LC_METRIC_REQ_DURATION},   {"avg~1", LC_METRIC_REQ_DURATION},
        {"avg<nan", LC_METRIC_REQ_DURATION},  {"avg<inf", LC_METRIC_REQ_DURATION},
        {"avg<1e999", LC_METRIC_REQ_DURATION}, {"rate<1", LC_METRIC_REQ_DURATION},
        {"count<1", LC_METRIC_REQ_FAILED},    {"p(95)<1", LC_METRIC_REQ_FAILED},
        {"max<1", LC_METRIC_REQS},            {"avg<1 <2", LC_METRIC_REQ_DURATION},
        {"=<1", LC_METRIC_REQ_DURATION},      {"maxx<1", LC_METRIC_REQ_DURATION},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        lc_threshold_t t;
        memset(&t, 0, sizeof t);
        if (lc_threshold_parse_expr(bad[i].text, bad[i].metric, &t) != LC_EINVAL)
            fail_msg("'%s' parsed for %s", bad[i].text, lc_metric_name(bad[i].metric));
    }
}

static void test_threshold_holds(void **state)
{
    lc_threshold_t t = {.value = 10};
    static const struct {
        enum lc_cmp op;
        bool below, equal, above;
    } cases[] = {
        {LC_CMP_LT, true, false, false}, {LC_CMP_LE, true, true, false},
        {LC_CMP_GT, false, false, true}, {LC_CMP_GE, false, true, true},
        {LC_CMP_EQ, false, true, false}, {LC_CMP_NE, true, false, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        t.op = cases[i].op;
        assert_int_equal(lc_threshold_holds(&t, 9.5), cases[i].below);
        assert_int_equal(lc_threshold_holds(&t, 10), cases[i].equal);
        assert_int_equal(lc_threshold_holds(&t, 10.5), cases[i].above);
    }
}

static void test_threshold_errors(void **state)
{
#define DUR "thresholds[\"http_req_duration\"]"
    static const struct error_case cases[] = {
        {"'thresholds':{'http_req_duration':['p(95)<500','p95<500']}", DUR "[1]",
         "expected \"<agg><op><number>\" like \"p(95)<500\""},
        {"'thresholds':{'http_req_duration':['p(95)<500ms']}", DUR "[0]", "like \"p(95)<500\""},
        {"'thresholds':{'http_req_duration':['rate<0.1']}", DUR "[0]",
         "p(N), med, avg, min or max"},
        {"'thresholds':{'http_req_failed':['count>1']}", "thresholds[\"http_req_failed\"][0]",
         "expected \"rate<op><number>\" like \"rate<0.01\""},
        {"'thresholds':{'http_reqs':['p(95)<1']}", "thresholds[\"http_reqs\"][0]",
         "like \"rate>100\" or \"count>1000\""},
        {"'thresholds':{'http_req_duration':'p(95)<500'}", DUR,
         "expected an array of expressions like [\"p(95)<500\"]"},
        {"'thresholds':{'http_req_duration':[500]}", DUR "[0]", "expected a string like"},
        {"'thresholds':{'http_req_duration':[{'abortOnFail':true}]}", DUR "[0].threshold",
         "required"},
        {"'thresholds':{'http_req_duration':[{'threshold':5}]}", DUR "[0].threshold",
         "expected \"<agg><op><number>\""},
        {"'thresholds':{'http_req_duration':[{'threshold':'max<1','abortOnFail':'yes'}]}",
         DUR "[0].abortOnFail", "expected true or false"},
        {"'thresholds':{'http_req_duration':[{'threshold':'max<1','abort_on_fail':1}]}",
         DUR "[0].abort_on_fail", "expected true or false"},
        {"'thresholds':{'http_req_duration':[{'threshold':'max<1','delayAbortEval':'soon'}]}",
         DUR "[0].delayAbortEval", "expected a duration like \"10s\""},
        {"'thresholds':{'http_req_duration':[{'threshold':'max<1','delay_abort_eval':-1}]}",
         DUR "[0].delay_abort_eval", "expected a duration"},
        {"'thresholds':{'http_req_duration':[{'threshold':'max<1','delayAbortEval':'8d'}]}",
         DUR "[0].delayAbortEval", "at most 7d"},
        {"'thresholds':{'http_req_duration':[{'threshold':'max<1','abortOnFail':true,"
         "'abort_on_fail':true}]}",
         DUR "[0]", "give abortOnFail or abort_on_fail, not both"},
        {"'thresholds':{'http_req_duration':[{'threshold':'max<1','abort':true}]}", DUR "[0]",
         "unknown field \"abort\""},
        {"'thresholds':{'http_req_waiting':['p(95)<1']}", "thresholds[\"http_req_waiting\"]",
         "unknown metric or field"},
        {"'thresholds':{'http_req_duration{endpoint:nope}':['max<1']}",
         "thresholds[\"http_req_duration{endpoint:nope}\"]", "no task named \"nope\""},
        {"'thresholds':{'http_req_duration{method:GET}':['max<1']}",
         "thresholds[\"http_req_duration{method:GET}\"]", "expected a filter {endpoint:NAME}"},
        {"'thresholds':{'http_req_duration{endpoint:GET /':['max<1']}",
         "thresholds[\"http_req_duration{endpoint:GET /\"]", "expected a filter"},
        {"'thresholds':{'http_req_duration{}':['max<1']}", "thresholds[\"http_req_duration{}\"]",
         "expected a filter"},
        {"'thresholds':{'http_req_duration':['avg<1234567890123456789012345678901234567890"
         "123456789012345678901234567890']}",
         DUR "[0]", "expected \"<agg><op><number>\""},
        {"'thresholds':{'error_rate':0.5,'abort_on_fail':'no'}", "thresholds.abort_on_fail",
         "expected true or false"},
    };
#undef DUR
    run_cases(cases, sizeof cases / sizeof cases[0]);

    /* The default task name "GET /" can be filtered on. */
    lc_scenario_t s;
    expect_ok(doc("'thresholds':{'http_req_duration{endpoint:GET /}':['max<1']}", NULL), &s);
    assert_string_equal(s.thresholds[0].endpoint, "GET /");
    lc_scenario_free(&s);

    /* LC_THRESHOLDS_MAX + 1, over two keys. */
    char many[DOC_MAX];
    size_t len = (size_t)snprintf(many, sizeof many,
                                  "'thresholds':{'p95_ms':1,'http_reqs':['count>0'],"
                                  "'http_req_duration':[");
    for (unsigned i = 0; i < LC_THRESHOLDS_MAX - 1; i++)
        len += (size_t)snprintf(many + len, sizeof many - len, "%s'max<%u'", i ? "," : "", i);
    snprintf(many + len, sizeof many - len, "]}");
    expect_error(doc(many, NULL), "thresholds", "at most 64 thresholds");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thresholds_k6),   cmocka_unit_test(test_threshold_expressions),
        cmocka_unit_test(test_threshold_holds), cmocka_unit_test(test_threshold_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
