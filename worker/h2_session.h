/* h2_session.h — engine thread: HTTP/2 on one worker_conn, with nghttp2: the preface and
 * SETTINGS (a generous window), one request stream at a time, the response's status, kept
 * headers and body into the connection's capture buffers; RST_STREAM, GOAWAY and protocol
 * errors as error kinds. HPACK and flow control are the session's (one per TCP connection). */
#ifndef WORKER_H2_SESSION_H
#define WORKER_H2_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http_conn.h"

struct nghttp2_session;

typedef struct worker_h2_s worker_h2_t;

/* The receive windows we announce, stream and connection (as h2load's default): a load
 * generator reads as fast as it can, so flow control should never be what it waits for. */
#define WORKER_H2_WINDOW ((1u << 30) - 1u)
/* The HPACK tables a user's own connection keeps, both ways: none. For responses
 * (SETTINGS_HEADER_TABLE_SIZE): servers index headers they resend with every response (nginx:
 * Server, Date, Content-Type…), and at the default 4,096 bytes the entries cost an idle
 * connection ~10 KB once full; without, those headers come as literals, a few dozen bytes.
 * For requests (our encoder's limit): without a table its 1 KiB ring is never written and
 * holds no memory (h2_mem.h), nor do entries; repeated request headers go as Huffman-coded
 * literals: a bare GET's HEADERS 44 bytes instead of 15, one with a session cookie and a
 * bearer token 147 instead of 78. A shared pool's connections (h2_mux.c) keep the defaults,
 * as h2load does: they are few. */
#define WORKER_H2_HEADER_TABLE 0u

/* Starts HTTP/2 on c (its transport can carry bytes): c->h2 is the session; the preface and
 * SETTINGS are written. tls: the :scheme is https. Returns 0 or a worker_err_kind. */
int worker_h2_open(worker_conn_t *c, bool tls);
/* Frees c->h2 (the TCP connection is gone); nothing is written. */
void worker_h2_close(worker_conn_t *c);
/* Starts the request req[0..len) (our HTTP/1.1 rendering, copied) as a new stream; c is
 * idle (its capture buffers emptied). Returns 0 or a worker_err_kind. */
int worker_h2_submit(worker_conn_t *c, const char *req, size_t len);
/* Bytes from the transport; whatever the session answers (SETTINGS and PING acks, window
 * updates) is written. Returns 0, or a worker_err_kind when the connection is unusable. */
int worker_h2_feed(worker_conn_t *c, const char *data, size_t len);
/* Hands what nghttp2 session s has to send to c's transport, the frames it gives one at a
 * time gathered into as few writes as fit a 16 KiB stack buffer. Returns 0 or a
 * worker_err_kind; a transport that failed has closed c already (then 0: its own kind is
 * the result). Also h2_mux.c's. */
int worker_h2_write_out(struct nghttp2_session *s, worker_conn_t *c);
/* Resets the stream in flight (RST_STREAM with CANCEL), as a request timeout does, so that
 * the connection can carry the next request; the server's late frames for it are dropped.
 * Returns true once the stream is closed; false when the session could not send the reset
 * (then the connection must be closed; it may be closing already). */
bool worker_h2_cancel(worker_conn_t *c);
/* Whether the stream of the last submit ended since the last call; then *kind
 * (WORKER_KIND_OK or why not) and *status. */
bool worker_h2_take_end(worker_conn_t *c, int *kind, int *status);
/* How a stream closed with error_code ended (also h2_mux.c's): a complete answer; refused (not
 * processed: GOAWAY below it, or REFUSED_STREAM, so it may be sent again); reset by the
 * server; or reset by nghttp2 for a malformed response (parse). */
int worker_h2_end_kind(uint32_t error_code, bool peer_reset, bool final_headers);
/* c is idle and will wait a while: when the session has nothing to send, the pages of its
 * frame buffer, and of its stream table and HPACK rings when they hold nothing, go back to
 * the kernel (worker_h2_mem_release). Returns the bytes that hold nothing now. */
size_t worker_h2_idle(worker_conn_t *c);
/* The bytes c's session holds (h2_mem.h's live: released pages included). */
size_t worker_h2_held_bytes(const worker_conn_t *c);
/* Whether the session can carry another request: no GOAWAY, stream ids left. */
bool worker_h2_reusable(const worker_conn_t *c);

#endif
