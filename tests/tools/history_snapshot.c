/* history_snapshot.c — a master data directory holding one Raft snapshot, written with raft's
 * libuv I/O as loadmaster reads it (history_snapshot.h). */
#include "history_snapshot.h"

#include <assert.h>
#include <dirent.h>
#include <raft/uv.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <uv.h>

#include "lc_err.h"

typedef struct raft_dir_s {
    uv_loop_t loop;
    struct raft_uv_transport transport;
    struct raft_io io;
    struct raft_configuration conf;
    bool put_done, closed;
    int put_status;
} raft_dir_t;

static void put_cb(struct raft_io_snapshot_put *req, int status)
{
    raft_dir_t *d = req->data;
    d->put_done = true;
    d->put_status = status;
}

static void io_closed_cb(struct raft_io *io)
{
    raft_dir_t *d = io->data;
    d->closed = true;
}

/* Bootstraps the one-voter configuration and checks what raft loads back: term 1, no
 * snapshot, the configuration entry at index 1. */
static int bootstrap(raft_dir_t *d, char *errmsg, size_t len)
{
    int rv = d->io.bootstrap(&d->io, &d->conf);
    if (rv != 0)
        return lc_errf(errmsg, len, LC_EIO, "raft bootstrap: %s", d->io.errmsg);
    raft_term term;
    raft_id voted;
    struct raft_snapshot *snap = NULL;
    raft_index start;
    struct raft_entry *entries = NULL;
    size_t n = 0;
    rv = d->io.load(&d->io, &term, &voted, &snap, &start, &entries, &n);
    if (rv != 0)
        return lc_errf(errmsg, len, LC_EIO, "raft load: %s", d->io.errmsg);
    bool expected = term == 1 && snap == NULL && start == 1 && n == 1 &&
                    entries[0].type == RAFT_CHANGE;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || entries[i].batch != entries[i - 1].batch)
            raft_free(entries[i].batch);
    raft_free(entries);
    if (!expected)
        return lc_errf(errmsg, len, LC_ESTATE, "raft load after bootstrap: term %llu, %zu entries"
                       " from %llu, %s snapshot", (unsigned long long)term, n,
                       (unsigned long long)start, snap ? "a" : "no");
    return 0;
}

static int put_snapshot(raft_dir_t *d, raft_index index, struct raft_buffer *bufs, unsigned n,
                        char *errmsg, size_t len)
{
    struct raft_snapshot snap = {.index = index, .term = 1, .configuration = d->conf,
                                 .configuration_index = 1, .bufs = bufs, .n_bufs = n};
    struct raft_io_snapshot_put req = {.data = d};
    int rv = d->io.snapshot_put(&d->io, 0, &req, &snap, put_cb);
    if (rv != 0)
        return lc_errf(errmsg, len, LC_EIO, "raft snapshot_put: %s (%s)", raft_strerror(rv),
                       d->io.errmsg);
    while (!d->put_done && uv_run(&d->loop, UV_RUN_ONCE) != 0)
        ;
    if (!d->put_done || d->put_status != 0)
        return lc_errf(errmsg, len, LC_EIO, "raft snapshot write: %s (%s)",
                       d->put_done ? raft_strerror(d->put_status) : "never completed",
                       d->io.errmsg);
    return 0;
}

int history_raft_dir_write(const char *dir, raft_id id, const char *address, raft_index index,
                           struct raft_buffer *bufs, unsigned n, char *errmsg, size_t len)
{
    assert(dir != NULL && address != NULL && id > 0 && index >= 1 && bufs != NULL && n > 0);
    raft_dir_t *d = calloc(1, sizeof *d);
    if (d == NULL || uv_loop_init(&d->loop) != 0) {
        free(d);
        return lc_errf(errmsg, len, LC_ENOMEM, "cannot set up a loop");
    }
    int rv = LC_EIO;
    raft_configuration_init(&d->conf);
    if (raft_configuration_add(&d->conf, id, address, RAFT_VOTER) != 0) {
        rv = lc_errf(errmsg, len, LC_EINVAL, "bad raft id or address %s", address);
        goto err_after_loop;
    }
    if (raft_uv_tcp_init(&d->transport, &d->loop) != 0) {
        rv = lc_errf(errmsg, len, LC_EIO, "raft transport: %s", d->transport.errmsg);
        goto err_after_loop;
    }
    if (raft_uv_init(&d->io, &d->loop, dir, &d->transport) != 0) {
        rv = lc_errf(errmsg, len, LC_EIO, "raft open %s: %s", dir, d->io.errmsg);
        goto err_after_transport;
    }
    d->io.data = d;
    if (d->io.init(&d->io, id, address) != 0) {
        rv = lc_errf(errmsg, len, LC_EIO, "raft init %s: %s", dir, d->io.errmsg);
        raft_uv_close(&d->io);
        goto err_after_transport;
    }
    rv = bootstrap(d, errmsg, len);
    if (rv == 0)
        rv = put_snapshot(d, index, bufs, n, errmsg, len);
    d->io.close(&d->io, io_closed_cb);
    /* The whole loop, not just until the close callback: raft_uv 0.15 may call into its
     * state once more after it (quorum.c's close_io_once), so it is freed only then. */
    uv_run(&d->loop, UV_RUN_DEFAULT);
    assert(d->closed);
    raft_uv_close(&d->io);
err_after_transport:
    raft_uv_tcp_close(&d->transport);
err_after_loop:
    uv_run(&d->loop, UV_RUN_DEFAULT);
    uv_loop_close(&d->loop);
    raft_configuration_close(&d->conf);
    free(d);
    return rv;
}

uint64_t history_snapshot_file_bytes(const char *dir)
{
    DIR *d = opendir(dir);
    uint64_t bytes = 0;
    char path[4352];
    struct stat st;
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
        size_t n = strlen(e->d_name);
        bool meta = n > 5 && strcmp(e->d_name + n - 5, ".meta") == 0;
        if (strncmp(e->d_name, "snapshot-", 9) != 0 || meta)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &st) == 0)
            bytes = (uint64_t)st.st_size;
    }
    if (d != NULL)
        closedir(d);
    return bytes;
}
