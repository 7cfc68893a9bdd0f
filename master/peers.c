/* peers.c — once a second, a TCP connect to each other master's raft port
 * (its name resolved again each time) tells whether it is reachable. */
#include "peers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_clock.h"
#include "lc_err.h"

#define PROBE_INTERVAL_MS 1000
#define REACHABLE_WITHIN_MS 3000 /* a contact this recent counts as reachable */

typedef struct probe_s {
    peers_t *peers;
    size_t index;      /* into nodes */
    uv_getaddrinfo_t gai;
    uv_connect_t connect;
    uv_tcp_t tcp;
    bool busy;         /* a probe is in flight */
    uint64_t last_contact_ms; /* monotonic; 0 = never */
} probe_t;

struct peers_s {
    uv_loop_t *loop;
    lc_nodes_conf_t nodes;
    bool clustered;
    uint64_t self_id;
    uv_timer_t timer;
    probe_t probes[LC_NODES_MAX];
    bool closing;
    int open_handles;
};

static uint64_t mono_ms(void)
{
    return lc_mono_ns() / 1000000u;
}

static void maybe_free(peers_t *p)
{
    if (p->closing && p->open_handles == 0)
        free(p);
}

static void handle_closed_cb(uv_handle_t *h)
{
    probe_t *pr = h->data;
    peers_t *p = pr->peers;
    pr->busy = false;
    p->open_handles--;
    maybe_free(p);
}

static void connect_cb(uv_connect_t *req, int status)
{
    probe_t *pr = req->data;
    if (status == 0)
        pr->last_contact_ms = mono_ms();
    uv_close((uv_handle_t *)&pr->tcp, handle_closed_cb);
}

static void resolved_cb(uv_getaddrinfo_t *gai, int status, struct addrinfo *res)
{
    probe_t *pr = gai->data;
    peers_t *p = pr->peers;
    int rv = status;
    if (rv == 0 && !p->closing) {
        uv_tcp_init(p->loop, &pr->tcp);
        pr->tcp.data = pr;
        p->open_handles++;
        pr->connect.data = pr;
        rv = uv_tcp_connect(&pr->connect, &pr->tcp, res->ai_addr, connect_cb);
        if (rv != 0)
            uv_close((uv_handle_t *)&pr->tcp, handle_closed_cb);
    } else {
        pr->busy = false;
    }
    uv_freeaddrinfo(res);
    p->open_handles--; /* the lookup itself */
    maybe_free(p);
}

static void probe(peers_t *p, probe_t *pr)
{
    const lc_node_t *n = &p->nodes.nodes[pr->index];
    char port[8];
    snprintf(port, sizeof port, "%u", n->raft.port);
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM};
    pr->gai.data = pr;
    if (uv_getaddrinfo(p->loop, &pr->gai, resolved_cb, n->raft.host, port, &hints) == 0) {
        pr->busy = true;
        p->open_handles++;
    }
}

static void timer_cb(uv_timer_t *t)
{
    peers_t *p = t->data;
    for (size_t i = 0; i < p->nodes.n; i++)
        if (p->nodes.nodes[i].id != p->self_id && !p->probes[i].busy)
            probe(p, &p->probes[i]);
}

int peers_init(peers_t **out, uv_loop_t *loop, const lc_nodes_conf_t *nodes, uint64_t self_id)
{
    peers_t *p = calloc(1, sizeof *p);
    if (p == NULL)
        return LC_ENOMEM;
    p->loop = loop;
    p->self_id = self_id;
    if (nodes != NULL) {
        p->nodes = *nodes;
        p->clustered = true;
    }
    for (size_t i = 0; i < LC_NODES_MAX; i++)
        p->probes[i] = (probe_t){.peers = p, .index = i};
    uv_timer_init(loop, &p->timer);
    p->timer.data = p;
    p->open_handles = 1;
    if (p->clustered)
        uv_timer_start(&p->timer, timer_cb, 0, PROBE_INTERVAL_MS);
    *out = p;
    return 0;
}

static void timer_closed_cb(uv_handle_t *h)
{
    peers_t *p = h->data;
    p->open_handles--;
    maybe_free(p);
}

void peers_close(peers_t *p)
{
    p->closing = true;
    for (size_t i = 0; i < p->nodes.n; i++)
        if (p->probes[i].busy)
            uv_cancel((uv_req_t *)&p->probes[i].gai);
    uv_close((uv_handle_t *)&p->timer, timer_closed_cb);
}

static bool is_reachable(const peers_t *p, size_t i, uint64_t now)
{
    if (p->nodes.nodes[i].id == p->self_id)
        return true;
    uint64_t last = p->probes[i].last_contact_ms;
    return last != 0 && now - last <= REACHABLE_WITHIN_MS;
}

void peers_reachable(const peers_t *p, size_t *reachable, size_t *total)
{
    uint64_t now = mono_ms();
    *reachable = p->clustered ? 0 : 1;
    *total = p->clustered ? p->nodes.n : 1;
    for (size_t i = 0; i < p->nodes.n; i++)
        if (is_reachable(p, i, now))
            (*reachable)++;
}

const lc_node_t *peers_node(const peers_t *p, uint64_t id)
{
    return p->clustered ? lc_nodes_conf_find(&p->nodes, id) : NULL;
}

static json_t *hostport_json(const lc_hostport_t *hp)
{
    char buf[LC_HOST_MAX + 8];
    lc_hostport_format(hp, buf, sizeof buf);
    return json_string(buf);
}

json_t *peers_json(const peers_t *p)
{
    json_t *list = json_array();
    uint64_t now = mono_ms();
    for (size_t i = 0; i < p->nodes.n; i++) {
        const lc_node_t *n = &p->nodes.nodes[i];
        uint64_t last = n->id == p->self_id ? now : p->probes[i].last_contact_ms;
        json_array_append_new(
            list, json_pack("{s:I,s:o,s:o,s:o,s:b,s:o}", "id", (json_int_t)n->id, "raft",
                            hostport_json(&n->raft), "worker", hostport_json(&n->worker), "api",
                            hostport_json(&n->api), "reachable", is_reachable(p, i, now),
                            "last_contact_ms_ago",
                            last ? json_integer((json_int_t)(now - last)) : json_null()));
    }
    return list;
}
