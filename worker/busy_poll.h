/* busy_poll.h — engine thread: runs an engine's loop, polling instead of sleeping for a short
 * adaptive window while responses arrive close together.
 *
 * Why: on one machine, a target that writes to a socket whose reader sleeps pays for waking it
 * (an inter-processor interrupt, dear in a VM). A generator that sleeps between responses
 * makes the target slower than one that stays awake (nginx over TLS, measured: 14.7 against
 * 12.6 µs of its CPU per request). Polling also keeps the wake-up delay out of the latencies
 * we measure. The window adapts, as the kernel's haltpoll does: it is the longest window
 * while the gaps between bursts of work are shorter than it, and halves towards 0 while they
 * are longer, so a quiet engine sleeps at once and costs no CPU. A poll that finds nothing
 * yields the CPU to any other process runnable on it (a target on the same core goes
 * first). Time spent polling without finding work is counted, so a worker's reported CPU
 * use leaves it out. */
#ifndef WORKER_BUSY_POLL_H
#define WORKER_BUSY_POLL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#define WORKER_BUSY_POLL_DEFAULT_US 200 /* loadworker --busy-poll-us */
#define WORKER_BUSY_POLL_MAX_US 1000    /* the most --busy-poll-us accepts */

typedef struct {
    uint64_t max_ns;            /* the longest window; 0: never poll (a plain uv_run) */
    uint64_t window_ns;         /* how long the next idle period polls before sleeping */
    _Atomic uint64_t polled_ns; /* time spent polling without finding work (any thread) */
} worker_busy_poll_t;

/* A loop's poller, windows up to max_us µs (0: it never polls). */
void worker_busy_poll_init(worker_busy_poll_t *bp, uint32_t max_us);

/* Runs loop until it has no active handles, as uv_run(UV_RUN_DEFAULT) does but polling
 * between bursts of work as above. On the loop's thread. */
void worker_busy_poll_run(uv_loop_t *loop, worker_busy_poll_t *bp);

/* Work happened on this thread's loop (a read from a socket, a request sent): the idle period,
 * if any, ends. Connections call it; each engine's loop runs on a thread of its own, so the
 * count it bumps is per thread. */
void worker_busy_poll_note_work(void);

/* The window after an idle period of idle_ns that ended with work: the longest window
 * when a window that long would have caught the work, else half the old one (below 1 µs: 0).
 * Pure; exposed for the tests. */
uint64_t worker_busy_poll_next_window(uint64_t window_ns, uint64_t max_ns, uint64_t idle_ns);

#endif
