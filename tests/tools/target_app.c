/* target_app.c — lc_target's app: routing, signed credentials and the handlers of its paths
 * (documented in target_app.h). Nothing here is stored between requests. */
#include "target_app.h"

#include <assert.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>
#include <llhttp.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "lc_err.h"
#include "lc_utf8.h"
#include "target.h"
#include "target_app_enc.h"

#define JSON_TYPE "application/json"
#define TEXT_TYPE "text/plain"
#define USER_MAX 64
#define MAC_BYTES 16
#define MAC_HEX (2 * MAC_BYTES)
#define CREDENTIAL_MIN (3 + 1 + 1 + MAC_HEX) /* "t1." + a one-letter user + "." + MAC */
#define TOKEN_LEN_MAX 4096
#define ITEMS_MAX 1000
#define ITEMS_DEFAULT 10
#define ITEM_ID_MAX 4294967295ul
#define REDIRECTS_MAX 100

/* The methods a route takes. */
enum { M_GET = 1, M_POST = 2, M_ANY = 4 };

typedef struct app_ctx_s {
    const app_key_t *key;
    int method;
    app_span_t url, path, query;
    const app_req_t *req;
} app_ctx_t;

typedef int (*serve_fn)(const app_ctx_t *cx, app_resp_t *out);

/* ---- building answers ---- */

static int add_header(app_resp_t *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int add_header(app_resp_t *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rv = lc_buf_vappendf(&out->headers, fmt, ap);
    va_end(ap);
    return rv;
}

static int respond(app_resp_t *out, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int respond(app_resp_t *out, int status, const char *fmt, ...)
{
    va_list ap;
    out->status = status;
    va_start(ap, fmt);
    int rv = lc_buf_vappendf(&out->body, fmt, ap);
    va_end(ap);
    return rv;
}

/* why is our own text: no quote or backslash to escape. */
static int json_error(app_resp_t *out, int status, const char *why)
{
    assert(strpbrk(why, "\"\\") == NULL);
    return respond(out, status, "{\"error\":\"%s\"}", why);
}

/* Appends s as the inside of a JSON string: quotes, backslashes and control characters
 * escaped, valid UTF-8 kept, any other byte as U+FFFD; ASCII letters lowered when lower. */
static int json_escape(lc_buf_t *b, app_span_t s, bool lower)
{
    int rv = 0;
    for (size_t i = 0; i < s.len && rv == 0;) {
        unsigned char c = (unsigned char)s.at[i];
        size_t n = lc_utf8_seq_len(s.at + i, s.len - i);
        if (c == '"' || c == '\\')
            rv = lc_buf_appendf(b, "\\%c", c);
        else if (c == '\n')
            rv = lc_buf_append(b, "\\n", 2);
        else if (c < 0x20)
            rv = lc_buf_appendf(b, "\\u%04x", c);
        else if (n == 0)
            rv = lc_buf_append(b, "\\ufffd", 6);
        else if (n == 1 && lower && c >= 'A' && c <= 'Z')
            rv = lc_buf_appendf(b, "%c", c - 'A' + 'a');
        else
            rv = lc_buf_append(b, s.at + i, n);
        i += n ? n : 1;
    }
    return rv;
}

/* Appends "s" (quoted and escaped). */
static int json_str(lc_buf_t *b, app_span_t s)
{
    int rv = lc_buf_append(b, "\"", 1);
    rv = rv ? rv : json_escape(b, s, false);
    return rv ? rv : lc_buf_append(b, "\"", 1);
}

static app_span_t span_of(const char *s)
{
    return (app_span_t){s, strlen(s)};
}

static bool span_eq(app_span_t a, app_span_t b)
{
    return a.len == b.len && memcmp(a.at, b.at, a.len) == 0;
}

static bool digits(app_span_t s, unsigned long max, unsigned long *out)
{
    return parse_digits(s.at, s.len, max, out);
}

/* ---- credentials: "t1.<user>.<hex>" tokens and "s1.<user>.<hex>" session ids ---- */

int app_key_init(app_key_t *key)
{
    return RAND_bytes(key->bytes, APP_KEY_LEN) == 1 ? 0 : LC_EIO;
}

static bool user_ok(app_span_t u)
{
    if (u.len == 0 || u.len > USER_MAX)
        return false;
    for (size_t i = 0; i < u.len; i++) {
        char c = u.at[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum && strchr("._@-", c) == NULL)
            return false;
    }
    return true;
}

/* The last MAC a thread computed: load tests log many users in under one name, and an HMAC
 * per request would make this target, not the generator, what a benchmark measures. */
typedef struct mac_memo_s {
    const app_key_t *key;
    char kind;
    size_t len;
    char user[USER_MAX];
    char hex[MAC_HEX + 1];
} mac_memo_t;

static _Thread_local mac_memo_t mac_memo[2]; /* token, session */

/* The hex of the user's MAC for kind 't' (token) or 's' (session): neither passes for the
 * other. */
static void mac_hex(const app_key_t *key, char kind, app_span_t user, char out[MAC_HEX + 1])
{
    static const char digits[] = "0123456789abcdef";
    unsigned char msg[2 + USER_MAX], md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    assert(user_ok(user));
    mac_memo_t *m = &mac_memo[kind == 't' ? 0 : 1];
    if (m->key == key && m->kind == kind && m->len == user.len &&
        memcmp(m->user, user.at, user.len) == 0) {
        memcpy(out, m->hex, MAC_HEX + 1);
        return;
    }
    msg[0] = (unsigned char)kind;
    msg[1] = ':';
    memcpy(msg + 2, user.at, user.len);
    if (HMAC(EVP_sha256(), key->bytes, APP_KEY_LEN, msg, 2 + user.len, md, &mdlen) == NULL ||
        mdlen < MAC_BYTES)
        memset(md, 0, sizeof md); /* cannot happen with SHA-256; verifies nothing then */
    for (size_t i = 0; i < MAC_BYTES; i++) {
        out[2 * i] = digits[md[i] >> 4];
        out[2 * i + 1] = digits[md[i] & 15];
    }
    out[MAC_HEX] = '\0';
    *m = (mac_memo_t){.key = key, .kind = kind, .len = user.len};
    memcpy(m->user, user.at, user.len);
    memcpy(m->hex, out, MAC_HEX + 1);
}

static size_t credential_len(app_span_t user)
{
    return 3 + user.len + 1 + MAC_HEX;
}

static int credential_append(lc_buf_t *b, const app_key_t *key, char kind, app_span_t user)
{
    char hex[MAC_HEX + 1];
    mac_hex(key, kind, user, hex);
    return lc_buf_appendf(b, "%c1.%.*s.%s", kind, (int)user.len, user.at, hex);
}

/* The user a credential of kind was issued to; false when it is not one of ours. A token may
 * carry 'x' padding after its MAC (hex has no 'x'). */
static bool credential_user(const app_key_t *key, char kind, app_span_t text, app_span_t *user)
{
    char hex[MAC_HEX + 1];
    while (kind == 't' && text.len > 0 && text.at[text.len - 1] == 'x')
        text.len--;
    if (text.len < CREDENTIAL_MIN || text.at[0] != kind ||
        memcmp(text.at + 1, "1.", 2) != 0 || text.at[text.len - MAC_HEX - 1] != '.')
        return false;
    *user = (app_span_t){text.at + 3, text.len - 3 - 1 - MAC_HEX};
    if (!user_ok(*user))
        return false;
    mac_hex(key, kind, *user, hex);
    return CRYPTO_memcmp(hex, text.at + text.len - MAC_HEX, MAC_HEX) == 0;
}

/* NULL and the token's user, or why the request has no valid bearer token. */
static const char *bearer_user(const app_ctx_t *cx, app_span_t *user)
{
    app_span_t v;
    if (!app_req_header(cx->req, "authorization", &v) || v.len < 7 ||
        strncasecmp(v.at, "bearer ", 7) != 0)
        return "missing bearer token";
    v.at += 7, v.len -= 7;
    while (v.len > 0 && v.at[0] == ' ')
        v.at++, v.len--;
    while (v.len > 0 && v.at[v.len - 1] == ' ')
        v.len--;
    return credential_user(cx->key, 't', v, user) ? NULL : "invalid token";
}

/* NULL and the session's user, or why the request has no valid session cookie. */
static const char *session_user(const app_ctx_t *cx, app_span_t *user)
{
    app_span_t sid;
    if (!app_req_cookie(cx->req, "session", &sid))
        return "missing session cookie";
    return credential_user(cx->key, 's', sid, user) ? NULL : "invalid session";
}

/* ---- /login ---- */

/* A body whose first non-blank byte is '{' is JSON, whatever its Content-Type says (curl -d
 * labels JSON as a form); any other is a form. */
static bool body_is_json(const app_req_t *r)
{
    for (size_t i = 0; i < r->body.len; i++) {
        char c = r->body.data[i];
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n')
            return c == '{';
    }
    return false;
}

/* Copies a JSON string member into out (a missing one stays empty). NULL, or why not. */
static const char *json_member(const json_t *obj, const char *name, lc_buf_t *out)
{
    const json_t *v = json_object_get(obj, name);
    if (v == NULL)
        return NULL;
    if (!json_is_string(v))
        return "user and password must be strings";
    return lc_buf_append(out, json_string_value(v), json_string_length(v)) == 0 ? NULL
                                                                               : "out of memory";
}

/* Reads user and password from a JSON or form body. NULL, or why the body is bad (400). */
static const char *login_fields(const app_req_t *r, lc_buf_t *user, lc_buf_t *pass)
{
    app_span_t body = {r->body.data ? r->body.data : "", r->body.len}, v;
    if (!body_is_json(r)) {
        if (app_query_get(body, "user", &v) && app_url_decode(v, user) != 0)
            return "body: bad percent-encoding";
        if (app_query_get(body, "password", &v) && app_url_decode(v, pass) != 0)
            return "body: bad percent-encoding";
        return NULL;
    }
    json_error_t err;
    json_t *root = json_loadb(body.at, body.len, JSON_REJECT_DUPLICATES, &err);
    const char *why = root == NULL ? "body: invalid JSON"
                      : !json_is_object(root) ? "body: expected a JSON object"
                                              : json_member(root, "user", user);
    why = why ? why : json_member(root, "password", pass);
    json_decref(root);
    return why;
}

/* The 200: the token (padded to the ?token_len= asked for) and the session cookie. */
static int login_ok(const app_ctx_t *cx, app_span_t user, app_resp_t *out)
{
    app_span_t v;
    unsigned long want = 0;
    if (app_query_get(cx->query, "token_len", &v)) {
        if (!digits(v, TOKEN_LEN_MAX, &want))
            return json_error(out, 400, "token_len: a number up to 4096");
        if (want < credential_len(user))
            return json_error(out, 400, "token_len: below the token's own length");
    }
    lc_buf_t token = {0};
    int rv = credential_append(&token, cx->key, 't', user);
    while (rv == 0 && token.len < want)
        rv = lc_buf_append(&token, "x", 1);
    rv = rv ? rv : add_header(out, "Set-Cookie: session=");
    rv = rv ? rv : credential_append(&out->headers, cx->key, 's', user);
    rv = rv ? rv : add_header(out, "; Path=/; HttpOnly\r\n");
    rv = rv ? rv : respond(out, 200, "{\"token\":\"%s\",\"user\":", token.data);
    rv = rv ? rv : json_str(&out->body, user);
    rv = rv ? rv : lc_buf_append(&out->body, "}", 1);
    lc_buf_free(&token);
    return rv;
}

static int serve_login(const app_ctx_t *cx, app_resp_t *out)
{
    lc_buf_t user = {0}, pass = {0};
    const char *why = login_fields(cx->req, &user, &pass);
    app_span_t u = {user.data, user.len}, p = {pass.data, pass.len};
    int rv;
    if (why != NULL)
        rv = json_error(out, 400, why);
    else if (u.len == 0 || p.len == 0)
        rv = json_error(out, 401, "user and password are required");
    else if (span_eq(p, span_of("wrong")))
        rv = json_error(out, 401, "wrong password");
    else if (!user_ok(u))
        rv = json_error(out, 400, "user: 1 to 64 of A-Z a-z 0-9 . _ @ -");
    else
        rv = login_ok(cx, u, out);
    lc_buf_free(&user);
    lc_buf_free(&pass);
    return rv;
}

/* ---- /me, /items, /cart, /pay, /logout ---- */

static int serve_me(const app_ctx_t *cx, app_resp_t *out)
{
    app_span_t token_user, sid_user;
    const char *why = bearer_user(cx, &token_user);
    why = why ? why : session_user(cx, &sid_user);
    if (why == NULL && !span_eq(token_user, sid_user))
        why = "token and session are for different users";
    if (why != NULL)
        return json_error(out, 401, why);
    int rv = respond(out, 200, "{\"user\":");
    rv = rv ? rv : json_str(&out->body, token_user);
    return rv ? rv : lc_buf_append(&out->body, "}", 1);
}

static int serve_items(const app_ctx_t *cx, app_resp_t *out)
{
    app_span_t v;
    unsigned long n = ITEMS_DEFAULT;
    if (app_query_get(cx->query, "n", &v) && !digits(v, ITEMS_MAX, &n))
        return json_error(out, 400, "n: a number from 0 to 1000");
    int rv = respond(out, 200, "{\"items\":[");
    for (unsigned long id = 1; id <= n && rv == 0; id++)
        rv = lc_buf_appendf(&out->body, "%s{\"id\":%lu,\"name\":\"item-%lu\"}", id > 1 ? "," : "",
                            id, id);
    return rv ? rv : lc_buf_appendf(&out->body, "],\"count\":%lu}", n);
}

static int serve_item(const app_ctx_t *cx, app_resp_t *out)
{
    app_span_t text = {cx->path.at + 7, cx->path.len - 7}; /* after "/items/" */
    unsigned long id;
    if (!digits(text, ITEM_ID_MAX, &id) || id == 0)
        return json_error(out, 404, "no such item");
    return respond(out, 200, "{\"id\":%lu,\"name\":\"item-%lu\"}", id, id);
}

/* The answer when the session cookie is missing or invalid; 0 with *done false otherwise. */
static int need_session(const app_ctx_t *cx, app_resp_t *out, bool *done)
{
    app_span_t user;
    const char *why = session_user(cx, &user);
    *done = why != NULL;
    return why ? json_error(out, 401, why) : 0;
}

static int serve_cart(const app_ctx_t *cx, app_resp_t *out)
{
    bool done;
    int rv = need_session(cx, out, &done);
    if (done || rv != 0)
        return rv;
    if (cx->method != HTTP_POST)
        return respond(out, 200, "{\"total\":42.5}");
    json_error_t err;
    const lc_buf_t *b = &cx->req->body;
    json_t *root = json_loadb(b->data ? b->data : "", b->len, JSON_REJECT_DUPLICATES, &err);
    bool ok = json_is_object(root) && json_object_get(root, "id") != NULL;
    json_decref(root);
    if (!ok)
        return json_error(out, 400, "body: expected a JSON object with an id");
    return respond(out, 201, "{\"ok\":true}");
}

static int serve_pay(const app_ctx_t *cx, app_resp_t *out)
{
    bool done;
    int rv = need_session(cx, out, &done);
    return done || rv != 0 ? rv : respond(out, 200, "{\"ok\":true}");
}

static int serve_logout(const app_ctx_t *cx, app_resp_t *out)
{
    int rv = add_header(out, "Set-Cookie: session=; Max-Age=0; Path=/\r\n");
    return rv ? rv : respond(out, 200, "{\"ok\":true}");
}

/* ---- redirects ---- */

#define CARRY_MAX 24

/* ?code= (302 when absent) into *code and the query to carry along (code, rel); false when
 * it is not a redirect status. */
static bool redirect_code(const app_ctx_t *cx, int *code, char carry[CARRY_MAX])
{
    app_span_t v;
    unsigned long c = 302;
    bool rel = app_query_get(cx->query, "rel", &v);
    *code = 302;
    snprintf(carry, CARRY_MAX, "%s", rel ? "?rel=1" : "");
    if (!app_query_get(cx->query, "code", &v))
        return true;
    if (!digits(v, 308, &c) || (c != 301 && c != 302 && c != 303 && c != 307 && c != 308))
        return false;
    *code = (int)c;
    snprintf(carry, CARRY_MAX, "?code=%lu%s", c, rel ? "&rel=1" : "");
    return true;
}

static int redirect_to(app_resp_t *out, int code, const char *location, const char *carry)
{
    out->status = code;
    out->content_type = TEXT_TYPE;
    return add_header(out, "Location: %s%s\r\n", location, carry);
}

static int serve_redirect(const app_ctx_t *cx, app_resp_t *out)
{
    app_span_t text = {cx->path.at + 10, cx->path.len - 10}; /* after "/redirect/" */
    unsigned long n;
    int code;
    char carry[CARRY_MAX], next[32];
    if (!digits(text, REDIRECTS_MAX, &n)) {
        out->stats_key = "/redirect/:n";
        out->stats_key_len = strlen(out->stats_key);
        return json_error(out, 404, "no such redirect: /redirect/0 to /redirect/100");
    }
    out->stats_key = cx->path.at;
    out->stats_key_len = cx->path.len;
    if (!redirect_code(cx, &code, carry))
        return json_error(out, 400, "code: one of 301 302 303 307 308");
    if (n > 0) { /* ?rel: relative references, "../redirect/N" and "N" by turns */
        if (!app_query_get(cx->query, "rel", &(app_span_t){0}))
            snprintf(next, sizeof next, "/redirect/%lu", n - 1);
        else
            snprintf(next, sizeof next, n % 2 ? "../redirect/%lu" : "%lu", n - 1);
        return redirect_to(out, code, next, carry);
    }
    out->content_type = TEXT_TYPE;
    if (cx->method == HTTP_GET || cx->method == HTTP_HEAD)
        return respond(out, 200, "done");
    return respond(out, 200, "done %s", llhttp_method_name((llhttp_method_t)cx->method));
}

static int serve_redirect_away(const app_ctx_t *cx, app_resp_t *out)
{
    int code;
    char carry[CARRY_MAX];
    if (!redirect_code(cx, &code, carry))
        return json_error(out, 400, "code: one of 301 302 303 307 308");
    return redirect_to(out, code, "http://other.example/", "");
}

static int serve_redirect_loop(const app_ctx_t *cx, app_resp_t *out)
{
    int code;
    char carry[CARRY_MAX];
    if (!redirect_code(cx, &code, carry))
        return json_error(out, 400, "code: one of 301 302 303 307 308");
    return redirect_to(out, code, "/redirect-loop", carry);
}

static int serve_redirect_to(const app_ctx_t *cx, app_resp_t *out)
{
    int code;
    char carry[CARRY_MAX], location[512];
    size_t n = cx->path.len - 13; /* after "/redirect-to/" */
    out->stats_key = "/redirect-to";
    out->stats_key_len = strlen(out->stats_key);
    if (!redirect_code(cx, &code, carry))
        return json_error(out, 400, "code: one of 301 302 303 307 308");
    if (n == 0 || n > 400)
        return json_error(out, 404, "expected /redirect-to/<host:port>/<path>");
    snprintf(location, sizeof location, "http://%.*s", (int)n, cx->path.at + 13);
    return redirect_to(out, code, location, "");
}

/* ---- /echo ---- */

/* Appends "name":"value[, value...]" for header i unless an earlier header has its name;
 * first: nothing was appended to the object yet. */
static int echo_header(const app_req_t *r, size_t i, bool first, lc_buf_t *b)
{
    app_span_t name = app_req_name(r, i);
    for (size_t j = 0; j < i; j++) {
        app_span_t other = app_req_name(r, j);
        if (other.len == name.len && strncasecmp(other.at, name.at, name.len) == 0)
            return 0;
    }
    int rv = lc_buf_append(b, first ? "\"" : ",\"", first ? 1 : 2);
    rv = rv ? rv : json_escape(b, name, true);
    rv = rv ? rv : lc_buf_append(b, "\":\"", 3);
    for (size_t j = i, n = 0; j < r->nheaders && rv == 0; j++) {
        app_span_t other = app_req_name(r, j);
        if (other.len != name.len || strncasecmp(other.at, name.at, name.len) != 0)
            continue;
        rv = n++ ? lc_buf_append(b, ", ", 2) : 0;
        rv = rv ? rv : json_escape(b, app_req_value(r, j), false);
    }
    return rv ? rv : lc_buf_append(b, "\"", 1);
}

/* Whether a cookie called name came before the one at name.at (first wins). */
static bool cookie_seen(const app_req_t *r, app_span_t name)
{
    for (size_t i = 0; i < r->nheaders; i++) {
        app_span_t k = app_req_name(r, i), list = app_req_value(r, i), cn, cv;
        if (k.len != 6 || strncasecmp(k.at, "cookie", 6) != 0)
            continue;
        while (app_pair_next(&list, ';', true, &cn, &cv)) {
            if (cn.at == name.at)
                return false;
            if (span_eq(cn, name))
                return true;
        }
    }
    return false;
}

static int echo_cookies(const app_req_t *r, lc_buf_t *b)
{
    int rv = 0, n = 0;
    for (size_t i = 0; i < r->nheaders && rv == 0; i++) {
        app_span_t k = app_req_name(r, i), list = app_req_value(r, i), cn, cv;
        if (k.len != 6 || strncasecmp(k.at, "cookie", 6) != 0)
            continue;
        while (rv == 0 && app_pair_next(&list, ';', true, &cn, &cv)) {
            if (cookie_seen(r, cn))
                continue;
            rv = n++ > 0 ? lc_buf_append(b, ",", 1) : 0;
            rv = rv ? rv : json_str(b, cn);
            rv = rv ? rv : lc_buf_append(b, ":", 1);
            rv = rv ? rv : json_str(b, cv);
        }
    }
    return rv;
}

static int serve_echo(const app_ctx_t *cx, app_resp_t *out)
{
    const app_req_t *r = cx->req;
    lc_buf_t *b = &out->body;
    int rv = respond(out, 200, "{\"method\":\"%s\",\"path\":",
                     llhttp_method_name((llhttp_method_t)cx->method));
    rv = rv ? rv : json_str(b, cx->url);
    rv = rv ? rv : lc_buf_append(b, ",\"headers\":{", 12);
    size_t start = b->len;
    for (size_t i = 0; i < r->nheaders && rv == 0; i++)
        rv = echo_header(r, i, b->len == start, b);
    rv = rv ? rv : lc_buf_append(b, "},\"cookies\":{", 13);
    rv = rv ? rv : echo_cookies(r, b);
    rv = rv ? rv : lc_buf_append(b, "},\"body\":", 9);
    rv = rv ? rv : json_str(b, (app_span_t){r->body.data ? r->body.data : "", r->body.len});
    return rv ? rv : lc_buf_append(b, "}", 1);
}

/* ---- /setcookie ---- */

static bool cookie_name_ok(app_span_t s)
{
    if (s.len == 0)
        return false;
    for (size_t i = 0; i < s.len; i++) {
        unsigned char c = (unsigned char)s.at[i];
        if (c <= 0x20 || c >= 0x7f || strchr("()<>@,;:\\\"/[]?={}", c) != NULL)
            return false;
    }
    return true;
}

/* No control character (which would end the header line), and no ';' unless allowed. */
static bool cookie_text_ok(app_span_t s, bool semicolon)
{
    for (size_t i = 0; i < s.len; i++) {
        unsigned char c = (unsigned char)s.at[i];
        if (c < 0x20 || c == 0x7f || (c == ';' && !semicolon))
            return false;
    }
    return true;
}

/* Appends one Set-Cookie line; NULL, or why the pair is refused. */
static const char *set_cookie(app_resp_t *out, app_span_t name, app_span_t value,
                              const lc_buf_t *attrs)
{
    lc_buf_t n = {0}, v = {0};
    const char *why = NULL;
    if (app_url_decode(name, &n) != 0 || app_url_decode(value, &v) != 0)
        why = "bad percent-encoding";
    else if (!cookie_name_ok((app_span_t){n.data, n.len}))
        why = "a cookie name must be a token";
    else if (!cookie_text_ok((app_span_t){v.data, v.len}, false))
        why = "a cookie value must have no ';' or control character";
    else if (add_header(out, "Set-Cookie: %s=%s; Path=/%s%s\r\n", n.data, v.data,
                        attrs->len ? "; " : "", attrs->len ? attrs->data : "") != 0)
        why = "out of memory";
    lc_buf_free(&n);
    lc_buf_free(&v);
    return why;
}

static int serve_setcookie(const app_ctx_t *cx, app_resp_t *out)
{
    lc_buf_t attrs = {0};
    app_span_t v, list = cx->query, name, value;
    const char *why = NULL;
    unsigned long set = 0;
    if (app_query_get(cx->query, "attrs", &v) && app_url_decode(v, &attrs) != 0)
        why = "bad percent-encoding";
    else if (!cookie_text_ok((app_span_t){attrs.data, attrs.len}, true))
        why = "attrs must have no control character";
    while (why == NULL && app_pair_next(&list, '&', false, &name, &value)) {
        if (span_eq(name, span_of("attrs")))
            continue;
        why = set_cookie(out, name, value, &attrs);
        set += why == NULL;
    }
    lc_buf_free(&attrs);
    if (why != NULL) {
        lc_buf_free(&out->headers); /* no cookie of a refused request */
        return json_error(out, 400, why);
    }
    return respond(out, 200, "{\"set\":%lu}", set);
}

/* ---- compressed bodies (target_app_enc.c) ---- */

static int serve_encoded(const app_ctx_t *cx, app_resp_t *out)
{
    return app_enc_serve(cx->path.at, cx->path.len, cx->query, cx->req, out);
}

static int serve_bomb(const app_ctx_t *cx, app_resp_t *out)
{
    return app_enc_bomb(cx->query, out);
}

/* ---- routing ---- */

typedef struct route_s {
    enum app_route route;
    const char *path; /* the whole path, or its start when prefix */
    bool prefix;
    const char *stats_key;
    unsigned methods;
    const char *allow;
    serve_fn serve;
} route_t;

/* In enum app_route's order. */
static const route_t routes[] = {
    {APP_LOGIN, "/login", false, "/login", M_POST, "POST", serve_login},
    {APP_ME, "/me", false, "/me", M_GET, "GET, HEAD", serve_me},
    {APP_ITEMS, "/items", false, "/items", M_GET, "GET, HEAD", serve_items},
    {APP_ITEM, "/items/", true, "/items/:id", M_GET, "GET, HEAD", serve_item},
    {APP_CART, "/cart", false, "/cart", M_GET | M_POST, "GET, HEAD, POST", serve_cart},
    {APP_PAY, "/pay", false, "/pay", M_POST, "POST", serve_pay},
    {APP_LOGOUT, "/logout", false, "/logout", M_POST, "POST", serve_logout},
    {APP_REDIRECT, "/redirect/", true, "/redirect/:n", M_ANY, "", serve_redirect},
    {APP_REDIRECT_AWAY, "/redirect-away", false, "/redirect-away", M_ANY, "", serve_redirect_away},
    {APP_REDIRECT_LOOP, "/redirect-loop", false, "/redirect-loop", M_ANY, "", serve_redirect_loop},
    {APP_REDIRECT_TO, "/redirect-to/", true, "/redirect-to", M_ANY, "", serve_redirect_to},
    {APP_ECHO, "/echo", false, "/echo", M_ANY, "", serve_echo},
    {APP_SETCOOKIE, "/setcookie", false, "/setcookie", M_GET, "GET, HEAD", serve_setcookie},
    {APP_GZIP, "/gzip", false, "/gzip", M_GET, "GET, HEAD", serve_encoded},
    {APP_DEFLATE, "/deflate", false, "/deflate", M_GET, "GET, HEAD", serve_encoded},
    {APP_BR, "/br", false, "/br", M_GET, "GET, HEAD", serve_encoded},
    {APP_BOMB, "/bomb", false, "/bomb", M_GET, "GET, HEAD", serve_bomb},
};

enum app_route app_route(const char *path, size_t len)
{
    if (len < 3 || path[0] != '/' || strchr("lmicpresgdb", path[1]) == NULL)
        return APP_NONE; /* the plain paths' way out: two comparisons */
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        size_t n = strlen(routes[i].path);
        if ((routes[i].prefix ? len >= n : len == n) && memcmp(path, routes[i].path, n) == 0)
            return routes[i].route;
    }
    return APP_NONE;
}

static bool method_allowed(unsigned methods, int method)
{
    if (methods & M_ANY)
        return true;
    if (method == HTTP_GET || method == HTTP_HEAD)
        return methods & M_GET;
    return method == HTTP_POST && (methods & M_POST);
}

int app_serve(const app_key_t *key, enum app_route route, int method, const char *url,
              size_t url_len, const app_req_t *req, app_resp_t *out)
{
    assert(route > APP_NONE && route <= APP_BOMB);
    const route_t *rt = &routes[route - 1];
    assert(rt->route == route);
    const char *q = memchr(url, '?', url_len);
    size_t plen = q ? (size_t)(q - url) : url_len;
    app_ctx_t cx = {.key = key, .method = method, .url = {url, url_len}, .path = {url, plen},
                    .query = q ? (app_span_t){q + 1, url_len - plen - 1} : (app_span_t){"", 0},
                    .req = req};
    *out = (app_resp_t){.content_type = JSON_TYPE, .stats_key = rt->stats_key,
                        .stats_key_len = strlen(rt->stats_key)};
    int rv;
    if (method_allowed(rt->methods, method)) {
        rv = rt->serve(&cx, out);
    } else {
        rv = add_header(out, "Allow: %s\r\n", rt->allow);
        rv = rv ? rv : json_error(out, 405, "method not allowed");
    }
    if (rv != 0) {
        app_resp_free(out);
        return LC_ENOMEM;
    }
    return 0;
}

void app_resp_free(app_resp_t *resp)
{
    lc_buf_free(&resp->headers);
    lc_buf_free(&resp->body);
}
