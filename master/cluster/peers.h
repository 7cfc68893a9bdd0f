/* peers.h — whether the other masters are reachable: once a second, a TCP
 * connect to each member's raft port (its name resolved again each time). */
#ifndef MASTER_PEERS_H
#define MASTER_PEERS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "lc_nodes_conf.h"

typedef struct peers_s peers_t;

/* The current members (this node included); returns how many. */
typedef size_t (*peers_list_fn)(void *arg, lc_node_t *out, size_t max);

int peers_init(peers_t **out, uv_loop_t *loop, uint64_t self_id, peers_list_fn list, void *arg);
void peers_close(peers_t *p);

/* Members reachable now, this one included, and how many there are. */
void peers_reachable(peers_t *p, size_t *reachable, size_t *total);
/* Whether member id's latest probe failed (false before any probe, and for
 * this node): a leader that seems down is not worth redirecting to. */
bool peers_seems_down(peers_t *p, uint64_t id);
/* Member id is known to be down now (its raft port's watch ended), as if a
 * probe had just failed; a later successful probe says otherwise. */
void peers_note_down(peers_t *p, uint64_t id);
/* [{"id","raft","worker","api","reachable","last_contact_ms_ago"}] */
json_t *peers_json(peers_t *p);

#endif
