/* lc_nodes_conf.h — the masters' nodes.conf: one line per master with its id
 * and its raft, worker and API addresses. */
#ifndef LC_NODES_CONF_H
#define LC_NODES_CONF_H

#include <stddef.h>
#include <stdint.h>

#include "lc_addr.h"

#define LC_NODES_MAX 9

typedef struct lc_node_s {
    uint64_t id;             /* 1..LC_NODES_MAX*1000, unique */
    lc_hostport_t raft;
    lc_hostport_t worker;
    lc_hostport_t api;
} lc_node_t;

typedef struct lc_nodes_conf_s {
    lc_node_t nodes[LC_NODES_MAX];
    size_t n;
} lc_nodes_conf_t;

/* Parses the text of a nodes.conf; `filename` is used in error messages.
 * Lines: "id raft worker api" separated by blanks; '#' starts a comment;
 * blank lines are skipped. Returns 0, or LC_EINVAL with errmsg
 * "<filename>:<line>: <what was expected>" (duplicate ids or addresses,
 * bad ids, bad addresses, wrong field counts, no nodes at all). */
int lc_nodes_conf_parse(const char *text, const char *filename, lc_nodes_conf_t *out,
                        char *errmsg, size_t errlen);
/* Reads and parses a file; unreadable files give "<path>: <strerror>". */
int lc_nodes_conf_load(const char *path, lc_nodes_conf_t *out, char *errmsg, size_t errlen);
/* The node with this id, or NULL. */
const lc_node_t *lc_nodes_conf_find(const lc_nodes_conf_t *c, uint64_t id);

#endif
