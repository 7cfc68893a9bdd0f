/* test_ctl_http.c — loadctl's redirects: followed to the cluster's masters only, and the
 * bearer token never sent to a host that GET /api/v1/cluster does not list. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctl_http.h"

/* A one-thread HTTP server on 127.0.0.1 or 127.0.0.2 with canned answers. */
typedef struct fake_s {
    int fd;
    uint16_t port;
    pthread_t th;
    atomic_int requests, with_token;
    char redirect_to[128]; /* "": answer 201; else 307 to this URL for POSTs */
    char members[256];     /* the "api" of GET /api/v1/cluster's one other member */
} fake_t;

static void fake_answer(fake_t *f, int c, const char *req)
{
    char out[1024];
    int n;
    if (strncmp(req, "GET /api/v1/cluster ", 20) == 0) {
        char body[512];
        int bl = snprintf(body, sizeof body, "{\"members\":[{\"id\":1,\"api\":\"127.0.0.1:%u\"},"
                                              "{\"id\":2,\"api\":\"%s\"}]}", f->port, f->members);
        n = snprintf(out, sizeof out, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", bl, body);
    } else if (f->redirect_to[0] != '\0') {
        n = snprintf(out, sizeof out, "HTTP/1.1 307 Temporary Redirect\r\nLocation: %s/api/v1/runs"
                                      "\r\nContent-Length: 0\r\n\r\n", f->redirect_to);
    } else {
        n = snprintf(out, sizeof out, "HTTP/1.1 201 Created\r\nContent-Length: 8\r\n\r\n{\"id\":7}");
    }
    send(c, out, (size_t)n, MSG_NOSIGNAL);
}

static void *fake_main(void *arg)
{
    fake_t *f = arg;
    for (;;) {
        int c = accept(f->fd, NULL, NULL);
        if (c < 0)
            return NULL;
        char req[8192];
        size_t len = 0;
        ssize_t n;
        while (len < sizeof req - 1 && (n = recv(c, req + len, sizeof req - 1 - len, 0)) > 0) {
            len += (size_t)n;
            req[len] = '\0';
            char *end = strstr(req, "\r\n\r\n");
            const char *cl = strcasestr(req, "\r\nContent-Length: ");
            if (end && (size_t)(end + 4 - req) + (cl ? strtoul(cl + 18, NULL, 10) : 0) <= len)
                break;
        }
        req[len] = '\0';
        atomic_fetch_add(&f->requests, 1);
        if (strcasestr(req, "\r\nAuthorization: Bearer secret-token\r\n"))
            atomic_fetch_add(&f->with_token, 1);
        fake_answer(f, c, req);
        close(c);
    }
}

static void fake_start(fake_t *f, const char *ip)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t sl = sizeof sa;
    inet_pton(AF_INET, ip, &sa.sin_addr);
    f->fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(f->fd >= 0);
    assert_int_equal(bind(f->fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(f->fd, 16), 0);
    getsockname(f->fd, (struct sockaddr *)&sa, &sl);
    f->port = ntohs(sa.sin_port);
    assert_int_equal(pthread_create(&f->th, NULL, fake_main, f), 0);
}

static void fake_stop(fake_t *f)
{
    shutdown(f->fd, SHUT_RDWR);
    close(f->fd);
    pthread_join(f->th, NULL);
}

/* master (127.0.0.1) redirects to other (127.0.0.2); other is a master when
 * master's cluster view lists it. Returns what ctl_http_request returned. */
static int post_via_redirect(bool listed, fake_t *master, fake_t *other, int *status, char *err)
{
    fake_start(other, "127.0.0.2");
    fake_start(master, "127.0.0.1");
    snprintf(master->redirect_to, sizeof master->redirect_to, "http://127.0.0.2:%u", other->port);
    snprintf(master->members, sizeof master->members, "127.0.0.%d:%u", listed ? 2 : 3,
             other->port);
    char base[64];
    snprintf(base, sizeof base, "http://127.0.0.1:%u", master->port);
    ctl_http_response_t resp = {0};
    int rv = ctl_http_request(base, "secret-token", "POST", "/api/v1/runs", "{}", 2, &resp, err,
                              256);
    *status = rv == CTL_HTTP_OK ? resp.status : 0;
    if (rv == CTL_HTTP_OK)
        ctl_http_response_free(&resp);
    fake_stop(master);
    fake_stop(other);
    return rv;
}

static void test_redirect_to_a_stranger_is_refused(void **state)
{
    (void)state;
    fake_t master = {0}, other = {0};
    char err[256] = "";
    int status;
    int rv = post_via_redirect(false, &master, &other, &status, err);
    assert_int_equal(rv, CTL_HTTP_EPROTO);
    assert_non_null(strstr(err, "not one of the cluster's masters"));
    assert_int_equal(atomic_load(&other.requests), 0); /* neither token nor body went there */
    assert_int_equal(atomic_load(&master.requests), 2); /* the POST, then GET /api/v1/cluster */
}

static void test_redirect_to_a_master_is_followed(void **state)
{
    (void)state;
    fake_t master = {0}, other = {0};
    char err[256] = "";
    int status;
    int rv = post_via_redirect(true, &master, &other, &status, err);
    assert_int_equal(rv, CTL_HTTP_OK);
    assert_int_equal(status, 201);
    assert_int_equal(atomic_load(&other.requests), 1);
    assert_int_equal(atomic_load(&other.with_token), 1);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    alarm(30);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_redirect_to_a_stranger_is_refused),
        cmocka_unit_test(test_redirect_to_a_master_is_followed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
