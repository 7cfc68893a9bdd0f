/* fsm.c — raft_fsm callbacks over the store. */
#include "fsm.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lc_err.h"
#include "lc_log.h"

#define ENTRY_HEADER 4u

int fsm_encode_command(const Lc__Command *cmd, struct raft_buffer *out)
{
    size_t len = lc__command__get_packed_size(cmd);
    size_t padded = (ENTRY_HEADER + len + 7u) & ~(size_t)7u;
    uint8_t *base = raft_malloc(padded);
    if (base == NULL)
        return LC_ENOMEM;
    memset(base, 0, padded);
    for (unsigned i = 0; i < ENTRY_HEADER; i++)
        base[i] = (uint8_t)(len >> (8 * i));
    lc__command__pack(cmd, base + ENTRY_HEADER);
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

static int fsm_apply(struct raft_fsm *fsm, const struct raft_buffer *buf, void **result)
{
    store_t *store = fsm->data;
    Lc__Command *cmd = decode_entry(buf);
    int rv;
    if (cmd == NULL) {
        /* Never return an error to raft: that would stall the log forever. */
        lc_error("fsm", "msg=\"undecodable command skipped\" bytes=%zu", buf->len);
        rv = LC_EPROTO;
    } else {
        rv = store_apply(store, cmd);
        if (rv == LC_EIO)
            lc_error("fsm", "msg=\"command failed in sqlite\" case=%d", (int)cmd->cmd_case);
        lc__command__free_unpacked(cmd, NULL);
    }
    *result = (void *)(intptr_t)rv;
    return 0;
}

static int fsm_snapshot(struct raft_fsm *fsm, struct raft_buffer *bufs[], unsigned *n_bufs)
{
    store_t *store = fsm->data;
    uint8_t *image;
    size_t len;
    if (store_serialize(store, &image, &len) != 0)
        return RAFT_NOMEM;
    /* raft frees snapshot buffers with raft_free: hand it raft_malloc'd ones. */
    *bufs = raft_malloc(sizeof **bufs);
    void *copy = raft_malloc(len);
    if (*bufs == NULL || copy == NULL) {
        raft_free(*bufs);
        raft_free(copy);
        free(image);
        return RAFT_NOMEM;
    }
    memcpy(copy, image, len);
    free(image);
    (*bufs)[0].base = copy;
    (*bufs)[0].len = len;
    *n_bufs = 1;
    lc_info("fsm", "msg=\"snapshot taken\" bytes=%zu", len);
    return 0;
}

static int fsm_restore(struct raft_fsm *fsm, struct raft_buffer *buf)
{
    store_t *store = fsm->data;
    int rv = store_deserialize(store, buf->base, buf->len);
    if (rv != 0) {
        lc_error("fsm", "msg=\"snapshot restore failed\" bytes=%zu", buf->len);
        return RAFT_CORRUPT;
    }
    /* On success the FSM owns the snapshot data. */
    raft_free(buf->base);
    lc_info("fsm", "msg=\"snapshot restored\" bytes=%zu", buf->len);
    return 0;
}

void fsm_init(struct raft_fsm *fsm, store_t *store)
{
    memset(fsm, 0, sizeof *fsm);
    fsm->version = 1;
    fsm->data = store;
    fsm->apply = fsm_apply;
    fsm->snapshot = fsm_snapshot;
    fsm->restore = fsm_restore;
}

int fsm_result_code(void *result)
{
    return (int)(intptr_t)result;
}
