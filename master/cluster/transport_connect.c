/* transport_connect.c — outgoing connections of the Raft port, for raft, for
 * the watch and for archive streams: names are looked up again at each
 * connect, so a peer that moved is found; the session then runs as in
 * transport.c. */
#include <arpa/inet.h>
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_addr.h"
#include "lc_log.h"
#include "transport.h"
#include "transport_internal.h"

static void connect_cb(uv_connect_t *req, int status)
{
    peer_conn_t *c = req->data;
    if (c->failed)
        return; /* closed meanwhile: maybe_free() reports it */
    if (status != 0) {
        lc_debug("transport", "msg=\"cannot connect to raft peer\" id=%llu peer=%s error=\"%s\"",
                 (unsigned long long)c->peer_id, c->peer, uv_strerror(status));
        c->refused = status == UV_ECONNREFUSED;
        transport_conn_fail(c, NULL);
        return;
    }
    transport_conn_start(c);
}

/* Connects to addr, an IPv4 address of host (a name or that literal, which
 * a TLS peer's certificate must name): for raft's req, or (req NULL) as the
 * watch of the current generation. Returns 0 (cb follows, for raft) or a
 * RAFT_ error. */
/* Who waits for an outgoing connection: raft (req, cb), an archive stream (archive_cb), or
 * neither (the watch). */
typedef struct purpose_s {
    struct raft_uv_connect *req;
    raft_uv_connect_cb cb;
    cluster_transport_stream_cb archive_cb;
    void *archive_arg;
} purpose_t;

static int connect_literal(cluster_transport_t *t, const purpose_t *p, raft_id id,
                           const char *host, const struct sockaddr_in *addr)
{
    struct raft_uv_connect *req = p->req;
    peer_conn_t *c = transport_conn_new(t, true);
    if (c == NULL)
        return RAFT_NOMEM;
    snprintf(c->host, sizeof c->host, "%s", host);
    c->req = req;
    c->cb = p->cb;
    c->peer_id = id;
    c->archive = p->archive_cb != NULL;
    c->watch = req == NULL && !c->archive;
    c->watch_gen = t->watch_gen;
    c->connect.data = c;
    char ip[INET_ADDRSTRLEN];
    uv_ip4_name(addr, ip, sizeof ip);
    snprintf(c->peer, sizeof c->peer, "%s:%u", ip, ntohs(addr->sin_port));
    int rv = uv_tcp_connect(&c->connect, c->tcp, (const struct sockaddr *)addr, connect_cb);
    if (rv != 0) {
        c->watch_gen--; /* a synchronous failure is returned, not called back */
        transport_conn_fail(c, NULL); /* without cb: this attempt failed synchronously */
        return RAFT_NOCONNECTION;
    }
    c->notify = req != NULL;
    c->archive_cb = p->archive_cb; /* from here on it is called back */
    c->archive_arg = p->archive_arg;
    return 0;
}

static void unlink_pending(cluster_transport_t *t, pending_resolve_t *p)
{
    for (pending_resolve_t **link = &t->pending; *link != NULL; link = &(*link)->next)
        if (*link == p) {
            *link = p->next;
            return;
        }
}

static void resolved_cb(uv_getaddrinfo_t *gai, int status, struct addrinfo *res)
{
    pending_resolve_t *p = gai->data;
    cluster_transport_t *t = p->t;
    unlink_pending(t, p);
    struct sockaddr_in addr;
    bool found = status == 0 && res != NULL;
    if (found) {
        memcpy(&addr, res->ai_addr, sizeof addr);
        addr.sin_port = htons(p->port);
    }
    uv_freeaddrinfo(res);
    bool stale_watch = p->req == NULL && p->archive_cb == NULL && p->watch_gen != t->watch_gen;
    int rv = RAFT_CANCELED;
    purpose_t why = {p->req, p->cb, p->archive_cb, p->archive_arg};
    if (!t->closing && !stale_watch) {
        rv = found ? connect_literal(t, &why, p->id, p->host, &addr) : RAFT_NOCONNECTION;
        if (!found)
            lc_debug("transport", "msg=\"cannot resolve raft peer\" id=%llu error=\"%s\"",
                     (unsigned long long)p->id, uv_strerror(status));
    }
    if (rv != 0 && p->req != NULL)
        p->cb(p->req, NULL, rv);
    if (rv != 0 && p->archive_cb != NULL)
        p->archive_cb(p->archive_arg, NULL);
    free(p);
    transport_maybe_closed(t);
}

/* Connects to id at address for whoever `why` names (for raft and an archive stream the
 * callback follows when this returns 0). */
static int connect_to(cluster_transport_t *t, const purpose_t *why, raft_id id,
                      const char *address)
{
    assert(!t->closing);
    lc_hostport_t hp;
    char err[128];
    struct sockaddr_in addr;
    if (lc_hostport_parse(address, 0, &hp, err, sizeof err) != 0)
        return RAFT_NOCONNECTION;
    if (uv_ip4_addr(hp.host, hp.port, &addr) == 0)
        return connect_literal(t, why, id, hp.host, &addr);
    pending_resolve_t *p = calloc(1, sizeof *p);
    if (p == NULL)
        return RAFT_NOMEM;
    *p = (pending_resolve_t){.t = t, .req = why->req, .watch_gen = t->watch_gen, .id = id,
                             .port = hp.port, .cb = why->cb, .archive_cb = why->archive_cb,
                             .archive_arg = why->archive_arg};
    snprintf(p->host, sizeof p->host, "%s", hp.host);
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

int transport_outer_connect(struct raft_uv_transport *outer, struct raft_uv_connect *req,
                            raft_id id, const char *address, raft_uv_connect_cb cb)
{
    assert(req != NULL && cb != NULL);
    purpose_t why = {.req = req, .cb = cb};
    return connect_to(transport_of_outer(outer), &why, id, address);
}

/* ---- the watch ---------------------------------------------------------- */

void cluster_transport_set_watch_cb(cluster_transport_t *t, cluster_transport_watch_cb lost,
                                    void *arg)
{
    t->watch_lost = lost;
    t->watch_arg = arg;
}

void cluster_transport_unwatch(cluster_transport_t *t)
{
    unsigned old = t->watch_gen++; /* from here on, the old watch's end is not reported */
    for (peer_conn_t *c = t->conns; c != NULL; c = c->next)
        if (c->watch && c->outgoing && c->watch_gen == old)
            transport_conn_fail(c, NULL);
}

int cluster_transport_watch(cluster_transport_t *t, raft_id id, const char *address)
{
    assert(id != 0 && address != NULL);
    cluster_transport_unwatch(t);
    if (t->closing)
        return RAFT_CANCELED;
    purpose_t why = {0};
    return connect_to(t, &why, id, address);
}

/* ---- archive streams ---------------------------------------------------- */

void cluster_transport_set_archive_server(cluster_transport_t *t, cluster_transport_archive_cb serve,
                                          void *arg)
{
    t->archive_serve = serve;
    t->archive_serve_arg = arg;
}

int cluster_transport_open_archive(cluster_transport_t *t, raft_id id, const char *address,
                                   cluster_transport_stream_cb cb, void *arg)
{
    assert(id != 0 && address != NULL && cb != NULL);
    if (t->closing)
        return RAFT_CANCELED;
    purpose_t why = {.archive_cb = cb, .archive_arg = arg};
    return connect_to(t, &why, id, address);
}
