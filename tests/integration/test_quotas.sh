#!/usr/bin/env bash
# Per-tenant quotas: a scenario over the byte quota, a run past the active
# runs quota and one past the kept histories quota are refused with 429
# naming the quota, and nothing is created; a run fits again once another
# ended (active) or its history was deleted by retention (kept).
source "$(dirname "$0")/lib.sh"

start_target
start_master master --quota-active-runs 1 --quota-kept-runs 2 --quota-scenario-bytes 400 \
    --history-max 6s --acks-keep 1s
start_worker worker
wait_until 15 workers_connected 1
scenario() { # FILE DURATION [PADDING]
    local pad=${3:-}
    cat >"$WORK/$1" <<JSON
{"name": "q", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "$2", "users": 1,
 "think_time_ms": 50, "tasks": [{"name": "a", "path": "/$pad"}]}
JSON
}
post() { curl -s -o "$WORK/answer.json" -w '%{http_code}' -X POST --data-binary @"$1" "$API/api/v1/runs"; }
runs_count() { curl -sf "$API/api/v1/runs" | jq '.runs | length'; }

scenario long.json 60s
scenario short.json 2s
scenario big.json 2s "$(printf 'x%.0s' $(seq 1 400))"
code=$(post "$WORK/big.json")
check "a scenario over 400 bytes: 429 naming the byte quota ($code)" \
    sh -c "[ $code = 429 ] && jq -e '.error | test(\"at most 400 bytes\")' '$WORK/answer.json' >/dev/null"
check "... and nothing created" [ "$(runs_count)" = 0 ]
check "the first run is created" [ "$(post "$WORK/long.json")" = 201 ]
LONG=$(jq -r .id "$WORK/answer.json")
code=$(post "$WORK/short.json")
check "a second active run: 429 naming the active runs quota ($code)" \
    sh -c "[ $code = 429 ] && jq -e '.error | test(\"1 active runs, its quota is 1\")' '$WORK/answer.json' >/dev/null"
check "... and nothing created" [ "$(runs_count)" = 1 ]
curl -sf -X POST "$API/api/v1/runs/$LONG/stop" >/dev/null
check "the first run ends" wait_until 30 run_state_is "$LONG" aborted
check "with it over, another run fits" [ "$(post "$WORK/short.json")" = 201 ]
SHORT=$(jq -r .id "$WORK/answer.json")
check "it finishes" wait_until 30 run_state_is "$SHORT" finished
# Both histories are kept until --history-max deletes them, 6 s after each
# run's end: the first ended about 2.5 s ago.
code=$(post "$WORK/short.json")
log "a third run, with two histories kept: $code $(cat "$WORK/answer.json")"
check "two kept histories: 429 naming the kept runs quota" \
    sh -c "[ $code = 429 ] && jq -e '.error | test(\"keeps the history of 2 runs\")' '$WORK/answer.json' >/dev/null"
check "once retention deleted them, a run fits again" \
    wait_until 20 sh -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' -X POST --data-binary @'$WORK/short.json' '$API/api/v1/runs')\" = 201 ]"
finish
