/* lc_http_server.h — a small HTTP/1.1 server on a libuv loop (llhttp parser):
 * keep-alive, request size limits, one handler that may answer later. */
#ifndef LC_HTTP_SERVER_H
#define LC_HTTP_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#define LC_HTTP_MAX_HEADERS 64
#define LC_HTTP_MAX_HEADER_BYTES (16u << 10) /* request line + headers */

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

/* Starts listening on host:port. max_body bounds request bodies (413 above
 * it); oversize headers get 431, unparsable requests 400, all with a JSON
 * {"error": "..."} body, and the connection is closed after them.
 * Returns 0 or LC_EIO with errmsg. */
int lc_http_server_init(lc_http_server_t **out, uv_loop_t *loop, const char *host,
                        uint16_t port, size_t max_body, lc_http_handler_cb handler,
                        void *arg, char *errmsg, size_t errlen);

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

/* The request of an exchange not yet answered. */
const lc_http_request_t *lc_http_exchange_request(const lc_http_exchange_t *ex);

#endif
