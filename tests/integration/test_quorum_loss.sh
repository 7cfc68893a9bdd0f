#!/usr/bin/env bash
# Quorum loss (issue 4, test 3): target + 3 masters + 2 workers with
# --orphan-timeout 6; kill -9 two masters 4 s into a 20 s run. The survivor's
# API answers 503 with the reason; the workers keep the load for the orphan
# timeout, then stop it; one master restarted, a leader returns, the workers
# reconnect and replay their outboxes, and the run's final count equals the
# target's exactly, with nothing lost. The run ends before the new leader's grace for its
# workers does: it finishes because every worker's final batch came back (it used to fail
# then as "no worker reported the run after the leader change").
# The leader is one of the two killed: a master that loses leadership keeps
# its worker connections open (workers would not notice the loss).
source "$(dirname "$0")/lib.sh"

ORPHAN_S=6
start_target
start_cluster 3 --election-timeout-ms 500
first=$(leader_id)
log "leader is master $first"
join_workers 2 --orphan-timeout "$ORPHAN_S"
API=$(api_of "$first")
check "two workers joined the leader" wait_until 20 workers_connected 2

cat >"$WORK/scenario.json" <<JSON
{"name": "quorum-loss", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "20s",
 "users": 10, "spawn_rate": 100, "think_time_ms": 20, "tasks": [{"path": "/"}]}
JSON
id=$(submit_run "$WORK/scenario.json")
check "run created" [ -n "$id" -a "$id" != null ]
wait_until 10 run_state_is "$id" running
sleep 4

# Kill the leader and one follower; the other follower survives alone.
other=$(( first % 3 + 1 ))
survivor=$(( other % 3 + 1 ))
stop_proc "$(eval echo "\$PID_master_$first")" KILL
stop_proc "$(eval echo "\$PID_master_$other")" KILL
killed_at=$SECONDS
log "killed masters $first and $other; master $survivor survives"

no_leader_503() {
    local code
    code=$(curl -s -o "$WORK/503.json" -w '%{http_code}' --max-time 2 -X POST \
        --data-binary @"$WORK/scenario.json" "$(api_of "$survivor")/api/v1/runs")
    [ "$code" = 503 ] && grep -q 'no leader: 1 of 3 masters reachable' "$WORK/503.json"
}
check "the survivor answers 503: no leader: 1 of 3 masters reachable" wait_until 10 no_leader_503
check "the workers know they are orphaned" wait_until 5 \
    grep -q 'no leader reachable: runs go on for up to 6 s' "$WORK/worker-1.log" "$WORK/worker-2.log"

# The load goes on while orphaned (no gap)...
before=$(target_requests)
sleep 2
after=$(target_requests)
log "target: $before then $after requests 2 s later (orphaned)"
check "the load goes on without a leader" [ "$after" -gt "$before" ]
# ...until the orphan timeout stops it.
orphan_stopped() {
    grep -q "no leader for $ORPHAN_S s: stopping run $id (orphan timeout)" "$WORK/worker-1.log" &&
        grep -q "no leader for $ORPHAN_S s: stopping run $id (orphan timeout)" "$WORK/worker-2.log"
}
check "both workers stop the run at the orphan timeout" wait_until 15 orphan_stopped
stopped_after=$((SECONDS - killed_at))
log "orphan stop seen ${stopped_after}s after the kill"
check "the load lasted about the orphan timeout" [ "$stopped_after" -ge $((ORPHAN_S - 1)) ]
sleep 1.5 # requests in flight end (think time 20 ms, local target)
c1=$(target_requests)
sleep 2
c2=$(target_requests)
log "target after the orphan stop: $c1 then $c2"
check "no load after the orphan timeout" [ "$c1" = "$c2" ]

start_cluster_node "$other"
check "a leader returns" wait_until 20 leader_known
leader=$(leader_id || echo "$survivor")
API=$(api_of "$leader")
log "master $leader leads"
check "both workers reconnect" wait_until 30 workers_connected 2
check "a worker replays its outbox" wait_until 10 \
    grep -qE 'welcomed by master.*unacked=[1-9]' "$WORK/worker-1.log" "$WORK/worker-2.log"
run_ended() {
    local st
    st=$(curl -sf --max-time 2 "$API/api/v1/runs/$id" | jq -r .state)
    [ "$st" = finished ] || [ "$st" = aborted ]
}
check "the run ends (finished or aborted)" wait_until 60 run_ended
check "it finished: every worker's final came back" run_state_is "$id" finished
log "run state: $(curl -sf "$API/api/v1/runs/$id" | jq -c '{state, reason}')"

served=$(target_requests)
counted_is_served() {
    [ "$(curl -sf --max-time 2 "$API/api/v1/runs/$id" | jq .totals.requests)" = "$(target_requests)" ]
}
# The last replayed batches may commit just after the run is marked ended.
wait_until 10 counted_is_served || true
served=$(target_requests)
view=$(curl -sf "$API/api/v1/runs/$id")
counted=$(echo "$view" | jq .totals.requests)
lost=$(echo "$view" | jq '.totals.lost_requests // 0')
log "leader counts $counted, target served $served, lost $lost"
check "the leader's count equals the target's exactly" [ "$counted" = "$served" ]
check "no request lost" [ "$lost" = 0 ]
finish
