/* body_decode.h — any thread: decodes a response body's content coding (gzip, deflate, br)
 * into a buffer, bounded: never more than a cap of output, whatever the input claims. */
#ifndef WORKER_BODY_DECODE_H
#define WORKER_BODY_DECODE_H

#include <stddef.h>

#include "lc_buf.h"

enum worker_coding {
    WORKER_CODING_IDENTITY, /* no Content-Encoding, or "identity" */
    WORKER_CODING_GZIP,     /* "gzip", "x-gzip": RFC 1952, members may follow each other */
    WORKER_CODING_DEFLATE,  /* "deflate": RFC 1950 (zlib), or raw RFC 1951 as some servers send */
    WORKER_CODING_BR,       /* "br": RFC 7932 */
    WORKER_CODING_UNKNOWN,  /* anything else, stacked codings ("gzip, br") among them */
};

/* Brotli's own memory while it decodes (its window is at most 16 MiB); past it the body is
 * refused as too big rather than the worker growing. */
#define WORKER_BR_MEMORY_MAX (32u << 20)

/* The coding a Content-Encoding value names: case-insensitive, blanks around it ignored, an
 * empty value is identity. */
enum worker_coding worker_coding_of(const char *value, size_t len);

/* The coding's name for messages ("gzip"), or "unknown". */
const char *worker_coding_name(enum worker_coding coding);

/* Decodes in[0..len) (coding not UNKNOWN) into out, emptied first: at most cap bytes (out's
 * buffer, grown by doubling, ends at most twice the cap, whatever in holds). An empty
 * input decodes to an empty body. Returns 0, or with *why set (static text saying what
 * happened): LC_ETOOBIG (the decoded body would be longer than cap: a decompression bomb, or
 * just too big), LC_EPROTO (truncated, corrupt, or bytes after the end of the stream) or
 * LC_ENOMEM. */
int worker_body_decode(enum worker_coding coding, const char *in, size_t len, size_t cap,
                       lc_buf_t *out, const char **why);

#endif
