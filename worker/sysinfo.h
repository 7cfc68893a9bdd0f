/* sysinfo.h — what the worker tells the master about its machine: the
 * persisted worker id, file-descriptor capacity, CPU use and memory. */
#ifndef WORKER_SYSINFO_H
#define WORKER_SYSINFO_H

#include <stddef.h>
#include <stdint.h>

/* Raises RLIMIT_NOFILE's soft limit to the hard one; returns the soft limit now. */
uint64_t worker_raise_nofile(void);

/* Reads <data_dir>/worker-id, or creates it with 128 random bits in hex
 * (creating data_dir too). out gets 32 hex digits. Returns 0 or LC_EIO with
 * errmsg. */
int worker_id_load(const char *data_dir, char out[33], char *errmsg, size_t errlen);

/* Process CPU use between two calls. */
typedef struct worker_cpu_s {
    uint64_t last_wall_ns;
    uint64_t last_cpu_us;
} worker_cpu_t;

void worker_cpu_init(worker_cpu_t *c);
/* CPU seconds used since the last call / (wall seconds × threads) × 100. */
double worker_cpu_percent(worker_cpu_t *c, unsigned threads);
/* Resident set size from /proc/self/statm; 0 when unknown. */
uint64_t worker_rss_bytes(void);

#endif
