/* lc_frame.h — length-prefixed protobuf frames (varint32 length + Envelope)
 * over a byte stream, decoded incrementally. */
#ifndef LC_FRAME_H
#define LC_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "cluster.pb-c.h"

#define LC_FRAME_MAX (16u << 20) /* 16 MiB */

typedef struct lc_frame_reader_s {
    uint8_t *buf; /* bytes received but not yet consumed */
    size_t len;
    size_t cap;
    size_t max; /* largest frame accepted */
    char errmsg[160];
} lc_frame_reader_t;

/* Called once per complete frame with the frame's body (without the length
 * prefix). The pointer is valid only during the call. Return 0 to go on,
 * non-zero to stop feeding (that value is returned by feed). */
typedef int (*lc_frame_cb)(void *arg, const uint8_t *body, size_t len);

void lc_frame_reader_init(lc_frame_reader_t *r, size_t max);
void lc_frame_reader_close(lc_frame_reader_t *r);

/* Feed bytes read from the socket; calls on_frame once per complete frame, in
 * order. Returns 0, or LC_EPROTO when a length prefix is malformed or the
 * frame exceeds max (the connection must then be closed; errmsg says why),
 * or LC_ENOMEM, or the callback's non-zero return. */
int lc_frame_reader_feed(lc_frame_reader_t *r, const uint8_t *buf, size_t len,
                         lc_frame_cb on_frame, void *arg);

/* Bytes of an incomplete frame held back; non-zero at EOF means the peer sent
 * a truncated frame. */
size_t lc_frame_reader_pending(const lc_frame_reader_t *r);

/* Encodes env as one frame (prefix + body) into a malloc'd buffer.
 * Returns 0, LC_ENOMEM, or LC_ETOOBIG above LC_FRAME_MAX. */
int lc_frame_encode(const Lc__Envelope *env, uint8_t **out, size_t *out_len);

/* Decodes a frame body. Returns 0 and *out (free with
 * lc__envelope__free_unpacked(*out, NULL)), or LC_EPROTO when the body is not
 * an Envelope or carries no message (errmsg says which). */
int lc_frame_decode(const uint8_t *body, size_t len, Lc__Envelope **out,
                    char *errmsg, size_t errlen);

#endif
