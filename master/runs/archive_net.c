/* archive_net.c — run archives between masters over archive streams (archive_net.h): a
 * transfer is one stream with a 16-byte request, a 16-byte answer and the file; file reads
 * and writes run on libuv's thread pool, one chunk at a time, so a slow peer holds back
 * only its own transfer. */
#include "archive_net.h"

#include <assert.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lc_err.h"
#include "lc_log.h"
#include "store_archive.h"

#define MAGIC "lcarch01"
#define HEAD_LEN 16u
#define CHUNK (256u * 1024u)

typedef struct xfer_s xfer_t;

struct archive_net_s {
    uv_loop_t *loop;
    quorum_t *q;
    char db_path[PATH_MAX];
    xfer_t *xfers;
    unsigned serving;
    unsigned attempt; /* rotates the peer asked */
    bool closed;
};

/* One archive stream, served or fetched. */
struct xfer_s {
    archive_net_t *n;
    bool serving;
    uv_stream_t *stream; /* NULL until the transport hands it over */
    uv_timer_t idle;
    uint8_t head[HEAD_LEN]; /* the request (serving) or the answer (fetching) */
    size_t have;
    uint8_t out[HEAD_LEN];  /* what we send first */
    int fd;
    uint64_t size, moved;   /* the file's bytes, and how many went through */
    uv_fs_t fs;
    bool fs_busy, writing, ending, body;
    bool opening;           /* fetching: the transport has yet to call stream_cb */
    uv_write_t wr;
    char *buf;              /* the chunk being read from the file or written to it */
    size_t buf_off;
    unsigned closes;
    /* fetching */
    uint64_t run, peer;
    char tmp[PATH_MAX];
    archiver_fetched_cb done;
    void *done_arg;
    int status;
    char why[200];
    xfer_t *next;
};

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* ---- the end of a transfer ------------------------------------------------------- */

/* A stream the transport handed over is raft_malloc'd. */
static void stream_freed_cb(uv_handle_t *h)
{
    raft_free(h);
}

static void maybe_free(xfer_t *x)
{
    if (!x->ending || x->closes > 0 || x->fs_busy || x->writing || x->opening)
        return;
    archive_net_t *n = x->n;
    for (xfer_t **link = &n->xfers; *link != NULL; link = &(*link)->next)
        if (*link == x) {
            *link = x->next;
            break;
        }
    if (x->fd >= 0)
        close(x->fd);
    if (x->serving)
        n->serving--;
    else if (x->done != NULL)
        x->done(x->done_arg, x->status, x->status != 0 ? x->why : NULL);
    free(x->buf);
    free(x);
    if (n->closed && n->xfers == NULL)
        free(n);
}

static void handle_closed_cb(uv_handle_t *h)
{
    xfer_t *x = h->data;
    if (h != (uv_handle_t *)&x->idle)
        raft_free(h);
    x->closes--;
    maybe_free(x);
}

/* Ends x with status (0, or an LC_ error with why); once. */
static void xfer_end(xfer_t *x, int status, const char *why)
{
    if (x->ending)
        return;
    x->ending = true;
    x->status = status;
    if (why != NULL)
        snprintf(x->why, sizeof x->why, "%s", why);
    if (status != 0 && x->serving)
        lc_warn("archive", "msg=\"archive stream to a peer ended\" peer=%llu error=\"%s\"",
                (unsigned long long)x->peer, x->why);
    x->closes = 1;
    uv_close((uv_handle_t *)&x->idle, handle_closed_cb);
    if (x->stream != NULL) {
        x->closes++;
        uv_close((uv_handle_t *)x->stream, handle_closed_cb);
    }
    maybe_free(x);
}

static void idle_cb(uv_timer_t *t)
{
    xfer_t *x = t->data;
    char why[96];
    snprintf(why, sizeof why, "nothing moved for %u ms (%llu of %llu bytes)",
             ARCHIVE_NET_IDLE_MS, (unsigned long long)x->moved, (unsigned long long)x->size);
    xfer_end(x, LC_EIO, why);
}

static void progress(xfer_t *x)
{
    uv_timer_start(&x->idle, idle_cb, ARCHIVE_NET_IDLE_MS, 0);
}

static xfer_t *xfer_new(archive_net_t *n, bool serving)
{
    xfer_t *x = calloc(1, sizeof *x);
    if (x == NULL)
        return NULL;
    x->n = n;
    x->serving = serving;
    x->fd = -1;
    uv_timer_init(n->loop, &x->idle);
    x->idle.data = x;
    x->next = n->xfers;
    n->xfers = x;
    return x;
}

/* Takes the transport's stream: it is ours to close from here on. */
static void xfer_attach(xfer_t *x, uv_stream_t *stream)
{
    x->stream = stream;
    stream->data = x;
    progress(x);
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)h;
    (void)suggested;
    char *base = malloc(CHUNK);
    *buf = uv_buf_init(base, base != NULL ? CHUNK : 0);
}

static void write_done_cb(uv_write_t *req, int status);

/* Writes len bytes at data, which stays x's until write_done_cb. */
static void xfer_write(xfer_t *x, const void *data, size_t len)
{
    assert(!x->writing);
    uv_buf_t b = uv_buf_init((char *)data, (unsigned)len);
    x->wr.data = x;
    if (uv_write(&x->wr, x->stream, &b, 1, write_done_cb) != 0) {
        xfer_end(x, LC_EIO, "cannot write to the stream");
        return;
    }
    x->writing = true;
}

/* ---- serving ------------------------------------------------------------------------ */

static void serve_read_file(xfer_t *x);

static void file_read_cb(uv_fs_t *req)
{
    xfer_t *x = req->data;
    ssize_t got = req->result;
    uv_fs_req_cleanup(req);
    x->fs_busy = false;
    if (x->ending) {
        maybe_free(x);
        return;
    }
    if (got <= 0) { /* the file got shorter than announced: the fetcher's check refuses it */
        xfer_end(x, LC_EIO, got < 0 ? uv_strerror((int)got) : "the file ended early");
        return;
    }
    xfer_write(x, x->buf, (size_t)got);
    x->buf_off = (size_t)got;
}

static void serve_read_file(xfer_t *x)
{
    uint64_t left = x->size - x->moved;
    uv_buf_t b = uv_buf_init(x->buf, left < CHUNK ? (unsigned)left : CHUNK);
    x->fs.data = x;
    if (uv_fs_read(x->n->loop, &x->fs, x->fd, &b, 1, (int64_t)x->moved, file_read_cb) != 0) {
        xfer_end(x, LC_EIO, "cannot read the archive");
        return;
    }
    x->fs_busy = true;
}

static void write_done_cb(uv_write_t *req, int status)
{
    xfer_t *x = req->data;
    x->writing = false;
    if (x->ending) {
        maybe_free(x);
        return;
    }
    if (status != 0) {
        xfer_end(x, LC_EIO, uv_strerror(status));
        return;
    }
    progress(x);
    if (!x->serving)
        return; /* the request is out: the answer comes by reading */
    if (!x->body) {
        x->body = true; /* the answer's head is out */
    } else {
        x->moved += x->buf_off;
    }
    if (x->fd < 0 || x->moved == x->size)
        xfer_end(x, 0, NULL); /* all sent (or the answer was "not here"/"bad request") */
    else
        serve_read_file(x);
}

/* The request is in: answer it, then send the file. */
static void serve_request(xfer_t *x)
{
    uint64_t run = get_u64(x->head + 8), status = ARCHIVE_NET_HERE;
    char path[PATH_MAX];
    struct stat st;
    if (memcmp(x->head, MAGIC, 8) != 0 || run == 0) {
        status = ARCHIVE_NET_BAD_REQUEST;
    } else if (store_archive_path(x->n->db_path, run, path, sizeof path) != 0 ||
               (x->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 || fstat(x->fd, &st) != 0 ||
               (x->buf = malloc(CHUNK)) == NULL) {
        status = ARCHIVE_NET_NOT_HERE;
        if (x->fd >= 0)
            close(x->fd);
        x->fd = -1;
    }
    x->size = status == ARCHIVE_NET_HERE ? (uint64_t)st.st_size : 0;
    lc_info("archive", "msg=\"a peer asks for a run's archive\" peer=%llu run=%llu status=%llu"
            " bytes=%llu", (unsigned long long)x->peer, (unsigned long long)run,
            (unsigned long long)status, (unsigned long long)x->size);
    put_u64(x->out, status);
    put_u64(x->out + 8, x->size);
    xfer_write(x, x->out, HEAD_LEN);
}

static void serve_read_cb(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    xfer_t *x = stream->data;
    size_t n = nread > 0 ? (size_t)nread : 0;
    if (nread < 0 || x->have + n > HEAD_LEN) {
        /* The fetcher closed (done or gone), or sent more than its request. */
        xfer_end(x, nread == UV_EOF && x->moved == x->size ? 0 : LC_EPROTO,
                 nread < 0 ? uv_strerror((int)nread) : "more than a request from the peer");
    } else if (n > 0) {
        memcpy(x->head + x->have, buf->base, n);
        x->have += n;
        progress(x);
        if (x->have == HEAD_LEN)
            serve_request(x);
    }
    free(buf->base);
}

void archive_net_serve_stream(archive_net_t *n, uint64_t id, uv_stream_t *stream)
{
    xfer_t *x = n->closed ? NULL : xfer_new(n, true);
    if (x == NULL) {
        uv_close((uv_handle_t *)stream, stream_freed_cb);
        return;
    }
    n->serving++;
    x->peer = id;
    xfer_attach(x, stream);
    if (n->serving > ARCHIVE_NET_SERVES_MAX) {
        put_u64(x->out, ARCHIVE_NET_BUSY);
        put_u64(x->out + 8, 0);
        x->body = false;
        xfer_write(x, x->out, HEAD_LEN); /* then it ends: fd < 0 */
        return;
    }
    if (uv_read_start(stream, alloc_cb, serve_read_cb) != 0)
        xfer_end(x, LC_EIO, "cannot read the stream");
}

static void serve_cb(void *arg, raft_id id, uv_stream_t *stream)
{
    archive_net_serve_stream(arg, id, stream);
}

/* ---- fetching --------------------------------------------------------------------------- */

static void fetch_read_cb(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf);

static void fetch_resume(xfer_t *x)
{
    if (uv_read_start(x->stream, alloc_cb, fetch_read_cb) != 0)
        xfer_end(x, LC_EIO, "cannot read the stream");
}

static void file_synced_cb(uv_fs_t *req)
{
    xfer_t *x = req->data;
    int rv = (int)req->result;
    uv_fs_req_cleanup(req);
    x->fs_busy = false;
    if (rv != 0)
        xfer_end(x, LC_EIO, uv_strerror(rv));
    else
        xfer_end(x, 0, NULL);
}

static void file_written_cb(uv_fs_t *req)
{
    xfer_t *x = req->data;
    ssize_t wrote = req->result;
    uv_fs_req_cleanup(req);
    x->fs_busy = false;
    free(x->buf);
    x->buf = NULL;
    if (x->ending) {
        maybe_free(x);
        return;
    }
    if (wrote < 0 || (size_t)wrote != x->buf_off) {
        xfer_end(x, LC_EIO, wrote < 0 ? uv_strerror((int)wrote) : "short write to the file");
        return;
    }
    x->moved += (uint64_t)wrote;
    progress(x);
    if (x->moved < x->size) {
        fetch_resume(x);
        return;
    }
    x->fs.data = x;
    if (uv_fs_fsync(x->n->loop, &x->fs, x->fd, file_synced_cb) != 0)
        xfer_end(x, LC_EIO, "cannot sync the file");
    else
        x->fs_busy = true;
}

/* Writes len bytes at data (inside base, which the write then owns) to the file. */
static void fetch_store(xfer_t *x, char *base, const char *data, size_t len)
{
    if (x->moved + len > x->size) {
        free(base);
        xfer_end(x, LC_EPROTO, "the peer sent more than the size it announced");
        return;
    }
    uv_read_stop(x->stream); /* one chunk at a time: the peer waits on TCP meanwhile */
    x->buf = base;
    x->buf_off = len;
    uv_buf_t b = uv_buf_init((char *)data, (unsigned)len);
    x->fs.data = x;
    if (uv_fs_write(x->n->loop, &x->fs, x->fd, &b, 1, (int64_t)x->moved, file_written_cb) != 0) {
        free(base);
        x->buf = NULL;
        xfer_end(x, LC_EIO, "cannot write the file");
        return;
    }
    x->fs_busy = true;
}

/* The answer's head is in. Returns whether the body follows. */
static bool fetch_answer(xfer_t *x)
{
    static const char *const refusals[] = {
        [ARCHIVE_NET_NOT_HERE] = "has no archive of the run",
        [ARCHIVE_NET_BAD_REQUEST] = "refused the request",
        [ARCHIVE_NET_BUSY] = "is busy sending other archives",
    };
    uint64_t status = get_u64(x->head);
    x->size = get_u64(x->head + 8);
    char why[160];
    if (status != ARCHIVE_NET_HERE) {
        snprintf(why, sizeof why, "master %llu %s", (unsigned long long)x->peer,
                 status < 4 ? refusals[status] : "answered nonsense");
        xfer_end(x, status == ARCHIVE_NET_NOT_HERE ? LC_ENOTFOUND : LC_EAGAIN, why);
        return false;
    }
    if (x->size == 0 || x->size > ARCHIVE_NET_SIZE_MAX) {
        snprintf(why, sizeof why, "master %llu announced %llu bytes", (unsigned long long)x->peer,
                 (unsigned long long)x->size);
        xfer_end(x, LC_EPROTO, why);
        return false;
    }
    x->fd = open(x->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (x->fd < 0) {
        xfer_end(x, LC_EIO, "cannot create the file");
        return false;
    }
    x->body = true;
    return true;
}

static void fetch_read_cb(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    xfer_t *x = stream->data;
    if (nread <= 0) {
        free(buf->base);
        if (nread < 0) {
            char why[160];
            snprintf(why, sizeof why, "master %llu closed after %llu of %llu bytes (%s)",
                     (unsigned long long)x->peer, (unsigned long long)x->moved,
                     (unsigned long long)x->size, uv_strerror((int)nread));
            xfer_end(x, LC_ECLOSED, why);
        }
        return;
    }
    size_t n = (size_t)nread, used = 0;
    progress(x);
    if (!x->body) {
        used = n < HEAD_LEN - x->have ? n : HEAD_LEN - x->have;
        memcpy(x->head + x->have, buf->base, used);
        x->have += used;
        if (x->have < HEAD_LEN || !fetch_answer(x) || used == n) {
            free(buf->base);
            return;
        }
    }
    fetch_store(x, buf->base, buf->base + used, n - used);
}

static void stream_cb(void *arg, uv_stream_t *stream)
{
    xfer_t *x = arg;
    char why[96];
    x->opening = false;
    if (stream == NULL) {
        snprintf(why, sizeof why, "cannot reach master %llu", (unsigned long long)x->peer);
        xfer_end(x, LC_ECLOSED, why);
        return;
    }
    if (x->ending) { /* closed meanwhile */
        uv_close((uv_handle_t *)stream, stream_freed_cb);
        maybe_free(x);
        return;
    }
    xfer_attach(x, stream);
    memcpy(x->out, MAGIC, 8);
    put_u64(x->out + 8, x->run);
    xfer_write(x, x->out, HEAD_LEN);
    if (!x->ending)
        fetch_resume(x);
}

/* A fetch's transfer, not yet on a stream. */
static xfer_t *fetch_new(archive_net_t *n, uint64_t peer, uint64_t run, const char *tmp_path)
{
    xfer_t *x = xfer_new(n, false);
    if (x == NULL)
        return NULL;
    x->run = run;
    x->peer = peer;
    snprintf(x->tmp, sizeof x->tmp, "%s", tmp_path);
    progress(x);
    return x;
}

int archive_net_fetch_stream(archive_net_t *n, uv_stream_t *stream, uint64_t peer, uint64_t run,
                             const char *tmp_path, archiver_fetched_cb done, void *done_arg)
{
    xfer_t *x = n->closed ? NULL : fetch_new(n, peer, run, tmp_path);
    if (x == NULL)
        return LC_ENOMEM;
    x->done = done;
    x->done_arg = done_arg;
    stream_cb(x, stream);
    return 0;
}

/* The peer to ask on this attempt: the leader first, then the others in turn. */
static bool pick_peer(archive_net_t *n, quorum_server_t *out)
{
    quorum_server_t servers[16];
    size_t count = quorum_servers(n->q, servers, 16), m = 0;
    uint64_t self = quorum_id(n->q), leader = quorum_leader_id(n->q);
    quorum_server_t order[16];
    for (size_t i = 0; i < count; i++)
        if (servers[i].id == leader && leader != self)
            order[m++] = servers[i];
    for (size_t i = 0; i < count; i++)
        if (servers[i].id != leader && servers[i].id != self)
            order[m++] = servers[i];
    if (m == 0)
        return false;
    *out = order[n->attempt++ % m];
    return true;
}

static int fetch(void *arg, uint64_t run, const char *tmp_path, archiver_fetched_cb done,
                 void *done_arg)
{
    archive_net_t *n = arg;
    quorum_server_t peer;
    if (n->closed || n->q == NULL || !pick_peer(n, &peer))
        return LC_ENOTFOUND;
    xfer_t *x = fetch_new(n, peer.id, run, tmp_path);
    if (x == NULL)
        return LC_ENOMEM;
    if (cluster_transport_open_archive(quorum_transport(n->q), peer.id, peer.address, stream_cb,
                                       x) != 0) {
        xfer_end(x, LC_ECLOSED, "cannot connect"); /* no callback: done is not set yet */
        return LC_ECLOSED;
    }
    x->opening = true;
    x->done = done;
    x->done_arg = done_arg;
    return 0;
}

/* ---- life ------------------------------------------------------------------------------- */

int archive_net_init(archive_net_t **out, uv_loop_t *loop, quorum_t *q, const char *db_path)
{
    archive_net_t *n = calloc(1, sizeof *n);
    if (n == NULL)
        return LC_ENOMEM;
    n->loop = loop;
    n->q = q;
    snprintf(n->db_path, sizeof n->db_path, "%s", db_path);
    if (q != NULL)
        cluster_transport_set_archive_server(quorum_transport(q), serve_cb, n);
    *out = n;
    return 0;
}

archiver_io_t archive_net_io(archive_net_t *n)
{
    return (archiver_io_t){.fetch = fetch, .arg = n};
}

void archive_net_close(archive_net_t *n)
{
    if (n == NULL)
        return;
    if (n->q != NULL)
        cluster_transport_set_archive_server(quorum_transport(n->q), NULL, NULL);
    n->closed = true;
    for (xfer_t *x = n->xfers, *next; x != NULL; x = next) {
        next = x->next;
        xfer_end(x, LC_ECLOSED, "the master is shutting down");
    }
    if (n->xfers == NULL)
        free(n);
}
