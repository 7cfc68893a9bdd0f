/* fuzz_snapshot.c — a snapshot restore of arbitrary bytes (fsm.c's restore,
 * store_deserialize) into a store, then every renderer of the runs that
 * exist, which must all render. */
#include <raft.h>
#include <stdint.h>
#include <string.h>

#include "fsm.h"
#include "fuzz_store_render.h"
#include "fuzz_util.h"
#include "store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet_log();
    store_t *s;
    char err[256];
    if (store_open(&s, err, sizeof err) != 0)
        abort();
    fsm_t fsm;
    fsm_init(&fsm, s);
    /* On success the FSM owns (and raft_free's) the snapshot's buffer. */
    struct raft_buffer buf = {.base = raft_malloc(size ? size : 1), .len = size};
    if (buf.base == NULL)
        abort();
    memcpy(buf.base, data, size);
    if (fsm.raft.restore(&fsm.raft, &buf) != 0)
        raft_free(buf.base);
    fuzz_render_store(s);
    /* A restored store must take new commands and snapshot again. */
    uint8_t *image = NULL;
    size_t image_len = 0;
    if (store_serialize(s, &image, &image_len) == 0)
        free(image);
    store_close(s);
    return 0;
}
