/* target_app.h — lc_target's "app": a stateless shop (login, tokens, cookies, items, cart,
 * redirects, echo) for journey tests, answered only on its own paths.
 *
 * Endpoints (bodies are JSON unless said; errors are {"error":"<why>"}; a method a route does not
 * take is 405 with an Allow header):
 *   POST /login[?token_len=N]  body {"user":"u","password":"p"} (a body whose first non-blank
 *        byte is '{', whatever its Content-Type) or user=u&password=p (any other body). 200
 *        {"token":"<token>","user":"u"} with Set-Cookie: session=<sid>; Path=/; HttpOnly.
 *        401 when user or password is missing or empty, or password is "wrong"; 400 for bad JSON,
 *        a non-string user/password, a user that is not 1-64 of [A-Za-z0-9._@-], or a bad
 *        token_len. token_len pads the token with 'x' to exactly N bytes (N <= 4096, at least
 *        the token's own length, which is 36 + the user's length).
 *   GET  /me        needs Authorization: Bearer <token> and Cookie: session=<sid>, both valid and
 *        for the same user: 200 {"user":"u"}, else 401.
 *   GET  /items[?n=N]  N from 0 to 1000 (default 10): {"items":[{"id":1,"name":"item-1"},...],
 *        "count":N}; 400 for another n.
 *   GET  /items/<id>   id 1 to 4294967295: {"id":<id>,"name":"item-<id>"}; else 404.
 *   POST /cart      needs a valid session cookie (else 401) and a JSON object body with "id"
 *        (else 400): 201 {"ok":true}.   GET /cart: needs the cookie, 200 {"total":42.5}.
 *   POST /pay       needs the cookie, any body: 200 {"ok":true}.
 *   POST /logout    200 {"ok":true} with Set-Cookie: session=; Max-Age=0; Path=/.
 *   ANY  /redirect/<n>[?code=C][&rel=1]  n 0 to 100 (else 404); C one of 301 302 303 307 308
 *        (default 302; else 400). n > 0: C with Location: /redirect/<n-1> (plus the query
 *        given), empty body; with rel, a relative reference to it instead: "../redirect/<n-1>"
 *        for odd n, "<n-1>" for even n. n == 0: 200 text/plain "done" for GET and HEAD, "done <METHOD>" for any other
 *        method, so tests see whether 307/308 kept the method and 301-303 dropped it.
 *   ANY  /redirect-away[?code=C]  C with Location: http://other.example/
 *   ANY  /redirect-loop[?code=C]  C with Location: /redirect-loop (plus ?code=C when given).
 *   ANY  /redirect-to/<host:port>/<path>[?code=C]  C with Location: http://<host:port>/<path>
 *        (another origin); counted as "/redirect-to".
 *   ANY  /echo      200 {"method":"GET","path":"/echo?x=1","headers":{"<lowercased name>":"v"},
 *        "cookies":{"name":"value"},"body":"..."}; a repeated header's values are joined with
 *        ", ", a repeated cookie keeps its first value; bytes that are not UTF-8 become U+FFFD.
 *   GET  /setcookie?name=value&...[&attrs=A]  one Set-Cookie: name=value; Path=/[; A] per pair,
 *        in order, names and values URL-decoded ('+' is a space); 200 {"set":<pairs>}. 400 for a
 *        name that is not an RFC 7230 token, a value with ';' or a control character, attrs
 *        with a control character, or bad percent-encoding.
 *   GET  /gzip, /deflate, /br, /bomb: compressed bodies (target_app_enc.h).
 * Tokens are "t1.<user>.<32 hex>" (+ 'x' padding) and session ids "s1.<user>.<32 hex>": the hex
 * is an HMAC-SHA256 (cut to 16 bytes) of the user under a key drawn at start, so any loop thread
 * verifies what another issued and nothing is stored; they stop verifying when lc_target restarts.
 * Bodies over 64 KiB are refused with 413 and the connection closes (counted in "rejected").
 * --latency-ms, --latency-jitter-ms and the stall apply to app answers; --status, --body-size
 * and the ?status= ?size= ?latency_ms= ?close=1 parameters do not.
 * /__stats counts app requests by path without the query string, like every other path, except
 * that /items/<id> all count as "/items/:id" and a bad /redirect/<n> as "/redirect/:n", so that
 * the ids a test uses cannot fill the 1000-path table. */
#ifndef LC_TARGET_APP_H
#define LC_TARGET_APP_H

#include <stdbool.h>
#include <stddef.h>

#include "lc_buf.h"
#include "target_app_req.h"

#define APP_KEY_LEN 32

enum app_route {
    APP_NONE = 0, /* not an app path: the plain response */
    APP_LOGIN,
    APP_ME,
    APP_ITEMS,
    APP_ITEM,
    APP_CART,
    APP_PAY,
    APP_LOGOUT,
    APP_REDIRECT,
    APP_REDIRECT_AWAY,
    APP_REDIRECT_LOOP,
    APP_REDIRECT_TO,
    APP_ECHO,
    APP_SETCOOKIE,
    APP_GZIP, /* /gzip, /deflate, /br and /bomb: target_app_enc.h */
    APP_DEFLATE,
    APP_BR,
    APP_BOMB,
};

/* The per-process key that signs tokens and session ids; read-only once drawn. */
typedef struct app_key_s {
    unsigned char bytes[APP_KEY_LEN];
} app_key_t;

/* What the app answers; target_conn.c adds the status line, Content-Type, Content-Length and
 * Connection, and drops the body for HEAD. */
typedef struct app_resp_s {
    int status;
    const char *content_type; /* static text */
    lc_buf_t headers;         /* extra header lines, each ending in CRLF */
    lc_buf_t body;
    const char *stats_key; /* the /__stats path, static text or in the request's URL */
    size_t stats_key_len;
} app_resp_t;

/* Draws the key from the system's random source. Returns 0 or LC_EIO. */
int app_key_init(app_key_t *key);

/* The app route of a request path (no query string); APP_NONE for every other path. Cheap:
 * it runs for every request lc_target serves. */
enum app_route app_route(const char *path, size_t len);

/* Answers a request to route (not APP_NONE); method is llhttp's, url the whole request target.
 * out is overwritten; release it with app_resp_free. Returns 0 or LC_ENOMEM. */
int app_serve(const app_key_t *key, enum app_route route, int method, const char *url,
              size_t url_len, const app_req_t *req, app_resp_t *out);
void app_resp_free(app_resp_t *resp);

#endif
