#!/usr/bin/env bash
# loadworker --local against lc_target: the report's request count equals what
# the target served, exactly; tasks split by weight; a bad scenario exits 2.
set -euo pipefail

: "${LC_BIN:?set LC_BIN to the build directory}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/lc-worker-local.XXXXXX")
PIDS=()
PASSED=0
FAILED=0

cleanup() {
    for pid in "${PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$WORK"
}
trap cleanup EXIT

jq_true() { # jq_true [jq args…]: the filter holds
    timeout 5 jq -e "$@" >/dev/null
}

check() { # check "what" command…
    local what=$1
    shift
    if "$@"; then
        echo "ok: $what"
        PASSED=$((PASSED + 1))
    else
        echo "FAIL: $what"
        FAILED=$((FAILED + 1))
    fi
}

timeout 120 "$LC_BIN/lc_target" --listen 127.0.0.1:0 --port-file "$WORK/port" --quiet \
    2>"$WORK/target.log" &
PIDS+=($!)
for _ in $(seq 100); do
    [[ -s "$WORK/port" ]] && break
    timeout 1 sleep 0.05
done
PORT=$(cat "$WORK/port")

cat >"$WORK/scenario.json" <<JSON
{"name": "local-split", "target": "http://127.0.0.1:$PORT", "duration": "3s",
 "users": 20, "spawn_rate": 200,
 "tasks": [
   {"name": "list", "weight": 3, "method": "GET", "path": "/list?page=\${rand(1,50)}"},
   {"name": "create", "weight": 1, "method": "POST", "path": "/create",
    "headers": {"Content-Type": "application/json"},
    "body": "{\"user\": \"u\${user_id}\", \"n\": \${iteration}}"}
 ]}
JSON

timeout 30 "$LC_BIN/loadworker" --local "$WORK/scenario.json" --threads 2 --json \
    >"$WORK/report.json" 2>"$WORK/worker.log"
STATS=$(timeout 5 curl -sf "http://127.0.0.1:$PORT/__stats")

total=$(timeout 5 jq '.totals.requests' "$WORK/report.json")
failures=$(timeout 5 jq '.totals.failures' "$WORK/report.json")
served=$(echo "$STATS" | timeout 5 jq '.requests')
list=$(timeout 5 jq '.endpoints[] | select(.name == "list") | .requests' "$WORK/report.json")
create=$(timeout 5 jq '.endpoints[] | select(.name == "create") | .requests' "$WORK/report.json")
served_list=$(echo "$STATS" | timeout 5 jq '.by_path["/list"] // 0')
served_create=$(echo "$STATS" | timeout 5 jq '.by_path["/create"] // 0')
echo "report: total=$total failures=$failures list=$list create=$create; target: $served"

check "the run made requests" test "$total" -gt 1000
check "no failures" test "$failures" -eq 0
check "report total equals the target's count exactly ($total = $served)" \
    test "$total" -eq "$served"
check "per-endpoint counts equal the target's per-path counts" \
    test "$list" -eq "$served_list" -a "$create" -eq "$served_create"
check "tasks split 3:1 within 5 %" \
    jq_true --argjson l "$list" --argjson c "$create" -n \
    '($l / $c) >= 3 * 0.95 and ($l / $c) <= 3 * 1.05'
check "report has the run JSON shape" jq_true \
    '.name == "local-split" and .state == "finished" and .duration_s >= 3 and
     (.totals.latency_ms | has("p99")) and (.totals.rps > 0) and (.errors | length) == 0' \
    "$WORK/report.json"
check "the timeline has each second's loop lag, and the run's worst" jq_true \
    '(.timeline | length) >= 2 and all(.timeline[]; .loop_lag_ms >= 0 and .loop_lag_ms < 1000) and
     .engine_loop_lag_ms_max == ([.timeline[].loop_lag_ms] | max)' "$WORK/report.json"
check "the engines' polled time is reported, within what 2 threads could spend" jq_true \
    '(.engine_polled_s | type) == "number" and .engine_polled_s >= 0 and
     .engine_polled_s <= 2 * (.duration_s + 1)' "$WORK/report.json"

# Thresholds, as with a master: 0 when they pass, 99 (as k6) when one fails.
thresholds_run() { # thresholds_run THRESHOLDS_JSON: prints the exit code
    cat >"$WORK/th.json" <<JSON
{"name": "local-thresholds", "target": "http://127.0.0.1:$PORT", "duration": "1s", "users": 2,
 "tasks": [{"name": "list", "path": "/list"}, {"name": "slow", "path": "/slow?latency_ms=60"}],
 "thresholds": $1}
JSON
    local rc=0
    timeout 20 "$LC_BIN/loadworker" --local "$WORK/th.json" --threads 1 "${@:2}" \
        >"$WORK/th.out" 2>"$WORK/th.err" || rc=$?
    echo "$rc"
}
rc=$(thresholds_run '{"http_req_duration": ["p(95)<5000"], "http_req_failed": ["rate<0.01"]}')
check "passing thresholds exit 0 (got $rc)" test "$rc" -eq 0
check "the table lists them as passed" grep -q "Thresholds: 2 of 2 passed" "$WORK/th.out"
# table_aligned FILE: from the "Name" title line to "Total", every number ends under its title
# with a space after it, so columns never run together whatever their size.
table_aligned() {
    timeout 5 python3 - "$1" <<'PY'
import sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
start = next(i for i, l in enumerate(lines) if l.startswith("Name "))
end = next(i for i in range(start, len(lines)) if lines[i].startswith("Total "))
ends, pos = [], 0
for title in ["Requests", "Failures", "RPS", "Min", "Mean", "p50", "p90", "p95", "p99", "Max"]:
    pos = lines[start].index(title, pos) + len(title)
    ends.append(pos)
for line in lines[start + 1:end + 1]:
    for e in ends:
        assert line[e - 1] != " " and (e == len(line) or line[e] == " "), line
PY
}
check "the text table keeps every number under its title" table_aligned "$WORK/th.out"
rc=$(thresholds_run '{"http_req_duration{endpoint:slow}": ["p(95)<20"], "http_req_duration{endpoint:list}": ["p(95)<5000"]}' --json)
check "a failed threshold exits 99 (got $rc)" test "$rc" -eq 99
check "the JSON report carries the verdict and each observed value" jq_true \
    '.verdict == "fail" and (.thresholds | length) == 2 and
     (.thresholds[] | select(.endpoint == "slow") | .passed == false and .observed >= 60) and
     (.thresholds[] | select(.endpoint == "list") | .passed == true)' "$WORK/th.out"

cat >"$WORK/bad.json" <<JSON
{"name": "bad", "target": "http://127.0.0.1:$PORT", "duration": "3s",
 "tasks": [{"method": "FETCH", "path": "/"}]}
JSON
rc=0
timeout 10 "$LC_BIN/loadworker" --local "$WORK/bad.json" >"$WORK/bad.out" 2>"$WORK/bad.err" || rc=$?
check "a bad scenario exits 2 (got $rc)" test "$rc" -eq 2
check "the error names the file and the JSON path" \
    grep -q "bad.json: tasks\[0\].method: " "$WORK/bad.err"

rc=0
timeout 10 "$LC_BIN/loadworker" --local "$WORK/bad.json" --no-such-flag 2>/dev/null || rc=$?
check "an unknown flag exits 2 (got $rc)" test "$rc" -eq 2

echo "$PASSED passed, $FAILED failed"
[[ $FAILED -eq 0 ]]
