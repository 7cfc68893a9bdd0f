#!/usr/bin/env bash
# demo.sh — a small local cluster (one master, two workers) against the
# built-in target: submits deploy/examples/demo.json with loadctl, waits, and
# prints the report. Every process it starts is stopped at the end.
source "$LC_SRC/tests/integration/lib.sh"

echo "== starting the target (lc_target), a master and two workers on 127.0.0.1"
start_target --latency-ms 2
start_master master
start_worker worker-1
start_worker worker-2
wait_until 15 workers_connected 2 || { echo "workers did not join"; exit 1; }
echo "== master API $API, target http://127.0.0.1:$TARGET_PORT"
echo "== the API needs a token: the master wrote the first admin token to $ADMIN_TOKEN_FILE;"
echo "   loadctl reads it from LOADCTL_TOKEN, curl needs -H \"Authorization: Bearer \$(cat …)\""
"$LC_BIN/loadctl" --master "$API" workers

sed "s|http://127.0.0.1:8080|http://127.0.0.1:$TARGET_PORT|" "$LC_SRC/deploy/examples/demo.json" \
    >"$WORK/demo.json"
echo "== loadctl run demo.json --wait"
"$LC_BIN/loadctl" --master "$API" run "$WORK/demo.json" --wait
echo "== the target itself counted $(target_requests) requests"
"$LC_BIN/loadctl" --master "$API" runs
