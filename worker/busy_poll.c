/* busy_poll.c — polling an engine's loop between bursts of work (see busy_poll.h). */
#include "busy_poll.h"

#include <assert.h>
#include <sched.h>

/* When this thread's loop first saw work in the current pass; 0: not yet. */
static _Thread_local uint64_t first_work_ns;

void worker_busy_poll_note_work(void)
{
    if (first_work_ns == 0)
        first_work_ns = uv_hrtime();
}

void worker_busy_poll_init(worker_busy_poll_t *bp, uint32_t max_us)
{
    assert(bp != NULL);
    bp->max_ns = (uint64_t)max_us * 1000u;
    bp->window_ns = 0; /* a new loop sleeps until its traffic shows gaps short enough */
    atomic_init(&bp->polled_ns, 0);
}

uint64_t worker_busy_poll_next_window(uint64_t window_ns, uint64_t max_ns, uint64_t idle_ns)
{
    if (idle_ns <= max_ns)
        return max_ns;
    window_ns /= 2;
    return window_ns < 1000 ? 0 : window_ns;
}

void worker_busy_poll_run(uv_loop_t *loop, worker_busy_poll_t *bp)
{
    assert(loop != NULL && bp != NULL);
    if (bp->max_ns == 0) {
        uv_run(loop, UV_RUN_DEFAULT);
        return;
    }
    uint64_t idle_since = uv_hrtime(); /* the end of the last pass that saw work */
    for (;;) {
        uint64_t pass_start = uv_hrtime();
        bool polling = pass_start - idle_since < bp->window_ns;
        first_work_ns = 0;
        int alive = uv_run(loop, polling ? UV_RUN_NOWAIT : UV_RUN_ONCE);
        uint64_t now = uv_hrtime();
        if (first_work_ns != 0) {
            uint64_t idle = first_work_ns > idle_since ? first_work_ns - idle_since : 0;
            bp->window_ns = worker_busy_poll_next_window(bp->window_ns, bp->max_ns, idle);
            idle_since = now;
        } else if (polling) {
            atomic_fetch_add_explicit(&bp->polled_ns, now - pass_start, memory_order_relaxed);
            sched_yield(); /* a process runnable on this CPU (the target, say) goes first */
        }
        if (!alive)
            return;
    }
}
