/* history_snapshot.h — lc_history_gen's writer of a master data directory that holds one Raft
 * snapshot (tests/tools/history_gen.c says why it is made this way). */
#ifndef TESTS_TOOLS_HISTORY_SNAPSHOT_H
#define TESTS_TOOLS_HISTORY_SNAPSHOT_H

#include <raft.h>
#include <stddef.h>
#include <stdint.h>

/* What one read() returns at most on Linux: raft 0.15's UvFsReadInto reads a snapshot file
 * with one call and calls anything shorter an error. */
#define HISTORY_RAFT_READ_MAX 0x7ffff000u

/* In the empty directory dir, with raft_uv: bootstraps the configuration of the one voter
 * (id, address) at term 1, then puts the snapshot bufs at index (term 1, the configuration at
 * index 1) with trailing 0, which deletes the bootstrap segment. Returns 0, or LC_EIO,
 * LC_EINVAL or LC_ESTATE with errmsg. */
int history_raft_dir_write(const char *dir, raft_id id, const char *address, raft_index index,
                           struct raft_buffer *bufs, unsigned n, char *errmsg, size_t len);

/* The bytes of the snapshot file in dir (lz4-compressed, as raft_uv writes it); 0 when none. */
uint64_t history_snapshot_file_bytes(const char *dir);

#endif
