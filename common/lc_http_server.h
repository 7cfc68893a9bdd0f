/* lc_http_server.h — a small HTTP/1.1 server on a libuv loop (llhttp parser):
 * keep-alive, request size limits, deadlines and a connection cap against
 * slow clients, a hook that may refuse a request before its body is read,
 * and one handler that may answer later, with a body in memory or in a file. */
#ifndef LC_HTTP_SERVER_H
#define LC_HTTP_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#define LC_HTTP_MAX_HEADERS 64
#define LC_HTTP_MAX_HEADER_BYTES (16u << 10) /* request line + headers */
#define LC_HTTP_HEADER_TIMEOUT_MS 10000
#define LC_HTTP_BODY_TIMEOUT_MS 30000
#define LC_HTTP_MAX_CONNS 1024
#define LC_HTTP_PROBE_TIMEOUT_MS 1000 /* headers on a probe slot (see probe_conns) */

typedef struct lc_http_server_s lc_http_server_t;
typedef struct lc_http_exchange_s lc_http_exchange_t;

/* One parsed request. Strings are NUL-terminated and valid until the
 * exchange is answered. */
typedef struct lc_http_request_s {
    const char *method;        /* "GET", "POST", … */
    const char *path;          /* target up to '?', not percent-decoded */
    const char *query;         /* after '?', "" when none */
    const char *authorization; /* header value or NULL */
    const char *content_type;  /* header value or NULL */
    const char *host;          /* header value or NULL */
    const char *body;          /* NUL-terminated, "" when none */
    size_t body_len;
} lc_http_request_t;

/* Called once per request. The handler must answer with
 * lc_http_exchange_respond() exactly once, now or later (for example after a
 * Raft commit). Requests on one connection are answered in order. */
typedef void (*lc_http_handler_cb)(void *arg, lc_http_exchange_t *ex,
                                   const lc_http_request_t *req);

/* Called when a request's headers are complete, before any of its body is
 * read (req->body is "" then). Returns false to go on: the body is read and
 * the handler called. Or answers ex at once with lc_http_exchange_respond()
 * and returns true: the body is never read, and the connection closes after
 * the answer (the exchange is freed by that answer). */
typedef bool (*lc_http_headers_cb)(void *arg, lc_http_exchange_t *ex,
                                   const lc_http_request_t *req);

/* Limits against slow and numerous clients. Every deadline is absolute: bytes
 * that trickle in do not extend it. A connection past one is answered 408
 * (when it had sent part of a request) and closed, with a log line. */
typedef struct lc_http_limits_s {
    /* The request line and headers, counted from accept or from the end of
     * the previous answer: it is also how long a keep-alive connection may
     * sit idle. */
    uint64_t header_timeout_ms;
    /* The body, counted from the end of the headers; it also bounds how long
     * a client may take to read an answer. */
    uint64_t body_timeout_ms;
    /* Connections at once; more are accepted only to be closed at once. */
    unsigned max_conns;
    /* Connections kept beyond max_conns for requests whose path is one of
     * probe_paths (NULL-terminated): a probe slot has LC_HTTP_PROBE_TIMEOUT_MS
     * for its headers, answers 503 to any other path before reading a body,
     * and closes after one answer, so that a full server still answers its
     * health checks. */
    unsigned probe_conns;
    const char *const *probe_paths;
} lc_http_limits_t;

/* Starts listening on host:port. max_body bounds request bodies (413 above
 * it); oversize headers get 431, unparsable requests 400, all with a JSON
 * {"error": "..."} body, and the connection is closed after them.
 * Returns 0 or LC_EIO with errmsg. */
int lc_http_server_init(lc_http_server_t **out, uv_loop_t *loop, const char *host,
                        uint16_t port, size_t max_body, lc_http_handler_cb handler,
                        void *arg, char *errmsg, size_t errlen);

/* Replaces the limits (the defaults: LC_HTTP_HEADER_TIMEOUT_MS,
 * LC_HTTP_BODY_TIMEOUT_MS, LC_HTTP_MAX_CONNS, no probe slots); zero fields
 * keep the default. Connections already open keep the deadlines they have. */
void lc_http_server_set_limits(lc_http_server_t *s, const lc_http_limits_t *limits);

/* Sets the hook run when a request's headers are complete (NULL: none); it
 * gets the handler's arg. */
void lc_http_server_on_headers(lc_http_server_t *s, lc_http_headers_cb cb);

/* The port actually bound (useful with port 0). */
uint16_t lc_http_server_port(const lc_http_server_t *s);

/* Stops listening and closes every connection; frees the server once all
 * handles are closed. Exchanges not yet answered stay valid: answering one
 * after close only frees it. */
void lc_http_server_close(lc_http_server_t *s);

/* Answers an exchange. `headers` is NULL or extra header lines, each ending
 * in "\r\n" (e.g. "Location: http://…\r\n"). The body is copied. */
void lc_http_exchange_respond(lc_http_exchange_t *ex, int status, const char *content_type,
                              const char *body, size_t body_len, const char *headers);

/* A piece of an answer's body sent without a copy: release(arg), when not
 * NULL, runs once on the loop when the piece is no longer needed (written,
 * or dropped because the client went away or the answer has no body). */
typedef struct lc_http_part_s {
    const char *data;
    size_t len;
    void (*release)(void *arg);
    void *arg;
} lc_http_part_t;

#define LC_HTTP_PARTS_MAX 4

/* Answers with a body made of n (1..LC_HTTP_PARTS_MAX) parts, in order and
 * without copying them, so that a large answer costs the loop no copy. Every
 * part is released, whatever becomes of the answer. */
void lc_http_exchange_respond_parts(lc_http_exchange_t *ex, int status, const char *content_type,
                                    const lc_http_part_t *parts, size_t n, const char *headers);

/* Answers with a body of len bytes read from fd (taken: closed once sent,
 * or at once when the answer has no body), a chunk at a time as the client
 * reads, so that a large answer never sits whole in memory. The file must
 * hold len bytes from offset 0 and not change meanwhile. */
void lc_http_exchange_respond_fd(lc_http_exchange_t *ex, int status, const char *content_type,
                                 int fd, uint64_t len, const char *headers);

/* The request of an exchange not yet answered. */
const lc_http_request_t *lc_http_exchange_request(const lc_http_exchange_t *ex);

#endif
