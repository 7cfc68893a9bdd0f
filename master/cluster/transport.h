/* transport.h — a raft_uv_transport that resolves host names when it
 * connects: canonical/raft 0.15's TCP transport takes only IPv4 literals, and
 * a restarted Kubernetes pod comes back with a new IP under the same name. */
#ifndef MASTER_TRANSPORT_H
#define MASTER_TRANSPORT_H

#include <raft.h>
#include <raft/uv.h>
#include <uv.h>

/* The resolving transport: `outer` is what raft_uv_init() is given. */
typedef struct resolving_transport_s {
    struct raft_uv_transport outer;
    struct raft_uv_transport inner; /* raft_uv_tcp, which sees only literals */
    uv_loop_t *loop;
    raft_uv_accept_cb accept_cb;
    raft_uv_transport_close_cb close_cb;
    struct pending_resolve_s *pending; /* connects waiting for a name lookup */
    int closing;
} resolving_transport_t;

/* Initializes t over a raft_uv_tcp transport on loop. bind_address, when not
 * NULL, is the IPv4 "ip:port" to listen on (needed when this node's own
 * address is a host name). Returns 0 or a RAFT_ error. */
int resolving_transport_init(resolving_transport_t *t, uv_loop_t *loop, const char *bind_address);
/* Releases the inner transport; call after raft has closed the transport. */
void resolving_transport_close(resolving_transport_t *t);

#endif
