/* members.h — the masters of the quorum as this node knows them: ids and raft
 * addresses from the Raft configuration; worker and API addresses from the
 * replicated members table, else from nodes.conf, else (for this node) from
 * its flags. */
#ifndef MASTER_MEMBERS_H
#define MASTER_MEMBERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lc_nodes_conf.h"
#include "master.h"

/* Every member; an address not known has port 0. Returns the count. */
size_t members_list(master_t *m, lc_node_t *out, size_t max);
/* One member by id; false when it is not in the configuration. */
bool members_find(master_t *m, uint64_t id, lc_node_t *out);
/* Proposes this node's own addresses when the members table lacks them
 * (called on becoming leader). */
void members_register_self(master_t *m);

#endif
