/* fsm.c — raft_fsm callbacks over the store. */
#include "fsm.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lc_clock.h"
#include "lc_err.h"
#include "lc_log.h"

#define ENTRY_HEADER 4u
/* raft 0.15 loads a snapshot file with one read(), which Linux caps at
 * 2 GiB - 4 KiB: warn well before an image gets there. */
#define SNAPSHOT_WARN_BYTES (1536ull << 20)
/* An apply holds the loop; one longer than this is logged (at most every
 * SLOW_APPLY_LOG_MS), naming the command, since it delays heartbeats and the API. */
#define SLOW_APPLY_MS 50u
#define SLOW_APPLY_LOG_MS 10000u

int fsm_encode_command(const Lc__Command *cmd, struct raft_buffer *out)
{
    size_t len = lc__command__get_packed_size(cmd);
    size_t padded = (ENTRY_HEADER + len + 7u) & ~(size_t)7u;
    uint8_t *base = raft_malloc(padded);
    if (base == NULL)
        return LC_ENOMEM;
    for (unsigned i = 0; i < ENTRY_HEADER; i++)
        base[i] = (uint8_t)(len >> (8 * i));
    size_t packed = lc__command__pack(cmd, base + ENTRY_HEADER);
    assert(packed == len);
    /* Only the padding needs zeroes: a RunSeconds entry is about a megabyte. */
    memset(base + ENTRY_HEADER + packed, 0, padded - ENTRY_HEADER - packed);
    out->base = base;
    out->len = padded;
    return 0;
}

/* The protobuf bytes of an entry, or NULL when the header is inconsistent. */
static Lc__Command *decode_entry(const struct raft_buffer *buf)
{
    const uint8_t *base = buf->base;
    if (buf->len < ENTRY_HEADER)
        return NULL;
    size_t len = 0;
    for (unsigned i = 0; i < ENTRY_HEADER; i++)
        len |= (size_t)base[i] << (8 * i);
    if (len > buf->len - ENTRY_HEADER)
        return NULL;
    return lc__command__unpack(NULL, len, base + ENTRY_HEADER);
}

static void note_slow_apply(fsm_t *f, int cmd_case, size_t bytes, uint64_t start_ns)
{
    uint64_t now_ns = lc_mono_ns(), took_ms = (now_ns - start_ns) / 1000000u;
    if (took_ms < SLOW_APPLY_MS || now_ns / 1000000u - f->slow_warned_ms < SLOW_APPLY_LOG_MS)
        return;
    f->slow_warned_ms = now_ns / 1000000u;
    lc_warn("fsm", "msg=\"slow apply held the loop\" case=%d bytes=%zu ms=%llu", cmd_case, bytes,
            (unsigned long long)took_ms);
}

static int fsm_apply(struct raft_fsm *fsm, const struct raft_buffer *buf, void **result)
{
    fsm_t *f = fsm->data;
    uint64_t start_ns = lc_mono_ns();
    Lc__Command *cmd = decode_entry(buf);
    int rv;
    if (cmd == NULL) {
        /* Never return an error to raft: that would stall the log forever. */
        lc_error("fsm", "msg=\"undecodable command skipped\" bytes=%zu", buf->len);
        rv = LC_EPROTO;
    } else {
        rv = store_apply(f->store, cmd);
        if (rv == LC_EIO)
            lc_error("fsm", "msg=\"command failed in sqlite\" case=%d", (int)cmd->cmd_case);
        note_slow_apply(f, (int)cmd->cmd_case, buf->len, start_ns);
        lc__command__free_unpacked(cmd, NULL);
    }
    *result = (void *)(intptr_t)rv;
    return 0;
}

/* On the loop, between two applies: pin the state; the image is taken on a
 * thread (fsm_snapshot_async). */
static int fsm_snapshot(struct raft_fsm *fsm, struct raft_buffer *bufs[], unsigned *n_bufs)
{
    fsm_t *f = fsm->data;
    *bufs = NULL;
    *n_bufs = 0;
    if (f->pending != NULL)
        return RAFT_BUSY; /* raft takes one at a time; try again later */
    if (store_snapshot_begin(f->store, &f->pending) != 0)
        return RAFT_NOMEM;
    f->pending_since_ms = lc_mono_ms();
    return 0;
}

/* On a thread of raft's: serialize what fsm_snapshot pinned. No logging
 * here; fsm_snapshot_finalize says how it went. */
static int fsm_snapshot_async(struct raft_fsm *fsm, struct raft_buffer *bufs[], unsigned *n_bufs)
{
    fsm_t *f = fsm->data;
    uint8_t *image;
    size_t len;
    assert(f->pending != NULL);
    if (store_snapshot_image(f->pending, &image, &len) != 0)
        return RAFT_NOMEM;
    *bufs = malloc(sizeof **bufs);
    if (*bufs == NULL) {
        store_image_free(image);
        return RAFT_NOMEM;
    }
    (*bufs)[0].base = image;
    (*bufs)[0].len = len;
    *n_bufs = 1;
    return 0;
}

/* On the loop, once raft wrote the snapshot (or gave up): the buffers are ours. */
static int fsm_snapshot_finalize(struct raft_fsm *fsm, struct raft_buffer *bufs[],
                                 unsigned *n_bufs)
{
    fsm_t *f = fsm->data;
    size_t len = *bufs != NULL && *n_bufs > 0 ? (*bufs)[0].len : 0;
    if (*bufs != NULL) {
        for (unsigned i = 0; i < *n_bufs; i++)
            store_image_free((*bufs)[i].base);
        free(*bufs);
    }
    *bufs = NULL;
    *n_bufs = 0;
    store_snapshot_end(f->pending);
    f->pending = NULL;
    if (len > SNAPSHOT_WARN_BYTES)
        lc_warn("fsm", "msg=\"the snapshot nears 2 GiB, the most raft 0.15 can load at a restart;"
                " keep less per-second history in it (archiving is off with --no-history-archive;"
                " --acks-keep, --history-full, --history-10s, --history-max)\" bytes=%zu", len);
    if (len > 0)
        lc_info("fsm", "msg=\"snapshot taken\" bytes=%zu ms=%llu", len,
                (unsigned long long)(lc_mono_ms() - f->pending_since_ms));
    else
        lc_warn("fsm", "msg=\"snapshot failed\"");
    return 0;
}

static int fsm_restore(struct raft_fsm *fsm, struct raft_buffer *buf)
{
    store_t *store = ((fsm_t *)fsm->data)->store;
    uint64_t start_ms = lc_mono_ms();
    int rv = store_deserialize(store, buf->base, buf->len);
    if (rv != 0) {
        lc_error("fsm", "msg=\"snapshot restore failed\" bytes=%zu", buf->len);
        return RAFT_CORRUPT;
    }
    /* On success the FSM owns the snapshot data. */
    raft_free(buf->base);
    /* On the loop (raft 0.15 restores synchronously): how long it held it. */
    lc_info("fsm", "msg=\"snapshot restored\" bytes=%zu ms=%llu", buf->len,
            (unsigned long long)(lc_mono_ms() - start_ms));
    return 0;
}

void fsm_init(fsm_t *f, store_t *store)
{
    memset(f, 0, sizeof *f);
    f->store = store;
    f->raft.version = 3;
    f->raft.data = f;
    f->raft.apply = fsm_apply;
    f->raft.snapshot = fsm_snapshot;
    f->raft.snapshot_async = fsm_snapshot_async;
    f->raft.snapshot_finalize = fsm_snapshot_finalize;
    f->raft.restore = fsm_restore;
}

int fsm_result_code(void *result)
{
    return (int)(intptr_t)result;
}
