#!/usr/bin/env bash
# End to end through one master and two workers: a 5 s closed-model run with
# 50 users and two tasks weighted 3:1 against lc_target. Checks exact counts
# against the target, the split, persistence across a master restart, and that
# a malformed scenario is refused without creating anything.
source "$(dirname "$0")/lib.sh"

start_target
# A small snapshot threshold, so the restart below restores a snapshot + log.
SNAPSHOT_FLAGS=(--snapshot-threshold 4 --snapshot-trailing 2)
start_master master "${SNAPSHOT_FLAGS[@]}"
start_worker w1
start_worker w2
check "two workers connect" wait_until 15 workers_connected 2

cat >"$WORK/scenario.json" <<JSON
{"name": "e2e", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "5s",
 "users": 50, "spawn_rate": 100,
 "tasks": [{"name": "heavy", "weight": 3, "path": "/heavy"},
           {"name": "light", "weight": 1, "method": "POST", "path": "/light",
            "headers": {"Content-Type": "application/json"}, "body": "{\"u\": \"\${user_id}\"}"}]}
JSON

# Garbage on the master's worker port closes only that connection.
exec 5<>"/dev/tcp/127.0.0.1/${WORKER_ADDR##*:}"
printf '\x05\xde\xad\xbe\xef\xff' >&5
check "master closes a connection that sends garbage" \
    wait_until 5 grep -q 'closing worker connection.*reason="undecodable frame"' "$WORK/master.log"
exec 5>&-
check "master still healthy after garbage" http_ok "$API/healthz"
check "real workers still connected after garbage" workers_connected 2

# A malformed scenario: 400 naming the bad field, and no run created.
bad=$(jq '.tasks[1].method = "FETCH"' "$WORK/scenario.json")
code=$(curl -s -o "$WORK/bad.json" -w '%{http_code}' --max-time 5 -X POST --data-binary "$bad" "$API/api/v1/runs")
check "malformed scenario gets 400" [ "$code" = 400 ]
check "error names tasks[1].method" grep -q 'tasks\[1\].method' "$WORK/bad.json"
check "no run was created" [ "$(curl -sf "$API/api/v1/runs" | jq '.runs | length')" = 0 ]
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST --data-binary '{not json' "$API/api/v1/runs")
check "invalid JSON gets 400" [ "$code" = 400 ]

# The run, through loadctl.
set +e
timeout 60 "$LC_BIN/loadctl" --master "$API" run "$WORK/scenario.json" --wait >"$WORK/loadctl.out" 2>&1
ctl_rc=$?
set -e
check "loadctl run --wait exits 0" [ "$ctl_rc" = 0 ]
id=$(sed -n 's/^run \([0-9]*\) created.*/\1/p' "$WORK/loadctl.out" | head -1)
check "loadctl printed the run id" [ -n "$id" ]
id=${id:-1}
check "run finished" run_state_is "$id" finished
curl -sf "$API/api/v1/runs/$id" >"$WORK/run.json"
ours=$(jq '.totals.requests' "$WORK/run.json")
theirs=$(target_requests)
log "requests: history=$ours target=$theirs"
check "requests equal the target's count exactly" [ "$ours" = "$theirs" ]
check "requests were made" [ "$ours" -gt 100 ]
check "no failures" [ "$(jq '.totals.failures' "$WORK/run.json")" = 0 ]
heavy=$(jq '.endpoints[] | select(.name == "heavy") | .requests' "$WORK/run.json")
light=$(jq '.endpoints[] | select(.name == "light") | .requests' "$WORK/run.json")
check "per-endpoint counts match the target's paths" \
    [ "$heavy" = "$(target_requests '.by_path["/heavy"]')" -a "$light" = "$(target_requests '.by_path["/light"]')" ]
check "split is 3:1 within 5 %" awk -v h="$heavy" -v l="$light" \
    'BEGIN { r = h / (h + l); exit !(r > 0.75 * 0.95 && r < 0.75 * 1.05) }'
check "latency percentiles reported" jq -e '.totals.latency_ms.p95 > 0 and .totals.latency_ms.max >= .totals.latency_ms.p95' "$WORK/run.json"
check "loadctl printed the endpoint table" grep -q 'heavy' "$WORK/loadctl.out"
curl -sf "$API/metrics" >"$WORK/metrics.txt"
metric_sum=$(awk -v run="run=\"$id\"" '/^loadcluster_requests_total/ && index($0, run) { s += $NF } END { print s + 0 }' "$WORK/metrics.txt")
check "/metrics requests equal the run's requests" [ "$metric_sum" = "$ours" ]
check "/metrics shows 2 connected workers" grep -qx 'loadcluster_workers_connected 2' "$WORK/metrics.txt"

# Restart the master: the run is still there with the same figures.
stop_proc "$PID_master"
start_master master "${SNAPSHOT_FLAGS[@]}"
check "the master had taken a snapshot" grep -q "snapshot restored" "$WORK/master.log"
check "run survives a master restart" wait_until 10 run_state_is "$id" finished
curl -sf "$API/api/v1/runs/$id" >"$WORK/run2.json"
check "same figures after restart" \
    [ "$(jq -S 'del(.duration_s, .current)' "$WORK/run.json")" = "$(jq -S 'del(.duration_s, .current)' "$WORK/run2.json")" ]
check "loadctl show reads it back" timeout 10 "$LC_BIN/loadctl" --master "$API" show "$id"

finish
