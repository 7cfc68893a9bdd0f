/* members.c — merging the Raft configuration with known member addresses. */
#include "members.h"

#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "lc_log.h"
#include "quorum.h"
#include "store.h"

static void parse_or_unknown(const char *text, lc_hostport_t *out)
{
    char why[128];
    if (text[0] == '\0' || lc_hostport_parse(text, 0, out, why, sizeof why) != 0)
        memset(out, 0, sizeof *out);
}

static void self_addresses(master_t *m, lc_node_t *n)
{
    char why[128];
    lc_hostport_parse(m->cfg.worker_advertise, 0, &n->worker, why, sizeof why);
    snprintf(n->api.host, sizeof n->api.host, "%s",
             strcmp(m->cfg.api_host, "0.0.0.0") == 0 ? "127.0.0.1" : m->cfg.api_host);
    n->api.port = m->cfg.api_port;
}

static void fill_addresses(master_t *m, lc_node_t *n, const char *raft_address)
{
    char raft[LC_HOST_MAX + 8], worker[LC_HOST_MAX + 8], api[LC_HOST_MAX + 8];
    parse_or_unknown(raft_address, &n->raft);
    if (store_member_get(m->store, n->id, raft, worker, api, sizeof raft) == 0) {
        parse_or_unknown(worker, &n->worker);
        parse_or_unknown(api, &n->api);
        return;
    }
    const lc_node_t *conf = m->cfg.clustered ? lc_nodes_conf_find(&m->cfg.nodes, n->id) : NULL;
    if (conf != NULL) {
        n->worker = conf->worker;
        n->api = conf->api;
    } else if (n->id == m->cfg.id) {
        self_addresses(m, n);
    }
}

size_t members_list(master_t *m, lc_node_t *out, size_t max)
{
    quorum_server_t servers[LC_NODES_MAX];
    size_t n = quorum_servers(m->quorum, servers, max < LC_NODES_MAX ? max : LC_NODES_MAX);
    for (size_t i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        out[i].id = servers[i].id;
        fill_addresses(m, &out[i], servers[i].address);
    }
    return n;
}

bool members_find(master_t *m, uint64_t id, lc_node_t *out)
{
    lc_node_t all[LC_NODES_MAX];
    size_t n = members_list(m, all, LC_NODES_MAX);
    for (size_t i = 0; i < n; i++)
        if (all[i].id == id) {
            *out = all[i];
            return true;
        }
    return false;
}

void members_register_self(master_t *m)
{
    char raft[LC_HOST_MAX + 8], worker[LC_HOST_MAX + 8], api[LC_HOST_MAX + 8];
    if (store_member_get(m->store, m->cfg.id, raft, worker, api, sizeof raft) == 0)
        return;
    lc_node_t self = {.id = m->cfg.id};
    fill_addresses(m, &self, m->cfg.raft_address);
    if (self.worker.port == 0)
        self_addresses(m, &self);
    lc_hostport_format(&self.worker, worker, sizeof worker);
    lc_hostport_format(&self.api, api, sizeof api);
    command_sink_t sink = command_sink_quorum(m->quorum);
    if (command_put_member(&sink, m->cfg.id, m->cfg.raft_address, worker, api, NULL, NULL) != 0)
        lc_warn("members", "msg=\"cannot register this master's addresses\"");
}
