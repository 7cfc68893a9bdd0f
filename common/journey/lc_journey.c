/* lc_journey.c — the journey compiler's entry: feeders, defaults, journeys, tasks as
 * single-step journeys, endpoints and timers; then the dataflow check. */
#include "lc_journey.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_cond.h"
#include "lc_err.h"
#include "lc_journey_internal.h"
#include "lc_rng.h"
#include "lc_text.h"

#define WEIGHT_MAX 1000000u
#define PACING_MAX_MS 3600000u
#define TIMEOUT_MAX_MS 3600000u
#define NAME_MAX_LEN 128u

void jc_path(char *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, JPATH_MAX, fmt, ap);
    va_end(ap);
}

int jc_grow(jc_t *c, void **arr, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 8;
    void *p = realloc(*arr, ncap * size);
    if (p == NULL)
        return lc_jp_oom(&c->jp);
    memset((char *)p + *cap * size, 0, (ncap - *cap) * size);
    *arr = p;
    *cap = ncap;
    return 0;
}

int jc_emit(jc_t *c, uint8_t code, uint32_t a, uint32_t b, const char *path, uint32_t *at)
{
    lc_program_t *p = c->prog;
    if (p->n_ops >= LC_JOURNEY_OPS_MAX)
        return lc_jp_fail(&c->jp, path, NULL, "the journeys compile to more than %u steps",
                          LC_JOURNEY_OPS_MAX);
    int rv = jc_grow(c, (void **)&p->ops, &c->cap_ops, p->n_ops, sizeof *p->ops);
    if (rv == 0)
        rv = jc_grow(c, (void **)&c->op_paths, &c->cap_op_paths, p->n_ops, sizeof *c->op_paths);
    if (rv != 0)
        return rv;
    if ((c->op_paths[p->n_ops] = strdup(path)) == NULL)
        return lc_jp_oom(&c->jp);
    p->ops[p->n_ops] = (lc_op_t){.code = code, .a = a, .b = b, .target = UINT32_MAX};
    if (at != NULL)
        *at = (uint32_t)p->n_ops;
    p->n_ops++;
    return 0;
}

/* The slot of variable name (created on first mention; the dataflow check finds those no
 * step sets). */
int jc_var(jc_t *c, const char *name, const char *path, uint32_t *slot)
{
    lc_program_t *p = c->prog;
    for (size_t i = 0; i < p->n_vars; i++)
        if (strcmp(p->vars[i], name) == 0) {
            *slot = (uint32_t)i;
            return 0;
        }
    if (p->n_vars >= LC_JOURNEY_VARS_MAX)
        return lc_jp_fail(&c->jp, path, NULL, "more than %u variables", LC_JOURNEY_VARS_MAX);
    int rv = jc_grow(c, (void **)&p->vars, &c->cap_vars, p->n_vars, sizeof *p->vars);
    if (rv != 0)
        return rv;
    if ((p->vars[p->n_vars] = strdup(name)) == NULL)
        return lc_jp_oom(&c->jp);
    *slot = (uint32_t)p->n_vars++;
    return 0;
}

static bool is_name(const char *s, size_t len)
{
    if (len == 0 || len > 64 || !(s[0] == '_' || ((s[0] | 0x20) >= 'a' && (s[0] | 0x20) <= 'z')))
        return false;
    for (size_t i = 1; i < len; i++) {
        char ch = s[i];
        if (!(ch == '_' || (ch >= '0' && ch <= '9') || ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'z')))
            return false;
    }
    return true;
}

/* Templates' names: "feeder.column" (feeders are all known by now) or a variable (created
 * on first mention). */
static int resolve_name(void *ctx, const char *name, size_t len)
{
    jc_t *c = ctx;
    const lc_program_t *p = c->prog;
    const char *dot = memchr(name, '.', len);
    if (dot == NULL) {
        char buf[65];
        uint32_t slot;
        if (!is_name(name, len))
            return -1;
        memcpy(buf, name, len);
        buf[len] = '\0';
        return jc_var(c, buf, "", &slot) == 0 ? (int)slot : -1;
    }
    size_t flen = (size_t)(dot - name);
    uint32_t column = 0;
    for (size_t f = 0; f < p->n_feeders; f++) {
        const lc_feeder_t *fd = &p->feeders[f];
        if (strlen(fd->name) == flen && memcmp(fd->name, name, flen) == 0) {
            int col = lc_table_col(&fd->table, dot + 1, len - flen - 1);
            return col < 0 ? -1 : (int)(LC_JOURNEY_FEEDER_SLOT0 + column + (uint32_t)col);
        }
        column += (uint32_t)fd->table.n_cols;
    }
    return -1;
}

int jc_tpl(jc_t *c, const char *parent, const char *key, const char *src, size_t len,
           int mode, lc_tpl_t **out)
{
    char sub[200];
    int rv = lc_tpl_compile(out, src, len, mode, &c->names, sub, sizeof sub);
    if (rv == LC_ENOMEM)
        return lc_jp_oom(&c->jp);
    return rv != 0 ? lc_jp_fail(&c->jp, parent, key, "%s", sub) : 0; /* EINVAL, ETOOBIG */
}

static int parse_enum(jc_t *c, json_t *obj, const char *parent, const char *key,
                      const char *const *words, uint8_t *out)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL)
        return 0;
    for (uint8_t i = 0; json_is_string(v) && words[i] != NULL; i++)
        if (strcmp(words[i], json_string_value(v)) == 0) {
            *out = i;
            return 0;
        }
    char list[160] = "";
    for (size_t i = 0; words[i] != NULL; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", words[i]);
    return lc_jp_fail(&c->jp, parent, key, "expected one of %s", list);
}

int jc_on_error(jc_t *c, json_t *obj, const char *parent, uint8_t *out)
{
    static const char *const words[] = {"next_iteration", "continue", "stop_user", NULL};
    return parse_enum(c, obj, parent, "on_error", words, out);
}

/* "rows": [{"col": "text" | number | bool}, ...], every row with the first row's columns. */
static int feeder_rows(jc_t *c, json_t *rows, const char *parent, lc_table_t *t)
{
    char sub[JPATH_MAX];
    size_t n = json_array_size(rows);
    if (!json_is_array(rows) || n == 0 || !json_is_object(json_array_get(rows, 0)))
        return lc_jp_fail(&c->jp, parent, "rows", "expected a non-empty array of objects");
    size_t n_cols = json_object_size(json_array_get(rows, 0));
    const char **cols = calloc(n_cols ? n_cols : 1, sizeof *cols);
    const char **cells = calloc(n * (n_cols ? n_cols : 1), sizeof *cells);
    char **owned = calloc(n * (n_cols ? n_cols : 1), sizeof *owned);
    int rv = cols && cells && owned ? 0 : lc_jp_oom(&c->jp);
    const char *key;
    json_t *v;
    size_t ci = 0;
    json_object_foreach(json_array_get(rows, 0), key, v) cols[ci++] = key;
    for (size_t r = 0; rv == 0 && r < n; r++) {
        json_t *row = json_array_get(rows, r);
        jc_path(sub, "%s.rows[%zu]", parent, r);
        if (!json_is_object(row) || json_object_size(row) != n_cols)
            rv = lc_jp_fail(&c->jp, sub, NULL, "expected an object with the %zu columns of rows[0]",
                            n_cols);
        for (size_t k = 0; rv == 0 && k < n_cols; k++) {
            json_t *cell = json_object_get(row, cols[k]);
            if (json_is_string(cell))
                cells[r * n_cols + k] = json_string_value(cell);
            else if (cell != NULL && (json_is_number(cell) || json_is_boolean(cell)))
                cells[r * n_cols + k] = owned[r * n_cols + k] = json_dumps(cell, JSON_ENCODE_ANY);
            else
                rv = lc_jp_fail(&c->jp, sub, cols[k], cell == NULL ? "missing (rows[0] has it)"
                                                                 : "expected a string or a number");
        }
    }
    if (rv == 0 && (rv = lc_table_from_rows(cols, n_cols, cells, n, t, sub, sizeof sub)) != 0)
        rv = rv == LC_ENOMEM ? lc_jp_oom(&c->jp) : lc_jp_fail(&c->jp, parent, "rows", "%s", sub);
    for (size_t i = 0; owned && i < n * n_cols; i++)
        free(owned[i]);
    free(owned);
    free(cells);
    free(cols);
    return rv;
}

bool lc_feeder_secret_name(const char *name)
{
    static const char *const words[] = {"secret", "password", "passwd", "token", "key"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcasestr(name, words[i]) != NULL)
            return true;
    return false;
}

/* Which columns of f are secret: by name, and those its "secret" list names. */
static int feeder_secrets(jc_t *c, json_t *v, const char *parent, lc_feeder_t *f)
{
    json_t *list = json_object_get(v, "secret"), *col;
    size_t i;
    if (list != NULL && !json_is_array(list))
        return lc_jp_fail(&c->jp, parent, "secret", "expected an array of column names");
    if ((f->secret = calloc(f->table.n_cols + 1, sizeof *f->secret)) == NULL)
        return lc_jp_oom(&c->jp);
    for (size_t k = 0; k < f->table.n_cols; k++)
        f->secret[k] = lc_feeder_secret_name(f->table.cols[k]);
    json_array_foreach(list, i, col) {
        int k = json_is_string(col) ? lc_table_col(&f->table, json_string_value(col),
                                                    json_string_length(col))
                                    : -1;
        if (k < 0) {
            char sub[JPATH_MAX];
            jc_path(sub, "%s.secret[%zu]", parent, i);
            return lc_jp_fail(&c->jp, sub, NULL, "expected the name of one of the feeder's "
                                                 "columns");
        }
        f->secret[k] = true;
    }
    return 0;
}

static int parse_feeder_table(jc_t *c, const char *name, json_t *v, const char *parent,
                              lc_feeder_t *f)
{
    static const char *const fields[] = {"csv", "rows", "mode", "order", "on_exhausted", "secret",
                                         NULL};
    static const char *const modes[] = {"per_user", "per_iteration", NULL};
    static const char *const orders[] = {"sequential", "shuffle", "random", NULL};
    static const char *const policies[] = {"wrap", "stop_user", "stop_run", NULL};
    char sub[200];
    int rv;
    if (!json_is_object(v))
        return lc_jp_fail(&c->jp, parent, NULL, "expected an object");
    if (!is_name(name, strlen(name)))
        return lc_jp_fail(&c->jp, parent, NULL, "a feeder's name is a letter or _ then letters, "
                                                "digits or _ (at most 64)");
    if ((rv = lc_jp_fields(&c->jp, v, parent, fields)) != 0 || (rv = lc_jp_dup(&c->jp, name, &f->name)) != 0 ||
        (rv = parse_enum(c, v, parent, "mode", modes, &f->mode)) != 0 ||
        (rv = parse_enum(c, v, parent, "order", orders, &f->order)) != 0 ||
        (rv = parse_enum(c, v, parent, "on_exhausted", policies, &f->on_exhausted)) != 0)
        return rv;
    json_t *csv = json_object_get(v, "csv"), *rows = json_object_get(v, "rows");
    if ((csv == NULL) == (rows == NULL))
        return lc_jp_fail(&c->jp, parent, NULL, "expected exactly one of csv, rows");
    if (rows != NULL)
        return feeder_rows(c, rows, parent, &f->table);
    if (!json_is_string(csv))
        return lc_jp_fail(&c->jp, parent, "csv", "expected the CSV text (a header row, then rows)");
    rv = lc_csv_parse(json_string_value(csv), json_string_length(csv), &f->table, sub, sizeof sub);
    if (rv == LC_ENOMEM)
        return lc_jp_oom(&c->jp);
    return rv == 0 ? 0 : lc_jp_fail(&c->jp, parent, "csv", "%s", sub);
}

static int parse_feeder(jc_t *c, const char *name, json_t *v, const char *parent, lc_feeder_t *f)
{
    int rv = parse_feeder_table(c, name, v, parent, f);
    return rv != 0 ? rv : feeder_secrets(c, v, parent, f);
}

static int parse_feeders(jc_t *c, json_t *root)
{
    char path[JPATH_MAX];
    json_t *feeders, *v;
    const char *name;
    lc_program_t *p = c->prog;
    int rv = lc_jp_object(&c->jp, root, "", "feeders", &feeders);
    if (rv != 0 || feeders == NULL)
        return rv;
    if (json_object_size(feeders) > LC_JOURNEY_FEEDERS_MAX)
        return lc_jp_fail(&c->jp, "", "feeders", "at most %u feeders", LC_JOURNEY_FEEDERS_MAX);
    if ((p->feeders = calloc(json_object_size(feeders) + 1, sizeof *p->feeders)) == NULL)
        return lc_jp_oom(&c->jp);
    uint32_t slot = LC_JOURNEY_FEEDER_SLOT0;
    json_object_foreach(feeders, name, v) {
        lc_feeder_t *f = &p->feeders[p->n_feeders++];
        jc_path(path, "feeders.%s", name);
        if ((rv = parse_feeder(c, name, v, path, f)) != 0)
            return rv;
        f->first_slot = slot;
        slot += (uint32_t)f->table.n_cols;
    }
    p->n_slots = slot;
    return 0;
}

/* "cookies": true, false, or {"reset": "iteration"} (a fresh jar each iteration, as k6). */
static int parse_cookies(jc_t *c, json_t *d)
{
    static const char *const fields[] = {"reset", NULL};
    json_t *v = json_object_get(d, "cookies");
    if (!json_is_object(v))
        return lc_jp_bool(&c->jp, d, "defaults", "cookies", &c->defaults.cookies);
    json_t *reset = json_object_get(v, "reset");
    int rv = lc_jp_fields(&c->jp, v, "defaults.cookies", fields);
    if (rv == 0 && (!json_is_string(reset) || strcmp(json_string_value(reset), "iteration") != 0))
        rv = lc_jp_fail(&c->jp, "defaults.cookies", "reset", "expected \"iteration\" (or give "
                                                              "cookies: true or false)");
    c->defaults.cookies = true;
    c->prog->cookies_reset_iteration = rv == 0;
    return rv;
}

static int parse_defaults(jc_t *c, json_t *root)
{
    static const char *const fields[] = {"headers", "follow_redirects", "cookies", "timeout_ms",
                                         "on_error", NULL};
    json_t *d;
    int rv = lc_jp_object(&c->jp, root, "", "defaults", &d);
    c->defaults.follow_redirects = 10;
    c->defaults.cookies = true;
    c->defaults.timeout_ms = c->request_timeout_ms;
    if (rv == 0) /* lc_scenario.c reads it too, with the same function and errors */
        rv = lc_codings_parse(&c->jp, root, "", "compression", &c->defaults.compression);
    if (rv != 0 || d == NULL)
        return rv;
    if ((rv = lc_jp_fields(&c->jp, d, "defaults", fields)) != 0 ||
        (rv = lc_jp_object(&c->jp, d, "defaults", "headers", &c->defaults.headers)) != 0 ||
        (rv = lc_jp_uint(&c->jp, d, "defaults", "follow_redirects", 0, LC_JOURNEY_REDIRECTS_MAX,
                         &c->defaults.follow_redirects)) != 0 ||
        (rv = parse_cookies(c, d)) != 0 ||
        (rv = lc_jp_uint(&c->jp, d, "defaults", "timeout_ms", 1, TIMEOUT_MAX_MS,
                         &c->defaults.timeout_ms)) != 0)
        return rv;
    return jc_on_error(c, d, "defaults", &c->defaults.on_error);
}

static int add_timer(jc_t *c, uint8_t kind, const char *name, uint32_t *index)
{
    lc_program_t *p = c->prog;
    int found = lc_program_timer(p, kind, name);
    if (found >= 0) {
        *index = (uint32_t)found;
        return 0;
    }
    int rv = jc_grow(c, (void **)&p->timers, &c->cap_timers, p->n_timers, sizeof *p->timers);
    if (rv != 0)
        return rv;
    lc_timer_t *t = &p->timers[p->n_timers];
    size_t len = strlen(name) + 12;
    if ((t->name = strdup(name)) == NULL || (t->series = malloc(len)) == NULL)
        return lc_jp_oom(&c->jp);
    snprintf(t->series, len, "%s:%s", kind == LC_TIMER_ITERATION ? "iteration" : "group", name);
    t->kind = kind;
    *index = (uint32_t)p->n_timers++;
    return 0;
}

int jc_group(jc_t *c, const char *name, const char *path, uint32_t *index)
{
    size_t groups = 0;
    for (size_t i = 0; i < c->prog->n_timers; i++)
        groups += c->prog->timers[i].kind == LC_TIMER_GROUP;
    if (lc_program_timer(c->prog, LC_TIMER_GROUP, name) < 0 && groups >= LC_JOURNEY_GROUPS_MAX)
        return lc_jp_fail(&c->jp, path, "group", "more than %u groups", LC_JOURNEY_GROUPS_MAX);
    return add_timer(c, LC_TIMER_GROUP, name, index);
}

/* One section (on_start, steps or on_stop): its ops, then END. Absent sections are an END. */
static int parse_section(jc_t *c, json_t *j, const char *parent, const char *key, bool required,
                         uint32_t *first)
{
    char path[JPATH_MAX];
    json_t *steps = json_object_get(j, key);
    *first = (uint32_t)c->prog->n_ops;
    jc_path(path, "%s.%s", parent, key);
    if (steps == NULL && required)
        return lc_jp_fail(&c->jp, parent, key, "required");
    if (steps != NULL && (!json_is_array(steps) || (required && json_array_size(steps) == 0)))
        return lc_jp_fail(&c->jp, parent, key, required ? "expected a non-empty array of steps"
                                                         : "expected an array of steps");
    int rv = steps == NULL ? 0 : jc_steps(c, steps, path);
    return rv != 0 ? rv : jc_emit(c, LC_OP_END, 0, 0, path, NULL);
}

static int parse_journey(jc_t *c, json_t *j, const char *parent, lc_journey_t *out)
{
    static const char *const fields[] = {"name", "weight", "pacing_ms", "on_start", "steps",
                                         "on_stop", "on_error", NULL};
    int rv;
    if (!json_is_object(j))
        return lc_jp_fail(&c->jp, parent, NULL, "expected an object");
    out->weight = 1;
    out->on_error = c->defaults.on_error;
    if ((rv = lc_jp_fields(&c->jp, j, parent, fields)) != 0 ||
        (rv = lc_jp_text(&c->jp, j, parent, "name", 1, NAME_MAX_LEN, &out->name)) != 0 ||
        (rv = lc_jp_uint(&c->jp, j, parent, "weight", 1, WEIGHT_MAX, &out->weight)) != 0 ||
        (rv = lc_jp_uint(&c->jp, j, parent, "pacing_ms", 0, PACING_MAX_MS, &out->pacing_ms)) != 0 ||
        (rv = jc_on_error(c, j, parent, &out->on_error)) != 0)
        return rv;
    if (out->name == NULL)
        return lc_jp_fail(&c->jp, parent, "name", "required");
    if (lc_program_timer(c->prog, LC_TIMER_ITERATION, out->name) >= 0)
        return lc_jp_fail(&c->jp, parent, "name", "another journey is named \"%s\"", out->name);
    if ((rv = add_timer(c, LC_TIMER_ITERATION, out->name, &out->timer)) != 0)
        return rv;
    uint8_t saved = c->defaults.on_error;
    c->defaults.on_error = out->on_error;
    if ((rv = parse_section(c, j, parent, "on_start", false, &out->on_start)) == 0 &&
        (rv = parse_section(c, j, parent, "steps", true, &out->steps)) == 0)
        rv = parse_section(c, j, parent, "on_stop", false, &out->on_stop);
    c->defaults.on_error = saved;
    return rv;
}

/* A v1 task: a journey named after it whose one step is the task's request. */
static int parse_task_journey(jc_t *c, json_t *task, const char *parent, lc_journey_t *out)
{
    char path[JPATH_MAX];
    int rv;
    if (!json_is_object(task))
        return lc_jp_fail(&c->jp, parent, NULL, "expected an object");
    json_t *step = json_copy(task);
    if (step == NULL)
        return lc_jp_oom(&c->jp);
    out->weight = 1;
    out->on_error = c->defaults.on_error;
    rv = lc_jp_uint(&c->jp, task, parent, "weight", 1, WEIGHT_MAX, &out->weight);
    json_object_del(step, "weight");
    out->on_start = out->on_stop = (uint32_t)c->prog->n_ops; /* empty: just END */
    if (rv == 0)
        rv = jc_emit(c, LC_OP_END, 0, 0, parent, NULL);
    out->steps = (uint32_t)c->prog->n_ops;
    if (rv == 0)
        rv = jc_request(c, step, parent);
    json_decref(step);
    if (rv != 0)
        return rv;
    const lc_jreq_t *req = &c->prog->reqs[c->prog->n_reqs - 1];
    jc_path(path, "task %s", c->prog->endpoints[req->endpoint].name);
    if ((rv = lc_jp_dup(&c->jp, path, &out->name)) != 0 ||
        (rv = add_timer(c, LC_TIMER_ITERATION, out->name, &out->timer)) != 0)
        return rv;
    return jc_emit(c, LC_OP_END, 0, 0, parent, NULL);
}

static int parse_journeys(jc_t *c, json_t *root)
{
    char path[JPATH_MAX];
    lc_program_t *p = c->prog;
    json_t *js = json_object_get(root, "journeys"), *tasks = json_object_get(root, "tasks");
    if (js == NULL && tasks == NULL)
        return lc_jp_fail(&c->jp, "", "journeys", "required (or tasks)");
    if (js != NULL && (!json_is_array(js) || json_array_size(js) == 0))
        return lc_jp_fail(&c->jp, "", "journeys", "expected a non-empty array");
    if (tasks != NULL && (!json_is_array(tasks) || json_array_size(tasks) == 0))
        return lc_jp_fail(&c->jp, "", "tasks", "expected a non-empty array");
    size_t n = json_array_size(js) + json_array_size(tasks);
    if (n > LC_JOURNEYS_MAX)
        return lc_jp_fail(&c->jp, "", js ? "journeys" : "tasks",
                          "at most %u journeys and tasks together", LC_JOURNEYS_MAX);
    if ((p->journeys = calloc(n, sizeof *p->journeys)) == NULL)
        return lc_jp_oom(&c->jp);
    for (size_t i = 0; i < n; i++) {
        bool task = i >= json_array_size(js);
        size_t k = task ? i - json_array_size(js) : i;
        jc_path(path, "%s[%zu]", task ? "tasks" : "journeys", k);
        int rv = task ? parse_task_journey(c, json_array_get(tasks, k), path, &p->journeys[i])
                      : parse_journey(c, json_array_get(js, k), path, &p->journeys[i]);
        p->n_journeys++;
        if (rv != 0)
            return rv;
        p->total_weight += p->journeys[i].weight;
    }
    return 0;
}

static void free_ops_paths(jc_t *c)
{
    for (size_t i = 0; i < c->prog->n_ops; i++)
        free(c->op_paths[i]);
    free(c->op_paths);
}

int lc_program_compile(json_t *root, const lc_origins_t *origins, lc_program_t **out,
                       char *errmsg, size_t errlen)
{
    assert(root != NULL && origins != NULL && origins->n > 0 && out != NULL);
    jc_t c = {.jp = {errmsg, errlen}, .root = root, .origins = origins};
    json_t *timeout = json_object_get(root, "request_timeout_ms");
    c.request_timeout_ms = json_is_integer(timeout) ? (uint32_t)json_integer_value(timeout) : 30000;
    c.names = (lc_tpl_names_t){.resolve = resolve_name, .ctx = &c};
    if ((c.prog = calloc(1, sizeof *c.prog)) == NULL)
        return lc_jp_oom(&c.jp);
    c.prog->n_slots = LC_JOURNEY_FEEDER_SLOT0;
    int rv = parse_feeders(&c, root);
    if (rv == 0)
        rv = parse_defaults(&c, root);
    if (rv == 0)
        rv = jc_lua_scan(&c);
    if (rv == 0)
        rv = parse_journeys(&c, root);
    if (rv == 0)
        rv = jc_dataflow(&c);
    free_ops_paths(&c);
    jc_lua_free(&c);
    if (rv != 0) {
        lc_program_free(c.prog);
        return rv;
    }
    *out = c.prog;
    return 0;
}

void lc_program_free(lc_program_t *p)
{
    if (p == NULL)
        return;
    for (size_t i = 0; i < p->n_journeys; i++)
        free(p->journeys[i].name);
    for (size_t i = 0; i < p->n_reqs; i++)
        jc_request_free(&p->reqs[i]);
    for (size_t i = 0; i < p->n_tpls; i++)
        lc_tpl_free(p->tpls[i]);
    for (size_t i = 0; i < p->n_conds; i++)
        lc_cond_free(p->conds[i]);
    for (size_t i = 0; i < p->n_vars; i++)
        free(p->vars[i]);
    for (size_t i = 0; i < p->n_var_sources; i++)
        free(p->var_sources[i].path);
    free(p->var_sources);
    for (size_t i = 0; i < p->n_feeders; i++) {
        free(p->feeders[i].name);
        free(p->feeders[i].secret);
        lc_table_free(&p->feeders[i].table);
    }
    for (size_t i = 0; i < p->n_endpoints; i++)
        free(p->endpoints[i].name);
    for (size_t i = 0; i < p->n_timers; i++) {
        free(p->timers[i].name);
        free(p->timers[i].series);
    }
    for (size_t i = 0; i < p->n_luas; i++) {
        free(p->luas[i].path_json);
        free(p->luas[i].fn);
    }
    free(p->luas);
    free(p->journeys);
    free(p->reqs);
    free(p->tpls);
    free(p->conds);
    free(p->vars);
    free(p->feeders);
    free(p->endpoints);
    free(p->timers);
    free(p->branches);
    free(p->ops);
    free(p);
}

int lc_program_endpoint(const lc_program_t *p, const char *name)
{
    for (size_t i = 0; i < p->n_endpoints; i++)
        if (strcmp(p->endpoints[i].name, name) == 0)
            return (int)i;
    return -1;
}

int lc_program_timer(const lc_program_t *p, uint8_t kind, const char *name)
{
    for (size_t i = 0; i < p->n_timers; i++)
        if (p->timers[i].kind == kind && strcmp(p->timers[i].name, name) == 0)
            return (int)i;
    return -1;
}

int lc_program_slot(const lc_program_t *p, const char *name, size_t len)
{
    for (size_t i = 0; i < p->n_vars; i++)
        if (strlen(p->vars[i]) == len && memcmp(p->vars[i], name, len) == 0)
            return (int)i;
    const char *dot = memchr(name, '.', len);
    size_t flen = dot != NULL ? (size_t)(dot - name) : 0;
    for (size_t f = 0; dot != NULL && f < p->n_feeders; f++) {
        const lc_feeder_t *fd = &p->feeders[f];
        if (strlen(fd->name) != flen || memcmp(fd->name, name, flen) != 0)
            continue;
        int col = lc_table_col(&fd->table, dot + 1, len - flen - 1);
        return col < 0 ? -1 : (int)(fd->first_slot + (uint32_t)col);
    }
    return -1;
}

const char *lc_program_slot_name(const lc_program_t *p, uint32_t slot, char *buf, size_t len)
{
    if (slot < p->n_vars)
        return p->vars[slot];
    for (size_t f = 0; f < p->n_feeders; f++) {
        const lc_feeder_t *fd = &p->feeders[f];
        if (slot >= fd->first_slot && slot < fd->first_slot + fd->table.n_cols) {
            snprintf(buf, len, "%s.%s", fd->name, fd->table.cols[slot - fd->first_slot]);
            return buf;
        }
    }
    snprintf(buf, len, "slot %u", slot);
    return buf;
}

size_t lc_program_journey_of(const lc_program_t *p, uint64_t user_id)
{
    assert(p->n_journeys > 0 && p->total_weight > 0);
    if (p->n_journeys == 1)
        return 0;
    uint64_t r = (user_id > 0 ? user_id - 1 : 0) % p->total_weight;
    size_t i = 0;
    while (r >= p->journeys[i].weight) {
        r -= p->journeys[i].weight;
        i++;
    }
    return i;
}
