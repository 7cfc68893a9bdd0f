/* archive_net.h — run archives between masters, over archive streams of the Raft port
 * (transport.h: TLS and the cluster secret's challenge as raft's own): serves this master's
 * <data-dir>/archive files to peers, and fetches one from a peer into a file for the
 * archiver (runs/archiver.h), which checks it before it takes the archive's name.
 *
 * On the stream, after the transport's handshake:
 *   fetcher -> server: "lcarch01" (8 bytes), run (u64 LE)
 *   server -> fetcher: status (u64 LE: 0 here, 1 not here, 2 bad request, 3 busy),
 *                      size (u64 LE), then size bytes of the file; then it closes.
 * Anything else is a violation and closes the stream. */
#ifndef MASTER_ARCHIVE_NET_H
#define MASTER_ARCHIVE_NET_H

#include <stdint.h>
#include <uv.h>

#include "archiver.h"
#include "quorum.h"
#include "transport.h"

#define ARCHIVE_NET_SERVES_MAX 4u            /* files sent at once; more are told busy */
#define ARCHIVE_NET_IDLE_MS 30000u           /* no byte either way this long ends a stream */
#define ARCHIVE_NET_SIZE_MAX (64ull << 30)   /* a larger announced file is refused */

typedef enum {
    ARCHIVE_NET_HERE = 0,
    ARCHIVE_NET_NOT_HERE = 1,
    ARCHIVE_NET_BAD_REQUEST = 2,
    ARCHIVE_NET_BUSY = 3,
} archive_net_status_t;

typedef struct archive_net_s archive_net_t;

/* Serves the archives beside db_path (<data-dir>/state.db) on q's transport and fetches from
 * q's other servers (the leader first). q NULL: neither (tests use the two below). */
int archive_net_init(archive_net_t **out, uv_loop_t *loop, quorum_t *q, const char *db_path);
/* What the transport's streams are given to, on a stream already through its handshake
 * (raft_malloc'd, owned from here on): serve one request from peer, or fetch run into
 * tmp_path (done as archiver_io_t's fetch). */
void archive_net_serve_stream(archive_net_t *n, uint64_t peer, uv_stream_t *stream);
int archive_net_fetch_stream(archive_net_t *n, uv_stream_t *stream, uint64_t peer, uint64_t run,
                             const char *tmp_path, archiver_fetched_cb done, void *done_arg);
/* What the archiver is given to fetch with (archiver_io_t). */
archiver_io_t archive_net_io(archive_net_t *n);
/* Closes every stream (a fetch under way ends with LC_ECLOSED); frees once the last
 * file operation is back. */
void archive_net_close(archive_net_t *n);

#endif
