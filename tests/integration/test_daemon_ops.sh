#!/usr/bin/env bash
# What init systems and orchestrators rely on: sd_notify READY=1 once a master
# knows a leader and once a worker has joined, STOPPING=1 on shutdown; /readyz
# on masters; the worker's --health-addr (/healthz, /metrics); a leader that
# hands leadership over on SIGTERM; --log-file reopened on SIGHUP.
source "$(dirname "$0")/lib.sh"

# notify_listener NAME: records every datagram sent to $WORK/NAME.sock into
# $WORK/NAME.msgs, one message per line ("\n" inside a message shown as "|").
notify_listener() {
    start "$1-listener" timeout 120 /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a", buffering=1) as out:
    while True:
        out.write(s.recv(4096).decode().replace("\n", "|") + "\n")
' "$WORK/$1.sock" "$WORK/$1.msgs"
    wait_until 5 test -S "$WORK/$1.sock"
}

notify_listener masters
notify_listener worker
: >"$WORK/masters.msgs" >"$WORK/worker.msgs"

NOTIFY_SOCKET=$WORK/masters.sock start_cluster 3
check "every master told systemd READY=1 with the leader it knows" \
    wait_until 10 sh -c "[ \$(grep -c '^READY=1|STATUS=leader [1-3], term' '$WORK/masters.msgs') -eq 3 ]"
for k in 1 2 3; do
    check "master $k: /readyz answers 200 ready without a token" \
        sh -c "curl -sf -H 'Authorization:' '$(api_of $k)/readyz' | jq -e '.ready == true and .leader > 0' >/dev/null"
done

start_target
HEALTH_PORT=$(free_port)
NOTIFY_SOCKET=$WORK/worker.sock join_workers 1 --health-addr "127.0.0.1:$HEALTH_PORT" \
    --log-file "$WORK/worker-file.log"
API=$(api_of "$(leader_id)")
check "the worker told systemd READY=1 once it joined" \
    wait_until 10 grep -q '^READY=1|STATUS=joined ' "$WORK/worker.msgs"
check "worker /healthz says it joined" \
    wait_until 5 sh -c "curl -sf 'http://127.0.0.1:$HEALTH_PORT/healthz' | jq -e '.joined == true' >/dev/null"
check "worker: an unknown path is a 404" \
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HEALTH_PORT/nope")" = 404 ]

cat >"$WORK/scenario.json" <<JSON
{"name": "ops", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "60s",
 "users": 7, "think_time_ms": 50, "tasks": [{"path": "/"}]}
JSON
id=$(submit_run "$WORK/scenario.json")
worker_metric() { curl -sf "http://127.0.0.1:$HEALTH_PORT/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }
check "worker /metrics shows the run's 7 users" wait_until 10 sh -c "[ \"\$($(declare -f worker_metric); HEALTH_PORT=$HEALTH_PORT worker_metric loadworker_users)\" = 7 ]"
check "worker /metrics has every documented series with HELP and TYPE" \
    sh -c "curl -sf 'http://127.0.0.1:$HEALTH_PORT/metrics' >'$WORK/wm.txt' && for m in up joined cpu_percent rss_bytes capacity_users users connections runs outbox_bytes engine_loop_lag_seconds; do grep -q \"^# TYPE loadworker_\$m gauge\" '$WORK/wm.txt' && grep -q \"^loadworker_\$m \" '$WORK/wm.txt' || exit 1; done"

# SIGHUP after a rotation: the worker writes to a new file at the old path.
mv "$WORK/worker-file.log" "$WORK/worker-file.log.1"
kill -HUP "$(pgrep -P "$PID_worker_1" loadworker)"
check "SIGHUP reopens --log-file at its path" \
    wait_until 5 grep -q 'log file reopened' "$WORK/worker-file.log"
check "the rotated file kept the earlier lines" grep -q 'worker started' "$WORK/worker-file.log.1"
reopened_at=$(target_requests)
# The worker goes on after the reopen: the run (60 s at most) is stopped now and
# ends as at its duration (Stop, the worker's final batch), counted exactly.
load_after_reopen() { [ "$(target_requests)" -gt "$reopened_at" ]; }
check "the worker's load goes on after the reopen" wait_until 10 load_after_reopen
stop_code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST "$API/api/v1/runs/$id/stop" || true)
check "the run is still running after the reopen (stopped: 202)" [ "$stop_code" = 202 ]
check "the run ends after the reopen (aborted, as stopped)" wait_until 20 run_state_is "$id" aborted
check "its requests equal the target's count" \
    [ "$(curl -sf "$API/api/v1/runs/$id" | jq .totals.requests)" = "$(target_requests)" ]

# SIGTERM on the leader: it hands over, so a new leader is known at once.
old=$(leader_id)
stop_proc "$(eval echo "\$PID_master_$old")" TERM
check "the old leader logged the hand-over" \
    grep -q 'leadership handed over' "$WORK/master-$old.log"
check "the old leader told systemd STOPPING=1" grep -q '^STOPPING=1' "$WORK/masters.msgs"
check "a new leader is known within 2 s of the old one exiting" wait_until 2 leader_known
check "the new leader is another node" [ "$(leader_id)" != "$old" ]

stop_proc "$PID_worker_1" TERM
check "the worker told systemd STOPPING=1" grep -q '^STOPPING=1' "$WORK/worker.msgs"
check "a log file that cannot be opened stops the master at start with the reason" \
    sh -c "! timeout 10 '$LC_BIN/loadmaster' --log-file /nonexistent/dir/m.log 2>'$WORK/lf.err' && grep -q 'log-file: open /nonexistent/dir/m.log: No such file' '$WORK/lf.err'"
finish
