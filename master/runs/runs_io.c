/* runs_io.c — the run controller's io (runs_io_t) in a running master: the
 * fleet, the batcher, the quorum and the system clocks. */
#include "batcher.h"
#include "lc_clock.h"
#include "lc_err.h"
#include "quorum.h"
#include "runs.h"

/* The quorum may start after the controller: it is looked up per call. */
static int propose(void *arg, const Lc__Command *cmd, quorum_applied_cb cb, void *cb_arg)
{
    master_t *m = arg;
    return m->quorum != NULL ? quorum_propose(m->quorum, cmd, cb, cb_arg) : LC_ENOTLEADER;
}

static fleet_worker_t **connected(void *arg, size_t *n)
{
    master_t *m = arg;
    return fleet_connected(m->fleet, n);
}

static fleet_worker_t *find(void *arg, const char *worker_id)
{
    master_t *m = arg;
    return fleet_find(m->fleet, worker_id);
}

static uint64_t saturation_epoch(void *arg)
{
    master_t *m = arg;
    return fleet_saturation_epoch(m->fleet);
}

static int send_assign(void *arg, const char *worker_id, const fleet_assign_t *a)
{
    master_t *m = arg;
    return fleet_send_assign(m->fleet, worker_id, a);
}

static int send_feed_lease(void *arg, const char *worker_id, const fleet_feed_lease_t *l)
{
    master_t *m = arg;
    return fleet_send_feed_lease(m->fleet, worker_id, l);
}

static int send_stop(void *arg, const char *worker_id, uint64_t run, const char *reason)
{
    master_t *m = arg;
    return fleet_send_stop(m->fleet, worker_id, run, reason);
}

static void set_assigned(void *arg, const char *worker_id, uint64_t run, uint32_t users)
{
    master_t *m = arg;
    fleet_set_assigned(m->fleet, worker_id, run, users);
}

/* Also called while the master shuts down, after the fleet is gone. */
static void forget_run(void *arg, uint64_t run)
{
    master_t *m = arg;
    if (m->fleet != NULL)
        fleet_forget_run(m->fleet, run);
}

static bool stats_pending(void *arg, uint64_t run)
{
    master_t *m = arg;
    return batcher_busy(m->batcher, run);
}

static uint64_t mono_ms(void *arg)
{
    return lc_mono_ms();
}

static uint64_t wall_ms(void *arg)
{
    return lc_wall_ms();
}

runs_io_t runs_io_master(master_t *m)
{
    return (runs_io_t){.arg = m,
                       .commands = {.propose = propose, .arg = m},
                       .connected = connected,
                       .find = find,
                       .saturation_epoch = saturation_epoch,
                       .send_assign = send_assign,
                       .send_stop = send_stop,
                       .send_feed_lease = send_feed_lease,
                       .set_assigned = set_assigned,
                       .forget_run = forget_run,
                       .stats_pending = stats_pending,
                       .mono_ms = mono_ms,
                       .wall_ms = wall_ms};
}
