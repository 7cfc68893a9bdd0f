#!/usr/bin/env bash
# Sequential feeder rows are leased by the leader, so no row is ever used twice in the
# cluster: a per_iteration sequential feeder runs on two workers, one is killed (-9) mid-run
# and a third replaces it, then the other is killed and restarted with its id (a
# StatefulSet's pod); every row the target saw, it saw once, and both the replacement and the
# restarted worker used rows of leases of their own. (Before leases a replacement cut its own
# slice from its share's ${user_id}s and took rows a survivor or the dead worker had taken
# already; a worker back with its id but without its share was counted as running it.)
source "$(dirname "$0")/lib.sh"

start_target
start_master master
start_worker w1
start_worker w2
check "two workers connect" wait_until 15 workers_connected 2

ROWS=900 # lc_target counts up to 1000 distinct paths
csv=$(printf 'id\\n'; for i in $(seq 0 $((ROWS - 1))); do printf 'r%d\\n' "$i"; done)
cat >"$WORK/feed.json" <<JSON
{"name": "leases", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "12s",
 "users": 4, "spawn_rate": 100,
 "feeders": {"rows": {"csv": "$csv", "mode": "per_iteration", "order": "sequential",
                      "on_exhausted": "stop_user"}},
 "journeys": [{"name": "j", "steps": [{"name": "row", "path": "/row/\${rows.id}"},
                                      {"think_ms": 100}]}]}
JSON
row_counts() { target_requests '[.by_path | to_entries[] | select(.key | startswith("/row/")) | .value]'; }
rows_seen() { row_counts | jq 'length'; }
rows_seen_above() { [ "$(rows_seen)" -gt "$1" ]; }

id=$(submit_run "$WORK/feed.json")
check "the run was created" [ -n "$id" ] && [ "$id" != null ]
check "both workers take rows" wait_until 20 rows_seen_above 40
before=$(rows_seen)
stop_proc "$PID_w2" KILL
log "killed w2 after $before rows"
start_worker w3 --log-level debug
lease_lines() { grep 'msg="feed lease" ' "$WORK/$1.log" | grep -v 'count=0 '; }
check "the replacement is leased rows" wait_until 20 lease_lines w3
stop_proc "$PID_w1" KILL
log "killed w1; it restarts with its id"
start_worker w1 --log-level debug
check "the restarted worker is given users and leased rows" wait_until 20 lease_lines w1
check "the run finishes" wait_until 40 run_state_is "$id" finished
counts=$(row_counts)
check "rows were taken after the kill ($(jq length <<<"$counts") > $before)" \
    [ "$(jq length <<<"$counts")" -gt "$before" ]
check "no row was used twice across the workers" jq -e 'length > 0 and all(. == 1)' <<<"$counts"
seen=$(target_requests '[.by_path | keys[] | select(startswith("/row/r")) | ltrimstr("/row/r") | tonumber]')
used_of_leases() { # worker → rows the target saw from that worker's leases
    local used=0 start count n
    while read -r start count; do
        n=$(jq --argjson s "$start" --argjson c "$count" '[.[] | select(. >= $s and . < $s + $c)] | length' <<<"$seen")
        used=$((used + n))
    done < <(lease_lines "$1" | sed -n 's/.* start=\([0-9]*\) count=\([0-9]*\) .*/\1 \2/p')
    echo "$used"
}
by_w3=$(used_of_leases w3) by_w1=$(used_of_leases w1)
check "the replacement used rows of its own leases ($by_w3)" [ "$by_w3" -gt 0 ]
check "the restarted worker used rows of its own leases ($by_w1)" [ "$by_w1" -gt 0 ]
finish
