/* lc_protocol.h — what master and worker must agree on about the wire protocol (proto/cluster.proto). */
#ifndef LC_PROTOCOL_H
#define LC_PROTOCOL_H

/* Hello.protocol_version: a master refuses a worker that speaks another one. */
#define LC_PROTOCOL_VERSION 1

#endif
