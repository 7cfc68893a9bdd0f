/* api_scenario.c — a request body to a checked scenario: its content type, YAML to JSON on a read_pool thread, the token's tenant, lc_scenario_parse, the tenant checks, and a script loaded in the sandbox on a read_pool thread. */
#include "api_scenario.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "api_internal.h"
#include "lc_err.h"
#include "lc_lua_check.h"
#include "read_pool.h"
#include "store.h"
#include "yaml_json.h"

/* Reals in the stored JSON: this many significant digits when they read back
 * as the same numbers ("0.01", not "0.01000000000000000021"). */
#define SHORT_REAL_DIGITS 15

static const char *const yaml_types[] = {"application/yaml", "application/x-yaml", "text/yaml",
                                         NULL};

bool api_scenario_is_yaml(const char *content_type)
{
    if (content_type == NULL)
        return false;
    const char *t = content_type + strspn(content_type, " \t");
    size_t n = strcspn(t, ";");
    while (n > 0 && (t[n - 1] == ' ' || t[n - 1] == '\t'))
        n--;
    for (size_t i = 0; yaml_types[i] != NULL; i++)
        if (strlen(yaml_types[i]) == n && strncasecmp(t, yaml_types[i], n) == 0)
            return true;
    return false;
}

/* Compact JSON in the document's key order; reals short when that loses
 * nothing, else with the 17 digits that always read back exactly. */
static char *canonical_json(const json_t *doc)
{
    const size_t flags = JSON_COMPACT | JSON_ENCODE_ANY;
    char *text = json_dumps(doc, flags | JSON_REAL_PRECISION(SHORT_REAL_DIGITS));
    json_t *back = text != NULL ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
    bool same = back != NULL && json_equal(doc, back);
    json_decref(back);
    if (same || text == NULL)
        return text;
    free(text);
    return json_dumps(doc, flags);
}

/* A tenant token's scenario without "tenant" runs for the token's tenant:
 * true when doc was given it. */
static bool fill_tenant(json_t *doc, const auth_identity_t *who)
{
    return who->role == AUTH_ROLE_TENANT && json_is_object(doc) &&
           json_object_get(doc, "tenant") == NULL &&
           json_object_set_new(doc, "tenant", json_string(who->tenant)) == 0;
}

/* Parses out->json and checks its tenant exists and is the caller's to use
 * ("default" always exists: the leader creates it). Answers and returns
 * false when not. */
static bool parse_checked(master_t *m, lc_http_exchange_t *ex, const auth_identity_t *who,
                          api_scenario_t *out)
{
    char why[512];
    uint32_t weight;
    lc_scenario_t *sc = &out->sc;
    if (!out->parsed && lc_scenario_parse(out->json, out->len, sc, why, sizeof why) != 0) {
        api_respond_error(ex, 400, "%s", why);
        return false;
    }
    if (who->role == AUTH_ROLE_TENANT && strcmp(sc->tenant, who->tenant) != 0)
        api_respond_error(ex, 403, "forbidden: a token of tenant '%s' cannot create runs for "
                          "tenant '%s'", who->tenant, sc->tenant);
    else if (strcmp(sc->tenant, "default") != 0 &&
             store_tenant_weight(m->store, sc->tenant, &weight) != 0)
        api_respond_error(ex, 400, "tenant: no such tenant '%s'", sc->tenant);
    else
        return true;
    lc_scenario_free(sc);
    return false;
}

/* ---- a script, loaded in the sandbox on a read_pool thread ---- */

/* Compiling a script of up to 1 MiB and running its top level (up to 50 ms, the sandbox's
 * load deadline) is not for the loop. */
typedef struct script_job_s {
    read_job_t job; /* first: the pool hands back this pointer */
    master_t *m;
    lc_http_exchange_t *ex;
    auth_identity_t who;
    api_scenario_cb cb;
    api_scenario_t in; /* the job's own: in.json is in.text */
    int rv;
    char why[512];
} script_job_t;

static void script_work(read_job_t *job, store_t *reader)
{
    script_job_t *j = (script_job_t *)job;
    j->rv = lc_lua_check_scenario(&j->in.sc, j->why, sizeof j->why);
}

static void script_done(read_job_t *job)
{
    script_job_t *j = (script_job_t *)job;
    if (job->cancelled) {
        api_respond_error(j->ex, 503, "the master is shutting down");
    } else if (j->rv != 0) {
        /* Syntax and load errors, a missing function, the top level over its deadline or
         * the memory cap: the tenant's script, refused as any other scenario error. */
        api_respond_error(j->ex, 400, "%s", j->why);
    } else {
        j->cb(j->m, j->ex, &j->who, &j->in); /* takes in */
        free(j);
        return;
    }
    api_scenario_free(&j->in);
    free(j);
}

/* Takes in (parsed, with a script); answers now or once the check is done. */
static void check_script(master_t *m, lc_http_exchange_t *ex, const auth_identity_t *who,
                         api_scenario_t *in, api_scenario_cb cb)
{
    script_job_t *j = calloc(1, sizeof *j);
    char *text = in->text;
    if (text == NULL && (text = malloc(in->len + 1)) != NULL) { /* the body is the request's */
        memcpy(text, in->json, in->len);
        text[in->len] = '\0';
    }
    if (j == NULL || text == NULL) {
        if (text != in->text)
            free(text);
        free(j);
        api_scenario_free(in);
        api_respond_error(ex, 503, "scenario: out of memory");
        return;
    }
    *j = (script_job_t){.m = m, .ex = ex, .who = *who, .cb = cb, .in = *in};
    j->in.text = text;
    j->in.json = text;
    memset(in, 0, sizeof *in); /* the job's now */
    j->job.work = script_work;
    j->job.done = script_done;
    if (read_pool_submit(m->reads, &j->job) != 0) { /* done is not called */
        api_respond_error(ex, 503, "busy: %d reads are waiting; try again", READ_POOL_MAX_QUEUED);
        api_scenario_free(&j->in);
        free(j);
    }
}

/* Parses in and calls cb with it (after the script's check, when it has one), or answers
 * why not (and frees in). */
static void finish(master_t *m, lc_http_exchange_t *ex, const auth_identity_t *who,
                   api_scenario_t *in, api_scenario_cb cb)
{
    if (!parse_checked(m, ex, who, in)) {
        free(in->text);
        return;
    }
    if (in->sc.script != NULL)
        check_script(m, ex, who, in, cb);
    else
        cb(m, ex, who, in);
}

/* ---- YAML, converted on a read_pool thread ---- */

typedef struct yaml_job_s {
    read_job_t job; /* first: the pool hands back this pointer */
    master_t *m;
    lc_http_exchange_t *ex;
    auth_identity_t who;
    api_scenario_cb cb;
    char *yaml;     /* a copy of the body: the thread reads nothing of the loop's */
    size_t len;
    int rv;         /* of the conversion; why says what when not 0 */
    char why[512];
    char *text;     /* the canonical JSON (malloc'd) */
    lc_scenario_t sc; /* text, parsed here: its errors can then name the YAML's lines */
} yaml_job_t;

static void yaml_work(read_job_t *job, store_t *reader)
{
    yaml_job_t *j = (yaml_job_t *)job;
    json_t *doc = NULL;
    j->rv = lc_yaml_to_json(j->yaml, j->len, &doc, j->why, sizeof j->why);
    if (j->rv == 0) {
        fill_tenant(doc, &j->who);
        if ((j->text = canonical_json(doc)) == NULL)
            j->rv = lc_errf(j->why, sizeof j->why, LC_ENOMEM, "scenario: out of memory");
    }
    json_decref(doc);
    if (j->rv == 0 &&
        (j->rv = lc_scenario_parse(j->text, strlen(j->text), &j->sc, j->why, sizeof j->why)) != 0)
        lc_yaml_annotate(j->yaml, j->len, j->why, sizeof j->why);
}

static void yaml_free(yaml_job_t *j)
{
    free(j->yaml);
    free(j->text);
    lc_scenario_free(&j->sc);
    free(j);
}

static void yaml_done(read_job_t *job)
{
    yaml_job_t *j = (yaml_job_t *)job;
    if (job->cancelled) {
        api_respond_error(j->ex, 503, "the master is shutting down");
    } else if (j->rv != 0) {
        api_respond_error(j->ex, j->rv == LC_ENOMEM ? 503 : 400, "%s", j->why);
    } else {
        api_scenario_t in = {.json = j->text, .len = strlen(j->text), .text = j->text,
                             .sc = j->sc, .parsed = true};
        j->text = NULL; /* in's now, and so is the scenario */
        memset(&j->sc, 0, sizeof j->sc);
        finish(j->m, j->ex, &j->who, &in, j->cb);
    }
    yaml_free(j);
}

static void read_yaml(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req,
                      const auth_identity_t *who, api_scenario_cb cb)
{
    yaml_job_t *j = calloc(1, sizeof *j);
    if (j == NULL || (j->yaml = malloc(req->body_len + 1)) == NULL) {
        free(j);
        api_respond_error(ex, 503, "scenario: out of memory");
        return;
    }
    memcpy(j->yaml, req->body, req->body_len);
    j->len = req->body_len;
    j->m = m;
    j->ex = ex;
    j->who = *who;
    j->cb = cb;
    j->job.work = yaml_work;
    j->job.done = yaml_done;
    if (read_pool_submit(m->reads, &j->job) != 0) { /* done is not called */
        api_respond_error(ex, 503, "busy: %d reads are waiting; try again", READ_POOL_MAX_QUEUED);
        yaml_free(j);
    }
}

/* ---- JSON, read on the loop ---- */

/* The body as sent, or given the token's tenant. */
static void read_json(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req,
                      const auth_identity_t *who, api_scenario_cb cb)
{
    api_scenario_t in = {.json = req->body, .len = req->body_len};
    /* Duplicates refused as lc_scenario_parse does, or the re-dump would hide
     * them; a body that does not parse goes on as sent, and lc_scenario_parse
     * says why. */
    json_t *doc = who->role == AUTH_ROLE_TENANT
                      ? json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, NULL)
                      : NULL;
    if (fill_tenant(doc, who) && (in.text = canonical_json(doc)) == NULL) {
        json_decref(doc);
        api_respond_error(ex, 503, "scenario: out of memory");
        return;
    }
    json_decref(doc);
    if (in.text != NULL) {
        in.json = in.text;
        in.len = strlen(in.text);
    }
    finish(m, ex, who, &in, cb);
}

void api_scenario_read(master_t *m, lc_http_exchange_t *ex, const lc_http_request_t *req,
                       const auth_identity_t *who, api_scenario_cb cb)
{
    assert(m != NULL && ex != NULL && req != NULL && who != NULL && cb != NULL);
    if (api_scenario_is_yaml(req->content_type))
        read_yaml(m, ex, req, who, cb);
    else
        read_json(m, ex, req, who, cb);
}

void api_scenario_free(api_scenario_t *s)
{
    lc_scenario_free(&s->sc);
    free(s->text);
    memset(s, 0, sizeof *s);
}
