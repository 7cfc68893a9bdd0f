/* target_h2.h — lc_target's HTTP/2 (--http2: h2c by prior knowledge on the plain port): an
 * nghttp2 server session per connection whose streams are answered as HTTP/1.1 requests are
 * (target_plan.c, the app), plus the misbehaviour tests ask for (--h2-goaway-after, ?rst=).
 *
 * A connection (target_conn.c) hands over to it when its first bytes are the client preface;
 * from then on every byte read goes to h2_conn_feed, which writes what the session answers
 * through the conn_* functions of target.h. */
#ifndef LC_TARGET_H2_H
#define LC_TARGET_H2_H

#include <stddef.h>

#include "target.h"

typedef struct h2_conn_s h2_conn_t;

/* Starts a server session on c (its SETTINGS are queued, written by the first feed).
 * OUT: *out. Returns 0 or LC_ENOMEM. */
int h2_conn_open(conn_t *c, h2_conn_t **out);
/* Bytes read from the client (the preface first). Answers, resets and GOAWAYs are written
 * before it returns; a connection the session is done with, or that broke the protocol, is
 * ended (conn_end) once its last frames are out. */
void h2_conn_feed(h2_conn_t *h, const char *data, size_t len);
/* The connection's timer fired: answers the streams that are due. */
void h2_conn_on_timer(h2_conn_t *h);
/* The socket's queue fell below half of WRITE_HIGH_WATER: goes on writing. */
void h2_conn_drained(h2_conn_t *h);
/* Frees the session and its streams (NULL is a no-op); the connection is closed. */
void h2_conn_free(h2_conn_t *h);

#endif
