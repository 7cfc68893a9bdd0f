/* tls_bio.c — the BIO under a TLS connection: in place from the uv read, straight to the socket. */
#include "tls_bio.h"

#include <assert.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "lc_err.h"

static worker_tls_io_t *io_of(BIO *b)
{
    return BIO_get_data(b);
}

/* OpenSSL asks for the next bytes of a record: from the read being handled, never beyond. */
static int bio_read(BIO *b, char *out, int size)
{
    worker_tls_io_t *io = io_of(b);
    BIO_clear_retry_flags(b);
    if (io->in_len == 0) {
        BIO_set_retry_read(b);
        return -1;
    }
    size_t n = io->in_len < (size_t)size ? io->in_len : (size_t)size;
    memcpy(out, io->in, n);
    if (io->seen != NULL)
        worker_tls_tally(&io->seen->in, out, n);
    io->in += n;
    io->in_len -= n;
    return (int)n;
}

static void on_write(uv_write_t *req, int status)
{
    worker_conn_t *c = req->data;
    free(req); /* and the copy after it */
    if (status == UV_ECANCELED)
        return; /* the connection is closing: its reset follows, io may be gone */
    worker_tls_io_t *io = c->transport_state; /* alive: a reset comes after the close */
    assert(io != NULL && io->writing);
    io->writing = false;
    if (status < 0)
        io->write_error = status;
    io->drained(c);
}

int worker_tls_io_send(worker_tls_io_t *io, const void *data, size_t len)
{
    assert(!io->writing && io->write_error == 0);
    uv_buf_t buf = uv_buf_init((char *)data, (unsigned)len);
    int n = uv_try_write((uv_stream_t *)&io->c->tcp, &buf, 1);
    if (n < 0 && n != UV_EAGAIN)
        return io->write_error = n;
    size_t sent = n > 0 ? (size_t)n : 0;
    if (sent == len || io->last_words)
        return 0;
    int rv = worker_conn_write_async(io->c, (const char *)data + sent, len - sent, true, on_write);
    if (rv != 0)
        return io->write_error = rv;
    io->writing = true;
    return 0;
}

/* OpenSSL hands over a record (or the rest of one); while a write of ours is in flight
 * it waits (retry). */
static int bio_write(BIO *b, const char *data, int len)
{
    worker_tls_io_t *io = io_of(b);
    BIO_clear_retry_flags(b);
    if (io->write_error != 0)
        return -1;
    if (io->writing) {
        BIO_set_retry_write(b);
        return -1;
    }
    if (worker_tls_io_send(io, data, (size_t)len) != 0)
        return -1;
    if (io->seen != NULL)
        worker_tls_tally(&io->seen->out, data, (size_t)len);
    return len;
}

static long bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)num, (void)ptr;
    switch (cmd) {
    case BIO_CTRL_FLUSH:
        return 1; /* every write went to the socket or to its uv_write */
    case BIO_CTRL_PENDING:
        return (long)(io_of(b)->in_len > LONG_MAX ? LONG_MAX : io_of(b)->in_len);
    case BIO_CTRL_WPENDING:
        return 0;
    default:
        return 0;
    }
}

static int bio_create(BIO *b)
{
    BIO_set_init(b, 1);
    return 1;
}

BIO_METHOD *worker_tls_bio_method_new(void)
{
    BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "loadworker uv");
    if (m == NULL)
        return NULL;
    if (BIO_meth_set_read(m, bio_read) != 1 || BIO_meth_set_write(m, bio_write) != 1 ||
        BIO_meth_set_ctrl(m, bio_ctrl) != 1 || BIO_meth_set_create(m, bio_create) != 1) {
        BIO_meth_free(m);
        return NULL;
    }
    return m;
}

BIO *worker_tls_bio_new(BIO_METHOD *m, worker_tls_io_t *io)
{
    BIO *b = BIO_new(m);
    if (b != NULL)
        BIO_set_data(b, io);
    return b;
}

int worker_tls_io_begin(worker_tls_io_t *io, const char *buf, size_t len)
{
    assert(io->in_len == 0);
    if (io->kept == NULL) {
        io->in = buf;
        io->in_len = len;
        return 0;
    }
    if (io->kept_len + len > WORKER_TLS_IO_KEEP_MAX)
        return LC_ETOOBIG;
    char *more = len > 0 ? realloc(io->kept, io->kept_len + len) : io->kept;
    if (more == NULL)
        return LC_ENOMEM;
    if (len > 0)
        memcpy(more + io->kept_len, buf, len);
    io->kept = more;
    io->kept_len += len;
    io->in = io->kept;
    io->in_len = io->kept_len;
    return 0;
}

int worker_tls_io_end(worker_tls_io_t *io, bool keep)
{
    if (!keep || io->in_len == 0) {
        free(io->kept);
        io->kept = NULL;
        io->kept_len = io->in_len = 0;
        io->in = NULL;
        return 0;
    }
    if (io->kept != NULL) {
        memmove(io->kept, io->in, io->in_len);
    } else if ((io->kept = malloc(io->in_len)) != NULL) {
        memcpy(io->kept, io->in, io->in_len);
    } else {
        io->in_len = 0;
        return LC_ENOMEM;
    }
    io->kept_len = io->in_len;
    io->in = NULL;
    io->in_len = 0;
    return 0;
}

void worker_tls_io_free(worker_tls_io_t *io)
{
    free(io->kept);
    io->kept = NULL;
    io->kept_len = io->in_len = 0;
}
