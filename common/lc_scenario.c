/* lc_scenario.c — parses scenario JSON (v1) with jansson into a validated lc_scenario_t. */
#include "lc_scenario.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "lc_err.h"
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

/* Carries the caller's error buffer through the recursive descent. */
typedef struct parser_s {
    char *errmsg;
    size_t errlen;
} parser_t;

static const char *const methods[] = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD",
                                      "OPTIONS", NULL};

/* Writes "<parent>.<key>: <what>" (or "<parent>: …" when key is NULL) and returns LC_EINVAL. */
__attribute__((format(printf, 4, 5))) static int fail(parser_t *p, const char *parent,
                                                      const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    lc_verrf(p->errmsg, p->errlen, LC_EINVAL, fmt, ap);
    va_end(ap);
    if (key == NULL)
        return lc_err_wrap(p->errmsg, p->errlen, LC_EINVAL, "%s", parent);
    if (parent[0] == '\0')
        return lc_err_wrap(p->errmsg, p->errlen, LC_EINVAL, "%s", key);
    return lc_err_wrap(p->errmsg, p->errlen, LC_EINVAL, "%s.%s", parent, key);
}

static int out_of_memory(parser_t *p)
{
    return lc_errf(p->errmsg, p->errlen, LC_ENOMEM, "scenario: out of memory");
}

static int dup_string(parser_t *p, const char *text, char **out)
{
    *out = strdup(text);
    return *out == NULL ? out_of_memory(p) : 0;
}

/* Rejects any member of obj whose name is not in allowed (NULL-terminated). */
static int check_fields(parser_t *p, json_t *obj, const char *parent,
                        const char *const *allowed)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        size_t i = 0;
        while (allowed[i] != NULL && strcmp(allowed[i], key) != 0)
            i++;
        if (allowed[i] == NULL)
            return fail(p, parent, key, "unknown field");
    }
    return 0;
}

static int get_string(parser_t *p, json_t *obj, const char *parent, const char *key,
                      size_t min_len, size_t max_len, char **out)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL)
        return 0;
    if (!json_is_string(v))
        return fail(p, parent, key, "expected a string");
    size_t len = json_string_length(v);
    if (len < min_len || len > max_len)
        return fail(p, parent, key, "must be %zu to %zu characters long", min_len, max_len);
    return dup_string(p, json_string_value(v), out);
}

/* Refuses a control byte (0x00-0x1f, 0x7f) in text[0..len): in a request line
 * or a header, CR or LF would end the line and start one of the sender's
 * choosing; in a name, a log line or a report row. */
static int check_controls(parser_t *p, const char *parent, const char *key, const char *what,
                          const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c < 0x20 || c == 0x7f)
            return fail(p, parent, key, "%scontrol character 0x%02x at offset %zu", what, c, i);
    }
    return 0;
}

/* get_string for text without control bytes. */
static int get_text(parser_t *p, json_t *obj, const char *parent, const char *key,
                    size_t min_len, size_t max_len, char **out)
{
    json_t *v = json_object_get(obj, key);
    int rv = get_string(p, obj, parent, key, min_len, max_len, out);
    if (rv != 0 || v == NULL)
        return rv;
    return check_controls(p, parent, key, "", json_string_value(v), json_string_length(v));
}

static int uint_value(parser_t *p, json_t *v, const char *parent, const char *key,
                      uint64_t min, uint64_t max, uint64_t *out)
{
    if (!json_is_integer(v))
        return fail(p, parent, key, "expected an integer");
    json_int_t i = json_integer_value(v);
    if (i < 0 || (uint64_t)i < min || (uint64_t)i > max)
        return fail(p, parent, key, "must be between %llu and %llu", (unsigned long long)min,
                    (unsigned long long)max);
    *out = (uint64_t)i;
    return 0;
}

/* Leaves *out untouched (the default) when the field is absent. */
static int get_uint(parser_t *p, json_t *obj, const char *parent, const char *key,
                    uint32_t min, uint32_t max, uint32_t *out)
{
    json_t *v = json_object_get(obj, key);
    uint64_t u = 0;
    if (v == NULL)
        return 0;
    int rv = uint_value(p, v, parent, key, min, max, &u);
    if (rv == 0)
        *out = (uint32_t)u;
    return rv;
}

/* A number in [min, max], or in (min, max] when min_exclusive. */
static int get_double(parser_t *p, json_t *obj, const char *parent, const char *key,
                      double min, double max, bool min_exclusive, double *out)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL)
        return 0;
    if (!json_is_number(v))
        return fail(p, parent, key, "expected a number");
    double d = json_number_value(v);
    if (min_exclusive && (d <= min || d > max))
        return fail(p, parent, key, "must be greater than %g and at most %g", min, max);
    if (!min_exclusive && (d < min || d > max))
        return fail(p, parent, key, "must be between %g and %g", min, max);
    *out = d;
    return 0;
}

static int get_bool(parser_t *p, json_t *obj, const char *parent, const char *key, bool *out)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL)
        return 0;
    if (!json_is_boolean(v))
        return fail(p, parent, key, "expected true or false");
    *out = json_is_true(v);
    return 0;
}

/* An absent field is fine; a present one must be an object. */
static int get_object(parser_t *p, json_t *obj, const char *parent, const char *key,
                      json_t **out)
{
    *out = json_object_get(obj, key);
    if (*out != NULL && !json_is_object(*out))
        return fail(p, parent, key, "expected an object");
    return 0;
}

static int get_duration(parser_t *p, json_t *obj, const char *parent, const char *key,
                        uint64_t min_ms, uint64_t *out)
{
    json_t *v = json_object_get(obj, key);
    uint64_t ms = 0;
    if (v == NULL)
        return fail(p, parent, key, "required");
    if (json_is_integer(v)) {
        json_int_t secs = json_integer_value(v);
        if (secs < 0 || (uint64_t)secs > DURATION_MAX_MS / 1000)
            return fail(p, parent, key, "must be between %llus and 7d",
                        (unsigned long long)(min_ms / 1000));
        ms = (uint64_t)secs * 1000;
    } else if (!json_is_string(v) || lc_duration_parse(json_string_value(v), &ms) != 0) {
        return fail(p, parent, key,
                    "expected seconds or a duration string like \"500ms\", \"5m\", \"1m30s\"");
    }
    if (ms < min_ms || ms > DURATION_MAX_MS)
        return fail(p, parent, key, "must be between %llus and 7d",
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
static int check_templates(parser_t *p, const char *parent, const char *key, const char *text)
{
    const char *s = text;
    while ((s = strstr(s, "${")) != NULL) {
        const char *close = strchr(s + 2, '}');
        if (close == NULL)
            return fail(p, parent, key, "unterminated template %.*s", TEMPLATE_SHOW_MAX, s);
        size_t len = (size_t)(close - (s + 2));
        int show = len > TEMPLATE_SHOW_MAX ? TEMPLATE_SHOW_MAX : (int)len;
        int rv = check_template(s + 2, len);
        if (rv == LC_ENOTFOUND)
            return fail(p, parent, key, "unknown template ${%.*s}", show, s + 2);
        if (rv != 0)
            return fail(p, parent, key,
                        "bad template ${%.*s}: expected ${rand(a,b)} with integers a <= b", show,
                        s + 2);
        s = close + 1;
    }
    return 0;
}

static int parse_method(parser_t *p, json_t *obj, const char *parent, lc_task_t *t)
{
    int rv = get_text(p, obj, parent, "method", 1, 16, &t->method);
    if (rv != 0)
        return rv;
    if (t->method == NULL)
        return dup_string(p, "GET", &t->method);
    for (size_t i = 0; methods[i] != NULL; i++)
        if (strcmp(methods[i], t->method) == 0)
            return 0;
    return fail(p, parent, "method", "expected one of GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS");
}

static int parse_path(parser_t *p, json_t *obj, const char *parent, lc_task_t *t)
{
    if (json_object_get(obj, "path") == NULL)
        return fail(p, parent, "path", "required");
    int rv = get_text(p, obj, parent, "path", 1, PATH_MAX_LEN, &t->path);
    if (rv != 0)
        return rv;
    if (t->path[0] != '/')
        return fail(p, parent, "path", "must start with '/'");
    /* A space would end the request target early. */
    const char *space = strchr(t->path, ' ');
    if (space != NULL)
        return fail(p, parent, "path", "must not contain spaces (offset %zu)",
                    (size_t)(space - t->path));
    return check_templates(p, parent, "path", t->path);
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

static int parse_header(parser_t *p, const char *parent, const char *name, json_t *v,
                        lc_header_t *h)
{
    /* Checked before the name goes into an error's JSON path. */
    int rv = check_controls(p, parent, NULL, "header name: ", name, strlen(name));
    if (rv != 0)
        return rv;
    if (!is_token(name) || strlen(name) > HEADER_NAME_MAX_LEN)
        return fail(p, parent, NULL, "invalid header name '%.64s' (expected an HTTP token)",
                    name);
    const char *why = reserved_header(name);
    if (why != NULL)
        return fail(p, parent, name, "%s", why);
    if (!json_is_string(v))
        return fail(p, parent, name, "expected a string");
    const char *value = json_string_value(v);
    if (json_string_length(v) > HEADER_VALUE_MAX_LEN)
        return fail(p, parent, name, "must be at most %u characters long", HEADER_VALUE_MAX_LEN);
    if ((rv = check_controls(p, parent, name, "", value, json_string_length(v))) != 0)
        return rv;
    if (dup_string(p, name, &h->name) != 0 || dup_string(p, value, &h->value) != 0)
        return LC_ENOMEM;
    return 0;
}

static int parse_headers(parser_t *p, json_t *obj, const char *parent, lc_task_t *t)
{
    char path[48];
    json_t *headers, *v;
    const char *name;
    int rv = get_object(p, obj, parent, "headers", &headers);
    if (rv != 0 || headers == NULL)
        return rv;
    snprintf(path, sizeof path, "%s.headers", parent);
    size_t n = json_object_size(headers);
    if (n > LC_SCENARIO_MAX_HEADERS)
        return fail(p, path, NULL, "at most %u headers", LC_SCENARIO_MAX_HEADERS);
    if (n == 0)
        return 0;
    t->headers = calloc(n, sizeof *t->headers);
    if (t->headers == NULL)
        return out_of_memory(p);
    json_object_foreach(headers, name, v) {
        rv = parse_header(p, path, name, v, &t->headers[t->n_headers++]);
        if (rv != 0)
            return rv;
    }
    return 0;
}

static int parse_expect(parser_t *p, json_t *obj, const char *parent, lc_task_t *t)
{
    static const char *const fields[] = {"status", "body_contains", NULL};
    char path[48], elem[32];
    json_t *expect, *status;
    int rv = get_object(p, obj, parent, "expect", &expect);
    if (rv != 0 || expect == NULL)
        return rv;
    snprintf(path, sizeof path, "%s.expect", parent);
    if ((rv = check_fields(p, expect, path, fields)) != 0 ||
        (rv = get_string(p, expect, path, "body_contains", 1, PATH_MAX_LEN,
                         &t->expect_body_contains)) != 0)
        return rv;
    status = json_object_get(expect, "status");
    if (status == NULL)
        return 0;
    if (!json_is_array(status) || json_array_size(status) > EXPECT_STATUS_MAX)
        return fail(p, path, "status", "expected an array of at most %u status codes",
                    EXPECT_STATUS_MAX);
    size_t n = json_array_size(status);
    if (n == 0)
        return 0;
    if ((t->expect_status = calloc(n, sizeof *t->expect_status)) == NULL)
        return out_of_memory(p);
    for (size_t i = 0; i < n; i++) {
        uint64_t code;
        snprintf(elem, sizeof elem, "status[%zu]", i);
        if ((rv = uint_value(p, json_array_get(status, i), path, elem, 100, 599, &code)) != 0)
            return rv;
        t->expect_status[t->n_expect_status++] = (int)code;
    }
    return 0;
}

static int default_task_name(parser_t *p, lc_task_t *t)
{
    size_t len = strlen(t->method) + 1 + strlen(t->path) + 1;
    if ((t->name = malloc(len)) == NULL)
        return out_of_memory(p);
    snprintf(t->name, len, "%s %s", t->method, t->path);
    return 0;
}

static int parse_task(parser_t *p, json_t *v, const char *parent, lc_task_t *t)
{
    static const char *const fields[] = {"name", "weight", "method", "path", "headers",
                                         "body", "expect", NULL};
    int rv;
    if (!json_is_object(v))
        return fail(p, parent, NULL, "expected an object");
    t->weight = 1;
    if ((rv = check_fields(p, v, parent, fields)) != 0 ||
        (rv = get_text(p, v, parent, "name", 1, NAME_MAX_LEN, &t->name)) != 0 ||
        (rv = get_uint(p, v, parent, "weight", 1, WEIGHT_MAX, &t->weight)) != 0 ||
        (rv = parse_method(p, v, parent, t)) != 0 || (rv = parse_path(p, v, parent, t)) != 0 ||
        (rv = parse_headers(p, v, parent, t)) != 0 ||
        (rv = get_string(p, v, parent, "body", 0, LC_SCENARIO_MAX_BYTES, &t->body)) != 0 ||
        (rv = parse_expect(p, v, parent, t)) != 0)
        return rv;
    if (t->body != NULL && (rv = check_templates(p, parent, "body", t->body)) != 0)
        return rv;
    return t->name == NULL ? default_task_name(p, t) : 0;
}

static int parse_tasks(parser_t *p, json_t *root, lc_scenario_t *s)
{
    char path[32];
    json_t *tasks = json_object_get(root, "tasks");
    if (tasks == NULL)
        return fail(p, "", "tasks", "required");
    if (!json_is_array(tasks) || json_array_size(tasks) == 0)
        return fail(p, "", "tasks", "expected a non-empty array");
    size_t n = json_array_size(tasks);
    if (n > LC_SCENARIO_MAX_TASKS)
        return fail(p, "", "tasks", "at most %u tasks", LC_SCENARIO_MAX_TASKS);
    if ((s->tasks = calloc(n, sizeof *s->tasks)) == NULL)
        return out_of_memory(p);
    s->n_tasks = n;
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "tasks[%zu]", i);
        int rv = parse_task(p, json_array_get(tasks, i), path, &s->tasks[i]);
        if (rv != 0)
            return rv;
    }
    return 0;
}

/* A stage's target is "target" or the model's own word: "users" (closed) or
 * "arrival_rate" (open). */
static int parse_stage(parser_t *p, json_t *v, const char *parent, bool open, lc_stage_t *st)
{
    static const char *const fields[] = {"duration", "users", "arrival_rate", "target", NULL};
    const char *alias = open ? "arrival_rate" : "users";
    const char *other = open ? "users" : "arrival_rate";
    int rv;
    if (!json_is_object(v))
        return fail(p, parent, NULL, "expected an object");
    if ((rv = check_fields(p, v, parent, fields)) != 0 ||
        (rv = get_duration(p, v, parent, "duration", 0, &st->duration_ms)) != 0)
        return rv;
    if (json_object_get(v, other) != NULL)
        return fail(p, parent, other,
                    open ? "not valid in the open model (arrival_rate); use arrival_rate or target"
                         : "requires the open model (top-level arrival_rate); use users or target");
    bool has_alias = json_object_get(v, alias) != NULL;
    bool has_target = json_object_get(v, "target") != NULL;
    if (has_alias && has_target)
        return fail(p, parent, "target", "cannot be combined with %s", alias);
    if (!has_alias && !has_target)
        return fail(p, parent, alias, "required");
    return get_uint(p, v, parent, has_alias ? alias : "target", 0,
                    open ? STAGE_RATE_MAX : LC_SCENARIO_MAX_USERS, &st->target);
}

static int parse_stages(parser_t *p, json_t *root, lc_scenario_t *s)
{
    char path[32];
    json_t *stages = json_object_get(root, "stages");
    bool open = json_object_get(root, "arrival_rate") != NULL;
    if (stages == NULL)
        return 0;
    if (!json_is_array(stages) || json_array_size(stages) == 0)
        return fail(p, "", "stages", "expected a non-empty array");
    size_t n = json_array_size(stages);
    if (n > LC_SCENARIO_MAX_STAGES)
        return fail(p, "", "stages", "at most %u stages", LC_SCENARIO_MAX_STAGES);
    if ((s->stages = calloc(n, sizeof *s->stages)) == NULL)
        return out_of_memory(p);
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
static int resolve_duration(parser_t *p, json_t *root, lc_scenario_t *s)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < s->n_stages; i++)
        sum += s->stages[i].duration_ms;
    if (json_object_get(root, "duration") == NULL) {
        if (s->n_stages == 0)
            return fail(p, "", "duration", "required (or give stages)");
        if (sum < DURATION_MIN_MS || sum > DURATION_MAX_MS)
            return fail(p, "", "stages", "total duration must be between 1s and 7d");
        s->duration_ms = sum;
        return 0;
    }
    int rv = get_duration(p, root, "", "duration", DURATION_MIN_MS, &s->duration_ms);
    if (rv == 0 && s->duration_ms < sum)
        return fail(p, "", "duration", "shorter than the sum of the stage durations (%llu ms)",
                    (unsigned long long)sum);
    return rv;
}

static int parse_think_time(parser_t *p, json_t *root, lc_scenario_t *s)
{
    json_t *v = json_object_get(root, "think_time_ms");
    uint64_t lo, hi;
    int rv;
    if (v == NULL)
        return 0;
    if (json_is_integer(v)) {
        if ((rv = uint_value(p, v, "", "think_time_ms", 0, THINK_MAX_MS, &lo)) != 0)
            return rv;
        s->think_min_ms = s->think_max_ms = (uint32_t)lo;
        return 0;
    }
    if (!json_is_array(v) || json_array_size(v) != 2)
        return fail(p, "", "think_time_ms", "expected an integer or [min, max]");
    if ((rv = uint_value(p, json_array_get(v, 0), "", "think_time_ms[0]", 0, THINK_MAX_MS,
                         &lo)) != 0 ||
        (rv = uint_value(p, json_array_get(v, 1), "", "think_time_ms[1]", 0, THINK_MAX_MS,
                         &hi)) != 0)
        return rv;
    if (lo > hi)
        return fail(p, "", "think_time_ms", "min must not exceed max");
    s->think_min_ms = (uint32_t)lo;
    s->think_max_ms = (uint32_t)hi;
    return 0;
}

/* Closed model (users) or open model (arrival_rate); fields of the other model are errors. */
static int parse_model(parser_t *p, json_t *root, lc_scenario_t *s)
{
    bool open = json_object_get(root, "arrival_rate") != NULL;
    int rv;
    if ((rv = get_uint(p, root, "", "users", 1, LC_SCENARIO_MAX_USERS, &s->users)) != 0 ||
        (rv = get_double(p, root, "", "spawn_rate", 0, LC_SCENARIO_MAX_USERS, true,
                         &s->spawn_rate)) != 0 ||
        (rv = get_double(p, root, "", "arrival_rate", 0, RATE_MAX, true, &s->arrival_rate)) !=
            0 ||
        (rv = get_uint(p, root, "", "max_users", 1, LC_SCENARIO_MAX_USERS, &s->max_users)) != 0 ||
        (rv = parse_think_time(p, root, s)) != 0)
        return rv;
    if (open && json_object_get(root, "users") != NULL)
        return fail(p, "", "arrival_rate", "cannot be combined with users");
    if (open && json_object_get(root, "spawn_rate") != NULL)
        return fail(p, "", "spawn_rate", "cannot be combined with arrival_rate");
    if (!open && json_object_get(root, "max_users") != NULL)
        return fail(p, "", "max_users", "requires arrival_rate (open model)");
    if (open)
        s->users = 0; /* users belong to the closed model; max_users bounds the open one */
    return 0;
}

/* In the closed model users is the peak: the stages may not exceed it, and it
 * defaults to their peak. */
static int resolve_users(parser_t *p, json_t *root, lc_scenario_t *s)
{
    bool has_users = json_object_get(root, "users") != NULL;
    uint32_t peak = 1;
    if (s->arrival_rate > 0)
        return 0;
    for (size_t i = 0; i < s->n_stages; i++) {
        if (has_users && s->stages[i].target > s->users) {
            char path[32];
            snprintf(path, sizeof path, "stages[%zu]", i);
            return fail(p, path, NULL, "target %u exceeds users (%u)", s->stages[i].target,
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

static int parse_identity(parser_t *p, json_t *root, lc_scenario_t *s)
{
    char sub[256];
    int rv;
    if (json_object_get(root, "name") == NULL)
        return fail(p, "", "name", "required");
    if ((rv = get_text(p, root, "", "name", 1, NAME_MAX_LEN, &s->name)) != 0 ||
        (rv = get_string(p, root, "", "tenant", 1, TENANT_MAX_LEN, &s->tenant)) != 0)
        return rv;
    if (s->tenant == NULL && (rv = dup_string(p, "default", &s->tenant)) != 0)
        return rv;
    if (strspn(s->tenant, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
        strlen(s->tenant))
        return fail(p, "", "tenant", "expected letters, digits, '.', '_' or '-'");
    if (json_object_get(root, "target") == NULL)
        return fail(p, "", "target", "required");
    if ((rv = get_text(p, root, "", "target", 1, URL_MAX_LEN, &s->target)) != 0)
        return rv;
    if (strncasecmp(s->target, "http://", 7) != 0 && strncasecmp(s->target, "https://", 8) != 0)
        return fail(p, "", "target", "expected a URL starting with http:// or https://");
    if (lc_url_parse(s->target, &s->url, sub, sizeof sub) != 0)
        return fail(p, "", "target", "%s", sub);
    return 0;
}

/* CA certificates come inline, checked here, or as the name of a file the
 * operator put in the worker's --tls-ca-dir: a tenant never names a path. */
static int parse_tls(parser_t *p, json_t *root, lc_scenario_t *s)
{
    static const char *const fields[] = {"insecure", "ca_pem", "ca_file", NULL};
    char why[128];
    json_t *tls;
    int rv = get_object(p, root, "", "tls", &tls);
    if (rv != 0 || tls == NULL)
        return rv;
    if ((rv = check_fields(p, tls, "tls", fields)) != 0 ||
        (rv = get_bool(p, tls, "tls", "insecure", &s->tls.insecure)) != 0 ||
        (rv = get_string(p, tls, "tls", "ca_pem", 1, CA_PEM_MAX_LEN, &s->tls.ca_pem)) != 0 ||
        (rv = get_text(p, tls, "tls", "ca_file", 1, CA_FILE_MAX_LEN, &s->tls.ca_file)) != 0)
        return rv;
    if (s->tls.ca_pem != NULL && s->tls.ca_file != NULL)
        return fail(p, "tls", "ca_pem", "cannot be combined with ca_file");
    if (s->tls.ca_file != NULL && (s->tls.ca_file[0] == '.' || strchr(s->tls.ca_file, '/')))
        return fail(p, "tls", "ca_file",
                    "expected a file name in the worker's --tls-ca-dir (no '/', no leading '.')");
    if (s->tls.ca_pem == NULL)
        return 0;
    rv = lc_pem_load_certs(s->tls.ca_pem, strlen(s->tls.ca_pem), NULL, why, sizeof why);
    if (rv == LC_ENOMEM)
        return out_of_memory(p);
    return rv != 0 ? fail(p, "tls", "ca_pem", "%s", why) : 0;
}

/* The k6-style thresholds (lc_threshold.c); endpoint filters name tasks, so tasks come first. */
static int parse_thresholds(parser_t *p, json_t *root, lc_scenario_t *s)
{
    json_t *th;
    int rv = get_object(p, root, "", "thresholds", &th);
    if (rv != 0 || th == NULL)
        return rv;
    const char **names = calloc(s->n_tasks ? s->n_tasks : 1, sizeof *names);
    if (names == NULL)
        return out_of_memory(p);
    for (size_t i = 0; i < s->n_tasks; i++)
        names[i] = s->tasks[i].name;
    rv = lc_thresholds_parse(th, names, s->n_tasks, &s->thresholds, &s->n_thresholds, p->errmsg,
                             p->errlen);
    free(names);
    return rv;
}

static int parse_policy_timeouts(parser_t *p, json_t *root, lc_scenario_t *s)
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
            return fail(p, "", "policy", "expected one of degrade, queue");
    }
    if ((rv = get_uint(p, root, "", "connect_timeout_ms", 1, TIMEOUT_MAX_MS,
                       &s->connect_timeout_ms)) != 0)
        return rv;
    return get_uint(p, root, "", "request_timeout_ms", 1, TIMEOUT_MAX_MS, &s->request_timeout_ms);
}

static void set_defaults(lc_scenario_t *s)
{
    memset(s, 0, sizeof *s);
    s->users = 1;
    s->max_users = 1000;
    s->policy = LC_POLICY_DEGRADE;
    s->connect_timeout_ms = 5000;
    s->request_timeout_ms = 30000;
}

static int parse_root(parser_t *p, json_t *root, lc_scenario_t *s)
{
    static const char *const fields[] = {
        "name", "tenant", "target", "duration", "users", "spawn_rate", "think_time_ms",
        "arrival_rate", "max_users", "stages", "tls", "tasks", "thresholds", "policy",
        "connect_timeout_ms", "request_timeout_ms", NULL};
    int rv;
    if (!json_is_object(root))
        return fail(p, "scenario", NULL, "expected a JSON object");
    set_defaults(s);
    if ((rv = check_fields(p, root, "", fields)) != 0 ||
        (rv = parse_identity(p, root, s)) != 0 || (rv = parse_model(p, root, s)) != 0 ||
        (rv = parse_stages(p, root, s)) != 0 || (rv = resolve_duration(p, root, s)) != 0 ||
        (rv = resolve_users(p, root, s)) != 0 || (rv = parse_tls(p, root, s)) != 0 ||
        (rv = parse_tasks(p, root, s)) != 0 || (rv = parse_thresholds(p, root, s)) != 0)
        return rv;
    return parse_policy_timeouts(p, root, s);
}

int lc_scenario_parse(const char *json, size_t len, lc_scenario_t *out, char *errmsg,
                      size_t errlen)
{
    parser_t p = {errmsg, errlen};
    json_error_t jerr;
    memset(out, 0, sizeof *out);
    if (len > LC_SCENARIO_MAX_BYTES)
        return fail(&p, "scenario", NULL, "larger than %u bytes", LC_SCENARIO_MAX_BYTES);
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL)
        return fail(&p, "scenario", NULL, "invalid JSON at line %d column %d: %s", jerr.line,
                    jerr.column, jerr.text);
    int rv = parse_root(&p, root, out);
    json_decref(root);
    if (rv != 0)
        lc_scenario_free(out);
    return rv;
}

static void free_task(lc_task_t *t)
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
    free(s->stages);
    free(s->tls.ca_file);
    free(s->tls.ca_pem);
    for (size_t i = 0; i < s->n_tasks; i++)
        free_task(&s->tasks[i]);
    free(s->tasks);
    lc_thresholds_free(s->thresholds, s->n_thresholds);
    memset(s, 0, sizeof *s);
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
