#!/usr/bin/env bash
# Every error kind the worker classifies, provoked on loopback and counted by
# `loadworker --local --json`: connect_refused, connect_timeout, reset,
# timeout, parse (lc_misbehave), status, expect (lc_target); and 3xx reported
# as their status, never followed. `tls` is covered by the TLS test.
source "$(dirname "$0")/lib.sh"

# misbehave NAME MODE: starts lc_misbehave; sets MB_PORT.
misbehave() {
    start "mb-$1" timeout 120 "$LC_BIN/lc_misbehave" --mode "$2" --port-file "$WORK/mb-$1.port" \
        --timeout 110
    wait_until 10 test -s "$WORK/mb-$1.port" || { log "lc_misbehave $2 did not start"; return 1; }
    MB_PORT=$(cat "$WORK/mb-$1.port")
}

# run_local NAME TARGET_URL EXTRA_FIELDS TASK_JSON: a 1 s run with 3 users
# (a 10 ms think time keeps it to a few hundred connections; the slowest kinds,
# 300 ms timeouts, still make ~3 requests a user); the report goes to
# $WORK/NAME.report.json, stderr to $WORK/NAME-worker.log.
run_local() {
    cat >"$WORK/$1.json" <<JSON
{"name": "$1", "target": "$2", "duration": "1s", "users": 3, "spawn_rate": 100,
 "think_time_ms": 10, $3 "tasks": [$4]}
JSON
    timeout 60 "$LC_BIN/loadworker" --local "$WORK/$1.json" --threads 1 --json \
        --log-level warn >"$WORK/$1.report.json" 2>"$WORK/$1-worker.log"
}

report() { jq -c "$2" "$WORK/$1.report.json"; }
jq_ok() { jq -e "$2" "$WORK/$1.report.json" >/dev/null; }

# only_kind NAME KIND: requests were made, every one failed, all as KIND.
only_kind() {
    jq -e --arg k "$2" '.totals.requests > 0 and .totals.failures == .totals.requests
        and ([.errors[] | select(.kind == $k) | .count] | add) == .totals.failures' \
        "$WORK/$1.report.json" >/dev/null
}

expect_kind() { # NAME KIND TARGET_URL EXTRA_FIELDS TASK_JSON
    local name=$1 kind=$2
    shift 2
    if ! run_local "$name" "$@"; then
        check "$name: loadworker --local exits 0" false
        return
    fi
    log "$name: totals $(report "$name" '.totals | {requests, failures}') errors $(report "$name" '.errors')"
    check "$name: every request counted as $kind" only_kind "$name" "$kind"
}

# connect_refused: a loopback port nobody listens on.
expect_kind refused connect_refused "http://127.0.0.1:$(free_port)" "" '{"path": "/"}'

# connect_timeout: a listener whose accept queue is full drops our SYNs.
misbehave blackhole blackhole
expect_kind blackhole connect_timeout "http://127.0.0.1:$MB_PORT" \
    '"connect_timeout_ms": 300,' '{"path": "/"}'

# reset: the request is read, then the connection is closed with an RST.
misbehave reset reset
expect_kind reset reset "http://127.0.0.1:$MB_PORT" "" '{"path": "/"}'

# timeout: the request is read and never answered.
misbehave hang hang
expect_kind hang timeout "http://127.0.0.1:$MB_PORT" '"request_timeout_ms": 300,' '{"path": "/"}'

# parse: the answer is not HTTP.
misbehave garbage garbage
expect_kind garbage parse "http://127.0.0.1:$MB_PORT" "" '{"path": "/"}'

# status and expect, from lc_target.
start_target
T="http://127.0.0.1:$TARGET_PORT"
expect_kind status status "$T" "" '{"path": "/?status=503"}'
expect_kind expect-list status "$T" "" '{"path": "/", "expect": {"status": [201]}}'
expect_kind expect expect "$T" "" '{"path": "/", "expect": {"body_contains": "not in the body"}}'
run_local expect-ok "$T" "" '{"path": "/", "expect": {"status": [200], "body_contains": "x"}}'
check "expect that holds: no failures" \
    jq_ok expect-ok '.totals.requests > 0 and .totals.failures == 0'

# 3xx: a success when no status list is given, reported as its status (an
# expect list of [302] passes, [200] fails as status), and never followed.
run_local r302 "$T" "" '{"path": "/status/302"}'
check "302 without an expect list counts as a success" \
    jq_ok r302 '.totals.requests > 0 and .totals.failures == 0'
run_local r302-listed "$T" "" '{"path": "/status/302", "expect": {"status": [302]}}'
check "302 is reported as 302: expect [302] passes" \
    jq_ok r302-listed '.totals.requests > 0 and .totals.failures == 0'
expect_kind r302-as-200 status "$T" "" '{"path": "/status/302", "expect": {"status": [200]}}'
served=$(target_requests '.by_path["/status/302"] // 0')
asked=$(jq -s 'map(.totals.requests) | add' "$WORK"/r302*.report.json)
check "the target served exactly the 302 requests made ($asked = $served)" [ "$asked" = "$served" ]
misbehave redirect redirect
run_local follow "http://127.0.0.1:$MB_PORT" "" '{"path": "/start"}'
check "a 302 with Location counts as a success" \
    jq_ok follow '.totals.requests > 0 and .totals.failures == 0'
check "Location is never followed (no request for /followed)" \
    bash -c "! grep -q 'request /followed' '$WORK/mb-redirect.log'"
check "every request the redirector saw was /start" \
    [ "$(grep -c 'request /start' "$WORK/mb-redirect.log")" = "$(jq .totals.requests "$WORK/follow.report.json")" ]

finish
