/* sysinfo.h — control thread (source addresses: any thread): what the worker knows
 * about its machine; the persisted worker id, file-descriptor capacity, local source
 * addresses, CPU use and memory. */
#ifndef WORKER_SYSINFO_H
#define WORKER_SYSINFO_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

/* File descriptors kept out of the users' budget: engine loops, the master
 * link, name resolution, logs. */
#define WORKER_FD_RESERVE 64u
#define WORKER_SOURCE_ADDRS_MAX 256

/* Raises RLIMIT_NOFILE's soft limit to the hard one; returns the soft limit now. */
uint64_t worker_raise_nofile(void);
/* Connections the open-file limit leaves for users: the soft limit now minus
 * WORKER_FD_RESERVE (0 when the limit is below the reserve). */
uint64_t worker_fd_room(void);

/* --source-addrs: a comma-separated list of local IPv4/IPv6 literals that
 * connections bind to, round-robin. Each must be bindable here. Call once
 * before the engines start. Returns 0, or LC_EINVAL with errmsg naming the
 * bad address. */
int worker_source_addrs_set(const char *list, char *errmsg, size_t errlen);
/* The next source address of family (AF_INET/AF_INET6), round-robin over
 * the engines; NULL when none of that family is configured. */
const struct sockaddr *worker_source_addr_next(int family);
/* Binds tcp (initialized with src's family) to src with port 0, leaving the
 * port to connect() so it is shared across destinations. 0 or a uv error. */
int worker_source_bind(uv_tcp_t *tcp, const struct sockaddr *src);

/* Reads <data_dir>/worker-id, or creates it with 128 random bits in hex
 * (creating data_dir too). out gets 32 hex digits. Returns 0 or LC_EIO with
 * errmsg. */
int worker_id_load(const char *data_dir, char out[33], char *errmsg, size_t errlen);
/* This start's batch epoch: one more than the last start's, persisted in
 * <data_dir>/batch-epoch before it is used. A run's batch seqs start at
 * epoch << 32, so they never repeat across restarts whatever the clock does.
 * Returns 0 or LC_EIO with errmsg. */
int worker_seq_epoch_next(const char *data_dir, uint64_t *out, char *errmsg, size_t errlen);

/* Process CPU use between two calls, less the time engines polled without finding work. */
typedef struct worker_cpu_s {
    uint64_t last_wall_ns;
    uint64_t last_cpu_us;
    uint64_t last_polled_ns;
} worker_cpu_t;

/* polled_ns: the engines' polled time so far (worker_control_polled_ns). */
void worker_cpu_init(worker_cpu_t *c, uint64_t polled_ns);
/* (CPU seconds used since the last call - seconds polled) / (wall seconds × threads) × 100:
 * how busy the engines were, their polling for work that did not come left out. */
double worker_cpu_percent(worker_cpu_t *c, unsigned threads, uint64_t polled_ns);
/* Resident set size from /proc/self/statm; 0 when unknown. */
uint64_t worker_rss_bytes(void);

#endif
