/* opts.h — any thread: the command-line options of loadworker, read-only once parsed. */
#ifndef WORKER_OPTS_H
#define WORKER_OPTS_H

#include <stdbool.h>
#include <stdint.h>

#include "lc_join.h"
#include "lc_tls_channel.h"

typedef struct worker_opts_s {
    const char *join;       /* --join host:port[,…] */
    const char *local;      /* --local scenario.json */
    unsigned threads;       /* engines */
    uint32_t busy_poll_us;  /* --busy-poll-us: an engine's longest polling window (busy_poll.h) */
    uint32_t capacity;      /* users this worker can carry */
    const char *name;       /* --name, default the host name */
    const char *data_dir;   /* --data-dir */
    bool json;              /* --json (with --local) */
    bool trace;             /* --trace (with --local): one user, one iteration, traced */
    uint32_t orphan_timeout_s; /* --orphan-timeout: runs stop this long after the leader; 0 never */
    size_t outbox_max_bytes;   /* --outbox-max-mb / --outbox-max-kb */
    lc_join_secret_t join_secret; /* --join-secret-file; len 0 when none */
    lc_tls_files_t tls;     /* --tls-cert/--tls-key/--tls-ca; NULLs: plaintext */
    const char *health_addr; /* --health-addr host:port; NULL: none */
    const char *log_file;   /* --log-file; NULL: stderr */
} worker_opts_t;

/* --local: runs the scenario file, prints the report; returns the exit code. */
int worker_local_main(const worker_opts_t *o);
/* --join: serves masters until SIGINT/SIGTERM; returns the exit code. */
int worker_join_main(const worker_opts_t *o);

#endif
