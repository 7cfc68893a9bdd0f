/* fuzz_http_server.c — the API's HTTP server (common/lc_http_server.c) on
 * arbitrary request bytes, and what the master's routing reads of each
 * request: the bearer token (auth_bearer_parse, auth_identify against a
 * store holding one token), query parameters (api_query_value), run ids
 * from the path. The server only listens on TCP, so each input is sent by
 * an in-process loopback client (then half-closed) on one libuv loop, which
 * runs until the server has answered and closed, or 2 s at most. */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <uv.h>

#include "auth.h"
#include "fuzz_util.h"
#include "lc_http_server.h"
#include "state.pb-c.h"
#include "store.h"

/* Shared with api.c (api_internal.h pulls in the whole API's types). */
bool api_query_value(const char *query, const char *name, char *out, size_t len);

#define TOKEN "lct_fuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuz"

typedef struct client_s {
    uv_tcp_t tcp;
    uv_connect_t connect;
    uv_write_t write;
    uv_shutdown_t shutdown;
    uv_timer_t deadline;
    const uint8_t *data; /* the input, sent once connected */
    size_t size;
    char rbuf[4096];
    size_t received;
    int open_handles;
} client_t;

static uv_loop_t loop;
static lc_http_server_t *server;
static struct sockaddr_in server_addr;
static store_t *tokens;
static size_t requests;

/* Routing of a request as api.c and its route files read it. */
static void handle(void *arg, lc_http_exchange_t *ex, const lc_http_request_t *req)
{
    requests++;
    const char *token;
    size_t len;
    if (auth_bearer_parse(req->authorization, &token, &len) == 0)
        FUZZ_CHECK(len > 0 && len <= AUTH_TOKEN_MAX, "bearer token of %zu bytes", len);
    auth_identity_t who;
    auth_identify(tokens, req->authorization, &who);
    static const char *const params[] = {"since", "endpoint", "state", "tenant", "consistent"};
    char value[256];
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++)
        if (api_query_value(req->query, params[i], value, sizeof value))
            FUZZ_CHECK(strlen(value) < sizeof value && strchr(value, '&') == NULL,
                       "query value \"%s\"", value);
    FUZZ_CHECK(strchr(req->path, '?') == NULL, "path \"%s\" holds the query", req->path);
    const char *runs = "/api/v1/runs/";
    if (strncmp(req->path, runs, strlen(runs)) == 0)
        strtoull(req->path + strlen(runs), NULL, 10);
    FUZZ_CHECK(strlen(req->body) == req->body_len || memchr(req->body, '\0', req->body_len),
               "body length %zu", req->body_len);
    lc_http_exchange_respond(ex, 200, "application/json", "{}", 2, NULL);
}

static void put_token(void)
{
    char err[256];
    if (store_open(&tokens, err, sizeof err) != 0)
        abort();
    uint8_t hash[STORE_TOKEN_HASH_LEN];
    auth_hash(TOKEN, strlen(TOKEN), hash);
    Lc__PutToken pt = LC__PUT_TOKEN__INIT;
    pt.id = "tok_0000000000000001";
    pt.hash.data = hash;
    pt.hash.len = sizeof hash;
    pt.role = "admin";
    pt.tenant = "";
    pt.name = "fuzz";
    Lc__Command cmd = LC__COMMAND__INIT;
    cmd.cmd_case = LC__COMMAND__CMD_PUT_TOKEN;
    cmd.put_token = &pt;
    if (store_apply(tokens, &cmd) != 0)
        abort();
}

static void setup(void)
{
    char err[256];
    fuzz_quiet_log();
    if (uv_loop_init(&loop) != 0)
        abort();
    if (lc_http_server_init(&server, &loop, "127.0.0.1", 0, 64 << 10, handle, NULL, err,
                            sizeof err) != 0) {
        fprintf(stderr, "fuzz_http_server: %s\n", err);
        abort();
    }
    uv_ip4_addr("127.0.0.1", lc_http_server_port(server), &server_addr);
    put_token();
}

static void on_client_closed(uv_handle_t *h)
{
    client_t *cl = h->data;
    cl->open_handles--;
}

/* A reset rather than a FIN: tens of thousands of connections a minute in
 * TIME_WAIT would use up the ephemeral ports. */
static void client_close(client_t *cl)
{
    uv_os_fd_t fd;
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    if (!uv_is_closing((uv_handle_t *)&cl->tcp) && uv_fileno((uv_handle_t *)&cl->tcp, &fd) == 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    if (!uv_is_closing((uv_handle_t *)&cl->tcp))
        uv_close((uv_handle_t *)&cl->tcp, on_client_closed);
    if (!uv_is_closing((uv_handle_t *)&cl->deadline))
        uv_close((uv_handle_t *)&cl->deadline, on_client_closed);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    client_t *cl = h->data;
    *buf = uv_buf_init(cl->rbuf, sizeof cl->rbuf);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    client_t *cl = s->data;
    if (n > 0)
        cl->received += (size_t)n;
    else if (n < 0)
        client_close(cl); /* the server answered and closed */
}

static void on_shutdown(uv_shutdown_t *req, int status) {}
static void on_write(uv_write_t *req, int status) {}

static void on_connect(uv_connect_t *req, int status)
{
    client_t *cl = req->data;
    if (status != 0) {
        client_close(cl);
        return;
    }
    uv_read_start((uv_stream_t *)&cl->tcp, on_alloc, on_read);
    /* The input is not copied: it outlives the loop run. */
    uv_buf_t b = uv_buf_init((char *)cl->data, (unsigned)cl->size);
    if (cl->size > 0 && uv_write(&cl->write, (uv_stream_t *)&cl->tcp, &b, 1, on_write) != 0)
        client_close(cl);
    else if (uv_shutdown(&cl->shutdown, (uv_stream_t *)&cl->tcp, on_shutdown) != 0)
        client_close(cl);
}

static void on_deadline(uv_timer_t *t)
{
    client_close(t->data);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (server == NULL)
        setup();
    client_t *cl = calloc(1, sizeof *cl);
    if (cl == NULL)
        abort();
    uv_tcp_init(&loop, &cl->tcp);
    uv_timer_init(&loop, &cl->deadline);
    cl->tcp.data = cl->deadline.data = cl->connect.data = cl;
    cl->open_handles = 2;
    cl->data = data;
    cl->size = size;
    uv_timer_start(&cl->deadline, on_deadline, 2000, 0);
    if (uv_tcp_connect(&cl->connect, &cl->tcp, (const struct sockaddr *)&server_addr,
                       on_connect) != 0)
        client_close(cl);
    while (cl->open_handles > 0)
        uv_run(&loop, UV_RUN_ONCE);
    /* Let the server finish with its side of the connection too. */
    for (int i = 0; i < 4; i++)
        uv_run(&loop, UV_RUN_NOWAIT);
    free(cl);
    return 0;
}
