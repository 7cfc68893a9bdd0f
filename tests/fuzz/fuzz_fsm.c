/* fuzz_fsm.c — the Raft state machine on arbitrary log entries: the input is
 * a sequence of records (varint length + Command protobuf bytes), each
 * applied through fsm.c's apply (the entry framing added here) into a fresh
 * in-memory store; then every renderer of the runs that exist, which must
 * all render. */
#include <raft.h>
#include <stdint.h>
#include <string.h>

#include "fsm.h"
#include "fuzz_store_render.h"
#include "fuzz_util.h"
#include "store.h"

/* Entries of a fuzz input applied at most; a store of a few runs is enough. */
#define MAX_ENTRIES 64

/* An entry as fsm_encode_command lays it out: 4-byte length, bytes, padding. */
static void apply_entry(struct raft_fsm *fsm, const uint8_t *cmd, size_t len)
{
    size_t total = (4 + len + 7) & ~(size_t)7;
    uint8_t *base = calloc(1, total);
    if (base == NULL)
        return;
    base[0] = (uint8_t)len;
    base[1] = (uint8_t)(len >> 8);
    base[2] = (uint8_t)(len >> 16);
    base[3] = (uint8_t)(len >> 24);
    memcpy(base + 4, cmd, len);
    struct raft_buffer buf = {.base = base, .len = total};
    void *result = NULL;
    int rv = fsm->apply(fsm, &buf, &result);
    FUZZ_CHECK(rv == 0, "fsm apply failed the log (%d)", rv);
    free(base);
}

/* One store, emptied before each input by restoring the image of a fresh
 * one: store_open's schema creation per input would halve the speed. */
static store_t *fresh_store(void)
{
    static store_t *s;
    static uint8_t *empty;
    static size_t empty_len;
    char err[256];
    if (s == NULL && (store_open(&s, err, sizeof err) != 0 ||
                      store_serialize(s, &empty, &empty_len) != 0))
        abort();
    if (store_deserialize(s, empty, empty_len) != 0)
        abort();
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet_log();
    store_t *s = fresh_store();
    fsm_t fsm;
    fsm_init(&fsm, s);
    fuzz_in_t in = {data, size};
    const uint8_t *cmd;
    size_t len;
    for (int i = 0; i < MAX_ENTRIES && fuzz_record(&in, &cmd, &len); i++)
        apply_entry(&fsm.raft, cmd, len);
    fuzz_render_store(s);
    return 0;
}
