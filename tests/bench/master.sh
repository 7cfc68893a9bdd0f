#!/usr/bin/env bash
# master.sh — the master under many workers (issue 13, "1,000 workers"): a
# 3-master quorum on loopback, lc_swarm with WORKERS synthetic workers (one
# connection each, the real protocol, no HTTP load), one run of ENDPOINTS
# tasks and 10 users per worker for DURATION seconds, one StatsBatch per
# worker and second. Measures, over the steady-state window of the run:
# leader and follower CPU (% of one core, from /proc/<pid>/stat utime+stime),
# master RSS, the swarm's batch → ack latency, and whether the run's totals
# equal what the swarm reported. Prints our figures beside the goals of
# issue 13. Never fails on speed: it fails only when the totals are not
# exact, the run did not finish, or a process crashed.
#   env: WORKERS (1000), ENDPOINTS (20), DURATION seconds (60),
#        USERS_PER_WORKER (10), RPS_PER_USER (10),
#        READERS (4): clients reading the run's reports, the run list and
#        /metrics from the leader without pause for DURATION/6 s after the CPU
#        window, /healthz, loop and heartbeats sampled again (issue 13: "plus
#        four clients reading reports and /metrics"); 0: none,
#        PERF=1: also sample the three masters with perf (199 Hz) for the
#        first PERF_S (10) seconds of the run and print their hottest functions
source "$LC_SRC/tests/integration/lib.sh"

WORKERS=${WORKERS:-1000}
ENDPOINTS=${ENDPOINTS:-20}
DURATION=${DURATION:-60}
USERS_PER_WORKER=${USERS_PER_WORKER:-10}
RPS_PER_USER=${RPS_PER_USER:-10}
READERS=${READERS:-4}
USERS=$((WORKERS * USERS_PER_WORKER))
# Steady state: from WARM s after the run started, for WINDOW s.
WARM=$((DURATION / 4))
WINDOW=$((DURATION / 2))
JOIN_LIMIT=$((60 + WORKERS / 10))
SWARM_DURATION=$((JOIN_LIMIT + DURATION + 40)) # its local stop: after the run's end
CLK_TCK=$(getconf CLK_TCK)
PROBLEMS=()
problem() { PROBLEMS+=("$*"); log "PROBLEM: $*"; }

# One descriptor per worker connection, on both sides (the masters raise
# their own soft limit to the hard one).
ulimit -n "$(ulimit -Hn)"
if [ "$(ulimit -n)" -lt $((WORKERS + 512)) ]; then
    echo "bench-master: the open-file limit $(ulimit -n) is below WORKERS + 512 = $((WORKERS + 512))"
    exit 1
fi

head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$WORK/join.secret"
start_cluster 3 --join-secret-file "$WORK/join.secret"
LEADER=$(leader_id)
API=$(api_of "$LEADER")
# The loadmaster processes themselves (start runs them under timeout(1)).
master_pid() { local p; p=$(eval echo "\$PID_master_$1"); pgrep -P "$p" loadmaster || echo "$p"; }
declare -A MPID
for k in 1 2 3; do MPID[$k]=$(master_pid "$k"); done
log "3 masters, leader $LEADER (pid ${MPID[$LEADER]}); $WORKERS workers, $ENDPOINTS endpoints, $USERS users, ${DURATION}s"

"$LC_BIN/lc_swarm" --connect "$JOIN" --workers "$WORKERS" --endpoints "$ENDPOINTS" \
    --secret-file "$WORK/join.secret" --capacity $((2 * USERS_PER_WORKER)) \
    --rps-per-user "$RPS_PER_USER" --duration "$SWARM_DURATION" --id-prefix bench- \
    >"$WORK/swarm.out" 2>"$WORK/swarm.log" &
SWARM_PID=$!
PIDS+=("$SWARM_PID")

join_start=$SECONDS
if ! wait_until "$JOIN_LIMIT" workers_connected "$WORKERS"; then
    n=$(curl -sf --max-time 5 "$API/api/v1/workers" | jq '[.workers[] | select(.connected)] | length' || echo "?")
    problem "only $n of $WORKERS workers connected within ${JOIN_LIMIT}s"
fi
JOIN_S=$((SECONDS - join_start))

tasks=$(for i in $(seq 1 "$ENDPOINTS"); do
    m=GET; [ $((i % 4)) = 0 ] && m=POST
    printf '{"name": "ep%02d", "method": "%s", "path": "/ep%02d"}\n' "$i" "$m" "$i"
done | jq -s -c .)
cat >"$WORK/scenario.json" <<JSON
{"name": "bench-master", "target": "http://127.0.0.1:9", "duration": "${DURATION}s",
 "users": $USERS, "spawn_rate": $USERS, "request_timeout_ms": 2000, "tasks": $tasks}
JSON
RUN=$(submit_run "$WORK/scenario.json")
[ -n "$RUN" ] && [ "$RUN" != null ] || { problem "the run was not created"; exit 1; }
wait_until 30 run_state_is "$RUN" running || problem "run $RUN did not start"
log "run $RUN running"

# CPU seconds (utime+stime) of a pid, in ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
rss_mib() { awk '/^VmRSS:/ { printf "%.0f", $2 / 1024 }' "/proc/$1/status" 2>/dev/null || echo 0; }
hwm_mib() { awk '/^VmHWM:/ { printf "%.0f", $2 / 1024 }' "/proc/$1/status" 2>/dev/null || echo 0; }
now_s() { date +%s.%N; }

# The CPU of each master every 5 s of the run (a timeline beside the window).
( while :; do echo "$(date +%s.%N) $(cpu_ticks "${MPID[1]}") $(cpu_ticks "${MPID[2]}") $(cpu_ticks "${MPID[3]}")"; sleep 5; done ) \
    >"$WORK/cpu.timeline" 2>/dev/null &
SAMPLER_PID=$!
PIDS+=("$SAMPLER_PID")
PERF_PID=""
if [ "${PERF:-0}" = 1 ] && command -v perf >/dev/null; then
    perf record -F 199 -g -p "${MPID[1]},${MPID[2]},${MPID[3]}" -o "$WORK/masters.perf" \
        -- sleep "${PERF_S:-10}" >"$WORK/perf.log" 2>&1 &
    PERF_PID=$!
fi

sleep "$WARM"
[ -n "$PERF_PID" ] && { wait "$PERF_PID" || true; }
declare -A T0 T1
for k in 1 2 3; do T0[$k]=$(cpu_ticks "${MPID[$k]}"); done
S0=$(cpu_ticks "$SWARM_PID")
W0=$(now_s)
# sample_window S: for S seconds, once a second: /healthz of the leader, timed;
# the longest turn of its loop in the last whole second (its lag probe's worst
# lateness); and the worst heartbeat delay of that second (how much later than
# its connection's fastest one a heartbeat arrived: queueing in the swarm, the
# network and the leader's loop). Sets HZ_MAX (s), HZ_ALL (ms), LAG_MAX and
# HB_MAX (ms).
sample_window() {
    local end=$((SECONDS + $1)) t l hb
    HZ_MAX=0 LAG_MAX=0 HB_MAX=0 HZ_ALL=()
    while [ $SECONDS -lt $end ]; do
        t=$(curl -s -o /dev/null -w '%{time_total}' --max-time 5 "$API/healthz" || echo 5)
        HZ_MAX=$(echo "if ($t > $HZ_MAX) $t else $HZ_MAX" | bc -l)
        HZ_ALL+=("$(printf '%.0f' "$(echo "$t * 1000" | bc -l)")")
        read -r l hb < <(curl -sf --max-time 5 "$API/api/v1/cluster" |
            jq -r '"\(.loop_lag.last_second_ms // 0) \(.heartbeat_delay.last_second_ms // 0)"' || echo "0 0")
        LAG_MAX=$(echo "if (${l:-0} > $LAG_MAX) ${l:-0} else $LAG_MAX" | bc -l)
        HB_MAX=$(echo "if (${hb:-0} > $HB_MAX) ${hb:-0} else $HB_MAX" | bc -l)
        sleep 1
    done
}
# window_line: what sample_window found, in words.
window_line() {
    echo "slowest leader /healthz $(printf '%.0f' "$(echo "$HZ_MAX * 1000" | bc -l)") ms (all, ms: ${HZ_ALL[*]}); the leader's longest loop turn (lag probe, sampled each second) $(printf '%.1f' "$LAG_MAX") ms; worst heartbeat delay $(printf '%.0f' "$HB_MAX") ms"
}
sample_window "$WINDOW"
CPU_WINDOW=$(window_line)
W1=$(now_s)
for k in 1 2 3; do T1[$k]=$(cpu_ticks "${MPID[$k]}"); done
S1=$(cpu_ticks "$SWARM_PID")
WALL=$(echo "$W1 - $W0" | bc -l)
pct() { echo "($2 - $1) / $CLK_TCK / $WALL * 100" | bc -l; }
declare -A CPU RSS HWM
for k in 1 2 3; do
    CPU[$k]=$(pct "${T0[$k]}" "${T1[$k]}")
    RSS[$k]=$(rss_mib "${MPID[$k]}")
done
SWARM_CPU=$(pct "$S0" "$S1")
LEADER_AFTER=$(leader_id || echo none)

# Then READERS clients read the run's reports, the run, the list and /metrics
# without pause for READ_S seconds, while the run goes on, and the same samples
# are taken (the CPU figures above are the ingest's alone).
READ_S=$((DURATION / 6))
# reader K: reads until READ_END; its reads and those not answered 200.
reader() {
    local n=0 bad=0 code path
    while [ $SECONDS -lt "$READ_END" ]; do
        for path in "api/v1/runs/$RUN/report.json" "api/v1/runs/$RUN/report.csv" \
            "api/v1/runs/$RUN/history.csv" "api/v1/runs/$RUN" "api/v1/runs" "metrics"; do
            code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 30 "$API/$path")
            n=$((n + 1)); [ "$code" = 200 ] || bad=$((bad + 1))
        done
    done
    echo "$n $bad" >"$WORK/reader-$1.count"
}
READ_WINDOW="none (READERS=0)"
if [ "$READERS" -gt 0 ]; then
    READ_END=$((SECONDS + READ_S))
    READER_PIDS=()
    for ((k = 1; k <= READERS; k++)); do reader "$k" & READER_PIDS+=($!); PIDS+=($!); done
    sample_window "$READ_S"
    for p in "${READER_PIDS[@]}"; do wait "$p" || true; done
    READS=$(cat "$WORK"/reader-*.count 2>/dev/null | awk '{ n += $1; b += $2 } END { printf "%d reads, %d not 200", n, b }')
    READ_WINDOW="$(window_line); $READS"
fi

# Any master answers for the run (a leader change may have moved it).
run_over() {
    local k st
    for k in 1 2 3; do
        st=$(curl -sf --max-time 2 "$(api_of "$k")/api/v1/runs/$RUN" | jq -r .state) || continue
        case $st in finished|failed|aborted) FINAL_STATE=$st; return 0 ;; esac
    done
    return 1
}
FINAL_STATE=""
wait_until $((DURATION + 90)) run_over || problem "run $RUN did not end within $((DURATION + 90))s"
[ -z "$FINAL_STATE" ] || [ "$FINAL_STATE" = finished ] || problem "run $RUN ended $FINAL_STATE"
kill "$SAMPLER_PID" 2>/dev/null || true
# The swarm exits once its final batches are acknowledged (a run no Stop
# reached ends by itself 30 s past its duration); SIGTERM makes it print
# what it has.
deadline=$((SECONDS + 60))
while kill -0 "$SWARM_PID" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
if kill -0 "$SWARM_PID" 2>/dev/null; then
    problem "lc_swarm did not finish within 60 s of the run's end"
    kill -TERM "$SWARM_PID" 2>/dev/null || true
    sleep 1
fi
SWARM_RC=0
wait "$SWARM_PID" 2>/dev/null || SWARM_RC=$?
[ "$SWARM_RC" = 0 ] || problem "lc_swarm exited with status $SWARM_RC"
declare -A LAG_EVER
for k in 1 2 3; do
    kill -0 "${MPID[$k]}" 2>/dev/null || problem "master $k (pid ${MPID[$k]}) is gone"
    HWM[$k]=$(hwm_mib "${MPID[$k]}")
    # the longest loop turn since the master started: the joins, the run's start and end included
    LAG_EVER[$k]=$(curl -sf --max-time 5 "$(api_of "$k")/api/v1/cluster" | jq -r '.loop_lag.max_ms // "?"' || echo "?")
done
HB_EVER=$(curl -sf --max-time 5 "$(api_of "$LEADER")/api/v1/cluster" | jq -r '.heartbeat_delay.max_ms // "?"' || echo "?")

SW=$(tail -1 "$WORK/swarm.out")
jq -e . >/dev/null 2>&1 <<<"$SW" || { problem "lc_swarm printed no summary"; SW='{}'; }
API=$(api_of "$(leader_id || echo "$LEADER")")
RUN_JSON=$(curl -sf "$API/api/v1/runs/$RUN" || echo '{}')
RUN_REQ=$(jq -r '.totals.requests // "none"' <<<"$RUN_JSON")
RUN_FAIL=$(jq -r '.totals.failures // "none"' <<<"$RUN_JSON")
SW_REQ=$(jq -r --arg r "$RUN" '.runs[$r].requests // "none"' <<<"$SW")
SW_ACKED=$(jq -r --arg r "$RUN" '.runs[$r].acked_requests // "none"' <<<"$SW")
SW_FAIL=$(jq -r --arg r "$RUN" '.runs[$r].failures // "none"' <<<"$SW")
UNACKED=$(jq -r '.unacked_at_exit // "none"' <<<"$SW")
if [ "$RUN_REQ" = "$SW_REQ" ] && [ "$RUN_REQ" = "$SW_ACKED" ] && [ "$RUN_FAIL" = "$SW_FAIL" ] && [ "$UNACKED" = 0 ]; then
    TOTALS="exact: run $RUN requests=$RUN_REQ failures=$RUN_FAIL = swarm reported (all acked)"
else
    TOTALS="NOT EXACT: run requests=$RUN_REQ failures=$RUN_FAIL; swarm reported=$SW_REQ acked=$SW_ACKED failures=$SW_FAIL unacked_at_exit=$UNACKED"
    problem "totals are not exact"
fi
LOST=$(grep -c 'msg="worker lost"' "$WORK/master-$LEADER.log" || true)
REFUSED=$(grep -c 'refused' "$WORK/master-$LEADER.log" || true)
ACCEPT_REFUSED=$( { grep -c 'refused at accept' "$WORK"/master-*.log || true; } | awk -F: '{ n += $2 } END { print n + 0 }')

ROLE_CHANGES=$( { grep -h 'msg="role changed" role=leader' "$WORK"/master-*.log || true; } | wc -l)

FOLLOWERS=()
for k in 1 2 3; do [ "$k" != "$LEADER" ] && FOLLOWERS+=("$k"); done
f1=${FOLLOWERS[0]} f2=${FOLLOWERS[1]}
LEADER_PCT=$(printf '%.1f' "${CPU[$LEADER]}")
PER_WORKER=$(echo "${CPU[$LEADER]} / $WORKERS" | bc -l)
LOCUST_PER_WORKER=$(echo "100 / 1300" | bc -l)
if command -v locust >/dev/null; then locust_state="python3-locust is installed; not measured here (too heavy for this 2-core machine)"
else locust_state="python3-locust is not installed (make -f Makefile.ci bench-deps); not measured here"; fi

echo
echo "==== bench-master: $WORKERS workers x $ENDPOINTS endpoints x 1 batch/s into one leader of 3 (figures, not a pass/fail on speed) ===="
echo "window: ${WINDOW}s of steady state, ${WARM}s after run $RUN started; $USERS users; all $WORKERS joined in ${JOIN_S}s (swarm: $(jq -r '.join_s' <<<"$SW")s)"
printf '%-18s %-58s %s\n' "figure" "ours" "goal (issue 13)"
printf '%-18s %-58s %s\n' "leader CPU" "$(printf '%.1f %% of a core (master %s)' "${CPU[$LEADER]}" "$LEADER")" "<= 25 %"
printf '%-18s %-58s %s\n' "followers CPU" "$(printf '%.1f %% / %.1f %% of a core (masters %s, %s)' "${CPU[$f1]}" "${CPU[$f2]}" "$f1" "$f2")" "<= 15 %"
printf '%-18s %-58s %s\n' "ack latency" "$(jq -r '.ack_ms | "p99 \(.p99) ms (p50 \(.p50), max \(.max), n=\(.n))"' <<<"$SW")" "p99 <= 1000 ms"
printf '%-18s %-58s %s\n' "totals" "$TOTALS" "exact"
printf '%-18s %-58s %s\n' "master RSS" "leader ${RSS[$LEADER]} MiB (peak ${HWM[$LEADER]}), followers ${RSS[$f1]} / ${RSS[$f2]} MiB" "(<= 512 MiB: history goal)"
printf '%-18s %-58s %s\n' "per worker" "$(printf 'leader %.4f %% of a core per worker' "$PER_WORKER")" "$(printf 'Locust ~%.3f %%/worker (pegged at ~1,300 workers, locust#3142)' "$LOCUST_PER_WORKER")"
echo "context: Locust's master is pegged at about 1,300 workers (locust#3142): a published anchor, $locust_state."
echo "context: in the window: $CPU_WINDOW (since the leader started: $HB_EVER ms)"
echo "context: then ${READ_S}s with $READERS readers of report.json, report.csv, history.csv, the run, the run list and /metrics without pause: $READ_WINDOW"
echo "context: leader before/after the window $LEADER/$LEADER_AFTER; 'worker lost' lines on the leader: $LOST; refusal lines: $REFUSED; connections refused at accept (log lines): $ACCEPT_REFUSED"
echo "context: longest loop turn of each master over the whole bench (the joins, the run's start and end; lag probe): $(for k in 1 2 3; do printf 'm%s %s ms  ' "$k" "${LAG_EVER[$k]}"; done)"
echo "context: leader elections in the whole bench (the first included): $ROLE_CHANGES$([ "$ROLE_CHANGES" -gt 1 ] && echo " -- the leader changed during the run: the window is no steady state")"
echo "context: machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end; other processes above 20 % CPU: $(ps -eo pcpu=,comm= --sort=-pcpu | awk '$1 > 20 && $2 != "loadmaster" && $2 != "lc_swarm" { printf "%s(%s%%) ", $2, $1 }')"
echo "context: lc_swarm $(printf '%.1f' "$SWARM_CPU") % of a core; $(jq -r '"batches \(.batches_sent) (written \(.batches_written), acked \(.acked), replayed \(.replayed)), \(.avg_batch_bytes) bytes and \(.avg_hist_buckets) histogram buckets per endpoint on average; redirects \(.redirects), disconnects \(.disconnects), join refused \(.join_refused)"' <<<"$SW")"
echo "swarm: $SW"
echo "CPU timeline (% of a core per 5 s from the run's start; leader at the start: $LEADER):"
awk -v tck="$CLK_TCK" 'NR > 1 { dt = $1 - t; printf "  +%3.0fs  m1 %5.1f  m2 %5.1f  m3 %5.1f\n", $1 - t0, ($2 - a) / tck / dt * 100, ($3 - b) / tck / dt * 100, ($4 - c) / tck / dt * 100 }
    NR == 1 { t0 = $1 } { t = $1; a = $2; b = $3; c = $4 }' "$WORK/cpu.timeline"
if [ -s "$WORK/masters.perf" ]; then
    echo "masters' profile (perf at 199 Hz, first ${PERF_S:-10}s of the run, all three masters; self time, top 25):"
    { perf report -i "$WORK/masters.perf" --stdio --no-children --sort symbol -g none 2>/dev/null |
        grep -E '^ +[0-9.]+%' | head -25; } || true
    echo "masters' profile (inclusive time, top 40):"
    { perf report -i "$WORK/masters.perf" --stdio --children --sort symbol -g none 2>/dev/null |
        grep -E '^ +[0-9.]+%' | head -40; } || true
fi
if [ ${#PROBLEMS[@]} -gt 0 ]; then
    KEEP=${BENCH_LOGS:-/tmp/bench-master-logs.$$}
    mkdir -p "$KEEP" && cp "$WORK"/*.log "$WORK/swarm.out" "$WORK/scenario.json" "$KEEP/" 2>/dev/null || true
    echo "bench-master: FAILED: ${PROBLEMS[*]} (logs kept in $KEEP)"
    FAILED=1
    exit 1
fi
echo "bench-master: done (totals exact, nothing crashed)"
