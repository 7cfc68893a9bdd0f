#!/usr/bin/env bash
# Workload-model fidelity with loadworker --local against lc_target: a 1 s
# server stall shows in the open model's percentiles (latency from the
# intended start) at the requested rate, and in the closed model's max; a
# closed-model stage ramp is followed; starts without a free user are dropped.
# Bounds are the issue's, no tighter: other processes share this machine.
source "$(dirname "$0")/lib.sh"

# target NAME [FLAGS…]: a fresh lc_target (its stall clock starts at its first
# request); sets PORT_<NAME>.
target() { start_named_target "$@"; }

served() { curl -sf --max-time 2 "http://127.0.0.1:$1/__stats" | jq -r .requests; }

# run NAME [FLAGS…]: loadworker --local on $WORK/NAME.json, one engine thread;
# its output in $WORK/NAME.out. A failure counts, and the checks that follow fail.
run() {
    local name=$1 rc=0; shift
    timeout 60 "$LC_BIN/loadworker" --local "$WORK/$name.json" --threads 1 "$@" \
        >"$WORK/$name.out" 2>"$WORK/$name.log" || rc=$?
    if [ $rc -ne 0 ]; then log "$name: loadworker exited $rc"; FAILED=$((FAILED + 1)); fi
}

# field FILE FILTER: a value of a JSON report, or null when there is none.
field() { jq "$2" "$1" 2>/dev/null || echo null; }

jq_true() { jq -e "$@" >/dev/null; }
in_range() { # in_range VALUE LO HI
    jq -e -n --argjson v "$1" --argjson lo "$2" --argjson hi "$3" \
        '$v >= $lo and $v <= $hi' >/dev/null
}

# (a) Open model: 1000 requests/s for 10 s with a 1 s stall at 5 s. The
# stalled second's 1000 requests wait 1000…0 ms, so p95 ≈ 500 and p99 ≈ 900.
target open --stall-at-ms 5000 --stall-ms 1000
cat >"$WORK/open.json" <<JSON
{"name": "open-stall", "target": "http://127.0.0.1:$PORT_open", "duration": "10s",
 "arrival_rate": 1000, "max_users": 2000, "tasks": [{"path": "/"}]}
JSON
run open --json
R="$WORK/open.out"
p95=$(field "$R" .totals.latency_ms.p95); p99=$(field "$R" .totals.latency_ms.p99)
reqs=$(field "$R" .totals.requests); dropped=$(field "$R" .totals.dropped)
log "open: requests=$reqs dropped=$dropped p95=${p95}ms p99=${p99}ms" \
    "max=$(field "$R" .totals.latency_ms.max)ms target=$(served "$PORT_open")"
check "open: p95 in [400, 600] ms (got $p95)" in_range "$p95" 400 600
check "open: p99 in [800, 1000] ms (got $p99)" in_range "$p99" 800 1000
check "open: 10000 requests in 10 s within 1 % (got $reqs)" in_range "$reqs" 9900 10100
check "open: requests equal the target's count" test "$reqs" -eq "$(served "$PORT_open")"
check "open: no failures" test "$(field "$R" .totals.failures)" -eq 0
stop_proc "$PID_open"

# (b) Closed model, the same 1 s stall (at 2 s of a 5 s run: 2 s before and
# after it): the requests caught in it are not hidden.
target closed --stall-at-ms 2000 --stall-ms 1000
cat >"$WORK/closed.json" <<JSON
{"name": "closed-stall", "target": "http://127.0.0.1:$PORT_closed", "duration": "5s",
 "users": 20, "tasks": [{"path": "/"}]}
JSON
run closed --json
R="$WORK/closed.out"
max=$(field "$R" .totals.latency_ms.max); reqs=$(field "$R" .totals.requests)
log "closed: requests=$reqs max=${max}ms"
check "closed: max latency >= 950 ms (got $max)" in_range "$max" 950 1e9
check "closed: requests equal the target's count" test "$reqs" -eq "$(served "$PORT_closed")"
stop_proc "$PID_closed"

# (c) Closed-model stages: 0 → 20 users over 4 s, then 20 held for 2 s. The
# timeline samples once a second; a sample may lag its time by a few ms.
target ramp
cat >"$WORK/ramp.json" <<JSON
{"name": "ramp", "target": "http://127.0.0.1:$PORT_ramp", "think_time_ms": 10,
 "stages": [{"duration": "4s", "users": 20}, {"duration": "2s", "users": 20}],
 "tasks": [{"path": "/"}]}
JSON
run ramp --json
R="$WORK/ramp.out"
log "ramp: timeline $(field "$R" '[.timeline[] | [(.t_s * 100 | round / 100), .users]]' | jq -c .)"
check "ramp: at least 5 samples" jq_true '(.timeline | length) >= 5' "$R"
check "ramp: users follow 20·t/4 (± 3) during the ramp" jq_true \
    '[.timeline[] | select(.t_s < 4) | (.users - 5 * .t_s) | fabs <= 3] | all' "$R"
check "ramp: users rise (two samples strictly between 0 and 20, increasing)" jq_true \
    '[.timeline[] | select(.t_s > 0.5 and .t_s < 3.5) | .users] as $u |
     ($u | length) >= 2 and ($u | all(. > 0 and . < 20)) and $u == ($u | sort) and
     $u[0] < $u[-1]' "$R"
check "ramp: 20 users held after the ramp" jq_true \
    '[.timeline[] | select(.t_s >= 4.3) | .users == 20] | all' "$R"
check "ramp: requests equal the target's count" \
    test "$(field "$R" .totals.requests)" -eq "$(served "$PORT_ramp")"
stop_proc "$PID_ramp"

# (d) Open model beyond its pool: 2 users at 50 ms per request serve about
# 40 of 200 starts/s; the rest are dropped, and the table report says so.
target slow --latency-ms 50
cat >"$WORK/drops.json" <<JSON
{"name": "drops", "target": "http://127.0.0.1:$PORT_slow", "duration": "2s",
 "arrival_rate": 200, "max_users": 2, "tasks": [{"path": "/"}]}
JSON
run drops
log "drops: $(grep -i dropped "$WORK/drops.out" || echo 'no dropped line')"
check "drops: the report shows dropped starts" \
    grep -q "Dropped starts (no free user): [1-9]" "$WORK/drops.out"
stop_proc "$PID_slow"

finish
