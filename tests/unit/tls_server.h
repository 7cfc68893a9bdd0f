/* tls_server.h — for unit tests of the worker's TLS transport: an HTTPS/1.1 server on
 * 127.0.0.1 in threads of its own (blocking OpenSSL, a thread per connection) that answers
 * each request with its body echoed back ("ok" when it had none), keeps connections open
 * until stopped, and can read slowly from a small receive buffer. Options for tests of what a
 * server may do to the records (all off by default): its highest version and its suites, an
 * answer of a given size, no TLS 1.3 tickets, ciphertext written 1 byte per TCP write, a TLS 1.3 KeyUpdate after
 * each answer or right after the handshake, close_notify and a TCP close after some answers,
 * and one answer's record tampered with. */
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
#include <netinet/tcp.h>
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
    int answers;      /* answered on this connection */
    bool tamper_next; /* the next write's last byte (a record's tag) is flipped */
    bool handshaken;  /* SSL_accept returned */
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
    /* Options, set before a client connects; 0 or NULL: off. */
    int max_version;       /* e.g. TLS1_2_VERSION */
    const char *ciphers;   /* TLS 1.2's cipher list */
    const char *suites;    /* TLS 1.3's ciphersuites */
    size_t answer_bytes;   /* a request without a body is answered with this many bytes */
    bool byte_writes;      /* every write goes out 1 byte per send(), TCP_NODELAY */
    int byte_pause_us;     /* and after the handshake, a pause after each byte */
    bool key_update;       /* TLS 1.3: KeyUpdate (update_requested) after each answer */
    bool key_update_early; /* TLS 1.3: KeyUpdate (update_requested) right after SSL_accept */
    bool no_tickets;       /* TLS 1.3: no NewSessionTicket after the handshake */
    bool key_update_before_body; /* TLS 1.3: KeyUpdate (update_requested) once a request's
                                  * head is read, before its body (with read_delay_ms: while
                                  * the client still writes it) */
    int inject_after;      /* after this answer of a connection, inject_len raw bytes go to
                            * the socket, outside TLS */
    const void *inject;
    size_t inject_len;
    int close_after;       /* after this many answers on a connection: close_notify, then,
                            * close_pause_ms later, the TCP connection shut */
    int close_pause_ms;
    int tamper_answer;     /* this answer of each connection (1: the first) has a record
                            * whose tag is flipped */
    int key_updates_received; /* TLS 1.3 KeyUpdates the clients sent */
    int key_updates_sent;
    int close_notifies;    /* connections a client ended with close_notify */
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
        if (n <= 0) {
            if (SSL_get_error(ssl, n) == SSL_ERROR_ZERO_RETURN) {
                tls_server_conn_t *sc = SSL_get_app_data(ssl);
                pthread_mutex_lock(&sc->srv->lock);
                sc->srv->close_notifies++;
                pthread_mutex_unlock(&sc->srv->lock);
            }
            return false;
        }
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

/* What answer_bytes answers: the same pattern tls_server_pattern gives the test. */
static inline void tls_server_pattern(char *b, size_t len)
{
    for (size_t i = 0; i < len; i++)
        b[i] = (char)('A' + (i % 53 + i / 16384) % 26);
}

/* TLS 1.3: a KeyUpdate asking for the peer's, sent at once. */
static inline bool tls_server_key_update(tls_server_conn_t *sc, SSL *ssl)
{
    if (SSL_version(ssl) != TLS1_3_VERSION)
        return true;
    if (SSL_key_update(ssl, SSL_KEY_UPDATE_REQUESTED) != 1 || SSL_do_handshake(ssl) != 1)
        return false;
    pthread_mutex_lock(&sc->srv->lock);
    sc->srv->key_updates_sent++;
    pthread_mutex_unlock(&sc->srv->lock);
    return true;
}

/* The write BIO of byte_writes and tamper_answer: straight to the socket. */
static inline int tls_server_bio_write(BIO *b, const char *data, int len)
{
    tls_server_conn_t *sc = BIO_get_data(b);
    BIO_clear_retry_flags(b);
    char *copy = NULL;
    if (sc->tamper_next && sc->handshaken && len > 0) {
        if ((copy = malloc((size_t)len)) == NULL)
            return -1;
        memcpy(copy, data, (size_t)len);
        copy[len - 1] ^= 0x01;
        data = copy;
        sc->tamper_next = false;
    }
    int off = 0;
    while (off < len) {
        int step = sc->srv->byte_writes ? 1 : len - off;
        ssize_t n = send(sc->fd, data + off, (size_t)step, MSG_NOSIGNAL);
        if (n <= 0)
            break;
        off += (int)n;
        if (sc->srv->byte_writes && sc->handshaken && sc->srv->byte_pause_us > 0) {
            struct timespec ts = {0, (long)sc->srv->byte_pause_us * 1000L};
            nanosleep(&ts, NULL);
        }
    }
    free(copy);
    return off == len ? len : -1;
}

static inline long tls_server_bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)b, (void)num, (void)ptr;
    return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static inline int tls_server_bio_create(BIO *b)
{
    BIO_set_init(b, 1);
    return 1;
}

/* Counts the KeyUpdates that go by (OpenSSL's message callback). */
static inline void tls_server_on_msg(int write_p, int version, int content_type,
                                     const void *buf, size_t len, SSL *ssl, void *arg)
{
    (void)version, (void)arg;
    const unsigned char *p = buf;
    if (content_type != SSL3_RT_HANDSHAKE || len < 1 || p[0] != SSL3_MT_KEY_UPDATE || write_p)
        return;
    tls_server_conn_t *sc = SSL_get_app_data(ssl);
    pthread_mutex_lock(&sc->srv->lock);
    sc->srv->key_updates_received++;
    pthread_mutex_unlock(&sc->srv->lock);
}

/* The options that shape a connection's SSL; false when one cannot be applied. */
static inline bool tls_server_apply(tls_server_conn_t *sc, SSL *ssl, BIO_METHOD **meth)
{
    tls_server_t *srv = sc->srv;
    SSL_set_app_data(ssl, sc);
    SSL_set_msg_callback(ssl, tls_server_on_msg);
    if (srv->max_version != 0 && SSL_set_max_proto_version(ssl, srv->max_version) != 1)
        return false;
    if (srv->ciphers != NULL && SSL_set_cipher_list(ssl, srv->ciphers) != 1)
        return false;
    if (srv->suites != NULL && SSL_set_ciphersuites(ssl, srv->suites) != 1)
        return false;
    if (srv->no_tickets && SSL_set_num_tickets(ssl, 0) != 1)
        return false;
    if (!srv->byte_writes && srv->tamper_answer == 0)
        return true;
    int one = 1;
    setsockopt(sc->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    *meth = BIO_meth_new(BIO_TYPE_SOURCE_SINK, "tls_server write");
    BIO *w = *meth != NULL ? BIO_new(*meth) : NULL;
    if (w == NULL || BIO_meth_set_write(*meth, tls_server_bio_write) != 1 ||
        BIO_meth_set_ctrl(*meth, tls_server_bio_ctrl) != 1 ||
        BIO_meth_set_create(*meth, tls_server_bio_create) != 1) {
        BIO_free(w);
        return false;
    }
    BIO_set_init(w, 1);
    BIO_set_data(w, sc);
    SSL_set0_wbio(ssl, w);
    return true;
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
    if (sc->srv->key_update_before_body && !tls_server_key_update(sc, ssl)) {
        free(body);
        return false;
    }
    if (sc->srv->read_delay_ms > 0)
        tls_server_sleep_ms(sc->srv->read_delay_ms);
    bool ok = tls_server_read_full(ssl, body + early, body_len - early);
    if (body_len == 0 && sc->srv->answer_bytes > 0) {
        free(body);
        body_len = sc->srv->answer_bytes;
        if ((body = malloc(body_len)) == NULL)
            return false;
        tls_server_pattern(body, body_len);
    } else if (body_len == 0) {
        memcpy(body, "ok", body_len = 2);
    }
    if (sc->srv->tamper_answer > 0 && sc->answers + 1 == sc->srv->tamper_answer)
        sc->tamper_next = true;
    char status[96];
    int n = snprintf(status, sizeof status, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n",
                     body_len);
    ok = ok && SSL_write(ssl, status, n) == n && SSL_write(ssl, body, (int)body_len) == (int)body_len;
    free(body);
    if (ok) {
        sc->answers++;
        pthread_mutex_lock(&sc->srv->lock);
        sc->srv->served++;
        pthread_mutex_unlock(&sc->srv->lock);
    }
    if (ok && sc->srv->key_update)
        ok = tls_server_key_update(sc, ssl);
    if (ok && sc->srv->inject_after > 0 && sc->answers == sc->srv->inject_after)
        ok = send(sc->fd, sc->srv->inject, sc->srv->inject_len, MSG_NOSIGNAL) ==
             (ssize_t)sc->srv->inject_len;
    if (ok && sc->srv->close_after > 0 && sc->answers == sc->srv->close_after) {
        (void)SSL_shutdown(ssl); /* close_notify */
        tls_server_sleep_ms(sc->srv->close_pause_ms);
        shutdown(sc->fd, SHUT_RDWR);
        return false;
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
    BIO_METHOD *meth = NULL;
    bool up = ssl != NULL && head != NULL && SSL_set_fd(ssl, sc->fd) == 1 &&
              tls_server_apply(sc, ssl, &meth) && SSL_accept(ssl) == 1;
    sc->handshaken = up;
    if (up && sc->srv->key_update_early)
        up = tls_server_key_update(sc, ssl);
    if (up)
        while (tls_server_serve_one(sc, ssl, head, cap, &have))
            ;
    free(head);
    SSL_free(ssl);
    BIO_meth_free(meth);
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
