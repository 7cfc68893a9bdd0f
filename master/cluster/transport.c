/* transport.c — name resolution in front of raft's TCP transport: each
 * connect looks the peer's name up again, so a peer that moved is found. */
#include "transport.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_addr.h"
#include "lc_log.h"

typedef struct pending_resolve_s {
    uv_getaddrinfo_t gai;
    resolving_transport_t *t;
    struct raft_uv_connect *req;
    raft_id id;
    uint16_t port;
    raft_uv_connect_cb cb;
    struct pending_resolve_s *next;
} pending_resolve_t;

static resolving_transport_t *of_outer(struct raft_uv_transport *outer)
{
    return outer->impl;
}

static int outer_init(struct raft_uv_transport *outer, raft_id id, const char *address)
{
    resolving_transport_t *t = of_outer(outer);
    return t->inner.init(&t->inner, id, address);
}

static void inner_accept_cb(struct raft_uv_transport *inner, raft_id id, const char *address,
                            struct uv_stream_s *stream)
{
    resolving_transport_t *t = inner->data;
    t->accept_cb(&t->outer, id, address, stream);
}

static int outer_listen(struct raft_uv_transport *outer, raft_uv_accept_cb cb)
{
    resolving_transport_t *t = of_outer(outer);
    t->accept_cb = cb;
    int rv = t->inner.listen(&t->inner, inner_accept_cb);
    if (rv != 0)
        snprintf(outer->errmsg, sizeof outer->errmsg, "%s", t->inner.errmsg);
    return rv;
}

static void unlink_pending(resolving_transport_t *t, pending_resolve_t *p)
{
    for (pending_resolve_t **link = &t->pending; *link != NULL; link = &(*link)->next)
        if (*link == p) {
            *link = p->next;
            return;
        }
}

static void maybe_closed(resolving_transport_t *t);

static void resolved_cb(uv_getaddrinfo_t *gai, int status, struct addrinfo *res)
{
    pending_resolve_t *p = gai->data;
    resolving_transport_t *t = p->t;
    unlink_pending(t, p);
    char literal[64] = "";
    if (status == 0 && res != NULL) {
        char ip[INET_ADDRSTRLEN];
        uv_ip4_name((const struct sockaddr_in *)res->ai_addr, ip, sizeof ip);
        snprintf(literal, sizeof literal, "%s:%u", ip, p->port);
    }
    uv_freeaddrinfo(res);
    int rv = RAFT_CANCELED;
    if (!t->closing) {
        rv = literal[0] ? t->inner.connect(&t->inner, p->req, p->id, literal, p->cb)
                        : RAFT_NOCONNECTION;
        if (literal[0] == '\0')
            lc_debug("transport", "msg=\"cannot resolve raft peer\" id=%llu error=\"%s\"",
                     (unsigned long long)p->id, uv_strerror(status));
    }
    if (rv != 0)
        p->cb(p->req, NULL, rv);
    free(p);
    maybe_closed(t);
}

static int outer_connect(struct raft_uv_transport *outer, struct raft_uv_connect *req,
                         raft_id id, const char *address, raft_uv_connect_cb cb)
{
    resolving_transport_t *t = of_outer(outer);
    lc_hostport_t hp;
    char why[128];
    struct in_addr literal;
    if (lc_hostport_parse(address, 0, &hp, why, sizeof why) != 0)
        return RAFT_NOCONNECTION;
    if (inet_pton(AF_INET, hp.host, &literal) == 1)
        return t->inner.connect(&t->inner, req, id, address, cb);
    pending_resolve_t *p = calloc(1, sizeof *p);
    if (p == NULL)
        return RAFT_NOMEM;
    *p = (pending_resolve_t){.t = t, .req = req, .id = id, .port = hp.port, .cb = cb};
    p->gai.data = p;
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM};
    if (uv_getaddrinfo(t->loop, &p->gai, resolved_cb, hp.host, NULL, &hints) != 0) {
        free(p);
        return RAFT_NOCONNECTION;
    }
    p->next = t->pending;
    t->pending = p;
    return 0;
}

/* The close callback fires once the inner transport closed and no lookup is
 * pending (their connect callbacks must have run first). */
static void maybe_closed(resolving_transport_t *t)
{
    if (t->closing != 2 || t->pending != NULL || t->close_cb == NULL)
        return;
    raft_uv_transport_close_cb cb = t->close_cb;
    t->close_cb = NULL;
    cb(&t->outer);
}

static void inner_closed_cb(struct raft_uv_transport *inner)
{
    resolving_transport_t *t = inner->data;
    t->closing = 2;
    maybe_closed(t);
}

static void outer_close(struct raft_uv_transport *outer, raft_uv_transport_close_cb cb)
{
    resolving_transport_t *t = of_outer(outer);
    t->closing = 1;
    t->close_cb = cb;
    for (pending_resolve_t *p = t->pending; p != NULL; p = p->next)
        uv_cancel((uv_req_t *)&p->gai);
    t->inner.close(&t->inner, inner_closed_cb);
}

int resolving_transport_init(resolving_transport_t *t, uv_loop_t *loop, const char *bind_address)
{
    memset(t, 0, sizeof *t);
    t->loop = loop;
    t->inner.data = t;
    int rv = raft_uv_tcp_init(&t->inner, loop);
    if (rv != 0)
        return rv;
    if (bind_address != NULL && (rv = raft_uv_tcp_set_bind_address(&t->inner, bind_address)) != 0) {
        raft_uv_tcp_close(&t->inner);
        return rv;
    }
    t->outer.impl = t;
    t->outer.init = outer_init;
    t->outer.listen = outer_listen;
    t->outer.connect = outer_connect;
    t->outer.close = outer_close;
    return 0;
}

void resolving_transport_close(resolving_transport_t *t)
{
    raft_uv_tcp_close(&t->inner);
}
