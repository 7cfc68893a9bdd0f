/* leader_watch.c — the follower's watch on its leader and the early election. */
#include "leader_watch.h"

#include <assert.h>
#include <unistd.h>
#include <uv.h>

#include "lc_log.h"
#include "lc_rng.h"

#define RETRY_MS 1000u /* between attempts at a watch that could not be set up */

/* This follower's place among the voters left (the dead leader aside),
 * by id: 0 for the lowest. */
static unsigned rank_among_voters(const struct raft *r, raft_id dead)
{
    unsigned rank = 0;
    for (unsigned i = 0; i < r->configuration.n; i++) {
        const struct raft_server *s = &r->configuration.servers[i];
        rank += s->role == RAFT_VOTER && s->id != dead && s->id < r->id;
    }
    return rank;
}

/* The leader's process is gone: this follower's election starts within a
 * few heartbeats instead of up to two whole election timeouts after the
 * leader's last heartbeat. Only the deadline moves, and only earlier (raft
 * 0.15 keeps it in struct raft's follower_state, and a heartbeat resets
 * only the timer's start, not the deadline). Raft checks it at each tick
 * (one heartbeat interval), and masters started together tick together, so
 * a random spread alone would often let two followers start in the same
 * instant and split the vote: each follower starts two ticks after the one
 * below it by id instead (the second to start wins, with the first's vote).
 * Raft's safety does not depend on when an election starts; pre-vote keeps
 * a false alarm from changing the term. */
static void hasten_election(leader_watch_t *w, raft_id dead)
{
    struct raft *r = w->raft;
    if (raft_state(r) != RAFT_FOLLOWER)
        return;
    raft_time now = r->io->time(r->io);
    raft_time elapsed = now - r->election_timer_start;
    raft_time tick = r->heartbeat_timeout;
    raft_time soon = elapsed + rank_among_voters(r, dead) * 2 * tick +
                     lc_rng_range(&w->rng, 0, tick / 2);
    if (soon >= r->follower_state.randomized_election_timeout)
        return;
    r->follower_state.randomized_election_timeout = (unsigned)soon;
    w->hastened = true;
    w->hastened_at = now;
}

/* A false alarm (the leader lived on): its heartbeats kept this node a
 * follower of it, so the deadline goes back to a full randomized timeout. */
static void restore_if_alarm_was_false(leader_watch_t *w)
{
    struct raft *r = w->raft;
    if (!w->hastened || r->io->time(r->io) - w->hastened_at < r->election_timeout)
        return;
    w->hastened = false;
    if (raft_state(r) != RAFT_FOLLOWER)
        return;
    unsigned t = r->election_timeout;
    r->follower_state.randomized_election_timeout = (unsigned)lc_rng_range(&w->rng, t, 2ull * t);
}

static void watch_lost(void *arg, raft_id id, bool definite)
{
    leader_watch_t *w = arg;
    struct raft *r = w->raft;
    if (id != w->watched)
        return;
    w->open = false;
    w->retry_at = r->io->time(r->io) + RETRY_MS; /* the same leader, if it lived on */
    if (!definite)
        return;
    lc_info("quorum", "msg=\"leader's process is gone, electing now\" leader=%llu",
            (unsigned long long)id);
    hasten_election(w, id);
    if (w->event != NULL)
        w->event(w->arg, id, true);
}

void leader_watch_init(leader_watch_t *w, struct raft *r, cluster_transport_t *t,
                       leader_watch_cb event, void *arg)
{
    assert(w != NULL && r != NULL && t != NULL);
    *w = (leader_watch_t){.raft = r, .transport = t, .event = event, .arg = arg};
    w->rng = (uv_hrtime() ^ ((uint64_t)getpid() << 32) ^ r->id * 0x9E3779B97F4A7C15ull) | 1;
    cluster_transport_set_watch_cb(t, watch_lost, w);
}

void leader_watch_poll(leader_watch_t *w)
{
    struct raft *r = w->raft;
    raft_id leader = 0;
    const char *address = NULL;
    restore_if_alarm_was_false(w);
    if (raft_state(r) == RAFT_FOLLOWER)
        raft_leader(r, &leader, &address);
    if (leader == r->id || address == NULL)
        leader = 0;
    raft_time now = r->io->time(r->io);
    if (leader == w->watched && (leader == 0 || w->open || now < w->retry_at))
        return;
    if (leader == 0) {
        cluster_transport_unwatch(w->transport);
        w->watched = 0;
        w->open = false;
        return;
    }
    bool is_new = leader != w->watched;
    w->watched = leader;
    w->open = cluster_transport_watch(w->transport, leader, address) == 0;
    if (!w->open)
        w->retry_at = now + RETRY_MS;
    if (is_new && w->event != NULL)
        w->event(w->arg, leader, false);
}
