/* tls_server.h — for unit tests of the worker's TLS transport: an HTTPS/1.1 server on
 * 127.0.0.1 in threads of its own (blocking OpenSSL, a thread per connection) that answers
 * each request with its body echoed back ("ok" when it had none), keeps connections open
 * until stopped, and can read slowly from a small receive buffer. */
#ifndef TESTS_UNIT_TLS_SERVER_H
#define TESTS_UNIT_TLS_SERVER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#define TLS_SERVER_CONNS 64
#define TLS_SERVER_BODY_MAX (4u << 20)

typedef struct tls_server_s tls_server_t;

typedef struct tls_server_conn_s {
    tls_server_t *srv;
    int fd;
    pthread_t thread;
} tls_server_conn_t;

struct tls_server_s {
    SSL_CTX *ctx;
    int listen_fd;
    uint16_t port;
    int rcvbuf;        /* > 0: SO_RCVBUF of accepted connections */
    int read_delay_ms; /* a pause before reading each request's body */
    pthread_t acceptor;
    pthread_mutex_t lock;
    tls_server_conn_t conns[TLS_SERVER_CONNS];
    int n_conns;
    int served;        /* requests answered */
};

static inline void tls_server_sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static inline bool tls_server_read_full(SSL *ssl, char *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        int n = SSL_read(ssl, buf + got, (int)(len - got));
        if (n <= 0)
            return false;
        got += (size_t)n;
    }
    return true;
}

/* Reads one request's head into head (NUL-terminated, without the body); false at EOF. */
static inline bool tls_server_read_head(SSL *ssl, char *head, size_t cap, size_t *have,
                                        size_t *head_len)
{
    char *end;
    head[*have] = '\0';
    while ((end = strstr(head, "\r\n\r\n")) == NULL) {
        if (*have + 1 >= cap)
            return false;
        int n = SSL_read(ssl, head + *have, (int)(cap - 1 - *have));
        if (n <= 0)
            return false;
        *have += (size_t)n;
        head[*have] = '\0';
    }
    *head_len = (size_t)(end + 4 - head);
    return true;
}

static inline size_t tls_server_content_length(const char *head)
{
    const char *p = strcasestr(head, "\r\ncontent-length:");
    return p != NULL ? strtoul(p + 17, NULL, 10) : 0;
}

/* Answers one request; false when the connection ended. */
static inline bool tls_server_serve_one(tls_server_conn_t *sc, SSL *ssl, char *head,
                                        size_t cap, size_t *have)
{
    size_t head_len;
    if (!tls_server_read_head(ssl, head, cap, have, &head_len))
        return false;
    size_t body_len = tls_server_content_length(head);
    if (body_len > TLS_SERVER_BODY_MAX)
        return false;
    char *body = malloc(body_len + 2);
    if (body == NULL)
        return false;
    size_t early = *have - head_len < body_len ? *have - head_len : body_len;
    memcpy(body, head + head_len, early);
    memmove(head, head + head_len + early, *have - head_len - early);
    *have -= head_len + early;
    if (sc->srv->read_delay_ms > 0)
        tls_server_sleep_ms(sc->srv->read_delay_ms);
    bool ok = tls_server_read_full(ssl, body + early, body_len - early);
    if (body_len == 0)
        memcpy(body, "ok", body_len = 2);
    char status[96];
    int n = snprintf(status, sizeof status, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n",
                     body_len);
    ok = ok && SSL_write(ssl, status, n) == n && SSL_write(ssl, body, (int)body_len) == (int)body_len;
    free(body);
    if (ok) {
        pthread_mutex_lock(&sc->srv->lock);
        sc->srv->served++;
        pthread_mutex_unlock(&sc->srv->lock);
    }
    return ok;
}

static inline void *tls_server_conn_main(void *arg)
{
    tls_server_conn_t *sc = arg;
    SSL *ssl = SSL_new(sc->srv->ctx);
    static const size_t cap = 16384;
    char *head = malloc(cap);
    size_t have = 0;
    if (ssl != NULL && head != NULL && SSL_set_fd(ssl, sc->fd) == 1 && SSL_accept(ssl) == 1)
        while (tls_server_serve_one(sc, ssl, head, cap, &have))
            ;
    free(head);
    SSL_free(ssl);
    ERR_clear_error();
    return NULL;
}

static inline void *tls_server_accept_main(void *arg)
{
    tls_server_t *srv = arg;
    for (;;) {
        int fd = accept(srv->listen_fd, NULL, NULL);
        if (fd < 0)
            return NULL; /* shut down */
        pthread_mutex_lock(&srv->lock);
        if (srv->n_conns == TLS_SERVER_CONNS) {
            pthread_mutex_unlock(&srv->lock);
            close(fd);
            continue;
        }
        tls_server_conn_t *sc = &srv->conns[srv->n_conns];
        sc->srv = srv;
        sc->fd = fd;
        if (srv->rcvbuf > 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &srv->rcvbuf, sizeof srv->rcvbuf);
        if (pthread_create(&sc->thread, NULL, tls_server_conn_main, sc) == 0)
            srv->n_conns++;
        else
            close(fd);
        pthread_mutex_unlock(&srv->lock);
    }
}

/* Starts a server presenting cert/key (PEM files); 0 or -1. */
static inline int tls_server_start(tls_server_t *srv, const char *cert, const char *key)
{
    memset(srv, 0, sizeof *srv);
    pthread_mutex_init(&srv->lock, NULL);
    srv->ctx = SSL_CTX_new(TLS_server_method());
    if (srv->ctx == NULL || SSL_CTX_use_certificate_chain_file(srv->ctx, cert) != 1 ||
        SSL_CTX_use_PrivateKey_file(srv->ctx, key, SSL_FILETYPE_PEM) != 1)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    srv->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    if (srv->listen_fd < 0 || bind(srv->listen_fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(srv->listen_fd, 128) != 0 ||
        getsockname(srv->listen_fd, (struct sockaddr *)&a, &alen) != 0)
        return -1;
    srv->port = ntohs(a.sin_port);
    return pthread_create(&srv->acceptor, NULL, tls_server_accept_main, srv) == 0 ? 0 : -1;
}

static inline int tls_server_served(tls_server_t *srv)
{
    pthread_mutex_lock(&srv->lock);
    int n = srv->served;
    pthread_mutex_unlock(&srv->lock);
    return n;
}

/* Ends every connection and thread. */
static inline void tls_server_stop(tls_server_t *srv)
{
    shutdown(srv->listen_fd, SHUT_RDWR);
    pthread_join(srv->acceptor, NULL);
    close(srv->listen_fd);
    for (int i = 0; i < srv->n_conns; i++) {
        shutdown(srv->conns[i].fd, SHUT_RDWR);
        pthread_join(srv->conns[i].thread, NULL);
        close(srv->conns[i].fd);
    }
    SSL_CTX_free(srv->ctx);
    pthread_mutex_destroy(&srv->lock);
}

#endif
