#!/usr/bin/env bash
# Sequential feeder rows are leased by the leader, so no row is ever used twice in the
# cluster: a per_iteration sequential feeder runs on two workers, one is killed (-9) mid-run
# and a third replaces it; every row the target saw, it saw once, and some of them were rows
# the replacement was leased and used. (Before leases a replacement cut its own slice from
# its share's ${user_id}s and took rows a survivor or the dead worker had taken already.)
source "$(dirname "$0")/lib.sh"

start_target
start_master master
start_worker w1
start_worker w2
check "two workers connect" wait_until 15 workers_connected 2

ROWS=900 # lc_target counts up to 1000 distinct paths
csv=$(printf 'id\\n'; for i in $(seq 0 $((ROWS - 1))); do printf 'r%d\\n' "$i"; done)
cat >"$WORK/feed.json" <<JSON
{"name": "leases", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "8s",
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
lease_lines() { grep 'msg="feed lease" ' "$WORK/w3.log" | grep -v 'count=0 '; }
check "the replacement is leased rows" wait_until 20 lease_lines
check "the run finishes" wait_until 40 run_state_is "$id" finished
counts=$(row_counts)
check "rows were taken after the kill ($(jq length <<<"$counts") > $before)" \
    [ "$(jq length <<<"$counts")" -gt "$before" ]
check "no row was used twice across the workers" jq -e 'length > 0 and all(. == 1)' <<<"$counts"
seen=$(target_requests '[.by_path | keys[] | select(startswith("/row/r")) | ltrimstr("/row/r") | tonumber]')
used_by_w3=0
while read -r start count; do
    n=$(jq --argjson s "$start" --argjson c "$count" '[.[] | select(. >= $s and . < $s + $c)] | length' <<<"$seen")
    used_by_w3=$((used_by_w3 + n))
done < <(lease_lines | sed -n 's/.* start=\([0-9]*\) count=\([0-9]*\) .*/\1 \2/p')
check "the replacement used rows of its own leases ($used_by_w3)" [ "$used_by_w3" -gt 0 ]
finish
