/* journey_http.c — a journey user's requests: render, send, follow redirects, keep cookies,
 * check and extract. */
#include "journey_http.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "journey.h"
#include "journey_lua.h"
#include "lc_err.h"
#include "lc_extract.h"
#include "lc_json_scan.h"
#include "lc_rng.h"
#include "lc_url_ref.h"
#include "redirect.h"
#include "response_body.h"
#include "stats.h"
#include "user_conns.h"
#include "user_internal.h"

#define REQUEST_MAX (8u << 20) /* a rendered request; a bigger one is a template error */

static const lc_program_t *prog_of(const worker_user_t *u)
{
    return u->run->plan->program;
}

/* The origin of the request in flight (or being rendered). */
static const worker_origin_t *origin_of(const worker_user_t *u)
{
    assert(u->js->origin < u->run->plan->n_origins);
    return &u->run->plan->origins[u->js->origin];
}

static const lc_url_t *url_of(const worker_user_t *u)
{
    return &origin_of(u)->def->url;
}

/* The base path before a step's path: its origin's, unless the path came from a URL. */
static const char *base_of(const worker_user_t *u, const lc_jreq_t *r)
{
    return r->absolute ? "" : url_of(u)->base_path;
}

/* The values of the secret feeder columns of the rows the traced user holds, for the trace
 * to mask. */
static void trace_secrets(const worker_user_t *u, worker_trace_secrets_t *out)
{
    const lc_program_t *p = prog_of(u);
    out->n = 0;
    out->overflow = false;
    for (size_t f = 0; f < p->n_feeders; f++) {
        const lc_feeder_t *fd = &p->feeders[f];
        for (uint32_t c = 0; c < fd->table.n_cols; c++) {
            lc_value_t v;
            if (!fd->secret[c] || !worker_session_get(u->js->session, p, fd->first_slot + c, &v))
                continue;
            if (out->n == WORKER_TRACE_SECRETS_MAX)
                out->overflow = true;
            else
                out->v[out->n++] = v;
        }
    }
}

/* Traces the request line of req, the user's secrets masked. */
static void trace_request(const worker_user_t *u, const lc_buf_t *req, unsigned hop)
{
    worker_trace_secrets_t secrets;
    trace_secrets(u, &secrets);
    worker_trace_request(u->run->plan->trace, req->data, req->len, hop, &secrets);
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Bytes that may not appear in a request target (they would end or split the line). */
static bool clean_target(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] <= 0x20 || s[i] == 0x7f)
            return false;
    return len > 0;
}

static bool clean_value(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] == '\r' || s[i] == '\n' || s[i] == '\0')
            return false;
    return true;
}

static int render_tpl(worker_user_t *u, const lc_tpl_t *t, lc_buf_t *out)
{
    lc_tpl_env_t env;
    const char *missing = NULL;
    worker_journey_env(u, &env, &missing);
    return lc_tpl_render(t, &env, out);
}

/* A json body's typed hole: the variable as its JSON type (strings quoted and escaped). */
static int render_typed(worker_user_t *u, const lc_jbody_part_t *part, lc_buf_t *out)
{
    lc_value_t v;
    if (!worker_session_get(u->js->session, prog_of(u), (uint32_t)part->typed_slot, &v))
        return LC_ENOTFOUND;
    if (v.type != LC_V_STRING)
        return lc_buf_append(out, v.data, v.len);
    int rv = lc_buf_append(out, "\"", 1);
    if (rv == 0)
        rv = render_tpl(u, part->tpl, out);
    return rv == 0 ? lc_buf_append(out, "\"", 1) : rv;
}

static int render_parts(worker_user_t *u, const lc_jbody_part_t *parts, size_t n, lc_buf_t *out)
{
    int rv = 0;
    for (size_t i = 0; rv == 0 && i < n; i++) {
        rv = lc_buf_append(out, parts[i].literal ? parts[i].literal : "", parts[i].literal_len);
        if (rv == 0 && parts[i].typed_slot >= 0)
            rv = render_typed(u, &parts[i], out);
        else if (rv == 0 && parts[i].tpl != NULL)
            rv = render_tpl(u, parts[i].tpl, out);
    }
    return rv;
}

static int render_body(worker_user_t *u, const lc_jreq_t *r, lc_buf_t *out)
{
    out->len = 0;
    int rv = lc_buf_append(out, "", 0);
    if (rv == 0 && r->body_kind == LC_BODY_TEXT)
        rv = render_tpl(u, r->body, out);
    else if (rv == 0)
        rv = render_parts(u, r->parts, r->n_parts, out);
    return rv;
}

/* "METHOD target HTTP/1.1": the step's path and query, or the target kept (a redirect's). */
static int render_line(worker_user_t *u, const lc_jreq_t *r, const char *method, lc_buf_t *out)
{
    const worker_journey_state_t *js = u->js;
    int rv = lc_buf_append(out, method, strlen(method));
    if (rv == 0)
        rv = lc_buf_append(out, " ", 1);
    size_t from = out->len;
    if (rv == 0 && js->target != NULL) {
        rv = lc_buf_append(out, js->target, strlen(js->target));
    } else if (rv == 0) {
        const char *base = base_of(u, r);
        rv = lc_buf_append(out, base, strlen(base));
        if (rv == 0)
            rv = render_tpl(u, r->path, out);
        if (rv == 0)
            rv = render_parts(u, r->query, r->n_query, out);
    }
    if (rv == 0 && !clean_target(out->data + from, out->len - from))
        return LC_EINVAL;
    return rv == 0 ? lc_buf_append(out, " HTTP/1.1\r\n", 11) : rv;
}

static int render_headers(worker_user_t *u, const lc_jreq_t *r, lc_buf_t *out)
{
    const worker_plan_t *pl = u->run->plan;
    static const char agent[] = "User-Agent: loadcluster/" LC_VERSION "\r\n";
    const worker_jreq_plan_t *jp = &pl->jreqs[u->js->req];
    const lc_buf_t *host = &origin_of(u)->host_line;
    int rv = lc_buf_append(out, host->data, host->len);
    if (rv == 0 && !jp->sets_user_agent)
        rv = lc_buf_append(out, agent, sizeof agent - 1);
    if (rv == 0)
        rv = lc_buf_append(out, jp->accept, jp->accept_len);
    for (size_t i = 0; rv == 0 && i < r->n_headers; i++) {
        size_t from;
        const char *name = r->headers[i].name;
        if ((rv = lc_buf_append(out, name, strlen(name))) != 0 ||
            (rv = lc_buf_append(out, ": ", 2)) != 0)
            break;
        from = out->len;
        if ((rv = render_tpl(u, r->headers[i].value, out)) != 0)
            break;
        if (!clean_value(out->data + from, out->len - from))
            return LC_EINVAL;
        rv = lc_buf_append(out, "\r\n", 2);
    }
    return rv;
}

#define COOKIE_PATH_MAX WORKER_COOKIE_PATH_MAX

void worker_journey_target_path(const char *target, size_t len, char p[COOKIE_PATH_MAX])
{
    size_t n = 0;
    while (n < len && n < COOKIE_PATH_MAX - 1 && target[n] != '?' && target[n] != ' ')
        n++;
    memcpy(p, target, n);
    p[n] = '\0';
}

bool worker_journey_cookie(const worker_user_t *u, uint8_t origin, const char *path,
                           const char *name, size_t len, lc_value_t *out)
{
    const worker_session_t *s = u->js->session;
    assert(origin < u->run->plan->n_origins && path[0] == '/');
    const lc_url_t *url = &u->run->plan->origins[origin].def->url;
    return s != NULL &&
           lc_cookie_jar_get(&s->jar, name, len, url->hp.host, path, url->tls, now_ms(), out);
}

/* The path of a rendered request line ("METHOD target HTTP/1.1"). */
static void request_path(const lc_buf_t *req, char p[COOKIE_PATH_MAX])
{
    const char *sp = memchr(req->data, ' ', req->len);
    assert(sp != NULL);
    worker_journey_target_path(sp + 1, req->len - (size_t)(sp + 1 - req->data), p);
}

static int render_cookies(worker_user_t *u, lc_buf_t *out)
{
    const worker_session_t *s = u->js->session;
    const lc_url_t *url = url_of(u); /* the jar sends what RFC 6265 matches to its host */
    if (s == NULL || lc_cookie_jar_bytes(&s->jar) == 0)
        return 0;
    char p[COOKIE_PATH_MAX];
    request_path(out, p);
    size_t mark = out->len, n = 0;
    int rv = lc_buf_append(out, "Cookie: ", 8);
    if (rv == 0)
        rv = lc_cookie_jar_header(&s->jar, url->hp.host, p, url->tls, now_ms(), out, &n);
    if (rv == 0 && n == 0)
        out->len = mark;
    else if (rv == 0)
        rv = lc_buf_append(out, "\r\n", 2);
    return rv;
}

/* The method of the request being sent: a 301/302/303 redirect turned it into GET. */
static const char *method_now(const worker_journey_state_t *js, const lc_jreq_t *r)
{
    assert(!js->redirect_get || js->target != NULL); /* a hop's target is kept */
    return js->redirect_get ? "GET" : r->method;
}

/* The whole request into out. LC_ENOTFOUND or LC_EINVAL: a template error. */
static int render_request(worker_user_t *u, const lc_jreq_t *r, lc_buf_t *out)
{
    lc_buf_t *body = &u->run->engine->body_scratch;
    const char *method = method_now(u->js, r);
    bool with_body = r->body_kind != LC_BODY_NONE && !u->js->redirect_get;
    out->len = 0;
    int rv = render_line(u, r, method, out);
    if (rv == 0)
        rv = render_headers(u, r, out);
    if (rv == 0 && r->cookies)
        rv = render_cookies(u, out);
    if (rv == 0 && with_body)
        rv = render_body(u, r, body);
    if (rv == 0 && with_body && !r->sets_content_type && r->body_kind != LC_BODY_TEXT)
        rv = lc_buf_appendf(out, "Content-Type: %s\r\n", r->body_kind == LC_BODY_JSON
                                                              ? "application/json"
                                                              : "application/x-www-form-urlencoded");
    if (rv == 0 && with_body)
        rv = lc_buf_appendf(out, "Content-Length: %zu\r\n\r\n", body->len);
    else if (rv == 0)
        rv = lc_buf_append(out, "\r\n", 2);
    if (rv == 0 && with_body)
        rv = lc_buf_append(out, body->data, body->len);
    if (rv == 0 && out->len > REQUEST_MAX)
        rv = LC_EINVAL;
    return rv;
}

/* A path that would not render alike again is kept with the request, for the default path
 * of the cookies its response sets. */
static int keep_target(worker_user_t *u, const lc_jreq_t *r, const lc_buf_t *req)
{
    if (!r->cookies || r->path_repeatable || u->js->target != NULL)
        return 0;
    char p[COOKIE_PATH_MAX];
    request_path(req, p);
    return (u->js->target = strdup(p)) != NULL ? 0 : LC_ENOMEM;
}

/* The request is rendered into the engine's scratch buffer and sent from there when the
 * connection is idle; one that must wait for its connection is copied into u->req. */
static void send_now(worker_user_t *u)
{
    const lc_jreq_t *r = &prog_of(u)->reqs[u->js->req];
    lc_buf_t *req = &u->run->engine->req_scratch;
    int rv = worker_user_conn_open(u, u->js->origin);
    if (rv == 0)
        rv = render_request(u, r, req);
    if (rv == 0)
        rv = keep_target(u, r, req);
    if (rv == 0 && worker_user_conn(u)->state != WORKER_CONN_IDLE) {
        u->req.len = 0;
        rv = lc_buf_append(&u->req, req->data, req->len);
    }
    if (rv != 0) {
        /* Nothing was sent: a template error (or out of memory) on the step's endpoint. */
        if (u->run->plan->trace != NULL)
            worker_trace_note(u->run->plan->trace, "%s: cannot render the request (an unset "
                              "variable, a CR or LF in a header, a space in the path): template "
                              "error", r->path_json);
        if (rv == LC_ENOMEM)
            worker_stats_error(u->run->stats, r->endpoint, WORKER_ERR_ABORTED);
        else
            worker_stats_error_note(u->run->stats, r->endpoint, WORKER_ERR_TEMPLATE,
                                    "%s: cannot render the request (an unset variable, a CR or "
                                    "LF in a header, a space in the path)", r->path_json);
        lc_buf_free(&u->req);
        free(u->js->target);
        u->js->target = NULL;
        if (worker_journey_fail(u, r->on_error))
            worker_user_wait(u, WORKER_YIELD_MS); /* a step that never renders: not in a loop */
        return;
    }
    if (u->run->plan->trace != NULL)
        trace_request(u, req, u->js->hops);
    worker_user_connect(u);
}

void worker_journey_request(worker_user_t *u, uint32_t req)
{
    worker_journey_state_t *js = u->js;
    js->req = req;
    js->origin = prog_of(u)->reqs[req].origin;
    js->hops = 0;
    js->redirect_get = false;
    free(js->target);
    js->target = NULL;
    send_now(u);
}

static const worker_hdr_want_t every_header = {.all = true};

void worker_journey_out(worker_user_t *u, worker_req_out_t *out)
{
    const worker_journey_state_t *js = u->js;
    const lc_buf_t *req = u->req.data != NULL ? &u->req : &u->run->engine->req_scratch;
    if (js->script_req) {
        *out = (worker_req_out_t){.capture = true, .want = &every_header};
        worker_lua_out(u, &out->head, &out->timeout_ms);
    } else {
        const lc_jreq_t *r = &prog_of(u)->reqs[js->req];
        *out = (worker_req_out_t){.head = strcmp(method_now(js, r), "HEAD") == 0,
                                  .capture = r->needs_body,
                                  .timeout_ms = r->timeout_ms,
                                  .want = &u->run->plan->jreqs[js->req].want};
    }
    out->data = req->data;
    out->len = req->len;
}

void worker_journey_send(worker_user_t *u)
{
    worker_req_out_t out;
    worker_journey_out(u, &out);
    worker_conn_send_out(worker_user_conn(u), &out);
    lc_buf_free(&u->req); /* the transport copied what it could not send at once */
}

/* The path of the request answered: the target kept, or the step's path rendered again (it
 * renders alike: keep_target kept the others); a script's (r NULL) is always kept. */
static void answered_path(worker_user_t *u, const lc_jreq_t *r, char p[COOKIE_PATH_MAX])
{
    const char *t = u->js->target;
    lc_buf_t *b = &u->run->engine->req_scratch; /* free between sends */
    const char *base = r != NULL ? base_of(u, r) : "";
    b->len = 0;
    if (t == NULL && (r == NULL || lc_buf_append(b, base, strlen(base)) != 0 ||
                      render_tpl(u, r->path, b) != 0))
        t = "/"; /* out of memory, or a variable unset since: the cookie's path is the root */
    else if (t == NULL)
        t = b->data;
    worker_journey_target_path(t, strlen(t), p);
    if (p[0] != '/') /* cannot happen (targets start with '/'); RFC 6265's default: the root */
        memcpy(p, "/", 2);
}

/* The Set-Cookies of res into the jar; their default path is that of target (tlen bytes, a
 * script's request), else of the step r's request. */
static void store_cookies(worker_user_t *u, const lc_jreq_t *r, const char *target, size_t tlen,
                          const worker_conn_result_t *res)
{
    const lc_url_t *url = url_of(u); /* the origin that answered */
    const char *name, *value;
    size_t vlen, pos = 0;
    char p[COOKIE_PATH_MAX] = "";
    while (worker_conn_header_next(res, &pos, &name, &value, &vlen)) {
        if (strcmp(name, "set-cookie") != 0)
            continue;
        worker_session_t *s = worker_journey_session(u);
        if (s == NULL)
            return;
        if (p[0] == '\0' && target != NULL) /* once, for the cookies' default path */
            worker_journey_target_path(target, tlen, p);
        else if (p[0] == '\0')
            answered_path(u, r, p);
        /* A malformed or oversized cookie is ignored, as browsers do. */
        lc_cookie_jar_store(&s->jar, value, vlen, url->hp.host, p, url->tls, now_ms());
    }
}

static bool find_header(const worker_conn_result_t *res, const char *want, const char **value,
                        size_t *len)
{
    const char *name;
    size_t pos = 0;
    while (worker_conn_header_next(res, &pos, &name, value, len))
        if (strcmp(name, want) == 0)
            return true;
    return false;
}

/* A Location of one of the scenario's origins made a request target in *out (malloc'd) and
 * that origin in *origin: an absolute URL, a path on the origin answered, or (with r, the step
 * answered, or script_base) a reference relative to that request's path. False: an origin
 * outside the list, or not a usable location. */
static bool listed_target(worker_user_t *u, const lc_jreq_t *r, const char *script_base,
                          const char *loc, size_t len, char **out, uint8_t *origin)
{
    char base[COOKIE_PATH_MAX] = "/", target[2 * COOKIE_PATH_MAX];
    if (r != NULL)
        answered_path(u, r, base);
    else if (script_base != NULL)
        worker_journey_target_path(script_base, strlen(script_base), base);
    int o = lc_origins_locate(&u->run->plan->scenario.origins, *origin,
                              r != NULL || script_base != NULL ? base : NULL, loc, len, target,
                              sizeof target);
    if (o < 0 || !clean_target(target, strlen(target)) || (*out = strdup(target)) == NULL)
        return false;
    *origin = (uint8_t)o;
    return true;
}

bool worker_journey_listed_url(worker_user_t *u, const char *url, size_t len, char **out,
                               uint8_t *origin)
{
    *origin = 0; /* a network-path reference takes target's scheme */
    return listed_target(u, NULL, NULL, url, len, out, origin);
}

bool worker_journey_script_location(worker_user_t *u, const char *base, const char *loc,
                                    size_t len, char **out, uint8_t *origin)
{
    return listed_target(u, NULL, base, loc, len, out, origin);
}

/* A redirect to follow: counts this hop and sends the next. Returns the error kind that
 * ends the request instead, or WORKER_KIND_OK once the next hop is on its way. */
static int follow(worker_user_t *u, const lc_jreq_t *r, const worker_conn_result_t *res)
{
    worker_journey_state_t *js = u->js;
    const char *loc;
    size_t len;
    char *target = NULL;
    uint8_t origin = js->origin;
    if (!worker_redirect_may_follow(js->hops, r->follow_redirects))
        return WORKER_ERR_REDIRECT; /* too many */
    if (!find_header(res, "location", &loc, &len) ||
        !listed_target(u, r, NULL, loc, len, &target, &origin))
        return WORKER_ERR_REDIRECT; /* another origin than the scenario's, or no location */
    worker_stats_record(u->run->stats, r->endpoint, WORKER_KIND_OK, res->latency_us, res->bytes);
    if (u->run->plan->trace != NULL)
        worker_trace_response(u->run->plan->trace, res->status, res->latency_us, res->bytes, NULL);
    worker_conn_release(worker_user_conn(u));
    free(js->target);
    js->target = target;
    js->origin = origin; /* the next hop's, maybe another of the scenario's */
    /* Of the request this answers: after a 303, a 307 keeps the GET. */
    js->redirect_get = js->redirect_get || worker_redirect_to_get(res->status, r->method);
    js->hops++;
    send_now(u);
    return WORKER_KIND_OK;
}

static int classify_status(const lc_jreq_t *r, const worker_conn_result_t *res)
{
    if (r->n_expect_status > 0) {
        size_t i = 0;
        while (i < r->n_expect_status && r->expect_status[i] != res->status)
            i++;
        if (i == r->n_expect_status)
            return WORKER_ERR_STATUS;
    } else if (res->status >= 400) {
        return WORKER_ERR_STATUS;
    }
    return WORKER_KIND_OK;
}

/* The body a step reads (decoded): data, len. */
typedef struct body_s {
    const char *data;
    size_t len;
} body_t;

/* The cookie the jar would send back to the URL answered (path, on the origin answered). */
static int extract_cookie(worker_user_t *u, const lc_jextract_t *e, const char *path,
                          lc_buf_t *scratch)
{
    lc_value_t c;
    if (worker_journey_cookie(u, u->js->origin, path, e->name, strlen(e->name), &c))
        return lc_buf_append(scratch, c.data, c.len);
    if (u->run->plan->trace != NULL)
        worker_trace_note(u->run->plan->trace, "extract: no cookie %s that a request to %s%s "
                          "would send", e->name, url_of(u)->hp.host, path);
    return LC_ENOTFOUND;
}

/* One extract's value into scratch: 0, LC_ENOTFOUND or another error. path: the path of the
 * URL the response answered. */
static int extract_one(worker_user_t *u, const lc_jextract_t *e, const worker_conn_result_t *res,
                       const body_t *body, const char *path, lc_buf_t *scratch, uint8_t *type)
{
    const char *v;
    size_t len;
    *type = LC_V_STRING;
    switch (e->kind) {
    case LC_EXTRACT_BODY:
        assert(body != NULL); /* the request needs_body */
        return lc_extractor_run(e->x, body->data, body->len, &u->run->engine->rng, scratch, type);
    case LC_EXTRACT_HEADER:
        if (!find_header(res, e->name, &v, &len))
            return LC_ENOTFOUND;
        return lc_buf_append(scratch, v, len);
    case LC_EXTRACT_COOKIE:
        return extract_cookie(u, e, path, scratch);
    default:
        *type = LC_V_NUMBER;
        return lc_buf_appendf(scratch, "%d", res->status);
    }
}

static void trace_value(worker_user_t *u, uint32_t slot, bool found)
{
    lc_value_t v = {0};
    char name[160];
    worker_trace_secrets_t secrets;
    trace_secrets(u, &secrets);
    found = found && worker_session_get(u->js->session, prog_of(u), slot, &v);
    worker_trace_value(u->run->plan->trace, lc_program_slot_name(prog_of(u), slot, name,
                                                                 sizeof name),
                       &v, found, &secrets);
}

/* Every extract of r; WORKER_ERR_EXTRACT when a required one missed. */
static int extract_all(worker_user_t *u, const lc_jreq_t *r, const worker_conn_result_t *res,
                       const body_t *body)
{
    lc_buf_t *scratch = &u->run->engine->body_scratch;
    int kind = WORKER_KIND_OK;
    char path[COOKIE_PATH_MAX] = "/";
    /* The path answered, before an extract sets a variable its rendering may read. */
    for (size_t i = 0; i < r->n_extracts; i++)
        if (r->extracts[i].kind == LC_EXTRACT_COOKIE) {
            answered_path(u, r, path);
            break;
        }
    for (size_t i = 0; i < r->n_extracts; i++) {
        const lc_jextract_t *e = &r->extracts[i];
        worker_session_t *s = worker_journey_session(u);
        uint8_t type;
        scratch->len = 0;
        int rv = s == NULL ? LC_ENOMEM : extract_one(u, e, res, body, path, scratch, &type);
        if (rv == 0)
            rv = worker_session_set(s, e->slot, scratch->data ? scratch->data : "", scratch->len,
                                    type);
        else if (e->has_default && s != NULL) /* nothing matched: the default */
            rv = worker_session_set(s, e->slot, e->default_value, e->default_len, e->default_type);
        if (u->run->plan->trace != NULL)
            trace_value(u, e->slot, rv == 0);
        if (rv != 0 && (e->required || rv == LC_ENOMEM))
            kind = WORKER_ERR_EXTRACT;
    }
    return kind;
}

/* The checks and extracts that read the body, on the body decoded (only now, and only for
 * a step that reads it): one that cannot be decoded is error kind parse. */
static int read_body(worker_user_t *u, const lc_jreq_t *r, const worker_conn_result_t *res)
{
    worker_body_t b;
    body_t body;
    const char *why;
    int kind = WORKER_KIND_OK;
    worker_body_open(&b, res, &u->run->engine->pool);
    if (worker_body_decoded(&b, &body.data, &body.len, &why) != 0) {
        if (u->run->plan->trace != NULL)
            worker_trace_note(u->run->plan->trace, "%s: %s body: %s: parse error", r->path_json,
                              worker_coding_name(worker_body_coding(res)), why);
        kind = WORKER_ERR_PARSE;
    } else if (r->expect_body_contains != NULL &&
               memmem(body.data, body.len, r->expect_body_contains,
                      strlen(r->expect_body_contains)) == NULL) {
        kind = WORKER_ERR_EXPECT;
    }
    if (kind == WORKER_KIND_OK)
        kind = extract_all(u, r, res, &body);
    worker_body_close(&b);
    return kind;
}

/* The outcome of a response that is not a redirect to follow. */
static int outcome(worker_user_t *u, const lc_jreq_t *r, const worker_conn_result_t *res)
{
    int kind = classify_status(r, res);
    if (kind != WORKER_KIND_OK)
        return kind;
    return r->needs_body ? read_body(u, r, res) : extract_all(u, r, res, NULL);
}

/* The latency to record: the open model's first request of an iteration counts from when the
 * iteration was due (the time it waited for a free user or a busy loop is latency too). */
uint64_t worker_journey_latency(worker_user_t *u, const worker_conn_result_t *res)
{
    worker_journey_state_t *js = u->js;
    bool first = js->first_request;
    js->first_request = false;
    if (!first || res->latency_us == WORKER_NO_LATENCY)
        return res->latency_us;
    uint64_t sent = res->sent_ns;
    return res->latency_us + (sent > js->iter_start_ns ? (sent - js->iter_start_ns) / 1000u : 0);
}

void worker_journey_done(worker_user_t *u, const worker_conn_result_t *res)
{
    if (u->js->script_req) {
        worker_lua_done(u, res);
        return;
    }
    worker_journey_state_t *js = u->js;
    const lc_jreq_t *r = &prog_of(u)->reqs[js->req];
    int kind = res->kind;
    if (kind == WORKER_KIND_OK && r->cookies)
        store_cookies(u, r, NULL, 0, res);
    if (kind == WORKER_KIND_OK && r->follow_redirects > 0 && worker_redirect_status(res->status) &&
        !worker_user_ending_now(u)) {
        kind = follow(u, r, res);
        if (kind == WORKER_KIND_OK)
            return;
    } else if (kind == WORKER_KIND_OK) {
        if (u->run->plan->trace != NULL) /* the answer first, then what was taken from it */
            worker_trace_response(u->run->plan->trace, res->status, res->latency_us, res->bytes,
                                  NULL);
        kind = outcome(u, r, res);
        if (u->run->plan->trace != NULL && kind != WORKER_KIND_OK)
            worker_trace_note(u->run->plan->trace, "%s: error %s", r->path_json,
                              worker_err_kind_name(kind));
    }
    worker_stats_record(u->run->stats, r->endpoint, kind, worker_journey_latency(u, res),
                        res->bytes);
    if (u->run->plan->trace != NULL && res->kind != WORKER_KIND_OK)
        worker_trace_response(u->run->plan->trace, 0, res->latency_us, res->bytes,
                              worker_err_kind_name(kind));
    else if (u->run->plan->trace != NULL && res->kind == WORKER_KIND_OK && kind == WORKER_ERR_REDIRECT)
        worker_trace_response(u->run->plan->trace, res->status, res->latency_us, res->bytes,
                              worker_err_kind_name(kind));
    worker_conn_release(worker_user_conn(u));
    lc_buf_free(&u->req); /* a copy never sent: the connection failed */
    free(js->target);
    js->target = NULL;
    if (worker_user_ending(u) && js->section != WORKER_SECTION_STOP) {
        worker_journey_wind_down(u);
        return;
    }
    if (worker_user_ending_now(u)) { /* the stop deadline passed */
        worker_user_finish(u);
        return;
    }
    bool go_on = kind == WORKER_KIND_OK;
    if (go_on)
        js->pc++;
    else
        go_on = worker_journey_fail(u, r->on_error);
    if (go_on)
        worker_journey_resume(u);
}

/* ---- requests a script builds (journey_lua_api.c) ---- */

/* "METHOD target HTTP/1.1", Host, User-Agent, the script's headers, cookies, body. */
static int render_script(worker_user_t *u, const worker_script_req_t *sr, lc_buf_t *out)
{
    static const char agent[] = "User-Agent: loadcluster/" LC_VERSION "\r\n";
    out->len = 0;
    int rv = lc_buf_append(out, sr->method, strlen(sr->method)); /* not appendf: per request */
    if (rv == 0)
        rv = lc_buf_append(out, " ", 1);
    if (rv == 0)
        rv = lc_buf_append(out, sr->target, sr->target_len);
    if (rv == 0)
        rv = lc_buf_append(out, " HTTP/1.1\r\n", 11);
    if (rv == 0)
        rv = lc_buf_append(out, origin_of(u)->host_line.data, origin_of(u)->host_line.len);
    if (rv == 0 && !sr->sets_user_agent)
        rv = lc_buf_append(out, agent, sizeof agent - 1);
    if (rv == 0)
        rv = lc_buf_append(out, sr->headers, sr->headers_len);
    if (rv == 0 && sr->cookies)
        rv = render_cookies(u, out);
    if (rv == 0 && sr->body != NULL)
        rv = lc_buf_appendf(out, "Content-Length: %zu\r\n\r\n", sr->body_len);
    else if (rv == 0)
        rv = lc_buf_append(out, "\r\n", 2);
    if (rv == 0 && sr->body != NULL)
        rv = lc_buf_append(out, sr->body, sr->body_len);
    if (rv == 0 && out->len > REQUEST_MAX)
        rv = LC_ETOOBIG;
    return rv;
}

int worker_journey_send_script(worker_user_t *u, const worker_script_req_t *sr)
{
    worker_journey_state_t *js = u->js;
    lc_buf_t *req = &u->run->engine->req_scratch;
    assert(!js->script_req && u->phase != WORKER_USER_REQUEST);
    assert(sr->origin < u->run->plan->n_origins);
    free(js->target);
    js->target = NULL;
    js->origin = sr->origin;
    int rv = worker_user_conn_open(u, js->origin);
    if (rv == 0)
        rv = clean_target(sr->target, sr->target_len) ? render_script(u, sr, req) : LC_EINVAL;
    if (rv == 0 && worker_user_conn(u)->state != WORKER_CONN_IDLE) {
        u->req.len = 0;
        rv = lc_buf_append(&u->req, req->data, req->len);
    }
    if (rv != 0) {
        lc_buf_free(&u->req);
        return rv;
    }
    if (u->run->plan->trace != NULL)
        trace_request(u, req, 0);
    js->script_req = true;
    worker_user_connect(u);
    return 0;
}

void worker_journey_script_answered(worker_user_t *u, const worker_conn_result_t *res,
                                    const char *target, size_t target_len)
{
    worker_journey_state_t *js = u->js;
    assert(js->script_req);
    js->script_req = false;
    if (target != NULL && res->kind == WORKER_KIND_OK)
        store_cookies(u, NULL, target, target_len, res);
    if (u->run->plan->trace != NULL)
        worker_trace_response(u->run->plan->trace, res->status, res->latency_us, res->bytes,
                              res->kind == WORKER_KIND_OK ? NULL : worker_err_kind_name(res->kind));
    lc_buf_free(&u->req); /* a copy never sent: the connection failed */
    free(js->target);
    js->target = NULL;
}
