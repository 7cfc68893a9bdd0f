#!/usr/bin/env bash
# The worker's outbox bound (--outbox-max-kb 1): one master, one worker, a
# closed-model run (60 s at most: it is stopped once step 2 is seen through).
# 1. The master is frozen (SIGSTOP) for 6 s: batches pile up on the wire and
#    the outbox drops their frames, but they reach the master once it resumes:
#    nothing is counted lost.
# 2. The master is killed (-9) and restarted once drops began: batches queued while
#    no master is reachable overflow the outbox and the oldest are dropped. The
#    run reports lost_batches and lost_requests, and what the master counted
#    plus what was lost equals the target's own count exactly (a stopped run ends
#    as one at its duration does: Stop, then every final batch).
# (A batch committed in the instant between the kill and its ack would count
# twice; the window is a commit's latency out of a 1 s interval.)
source "$(dirname "$0")/lib.sh"

# Whatever happens, nothing stays stopped.
STOPPED=""
resume_all() { [ -n "$STOPPED" ] && kill -CONT $STOPPED 2>/dev/null || true; }
trap 'rc=$?; resume_all; (exit $rc); cleanup' EXIT

start_target
# Heartbeats every 3 s: a 6 s freeze must not make the master drop the worker.
start_master master --worker-heartbeat-ms 3000
start_worker w1 --outbox-max-kb 1
check "the worker connects" wait_until 15 workers_connected 1

cat >"$WORK/scenario.json" <<JSON
{"name": "outbox", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "60s",
 "users": 5, "spawn_rate": 100, "think_time_ms": 20, "tasks": [{"path": "/"}]}
JSON
id=$(submit_run "$WORK/scenario.json")
check "run created" [ -n "$id" -a "$id" != null ]
wait_until 10 run_state_is "$id" running
sleep 2

# 1. Frozen master: the real process, not the timeout(1) wrapper.
child=$(pgrep -P "$PID_master" | head -1)
STOPPED=$child
kill -STOP "$child"
log "master frozen"
sleep 6
kill -CONT "$child"
STOPPED=""
log "master resumed"
lost_now() { curl -sf --max-time 2 "$API/api/v1/runs/$id" | jq '.totals.lost_requests // 0'; }
sleep 2
check "a freeze loses nothing (batches on the wire were delivered)" [ "$(lost_now)" = 0 ]
check "the worker did not report a loss" \
    bash -c "! grep -q 'outbox full' '$WORK/w1.log'"

# 2. No master at all: the outbox overflows.
stop_proc "$PID_master" KILL
log "master killed"
check "the worker drops the oldest batches" wait_until 30 grep -q 'outbox full: dropping the oldest' "$WORK/w1.log"
sleep 2
# Nothing is frozen after the restart: the default heartbeat (1 s), which also
# shortens the restarted leader's grace for the run's workers to come back
# (two heartbeats + 5 s), the earliest a stop of the adopted run can end.
start_master master
check "the worker reconnects" wait_until 20 workers_connected 1
check "the burst of drops is logged with its counts" wait_until 10 \
    grep -qE 'lost to outbox overflow.*batches=[1-9][0-9]* requests=[1-9]' "$WORK/w1.log"
stop_code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST "$API/api/v1/runs/$id/stop" || true)
check "the run is still running when stopped (202)" [ "$stop_code" = 202 ]
check "the run ends (aborted, as stopped)" wait_until 60 run_state_is "$id" aborted

served=$(target_requests)
balanced() {
    local v
    v=$(curl -sf --max-time 2 "$API/api/v1/runs/$id") || return 1
    [ "$(echo "$v" | jq '.totals.requests + .totals.lost_requests')" = "$(target_requests)" ]
}
wait_until 10 balanced || true
served=$(target_requests)
view=$(curl -sf "$API/api/v1/runs/$id")
counted=$(echo "$view" | jq .totals.requests)
lost_b=$(echo "$view" | jq '.totals.lost_batches // 0')
lost_r=$(echo "$view" | jq '.totals.lost_requests // 0')
log "master counts $counted, lost $lost_r in $lost_b batches, target served $served"
check "lost_batches > 0" [ "$lost_b" -gt 0 ]
check "lost_requests > 0" [ "$lost_r" -gt 0 ]
check "counted + lost equals the target's count exactly" [ $((counted + lost_r)) = "$served" ]
finish
