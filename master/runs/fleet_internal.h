/* fleet_internal.h — what fleet.c, fleet_send.c and fleet_net.c share and no
 * other module sees. */
#ifndef MASTER_FLEET_INTERNAL_H
#define MASTER_FLEET_INTERNAL_H

#include "fleet.h"

/* Writes env to c unless it is closing; 0 or an LC_ error. */
int fleet_conn_send(fleet_conn_t *c, const Lc__Envelope *env);
/* The transport's handle of c's connection (conn_data of fleet_conn_open). */
void *fleet_conn_data(const fleet_conn_t *c);
/* The transport fleet_new was given (fleet_net.c finds itself through it). */
const fleet_transport_t *fleet_transport(const fleet_t *f);

/* The handshake's messages (fleet_send.c). */
int fleet_send_challenge(fleet_conn_t *c, const uint8_t *nonce, size_t len);
int fleet_send_join_refused(fleet_conn_t *c, const char *reason);
int fleet_send_redirect(fleet_conn_t *c, const char *leader);
typedef struct fleet_welcome_s {
    uint64_t leader_id, term;
    char *const *masters;  /* every master's worker address */
    size_t n_masters;
    uint32_t heartbeat_ms, stats_interval_ms;
} fleet_welcome_t;
int fleet_send_welcome(fleet_conn_t *c, const fleet_welcome_t *w);

#endif
