/* test_ctl_summary.c — ctl/ctl_summary.c: `loadctl validate`'s text for both models, cut cells,
 * hostile names and an answer without a summary. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ctl_summary.h"

/* What ctl_print_summary prints for the answer in json; *rv its return. */
static char *printed(const char *json, int *rv)
{
    json_t *answer = json_loads(json, 0, NULL);
    assert_non_null(answer);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    *rv = ctl_print_summary(out, answer);
    fclose(out);
    json_decref(answer);
    return text;
}

static const char closed[] =
    "{\"valid\":true,\"scenario\":{},\"summary\":{\"name\":\"shop\",\"tenant\":\"team-a\","
    "\"target\":\"http://h:8080\",\"model\":\"closed\",\"users\":2000,\"arrival_rate\":null,"
    "\"duration_ms\":90500,\"stages\":2,\"endpoints\":[{\"name\":\"list\",\"method\":\"GET\","
    "\"path\":\"/items?page=${rand(1,50)}\",\"weight\":3},{\"name\":\"POST /cart\",\"method\":"
    "\"POST\",\"path\":\"/cart\",\"weight\":1}],\"thresholds\":[\"http_req_duration p(95)<250\"],"
    "\"bytes_per_idle_user\":1456,\"bytes_per_idle_user_parts\":{\"user\":1160,\"allocator\":24,"
    "\"libuv\":16,\"request\":256,\"tls\":0}}}";

static void test_closed_model(void **state)
{
    (void)state;
    int rv;
    char *text = printed(closed, &rv);
    assert_int_equal(rv, 0);
    assert_string_equal(text,
        "scenario shop is valid\n"
        "  tenant      team-a\n"
        "  target      http://h:8080\n"
        "  model       closed: 2000 users, 2 stages, for 1m30.500s\n"
        "  endpoints   2\n"
        "    NAME        METHOD  WEIGHT  PATH\n"
        "    list        GET          3  /items?page=${rand(1,50)}\n"
        "    POST /cart  POST         1  /cart\n"
        "  thresholds  1\n"
        "    http_req_duration p(95)<250\n"
        "  memory      ~1456 bytes per idle user (user 1160, allocator 24, libuv 16, request 256, "
        "tls 0),\n"
        "              ~2.8 MiB for 2000 users (response bodies kept for checks and the kernel's "
        "socket buffers not counted)\n");
    free(text);
}

static void test_open_model(void **state)
{
    (void)state;
    int rv;
    char *text = printed("{\"summary\":{\"name\":\"o\",\"model\":\"open\",\"users\":300,"
                         "\"arrival_rate\":250.5,\"duration_ms\":3600000,\"stages\":1,"
                         "\"endpoints\":[],\"thresholds\":[],\"bytes_per_idle_user\":62000,"
                         "\"bytes_per_idle_user_parts\":{}}}", &rv);
    assert_int_equal(rv, 0);
    assert_non_null(strstr(text, "  model       open: 250.5 requests/s, at most 300 users, 1 stage, "
                                 "for 1h\n"));
    assert_non_null(strstr(text, "  tenant      -\n"));
    assert_non_null(strstr(text, "~18 MiB for 300 users"));
    free(text);
}

/* A long name is cut with "~"; control characters never reach the terminal. */
static void test_hostile_names(void **state)
{
    (void)state;
    char json[1024], name[61];
    memset(name, 'n', 60);
    name[60] = '\0';
    snprintf(json, sizeof json, "{\"summary\":{\"name\":\"a\\u001b[2Jb\",\"endpoints\":[{\"name\":"
             "\"%s\",\"method\":\"GET\",\"path\":\"/\",\"weight\":1}]}}", name);
    int rv;
    char *text = printed(json, &rv);
    assert_int_equal(rv, 0);
    assert_null(strchr(text, '\x1b'));
    assert_non_null(strstr(text, "scenario a?[2Jb is valid\n"));
    char cut[64];
    snprintf(cut, sizeof cut, "    %.39s~  GET", name);
    assert_non_null(strstr(text, cut));
    free(text);
}

/* v2: each variable with where it is set; the fleet's capacity against the users' memory. */
static void test_variables_and_capacity(void **state)
{
    (void)state;
    int rv;
    char *text = printed(
        "{\"summary\":{\"name\":\"j\",\"users\":40,\"journeys\":[],\"variables\":[\"tok\",\"k\"],"
        "\"variables_set_at\":{\"tok\":[{\"by\":\"extract\",\"path\":\"journeys[0].on_start[0]."
        "extract.tok\"}],\"k\":[{\"by\":\"set\",\"path\":\"journeys[0].steps[0].set.k\"},"
        "{\"by\":\"extract\",\"path\":\"journeys[0].steps[1].extract.k\"}],\"acc.user\":"
        "[{\"by\":\"feeder\",\"path\":\"feeders.acc\"}]},\"feeders\":[{\"name\":\"acc\",\"rows\":2,"
        "\"mode\":\"per_user\",\"order\":\"shuffle\",\"on_exhausted\":\"wrap\",\"secret\":[\"pw\","
        "\"api_key\"]}],"
        "\"bytes_per_idle_user\":1024,\"capacity\":{\"known\":true,\"workers\":2,\"users\":30,"
        "\"bytes\":30720,\"users_asked\":40,\"bytes_asked\":40960,\"fits\":false}}}",
        &rv);
    assert_int_equal(rv, 0);
    assert_non_null(strstr(text,
        "  variables   2  tok, k\n"
        "    tok       extract journeys[0].on_start[0].extract.tok\n"
        "    k         set journeys[0].steps[0].set.k, extract journeys[0].steps[1].extract.k\n"
        "    acc.user  feeder feeders.acc\n"));
    assert_non_null(strstr(text, "    acc  2 rows, per_user, shuffle, on_exhausted wrap, secret pw, "
                                 "api_key\n"));
    assert_non_null(strstr(text, "  capacity    40 users (~40 KiB) of 30 the fleet grants now "
                                 "(~30 KiB, 2 workers): does not fit (10 users short)\n"));
    free(text);
    text = printed("{\"summary\":{\"capacity\":{\"known\":true,\"workers\":1,\"users\":40,"
                   "\"bytes\":40960,\"users_asked\":40,\"bytes_asked\":40960,\"fits\":true}}}",
                   &rv);
    assert_non_null(strstr(text, "(~40 KiB, 1 worker): fits\n"));
    free(text);
    text = printed("{\"summary\":{\"capacity\":{\"known\":false,\"users_asked\":40,"
                   "\"bytes_asked\":40960,\"fits\":null}}}", &rv);
    assert_non_null(strstr(text, "  capacity    40 users (~40 KiB); the fleet's capacity is "
                                 "unknown here"));
    free(text);
}

static void test_no_summary(void **state)
{
    (void)state;
    int rv;
    char *text = printed("{\"valid\":true}", &rv);
    assert_int_equal(rv, -1);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_closed_model),
        cmocka_unit_test(test_open_model),
        cmocka_unit_test(test_hostile_names),
        cmocka_unit_test(test_variables_and_capacity),
        cmocka_unit_test(test_no_summary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
