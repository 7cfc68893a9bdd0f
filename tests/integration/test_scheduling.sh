#!/usr/bin/env bash
# Weighted sharding: one master, workers with capacities 100, 200 and 300,
# tenants a (weight 3) and b (weight 1) each asking for 600 users. a gets 450
# and b 150, each spread 1:2:3. Killing the 300 worker leaves a 225 and b 75
# on 100 + 200 within 3 heartbeat intervals (+1 s), the survivors' users never
# stop (the target's rate only drops to their share), and the worker's return
# brings the grants back to 450 / 150. A queue run that cannot get all it asks
# waits, and starts when the others end (stopped once the rates are in).
source "$(dirname "$0")/lib.sh"

HB_MS=1000
start_target
start_master master --worker-heartbeat-ms "$HB_MS"
for c in 100 200 300; do
    start_worker "w$c" --capacity "$c"
done
check "three workers joined" wait_until 20 workers_connected 3

for t in a:3 b:1; do
    curl -sf -X POST -H 'Content-Type: application/json' \
        --data "{\"name\": \"${t%%:*}\", \"weight\": ${t##*:}}" "$API/api/v1/tenants" >/dev/null
done
check "tenants a (3) and b (1) exist" \
    [ "$(curl -sf "$API/api/v1/tenants" | jq -c '[.tenants[] | select(.name == "a" or .name == "b") | .weight]')" = "[3,1]" ]

# start_run TENANT [USERS [POLICY]]: 60 s at most (a and b are stopped after
# the rate samples, ~25 s in).
start_run() {
    curl -sf -X POST --data-binary @- "$API/api/v1/runs" <<JSON | jq -r .id
{"name": "share-$1", "tenant": "$1", "target": "http://127.0.0.1:$TARGET_PORT",
 "duration": "60s", "users": ${2:-600}, "think_time_ms": 50, "policy": "${3:-degrade}",
 "tasks": [{"path": "/"}]}
JSON
}
run_a=$(start_run a)
run_b=$(start_run b)
check "both runs created" [ -n "$run_a" -a -n "$run_b" -a "$run_a" != null -a "$run_b" != null ]

# The target's requests, once a second, in the background: "t requests".
( while sleep 1; do
      printf '%s %s\n' "$(date +%s.%N)" "$(target_requests 2>/dev/null || echo 0)"
  done >"$WORK/rate.log" ) &
SAMPLER=$!
PIDS+=("$SAMPLER")

granted() { curl -sf --max-time 2 "$API/api/v1/runs/$1" | jq -r .users_granted; }
grants_are() { [ "$(granted "$run_a")" = "$1" ] && [ "$(granted "$run_b")" = "$2" ]; }
# users NAME RUN [FIELD]: the scheduler's users of RUN on worker NAME.
users() {
    curl -sf --max-time 2 "$API/api/v1/workers" |
        jq -r --arg n "$1" --argjson r "$2" --arg f "${3:-users}" \
            '[.workers[] | select(.name == $n and .connected) | .runs[] | select(.run == $r) | .[$f]] | add // 0'
}
near() { [ "$1" -ge $(($2 - 1)) ] && [ "$1" -le $(($2 + 1)) ]; }
# spread RUN FIELD U100 U200 [U300]: per-worker users within one of those.
spread() {
    local run=$1 field=$2; shift 2
    local c=100
    for want in "$@"; do
        near "$(users "w$c" "$run" "$field")" "$want" || return 1
        c=$((c + 100))
    done
}
show() {
    log "grants: a=$(granted "$run_a") b=$(granted "$run_b"); per worker (a, b):" \
        "$(for c in 100 200 300; do printf 'w%s=%s/%s ' "$c" "$(users "w$c" "$run_a")" "$(users "w$c" "$run_b")"; done)" \
        "cpu %:" "$(curl -sf --max-time 2 "$API/api/v1/workers" | jq -r '[.workers[] | select(.connected) | "\(.name)=\(.cpu_percent | floor)"] | join(" ")')"
}

check "a is granted 450 and b 150" wait_until 10 grants_are 450 150
check "a's 450 users are spread 75/150/225" wait_until 5 spread "$run_a" users 75 150 225
check "b's 150 users are spread 25/50/75" wait_until 5 spread "$run_b" users 25 50 75
check "the workers run those users" wait_until 10 spread "$run_a" running_users 75 150 225
show
view=$(curl -sf "$API/api/v1/runs/$run_b")
log "run b: $(jq -c '{users_requested, users_granted, queued, warnings}' <<<"$view")"
check "run b shows its request, grant and shortfall" \
    [ "$(jq -c '[.users_requested, .users_granted, .queued, .warnings]' <<<"$view")" = \
      '[600,150,false,["degraded: granted 150 of 600 users"]]' ]
# grant_fields RUN: [users_requested, users_granted, queued, warnings] of RUN
# in the single view, then in the run list (a summary that reads no stats).
grant_fields() {
    curl -sf --max-time 2 "$API/api/v1/runs/$1" | jq -c '[.users_requested, .users_granted, .queued, .warnings]'
    curl -sf --max-time 2 "$API/api/v1/runs" |
        jq -c --argjson r "$1" '.runs[] | select(.id == $r) | [.users_requested, .users_granted, .queued, .warnings]'
}
list_matches_view() {
    local f view listed
    f=$(grant_fields "$1") || return 1
    view=$(sed -n 1p <<<"$f") listed=$(sed -n 2p <<<"$f")
    [ -n "$view" ] && [ "$view" = "$listed" ] || { log "  run $1: view $view, list $listed"; return 1; }
}
check "the run list shows b's request, grant and shortfall like its view" list_matches_view "$run_b"
check "... and a's" list_matches_view "$run_a"
check "the workers view shows capacities" \
    [ "$(curl -sf "$API/api/v1/workers" | jq -c '[.workers[] | .effective_capacity] | sort')" = "[100,200,300]" ]
sleep 3

killed_at=$(date +%s.%N)
stop_proc "$PID_w300" KILL
log "killed w300"
wait_until 10 grants_are 225 75 || true
moved_in=$(echo "$(date +%s.%N) - $killed_at" | bc)
log "new grants after ${moved_in}s"
check "a 225 and b 75 within 3 heartbeats + 1 s of the kill" \
    [ "$(echo "$moved_in <= 3 * $HB_MS / 1000 + 1" | bc)" = 1 ]
survivors_carry() { spread "$run_a" running_users 75 150 && spread "$run_b" running_users 25 50; }
check "the survivors carry a 75/150 and b 25/50" wait_until 3 survivors_carry
show
sleep 4
resumed_at=$(date +%s.%N)

start_worker w300 --capacity 300
check "grants return to 450 and 150" wait_until 15 grants_are 450 150
check "a spread 75/150/225 again" wait_until 5 spread "$run_a" users 75 150 225
check "b spread 25/50/75 again" wait_until 5 spread "$run_b" users 25 50 75
show

# A queue run of b asking 300 would get 75 (b's 150 shared with its first
# run): it waits, pending, without taking anything from the others.
run_q=$(start_run b 300 queue)
# grant_is RUN JSON: [state, users_granted, queued, warnings] of RUN is JSON.
grant_is() {
    [ "$(curl -sf --max-time 2 "$API/api/v1/runs/$1" | jq -c '[.state, .users_granted, .queued, .warnings]')" = "$2" ]
}
check "a queue run that cannot get all 300 users waits" wait_until 5 grant_is "$run_q" \
    '["pending",0,true,["queued: waiting until all 300 users can be granted"]]'
check "the queued run takes nothing from the others" grants_are 450 150
check "the run list shows the queued run like its view" list_matches_view "$run_q"
check "?state=pending lists just the queued run" \
    [ "$(curl -sf "$API/api/v1/runs?state=pending" | jq -c '[.runs[].id]')" = "[$run_q]" ]
check "an unknown ?state= is refused (400)" \
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$API/api/v1/runs?state=done")" = 400 ]
sleep 6
kill "$SAMPLER" 2>/dev/null || true

# Requests per second between consecutive samples, with the second they end at.
awk 'NR > 1 && $2 >= p { printf "%.2f %d\n", $1, ($2 - p) / ($1 - t) } { t = $1; p = $2 }' \
    "$WORK/rate.log" >"$WORK/rps.log"
mean_between() { awk -v a="$1" -v b="$2" '$1 > a && $1 <= b { s += $2; n++ } END { print n ? int(s / n) : 0 }' "$WORK/rps.log"; }
min_between() { awk -v a="$1" -v b="$2" '$1 > a && $1 <= b && (m == "" || $2 < m) { m = $2 } END { print m + 0 }' "$WORK/rps.log"; }
before=$(mean_between "$(echo "$killed_at - 4" | bc)" "$killed_at")
window_min=$(min_between "$(echo "$killed_at + 1" | bc)" "$resumed_at")
after=$(mean_between "$(echo "$killed_at + 5" | bc)" "$resumed_at")
back=$(mean_between "$(echo "$resumed_at + 3" | bc)" "$(date +%s.%N)")
log "target rps: before $before, lowest second after the kill $window_min, survivors $after, back $back"
log "rps samples: $(awk '{ printf "%d ", $2 }' "$WORK/rps.log")"
# The survivors hold 300 of 600 users: the rate falls to about their share,
# and no second falls far below it (nobody was stopped and restarted).
check "the survivors keep at least 40 % of the rate" [ "$after" -ge $((before * 40 / 100)) ]
check "no second after the kill falls below 30 % of the rate" [ "$window_min" -ge $((before * 30 / 100)) ]
check "the rate comes back with the worker" [ "$back" -ge $((before * 80 / 100)) ]
stop_code() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST "$API/api/v1/runs/$1/stop" || true; }
check "a and b are still running when stopped (202, 202)" [ "$(stop_code "$run_a") $(stop_code "$run_b")" = "202 202" ]
both_ended() { run_state_is "$run_a" aborted && run_state_is "$run_b" aborted; }
check "both runs end (aborted, as stopped)" wait_until 40 both_ended
check "then the queue run starts with all 300 users" wait_until 10 grant_is "$run_q" \
    '["running",300,false,[]]'
curl -sf -X POST "$API/api/v1/runs/$run_q/stop" >/dev/null
check "the queue run stops" wait_until 40 run_state_is "$run_q" aborted
finish
