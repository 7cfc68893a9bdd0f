/* runs_plan.c — carrying out the scheduler's plan: its inputs from the connected workers
 * and the active runs, the shares that moved (a new generation, RunAssignment) and each
 * run's grant (RunGrant). */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_err.h"
#include "lc_log.h"
#include "runs_internal.h"
#include "store.h"

void runs_plan_io_free(plan_io_t *io)
{
    free(io->workers);
    free(io->tenants);
    free(io->runs);
    free(io->ars);
    free(io->out);
    free(io->current);
    free(io->users);
}

static void add_tenant(runs_t *r, plan_io_t *io, const char *name)
{
    for (size_t t = 0; t < io->nt; t++)
        if (strcmp(io->tenants[t].name, name) == 0)
            return;
    uint32_t weight;
    if (store_tenant_weight(r->store, name, &weight) != 0)
        weight = 1; /* a tenant nobody created counts as weight 1 */
    io->tenants[io->nt++] = (sched_tenant_t){name, weight};
}

static void add_run(runs_t *r, plan_io_t *io, active_run_t *ar)
{
    size_t i = io->nr++;
    uint32_t *current = &io->current[i * io->nw];
    for (size_t j = 0; j < io->nw; j++) {
        const assignment_t *a = runs_find_asg(ar, io->fw[j]->id);
        current[j] = a ? a->users : 0;
    }
    io->ars[i] = ar;
    io->runs[i] = (sched_run_t){ar->id, ar->id, ar->sc.tenant, ar->requested,
                                ar->sc.policy == LC_POLICY_QUEUE, ar->started, current};
    io->out[i].users = &io->users[i * io->nw];
    add_tenant(r, io, ar->sc.tenant);
}

int runs_plan_io_build(runs_t *r, plan_io_t *io)
{
    memset(io, 0, sizeof *io);
    io->fw = r->io.connected(r->io.arg, &io->nw);
    size_t max = 0, w = io->nw ? io->nw : 1;
    for (active_run_t *ar = r->active; ar != NULL; ar = ar->next)
        max += !ar->stopping;
    if (max == 0)
        return 0;
    io->workers = calloc(w, sizeof *io->workers);
    io->tenants = calloc(max, sizeof *io->tenants);
    io->runs = calloc(max, sizeof *io->runs);
    io->ars = calloc(max, sizeof *io->ars);
    io->out = calloc(max, sizeof *io->out);
    io->current = calloc(max * w, sizeof *io->current);
    io->users = calloc(max * w, sizeof *io->users);
    if (!io->workers || !io->tenants || !io->runs || !io->ars || !io->out || !io->current ||
        !io->users)
        return LC_ENOMEM;
    for (size_t j = 0; j < io->nw; j++)
        io->workers[j] = (sched_worker_t){io->fw[j]->id, io->fw[j]->sat.effective_capacity};
    for (active_run_t *ar = r->active; ar != NULL; ar = ar->next)
        if (!ar->stopping)
            add_run(r, io, ar);
    return 0;
}

/* Sends a new generation only to the workers whose share changed, and
 * records those shares in one RunAssignment, by which a next leader accepts
 * the workers' claims and statistics. */
void runs_move_users(runs_t *r, active_run_t *ar, const plan_io_t *io, const uint32_t *users)
{
    assert(ar->started && !ar->stopping); /* only a running run has users to move */
    command_share_t *changed = malloc(io->nw * sizeof *changed);
    size_t n = 0;
    uint64_t offset = 0; /* the generation's shares number their users one after another */
    for (size_t j = 0; j < io->nw; j++) {
        assignment_t *a = runs_find_asg(ar, io->fw[j]->id);
        if ((a ? a->users : 0) == users[j])
            continue;
        if (a == NULL && (a = runs_add_asg(ar, io->fw[j]->id)) == NULL)
            continue;
        if (n == 0)
            ar->generation++;
        a->users = users[j];
        /* Generation g's shares together hold at most the run's users: numbering them from
         * (g - 1) * requested keeps every ${user_id} of the run unique, also across a new
         * leader, which continues the generations. */
        runs_send_assign(r, ar, a->worker, users[j], (ar->generation - 1) * ar->requested + offset);
        offset += users[j];
        /* The fleet's id, not a->worker: runs_add_asg() may move the shares. */
        if (changed != NULL)
            changed[n] = (command_share_t){io->fw[j]->id, users[j]};
        n++;
    }
    if (changed == NULL && n > 0)
        lc_error("runs", "msg=\"out of memory: shares not recorded\" run=%llu",
                 (unsigned long long)ar->id);
    else if (n > 0)
        command_run_assignment(&r->io.commands, ar->id, ar->generation, changed, n);
    free(changed);
}

/* Warnings of a run under this plan, '\n'-separated. */
static void grant_warnings(const active_run_t *ar, const plan_io_t *io, const sched_grant_t *g,
                           char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t j = 0; j < io->nw; j++) {
        if (g->users[j] > 0 && io->fw[j]->sat.saturated) {
            used += (size_t)snprintf(out, len, "generator saturated\n");
            break;
        }
    }
    if (g->queued && ar->sc.policy == LC_POLICY_QUEUE && !ar->started)
        snprintf(out + used, len - used, "queued: waiting until all %u users can be granted",
                 ar->requested);
    else if (g->queued)
        snprintf(out + used, len - used, "queued: no users can be granted now");
    else if (g->granted < ar->requested)
        snprintf(out + used, len - used, "degraded: granted %u of %u users", g->granted,
                 ar->requested);
}

/* Proposes RunGrant when the grant, the queued flag or the warnings changed. */
void runs_note_grant(runs_t *r, active_run_t *ar, const plan_io_t *io, const sched_grant_t *g)
{
    char warnings[sizeof ar->warnings];
    grant_warnings(ar, io, g, warnings, sizeof warnings);
    if (ar->grant_proposed && ar->granted == g->granted && ar->queued == g->queued &&
        strcmp(ar->warnings, warnings) == 0)
        return;
    if (command_run_grant(&r->io.commands, ar->id, g->granted, g->queued, warnings) != 0)
        return; /* tried again at the next reschedule */
    lc_info("runs", "msg=\"run granted\" run=%llu tenant=%s granted=%u requested=%u queued=%s",
            (unsigned long long)ar->id, ar->sc.tenant, g->granted, ar->requested,
            g->queued ? "true" : "false");
    ar->grant_proposed = true;
    ar->granted = g->granted;
    ar->queued = g->queued;
    snprintf(ar->warnings, sizeof ar->warnings, "%s", warnings);
}

