/* lc_protocol.h — what master and worker must agree on about the wire protocol (proto/cluster.proto). */
#ifndef LC_PROTOCOL_H
#define LC_PROTOCOL_H

/* Hello.protocol_version: a master refuses a worker that speaks another one.
 * 2: the join proof binds the worker id (lc_join_proof_for). */
#define LC_PROTOCOL_VERSION 2

#include <stdbool.h>
#include <stddef.h>

/* Frames a connection may send before its Hello is accepted (a Hello with
 * 64 run loads is about 2 KiB): a larger length prefix closes it unread. */
#define LC_PROTOCOL_PREAUTH_FRAME_MAX (8u << 10)
/* Bounds of the repeated fields a master accepts. */
#define LC_PROTOCOL_MAX_RUN_LOADS 64
#define LC_PROTOCOL_NAME_MAX 127 /* bytes of a worker's name */
#define LC_PROTOCOL_REASON_MAX 255 /* bytes of an AssignRefused reason */

/* The error kinds a StatsBatch may count (ErrorCount.kind), in the worker's
 * order (worker/stats.h WORKER_ERR_*). */
#define LC_PROTOCOL_ERROR_KINDS 16
extern const char *const lc_protocol_error_kinds[LC_PROTOCOL_ERROR_KINDS];
bool lc_protocol_error_kind_known(const char *kind);

#endif
