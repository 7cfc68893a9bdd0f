/* peers.c — once a second, a TCP connect to each other master's raft port
 * (its name resolved again each time) tells whether it is reachable. */
#include "peers.h"

#include <stdio.h>
#include <stdlib.h>

#include "lc_clock.h"
#include "lc_err.h"

#define PROBE_INTERVAL_MS 1000
#define REACHABLE_WITHIN_MS 3000 /* a contact this recent counts as reachable */

typedef struct probe_s {
    peers_t *peers;
    uint64_t id;       /* member probed by this slot; 0 = free */
    lc_hostport_t raft;
    uv_getaddrinfo_t gai;
    uv_connect_t connect;
    uv_tcp_t tcp;
    bool busy;         /* a probe is in flight */
    uint64_t last_contact_ms; /* monotonic; 0 = never */
    uint64_t last_failure_ms; /* monotonic time of the last failed probe; 0 = none */
} probe_t;

struct peers_s {
    uv_loop_t *loop;
    peers_list_fn list;
    void *list_arg;
    uint64_t self_id;
    uv_timer_t timer;
    probe_t probes[LC_NODES_MAX];
    bool closing;
    int open_handles;
};

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
        pr->last_contact_ms = lc_mono_ms();
    else
        pr->last_failure_ms = lc_mono_ms();
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
    char port[8];
    snprintf(port, sizeof port, "%u", pr->raft.port);
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM};
    pr->gai.data = pr;
    if (uv_getaddrinfo(p->loop, &pr->gai, resolved_cb, pr->raft.host, port, &hints) == 0) {
        pr->busy = true;
        p->open_handles++;
    }
}

/* The probe slot of member id, claiming a free one for a new member. */
static probe_t *slot_of(peers_t *p, uint64_t id)
{
    probe_t *free_slot = NULL;
    for (size_t i = 0; i < LC_NODES_MAX; i++) {
        if (p->probes[i].id == id)
            return &p->probes[i];
        if (free_slot == NULL && p->probes[i].id == 0 && !p->probes[i].busy)
            free_slot = &p->probes[i];
    }
    if (free_slot != NULL) {
        free_slot->id = id;
        free_slot->last_contact_ms = free_slot->last_failure_ms = 0;
    }
    return free_slot;
}

static void timer_cb(uv_timer_t *t)
{
    peers_t *p = t->data;
    lc_node_t nodes[LC_NODES_MAX];
    size_t n = p->list(p->list_arg, nodes, LC_NODES_MAX);
    for (size_t i = 0; i < LC_NODES_MAX; i++) { /* forget removed members */
        bool member = false;
        for (size_t j = 0; j < n; j++)
            member |= nodes[j].id == p->probes[i].id;
        if (!member && !p->probes[i].busy)
            p->probes[i].id = 0;
    }
    for (size_t j = 0; j < n; j++) {
        probe_t *pr = nodes[j].id == p->self_id ? NULL : slot_of(p, nodes[j].id);
        if (pr == NULL || pr->busy || nodes[j].raft.port == 0)
            continue;
        pr->raft = nodes[j].raft;
        probe(p, pr);
    }
}

int peers_init(peers_t **out, uv_loop_t *loop, uint64_t self_id, peers_list_fn list, void *arg)
{
    peers_t *p = calloc(1, sizeof *p);
    if (p == NULL)
        return LC_ENOMEM;
    p->loop = loop;
    p->self_id = self_id;
    p->list = list;
    p->list_arg = arg;
    for (size_t i = 0; i < LC_NODES_MAX; i++)
        p->probes[i] = (probe_t){.peers = p};
    uv_timer_init(loop, &p->timer);
    p->timer.data = p;
    p->open_handles = 1;
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
    for (size_t i = 0; i < LC_NODES_MAX; i++)
        if (p->probes[i].busy)
            uv_cancel((uv_req_t *)&p->probes[i].gai);
    uv_close((uv_handle_t *)&p->timer, timer_closed_cb);
}

/* Monotonic ms of the last contact with member id (now for this node). */
static uint64_t last_contact(const peers_t *p, uint64_t id, uint64_t now)
{
    if (id == p->self_id)
        return now;
    for (size_t i = 0; i < LC_NODES_MAX; i++)
        if (p->probes[i].id == id)
            return p->probes[i].last_contact_ms;
    return 0;
}

static bool is_reachable(uint64_t last, uint64_t now)
{
    return last != 0 && now - last <= REACHABLE_WITHIN_MS;
}

bool peers_seems_down(peers_t *p, uint64_t id)
{
    for (size_t i = 0; i < LC_NODES_MAX; i++)
        if (p->probes[i].id == id && id != p->self_id)
            return p->probes[i].last_failure_ms > p->probes[i].last_contact_ms;
    return false;
}

void peers_note_down(peers_t *p, uint64_t id)
{
    probe_t *pr = id != p->self_id ? slot_of(p, id) : NULL;
    if (pr != NULL)
        pr->last_failure_ms = lc_mono_ms();
}

void peers_reachable(peers_t *p, size_t *reachable, size_t *total)
{
    lc_node_t nodes[LC_NODES_MAX];
    uint64_t now = lc_mono_ms();
    *total = p->list(p->list_arg, nodes, LC_NODES_MAX);
    *reachable = 0;
    for (size_t i = 0; i < *total; i++)
        if (is_reachable(last_contact(p, nodes[i].id, now), now))
            (*reachable)++;
    if (*total == 0) /* not in a configuration yet: only itself */
        *reachable = *total = 1;
}

static json_t *hostport_json(const lc_hostport_t *hp)
{
    if (hp->port == 0)
        return json_null();
    char buf[LC_HOST_MAX + 8];
    lc_hostport_format(hp, buf, sizeof buf);
    return json_string(buf);
}

json_t *peers_json(peers_t *p)
{
    lc_node_t nodes[LC_NODES_MAX];
    size_t n = p->list(p->list_arg, nodes, LC_NODES_MAX);
    json_t *list = json_array();
    uint64_t now = lc_mono_ms();
    for (size_t i = 0; i < n; i++) {
        uint64_t last = last_contact(p, nodes[i].id, now);
        json_array_append_new(
            list, json_pack("{s:I,s:o,s:o,s:o,s:b,s:o}", "id", (json_int_t)nodes[i].id, "raft",
                            hostport_json(&nodes[i].raft), "worker",
                            hostport_json(&nodes[i].worker), "api", hostport_json(&nodes[i].api),
                            "reachable", is_reachable(last, now), "last_contact_ms_ago",
                            last ? json_integer((json_int_t)(now - last)) : json_null()));
    }
    return list;
}
