#!/usr/bin/env bash
# Open-model journeys (scenario arrival_rate) through a master and a worker against lc_target:
# R iterations start per second for D seconds (R*D within a bound stated below), each step
# is counted exactly as lc_target saw it, a slowed target's delay is in the latencies, a pool
# too small for the rate drops the starts it cannot take (and counts them), and a stall of
# the worker is in the latency of each iteration's first request and in iteration_duration:
# README ("Journeys"): "In the open model (arrival_rate), each start is one iteration, timed
# (with its first request) from when it was due"; JOURNEYS.md: "coordinated-omission
# correction applies to the first request and to iteration_duration".
source "$(dirname "$0")/lib.sh"

start_target
start_master master
start_worker w1
check "a worker connects" wait_until 15 workers_connected 1

RATE=20
SECS=3
# scenario NAME MAX_USERS A_QUERY: a journey of three steps (a, b, and c in group g), each
# iteration one start of the open model.
scenario() {
    cat <<JSON
{"name": "$1", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "${SECS}s",
 "arrival_rate": $RATE, "max_users": $2,
 "journeys": [{"name": "open", "steps": [
   {"name": "a", "path": "/$1/a$3"},
   {"name": "b", "path": "/$1/b"},
   {"group": "g", "steps": [{"name": "c", "method": "POST", "path": "/$1/c", "body": "x"}]}]}]}
JSON
}
served() { target_requests ".by_path[\"$1\"] // 0"; }
ep() { jq -r --arg n "$2" ".endpoints[] | select(.name == \$n) | .$3" "$WORK/$1.json"; }
# run_open NAME MAX_USERS A_QUERY [PAUSE_S]: runs it to the end into $WORK/NAME.json; with
# PAUSE_S, stops the worker (SIGSTOP) for that long 1.5 s into the run.
run_open() {
    scenario "$1" "$2" "$3" >"$WORK/$1.scenario.json"
    local id
    id=$(submit_run "$WORK/$1.scenario.json")
    if [ -n "${4:-}" ]; then
        wait_until 10 run_state_is "$id" running || true
        sleep 1.5
        local pid
        pid=$(pgrep -P "$PID_w1" loadworker)
        kill -STOP "$pid"; sleep "$4"; kill -CONT "$pid"
    fi
    check "$1: run finished" wait_until 30 run_state_is "${id:-0}" finished
    curl -sf "$API/api/v1/runs/$id" >"$WORK/$1.json"
    log "$1: target $(target_requests '.by_path | tostring'); dropped $(jq .totals.dropped "$WORK/$1.json");" \
        "$(jq -c '[.endpoints[] | {(.name): [.requests, .latency_ms.p50, .latency_ms.p95, .latency_ms.max]}] | add' "$WORK/$1.json")"
}
# Starts: the pacer issues start k at k/RATE s after the worker's start (one worker, one
# engine: phase 0), until the master's stop. The master stops the run on its first 100 ms tick
# at or after SECS (runs.c TICK_MS), so the worker runs SECS s to SECS + 0.1 s plus the
# loopback latency of start and stop: RATE*SECS + 1 starts (0 … RATE*SECS), up to 2 more in
# the tick, and one either way for the messages' skew: RATE*SECS - 1 … RATE*SECS + 3.
in_bound() { [ "$1" -ge $((RATE * SECS - 1)) ] && [ "$1" -le $((RATE * SECS + 3)) ]; }

# 1. A pool large enough: every start is an iteration; each step counted as the target saw it.
# Step a is slowed by the target (100 ms): the latencies include it.
run_open plain 50 "?latency_ms=100"
starts=$(served /plain/a)
check "plain: $starts iterations started for $RATE/s over ${SECS}s (bound $((RATE * SECS - 1))..$((RATE * SECS + 3)))" \
    in_bound "$starts"
check "plain: none dropped" [ "$(jq .totals.dropped "$WORK/plain.json")" = 0 ]
for s in a b c; do
    check "plain: $s's requests equal the target's /plain/$s" [ "$(ep plain $s requests)" = "$(served /plain/$s)" ]
done
# The run's stop may cut the iterations in flight: those started in the last 100 ms (a's
# latency) and those the stop's tick lets start after the duration (up to 100 ms more):
# RATE × 0.2 s = 4. (The full suite's ASan tree once cut 3, past the 2 first written here.)
check "plain: each started iteration ran its steps (the stop cuts at most $((RATE / 5)))" \
    [ "$(served /plain/c)" -ge $((starts - RATE / 5)) -a "$(served /plain/b)" -ge "$(served /plain/c)" ]
check "plain: the iterations and the group count the iterations that ended" \
    [ "$(ep plain iteration:open requests):$(ep plain group:g requests)" = "$(served /plain/c):$(served /plain/c)" ]
check "plain: a's latency includes the target's 100 ms" jq -e '.endpoints[] | select(.name == "a") | .latency_ms.min >= 99' "$WORK/plain.json"
check "plain: so does every iteration's duration" jq -e '.endpoints[] | select(.name == "iteration:open") | .latency_ms.min >= 99' "$WORK/plain.json"

# 2. A pool of 1 user against steps that take 100 ms: about 10 iterations a second fit, the
# other starts find no free user and are dropped (README: "starts that find no free user
# are counted as dropped"); started + dropped is still the schedule's count.
curl -sf -X POST "http://127.0.0.1:$TARGET_PORT/__reset" >/dev/null
run_open small 1 "?latency_ms=100"
small_starts=$(served /small/a)
small_dropped=$(jq .totals.dropped "$WORK/small.json")
check "small: starts were dropped ($small_dropped) and some ran ($small_starts)" \
    [ "$small_dropped" -gt 0 -a "$small_starts" -gt 0 -a "$small_starts" -le $(( (SECS + 1) * 10 )) ]
check "small: started + dropped is the schedule's count ($((small_starts + small_dropped)))" \
    in_bound "$((small_starts + small_dropped))"

# 3. The worker stalls 1 s (SIGSTOP: its loop does not run) in the middle of a run against a
# fast target. The ~20 starts due meanwhile go out at once when it resumes; each iteration
# and its first request are timed from when the start was due, so they took 50…1000 ms,
# while the second step b, not corrected, stays fast. Without the correction a and the
# iterations would be as fast as b (a request in flight when the stall began is slow either
# way: at most one of each, which p95 over 80 does not see).
curl -sf -X POST "http://127.0.0.1:$TARGET_PORT/__reset" >/dev/null
run_open stall 100 "" 1
stall_starts=$(served /stall/a)
check "stall: the starts due during the stall were not lost ($stall_starts)" in_bound "$stall_starts"
check "stall: none dropped (the pool had room for them)" [ "$(jq .totals.dropped "$WORK/stall.json")" = 0 ]
for s in a b c; do
    check "stall: $s's requests equal the target's /stall/$s" [ "$(ep stall $s requests)" = "$(served /stall/$s)" ]
done
check "stall: a (each iteration's first request) has the wait in its p95 (>= 600 ms)" \
    jq -e '.endpoints[] | select(.name == "a") | .latency_ms.p95 >= 600' "$WORK/stall.json"
check "stall: so has iteration_duration (p95 >= 600 ms)" \
    jq -e '.endpoints[] | select(.name == "iteration:open") | .latency_ms.p95 >= 600' "$WORK/stall.json"
check "stall: b, not an iteration's first request, is not corrected (p95 < 200 ms)" \
    jq -e '.endpoints[] | select(.name == "b") | .latency_ms.p95 < 200' "$WORK/stall.json"

finish
