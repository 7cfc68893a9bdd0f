#!/usr/bin/env bash
# Membership: grow a one-master quorum to three with `loadctl cluster add`,
# check that a run's history reaches the new masters (caught up from the log
# or a snapshot), then remove one.
source "$(dirname "$0")/lib.sh"

declare -A RAFT WPORT APORT
for k in 1 2 3; do RAFT[$k]=$(free_port); WPORT[$k]=$(free_port); APORT[$k]=$(free_port); done
start_node() { # K [FLAGS…]
    local k=$1; shift
    start "master-$k" timeout 300 "$LC_BIN/loadmaster" --id "$k" --data-dir "$WORK/master-$k-data" \
        --raft-addr "127.0.0.1:${RAFT[$k]}" --listen-workers "127.0.0.1:${WPORT[$k]}" \
        --listen-api "127.0.0.1:${APORT[$k]}" --snapshot-threshold 8 --snapshot-trailing 2 \
        --admin-token-file "$ADMIN_TOKEN_FILE" "$@"
}
ctl() { timeout 30 "$LC_BIN/loadctl" --master "http://127.0.0.1:${APORT[1]}" "$@"; }
fails() { ! "$@" 2>>"$WORK/refusals.log"; }
members_of() { curl -sf --max-time 2 "http://127.0.0.1:${APORT[$1]}/api/v1/cluster" | jq '.members | length'; }

start_target
start_node 1
API="http://127.0.0.1:${APORT[1]}"
WORKER_ADDR="127.0.0.1:${WPORT[1]}"
use_admin_token
check "master 1 leads alone" wait_until 15 sh -c "curl -sf $API/api/v1/cluster | jq -e '.role == \"leader\"'"
start_worker w1
wait_until 15 workers_connected 1

# History before the others join: they must catch it up.
cat >"$WORK/scenario.json" <<JSON
{"name": "before-growth", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "3s",
 "users": 5, "think_time_ms": 10, "tasks": [{"path": "/"}]}
JSON
id=$(submit_run "$WORK/scenario.json")
check "run finished on the one-master quorum" wait_until 30 run_state_is "$id" finished
served=$(target_requests)

start_node 2 --join-quorum
start_node 3 --join-quorum
check "loadctl cluster add 2" ctl cluster add 2 "127.0.0.1:${RAFT[2]}" "127.0.0.1:${WPORT[2]}" "127.0.0.1:${APORT[2]}"
check "loadctl cluster add 3" ctl cluster add 3 "127.0.0.1:${RAFT[3]}" "127.0.0.1:${WPORT[3]}" "127.0.0.1:${APORT[3]}"
check "adding a member twice is refused" fails ctl cluster add 2 127.0.0.1:1 127.0.0.1:2 127.0.0.1:3
check "three members seen from master 1" [ "$(members_of 1)" = 3 ]
for k in 2 3; do
    check "master $k has the run's history" wait_until 15 sh -c \
        "curl -sf http://127.0.0.1:${APORT[$k]}/api/v1/runs/$id | jq -e '.totals.requests == $served'"
    check "master $k follows master 1" \
        sh -c "curl -sf http://127.0.0.1:${APORT[$k]}/api/v1/cluster | jq -e '.leader_id == 1 and .role == \"follower\"'"
done
check "a new master was caught up by snapshot" grep -q "snapshot restored" "$WORK/master-2.log" "$WORK/master-3.log"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST --data-binary @"$WORK/scenario.json" "http://127.0.0.1:${APORT[2]}/api/v1/runs")
check "a follower redirects writes to the leader (307)" [ "$code" = 307 ]

check "loadctl cluster remove 3" ctl cluster remove 3
check "two members left" wait_until 5 sh -c "[ \"\$(curl -sf $API/api/v1/cluster | jq '.members | length')\" = 2 ]"
check "removing an unknown member is refused" fails ctl cluster remove 7
check "refusals said why" grep -q "already in the quorum" "$WORK/refusals.log"
finish
