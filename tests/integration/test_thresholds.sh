#!/usr/bin/env bash
# k6-style thresholds through one master and one worker against lc_target:
# thresholds that pass (loadctl run --wait exits 0), a latency threshold that
# fails on one endpoint only (exit 99, the run view shows it with its observed
# value), an abortOnFail threshold that ends a long run early as aborted, and
# a malformed threshold refused with a 400 naming its JSON path; the results
# survive a master restart.
source "$(dirname "$0")/lib.sh"

start_target
start_master master
start_worker w1
check "the worker connects" wait_until 15 workers_connected 1

# scenario NAME DURATION THRESHOLDS_JSON: "fast" answers at once, "slow" after 200 ms.
scenario() {
    cat >"$WORK/$1.json" <<JSON
{"name": "$1", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "$2",
 "users": 4, "spawn_rate": 100, "think_time_ms": 20,
 "tasks": [{"name": "fast", "path": "/fast"},
           {"name": "slow", "path": "/slow?latency_ms=200"}],
 "thresholds": $3}
JSON
}

# ctl_run NAME: loadctl run --wait (not a terminal: plain lines); output in
# $WORK/NAME.out, exit status in RC, the run's view in $WORK/NAME.run.json.
ctl_run() {
    RC=0
    timeout 90 "$LC_BIN/loadctl" --master "$API" run "$WORK/$1.json" --wait \
        >"$WORK/$1.out" 2>&1 || RC=$?
    local id
    id=$(sed -n 's/^run \([0-9]*\) created.*/\1/p' "$WORK/$1.out" | head -1)
    curl -sf "$API/api/v1/runs/${id:-0}" >"$WORK/$1.run.json" || echo '{}' >"$WORK/$1.run.json"
    log "$1: exit $RC, state $(jq -r .state "$WORK/$1.run.json"), verdict $(jq -r .verdict "$WORK/$1.run.json")"
}
view() { jq -r "$2" "$WORK/$1.run.json"; }
jqe() { jq -e "$@" >/dev/null; }

# (1) Every threshold passes: exit 0, verdict pass, each result passed.
scenario pass 2s '{"http_req_duration": ["p(95)<5000", "max<10000"],
  "http_req_duration{endpoint:fast}": ["p(99)<150"],
  "http_req_failed": ["rate<0.01"], "http_reqs": ["count>10", "rate>1"], "p95_ms": 5000}'
ctl_run pass
check "passing thresholds: loadctl exits 0" [ "$RC" = 0 ]
check "passing thresholds: run finished with verdict pass" \
    [ "$(view pass .state)/$(view pass .verdict)" = finished/pass ]
check "passing thresholds: 7 results, all passed" \
    jqe '(.thresholds | length) == 7 and all(.thresholds[]; .passed)' "$WORK/pass.run.json"
check "passing thresholds: the legacy p95_ms shows as p(95)<=5000" \
    jqe 'any(.thresholds[]; .expression == "p(95)<=5000" and .metric == "http_req_duration")' \
    "$WORK/pass.run.json"
check "passing thresholds: loadctl lists them as ok" grep -q '^  ok   http_reqs count>10' "$WORK/pass.out"

# (2) p(95)<100 on the slow endpoint fails (200 ms each); on the fast one it passes.
scenario slow 2s '{"http_req_duration{endpoint:slow}": ["p(95)<100"],
  "http_req_duration{name:fast}": ["p(95)<100"]}'
ctl_run slow
check "failing latency threshold: loadctl exits 99" [ "$RC" = 99 ]
check "failing latency threshold: run finished with verdict fail" \
    [ "$(view slow .state)/$(view slow .verdict)" = finished/fail ]
check "the slow endpoint's threshold failed, observed about 200 ms" \
    jqe '.thresholds[0] | .endpoint == "slow" and .expression == "p(95)<100" and
           (.passed | not) and .observed >= 190 and .observed < 1000' "$WORK/slow.run.json"
check "the fast endpoint's threshold passed" \
    jqe '.thresholds[1] | .endpoint == "fast" and .passed and .observed < 100' "$WORK/slow.run.json"
check "loadctl marks the failed threshold" \
    grep -q '^  FAIL http_req_duration{endpoint:slow} p(95)<100 .*observed 2[0-9][0-9]' "$WORK/slow.out"

# (3) abortOnFail after delayAbortEval 2s: a 60 s run ends within seconds, aborted.
scenario abort 60s '{"http_req_duration": [{"threshold": "max<1", "abortOnFail": true,
  "delayAbortEval": "2s"}], "http_reqs": ["count>0"]}'
start_s=$SECONDS
ctl_run abort
took=$((SECONDS - start_s))
check "abortOnFail: loadctl exits 99 (after ${took}s)" [ "$RC" = 99 ]
check "abortOnFail: the run ends well before its 60 s" [ "$took" -lt 30 ]
check "abortOnFail: run aborted with verdict fail" \
    [ "$(view abort .state)/$(view abort .verdict)" = aborted/fail ]
check "abortOnFail: the reason names the threshold" \
    jqe '.reason | startswith("threshold failed: http_req_duration max<1 (observed ")' \
    "$WORK/abort.run.json"
check "abortOnFail: not before delayAbortEval (ran $(view abort .duration_s) s)" \
    jqe '.duration_s >= 2 and .duration_s < 30' "$WORK/abort.run.json"
check "abortOnFail: the threshold is listed failed" \
    jqe '.thresholds[0] | .abort_on_fail and (.passed | not) and .observed > 1' "$WORK/abort.run.json"

# (4) A malformed threshold: 400 naming its JSON path, nothing created.
runs_before=$(curl -sf "$API/api/v1/runs" | jq '.runs | length')
scenario bad 3s '{"http_req_duration": ["p(95)<500", "p95 under 500"]}'
code=$(curl -s -o "$WORK/bad.answer" -w '%{http_code}' --max-time 5 -X POST \
    --data-binary @"$WORK/bad.json" "$API/api/v1/runs")
log "malformed threshold: $code $(cat "$WORK/bad.answer")"
check "malformed threshold gets 400" [ "$code" = 400 ]
check "the error names the path and what was expected" \
    jqe '.error | startswith("thresholds[\"http_req_duration\"][1]: expected \"<agg><op><number>\" like \"p(95)<500\"")' \
    "$WORK/bad.answer"
scenario unknown 3s '{"http_req_duration{endpoint:nope}": ["p(95)<500"]}'
code=$(curl -s -o "$WORK/unknown.answer" -w '%{http_code}' --max-time 5 -X POST \
    --data-binary @"$WORK/unknown.json" "$API/api/v1/runs")
check "an unknown endpoint gets 400 naming it" \
    [ "$code" = 400 -a "$(jq -r .error "$WORK/unknown.answer" | grep -c 'no task named "nope"')" = 1 ]
RC=0
timeout 30 "$LC_BIN/loadctl" --master "$API" run "$WORK/bad.json" --wait >"$WORK/bad.out" 2>&1 || RC=$?
check "loadctl run of a refused scenario exits 2" [ "$RC" = 2 ]
check "no run was created" [ "$(curl -sf "$API/api/v1/runs" | jq '.runs | length')" = "$runs_before" ]

# (5) The results are part of the replicated state: the same after a restart.
slow_id=$(jq -r .id "$WORK/slow.run.json")
stop_proc "$PID_master"
start_master master
curl -sf "$API/api/v1/runs/$slow_id" >"$WORK/slow.again.json" || echo '{}' >"$WORK/slow.again.json"
check "thresholds and verdict survive a master restart" \
    [ "$(jq -cS '[.verdict, .thresholds]' "$WORK/slow.run.json")" = "$(jq -cS '[.verdict, .thresholds]' "$WORK/slow.again.json")" ]

finish
