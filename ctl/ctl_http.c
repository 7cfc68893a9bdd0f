/* ctl_http.c — blocking HTTP/1.1 requests with connect/receive timeouts, llhttp parsing and redirects. */
#include "ctl_http.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <jansson.h>
#include <llhttp.h>

#include "lc_buf.h"
#include "lc_err.h"

#define CONNECT_TIMEOUT_MS 5000
#define IO_TIMEOUT_S 30
#define MAX_LOCATION 2048

typedef struct ctl_url_s {
    char host[256];  /* without IPv6 brackets */
    char port[8];
    char path[1024]; /* "" or "/prefix..." */
    bool ipv6;
} ctl_url_t;

/* State of one response parse, reached from llhttp's data pointer. */
typedef struct parse_ctx_s {
    ctl_http_response_t *resp;
    lc_buf_t body; /* becomes resp->body when the response is complete */
    char field[32];
    size_t field_len;
    bool field_is_location;
    char location[MAX_LOCATION];
    size_t location_len;
    bool complete;
    bool too_big;
    bool nomem;
} parse_ctx_t;

static int parse_host_port(const char *s, size_t len, ctl_url_t *u)
{
    const char *end = s + len, *colon = NULL;
    if (len > 0 && s[0] == '[') {
        const char *rb = memchr(s, ']', len);
        if (rb == NULL || rb - s - 1 <= 0 || (size_t)(rb - s - 1) >= sizeof(u->host))
            return -1;
        memcpy(u->host, s + 1, (size_t)(rb - s - 1));
        u->host[rb - s - 1] = '\0';
        u->ipv6 = true;
        if (rb + 1 < end && rb[1] != ':')
            return -1;
        colon = rb + 1 < end ? rb + 1 : NULL;
    } else {
        colon = memchr(s, ':', len);
        size_t hlen = colon ? (size_t)(colon - s) : len;
        if (hlen == 0 || hlen >= sizeof(u->host))
            return -1;
        memcpy(u->host, s, hlen);
        u->host[hlen] = '\0';
    }
    if (colon == NULL) {
        strcpy(u->port, "8089");
        return 0;
    }
    size_t plen = (size_t)(end - colon - 1);
    if (plen == 0 || plen >= 6 || strspn(colon + 1, "0123456789") < plen)
        return -1;
    memcpy(u->port, colon + 1, plen);
    u->port[plen] = '\0';
    long port = strtol(u->port, NULL, 10);
    return port >= 1 && port <= 65535 ? 0 : -1;
}

static int url_parse(const char *url, ctl_url_t *u, char *errmsg, size_t errlen)
{
    memset(u, 0, sizeof(*u));
    const char *rest = url;
    const char *sep = strstr(url, "://");
    if (sep != NULL) {
        if (strncasecmp(url, "http://", 7) != 0)
            return lc_errf(errmsg, errlen, CTL_HTTP_EURL, "%s: only http:// URLs are supported",
                           url);
        rest = sep + 3;
    }
    size_t hp_len = strcspn(rest, "/?#");
    if (strpbrk(url, " \t\r\n") != NULL || parse_host_port(rest, hp_len, u) != 0)
        return lc_errf(errmsg, errlen, CTL_HTTP_EURL, "%s: not a valid http://host[:port] URL",
                       url);
    const char *path = rest + hp_len;
    size_t plen = strcspn(path, "#");
    size_t lead = path[0] == '?'; /* "http://h?x" means "/?x" */
    if (lead + plen >= sizeof(u->path))
        return lc_errf(errmsg, errlen, CTL_HTTP_EURL, "%s: URL too long", url);
    u->path[0] = '/';
    memcpy(u->path + lead, path, plen);
    u->path[lead + plen] = '\0';
    return CTL_HTTP_OK;
}

int ctl_http_check_url(const char *url, char *errmsg, size_t errlen)
{
    ctl_url_t u;
    return url_parse(url, &u, errmsg, errlen);
}

static void url_display(const ctl_url_t *u, char *buf, size_t len)
{
    snprintf(buf, len, u->ipv6 ? "http://[%s]:%s" : "http://%s:%s", u->host, u->port);
}

/* Connects fd to ai within CONNECT_TIMEOUT_MS; returns 0 or an errno value. */
static int connect_timeout(int fd, const struct addrinfo *ai)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
        return errno;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        if (errno != EINPROGRESS)
            return errno;
        struct pollfd pfd = {.fd = fd, .events = POLLOUT};
        int n = poll(&pfd, 1, CONNECT_TIMEOUT_MS);
        if (n < 0)
            return errno;
        if (n == 0)
            return ETIMEDOUT;
        int soerr = 0;
        socklen_t sl = sizeof(soerr);
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0)
            return errno;
        if (soerr != 0)
            return soerr;
    }
    if (fcntl(fd, F_SETFL, flags) < 0)
        return errno;
    struct timeval tv = {.tv_sec = IO_TIMEOUT_S};
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0)
        return errno;
    return 0;
}

/* Returns a connected socket, or -1 with errmsg set (*rv says which error). */
static int open_connection(const ctl_url_t *u, int *rv, char *errmsg, size_t errlen)
{
    char shown[300];
    url_display(u, shown, sizeof(shown));
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    int gai = getaddrinfo(u->host, u->port, &hints, &res);
    if (gai != 0) {
        *rv = CTL_HTTP_EREACH;
        snprintf(errmsg, errlen, "cannot reach %s: %s", shown, gai_strerror(gai));
        return -1;
    }
    int err = 0;
    for (struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        err = connect_timeout(fd, ai);
        if (err == 0) {
            freeaddrinfo(res);
            return fd;
        }
        close(fd);
        if (err == EINTR)
            break;
    }
    freeaddrinfo(res);
    *rv = err == EINTR ? CTL_HTTP_EINTR : CTL_HTTP_EREACH;
    snprintf(errmsg, errlen, "cannot reach %s: %s", shown,
             err == ETIMEDOUT ? "connect timed out after 5 s" : strerror(err));
    return -1;
}

static int send_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
        if (n < 0)
            return errno;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* One request of a call: what every hop of its redirects sends again. */
typedef struct ctl_call_s {
    const char *token;
    const char *method;
    const char *content_type;
    const char *body;
    size_t body_len;
} ctl_call_t;

static int send_request(int fd, const ctl_url_t *u, const char *target, const ctl_call_t *call)
{
    char *head = NULL;
    size_t body_len = call->body_len;
    const char *token = call->token;
    int n = asprintf(&head,
                     "%s %s HTTP/1.1\r\nHost: %s%s%s:%s\r\nUser-Agent: loadctl/%s\r\n"
                     "Accept: application/json\r\nConnection: close\r\n"
                     "Content-Length: %zu\r\n%s%s%s%s%s%s\r\n",
                     call->method, target, u->ipv6 ? "[" : "", u->host, u->ipv6 ? "]" : "",
                     u->port, LC_VERSION, body_len, body_len > 0 ? "Content-Type: " : "",
                     body_len > 0 ? call->content_type : "", body_len > 0 ? "\r\n" : "",
                     token ? "Authorization: Bearer " : "", token ? token : "", token ? "\r\n" : "");
    if (n < 0)
        return ENOMEM;
    int err = send_all(fd, head, (size_t)n);
    free(head);
    if (err == 0 && body_len > 0)
        err = send_all(fd, call->body, body_len);
    return err;
}

static int on_header_field(llhttp_t *p, const char *at, size_t len)
{
    parse_ctx_t *c = p->data;
    size_t room = sizeof(c->field) - 1 - c->field_len;
    size_t n = len < room ? len : room;
    memcpy(c->field + c->field_len, at, n);
    c->field_len += n;
    c->field[c->field_len] = '\0';
    return 0;
}

static int on_header_field_complete(llhttp_t *p)
{
    parse_ctx_t *c = p->data;
    c->field_is_location = strcasecmp(c->field, "location") == 0;
    if (c->field_is_location)
        c->location_len = 0;
    c->field_len = 0;
    c->field[0] = '\0';
    return 0;
}

static int on_header_value(llhttp_t *p, const char *at, size_t len)
{
    parse_ctx_t *c = p->data;
    if (!c->field_is_location)
        return 0;
    if (len >= MAX_LOCATION - c->location_len)
        return -1;
    memcpy(c->location + c->location_len, at, len);
    c->location_len += len;
    c->location[c->location_len] = '\0';
    return 0;
}

static int on_body(llhttp_t *p, const char *at, size_t len)
{
    parse_ctx_t *c = p->data;
    if (len > CTL_HTTP_MAX_BODY - c->body.len) {
        c->too_big = true;
        return -1;
    }
    if (lc_buf_append(&c->body, at, len) != 0) {
        c->nomem = true;
        return -1;
    }
    return 0;
}

static int on_message_complete(llhttp_t *p)
{
    parse_ctx_t *c = p->data;
    c->complete = true;
    c->resp->status = p->status_code;
    return HPE_PAUSED;
}

/* Feeds the socket to llhttp until the response is complete. */
static int read_response(int fd, parse_ctx_t *ctx, const char *shown, char *errmsg, size_t errlen)
{
    llhttp_settings_t settings;
    llhttp_settings_init(&settings);
    settings.on_header_field = on_header_field;
    settings.on_header_field_complete = on_header_field_complete;
    settings.on_header_value = on_header_value;
    settings.on_body = on_body;
    settings.on_message_complete = on_message_complete;
    llhttp_t parser;
    llhttp_init(&parser, HTTP_RESPONSE, &settings);
    parser.data = ctx;
    char buf[16384];
    while (!ctx->complete) {
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n < 0 && errno == EINTR)
            return CTL_HTTP_EINTR;
        if (n < 0) {
            bool timeout = errno == EAGAIN || errno == EWOULDBLOCK;
            return lc_errf(errmsg, errlen, CTL_HTTP_EREACH, "cannot reach %s: %s", shown,
                           timeout ? "no response within 30 s" : strerror(errno));
        }
        llhttp_errno_t e = n == 0 ? llhttp_finish(&parser) : llhttp_execute(&parser, buf, (size_t)n);
        if (n == 0 && !ctx->complete)
            return lc_errf(errmsg, errlen, CTL_HTTP_EREACH,
                           "cannot reach %s: connection closed before the response was complete",
                           shown);
        if (e != HPE_OK && e != HPE_PAUSED) {
            if (ctx->nomem)
                return CTL_HTTP_ENOMEM;
            return lc_errf(errmsg, errlen, CTL_HTTP_EPROTO, "%s: bad HTTP response: %s", shown,
                           ctx->too_big ? "body larger than 64 MiB"
                                        : llhttp_get_error_reason(&parser));
        }
    }
    return CTL_HTTP_OK;
}

/* One request/response exchange on a fresh connection. OUT: location (the
 * Location header, "" when absent). */
static int exchange(const ctl_url_t *u, const char *target, const ctl_call_t *call,
                    ctl_http_response_t *resp, char *location, char *errmsg, size_t errlen)
{
    char shown[300];
    url_display(u, shown, sizeof(shown));
    int rv = CTL_HTTP_OK;
    int fd = open_connection(u, &rv, errmsg, errlen);
    if (fd < 0)
        return rv;
    int err = send_request(fd, u, target, call);
    if (err != 0) {
        close(fd);
        snprintf(errmsg, errlen, "cannot reach %s: sending the request: %s", shown, strerror(err));
        return err == EINTR ? CTL_HTTP_EINTR : CTL_HTTP_EREACH;
    }
    parse_ctx_t *ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL) {
        close(fd);
        return CTL_HTTP_ENOMEM;
    }
    memset(resp, 0, sizeof(*resp));
    ctx->resp = resp;
    rv = read_response(fd, ctx, shown, errmsg, errlen);
    close(fd);
    /* An empty body is "" too: appending nothing allocates the NUL. */
    if (rv == CTL_HTTP_OK && lc_buf_append(&ctx->body, "", 0) != 0)
        rv = CTL_HTTP_ENOMEM;
    if (rv == CTL_HTTP_OK) {
        resp->body = ctx->body.data;
        resp->body_len = ctx->body.len;
    } else {
        lc_buf_free(&ctx->body);
    }
    memcpy(location, ctx->location, ctx->location_len + 1);
    free(ctx);
    if (rv != CTL_HTTP_OK)
        ctl_http_response_free(resp);
    if (rv == CTL_HTTP_ENOMEM)
        snprintf(errmsg, errlen, "out of memory");
    return rv;
}

/* Points u/target at a redirect's Location: an absolute http URL or a path. */
static int follow_location(const char *location, ctl_url_t *u, char *target, size_t tlen,
                           char *errmsg, size_t errlen)
{
    if (location[0] == '\0')
        return lc_errf(errmsg, errlen, CTL_HTTP_EPROTO, "redirect without a Location header");
    if (strpbrk(location, " \t\r\n") != NULL)
        return lc_errf(errmsg, errlen, CTL_HTTP_EPROTO, "redirect to an invalid Location");
    if (location[0] == '/' && location[1] != '/') {
        snprintf(target, tlen, "%s", location);
        return CTL_HTTP_OK;
    }
    int rv = url_parse(location, u, errmsg, errlen);
    if (rv != CTL_HTTP_OK)
        return rv;
    snprintf(target, tlen, "%s", u->path[0] ? u->path : "/");
    return CTL_HTTP_OK;
}

static bool same_server(const ctl_url_t *a, const ctl_url_t *b)
{
    return strcasecmp(a->host, b->host) == 0 && strcmp(a->port, b->port) == 0;
}

/* Whether "host:port" names the server u. */
static bool names_server(const char *hostport, const ctl_url_t *u)
{
    ctl_url_t m;
    memset(&m, 0, sizeof m);
    return hostport != NULL && parse_host_port(hostport, strlen(hostport), &m) == 0 &&
           same_server(&m, u);
}

/* Whether GET /api/v1/cluster of the server the user named (origin, with
 * its path prefix) lists to as a master's API. A redirect elsewhere would
 * send the token and the body to whoever the Location names. */
static bool is_cluster_master(const ctl_url_t *origin, const char *token, const ctl_url_t *to)
{
    char target[sizeof origin->path + 32], location[MAX_LOCATION], err[256];
    ctl_http_response_t resp;
    snprintf(target, sizeof target, "%s/api/v1/cluster",
             strcmp(origin->path, "/") == 0 ? "" : origin->path);
    const ctl_call_t get = {.token = token, .method = "GET"};
    if (exchange(origin, target, &get, &resp, location, err, sizeof err) != 0)
        return false;
    json_t *root = resp.status == 200 ? json_loadb(resp.body, resp.body_len, 0, NULL) : NULL;
    ctl_http_response_free(&resp);
    bool found = false;
    size_t i;
    json_t *member;
    json_array_foreach(json_object_get(root, "members"), i, member)
        found = found || names_server(json_string_value(json_object_get(member, "api")), to);
    json_decref(root);
    return found;
}

int ctl_http_request(const char *base_url, const char *token, const char *method,
                     const char *path, const char *body, size_t body_len,
                     ctl_http_response_t *resp, char *errmsg, size_t errlen)
{
    return ctl_http_request_as(base_url, token, method, path, NULL, body, body_len, resp, errmsg,
                               errlen);
}

int ctl_http_request_as(const char *base_url, const char *token, const char *method,
                        const char *path, const char *content_type, const char *body,
                        size_t body_len, ctl_http_response_t *resp, char *errmsg,
                        size_t errlen)
{
    assert(content_type == NULL || strpbrk(content_type, "\r\n") == NULL);
    const ctl_call_t call = {.token = token, .method = method, .body = body,
                             .body_len = body_len,
                             .content_type = content_type ? content_type : "application/json"};
    ctl_url_t u;
    int rv = url_parse(base_url, &u, errmsg, errlen);
    if (rv != CTL_HTTP_OK)
        return rv;
    size_t plen = strlen(u.path);
    while (plen > 0 && u.path[plen - 1] == '/')
        u.path[--plen] = '\0';
    char target[MAX_LOCATION + 1024];
    snprintf(target, sizeof(target), "%s%s", u.path, path);
    char location[MAX_LOCATION];
    const ctl_url_t origin = u;
    for (int hops = 0;; hops++) {
        rv = exchange(&u, target, &call, resp, location, errmsg, errlen);
        if (rv != CTL_HTTP_OK)
            return rv;
        if (resp->status != 307 && resp->status != 308)
            return CTL_HTTP_OK;
        ctl_http_response_free(resp);
        if (hops == CTL_HTTP_MAX_REDIRECTS)
            return lc_errf(errmsg, errlen, CTL_HTTP_EPROTO, "more than %d redirects",
                           CTL_HTTP_MAX_REDIRECTS);
        ctl_url_t from = u;
        rv = follow_location(location, &u, target, sizeof(target), errmsg, errlen);
        if (rv != CTL_HTTP_OK)
            return rv;
        if (same_server(&u, &from) || same_server(&u, &origin))
            continue;
        if (!is_cluster_master(&origin, token, &u)) {
            char shown[300], asked[300];
            url_display(&u, shown, sizeof shown);
            url_display(&origin, asked, sizeof asked);
            return lc_errf(errmsg, errlen, CTL_HTTP_EPROTO,
                           "%s redirected to %s, which is not one of the cluster's masters "
                           "(GET /api/v1/cluster of %s); not sending the request there",
                           asked, shown, asked);
        }
    }
}

void ctl_http_response_free(ctl_http_response_t *resp)
{
    free(resp->body);
    resp->body = NULL;
    resp->body_len = 0;
}
