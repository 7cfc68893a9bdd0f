#!/usr/bin/env bash
# A hostile worker (issue 12): while tenant a's honest run R1 runs on one
# honest worker, lc_hostile_worker holds the cluster's join secret and plays
# every attack on the master's worker port: statistics for another tenant's
# run, for a finished run, for a run it was never given, with a count past
# 2^63, an endpoint and an error kind the plan does not have, a second far
# beyond the run's time; forged refusals (one not UTF-8); a claim at
# generation 2^64-1; NaN/Inf heartbeats and a 10 KB non-UTF-8 name; a 16 MiB
# frame before Hello; 300 silent connections; a second Hello on one
# connection; a takeover of the honest worker's id; a proof made for another
# id. Then: the master lives, no run changed, every run still renders, and R1
# (stopped once the attacks are done) counts exactly what lc_target served it.
source "$(dirname "$0")/lib.sh"

head -c 48 /dev/urandom | base64 >"$WORK/secret"
start_target
start_master master --join-secret-file "$WORK/secret"
MASTER_PID=$(pgrep -P "$PID_master" loadmaster || echo "$PID_master")
start_worker honest --join-secret-file "$WORK/secret"
check "the honest worker joins" wait_until 15 workers_connected 1
HONEST_ID=$(curl -sf "$API/api/v1/workers" | jq -r '.workers[] | select(.name == "honest") | .id')
log "honest worker id: $HONEST_ID, master pid $MASTER_PID"

ctl() { timeout 20 "$LC_BIN/loadctl" --master "$API" "$@"; }
ctl tenants add a 1 >/dev/null
ctl tenants add b 1 >/dev/null
TA=$(ctl --json tokens add tenant a --name hostile-a | jq -r .token)
TB=$(ctl --json tokens add tenant b --name hostile-b | jq -r .token)
check "tenant tokens were created" [ -n "$TA" -a "$TA" != null -a -n "$TB" -a "$TB" != null ]

# tget TOKEN PATH: the API's answer to TOKEN (curl -q: not the admin token).
tget() { curl -q -sf --max-time 5 -H "Authorization: Bearer $1" "$API$2"; }
create_run() { curl -q -sf --max-time 5 -H "Authorization: Bearer $1" -X POST --data-binary "$2" "$API/api/v1/runs" | jq -r .id; }
# scenario TENANT NAME DURATION USERS THINK_MS: one task "NAME" on path /NAME.
scenario() {
    printf '{"name": "%s", "tenant": "%s", "target": "http://127.0.0.1:%s", "duration": "%s", "users": %s, "spawn_rate": 100, "think_time_ms": %s, "tasks": [{"name": "%s", "path": "/%s"}]}' \
        "$2" "$1" "$TARGET_PORT" "$3" "$4" "$5" "$2" "$2"
}
state_of() { tget "$1" "/api/v1/runs/$2" | jq -r .state; }
state_is() { [ "$(state_of "$1" "$2")" = "$3" ]; }
# totals TOKEN ID: what a run counted (requests, failures, endpoints, errors).
totals() {
    tget "$1" "/api/v1/runs/$2" | jq -cS '{requests: .totals.requests, failures: .totals.failures,
        bytes: .totals.bytes, endpoints: [.endpoints[] | {name, method, requests, failures, bytes}],
        errors: .errors}'
}
same_totals() { # TOKEN ID BEFORE
    local now
    now=$(totals "$1" "$2") || now="(no answer)"
    [ "$now" = "$3" ] && return 0
    log "  run $2 now: $now"
    log "  run $2 before: $3"
    return 1
}
stable_totals() { # TOKEN ID: the same twice, 2 s apart
    local a b
    a=$(totals "$1" "$2") && sleep 2 && b=$(totals "$1" "$2") && [ "$a" = "$b" ]
}
master_alive() { kill -0 "$MASTER_PID" 2>/dev/null && http_ok "$API/healthz"; }
valid_json() { tget "$1" "/api/v1/runs/$2" | python3 -m json.tool >/dev/null; }
workers_json() { curl -sf --max-time 5 "$API/api/v1/workers"; }
# (jq -e is true on empty input: every jq test here compares its output.)
connected_count() { workers_json | jq --arg id "$1" '[.workers[] | select(.id == $id and .connected)] | length'; }
worker_connected() { [ "$(connected_count "$1")" = 1 ]; }
worker_not_connected() { [ "$(connected_count "$1")" = 0 ]; }
# worker_runs_users ID RUN USERS: the worker reports USERS running users of RUN.
worker_runs_users() {
    [ "$(workers_json | jq -r --arg id "$1" --argjson run "$2" \
        '.workers[] | select(.id == $id) | .runs[] | select(.run == $run) | .running_users')" = "$3" ]
}
# json_true FILE EXPR: EXPR is true of the JSON in FILE.
json_true() { [ "$(jq -r "$2" "$1" 2>/dev/null)" = true ]; }
workers_valid() { workers_json | python3 -m json.tool >/dev/null; }
worker_address() { workers_json | jq -r --arg id "$1" '.workers[] | select(.id == $id) | .address'; }
metrics_valid() { curl -sf --max-time 5 "$API/metrics" >"$WORK/metrics.txt" && python3 "$LC_SRC/tests/tools/prom_check.py" "$WORK/metrics.txt" >/dev/null; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$MASTER_PID/status" 2>/dev/null || echo 0; }

# answered_but_not FILE PATTERN: the tool printed its line, and not PATTERN.
answered_but_not() { grep -q . "$1" && ! grep -q "$2" "$1"; }

# hw ATTACK [OPTIONS…]: one attack; its line goes to stdout and hostile.log.
# hw_all: waits for the attacks started in the background with hw_bg.
hw() {
    local attack=$1; shift
    local out
    out=$(timeout 30 "$LC_BIN/lc_hostile_worker" "$attack" --connect "$WORKER_ADDR" \
        --secret-file "$WORK/secret" "$@" 2>>"$WORK/hostile.log") || true
    printf '%s %s => %s\n' "$attack" "$*" "$out" >>"$WORK/hostile.log"
    log "attack $attack $*: $out"
    echo "$out"
}
HW_JOBS=()
hw_bg() { hw "$@" >/dev/null & HW_JOBS+=($!); PIDS+=($!); }
hw_all() { wait "${HW_JOBS[@]}" || true; HW_JOBS=(); }

# R0: a short run of tenant a that finishes before the attacks.
R0=$(create_run "$TA" "$(scenario a r0 1s 2 20)")
check "R0 created" [ -n "$R0" -a "$R0" != null ]
check "R0 finishes" wait_until 30 state_is "$TA" "$R0" finished
# R2: tenant b's run, running all along; one request, then an hour's think.
R2=$(create_run "$TB" "$(scenario b r2 5m 1 3600000)")
check "R2 runs" wait_until 15 state_is "$TB" "$R2" running
wait_until 10 sh -c "[ \"\$(curl -q -sf -H 'Authorization: Bearer $TB' '$API/api/v1/runs/$R2' | jq .totals.requests)\" -ge 1 ]" ||
    log "R2 has made no request yet"
wait_until 10 stable_totals "$TB" "$R2" || log "R2's totals do not settle"
R0_BEFORE=$(totals "$TA" "$R0")
R2_BEFORE=$(totals "$TB" "$R2")
log "R0 before: $R0_BEFORE"
log "R2 before: $R2_BEFORE"

# R1: tenant a's honest run, 20 users, during every attack; stopped by request
# once they are done (its 120 s are only a bound: the attacks take ~26 s here).
R1=$(create_run "$TA" "$(scenario a r1 120s 20 100)")
check "R1 runs" wait_until 15 state_is "$TA" "$R1" running
check "the honest worker runs R1's 20 users" wait_until 15 worker_runs_users "$HONEST_ID" "$R1" 20
ATTACKS_START=$SECONDS
HUGE=9223372036854775813 # 2^63 + 5
WRAP=18446744073709551615 # 2^64 - 1

# Statistics a worker has no business sending. Each attack is its own
# connection under its own worker id (capacity 0: nothing is ever assigned to
# it) and waits 2 s for an ack that does not come, so they all go at once.
hw_bg stats --id evil-r2 --run "$R2" --seq 1 --requests 1000003 --failures 7 --endpoint r2 --kind timeout
hw_bg stats --id evil-r0 --run "$R0" --seq 1 --requests 1000003 --endpoint r0 --final
hw_bg stats --id evil-r1 --run "$R1" --seq 1 --requests 1000 --endpoint r1
# The same for R1 from workers that claim to be adopting it (a Hello's
# running list): a count past 2^63, an endpoint and a kind not in the plan, a
# second far beyond the run's elapsed time.
hw_bg stats --id evil-huge --claim "$R1:1:1" --run "$R1" --seq 1 --requests "$HUGE" --endpoint r1
hw_bg stats --id evil-endpoint --claim "$R1:1:1" --run "$R1" --seq 1 --requests 5 --endpoint not-in-plan
hw_bg stats --id evil-kind --claim "$R1:1:1" --run "$R1" --seq 1 --requests 5 --failures 5 --endpoint r1 --kind forged_kind
hw_bg stats --id evil-interval --claim "$R1:1:1" --run "$R1" --seq 1 --requests 5 --endpoint r1 --interval 4000000
hw_all

# Refusals of runs never assigned to the refuser; R2's reason is not UTF-8
# (each waits 1 s for the master to close: both at once).
hw_bg refuse --id evil-refuse-1 --run "$R1" --reason "forged refusal"
hw_bg refuse --id evil-refuse-2 --run "$R2" --reason-hex "ff fe 41 0a 22 c3 28"
hw_all
sleep 1
check "a forged refusal does not fail R1" state_is "$TA" "$R1" running
check "a forged non-UTF-8 refusal does not fail R2" state_is "$TB" "$R2" running
check "R2 still renders after the non-UTF-8 refusal" valid_json "$TB" "$R2"

# A claim of R1 at generation 2^64-1 (3 s of heartbeats), beside the NaN heartbeats below
# (its own connection and worker id; waited for with them).
hw_bg claim --id evil-claim --run "$R1" --gen "$WRAP" --users 5 --hold 3

# NaN/Inf CPU and a short non-UTF-8 name: listed while connected, /metrics valid.
hw heartbeat-nan --id evil-nan --name-bytes 100 --hold 6 >"$WORK/nan.out" &
NAN_JOB=$!
PIDS+=("$NAN_JOB")
sleep 3
check "a NaN/Inf worker is listed in /api/v1/workers while connected" worker_connected evil-nan
check "/api/v1/workers is valid JSON during NaN heartbeats" workers_valid
check "/metrics is valid during NaN heartbeats" metrics_valid
wait "$NAN_JOB" || true
log "heartbeat-nan (short name): $(cat "$WORK/nan.out")"
hw_all
# The 10 KB non-UTF-8 name (the master may refuse such a Hello).
hw heartbeat-nan --id evil-nan-long --hold 2 >/dev/null
check "/api/v1/workers is valid JSON after a 10 KB non-UTF-8 name" workers_valid

# 16 MiB announced before Hello: closed promptly, RSS bounded.
rss_before=$(rss_kb)
rss_max=$rss_before
hw oversize >"$WORK/oversize.out" &
OVERSIZE_JOB=$!
PIDS+=("$OVERSIZE_JOB")
while kill -0 "$OVERSIZE_JOB" 2>/dev/null; do
    r=$(rss_kb)
    [ "${r:-0}" -gt "$rss_max" ] && rss_max=$r
    sleep 0.05
done
wait "$OVERSIZE_JOB" || true
r=$(rss_kb)
[ "${r:-0}" -gt "$rss_max" ] && rss_max=$r
log "oversize: $(cat "$WORK/oversize.out"); VmRSS ${rss_before} kB before, ${rss_max} kB at most"
check "an oversize frame before Hello is closed promptly" grep -q '^closed' "$WORK/oversize.out"
check "master RSS grew by less than 64 MiB for the oversize frame" [ $((rss_max - rss_before)) -lt 65536 ]

# 300 silent connections: all closed within ~6 s, the API answers meanwhile.
hw silent --count 300 --hold 8 >"$WORK/silent.out" &
SILENT_JOB=$!
PIDS+=("$SILENT_JOB")
sleep 2
check "/healthz answers while 300 silent connections are open" http_ok "$API/healthz"
wait "$SILENT_JOB" || true
log "silent: $(cat "$WORK/silent.out")"
silent_closed=$(sed -n 's/^\([0-9]*\) of \([0-9]*\) closed.*/\1 \2/p' "$WORK/silent.out")
silent_last=$(sed -n 's/.*last after \([0-9]*\) ms.*/\1/p' "$WORK/silent.out")
check "300 silent connections are all closed by the master" [ "$silent_closed" = "300 300" ]
within_ms() { [ -n "$1" ] && [ "$1" -le "$2" ]; }
check "... within ~6 s" within_ms "$silent_last" 6500

# The honest worker's id from a second connection.
addr_before=$(worker_address "$HONEST_ID")
hw takeover --id "$HONEST_ID" >"$WORK/takeover.out"
check "a second connection claiming a live worker's id is not welcomed" \
    answered_but_not "$WORK/takeover.out" '^welcomed'
sleep 1
addr_after=$(worker_address "$HONEST_ID")
log "honest worker's connection: $addr_before before the takeover, $addr_after after"
same_address() { [ -n "$1" ] && [ "$1" = "$2" ]; }
check "the honest worker keeps its connection through the takeover" same_address "$addr_before" "$addr_after"

# A proof made for another id.
hw proof-for-other-id --id evil-pfo --as someone-else >"$WORK/pfo.out"
check "a join proof made for another worker id is refused" grep -q '^refused' "$WORK/pfo.out"

# Checkpoint before the double Hello (which crashed the master under ASan).
check "(before the double Hello) the master is alive" master_alive
check "(before the double Hello) R0's totals are unchanged" same_totals "$TA" "$R0" "$R0_BEFORE"
check "(before the double Hello) R2's totals are unchanged" same_totals "$TB" "$R2" "$R2_BEFORE"
check "(before the double Hello) R1 is still running" state_is "$TA" "$R1" running

# A second Hello on one connection with another id, then a disconnect.
hw double-hello --id evil-dh-a --id2 evil-dh-b >"$WORK/dh.out"
check "a second Hello on a joined connection is not welcomed" answered_but_not "$WORK/dh.out" '^second hello: welcomed'
sleep 1
neither_connected() { worker_not_connected "$1" && worker_not_connected "$2"; }
check "after the double Hello's disconnect neither id is listed as connected" neither_connected evil-dh-a evil-dh-b
sleep 4 # three heartbeats: the registry's liveness tick touches the first id's connection
log "attacks took $((SECONDS - ATTACKS_START)) s; R1 is $(state_of "$TA" "$R1")"

# ---- after the attacks --------------------------------------------------------
check "the master process is alive and /healthz answers" master_alive
check "R0's totals are exactly what they were before the attacks" same_totals "$TA" "$R0" "$R0_BEFORE"
check "R2's totals are exactly what they were before the attacks" same_totals "$TB" "$R2" "$R2_BEFORE"
check "R0 is still finished" state_is "$TA" "$R0" finished
check "R2 is not failed by the forged refusal (still running)" state_is "$TB" "$R2" running
check "R1 is not failed by the forged refusal" sh -c "s=\$(curl -q -sf -H 'Authorization: Bearer $TA' '$API/api/v1/runs/$R1' | jq -r .state); [ \"\$s\" = running ] || [ \"\$s\" = finished ]"
check "GET R0 is valid JSON" valid_json "$TA" "$R0"
check "GET R1 is valid JSON" valid_json "$TA" "$R1"
check "GET R2 is valid JSON" valid_json "$TB" "$R2"
check "/api/v1/workers is valid JSON" workers_valid
check "/api/v1/workers lists the honest worker connected" worker_connected "$HONEST_ID"
check "/metrics is valid" metrics_valid
refused_sum=$(awk '/^loadcluster_worker_messages_refused_total/ { s += $NF } END { print s + 0 }' "$WORK/metrics.txt" 2>/dev/null || echo 0)
log "loadcluster_worker_messages_refused_total sums to $refused_sum"
check "refused messages are counted in loadcluster_worker_messages_refused_total" awk -v s="$refused_sum" 'BEGIN { exit !(s > 0) }'
check "the honest worker runs all 20 of R1's users after the claim" wait_until 10 worker_runs_users "$HONEST_ID" "$R1" 20

# The attacks are over: stop R1 rather than wait out its duration. A stopped
# run ends as one that reached its duration does (the workers are told to
# stop, the run ends once their final batches are in), so its count is as exact.
stop_code=$(curl -q -s -o /dev/null -w '%{http_code}' --max-time 5 -H "Authorization: Bearer $TA" \
    -X POST "$API/api/v1/runs/$R1/stop" || true)
check "R1 is still running when stopped after the attacks (202)" [ "$stop_code" = 202 ]
check "R1 ends (aborted, as stopped)" wait_until 60 state_is "$TA" "$R1" aborted
tget "$TA" "/api/v1/runs/$R1" >"$WORK/r1.json" || true
ours=$(jq '.totals.requests' "$WORK/r1.json" 2>/dev/null || echo none)
theirs=$(target_requests '.by_path["/r1"]' || echo none)
log "R1 requests: history=$ours target=$theirs"
check "R1's requests equal lc_target's count for /r1 exactly" [ "$ours" = "$theirs" ]
check "R1 made requests" [ "${theirs:-0}" -gt 100 ] 2>/dev/null
check "R1 has only its plan's endpoint" json_true "$WORK/r1.json" '[.endpoints[].name] == ["r1"]'
check "R1 has no forged error kind" json_true "$WORK/r1.json" '[.errors[] | select(.kind == "forged_kind")] | length == 0'
check "R1 has no failures" json_true "$WORK/r1.json" '.totals.failures == 0'
check "the master is alive at the end" master_alive

curl -q -s --max-time 5 -H "Authorization: Bearer $TB" -X POST "$API/api/v1/runs/$R2/stop" >/dev/null || true
finish
