/* lc_scenario.c — parses scenario JSON (v1) with jansson into a validated lc_scenario_t. */
#include "lc_scenario.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "lc_err.h"
#include "lc_json_fields.h"
#include "lc_pem.h"

#define DURATION_MIN_MS 1000ull
#define DURATION_MAX_MS (7ull * 24 * 3600 * 1000)
#define THINK_MAX_MS 3600000u
#define TIMEOUT_MAX_MS 3600000u
#define NAME_MAX_LEN 128u
#define TENANT_MAX_LEN 64u
#define URL_MAX_LEN 2048u
#define PATH_MAX_LEN 8192u
#define HEADER_NAME_MAX_LEN 256u
#define HEADER_VALUE_MAX_LEN 8192u
#define RATE_MAX 10000000.0
#define STAGE_RATE_MAX 10000000u
#define WEIGHT_MAX 1000000u
#define EXPECT_STATUS_MAX 32u
#define TEMPLATE_SHOW_MAX 64
#define CA_PEM_MAX_LEN (256u * 1024u)
#define CA_FILE_MAX_LEN 255u

static const char *const methods[] = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD",
                                      "OPTIONS", NULL};

static int get_duration(lc_jp_t *p, json_t *obj, const char *parent, const char *key,
                        uint64_t min_ms, uint64_t *out)
{
    json_t *v = json_object_get(obj, key);
    uint64_t ms = 0;
    if (v == NULL)
        return lc_jp_fail(p, parent, key, "required");
    if (json_is_integer(v)) {
        json_int_t secs = json_integer_value(v);
        if (secs < 0 || (uint64_t)secs > DURATION_MAX_MS / 1000)
            return lc_jp_fail(p, parent, key, "must be between %llus and 7d",
                        (unsigned long long)(min_ms / 1000));
        ms = (uint64_t)secs * 1000;
    } else if (!json_is_string(v) || lc_duration_parse(json_string_value(v), &ms) != 0) {
        return lc_jp_fail(p, parent, key,
                    "expected seconds or a duration string like \"500ms\", \"5m\", \"1m30s\"");
    }
    if (ms < min_ms || ms > DURATION_MAX_MS)
        return lc_jp_fail(p, parent, key, "must be between %llus and 7d",
                    (unsigned long long)(min_ms / 1000));
    *out = ms;
    return 0;
}

/* Parses "<digits>" and returns the rest, or NULL; accepts a leading '-'. */
static const char *parse_int(const char *s, long long *out)
{
    char *end;
    if (!(s[0] >= '0' && s[0] <= '9') && !(s[0] == '-' && s[1] >= '0' && s[1] <= '9'))
        return NULL;
    errno = 0;
    *out = strtoll(s, &end, 10);
    return errno == ERANGE ? NULL : end;
}

/* One template body (between "${" and "}"); 0 when it is a known one. */
static int check_template(const char *t, size_t len)
{
    static const char *const plain[] = {"user_id", "iteration", "uuid", NULL};
    char buf[TEMPLATE_SHOW_MAX + 1];
    long long a, b;
    for (size_t i = 0; plain[i] != NULL; i++)
        if (strlen(plain[i]) == len && memcmp(plain[i], t, len) == 0)
            return 0;
    if (len < 5 || len > TEMPLATE_SHOW_MAX || memcmp(t, "rand(", 5) != 0)
        return LC_ENOTFOUND;
    memcpy(buf, t, len);
    buf[len] = '\0';
    const char *s = parse_int(buf + 5, &a);
    if (s == NULL || *s != ',')
        return LC_EINVAL;
    s = parse_int(s + 1, &b);
    if (s == NULL || strcmp(s, ")") != 0 || a > b)
        return LC_EINVAL;
    return 0;
}

/* Every "${" must open ${user_id}, ${iteration}, ${uuid} or ${rand(a,b)} with a <= b. */
static int check_templates(lc_jp_t *p, const char *parent, const char *key, const char *text)
{
    const char *s = text;
    while ((s = strstr(s, "${")) != NULL) {
        const char *close = strchr(s + 2, '}');
        if (close == NULL)
            return lc_jp_fail(p, parent, key, "unterminated template %.*s", TEMPLATE_SHOW_MAX, s);
        size_t len = (size_t)(close - (s + 2));
        int show = len > TEMPLATE_SHOW_MAX ? TEMPLATE_SHOW_MAX : (int)len;
        int rv = check_template(s + 2, len);
        if (rv == LC_ENOTFOUND)
            return lc_jp_fail(p, parent, key, "unknown template ${%.*s}", show, s + 2);
        if (rv != 0)
            return lc_jp_fail(p, parent, key,
                        "bad template ${%.*s}: expected ${rand(a,b)} with integers a <= b", show,
                        s + 2);
        s = close + 1;
    }
    return 0;
}

static int parse_method(lc_jp_t *p, json_t *obj, const char *parent, lc_task_t *t)
{
    int rv = lc_jp_text(p, obj, parent, "method", 1, 16, &t->method);
    if (rv != 0)
        return rv;
    if (t->method == NULL)
        return lc_jp_dup(p, "GET", &t->method);
    for (size_t i = 0; methods[i] != NULL; i++)
        if (strcmp(methods[i], t->method) == 0)
            return 0;
    return lc_jp_fail(p, parent, "method", "expected one of GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS");
}

static int parse_path(lc_jp_t *p, json_t *obj, const char *parent, lc_task_t *t, bool v1)
{
    if (json_object_get(obj, "path") == NULL)
        return lc_jp_fail(p, parent, "path", "required");
    int rv = lc_jp_text(p, obj, parent, "path", 1, PATH_MAX_LEN, &t->path);
    if (rv != 0)
        return rv;
    if (t->path[0] != '/')
        return lc_jp_fail(p, parent, "path", "must start with '/'");
    /* A space would end the request target early. */
    const char *space = strchr(t->path, ' ');
    if (space != NULL)
        return lc_jp_fail(p, parent, "path", "must not contain spaces (offset %zu)",
                    (size_t)(space - t->path));
    return v1 ? check_templates(p, parent, "path", t->path) : 0;
}

static bool is_token(const char *s)
{
    if (*s == '\0')
        return false;
    for (; *s != '\0'; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              (*s != '\0' && strchr("!#$%&'*+-.^_`|~", *s) != NULL)))
            return false;
    return true;
}

/* Headers the engine writes itself (framing from the body, Host from target)
 * or that would change the connection under it (hop-by-hop): a tenant's
 * copy would contradict the engine's and invite request smuggling. */
static const char *reserved_header(const char *name)
{
    static const char set_by_engine[] = "is set automatically and must not be given";
    static const char hop_by_hop[] =
        "is hop-by-hop (the engine manages connections) and must not be given";
    static const struct {
        const char *name, *why;
    } reserved[] = {
        {"Content-Length", set_by_engine}, {"Transfer-Encoding", set_by_engine},
        {"Host", "is set from target and must not be given"},
        {"Connection", hop_by_hop},        {"Keep-Alive", hop_by_hop},
        {"Proxy-Connection", hop_by_hop},  {"TE", hop_by_hop},
        {"Trailer", hop_by_hop},           {"Upgrade", hop_by_hop},
    };
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
        if (strcasecmp(name, reserved[i].name) == 0)
            return reserved[i].why;
    return NULL;
}

static int parse_header(lc_jp_t *p, const char *parent, const char *name, json_t *v,
                        lc_header_t *h)
{
    /* Checked before the name goes into an error's JSON path. */
    int rv = lc_jp_controls(p, parent, NULL, "header name: ", name, strlen(name));
    if (rv != 0)
        return rv;
    if (!is_token(name) || strlen(name) > HEADER_NAME_MAX_LEN)
        return lc_jp_fail(p, parent, NULL, "invalid header name '%.64s' (expected an HTTP token)",
                    name);
    const char *why = reserved_header(name);
    if (why != NULL)
        return lc_jp_fail(p, parent, name, "%s", why);
    if (!json_is_string(v))
        return lc_jp_fail(p, parent, name, "expected a string");
    const char *value = json_string_value(v);
    if (json_string_length(v) > HEADER_VALUE_MAX_LEN)
        return lc_jp_fail(p, parent, name, "must be at most %u characters long", HEADER_VALUE_MAX_LEN);
    if ((rv = lc_jp_controls(p, parent, name, "", value, json_string_length(v))) != 0)
        return rv;
    if (lc_jp_dup(p, name, &h->name) != 0 || lc_jp_dup(p, value, &h->value) != 0)
        return LC_ENOMEM;
    return 0;
}

static int parse_headers(lc_jp_t *p, json_t *obj, const char *parent, lc_task_t *t)
{
    char path[LC_JSON_PATH_MAX];
    json_t *headers, *v;
    const char *name;
    int rv = lc_jp_object(p, obj, parent, "headers", &headers);
    if (rv != 0 || headers == NULL)
        return rv;
    snprintf(path, sizeof path, "%s.headers", parent);
    size_t n = json_object_size(headers);
    if (n > LC_SCENARIO_MAX_HEADERS)
        return lc_jp_fail(p, path, NULL, "at most %u headers", LC_SCENARIO_MAX_HEADERS);
    if (n == 0)
        return 0;
    t->headers = calloc(n, sizeof *t->headers);
    if (t->headers == NULL)
        return lc_jp_oom(p);
    json_object_foreach(headers, name, v) {
        rv = parse_header(p, path, name, v, &t->headers[t->n_headers++]);
        if (rv != 0)
            return rv;
    }
    return 0;
}

static int parse_expect(lc_jp_t *p, json_t *obj, const char *parent, lc_task_t *t)
{
    static const char *const fields[] = {"status", "body_contains", NULL};
    char path[LC_JSON_PATH_MAX], elem[32];
    json_t *expect, *status;
    int rv = lc_jp_object(p, obj, parent, "expect", &expect);
    if (rv != 0 || expect == NULL)
        return rv;
    snprintf(path, sizeof path, "%s.expect", parent);
    if ((rv = lc_jp_fields(p, expect, path, fields)) != 0 ||
        (rv = lc_jp_string(p, expect, path, "body_contains", 1, PATH_MAX_LEN,
                         &t->expect_body_contains)) != 0)
        return rv;
    status = json_object_get(expect, "status");
    if (status == NULL)
        return 0;
    if (!json_is_array(status) || json_array_size(status) > EXPECT_STATUS_MAX)
        return lc_jp_fail(p, path, "status", "expected an array of at most %u status codes",
                    EXPECT_STATUS_MAX);
    size_t n = json_array_size(status);
    if (n == 0)
        return 0;
    if ((t->expect_status = calloc(n, sizeof *t->expect_status)) == NULL)
        return lc_jp_oom(p);
    for (size_t i = 0; i < n; i++) {
        uint64_t code;
        snprintf(elem, sizeof elem, "status[%zu]", i);
        if ((rv = lc_jp_uint_value(p, json_array_get(status, i), path, elem, 100, 599, &code)) != 0)
            return rv;
        t->expect_status[t->n_expect_status++] = (int)code;
    }
    return 0;
}

static int default_task_name(lc_jp_t *p, lc_task_t *t)
{
    size_t len = strlen(t->method) + 1 + strlen(t->path) + 1;
    if ((t->name = malloc(len)) == NULL)
        return lc_jp_oom(p);
    snprintf(t->name, len, "%s %s", t->method, t->path);
    return 0;
}

int lc_scenario_parse_request(lc_jp_t *p, json_t *v, const char *parent, lc_task_t *t, bool v1)
{
    int rv;
    if ((rv = lc_jp_text(p, v, parent, "name", 1, NAME_MAX_LEN, &t->name)) != 0 ||
        (rv = parse_method(p, v, parent, t)) != 0 || (rv = parse_path(p, v, parent, t, v1)) != 0 ||
        (rv = parse_headers(p, v, parent, t)) != 0 ||
        (rv = lc_jp_string(p, v, parent, "body", 0, LC_SCENARIO_MAX_BYTES, &t->body)) != 0 ||
        (rv = parse_expect(p, v, parent, t)) != 0)
        return rv;
    if (v1 && t->body != NULL && (rv = check_templates(p, parent, "body", t->body)) != 0)
        return rv;
    return t->name == NULL ? default_task_name(p, t) : 0;
}

static int parse_task(lc_jp_t *p, json_t *v, const char *parent, lc_task_t *t)
{
    static const char *const fields[] = {"name", "weight", "method", "path", "headers",
                                         "body", "expect", "compression", NULL};
    int rv;
    if (!json_is_object(v))
        return lc_jp_fail(p, parent, NULL, "expected an object");
    t->weight = 1;
    if ((rv = lc_jp_fields(p, v, parent, fields)) != 0 ||
        (rv = lc_jp_uint(p, v, parent, "weight", 1, WEIGHT_MAX, &t->weight)) != 0 ||
        (rv = lc_codings_parse(p, v, parent, "compression", &t->compression)) != 0 ||
        (rv = lc_scenario_parse_request(p, v, parent, t, true)) != 0)
        return rv;
    return lc_scenario_check_accept(p, parent, t);
}

int lc_scenario_check_accept(lc_jp_t *p, const char *parent, const lc_task_t *t)
{
    for (size_t i = 0; t->compression.n > 0 && i < t->n_headers; i++)
        if (strcasecmp(t->headers[i].name, "Accept-Encoding") == 0)
            return lc_jp_fail(p, parent, "compression", "cannot be combined with an "
                              "Accept-Encoding header (compression writes that header)");
    return 0;
}

static int parse_tasks(lc_jp_t *p, json_t *root, lc_scenario_t *s)
{
    char path[32];
    json_t *tasks = json_object_get(root, "tasks");
    if (json_object_get(root, "journeys") != NULL) /* v2: tasks are single-step journeys */
        return lc_program_compile(root, &s->origins, &s->program, p->errmsg, p->errlen);
    static const char *const v2_only[] = {"feeders", "defaults", "targets", NULL};
    for (size_t i = 0; v2_only[i] != NULL; i++)
        if (json_object_get(root, v2_only[i]) != NULL)
            return lc_jp_fail(p, "", v2_only[i], "belongs to journeys (add \"journeys\")");
    if (tasks == NULL)
        return lc_jp_fail(p, "", "tasks", "required (or journeys)");
    if (!json_is_array(tasks) || json_array_size(tasks) == 0)
        return lc_jp_fail(p, "", "tasks", "expected a non-empty array");
    size_t n = json_array_size(tasks);
    if (n > LC_SCENARIO_MAX_TASKS)
        return lc_jp_fail(p, "", "tasks", "at most %u tasks", LC_SCENARIO_MAX_TASKS);
    if ((s->tasks = calloc(n, sizeof *s->tasks)) == NULL)
        return lc_jp_oom(p);
    s->n_tasks = n;
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "tasks[%zu]", i);
        s->tasks[i].compression = s->compression;
        int rv = parse_task(p, json_array_get(tasks, i), path, &s->tasks[i]);
        if (rv != 0)
            return rv;
    }
    return 0;
}

/* A stage's target is "target" or the model's own word: "users" (closed) or
 * "arrival_rate" (open). */
static int parse_stage(lc_jp_t *p, json_t *v, const char *parent, bool open, lc_stage_t *st)
{
    static const char *const fields[] = {"duration", "users", "arrival_rate", "target", NULL};
    const char *alias = open ? "arrival_rate" : "users";
    const char *other = open ? "users" : "arrival_rate";
    int rv;
    if (!json_is_object(v))
        return lc_jp_fail(p, parent, NULL, "expected an object");
    if ((rv = lc_jp_fields(p, v, parent, fields)) != 0 ||
        (rv = get_duration(p, v, parent, "duration", 0, &st->duration_ms)) != 0)
        return rv;
    if (json_object_get(v, other) != NULL)
        return lc_jp_fail(p, parent, other,
                    open ? "not valid in the open model (arrival_rate); use arrival_rate or target"
                         : "requires the open model (top-level arrival_rate); use users or target");
    bool has_alias = json_object_get(v, alias) != NULL;
    bool has_target = json_object_get(v, "target") != NULL;
    if (has_alias && has_target)
        return lc_jp_fail(p, parent, "target", "cannot be combined with %s", alias);
    if (!has_alias && !has_target)
        return lc_jp_fail(p, parent, alias, "required");
    return lc_jp_uint(p, v, parent, has_alias ? alias : "target", 0,
                    open ? STAGE_RATE_MAX : LC_SCENARIO_MAX_USERS, &st->target);
}

static int parse_stages(lc_jp_t *p, json_t *root, lc_scenario_t *s)
{
    char path[32];
    json_t *stages = json_object_get(root, "stages");
    bool open = json_object_get(root, "arrival_rate") != NULL;
    if (stages == NULL)
        return 0;
    if (!json_is_array(stages) || json_array_size(stages) == 0)
        return lc_jp_fail(p, "", "stages", "expected a non-empty array");
    size_t n = json_array_size(stages);
    if (n > LC_SCENARIO_MAX_STAGES)
        return lc_jp_fail(p, "", "stages", "at most %u stages", LC_SCENARIO_MAX_STAGES);
    if ((s->stages = calloc(n, sizeof *s->stages)) == NULL)
        return lc_jp_oom(p);
    s->n_stages = n;
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "stages[%zu]", i);
        int rv = parse_stage(p, json_array_get(stages, i), path, open, &s->stages[i]);
        if (rv != 0)
            return rv;
    }
    return 0;
}

/* Stages set the duration when it is absent; an explicit one must cover them. */
static int resolve_duration(lc_jp_t *p, json_t *root, lc_scenario_t *s)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < s->n_stages; i++)
        sum += s->stages[i].duration_ms;
    if (json_object_get(root, "duration") == NULL) {
        if (s->n_stages == 0)
            return lc_jp_fail(p, "", "duration", "required (or give stages)");
        if (sum < DURATION_MIN_MS || sum > DURATION_MAX_MS)
            return lc_jp_fail(p, "", "stages", "total duration must be between 1s and 7d");
        s->duration_ms = sum;
        return 0;
    }
    int rv = get_duration(p, root, "", "duration", DURATION_MIN_MS, &s->duration_ms);
    if (rv == 0 && s->duration_ms < sum)
        return lc_jp_fail(p, "", "duration", "shorter than the sum of the stage durations (%llu ms)",
                    (unsigned long long)sum);
    return rv;
}

static int parse_think_time(lc_jp_t *p, json_t *root, lc_scenario_t *s)
{
    json_t *v = json_object_get(root, "think_time_ms");
    uint64_t lo, hi;
    int rv;
    if (v == NULL)
        return 0;
    if (json_is_integer(v)) {
        if ((rv = lc_jp_uint_value(p, v, "", "think_time_ms", 0, THINK_MAX_MS, &lo)) != 0)
            return rv;
        s->think_min_ms = s->think_max_ms = (uint32_t)lo;
        return 0;
    }
    if (!json_is_array(v) || json_array_size(v) != 2)
        return lc_jp_fail(p, "", "think_time_ms", "expected an integer or [min, max]");
    if ((rv = lc_jp_uint_value(p, json_array_get(v, 0), "", "think_time_ms[0]", 0, THINK_MAX_MS,
                         &lo)) != 0 ||
        (rv = lc_jp_uint_value(p, json_array_get(v, 1), "", "think_time_ms[1]", 0, THINK_MAX_MS,
                         &hi)) != 0)
        return rv;
    if (lo > hi)
        return lc_jp_fail(p, "", "think_time_ms", "min must not exceed max");
    s->think_min_ms = (uint32_t)lo;
    s->think_max_ms = (uint32_t)hi;
    return 0;
}

/* Closed model (users) or open model (arrival_rate); fields of the other model are errors. */
static int parse_model(lc_jp_t *p, json_t *root, lc_scenario_t *s)
{
    bool open = json_object_get(root, "arrival_rate") != NULL;
    int rv;
    if ((rv = lc_jp_uint(p, root, "", "users", 1, LC_SCENARIO_MAX_USERS, &s->users)) != 0 ||
        (rv = lc_jp_double(p, root, "", "spawn_rate", 0, LC_SCENARIO_MAX_USERS, true,
                         &s->spawn_rate)) != 0 ||
        (rv = lc_jp_double(p, root, "", "arrival_rate", 0, RATE_MAX, true, &s->arrival_rate)) !=
            0 ||
        (rv = lc_jp_uint(p, root, "", "max_users", 1, LC_SCENARIO_MAX_USERS, &s->max_users)) != 0 ||
        (rv = parse_think_time(p, root, s)) != 0)
        return rv;
    if (open && json_object_get(root, "users") != NULL)
        return lc_jp_fail(p, "", "arrival_rate", "cannot be combined with users");
    if (open && json_object_get(root, "spawn_rate") != NULL)
        return lc_jp_fail(p, "", "spawn_rate", "cannot be combined with arrival_rate");
    if (!open && json_object_get(root, "max_users") != NULL)
        return lc_jp_fail(p, "", "max_users", "requires arrival_rate (open model)");
    if (open)
        s->users = 0; /* users belong to the closed model; max_users bounds the open one */
    return 0;
}

/* In the closed model users is the peak: the stages may not exceed it, and it
 * defaults to their peak. */
static int resolve_users(lc_jp_t *p, json_t *root, lc_scenario_t *s)
{
    bool has_users = json_object_get(root, "users") != NULL;
    uint32_t peak = 1;
    if (s->arrival_rate > 0)
        return 0;
    for (size_t i = 0; i < s->n_stages; i++) {
        if (has_users && s->stages[i].target > s->users) {
            char path[32];
            snprintf(path, sizeof path, "stages[%zu]", i);
            return lc_jp_fail(p, path, NULL, "target %u exceeds users (%u)", s->stages[i].target,
                        s->users);
        }
        if (s->stages[i].target > peak)
            peak = s->stages[i].target;
    }
    if (!has_users)
        s->users = peak;
    if (json_object_get(root, "spawn_rate") == NULL)
        s->spawn_rate = s->users;
    return 0;
}

static int parse_identity(lc_jp_t *p, json_t *root, lc_scenario_t *s)
{
    char sub[256];
    int rv;
    if (json_object_get(root, "name") == NULL)
        return lc_jp_fail(p, "", "name", "required");
    if ((rv = lc_jp_text(p, root, "", "name", 1, NAME_MAX_LEN, &s->name)) != 0 ||
        (rv = lc_jp_string(p, root, "", "tenant", 1, TENANT_MAX_LEN, &s->tenant)) != 0)
        return rv;
    if (s->tenant == NULL && (rv = lc_jp_dup(p, "default", &s->tenant)) != 0)
        return rv;
    if (strspn(s->tenant, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
        strlen(s->tenant))
        return lc_jp_fail(p, "", "tenant", "expected letters, digits, '.', '_' or '-'");
    if (json_object_get(root, "target") == NULL)
        return lc_jp_fail(p, "", "target", "required");
    if ((rv = lc_jp_text(p, root, "", "target", 1, URL_MAX_LEN, &s->target)) != 0)
        return rv;
    if (strncasecmp(s->target, "http://", 7) != 0 && strncasecmp(s->target, "https://", 8) != 0)
        return lc_jp_fail(p, "", "target", "expected a URL starting with http:// or https://");
    if (lc_url_parse(s->target, &s->url, sub, sizeof sub) != 0)
        return lc_jp_fail(p, "", "target", "%s", sub);
    return lc_origins_parse(p, root, &s->url, &s->origins);
}

/* CA certificates come inline, checked here, or as the name of a file the
 * operator put in the worker's --tls-ca-dir: a tenant never names a path. */
static int parse_tls(lc_jp_t *p, json_t *root, lc_scenario_t *s)
{
    static const char *const fields[] = {"insecure", "ca_pem", "ca_file", NULL};
    char why[128];
    json_t *tls;
    int rv = lc_jp_object(p, root, "", "tls", &tls);
    if (rv != 0 || tls == NULL)
        return rv;
    if ((rv = lc_jp_fields(p, tls, "tls", fields)) != 0 ||
        (rv = lc_jp_bool(p, tls, "tls", "insecure", &s->tls.insecure)) != 0 ||
        (rv = lc_jp_string(p, tls, "tls", "ca_pem", 1, CA_PEM_MAX_LEN, &s->tls.ca_pem)) != 0 ||
        (rv = lc_jp_text(p, tls, "tls", "ca_file", 1, CA_FILE_MAX_LEN, &s->tls.ca_file)) != 0)
        return rv;
    if (s->tls.ca_pem != NULL && s->tls.ca_file != NULL)
        return lc_jp_fail(p, "tls", "ca_pem", "cannot be combined with ca_file");
    if (s->tls.ca_file != NULL && (s->tls.ca_file[0] == '.' || strchr(s->tls.ca_file, '/')))
        return lc_jp_fail(p, "tls", "ca_file",
                    "expected a file name in the worker's --tls-ca-dir (no '/', no leading '.')");
    if (s->tls.ca_pem == NULL)
        return 0;
    rv = lc_pem_load_certs(s->tls.ca_pem, strlen(s->tls.ca_pem), NULL, why, sizeof why);
    if (rv == LC_ENOMEM)
        return lc_jp_oom(p);
    return rv != 0 ? lc_jp_fail(p, "tls", "ca_pem", "%s", why) : 0;
}

/* The k6-style thresholds (lc_threshold.c); endpoint filters name tasks, so tasks come first. */
static int parse_thresholds(lc_jp_t *p, json_t *root, lc_scenario_t *s)
{
    json_t *th;
    int rv = lc_jp_object(p, root, "", "thresholds", &th);
    if (rv != 0 || th == NULL)
        return rv;
    size_t n = lc_scenario_series_count(s);
    const char **names = calloc(n ? n : 1, sizeof *names);
    if (names == NULL)
        return lc_jp_oom(p);
    for (size_t i = 0; i < n; i++)
        lc_scenario_series_at(s, i, &names[i], NULL);
    rv = lc_thresholds_parse(th, names, n, &s->thresholds, &s->n_thresholds, p->errmsg,
                             p->errlen);
    free(names);
    return rv;
}

static int parse_policy_timeouts(lc_jp_t *p, json_t *root, lc_scenario_t *s)
{
    json_t *v = json_object_get(root, "policy");
    int rv;
    if (v != NULL) {
        const char *text = json_is_string(v) ? json_string_value(v) : "";
        if (strcmp(text, "degrade") == 0)
            s->policy = LC_POLICY_DEGRADE;
        else if (strcmp(text, "queue") == 0)
            s->policy = LC_POLICY_QUEUE;
        else
            return lc_jp_fail(p, "", "policy", "expected one of degrade, queue");
    }
    if ((rv = lc_jp_uint(p, root, "", "connect_timeout_ms", 1, TIMEOUT_MAX_MS,
                       &s->connect_timeout_ms)) != 0 ||
        (rv = lc_jp_uint(p, root, "", "idle_timeout_ms", 1, TIMEOUT_MAX_MS,
                         &s->idle_timeout_ms)) != 0 ||
        (rv = lc_jp_bool(p, root, "", "close_idle_target", &s->close_idle_target)) != 0)
        return rv;
    return lc_jp_uint(p, root, "", "request_timeout_ms", 1, TIMEOUT_MAX_MS, &s->request_timeout_ms);
}

static void set_defaults(lc_scenario_t *s)
{
    memset(s, 0, sizeof *s);
    s->users = 1;
    s->max_users = 1000;
    s->policy = LC_POLICY_DEGRADE;
    s->connect_timeout_ms = 5000;
    s->request_timeout_ms = 30000;
    s->idle_timeout_ms = 30000;
}

static int parse_root(lc_jp_t *p, json_t *root, lc_scenario_t *s)
{
    static const char *const fields[] = {
        "name", "tenant", "target", "duration", "users", "spawn_rate", "think_time_ms",
        "arrival_rate", "max_users", "stages", "tls", "tasks", "thresholds", "policy",
        "connect_timeout_ms", "request_timeout_ms", "journeys", "feeders", "defaults", "script",
        "modules", "script_cpu_ms", "seed", "http2", "compression", "targets", "idle_timeout_ms",
        "close_idle_target", NULL};
    int rv;
    if (!json_is_object(root))
        return lc_jp_fail(p, "scenario", NULL, "expected a JSON object");
    set_defaults(s);
    if ((rv = lc_jp_fields(p, root, "", fields)) != 0 ||
        (rv = parse_identity(p, root, s)) != 0 || (rv = parse_model(p, root, s)) != 0 ||
        (rv = parse_stages(p, root, s)) != 0 || (rv = resolve_duration(p, root, s)) != 0 ||
        (rv = resolve_users(p, root, s)) != 0 || (rv = parse_tls(p, root, s)) != 0 ||
        (rv = lc_codings_parse(p, root, "", "compression", &s->compression)) != 0 ||
        (rv = parse_tasks(p, root, s)) != 0 || (rv = lc_scenario_parse_script(p, root, s)) != 0 ||
        (rv = parse_thresholds(p, root, s)) != 0 ||
        (rv = lc_scenario_parse_http2(p, root, s)) != 0)
        return rv;
    return parse_policy_timeouts(p, root, s);
}

int lc_scenario_parse(const char *json, size_t len, lc_scenario_t *out, char *errmsg,
                      size_t errlen)
{
    lc_jp_t p = {errmsg, errlen};
    json_error_t jerr;
    memset(out, 0, sizeof *out);
    if (len > LC_SCENARIO_MAX_BYTES)
        return lc_jp_fail(&p, "scenario", NULL, "larger than %u bytes", LC_SCENARIO_MAX_BYTES);
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL)
        return lc_jp_fail(&p, "scenario", NULL, "invalid JSON at line %d column %d: %s", jerr.line,
                    jerr.column, jerr.text);
    int rv = parse_root(&p, root, out);
    json_decref(root);
    if (rv != 0)
        lc_scenario_free(out);
    return rv;
}

void lc_task_free(lc_task_t *t)
{
    free(t->name);
    free(t->method);
    free(t->path);
    for (size_t i = 0; i < t->n_headers; i++) {
        free(t->headers[i].name);
        free(t->headers[i].value);
    }
    free(t->headers);
    free(t->body);
    free(t->expect_status);
    free(t->expect_body_contains);
}

void lc_scenario_free(lc_scenario_t *s)
{
    if (s == NULL)
        return;
    free(s->name);
    free(s->tenant);
    free(s->target);
    lc_origins_free(&s->origins);
    free(s->stages);
    free(s->tls.ca_file);
    free(s->tls.ca_pem);
    for (size_t i = 0; i < s->n_tasks; i++)
        lc_task_free(&s->tasks[i]);
    free(s->tasks);
    lc_program_free(s->program);
    lc_scenario_free_script(s);
    lc_thresholds_free(s->thresholds, s->n_thresholds);
    memset(s, 0, sizeof *s);
}

size_t lc_scenario_series_count(const lc_scenario_t *s)
{
    return s->program ? s->program->n_endpoints + s->program->n_timers : s->n_tasks;
}

void lc_scenario_series_at(const lc_scenario_t *s, size_t i, const char **name,
                           const char **method)
{
    const char *n, *m;
    assert(i < lc_scenario_series_count(s));
    if (s->program == NULL) {
        n = s->tasks[i].name;
        m = s->tasks[i].method;
    } else if (i < s->program->n_endpoints) {
        n = s->program->endpoints[i].name;
        m = s->program->endpoints[i].method;
    } else {
        const lc_timer_t *t = &s->program->timers[i - s->program->n_endpoints];
        n = t->series;
        m = t->kind == LC_TIMER_ITERATION ? LC_SERIES_ITERATION : LC_SERIES_GROUP;
    }
    *name = n;
    if (method != NULL)
        *method = m;
}

int lc_scenario_series_find(const lc_scenario_t *s, const char *name, const char **method)
{
    size_t n = lc_scenario_series_count(s);
    for (size_t i = 0; i < n; i++) {
        const char *sn;
        lc_scenario_series_at(s, i, &sn, method);
        if (strcmp(sn, name) == 0)
            return (int)i;
    }
    return -1;
}

/* Units must come largest first and at most once each: "1h30m", "1m30s", "2s500ms". */
int lc_duration_parse(const char *text, uint64_t *out_ms)
{
    static const struct {
        const char *suffix;
        uint64_t ms;
    } units[] = {{"d", 86400000ull}, {"h", 3600000ull}, {"ms", 1ull}, {"m", 60000ull},
                 {"s", 1000ull}};
    static const int rank[] = {0, 1, 4, 2, 3}; /* order of size: d h m s ms */
    uint64_t total = 0;
    int last_rank = -1;
    const char *s = text;
    if (s == NULL || *s == '\0')
        return LC_EINVAL;
    while (*s != '\0') {
        uint64_t v = 0;
        if (*s < '0' || *s > '9')
            return LC_EINVAL;
        for (; *s >= '0' && *s <= '9'; s++) {
            if (v > (UINT64_MAX - 9) / 10)
                return LC_EINVAL;
            v = v * 10 + (uint64_t)(*s - '0');
        }
        size_t u = 0;
        if (*s == '\0' && last_rank < 0)
            u = 4; /* a bare number is seconds */
        else
            while (u < 5 && strncmp(s, units[u].suffix, strlen(units[u].suffix)) != 0)
                u++;
        if (u == 5 || rank[u] <= last_rank || v > (UINT64_MAX - total) / units[u].ms)
            return LC_EINVAL;
        if (*s != '\0')
            s += strlen(units[u].suffix);
        last_rank = rank[u];
        total += v * units[u].ms;
    }
    *out_ms = total;
    return 0;
}

bool lc_series_is_timer(const char *method)
{
    return method != NULL &&
           (strcmp(method, LC_SERIES_ITERATION) == 0 || strcmp(method, LC_SERIES_GROUP) == 0);
}
