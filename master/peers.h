/* peers.h — the other masters as this one sees them: their addresses (from
 * nodes.conf) and whether their raft port answered a TCP connect lately. */
#ifndef MASTER_PEERS_H
#define MASTER_PEERS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "lc_nodes_conf.h"

typedef struct peers_s peers_t;

/* Probes every node but self_id once a second. nodes may be NULL (one-node
 * quorum). Returns 0 or LC_ENOMEM. */
int peers_init(peers_t **out, uv_loop_t *loop, const lc_nodes_conf_t *nodes, uint64_t self_id);
void peers_close(peers_t *p);

/* Masters reachable now, this one included, and the size of the quorum. */
void peers_reachable(const peers_t *p, size_t *reachable, size_t *total);
/* A node's entry, or NULL (unknown id, or one-node quorum). */
const lc_node_t *peers_node(const peers_t *p, uint64_t id);
/* [{"id","raft","worker","api","reachable","last_contact_ms_ago"}] */
json_t *peers_json(const peers_t *p);

#endif
