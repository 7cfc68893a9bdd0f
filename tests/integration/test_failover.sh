#!/usr/bin/env bash
# Leader loss: target + 3 masters + 2 workers; kill -9 the leader 5 s into a
# 14 s run. A new leader is elected within 3 s, the run finishes, and every
# surviving master's history counts exactly the requests the target served;
# the killed master, restarted, serves the same history. Each iteration of the users' journey
# takes a row of a sequential feeder, leased by the leader: the new leader goes on from the
# cursor the old one left in the replicated state, so no row is used twice.
# With VICTIM=follower (test_follower_loss.sh) a follower is killed instead:
# the leader stays, nothing visible changes for 10 s, then the run is stopped
# (it ends as at its duration: Stop, then every final batch) and counts stay
# exact.
source "$(dirname "$0")/lib.sh"
VICTIM=${VICTIM:-leader}
# The leader's run must reach its duration under the new leader: 14 s leaves 6 s after
# the latest election the test accepts (3 s after the kill at 5 s) for the workers to
# move to it; the follower's is stopped after the kill (60 s is only a bound).
DURATION=14s
[ "$VICTIM" = follower ] && DURATION=60s

start_target
# Raft's election timer is random in [T, 2T]: with the default T = 1 s a
# re-election after a split vote can pass 3 s on a loaded machine. The test
# uses T = 500 ms; the default's figures come from tests/bench/failover.sh.
start_cluster 3 --election-timeout-ms 500
first=$(leader_id)
log "leader is master $first"
join_workers 2
API=$(api_of "$first")
leader_is() { [ "$(leader_id)" = "$1" ]; }
check "two workers joined the leader" wait_until 20 workers_connected 2

# An iteration: its row's request, then 9 of "/" 25 ms apart (~4 iterations a second a user,
# ~600 of the 900 rows in 14 s; lc_target counts up to 1000 distinct paths).
ROWS=900
csv=$(printf 'id\\n'; for i in $(seq 0 $((ROWS - 1))); do printf 'r%d\\n' "$i"; done)
steps='{"name": "row", "path": "/row/${rows.id}"}'
for _ in $(seq 1 9); do steps+=', {"think_ms": 25}, {"name": "home", "path": "/"}'; done
cat >"$WORK/scenario.json" <<JSON
{"name": "failover", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "$DURATION",
 "users": 10, "spawn_rate": 100,
 "feeders": {"rows": {"csv": "$csv", "mode": "per_iteration", "order": "sequential",
                      "on_exhausted": "stop_user"}},
 "journeys": [{"name": "j", "steps": [$steps]}]}
JSON
row_counts() { target_requests '[.by_path | to_entries[] | select(.key | startswith("/row/")) | .value]'; }
rows_used() { row_counts | jq 'length'; }
id=$(submit_run "$WORK/scenario.json")
check "run created" [ -n "$id" -a "$id" != null ]
wait_until 10 run_state_is "$id" running
sleep 5
victim=$first
if [ "$VICTIM" = follower ]; then victim=$(( first % 3 + 1 )); fi
closes_before=$(cat "$WORK/worker-1.log" "$WORK/worker-2.log" | grep -c 'closing master connection' || true)
rows_before=$(rows_used)
killed_at=$(date +%s.%N)
stop_proc "$(eval echo "\$PID_master_$victim")" KILL
log "killed master $victim ($VICTIM)"
if [ "$VICTIM" = follower ]; then
    check "the leader stays the leader" leader_is "$first"
    # 10 s without the follower: 10+ election timeouts, 3 times the 3 missed
    # heartbeats that would declare a worker lost.
    sleep 10
    check "the leader is still the leader 10 s later" leader_is "$first"
    stop_code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST "$API/api/v1/runs/$id/stop" || true)
    check "the run is still running when stopped (202)" [ "$stop_code" = 202 ]
    check "the run ends (aborted, as stopped)" wait_until 60 run_state_is "$id" aborted
    closes_after=$(cat "$WORK/worker-1.log" "$WORK/worker-2.log" | grep -c 'closing master connection' || true)
    check "the workers never left the leader" [ "$closes_after" = "$closes_before" ]
    served=$(target_requests)
    for k in 1 2 3; do
        [ "$k" = "$victim" ] && continue
        check "master $k's history equals the target's count" \
            [ "$(curl -sf "$(api_of "$k")/api/v1/runs/$id" | jq .totals.requests)" = "$served" ]
    done
    finish
    exit
fi

await_new_leader "$first" 100 "$killed_at"
log "new leader master ${new_leader:-none} after ${elected_in}s"
check "a new leader within 3 s" within 3.0
API=$(api_of "${new_leader:-1}")
check "the run finishes under the new leader" wait_until 60 run_state_is "$id" finished
check "both workers back with the new leader" wait_until 10 workers_connected 2

served=$(target_requests)
counts=$(row_counts)
check "rows were used after the leader's loss ($(jq length <<<"$counts") > $rows_before)" \
    [ "$(jq length <<<"$counts")" -gt "$rows_before" ]
check "no row was used twice across the leader change" jq -e 'length > 0 and all(. == 1)' <<<"$counts"
for k in 1 2 3; do
    [ "$k" = "$first" ] && continue
    counted=$(curl -sf "$(api_of "$k")/api/v1/runs/$id" | jq .totals.requests)
    log "master $k counts $counted, target served $served"
    check "master $k's history equals the target's count" [ "$counted" = "$served" ]
done

start_cluster_node "$first"
check "the killed master serves the run again" \
    wait_until 20 sh -c "curl -sf '$(api_of "$first")/api/v1/runs/$id' | jq -e '.state == \"finished\" and .totals.requests == $served'"
finish
