#!/usr/bin/env bash
# The worker's machine limits: an assignment the open-file limit cannot hold is
# refused with a clear reason (--local: exit 1; under a master: AssignRefused,
# and the run fails with that reason); --source-addrs spreads connections over
# local addresses and names a bad one.
source "$(dirname "$0")/lib.sh"

command -v prlimit >/dev/null || { log "prlimit (util-linux) is missing"; exit 1; }
start_target
T="http://127.0.0.1:$TARGET_PORT"

scenario() { # FILE USERS DURATION [EXTRA_FIELDS]
    cat >"$1" <<JSON
{"name": "limits", "target": "$T", "duration": "$3", "users": $2, "spawn_rate": 1000,
 ${4:-} "tasks": [{"path": "/"}]}
JSON
}

# --local: 1000 users under a 256-file limit cannot fit.
scenario "$WORK/big.json" 1000 2s
set +e
timeout 30 prlimit --nofile=256:256 "$LC_BIN/loadworker" --local "$WORK/big.json" --threads 1 \
    >"$WORK/big.out" 2>"$WORK/big-worker.log"
rc=$?
set -e
log "--local refusal: rc=$rc: $(cat "$WORK/big-worker.log")"
check "--local: 1000 users over a 256-file limit exits 1" [ "$rc" = 1 ]
check "--local: the message names users, connections and the limit" grep -q \
    '1000 users need 1000 connections (1 origin each) but the open-file limit allows 192; raise it with ulimit -n or LimitNOFILE' \
    "$WORK/big-worker.log"
check "--local: no request was made" [ "$(target_requests)" = 0 ]
scenario "$WORK/small.json" 100 1s
run_small() {
    timeout 30 prlimit --nofile=256:256 "$LC_BIN/loadworker" --local "$WORK/small.json" \
        --threads 1 --json --log-level warn >"$WORK/small.report.json" 2>"$WORK/small-worker.log"
}
check "--local: 100 users under the same limit run" run_small
# Each user may hold a connection per origin: 100 users of two origins need 200.
cat >"$WORK/two.json" <<JSON
{"name": "two-origins", "target": "http://127.0.0.1:$TARGET_PORT",
 "targets": {"b": "http://127.0.0.2:$TARGET_PORT"}, "duration": "1s", "users": 100,
 "journeys": [{"name": "j", "steps": [{"path": "/"}, {"origin": "b", "path": "/"}]}]}
JSON
set +e
timeout 30 prlimit --nofile=256:256 "$LC_BIN/loadworker" --local "$WORK/two.json" --threads 1 \
    >"$WORK/two.out" 2>"$WORK/two-worker.log"
rc=$?
set -e
check "--local: 100 users of two origins over the same limit exit 1" [ "$rc" = 1 ]
check "--local: the message counts a connection per origin" grep -q \
    '100 users need 200 connections (2 origins each)' "$WORK/two-worker.log"

# Under a master: the worker (file limit 256, capacity claimed 5000) refuses
# its 1000 users and the run fails with the worker's reason.
start_master master
start w1 timeout 300 prlimit --nofile=256:256 "$LC_BIN/loadworker" --join "$WORKER_ADDR" \
    --threads 1 --name w1 --data-dir "$WORK/w1-data" --capacity 5000
check "worker under prlimit connects" wait_until 15 workers_connected 1
check "worker warns that --capacity exceeds its file limit" \
    grep -q 'capacity exceeds what the open-file limit holds' "$WORK/w1.log"
# The master waits min(request_timeout, 30 s) + a grace for final batches
# even from a worker that refused, so keep the request timeout short.
scenario "$WORK/run.json" 1000 20s '"request_timeout_ms": 1000,'
id=$(curl -sf --max-time 5 -X POST --data-binary @"$WORK/run.json" "$API/api/v1/runs" | jq -r .id)
check "run created" [ -n "$id" -a "$id" != null ]
check "run fails" wait_until 30 run_state_is "$id" failed
reason=$(curl -sf --max-time 5 "$API/api/v1/runs/$id" | jq -r .reason)
log "run $id reason: $reason"
check "the run's reason carries the worker's refusal" grep -q \
    'w1 refused its share: 1000 users need 1000 connections (1 origin each) but the open-file limit allows 192' \
    <<<"$reason"
check "worker stays connected after refusing" workers_connected 1
stop_proc "$PID_w1"

# --source-addrs: both addresses carry connections to the target.
scenario "$WORK/src.json" 8 3s '"think_time_ms": 50,'
start src bash -c "exec timeout 60 '$LC_BIN/loadworker' --local '$WORK/src.json' --threads 2 \
    --json --log-level warn --source-addrs 127.0.0.2,127.0.0.3 >'$WORK/src.report.json'"
peers() { ss -Htn state established "( dport = :$TARGET_PORT )" | awk '{ print $3 }' | sed 's/:[0-9]*$//' | sort | uniq -c; }
used_both() { peers >"$WORK/peers.txt"; [ "$(awk '$1 >= 3' "$WORK/peers.txt" | wc -l)" = 2 ]; }
check "connections come from 127.0.0.2 and 127.0.0.3, 4 each" wait_until 10 used_both
log "sources: $(tr '\n' ' ' <"$WORK/peers.txt")"
check "and from nothing else" bash -c "! grep -vE ' 127\.0\.0\.[23]$' '$WORK/peers.txt'"
wait "$PID_src"
check "--source-addrs run made requests without failures" \
    jq -e '.totals.requests > 0 and .totals.failures == 0' "$WORK/src.report.json"
bad_source() { # LIST MESSAGE: exit 2 and MESSAGE on stderr
    local rc=0
    "$LC_BIN/loadworker" --local "$WORK/src.json" --source-addrs "$1" 2>"$WORK/bad-src.log" || rc=$?
    [ "$rc" = 2 ] && grep -qF -- "$2" "$WORK/bad-src.log"
}
check "--source-addrs foo is refused by name" \
    bad_source foo "--source-addrs: 'foo' is not an IPv4 or IPv6 address"
check "--source-addrs with an empty element is refused" \
    bad_source 127.0.0.2,,127.0.0.3 "--source-addrs: '' is not an IPv4 or IPv6 address"
check "--source-addrs names the bad one of several" \
    bad_source ::1,127.0.0.2,1.2.3.4.5 "--source-addrs: '1.2.3.4.5' is not an IPv4 or IPv6 address"
check "--source-addrs refuses an address this machine does not have" \
    bad_source 127.0.0.2,192.0.2.1 "--source-addrs: cannot bind 192.0.2.1: Cannot assign requested address"

finish
