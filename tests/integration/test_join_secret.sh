#!/usr/bin/env bash
# Joining with the cluster secret: the master challenges every connection
# with a nonce; a worker with the secret answers HMAC-SHA256(secret, nonce)
# and joins. A wrong secret, no secret, a proof replayed from an earlier
# challenge, and garbage are refused (logged on both sides) while a
# legitimate worker keeps running its load (a run stopped once they are seen
# through: it ends as one at its duration does, Stop, then the final batch).
source "$(dirname "$0")/lib.sh"

head -c 48 /dev/urandom | base64 >"$WORK/secret"
head -c 48 /dev/urandom | base64 >"$WORK/wrong"
printf 'short' >"$WORK/short"

start_target
start_master master --join-secret-file "$WORK/secret"
start_worker good --join-secret-file "$WORK/secret"
check "a worker with the secret joins" wait_until 15 workers_connected 1

cat >"$WORK/scenario.json" <<JSON
{"name": "joined", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "60s",
 "users": 4, "think_time_ms": 20, "tasks": [{"path": "/"}]}
JSON
id=$(submit_run "$WORK/scenario.json")
wait_until 10 run_state_is "$id" running

start_worker wrong --join-secret-file "$WORK/wrong"
start_worker none
check "wrong secret: the worker logs the refusal" \
    wait_until 10 grep -q 'join refused.*does not match' "$WORK/wrong.log"
check "no secret: the worker logs the refusal" \
    wait_until 10 grep -q 'join refused.*requires a join secret' "$WORK/none.log"
check "the master logged both refusals" \
    sh -c "grep -q 'reason=\"join proof does not match' '$WORK/master.log' && grep -q 'reason=\"this cluster requires a join secret' '$WORK/master.log'"

probe() { timeout 10 "$LC_BIN/lc_join_probe" --connect "$WORKER_ADDR" "$@"; }
check "a proof replayed from an earlier challenge is refused" \
    sh -c "$(declare -f probe); LC_BIN='$LC_BIN' WORKER_ADDR='$WORKER_ADDR' probe --mode replay --secret-file '$WORK/secret' | grep -q '^refused: join proof does not match'"
check "a Hello without proof is refused" \
    sh -c "$(declare -f probe); LC_BIN='$LC_BIN' WORKER_ADDR='$WORKER_ADDR' probe --mode none | grep -q '^refused: this cluster requires a join secret'"
check "garbage gets the connection closed" \
    sh -c "$(declare -f probe); LC_BIN='$LC_BIN' WORKER_ADDR='$WORKER_ADDR' probe --mode garbage | grep -qx closed"
check "a secret shorter than 16 bytes is refused at start" \
    sh -c "! '$LC_BIN/loadworker' --join '$WORKER_ADDR' --join-secret-file '$WORK/short' 2>'$WORK/short.err' && grep -q 'join secret must be' '$WORK/short.err'"

check "only the legitimate worker is connected" workers_connected 1
# The refused workers retry (backoff up to 1 s): the load runs on while each is
# refused 6 times in all (~2.5 s), then the run (60 s at most) is stopped.
refused_times() { [ "$(grep -c "$2" "$WORK/$1.log")" -ge "$3" ]; }
retried() { refused_times wrong "join refused.*does not match" 6 && refused_times none "join refused.*requires a join secret" 6; }
wait_until 20 retried || log "the refused workers were not refused 6 times each"
stop_code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST "$API/api/v1/runs/$id/stop" || true)
check "the legitimate worker's run is still running when stopped (202)" [ "$stop_code" = 202 ]
check "the legitimate worker's run ends (aborted, as stopped)" wait_until 30 run_state_is "$id" aborted
check "its requests equal the target's count" \
    [ "$(curl -sf "$API/api/v1/runs/$id" | jq .totals.requests)" = "$(target_requests)" ]
check "the master is still healthy" http_ok "$API/healthz"
finish
