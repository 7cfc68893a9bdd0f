/* lc_journey_request.c — compiles a request step: method, path and query, headers (with
 * the scenario's defaults), a text, json or form body, expect, extract and options. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lc_err.h"
#include "lc_journey_internal.h"
#include "lc_scenario.h"

#define TIMEOUT_MAX_MS 3600000u
#define JSON_DEPTH_MAX 64u
#define PARTS_MAX 1024u

static const char *const request_fields[] = {
    "name", "method", "path", "headers", "query", "body", "json", "form", "expect", "extract",
    "follow_redirects", "timeout_ms", "cookies", "on_error", "compression", "origin", NULL};

/* The step's own headers over the scenario's defaults (names compare case-insensitively). */
static json_t *merged_headers(const jc_t *c, json_t *step)
{
    json_t *own = json_object_get(step, "headers");
    if (c->defaults.headers == NULL || (own != NULL && !json_is_object(own)))
        return json_incref(own);
    json_t *all = json_copy(c->defaults.headers);
    const char *name, *dname;
    json_t *v, *dv;
    void *tmp;
    if (all == NULL)
        return NULL;
    json_object_foreach(own, name, v) {
        json_object_foreach_safe(all, tmp, dname, dv) if (strcasecmp(dname, name) == 0)
            json_object_del(all, dname);
        json_object_set(all, name, v);
    }
    return all;
}

int jc_endpoint(jc_t *c, const char *name, const char *method, const char *path,
                const char *key, uint32_t *index)
{
    lc_program_t *p = c->prog;
    if (strncmp(name, "iteration:", 10) == 0 || strncmp(name, "group:", 6) == 0)
        return lc_jp_fail(&c->jp, path, key, "\"iteration:\" and \"group:\" name the "
                                             "journeys' and groups' series; pick another name");
    int found = lc_program_endpoint(p, name);
    if (found >= 0) {
        *index = (uint32_t)found;
        return 0;
    }
    if (p->n_endpoints >= LC_JOURNEY_ENDPOINTS_MAX)
        return lc_jp_fail(&c->jp, path, key, "more than %u distinct request names",
                          LC_JOURNEY_ENDPOINTS_MAX);
    int rv = jc_grow(c, (void **)&p->endpoints, &c->cap_endpoints, p->n_endpoints,
                     sizeof *p->endpoints);
    if (rv != 0)
        return rv;
    if ((p->endpoints[p->n_endpoints].name = strdup(name)) == NULL)
        return lc_jp_oom(&c->jp);
    p->endpoints[p->n_endpoints].method = method;
    *index = (uint32_t)p->n_endpoints++;
    return 0;
}

static const char *static_method(const char *m)
{
    static const char *const methods[] = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD",
                                          "OPTIONS", NULL};
    for (size_t i = 0; methods[i] != NULL; i++)
        if (strcmp(methods[i], m) == 0)
            return methods[i];
    return "GET";
}

/* Parts of a json or form body (or a query) being built: literal text collects in lit. */
typedef struct parts_s {
    jc_t *c;
    lc_jreq_t *r;
    lc_jbody_part_t **arr;
    size_t *n, cap;
    lc_buf_t lit;
} parts_t;

static int flush(parts_t *ps, lc_tpl_t *tpl, int32_t typed_slot, const char *path)
{
    if (*ps->n >= PARTS_MAX)
        return lc_jp_fail(&ps->c->jp, path, NULL, "more than %u templated values", PARTS_MAX);
    int rv = jc_grow(ps->c, (void **)ps->arr, &ps->cap, *ps->n, sizeof **ps->arr);
    if (rv != 0)
        return rv;
    lc_jbody_part_t *part = &(*ps->arr)[(*ps->n)++];
    part->literal = ps->lit.data;
    part->literal_len = ps->lit.len;
    part->tpl = tpl;
    part->typed_slot = typed_slot;
    lc_buf_init(&ps->lit);
    return 0;
}

static int lit(parts_t *ps, const char *s, size_t len)
{
    return lc_buf_append(&ps->lit, s, len) == 0 ? 0 : lc_jp_oom(&ps->c->jp);
}

/* A JSON string of the body: literal when it has no "${", a typed hole when it is exactly
 * one variable, else a string hole. */
static int json_string_part(parts_t *ps, json_t *v, const char *path)
{
    const char *s = json_string_value(v);
    size_t len = json_string_length(v);
    if (memmem(s, len, "${", 2) == NULL) {
        char *text = json_dumps(v, JSON_ENCODE_ANY);
        int rv = text ? lit(ps, text, strlen(text)) : lc_jp_oom(&ps->c->jp);
        free(text);
        return rv;
    }
    lc_tpl_t *t = NULL;
    int slot, rv = jc_tpl(ps->c, path, NULL, s, len, LC_TPL_JSON_STR, &t);
    if (rv != 0)
        return rv;
    if (lc_tpl_single_var(t, &slot)) {
        rv = flush(ps, t, slot, path);
    } else if ((rv = lit(ps, "\"", 1)) == 0 && (rv = flush(ps, t, -1, path)) == 0) {
        rv = lit(ps, "\"", 1);
        return rv;
    }
    if (rv != 0)
        lc_tpl_free(t);
    return rv;
}

static int json_value(parts_t *ps, json_t *v, const char *path, unsigned depth)
{
    char sub[JPATH_MAX];
    int rv = 0;
    if (depth > JSON_DEPTH_MAX)
        return lc_jp_fail(&ps->c->jp, path, NULL, "nested more than %u deep", JSON_DEPTH_MAX);
    if (json_is_string(v))
        return json_string_part(ps, v, path);
    if (json_is_array(v)) {
        rv = lit(ps, "[", 1);
        for (size_t i = 0; rv == 0 && i < json_array_size(v); i++) {
            jc_path(sub, "%s[%zu]", path, i);
            if (i > 0)
                rv = lit(ps, ",", 1);
            if (rv == 0)
                rv = json_value(ps, json_array_get(v, i), sub, depth + 1);
        }
        return rv != 0 ? rv : lit(ps, "]", 1);
    }
    if (json_is_object(v)) {
        const char *key;
        json_t *m;
        bool first = true;
        rv = lit(ps, "{", 1);
        json_object_foreach(v, key, m) {
            json_t *k = json_string(key);
            char *kt = k ? json_dumps(k, JSON_ENCODE_ANY) : NULL;
            json_decref(k);
            jc_path(sub, "%s.%s", path, key);
            if (rv == 0)
                rv = kt == NULL ? lc_jp_oom(&ps->c->jp) : lit(ps, first ? "" : ",", first ? 0 : 1);
            if (rv == 0 && (rv = lit(ps, kt, strlen(kt))) == 0 && (rv = lit(ps, ":", 1)) == 0)
                rv = json_value(ps, m, sub, depth + 1);
            free(kt);
            first = false;
            if (rv != 0)
                return rv;
        }
        return rv != 0 ? rv : lit(ps, "}", 1);
    }
    char *text = json_dumps(v, JSON_ENCODE_ANY);
    rv = text ? lit(ps, text, strlen(text)) : lc_jp_oom(&ps->c->jp);
    free(text);
    return rv;
}

/* Percent-encodes a form or query name at compile time. */
static int lit_encoded(parts_t *ps, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    int rv = 0;
    for (; rv == 0 && *s != '\0'; s++) {
        unsigned char ch = (unsigned char)*s;
        bool plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                     (ch >= '0' && ch <= '9') || strchr("-._~", ch) != NULL;
        char esc[3] = {'%', hex[ch >> 4], hex[ch & 15]};
        rv = plain ? lit(ps, (const char *)&ch, 1) : lit(ps, esc, 3);
    }
    return rv;
}

/* {"name": "template" | number | bool} as name=value&...; first: the text before the first
 * pair ("?" or "&" for a query, "" for a form). */
static int form_pairs(parts_t *ps, json_t *obj, const char *path, const char *first)
{
    char sub[JPATH_MAX];
    const char *key;
    json_t *v;
    int rv = 0;
    bool start = true;
    json_object_foreach(obj, key, v) {
        jc_path(sub, "%s.%s", path, key);
        char *text = json_is_string(v) ? NULL : json_dumps(v, JSON_ENCODE_ANY);
        const char *src = json_is_string(v) ? json_string_value(v) : text;
        lc_tpl_t *t = NULL;
        if (json_is_object(v) || json_is_array(v) || json_is_null(v))
            rv = lc_jp_fail(&ps->c->jp, sub, NULL, "expected a string, a number or a boolean");
        else if (src == NULL)
            rv = lc_jp_oom(&ps->c->jp);
        if (rv == 0 && (rv = lit(ps, start ? first : "&", strlen(start ? first : "&"))) == 0 &&
            (rv = lit_encoded(ps, key)) == 0 && (rv = lit(ps, "=", 1)) == 0 &&
            (rv = jc_tpl(ps->c, sub, NULL, src, strlen(src), LC_TPL_FORM, &t)) == 0 &&
            (rv = flush(ps, t, -1, sub)) != 0)
            lc_tpl_free(t);
        free(text);
        start = false;
        if (rv != 0)
            return rv;
    }
    return 0;
}

/* Ends a parts list: the trailing literal becomes a last part without a hole. */
static int parts_end(parts_t *ps, const char *path)
{
    if (ps->lit.len == 0 && *ps->n > 0) {
        lc_buf_free(&ps->lit);
        return 0;
    }
    return flush(ps, NULL, -1, path);
}

static int compile_body(jc_t *c, json_t *step, const char *path, const lc_task_t *t,
                        lc_jreq_t *r)
{
    char sub[JPATH_MAX];
    json_t *json = json_object_get(step, "json"), *form = json_object_get(step, "form");
    int given = (t->body != NULL) + (json != NULL) + (form != NULL);
    if (given > 1)
        return lc_jp_fail(&c->jp, path, NULL, "give at most one of body, json, form");
    if (t->body != NULL) {
        r->body_kind = LC_BODY_TEXT;
        return jc_tpl(c, path, "body", t->body, strlen(t->body), LC_TPL_RAW, &r->body);
    }
    if (given == 0)
        return 0;
    parts_t ps = {.c = c, .r = r, .arr = &r->parts, .n = &r->n_parts};
    int rv;
    if (json != NULL) {
        r->body_kind = LC_BODY_JSON;
        jc_path(sub, "%s.json", path);
        rv = json_value(&ps, json, sub, 0);
    } else {
        r->body_kind = LC_BODY_FORM;
        jc_path(sub, "%s.form", path);
        rv = json_is_object(form) ? form_pairs(&ps, form, sub, "")
                                  : lc_jp_fail(&c->jp, path, "form", "expected an object");
    }
    if (rv == 0)
        rv = parts_end(&ps, sub);
    lc_buf_free(&ps.lit);
    return rv;
}

/* The path template; a "query" object adds its pairs, form-encoded, after it. */
static int compile_target(jc_t *c, json_t *step, const char *path, const lc_task_t *t,
                          lc_jreq_t *r)
{
    char sub[JPATH_MAX];
    json_t *query = json_object_get(step, "query");
    int rv = jc_tpl(c, path, "path", t->path, strlen(t->path), LC_TPL_RAW, &r->path);
    if (rv != 0 || query == NULL)
        return rv;
    if (!json_is_object(query))
        return lc_jp_fail(&c->jp, path, "query", "expected an object of name: value");
    parts_t ps = {.c = c, .r = r, .arr = &r->query, .n = &r->n_query};
    jc_path(sub, "%s.query", path);
    rv = form_pairs(&ps, query, sub, strchr(t->path, '?') ? "&" : "?");
    if (rv == 0)
        rv = parts_end(&ps, sub);
    lc_buf_free(&ps.lit);
    return rv;
}

static int compile_headers(jc_t *c, const char *path, lc_task_t *t, lc_jreq_t *r)
{
    char sub[JPATH_MAX];
    if (t->n_headers == 0)
        return 0;
    if ((r->headers = calloc(t->n_headers, sizeof *r->headers)) == NULL)
        return lc_jp_oom(&c->jp);
    for (size_t i = 0; i < t->n_headers; i++) {
        lc_jheader_t *h = &r->headers[r->n_headers++];
        jc_path(sub, "%s.headers", path);
        h->name = t->headers[i].name;
        t->headers[i].name = NULL;
        if (strcasecmp(h->name, "Content-Type") == 0)
            r->sets_content_type = true;
        int rv = jc_tpl(c, sub, h->name, t->headers[i].value, strlen(t->headers[i].value),
                        LC_TPL_RAW, &h->value);
        if (rv != 0)
            return rv;
    }
    return 0;
}

static const char *const extract_fields[] = {"json", "regex", "between", "header", "cookie",
                                             "status", "pick", "default", "required", "group",
                                             NULL};

static int extract_pick(jc_t *c, json_t *x, const char *path, enum lc_pick *pick)
{
    static const char *const picks[] = {"first", "last", "random", "all", "count", NULL};
    json_t *v = json_object_get(x, "pick");
    *pick = LC_PICK_FIRST;
    for (int i = 0; v != NULL && json_is_string(v) && picks[i] != NULL; i++)
        if (strcmp(picks[i], json_string_value(v)) == 0) {
            *pick = (enum lc_pick)i;
            return 0;
        }
    return v == NULL ? 0 : lc_jp_fail(&c->jp, path, "pick", "expected one of first, last, "
                                                          "random, all, count");
}

static int extract_default(jc_t *c, json_t *x, const char *path, lc_jextract_t *e)
{
    json_t *d = json_object_get(x, "default");
    if (d == NULL)
        return 0;
    if (json_is_object(d) || json_is_array(d))
        return lc_jp_fail(&c->jp, path, "default", "expected a string, a number, a boolean or null");
    e->has_default = true;
    e->default_type = json_is_string(d) ? LC_V_STRING : json_is_number(d) ? LC_V_NUMBER
                                                        : json_is_boolean(d) ? LC_V_BOOL : LC_V_NULL;
    e->default_value = json_is_string(d) ? strdup(json_string_value(d)) : json_dumps(d, JSON_ENCODE_ANY);
    if (e->default_value == NULL)
        return lc_jp_oom(&c->jp);
    e->default_len = json_is_string(d) ? json_string_length(d) : strlen(e->default_value);
    return 0;
}

/* The extractor of a body extract (json, regex or between). */
static int body_extractor(jc_t *c, json_t *x, const char *path, const char *kind,
                          enum lc_pick pick, lc_jextract_t *e)
{
    char sub[200];
    json_t *v = json_object_get(x, kind), *group = json_object_get(x, "group");
    int rv;
    if (group != NULL && (strcmp(kind, "regex") != 0 || !json_is_string(group)))
        return lc_jp_fail(&c->jp, path, "group", "a regex's group: a name or a number, as text");
    if (strcmp(kind, "between") == 0) {
        if (!json_is_array(v) || json_array_size(v) != 2 ||
            !json_is_string(json_array_get(v, 0)) || !json_is_string(json_array_get(v, 1)))
            return lc_jp_fail(&c->jp, path, kind, "expected [left, right] boundaries");
        rv = lc_extractor_between(&e->x, json_string_value(json_array_get(v, 0)),
                                  json_string_value(json_array_get(v, 1)), pick, sub, sizeof sub);
    } else if (!json_is_string(v)) {
        return lc_jp_fail(&c->jp, path, kind, "expected a string");
    } else if (strcmp(kind, "json") == 0) {
        rv = lc_extractor_json(&e->x, json_string_value(v), pick, sub, sizeof sub);
    } else {
        rv = lc_extractor_regex(&e->x, json_string_value(v),
                                group ? json_string_value(group) : NULL, pick, sub, sizeof sub);
    }
    if (rv == LC_ENOMEM)
        return lc_jp_oom(&c->jp);
    return rv == 0 ? 0 : lc_jp_fail(&c->jp, path, kind, "%s", sub);
}

static int compile_extract(jc_t *c, const char *var, json_t *x, const char *path, lc_jreq_t *r)
{
    static const char *const kinds[] = {"json", "regex", "between", "header", "cookie", "status",
                                        NULL};
    lc_jextract_t *e = &r->extracts[r->n_extracts++];
    const char *kind = NULL;
    enum lc_pick pick;
    int rv;
    e->required = true;
    if (!json_is_object(x))
        return lc_jp_fail(&c->jp, path, NULL, "expected {\"json\": \"$.path\"} or another extract");
    if ((rv = lc_jp_fields(&c->jp, x, path, extract_fields)) != 0 ||
        (rv = jc_var(c, var, path, &e->slot)) != 0 || (rv = extract_pick(c, x, path, &pick)) != 0 ||
        (rv = lc_jp_bool(&c->jp, x, path, "required", &e->required)) != 0 ||
        (rv = extract_default(c, x, path, e)) != 0)
        return rv;
    for (size_t i = 0; kinds[i] != NULL; i++)
        if (json_object_get(x, kinds[i]) != NULL) {
            if (kind != NULL)
                return lc_jp_fail(&c->jp, path, kinds[i], "an extract has one of json, regex, "
                                                          "between, header, cookie, status");
            kind = kinds[i];
        }
    if (kind == NULL)
        return lc_jp_fail(&c->jp, path, NULL, "expected one of json, regex, between, header, "
                                              "cookie, status");
    if (strcmp(kind, "status") == 0) {
        e->kind = LC_EXTRACT_STATUS;
        return 0;
    }
    if (strcmp(kind, "header") == 0 || strcmp(kind, "cookie") == 0) {
        e->kind = kind[0] == 'h' ? LC_EXTRACT_HEADER : LC_EXTRACT_COOKIE;
        r->cookies = r->cookies || e->kind == LC_EXTRACT_COOKIE;
        if ((rv = lc_jp_text(&c->jp, x, path, kind, 1, 256, &e->name)) != 0)
            return rv;
        for (char *ch = e->name; e->kind == LC_EXTRACT_HEADER && *ch != '\0'; ch++)
            if (*ch >= 'A' && *ch <= 'Z')
                *ch = (char)(*ch | 0x20); /* the engine keeps headers by lowercase name */
        return 0;
    }
    e->kind = LC_EXTRACT_BODY;
    r->needs_body = true;
    return body_extractor(c, x, path, kind, pick, e);
}

static int compile_extracts(jc_t *c, json_t *step, const char *path, lc_jreq_t *r)
{
    char sub[JPATH_MAX];
    json_t *ex, *x;
    const char *var;
    int rv = lc_jp_object(&c->jp, step, path, "extract", &ex);
    if (rv != 0 || ex == NULL)
        return rv;
    if (json_object_size(ex) > LC_JOURNEY_EXTRACTS_MAX)
        return lc_jp_fail(&c->jp, path, "extract", "at most %u per request",
                          LC_JOURNEY_EXTRACTS_MAX);
    if ((r->extracts = calloc(json_object_size(ex) + 1, sizeof *r->extracts)) == NULL)
        return lc_jp_oom(&c->jp);
    json_object_foreach(ex, var, x) {
        jc_path(sub, "%s.extract.%s", path, var);
        size_t len = strlen(var);
        if (len == 0 || len > 64 || strchr(var, '.') != NULL)
            return lc_jp_fail(&c->jp, sub, NULL, "a variable's name is a letter or _ then "
                                                 "letters, digits or _ (at most 64)");
        if ((rv = compile_extract(c, var, x, sub, r)) != 0)
            return rv;
    }
    return 0;
}

static int compile_options(jc_t *c, json_t *step, const char *path, lc_jreq_t *r)
{
    int rv;
    r->follow_redirects = c->defaults.follow_redirects;
    r->timeout_ms = c->defaults.timeout_ms;
    r->cookies = c->defaults.cookies;
    r->on_error = c->defaults.on_error;
    r->compression = c->defaults.compression;
    if ((rv = lc_codings_parse(&c->jp, step, path, "compression", &r->compression)) != 0 ||
        (rv = lc_jp_uint(&c->jp, step, path, "follow_redirects", 0, LC_JOURNEY_REDIRECTS_MAX,
                         &r->follow_redirects)) != 0 ||
        (rv = lc_jp_uint(&c->jp, step, path, "timeout_ms", 1, TIMEOUT_MAX_MS, &r->timeout_ms)) != 0 ||
        (rv = lc_jp_bool(&c->jp, step, path, "cookies", &r->cookies)) != 0)
        return rv;
    return jc_on_error(c, step, path, &r->on_error);
}

/* The v1 parser's view of the step: the headers merged with the defaults, the path on its
 * origin (an absolute URL's path). */
static int parse_head(jc_t *c, json_t *step, const char *path, lc_task_t *t, lc_jreq_t *r)
{
    json_t *view = json_copy(step), *headers = merged_headers(c, step);
    int rv = view ? 0 : lc_jp_oom(&c->jp);
    if (rv == 0 && headers != NULL && json_object_set(view, "headers", headers) != 0)
        rv = lc_jp_oom(&c->jp);
    if (rv == 0)
        rv = jc_request_origin(c, view, path, r);
    if (rv == 0)
        rv = lc_scenario_parse_request(&c->jp, view, path, t, false);
    json_decref(headers);
    json_decref(view);
    return rv;
}

static int compile_request(jc_t *c, json_t *step, const char *path, lc_task_t *t, lc_jreq_t *r)
{
    int rv;
    if ((rv = lc_jp_fields(&c->jp, step, path, request_fields)) != 0 ||
        (rv = parse_head(c, step, path, t, r)) != 0 ||
        (rv = lc_jp_dup(&c->jp, path, &r->path_json)) != 0)
        return rv;
    r->method = static_method(t->method);
    r->head = strcmp(r->method, "HEAD") == 0;
    r->expect_status = t->expect_status;
    r->n_expect_status = t->n_expect_status;
    r->expect_body_contains = t->expect_body_contains;
    t->expect_status = NULL;
    t->expect_body_contains = NULL;
    r->needs_body = r->expect_body_contains != NULL;
    if ((rv = jc_endpoint(c, t->name, r->method, path, "name", &r->endpoint)) != 0 ||
        (rv = compile_options(c, step, path, r)) != 0)
        return rv;
    t->compression = r->compression;
    if ((rv = lc_scenario_check_accept(&c->jp, path, t)) != 0 ||
        (rv = compile_target(c, step, path, t, r)) != 0 ||
        (rv = compile_headers(c, path, t, r)) != 0 || (rv = compile_body(c, step, path, t, r)) != 0)
        return rv;
    if ((rv = compile_extracts(c, step, path, r)) != 0)
        return rv;
    r->needs_location = r->follow_redirects > 0;
    r->path_repeatable = lc_tpl_repeatable(r->path);
    c->prog->uses_cookies = c->prog->uses_cookies || r->cookies;
    return 0;
}

int jc_request(jc_t *c, json_t *step, const char *path)
{
    lc_program_t *p = c->prog;
    lc_task_t t = {0};
    int rv = jc_grow(c, (void **)&p->reqs, &c->cap_reqs, p->n_reqs, sizeof *p->reqs);
    if (rv != 0)
        return rv;
    lc_jreq_t *r = &p->reqs[p->n_reqs++];
    rv = compile_request(c, step, path, &t, r);
    lc_task_free(&t);
    return rv != 0 ? rv : jc_emit(c, LC_OP_REQ, (uint32_t)(p->n_reqs - 1), 0, path, NULL);
}

static void free_parts(lc_jbody_part_t *parts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(parts[i].literal);
        lc_tpl_free(parts[i].tpl);
    }
    free(parts);
}

void jc_request_free(lc_jreq_t *r)
{
    free(r->path_json);
    lc_tpl_free(r->path);
    free_parts(r->query, r->n_query);
    for (size_t i = 0; i < r->n_headers; i++) {
        free(r->headers[i].name);
        lc_tpl_free(r->headers[i].value);
    }
    free(r->headers);
    lc_tpl_free(r->body);
    free_parts(r->parts, r->n_parts);
    free(r->expect_status);
    free(r->expect_body_contains);
    for (size_t i = 0; i < r->n_extracts; i++) {
        lc_extractor_free(r->extracts[i].x);
        free(r->extracts[i].name);
        free(r->extracts[i].default_value);
    }
    free(r->extracts);
}
