#!/usr/bin/env bash
# history.sh — the master with a long history (issue 13, "1,000 run-hours at 20 endpoints"):
# for each size in RUN_HOURS, lc_history_gen builds a data directory whose Raft snapshot holds
# that many run-hours (1-hour runs through the real FSM; from 24 run-hours on, one of them is a
# 24-hour run for the report figures), then one loadmaster restores it. Measures: time from the
# process start to /readyz answering 200 (first start, and a restart on the same data dir),
# master RSS after ready and its peak (VmHWM), GET /api/v1/runs (median and max of 20),
# report.csv, history.csv, report.json and report.html of the largest run (MB/s), the slowest /healthz while four
# clients read reports and /metrics for LOAD_S seconds, and loadcluster_master_loop_lag_max_seconds
# at the end. Prints our figures beside the goals of issue 13. Never fails on speed: it fails
# only when a process crashed, a step did not answer, or an answer is wrong (runs or totals
# that are not what was generated), and when the snapshot file is too big for raft 0.15 to
# load at all (over 2 GiB - 4 KiB: about 360 run-hours at 20 endpoints; the master is then not
# started).
# With ARCHIVE=1 (the default, as loadmaster archives a run an hour after it finished) every
# generated run is archived: its seconds are in <data-dir>/archive/run-N.db and the snapshot
# holds none of them, so its size, the time to ready and the RSS no longer grow with the
# history; ARCHIVE=0 measures the old layout (everything in the snapshot).
#   env: RUN_HOURS ("10 100 1000"), ENDPOINTS (20), LOAD_S (20), READY_LIMIT seconds (3600), LONG_RUN_H (24), ARCHIVE (1),
#        HISTORY_DIR (where data dirs go; default the test's scratch dir, deleted after each
#        size), FORCE=1 (run a size even when it looks too big for this machine's memory or disk)
source "$LC_SRC/tests/integration/lib.sh"

RUN_HOURS=${RUN_HOURS:-"10 100 1000"}
ENDPOINTS=${ENDPOINTS:-20}
LOAD_S=${LOAD_S:-20}
# Entries between snapshots: small, so that the writer of under_load makes the master snapshot
# its whole history several times while it is measured.
SNAPSHOT_EVERY=${SNAPSHOT_EVERY:-64}
READY_LIMIT=${READY_LIMIT:-3600}
HISTORY_DIR=${HISTORY_DIR:-$WORK}
LONG_RUN_H=${LONG_RUN_H:-24} # the long run's hours (a smaller one tries the path at small sizes)
# What one run-hour at 20 endpoints takes, seen at 1 and 3 run-hours: an image of 8.3 MB; the
# generator needs about 2 images of memory while it takes the snapshot (sqlite3_serialize's
# copy and store_serialize's), the master a little over 2 (VmHWM) while it restores (raft's
# decompressed snapshot and the copy store_deserialize checks, then the one it restores from).
# Used only to skip what this machine cannot hold, with a margin (FORCE=1 tries anyway).
IMAGE_PER_RUN_HOUR=${IMAGE_PER_RUN_HOUR:-9000000}
GEN_IMAGES=${GEN_IMAGES:-2.5}
# raft 0.15 reads a snapshot file with one read(), which returns at most this on Linux: a larger
# snapshot (over about 360 run-hours at 20 endpoints) is written but cannot be loaded.
RAFT_READ_MAX=${RAFT_READ_MAX:-2147479552}
MASTER_IMAGES=${MASTER_IMAGES:-3}
ARCHIVE=${ARCHIVE:-1}
# Archived: an archive file per run-hour at 20 endpoints (11.2 MB seen at 4 run-hours), and
# memory that does not grow with the history.
ARCHIVE_PER_RUN_HOUR=${ARCHIVE_PER_RUN_HOUR:-11300000}
ARCHIVED_MEM=${ARCHIVED_MEM:-1000000000}
PROBLEMS=()
problem() { PROBLEMS+=("$*"); log "PROBLEM: $*"; }
mkdir -p "$HISTORY_DIR"

now_s() { date +%s.%N; }
elapsed() { echo "$(now_s) - $1" | bc -l; }
rss_mib() { awk '/^VmRSS:/ { printf "%.0f", $2 / 1024 }' "/proc/$1/status" 2>/dev/null || echo 0; }
hwm_mib() { awk '/^VmHWM:/ { printf "%.0f", $2 / 1024 }' "/proc/$1/status" 2>/dev/null || echo 0; }
mem_available() { awk '/^MemAvailable:/ { printf "%.0f", $2 * 1024 }' /proc/meminfo; }
disk_available() { df -B1 --output=avail "$1" | tail -1; }
mb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1e6 }'; }
ms() { awk -v s="$1" 'BEGIN { printf "%.0f", s * 1000 }'; }
# gen_field NAME: a key=value of the generator's summary line.
gen_field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$GEN_LINE"; }
# median_max FILE: "median M ms, max X ms" of the seconds in FILE (one a line).
median_max() {
    sort -g "$1" | awk '{ a[NR] = $1 } END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
        printf "median %.1f ms, max %.1f ms", m * 1000, a[NR] * 1000 }'
}

# The figures, per size (keys "<figure>:<run-hours>"), printed as one table at the end.
declare -A FIG

# generate RH: the data dir of RH run-hours in $DIR; sets GEN_LINE. Returns 1 on failure.
generate() {
    local rh=$1 runs=$1 long=()
    if [ "$rh" -ge $LONG_RUN_H ]; then runs=$((rh - LONG_RUN_H + 1)); long=(--long-run-hours $LONG_RUN_H); fi
    local t0; t0=$(now_s)
    local archive=(); [ "$ARCHIVE" = 1 ] && archive=(--archive)
    if ! "$LC_BIN/lc_history_gen" --data-dir "$DIR" --runs "$runs" --hours-per-run 1 "${long[@]}" "${archive[@]}" \
        --endpoints "$ENDPOINTS" --raft-addr "$RAFT_ADDR" --id 1 >"$WORK/gen-$rh.out" 2>"$WORK/gen-$rh.log"; then
        problem "$rh run-hours: lc_history_gen failed: $(tail -1 "$WORK/gen-$rh.log")"
        return 1
    fi
    local took; took=$(elapsed "$t0")
    GEN_LINE=$(tail -1 "$WORK/gen-$rh.out")
    RUNS=$(gen_field runs) ROWS=$(gen_field rows) REQUESTS=$(gen_field requests)
    IMAGE=$(gen_field image_bytes) SNAPSHOT=$(gen_field snapshot_bytes) LARGEST=$(gen_field largest_run)
    local du; du=$(du -sb "$DIR" | cut -f1)
    log "$rh run-hours: generated in $(printf '%.1f' "$took") s: $GEN_LINE; data dir $du bytes"
    FIG["generation:$rh"]=$(printf '%.0f s (%.2f s/run-hour, %.0f rows/s)' "$took" \
        "$(echo "$took / $rh" | bc -l)" "$(echo "$ROWS / $took" | bc -l)")
    FIG["size:$rh"]="$RUNS runs, $ROWS rows; image $(mb "$IMAGE") MB, snapshot file $(mb "$SNAPSHOT") MB"
    if [ "$ARCHIVE" = 1 ]; then
        FIG["archive:$rh"]="$(gen_field archived) files, $(mb "$(gen_field archive_bytes)") MB; written in $(gen_field archive_s) s"
    fi
}

# start_history_master RH TAG: loadmaster on $DIR; sets MPID, READY_S. Returns 1 when it never
# became ready.
start_history_master() {
    local rh=$1 tag=$2
    # A new history has no token yet: the master makes the first and writes the file; after a
    # restart the stored token is the one in the file.
    [ "$tag" = first ] && rm -f "$ADMIN_TOKEN_FILE"
    local t0; t0=$(now_s)
    start "master-$rh-$tag" timeout $((READY_LIMIT + 600)) "$LC_BIN/loadmaster" --data-dir "$DIR" \
        --raft-addr "$RAFT_ADDR" --listen-api "127.0.0.1:$API_PORT" \
        --listen-workers "127.0.0.1:$WORKER_PORT" --admin-token-file "$ADMIN_TOKEN_FILE" \
        --snapshot-threshold "$SNAPSHOT_EVERY"
    local v="PID_master_${rh}_${tag}"
    MASTER_TIMEOUT_PID=${!v}
    local deadline=$((SECONDS + READY_LIMIT))
    until [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "$API/readyz")" = 200 ]; do
        if ! kill -0 "$MASTER_TIMEOUT_PID" 2>/dev/null; then
            problem "$rh run-hours ($tag): the master exited before it was ready"; return 1
        fi
        [ $SECONDS -ge $deadline ] && { problem "$rh run-hours ($tag): not ready within ${READY_LIMIT}s"; return 1; }
        sleep 0.05
    done
    READY_S=$(elapsed "$t0")
    MPID=$(pgrep -P "$MASTER_TIMEOUT_PID" loadmaster || echo "$MASTER_TIMEOUT_PID")
    use_admin_token || { problem "$rh run-hours ($tag): no admin token"; return 1; }
    wait_until 30 api_authorized "$API" || { problem "$rh run-hours ($tag): the admin token is refused"; return 1; }
    log "$rh run-hours ($tag): ready in $(printf '%.2f' "$READY_S") s, pid $MPID"
}

# check_runs RH: the run list holds every generated run and their requests add up.
check_runs() {
    local rh=$1 list n sum
    list=$(curl -sf --max-time 60 "$API/api/v1/runs") || { problem "$rh run-hours: GET /api/v1/runs failed"; return 1; }
    n=$(jq '.runs | length' <<<"$list") sum=$(jq '[.runs[].requests] | add' <<<"$list")
    if [ "$n" != "$RUNS" ] || [ "$sum" != "$REQUESTS" ]; then
        problem "$rh run-hours: the run list has $n runs and $sum requests; generated $RUNS and $REQUESTS"
        return 1
    fi
    LARGEST_REQUESTS=$(jq --argjson id "$LARGEST" '.runs[] | select(.id == $id) | .requests' <<<"$list")
}

# list_latency RH: 20 GETs of the run list.
list_latency() {
    local rh=$1 f=$WORK/list-$rh.times
    : >"$f"
    for _ in $(seq 1 20); do
        curl -s -o /dev/null -w '%{time_total}\n' --max-time 30 "$API/api/v1/runs" >>"$f"
    done
    FIG["runs list:$rh"]=$(median_max "$f")
}

# download RH NAME: GET the largest run's NAME; sets the figure and DL_FILE.
download() {
    local rh=$1 name=$2 out code size t
    DL_FILE=$WORK/$name-$rh
    out=$(curl -s -o "$DL_FILE" -w '%{http_code} %{size_download} %{time_total}' --max-time 600 \
        "$API/api/v1/runs/$LARGEST/$name")
    read -r code size t <<<"$out"
    if [ "$code" != 200 ]; then problem "$rh run-hours: GET $name of run $LARGEST answered $code"; return 1; fi
    FIG["$name:$rh"]=$(awk -v b="$size" -v t="$t" 'BEGIN { printf "%.1f MB/s (%d bytes in %.0f ms)", b / t / 1e6, b, t * 1000 }')
}

# check_reports RH: report.csv's Aggregated line counts the run's requests; history.csv has
# one line per second of the run at most.
check_reports() {
    local rh=$1 agg lines
    download "$rh" report.csv || return 1
    agg=$(awk -F, '$2 == "Aggregated" { print $3 }' "$DL_FILE")
    [ "$agg" = "$LARGEST_REQUESTS" ] || problem "$rh run-hours: report.csv counts $agg requests, the run $LARGEST_REQUESTS"
    download "$rh" history.csv || return 1
    lines=$(($(wc -l <"$DL_FILE") - 1))
    [ "$lines" -gt 0 ] || problem "$rh run-hours: history.csv of run $LARGEST has no rows"
    FIG["history.csv:$rh"]="${FIG["history.csv:$rh"]}, $lines rows"
    # report.json and report.html hold every second too (streamed like history.csv).
    download "$rh" report.json || return 1
    local seconds; seconds=$(jq '.history | length' "$DL_FILE")
    [ "$seconds" -gt 0 ] || problem "$rh run-hours: report.json of run $LARGEST has no seconds"
    FIG["report.json:$rh"]="${FIG["report.json:$rh"]}, $seconds seconds"
    download "$rh" report.html || return 1
    tail -1 "$DL_FILE" | grep -q '^</html>' || problem "$rh run-hours: report.html of run $LARGEST does not end"
    rm -f "$WORK"/report.csv-"$rh" "$WORK"/history.csv-"$rh" "$WORK"/report.json-"$rh" "$WORK"/report.html-"$rh"
}

# reader K: reads reports, the run, the list and /metrics until LOAD_END; counts answers.
reader() {
    local k=$1 n=0 bad=0 code
    while [ "$(date +%s)" -lt "$LOAD_END" ]; do
        for path in "api/v1/runs/$LARGEST/report.csv" "api/v1/runs/$LARGEST/history.csv" \
            "api/v1/runs/$LARGEST" "api/v1/runs" "metrics"; do
            code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 60 "$API/$path")
            n=$((n + 1)); [ "$code" = 200 ] || bad=$((bad + 1))
        done
    done
    echo "$n $bad" >"$WORK/reader-$k.count"
}

# writer: a tenant every 0.05 s until LOAD_END, so that Raft entries commit (and snapshots of
# the whole history are taken every SNAPSHOT_EVERY of them) while the readers read.
writer() {
    local n=0
    while [ "$(date +%s)" -lt "$LOAD_END" ]; do
        curl -s -o /dev/null --max-time 10 -X POST --data "{\"name\":\"load-$n\"}" \
            "$API/api/v1/tenants" || true
        n=$((n + 1))
        sleep 0.05
    done
}

# under_load RH: /healthz every 0.2 s while four readers run and a writer commits, LOAD_S s.
under_load() {
    local rh=$1 pids=() hz=$WORK/healthz-$rh.times
    LOAD_END=$(($(date +%s) + LOAD_S))
    local snaps_before; snaps_before=$(cat "$WORK"/master-"$rh"-*.log | grep -c 'snapshot taken' || true)
    for k in 1 2 3 4; do reader "$k" & pids+=($!); PIDS+=($!); done
    writer & pids+=($!); PIDS+=($!)
    : >"$hz"
    while [ "$(date +%s)" -lt "$LOAD_END" ]; do
        curl -s -o /dev/null -w '%{time_total}\n' --max-time 10 "$API/healthz" >>"$hz" || echo 10 >>"$hz"
        sleep 0.2
    done
    for p in "${pids[@]}"; do wait "$p" || true; done
    local total bad
    total=$(cat "$WORK"/reader-*.count | awk '{ n += $1 } END { print n + 0 }')
    bad=$(cat "$WORK"/reader-*.count | awk '{ n += $2 } END { print n + 0 }')
    rm -f "$WORK"/reader-*.count
    FIG["healthz:$rh"]="$(ms "$(sort -g "$hz" | tail -1)") ms slowest of $(wc -l <"$hz") ($total reads, $bad not 200)"
    local snaps; snaps=$(cat "$WORK"/master-"$rh"-*.log | { grep 'snapshot taken' || true; } | tail -n +"$((snaps_before + 1))")
    local taken slowest
    taken=$(echo "$snaps" | { grep -c . || true; })
    slowest=$(echo "$snaps" | sed -n 's/.*ms=\([0-9]*\).*/\1/p' | sort -n | tail -1)
    FIG["snapshots:$rh"]="$taken taken under load; slowest pin-to-written ${slowest:-none} ms (off the loop)"
}

# loop_lag_ms SERIES: a loop-lag gauge of /metrics in ms.
loop_lag_ms() {
    curl -sf --max-time 10 "$API/metrics" | awk -v name="$1" '$1 == name { printf "%.0f", $2 * 1000 }'
}

# fits RH WHO MEM DISK: whether this machine's memory and disk have room for MEM and DISK more
# images of RH run-hours, what WHO ("the generator", "the master") needs; FORCE=1 tries anyway.
fits() {
    local rh=$1 who=$2 image need_mem need_disk mem disk
    image=$((IMAGE_PER_RUN_HOUR * rh * ENDPOINTS / 20))
    need_mem=$(awk -v i="$image" -v k="$3" 'BEGIN { printf "%.0f", i * k }')
    need_disk=$(awk -v i="$image" -v k="$4" 'BEGIN { printf "%.0f", i * k }')
    if [ "$ARCHIVE" = 1 ]; then
        need_mem=$ARCHIVED_MEM
        need_disk=$((ARCHIVE_PER_RUN_HOUR * rh * ENDPOINTS / 20 * 11 / 10))
    fi
    mem=$(mem_available) disk=$(disk_available "$HISTORY_DIR")
    if [ "${FORCE:-0}" != 1 ] && { [ "$need_mem" -gt "$mem" ] || [ "$need_disk" -gt "$disk" ]; }; then
        log "$rh run-hours: $who skipped: an image of about $(mb "$image") MB needs about $(mb "$need_mem") MB of memory (available $(mb "$mem")) and $(mb "$need_disk") MB of disk (available $(mb "$disk")); FORCE=1 tries anyway"
        SKIPPED="$who skipped: ~$(mb "$need_mem") MB of memory needed, $(mb "$mem") available"
        return 1
    fi
}

# measure RH: one size, from generation to the deleted data dir.
measure() {
    local rh=$1
    DIR=$HISTORY_DIR/history-$rh
    rm -rf "$DIR"
    RAFT_ADDR=127.0.0.1:$(free_port) API_PORT=$(free_port) WORKER_PORT=$(free_port)
    API=http://127.0.0.1:$API_PORT
    # The generator's database and then the snapshot; the master adds state.db.
    fits "$rh" "the generator" "$GEN_IMAGES" 2 || { FIG["size:$rh"]=$SKIPPED; return 0; }
    generate "$rh" || return 0
    if [ "$SNAPSHOT" -gt "$RAFT_READ_MAX" ]; then
        problem "$rh run-hours: the snapshot file has $SNAPSHOT bytes; raft 0.15 loads a snapshot with one read(), which returns at most $RAFT_READ_MAX bytes, so no master can start on it (short read); not started"
        FIG["ready:$rh"]="cannot load: snapshot file over 2 GiB (raft 0.15, one read())"
    elif ! fits "$rh" "the master" "$MASTER_IMAGES" 1.2; then
        FIG["ready:$rh"]=$SKIPPED
    elif ! start_history_master "$rh" first; then
        stop_proc "$MASTER_TIMEOUT_PID"
    else
        FIG["ready:$rh"]=$(printf '%.2f s' "$READY_S")
        FIG["rss:$rh"]="$(rss_mib "$MPID") MiB after ready, peak $(hwm_mib "$MPID") MiB"
        check_runs "$rh" && list_latency "$rh" && check_reports "$rh" && under_load "$rh"
        FIG["lag:$rh"]="$(loop_lag_ms loadcluster_master_loop_lag_max_seconds || echo '?') ms since start (restore included); $(loop_lag_ms loadcluster_master_loop_lag_seconds || echo '?') ms in the last 10 s"
        kill -0 "$MPID" 2>/dev/null || problem "$rh run-hours: the master (pid $MPID) is gone"
        FIG["rss:$rh"]="${FIG["rss:$rh"]}; $(rss_mib "$MPID") MiB at the end"
        stop_proc "$MASTER_TIMEOUT_PID"
        if start_history_master "$rh" restart; then
            FIG["restart:$rh"]=$(printf '%.2f s (peak %s MiB)' "$READY_S" "$(hwm_mib "$MPID")")
            check_runs "$rh" || true
        fi
        stop_proc "$MASTER_TIMEOUT_PID"
    fi
    log "$rh run-hours: data dir $(du -sb "$DIR" | cut -f1) bytes at the end; deleting it"
    rm -rf "$DIR"
}

for rh in $RUN_HOURS; do measure "$rh"; done

row() { # label key goal
    printf '%-24s' "$1"
    for rh in $RUN_HOURS; do printf ' | %-46s' "${FIG["$2:$rh"]:--}"; done
    printf ' | %s\n' "$3"
}
echo
echo "==== bench-history: $ENDPOINTS endpoints, $([ "$ARCHIVE" = 1 ] && echo "archived" || echo "not archived"), 1-hour runs (one of ${LONG_RUN_H} h from ${LONG_RUN_H} run-hours on), one master (figures, not a pass/fail on speed) ===="
printf '%-24s' "run-hours"
for rh in $RUN_HOURS; do printf ' | %-46s' "$rh"; done
printf ' | %s\n' "goal (issue 13)"
row "history" size ""
row "generation" generation "(through the FSM)"
if [ "$ARCHIVE" = 1 ]; then
    row "archive (data dir)" archive "(out of the snapshot; what an operator backs up with it)"
fi
row "time to ready" ready "printed"
row "time to ready, restart" restart "printed"
row "master RSS" rss "<= 512 MiB"
row "GET /api/v1/runs" "runs list" "<= 50 ms"
row "report.csv, largest run" report.csv ">= 50 MB/s (24-hour run)"
row "history.csv, largest run" history.csv ">= 50 MB/s (the CSV that grows with the run)"
row "report.json, largest run" report.json "(every second of the run, streamed)"
row "report.html, largest run" report.html "(charts of every second, streamed)"
row "slowest /healthz, load" healthz "<= 50 ms (4 readers, a writer, ${LOAD_S}s)"
row "snapshots under load" snapshots "never hold the loop > 50 ms (see loop lag)"
row "loop lag max" lag "<= 50 ms"
echo "context: report.csv is the per-endpoint table ($ENDPOINTS + 1 rows, a few KB however long the run), so its MB/s is one request's latency; history.csv has a row per second of the run"
echo "context: machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end; other processes above 20 % CPU: $(ps -eo pcpu=,comm= --sort=-pcpu | awk '$1 > 20 && $2 != "loadmaster" && $2 != "lc_history_gen" { printf "%s(%s%%) ", $2, $1 }')"
if [ ${#PROBLEMS[@]} -gt 0 ]; then
    KEEP=${BENCH_LOGS:-/tmp/bench-history-logs.$$}
    mkdir -p "$KEEP" && cp "$WORK"/*.log "$WORK"/gen-*.out "$KEEP/" 2>/dev/null || true
    echo "bench-history: FAILED: ${PROBLEMS[*]} (logs kept in $KEEP)"
    FAILED=1
    exit 1
fi
echo "bench-history: done (every answer right, nothing crashed)"
