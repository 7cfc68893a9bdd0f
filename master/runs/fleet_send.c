/* fleet_send.c — every message the master sends a worker, each built in one
 * function: the only place an Lc__Envelope is filled on the master. */
#include <assert.h>

#include "fleet_internal.h"
#include "lc_err.h"

static int send_to(fleet_t *f, const char *worker_id, const Lc__Envelope *env)
{
    assert(worker_id != NULL);
    fleet_worker_t *w = fleet_find(f, worker_id);
    if (w == NULL)
        return LC_ENOTFOUND;
    if (w->conn == NULL)
        return LC_ECLOSED;
    return fleet_conn_send(w->conn, env);
}

int fleet_send_assign(fleet_t *f, const char *worker_id, const fleet_assign_t *a)
{
    assert(a != NULL && a->scenario_json != NULL);
    Lc__Assign as = LC__ASSIGN__INIT;
    as.run = a->run;
    as.generation = a->generation;
    as.users = a->users;
    as.spawn_rate = a->spawn_rate;
    as.rate = a->rate;
    as.scenario_json = (char *)a->scenario_json;
    as.elapsed_ms = a->elapsed_ms;
    as.user_base = a->user_base;
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_ASSIGN;
    env.assign = &as;
    int rv = send_to(f, worker_id, &env);
    fleet_set_assigned(f, worker_id, a->run, a->users);
    return rv;
}

int fleet_send_stop(fleet_t *f, const char *worker_id, uint64_t run, const char *reason)
{
    assert(reason != NULL);
    Lc__Stop st = LC__STOP__INIT;
    st.run = run;
    st.reason = (char *)reason;
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_STOP;
    env.stop = &st;
    return send_to(f, worker_id, &env);
}

int fleet_send_feed_lease(fleet_t *f, const char *worker_id, const fleet_feed_lease_t *l)
{
    assert(l != NULL);
    Lc__FeedLease fl = LC__FEED_LEASE__INIT;
    fl.run = l->run;
    fl.feeder = l->feeder;
    fl.seq = l->seq;
    fl.start = l->start;
    fl.count = l->count;
    fl.exhausted = l->exhausted;
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_FEED_LEASE;
    env.feed_lease = &fl;
    return send_to(f, worker_id, &env);
}

int fleet_send_ack(fleet_t *f, const char *worker_id, uint64_t run, uint64_t seq)
{
    Lc__StatsAck ack = LC__STATS_ACK__INIT;
    ack.run = run;
    ack.seq = seq;
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_STATS_ACK;
    env.stats_ack = &ack;
    return send_to(f, worker_id, &env);
}

int fleet_send_challenge(fleet_conn_t *c, const uint8_t *nonce, size_t len)
{
    Lc__Challenge ch = LC__CHALLENGE__INIT;
    ch.nonce.data = (uint8_t *)nonce;
    ch.nonce.len = len;
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_CHALLENGE;
    env.challenge = &ch;
    return fleet_conn_send(c, &env);
}

int fleet_send_join_refused(fleet_conn_t *c, const char *reason)
{
    Lc__JoinRefused refused = LC__JOIN_REFUSED__INIT;
    refused.reason = (char *)reason;
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_JOIN_REFUSED;
    env.join_refused = &refused;
    return fleet_conn_send(c, &env);
}

int fleet_send_redirect(fleet_conn_t *c, const char *leader)
{
    Lc__Redirect r = LC__REDIRECT__INIT;
    r.leader = (char *)leader;
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_REDIRECT;
    env.redirect = &r;
    return fleet_conn_send(c, &env);
}

int fleet_send_welcome(fleet_conn_t *c, const fleet_welcome_t *w)
{
    assert(w->n_masters > 0);
    Lc__Welcome welcome = LC__WELCOME__INIT;
    welcome.leader_id = w->leader_id;
    welcome.term = w->term;
    welcome.masters = (char **)w->masters;
    welcome.n_masters = w->n_masters;
    welcome.heartbeat_ms = w->heartbeat_ms;
    welcome.stats_interval_ms = w->stats_interval_ms;
    Lc__Envelope env = LC__ENVELOPE__INIT;
    env.msg_case = LC__ENVELOPE__MSG_WELCOME;
    env.welcome = &welcome;
    return fleet_conn_send(c, &env);
}
