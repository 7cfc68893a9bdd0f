/* test_scenario.c — unit tests for common/lc_scenario.c: parsing, defaults, bounds, error paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ca_pem.h"
#include "lc_err.h"
#include "lc_scenario.h"
#include "scenario_fixture.h"

static const char *const full_doc =
    "{'name':'checkout','tenant':'shop','target':'https://shop.example:8443/base',"
    "'duration':'5m','users':2000,'spawn_rate':200.5,'think_time_ms':[500,1500],"
    "'stages':[{'duration':'1m','users':500},{'duration':240,'target':2000}],"
    "'tls':{'insecure':true,'ca_file':'ca.pem'},"
    "'tasks':[{'name':'list','weight':3,'method':'GET',"
    "'path':'/api/users?page=${rand(1,50)}&u=${user_id}&i=${iteration}'},"
    "{'name':'create','weight':1,'method':'POST','path':'/api/users',"
    "'headers':{'Content-Type':'application/json','X-Req':'${uuid}'},"
    "'body':'{\\'name\\':\\'u${user_id}\\',\\'id\\':\\'${uuid}\\'}',"
    "'expect':{'status':[201,200],'body_contains':'\\'id\\''}}],"
    "'thresholds':{'p95_ms':250,'error_rate':0.01,'abort_on_fail':true},"
    "'policy':'queue','connect_timeout_ms':1000,'request_timeout_ms':2000}";

static void test_full_scenario(void **state)
{
    lc_scenario_t s;
    expect_ok(json_of(full_doc), &s);
    assert_string_equal(s.name, "checkout");
    assert_string_equal(s.tenant, "shop");
    assert_string_equal(s.target, "https://shop.example:8443/base");
    assert_true(s.url.tls);
    assert_string_equal(s.url.hp.host, "shop.example");
    assert_int_equal(s.url.hp.port, 8443);
    assert_string_equal(s.url.base_path, "/base");
    assert_int_equal(s.duration_ms, 300000);
    assert_int_equal(s.users, 2000);
    assert_true(s.spawn_rate == 200.5);
    assert_int_equal(s.think_min_ms, 500);
    assert_int_equal(s.think_max_ms, 1500);
    assert_true(s.arrival_rate == 0);
    assert_int_equal(s.n_stages, 2);
    assert_int_equal(s.stages[0].duration_ms, 60000);
    assert_int_equal(s.stages[0].target, 500);
    assert_int_equal(s.stages[1].duration_ms, 240000);
    assert_int_equal(s.stages[1].target, 2000);
    assert_true(s.tls.insecure);
    assert_string_equal(s.tls.ca_file, "ca.pem");
    assert_null(s.tls.ca_pem);
    assert_int_equal(s.n_tasks, 2);
    assert_string_equal(s.tasks[0].name, "list");
    assert_int_equal(s.tasks[0].weight, 3);
    assert_string_equal(s.tasks[0].method, "GET");
    assert_string_equal(s.tasks[0].path, "/api/users?page=${rand(1,50)}&u=${user_id}&i=${iteration}");
    assert_int_equal(s.tasks[0].n_headers, 0);
    assert_null(s.tasks[0].body);
    assert_int_equal(s.tasks[0].n_expect_status, 0);
    assert_null(s.tasks[0].expect_body_contains);
    assert_string_equal(s.tasks[1].name, "create");
    assert_string_equal(s.tasks[1].method, "POST");
    assert_int_equal(s.tasks[1].n_headers, 2);
    assert_string_equal(s.tasks[1].headers[0].name, "Content-Type");
    assert_string_equal(s.tasks[1].headers[0].value, "application/json");
    assert_string_equal(s.tasks[1].headers[1].name, "X-Req");
    assert_string_equal(s.tasks[1].body, "{\"name\":\"u${user_id}\",\"id\":\"${uuid}\"}");
    assert_int_equal(s.tasks[1].n_expect_status, 2);
    assert_int_equal(s.tasks[1].expect_status[0], 201);
    assert_int_equal(s.tasks[1].expect_status[1], 200);
    assert_string_equal(s.tasks[1].expect_body_contains, "\"id\"");
    /* The old keys map onto k6-style thresholds that fail when exceeded. */
    assert_int_equal(s.n_thresholds, 2);
    assert_int_equal(s.thresholds[0].metric, LC_METRIC_REQ_DURATION);
    assert_int_equal(s.thresholds[0].agg, LC_AGG_PCT);
    assert_true(s.thresholds[0].pct == 95);
    assert_int_equal(s.thresholds[0].op, LC_CMP_LE);
    assert_true(s.thresholds[0].value == 250);
    assert_string_equal(s.thresholds[0].expression, "p(95)<=250");
    assert_null(s.thresholds[0].endpoint);
    assert_true(s.thresholds[0].abort_on_fail);
    assert_int_equal(s.thresholds[1].metric, LC_METRIC_REQ_FAILED);
    assert_int_equal(s.thresholds[1].agg, LC_AGG_RATE);
    assert_true(s.thresholds[1].value == 0.01);
    assert_string_equal(s.thresholds[1].expression, "rate<=0.01");
    assert_true(s.thresholds[1].abort_on_fail);
    assert_int_equal(s.policy, LC_POLICY_QUEUE);
    assert_int_equal(s.connect_timeout_ms, 1000);
    assert_int_equal(s.request_timeout_ms, 2000);
    lc_scenario_free(&s);
    assert_true(is_zeroed(&s));
}

static void test_defaults(void **state)
{
    lc_scenario_t s;
    expect_ok(doc("'tasks':[{'path':'/x'}]", NULL), &s);
    assert_string_equal(s.tenant, "default");
    assert_false(s.url.tls);
    assert_int_equal(s.url.hp.port, 8080);
    assert_int_equal(s.duration_ms, 10000);
    assert_int_equal(s.users, 1);
    assert_true(s.spawn_rate == 1.0);
    assert_int_equal(s.think_min_ms, 0);
    assert_int_equal(s.think_max_ms, 0);
    assert_true(s.arrival_rate == 0);
    assert_int_equal(s.max_users, 1000);
    assert_null(s.stages);
    assert_int_equal(s.n_stages, 0);
    assert_false(s.tls.insecure);
    assert_null(s.tls.ca_file);
    assert_null(s.tls.ca_pem);
    assert_string_equal(s.tasks[0].name, "GET /x");
    assert_int_equal(s.tasks[0].weight, 1);
    assert_string_equal(s.tasks[0].method, "GET");
    assert_null(s.tasks[0].headers);
    assert_null(s.thresholds);
    assert_int_equal(s.n_thresholds, 0);
    assert_int_equal(s.policy, LC_POLICY_DEGRADE);
    assert_int_equal(s.connect_timeout_ms, 5000);
    assert_int_equal(s.request_timeout_ms, 30000);
    lc_scenario_free(&s);

    expect_ok(doc("'users':50,'think_time_ms':250", NULL), &s);
    assert_true(s.spawn_rate == 50.0); /* spawn_rate defaults to users */
    assert_int_equal(s.think_min_ms, 250);
    assert_int_equal(s.think_max_ms, 250);
    lc_scenario_free(&s);
}

static void test_stages(void **state)
{
    lc_scenario_t s;
    /* Without duration the stages set it; users defaults to their peak. */
    expect_ok(doc("'stages':[{'duration':'30s','users':10},{'duration':'1m30s','users':40},"
                  "{'duration':0,'target':0}]",
                  "duration"),
              &s);
    assert_int_equal(s.duration_ms, 120000);
    assert_int_equal(s.users, 40);
    assert_true(s.spawn_rate == 40.0);
    assert_int_equal(s.n_stages, 3);
    assert_int_equal(s.stages[2].target, 0);
    lc_scenario_free(&s);
    /* A longer explicit duration is kept. */
    expect_ok(doc("'duration':'10m','stages':[{'duration':'1m','users':5}]", NULL), &s);
    assert_int_equal(s.duration_ms, 600000);
    lc_scenario_free(&s);
    expect_error(doc("'duration':'1m','stages':[{'duration':'1m','users':5},"
                     "{'duration':1,'users':5}]",
                     NULL),
                 "duration", "shorter than the sum");
    expect_error(doc("'stages':[{'duration':'500ms','users':5}]", "duration"), "stages",
                 "total duration");
    expect_error(doc("'users':10,'stages':[{'duration':1,'users':5},{'duration':1,'users':11}]",
                     NULL),
                 "stages[1]", "exceeds users");
    expect_error(doc("'stages':[]", NULL), "stages", "non-empty array");
    expect_error(doc("'stages':{}", NULL), "stages", "non-empty array");
    expect_error(doc("'stages':[5]", NULL), "stages[0]", "expected an object");
    expect_error(doc("'stages':[{'users':5}]", NULL), "stages[0].duration", "required");
    expect_error(doc("'stages':[{'duration':5}]", NULL), "stages[0].users", "required");
    expect_error(doc("'stages':[{'duration':5,'users':1,'target':1}]", NULL), "stages[0].target",
                 "cannot be combined with users");
    expect_error(doc("'stages':[{'duration':5,'arrival_rate':1}]", NULL),
                 "stages[0].arrival_rate", "open model");
    expect_error(doc("'arrival_rate':10,'stages':[{'duration':5,'users':1}]", NULL),
                 "stages[0].users", "open model");
    expect_error(doc("'stages':[{'duration':'soon','users':1}]", NULL), "stages[0].duration",
                 "expected seconds or a duration string");
    expect_error(doc("'stages':[{'duration':1,'users':-1}]", NULL), "stages[0].users",
                 "must be between 0 and 1000000");
    expect_error(doc("'stages':[{'duration':1,'users':1,'ramp':'linear'}]", NULL),
                 "stages[0].ramp", "unknown field");
}

static void test_open_model(void **state)
{
    lc_scenario_t s;
    expect_ok(doc("'arrival_rate':5000,'max_users':300,"
                  "'stages':[{'duration':'10s','arrival_rate':100},{'duration':'50s','target':5000}]",
                  "duration"),
              &s);
    assert_true(s.arrival_rate == 5000);
    assert_int_equal(s.max_users, 300);
    assert_int_equal(s.users, 0);
    assert_true(s.spawn_rate == 0);
    assert_int_equal(s.duration_ms, 60000);
    assert_int_equal(s.stages[0].target, 100);
    assert_int_equal(s.stages[1].target, 5000);
    lc_scenario_free(&s);
    expect_ok(doc("'arrival_rate':0.5", NULL), &s);
    assert_int_equal(s.max_users, 1000);
    lc_scenario_free(&s);
    expect_error(doc("'users':10,'arrival_rate':5", NULL), "arrival_rate",
                 "cannot be combined with users");
    expect_error(doc("'arrival_rate':5,'spawn_rate':5", NULL), "spawn_rate",
                 "cannot be combined with arrival_rate");
    expect_error(doc("'max_users':5", NULL), "max_users", "requires arrival_rate");
    expect_error(doc("'arrival_rate':0", NULL), "arrival_rate", "greater than 0");
}

static void test_required_fields(void **state)
{
    expect_error(doc(NULL, "name"), "name", "required");
    expect_error(doc(NULL, "target"), "target", "required");
    expect_error(doc(NULL, "duration"), "duration", "required");
    expect_error(doc(NULL, "tasks"), "tasks", "required");
    expect_error(doc("'tasks':[{'path':'/'},{'method':'GET'}]", NULL), "tasks[1].path",
                 "required");
}

static void test_wrong_types(void **state)
{
    static const struct error_case cases[] = {
        {"'name':5", "name", "expected a string"},
        {"'tenant':true", "tenant", "expected a string"},
        {"'target':['http://x']", "target", "expected a string"},
        {"'duration':1.5", "duration", "expected seconds or a duration string"},
        {"'duration':null", "duration", "expected seconds or a duration string"},
        {"'users':'10'", "users", "expected an integer"},
        {"'users':2.5", "users", "expected an integer"},
        {"'spawn_rate':'fast'", "spawn_rate", "expected a number"},
        {"'think_time_ms':'1s'", "think_time_ms", "expected an integer or [min, max]"},
        {"'think_time_ms':[1,2,3]", "think_time_ms", "expected an integer or [min, max]"},
        {"'think_time_ms':[1,'2']", "think_time_ms[1]", "expected an integer"},
        {"'arrival_rate':'5'", "arrival_rate", "expected a number"},
        {"'arrival_rate':5,'max_users':1.5", "max_users", "expected an integer"},
        {"'stages':'1m'", "stages", "expected a non-empty array"},
        {"'tls':true", "tls", "expected an object"},
        {"'tls':{'insecure':'yes'}", "tls.insecure", "expected true or false"},
        {"'tls':{'ca_file':1}", "tls.ca_file", "expected a string"},
        {"'tasks':{}", "tasks", "expected a non-empty array"},
        {"'tasks':[]", "tasks", "expected a non-empty array"},
        {"'tasks':['/']", "tasks[0]", "expected an object"},
        {"'tasks':[{'path':'/','name':1}]", "tasks[0].name", "expected a string"},
        {"'tasks':[{'path':'/','weight':'2'}]", "tasks[0].weight", "expected an integer"},
        {"'tasks':[{'path':'/','method':1}]", "tasks[0].method", "expected a string"},
        {"'tasks':[{'path':5}]", "tasks[0].path", "expected a string"},
        {"'tasks':[{'path':'/','headers':[]}]", "tasks[0].headers", "expected an object"},
        {"'tasks':[{'path':'/','headers':{'X-A':1}}]", "tasks[0].headers.X-A", "expected a string"},
        {"'tasks':[{'path':'/','body':{}}]", "tasks[0].body", "expected a string"},
        {"'tasks':[{'path':'/','expect':[]}]", "tasks[0].expect", "expected an object"},
        {"'tasks':[{'path':'/','expect':{'status':200}}]", "tasks[0].expect.status",
         "expected an array"},
        {"'tasks':[{'path':'/','expect':{'status':['200']}}]", "tasks[0].expect.status[0]",
         "expected an integer"},
        {"'tasks':[{'path':'/','expect':{'body_contains':false}}]",
         "tasks[0].expect.body_contains", "expected a string"},
        {"'thresholds':1", "thresholds", "expected an object"},
        {"'thresholds':{'p95_ms':'1s'}", "thresholds.p95_ms", "expected a number"},
        {"'thresholds':{'error_rate':'1%'}", "thresholds.error_rate", "expected a number"},
        {"'thresholds':{'abort_on_fail':1}", "thresholds.abort_on_fail", "expected true or false"},
        {"'policy':1", "policy", "expected one of degrade, queue"},
        {"'connect_timeout_ms':'5s'", "connect_timeout_ms", "expected an integer"},
        {"'request_timeout_ms':1.5", "request_timeout_ms", "expected an integer"},
    };
    run_cases(cases, sizeof cases / sizeof cases[0]);
}

static void test_unknown_fields(void **state)
{
    static const struct error_case cases[] = {
        {"'foo':1", "foo", "unknown field"},
        {"'Users':1", "Users", "unknown field"},
        {"'tls':{'verify':false}", "tls.verify", "unknown field"},
        {"'thresholds':{'p99_ms':1}", "thresholds[\"p99_ms\"]", "unknown metric or field"},
        {"'tasks':[{'path':'/'},{'path':'/','timeout':1}]", "tasks[1].timeout", "unknown field"},
        {"'tasks':[{'path':'/','expect':{'json':{}}}]", "tasks[0].expect.json", "unknown field"},
        {"'stages':[{'duration':1,'users':1,'x':1}]", "stages[0].x", "unknown field"},
    };
    run_cases(cases, sizeof cases / sizeof cases[0]);
}

static void test_bounds(void **state)
{
    char many[DOC_MAX];
    static const struct error_case cases[] = {
        {"'name':''", "name", "must be 1 to 128"},
        {"'tenant':'a b'", "tenant", "letters, digits"},
        {"'tenant':''", "tenant", "must be 1 to 64"},
        {"'target':'ftp://x'", "target", "expected a URL starting with http:// or https://"},
        {"'target':'http://'", "target", "missing or too long host"},
        {"'target':'http://h:70000'", "target", "bad host or port"},
        {"'duration':0", "duration", "must be between 1s and 7d"},
        {"'duration':'999ms'", "duration", "must be between 1s and 7d"},
        {"'duration':'8d'", "duration", "must be between 1s and 7d"},
        {"'duration':604801", "duration", "must be between 1s and 7d"},
        {"'duration':-1", "duration", "must be between 1s and 7d"},
        {"'users':0", "users", "must be between 1 and 1000000"},
        {"'users':1000001", "users", "must be between 1 and 1000000"},
        {"'users':-5", "users", "must be between 1 and 1000000"},
        {"'spawn_rate':0", "spawn_rate", "greater than 0"},
        {"'spawn_rate':-1", "spawn_rate", "greater than 0"},
        {"'think_time_ms':3600001", "think_time_ms", "must be between 0 and 3600000"},
        {"'think_time_ms':[0,3600001]", "think_time_ms[1]", "must be between 0 and 3600000"},
        {"'think_time_ms':[-1,5]", "think_time_ms[0]", "must be between 0 and 3600000"},
        {"'think_time_ms':[10,5]", "think_time_ms", "min must not exceed max"},
        {"'arrival_rate':10000001", "arrival_rate", "at most"},
        {"'arrival_rate':5,'max_users':0", "max_users", "must be between 1 and 1000000"},
        {"'tls':{'ca_file':''}", "tls.ca_file", "must be 1 to"},
        {"'tasks':[{'path':'/','weight':0}]", "tasks[0].weight", "must be between 1 and 1000000"},
        {"'tasks':[{'path':'/','weight':1000001}]", "tasks[0].weight", "between 1 and 1000000"},
        {"'tasks':[{'path':'/'},{'path':'/'},{'path':'/','method':'get'}]", "tasks[2].method",
         "expected one of GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS"},
        {"'tasks':[{'path':'/','method':'TRACE'}]", "tasks[0].method", "expected one of GET"},
        {"'tasks':[{'path':'/','expect':{'status':[200,99]}}]", "tasks[0].expect.status[1]",
         "must be between 100 and 599"},
        {"'tasks':[{'path':'/','expect':{'status':[600]}}]", "tasks[0].expect.status[0]",
         "must be between 100 and 599"},
        {"'tasks':[{'path':'/','expect':{'body_contains':''}}]", "tasks[0].expect.body_contains",
         "must be 1 to"},
        {"'thresholds':{'p95_ms':0}", "thresholds.p95_ms", "greater than 0"},
        {"'thresholds':{'error_rate':1.5}", "thresholds.error_rate", "between 0 and 1"},
        {"'thresholds':{'error_rate':-0.1}", "thresholds.error_rate", "between 0 and 1"},
        {"'policy':'wait'", "policy", "expected one of degrade, queue"},
        {"'connect_timeout_ms':0", "connect_timeout_ms", "must be between 1 and 3600000"},
        {"'request_timeout_ms':3600001", "request_timeout_ms", "must be between 1 and 3600000"},
    };
    run_cases(cases, sizeof cases / sizeof cases[0]);

    /* LC_SCENARIO_MAX_TASKS + 1 tasks. */
    size_t len = (size_t)snprintf(many, sizeof many, "'tasks':[");
    for (unsigned i = 0; i <= LC_SCENARIO_MAX_TASKS; i++)
        len += (size_t)snprintf(many + len, sizeof many - len, "%s{'path':'/'}", i ? "," : "");
    snprintf(many + len, sizeof many - len, "]");
    expect_error(doc(many, NULL), "tasks", "at most 256 tasks");
}

static void test_paths_and_headers(void **state)
{
    static const struct error_case cases[] = {
        {"'tasks':[{'path':'api'}]", "tasks[0].path", "must start with '/'"},
        {"'tasks':[{'path':''}]", "tasks[0].path", "must be 1 to"},
        {"'tasks':[{'path':'/a b'}]", "tasks[0].path", "must not contain spaces"},
        {"'tasks':[{'path':'/','headers':{'':'1'}}]", "tasks[0].headers", "invalid header name"},
        {"'tasks':[{'path':'/','headers':{'Bad Name':'1'}}]", "tasks[0].headers",
         "invalid header name"},
        {"'tasks':[{'path':'/','headers':{'X:A':'1'}}]", "tasks[0].headers",
         "invalid header name"},
        {"'tasks':[{'path':'/','headers':{'content-length':'5'}}]",
         "tasks[0].headers.content-length", "set automatically"},
        {"'tasks':[{'path':'/','headers':{'Transfer-Encoding':'chunked'}}]",
         "tasks[0].headers.Transfer-Encoding", "set automatically"},
    };
    run_cases(cases, sizeof cases / sizeof cases[0]);
}

/* Anything that reaches a request line or a header may not hold a control
 * byte: CR or LF would end the line and start a header (or a request) of the
 * tenant's choosing. The error names the field and where the byte is. */
static void test_control_characters(void **state)
{
    static const struct error_case cases[] = {
        {"'target':'http://h/x\\r\\nTransfer-Encoding: chunked'", "target",
         "control character 0x0d at offset 10"},
        {"'target':'http://h\\t/'", "target", "control character 0x09 at offset 8"},
        {"'tasks':[{'path':'/a\\r\\nX-Evil: 1'}]", "tasks[0].path",
         "control character 0x0d at offset 2"},
        {"'tasks':[{'path':'/'},{'path':'/1234\\n'}]", "tasks[1].path",
         "control character 0x0a at offset 5"},
        {"'tasks':[{'path':'/a\\tb'}]", "tasks[0].path", "control character 0x09 at offset 2"},
        {"'tasks':[{'path':'/a\\u007f'}]", "tasks[0].path", "control character 0x7f at offset 2"},
        {"'tasks':[{'path':'/a\\u0001'}]", "tasks[0].path", "control character 0x01 at offset 2"},
        {"'tasks':[{'path':'/','method':'GET\\r\\n'}]", "tasks[0].method",
         "control character 0x0d at offset 3"},
        {"'tasks':[{'path':'/','headers':{'X-A':'a\\r\\nX-Evil: 1'}}]", "tasks[0].headers.X-A",
         "control character 0x0d at offset 1"},
        {"'tasks':[{'path':'/','headers':{'X-A':'a\\nb'}}]", "tasks[0].headers.X-A",
         "control character 0x0a at offset 1"},
        {"'tasks':[{'path':'/','headers':{'X-A':'\\ta'}}]", "tasks[0].headers.X-A",
         "control character 0x09 at offset 0"},
        {"'tasks':[{'path':'/','headers':{'X-A':'a\\u001bb'}}]", "tasks[0].headers.X-A",
         "control character 0x1b at offset 1"},
        /* The name is not echoed into the JSON path: it holds the control byte. */
        {"'tasks':[{'path':'/','headers':{'X-A\\r\\nX-Evil':'1'}}]", "tasks[0].headers",
         "header name: control character 0x0d at offset 3"},
        {"'name':'run\\nlevel=error'", "name", "control character 0x0a at offset 3"},
        {"'tasks':[{'path':'/','name':'a\\rb'}]", "tasks[0].name",
         "control character 0x0d at offset 1"},
    };
    run_cases(cases, sizeof cases / sizeof cases[0]);
    /* What stays allowed: spaces and tabs in a body, non-ASCII in a header value. */
    lc_scenario_t s;
    expect_ok(doc("'tasks':[{'path':'/','method':'POST','body':'a\\tb\\r\\n',"
                  "'headers':{'X-Name':'caf\\u00e9 ok'}}]", NULL), &s);
    assert_string_equal(s.tasks[0].body, "a\tb\r\n");
    assert_string_equal(s.tasks[0].headers[0].value, "caf\xc3\xa9 ok");
    lc_scenario_free(&s);
}

/* The engine writes Host (from target), Content-Length (from the body) and
 * manages the connection itself; a tenant's copy would contradict it. */
static void test_forbidden_headers(void **state)
{
    static const char *const names[] = {"Host", "host", "Connection", "Transfer-Encoding",
                                        "Content-Length", "Keep-Alive", "Proxy-Connection",
                                        "TE", "Trailer", "Upgrade"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char extra[128], path[64];
        snprintf(extra, sizeof extra, "'tasks':[{'path':'/','headers':{'%s':'x'}}]", names[i]);
        snprintf(path, sizeof path, "tasks[0].headers.%s", names[i]);
        expect_error(doc(extra, NULL), path, "must not be given");
    }
    lc_scenario_t s;
    expect_ok(doc("'tasks':[{'path':'/','headers':{'User-Agent':'me','X-Host':'h'}}]", NULL),
              &s);
    lc_scenario_free(&s);
}

/* CA certificates come inline (tls.ca_pem, checked here, on the master) or by
 * a plain name from the operator's --tls-ca-dir on the worker: never a path. */
static void test_tls_ca(void **state)
{
    lc_scenario_t s;
    expect_ok(doc("'tls':{'ca_pem':'" TEST_CA_PEM_JSON "'}", NULL), &s);
    assert_non_null(strstr(s.tls.ca_pem, "-----BEGIN CERTIFICATE-----\n"));
    assert_null(s.tls.ca_file);
    lc_scenario_free(&s);
    /* A bundle, with text around its blocks as in ca-certificates.crt. */
    expect_ok(doc("'tls':{'ca_pem':'# one\\n" TEST_CA_PEM_JSON "\\n# two\\n" TEST_CA_PEM_JSON "'}",
                  NULL),
              &s);
    lc_scenario_free(&s);
    expect_ok(doc("'tls':{'ca_file':'corp-ca.pem','insecure':false}", NULL), &s);
    assert_string_equal(s.tls.ca_file, "corp-ca.pem");
    lc_scenario_free(&s);

    static const struct error_case cases[] = {
        {"'tls':{'ca_pem':1}", "tls.ca_pem", "expected a string"},
        {"'tls':{'ca_pem':''}", "tls.ca_pem", "must be 1 to 262144"},
        {"'tls':{'ca_pem':'not a certificate'}", "tls.ca_pem", "no PEM certificate"},
        {"'tls':{'ca_pem':'-----BEGIN PRIVATE KEY-----\\nAAAA\\n-----END PRIVATE KEY-----\\n'}",
         "tls.ca_pem", "PEM block 1 is not a CERTIFICATE"},
        {"'tls':{'ca_pem':'" TEST_CA_PEM_JSON "-----BEGIN CERTIFICATE-----\\nAAAA\\n"
         "-----END CERTIFICATE-----\\n'}",
         "tls.ca_pem", "PEM block 2 is not a valid X.509 certificate"},
        {"'tls':{'ca_pem':'-----BEGIN CERTIFICATE-----\\nMIIB\\n'}", "tls.ca_pem",
         "malformed PEM"},
        {"'tls':{'ca_pem':'" TEST_CA_PEM_JSON "','ca_file':'ca.pem'}", "tls.ca_pem",
         "cannot be combined with ca_file"},
        {"'tls':{'ca_file':'/etc/ssl/ca.pem'}", "tls.ca_file", "expected a file name"},
        {"'tls':{'ca_file':'/proc/self/fd/0'}", "tls.ca_file", "expected a file name"},
        {"'tls':{'ca_file':'sub/ca.pem'}", "tls.ca_file", "expected a file name"},
        {"'tls':{'ca_file':'..'}", "tls.ca_file", "expected a file name"},
        {"'tls':{'ca_file':'.'}", "tls.ca_file", "expected a file name"},
        {"'tls':{'ca_file':'..data'}", "tls.ca_file", "expected a file name"},
        {"'tls':{'ca_file':'ca\\n.pem'}", "tls.ca_file", "control character 0x0a at offset 2"},
    };
    run_cases(cases, sizeof cases / sizeof cases[0]);

    /* One byte over the bound (too big for doc()). */
    size_t over = 262145;
    char *json = malloc(over + 256);
    assert_non_null(json);
    int n = snprintf(json, 256, "{\"name\":\"t\",\"target\":\"http://h\",\"duration\":1,"
                                "\"tasks\":[{\"path\":\"/\"}],\"tls\":{\"ca_pem\":\"");
    memset(json + n, 'A', over);
    strcpy(json + n + over, "\"}}");
    expect_error(json, "tls.ca_pem", "must be 1 to 262144");
    free(json);
}

static void test_templates(void **state)
{
    static const struct error_case cases[] = {
        {"'tasks':[{'path':'/${foo}'}]", "tasks[0].path", "unknown template ${foo}"},
        {"'tasks':[{'path':'/${user_id'}]", "tasks[0].path", "unterminated template"},
        {"'tasks':[{'path':'/${}'}]", "tasks[0].path", "unknown template ${}"},
        {"'tasks':[{'path':'/${UUID}'}]", "tasks[0].path", "unknown template ${UUID}"},
        {"'tasks':[{'path':'/${rand(5,1)}'}]", "tasks[0].path", "bad template ${rand(5,1)}"},
        {"'tasks':[{'path':'/${rand(1)}'}]", "tasks[0].path", "bad template ${rand(1)}"},
        {"'tasks':[{'path':'/${rand(a,b)}'}]", "tasks[0].path", "bad template"},
        {"'tasks':[{'path':'/${rand(1,2)x}'}]", "tasks[0].path", "bad template"},
        {"'tasks':[{'path':'/${rand(1,99999999999999999999)}'}]", "tasks[0].path",
         "bad template"},
        {"'tasks':[{'path':'/','body':'x=${user_id}&y=${nope}'}]", "tasks[0].body",
         "unknown template ${nope}"},
    };
    run_cases(cases, sizeof cases / sizeof cases[0]);

    lc_scenario_t s;
    expect_ok(doc("'tasks':[{'path':'/${rand(-5,-5)}/${uuid}/$x/$','body':'${rand(0,9)}'}]",
                  NULL),
              &s);
    assert_string_equal(s.tasks[0].body, "${rand(0,9)}");
    lc_scenario_free(&s);
}

static void test_invalid_json(void **state)
{
    lc_scenario_t s;
    char err[256];
    const char *bad = "{\n  \"name\": \"x\",\n  \"users\": ,\n}";
    memset(&s, 0x5a, sizeof s);
    assert_int_equal(parse(bad, &s, err, sizeof err), LC_EINVAL);
    assert_true(is_zeroed(&s));
    assert_non_null(strstr(err, "scenario: invalid JSON at line 3 column "));
    expect_error("{\"name\":\"a\",\"name\":\"b\"}", "scenario", "duplicate");
    expect_error("[1,2]", "scenario", "expected a JSON object");
    expect_error("", "scenario", "invalid JSON at line");
    expect_error("{\"name\":\"t\"} trailing", "scenario", "invalid JSON");

    /* Only len bytes are read: a valid document cut short is invalid. */
    const char *full = doc(NULL, NULL);
    assert_int_equal(lc_scenario_parse(full, strlen(full) - 1, &s, err, sizeof err), LC_EINVAL);
    assert_int_equal(lc_scenario_parse(full, strlen(full), &s, err, sizeof err), 0);
    lc_scenario_free(&s);

    size_t big = LC_SCENARIO_MAX_BYTES + 1;
    char *huge = malloc(big);
    assert_non_null(huge);
    memset(huge, ' ', big);
    assert_int_equal(lc_scenario_parse(huge, big, &s, err, sizeof err), LC_EINVAL);
    assert_non_null(strstr(err, "scenario: larger than"));
    free(huge);
}

static void test_duration_parse(void **state)
{
    static const struct {
        const char *text;
        uint64_t ms;
    } good[] = {{"0", 0},           {"30", 30000},      {"500ms", 500},     {"30s", 30000},
                {"5m", 300000},     {"1h", 3600000},    {"1m30s", 90000},   {"2d", 172800000},
                {"1h2m3s4ms", 3723004}, {"1s500ms", 1500}, {"90m", 5400000}};
    static const char *const bad[] = {"",   "s",     "-1",  "1.5s", "1x",   "1 s",  " 1s",
                                      "1s ", "30s1m", "1s1s", "1m30", "ms",   "5M",
                                      "99999999999999999999", "18446744073709551615d", "1sms"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        uint64_t ms = 12345;
        if (lc_duration_parse(good[i].text, &ms) != 0)
            fail_msg("'%s' should parse", good[i].text);
        assert_int_equal(ms, good[i].ms);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t ms = 0;
        if (lc_duration_parse(bad[i], &ms) != LC_EINVAL)
            fail_msg("'%s' should be rejected", bad[i]);
    }
}

static void test_free_and_small_buffers(void **state)
{
    lc_scenario_t s;
    memset(&s, 0, sizeof s);
    lc_scenario_free(&s);
    lc_scenario_free(&s);
    lc_scenario_free(NULL);

    /* Truncated messages stay terminated and never overflow. */
    char err[8];
    memset(err, 'x', sizeof err);
    assert_int_equal(parse(doc("'foo':1", NULL), &s, err, 5), LC_EINVAL);
    assert_string_equal(err, "foo:");
    assert_int_equal(err[5], 'x');
    assert_int_equal(parse(doc("'foo':1", NULL), &s, NULL, 0), LC_EINVAL);

    /* An error after every other field has been allocated leaks nothing (ASan checks). */
    char *late = json_of(full_doc);
    char *policy = strstr(late, "\"queue\"");
    assert_non_null(policy);
    memcpy(policy, "\"quack", 6); /* same length: "quack" */
    expect_error(late, "policy", "expected one of degrade, queue");
}

/* "http2": false | true | "auto", default false; anything else names the field. */
static void test_http2_option(void **state)
{
    static const struct {
        const char *extra;
        enum lc_http2 want;
    } ok[] = {{"", LC_HTTP2_OFF}, {"'http2':false", LC_HTTP2_OFF},
              {"'http2':true", LC_HTTP2_ON}, {"'http2':'auto'", LC_HTTP2_AUTO}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        lc_scenario_t s;
        expect_ok(doc(ok[i].extra, NULL), &s);
        assert_int_equal(s.http2, ok[i].want);
        lc_scenario_free(&s);
    }
    static const struct error_case cases[] = {
        {"'http2':'yes'", "http2", "expected false, true or \"auto\""},
        {"'http2':'AUTO'", "http2", "expected false, true or \"auto\""},
        {"'http2':1", "http2", "expected false, true or \"auto\""},
        {"'http2':null", "http2", "expected false, true or \"auto\""},
        {"'http2':{}", "http2.mode", "required"},
    };
    run_cases(cases, sizeof cases / sizeof cases[0]);
}

/* "http2": {"mode": true|"auto", "pool": {...}}: the mode alone parses as the plain value; a
 * pool's members are bounded, it needs mode true and v1 tasks (either model). */
static void test_http2_pool_option(void **state)
{
    (void)state;
    lc_scenario_t s;
    expect_ok(doc("'http2':{'mode':'auto'}", NULL), &s);
    assert_int_equal(s.http2, LC_HTTP2_AUTO);
    assert_int_equal(s.h2_pool.connections, 0);
    lc_scenario_free(&s);
    expect_ok(doc("'http2':{'mode':true}", NULL), &s);
    assert_int_equal(s.http2, LC_HTTP2_ON);
    lc_scenario_free(&s);
    static const struct error_case cases[] = {
        {"'http2':{'mode':false}", "http2.mode", "expected true or \"auto\""},
        {"'http2':{'mode':'h2'}", "http2.mode", "expected true or \"auto\""},
        {"'http2':{'pool':{'connections':1}}", "http2.mode", "required"},
        {"'http2':{'mode':true,'streams':4}", "http2.streams", "unknown"},
        {"'http2':{'mode':true,'pool':4}", "http2.pool", "expected {"},
        {"'http2':{'mode':true,'pool':{}}", "http2.pool.connections", "required"},
        {"'http2':{'mode':true,'pool':{'connections':0}}", "http2.pool.connections", "1"},
        {"'http2':{'mode':true,'pool':{'connections':1025}}", "http2.pool.connections",
         "1024"},
        {"'http2':{'mode':true,'pool':{'connections':2,'max_streams':0}}",
         "http2.pool.max_streams", "1"},
        {"'http2':{'mode':true,'pool':{'connections':2,'max_streams':1001}}",
         "http2.pool.max_streams", "1000"},
        {"'http2':{'mode':true,'pool':{'connections':2,'conns':1}}", "http2.pool.conns",
         "unknown"},
        {"'http2':{'mode':'auto','pool':{'connections':2}}", "http2.mode", "must be true"},
    };
    run_cases(cases, sizeof cases / sizeof cases[0]);
    expect_ok(doc("'http2':{'mode':true,'pool':{'connections':4,'max_streams':25}}", NULL), &s);
    assert_int_equal(s.http2, LC_HTTP2_ON);
    assert_int_equal(s.h2_pool.connections, 4);
    assert_int_equal(s.h2_pool.max_streams, 25);
    lc_scenario_free(&s);
    /* Journeys go through a pool too (their other origins' requests keep their own). */
    expect_ok(doc("'journeys':[{'name':'j','steps':[{'path':'/'}]}],"
                  "'http2':{'mode':true,'pool':{'connections':2}}", NULL), &s);
    assert_non_null(s.program);
    assert_int_equal(s.h2_pool.connections, 2);
    lc_scenario_free(&s);
    expect_ok(doc("'http2':{'mode':true,'pool':{'connections':1}}", NULL), &s);
    assert_int_equal(s.h2_pool.max_streams, LC_H2_POOL_STREAMS_DEFAULT);
    lc_scenario_free(&s);
    expect_ok(doc("'arrival_rate':10,'max_users':20,'http2':{'mode':true,'pool':{'connections':2}}",
                  NULL), &s);
    assert_int_equal(s.h2_pool.connections, 2);
    lc_scenario_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_scenario),   cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_stages),          cmocka_unit_test(test_open_model),
        cmocka_unit_test(test_required_fields), cmocka_unit_test(test_wrong_types),
        cmocka_unit_test(test_unknown_fields),  cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_paths_and_headers), cmocka_unit_test(test_templates),
        cmocka_unit_test(test_control_characters), cmocka_unit_test(test_forbidden_headers),
        cmocka_unit_test(test_tls_ca),          cmocka_unit_test(test_http2_option),
        cmocka_unit_test(test_http2_pool_option),
        cmocka_unit_test(test_invalid_json),    cmocka_unit_test(test_duration_parse),
        cmocka_unit_test(test_free_and_small_buffers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
