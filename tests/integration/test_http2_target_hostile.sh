#!/usr/bin/env bash
# test_http2_target_hostile.sh — lc_target --http2 against hostile HTTP/2 clients
# (tests/tools/h2_hostile.py): random bytes after the preface (40 seeds, with and without a
# SETTINGS first), a wrong preface, an HPACK bomb, a rapid-reset flood each end only their own
# connection, at once; too many streams are refused past --h2-max-streams; headers, bodies and
# paths past the limits get 431, 413, 414 on a connection that goes on serving; a client that
# reads nothing holds no more than a few MiB; half-sent prefaces hold nothing up. Meanwhile a
# loadworker run over h2c and HTTP/1.1 clients are served, counted exactly.
source "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || { log "python3 is not installed"; exit 1; }
HOSTILE=$LC_SRC/tests/tools/h2_hostile.py
start_named_target h2 --http2 --h2-max-streams 50
B="http://127.0.0.1:$PORT_h2"
stats() { curl -sf --max-time 2 "$B/__stats" | jq -r "$1"; }
target_pid() { pgrep -P "$PID_h2" -x lc_target || echo "$PID_h2"; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$(target_pid)/status"; }

# serving: lc_target runs and answers an h2c and an HTTP/1.1 request within a second each.
serving() {
    kill -0 "$PID_h2" 2>/dev/null &&
        [ "$(curl -s --http2-prior-knowledge --max-time 1 -o /dev/null -w '%{http_code}' "$B/alive")" = 200 ] &&
        [ "$(curl -s --max-time 1 -o /dev/null -w '%{http_code}' "$B/alive")" = 200 ]
}
# A load run over h2c goes on through everything below; its counts must stay exact.
curl -sf -X POST "$B/__reset" >/dev/null
cat >"$WORK/load.scenario.json" <<JSON
{"name": "load", "target": "$B", "duration": "6s", "users": 4, "spawn_rate": 100,
 "http2": true, "tasks": [{"name": "load", "path": "/load"}]}
JSON
# The report goes to its own file (start's log takes stdout and stderr together).
timeout 40 "$LC_BIN/loadworker" --local "$WORK/load.scenario.json" --threads 1 --json \
    >"$WORK/load.json" 2>"$WORK/load.log" &
PID_load=$!
PIDS+=("$PID_load")
sleep 0.5

# run_mode MODE ARGS…: one hostile client (its port is the target's); exit 0 = as expected.
run_mode() { local mode=$1; shift; timeout 20 python3 "$HOSTILE" "$mode" "$PORT_h2" "$@"; }

closed=0
for seed in $(seq 1 20); do
    run_mode garbage "$seed" >/dev/null && closed=$((closed + 1))
    run_mode garbage "$seed" settings >/dev/null && closed=$((closed + 1))
done
check "random bytes after the preface: the server ended all 40 connections ($closed)" test "$closed" -eq 40
check "... and serves others" serving
check "a wrong preface is closed" run_mode badpreface
check "an HPACK bomb (~800 KB of headers from 5 KB) closes its connection unanswered" run_mode hpackbomb
check "a rapid-reset flood ends its connection" run_mode rapidreset 5000
check "... and lc_target still serves" serving

refused=$(run_mode streams 200)
check "streams past --h2-max-streams 50 are refused ($refused of 200)" test "$refused" -eq 150

# Limits: answered on the stream, and the connection serves the next request.
out=$(run_mode bigheaders)
check "20 KB of headers: 431, then 200 on the same connection ($out)" test "$out" = "431 200"
head -c 70000 /dev/zero >"$WORK/70k"
code=$(curl -s --http2-prior-knowledge --max-time 5 -o /dev/null -w '%{http_code}' \
    --data-binary @"$WORK/70k" "$B/login")
check "a 70 KB body to an app path: 413 ($code)" test "$code" = 413
head -c $((17 * 1024 * 1024)) /dev/zero >"$WORK/17m"
rejected=$(stats .rejected)
rc=0
curl -s --http2-prior-knowledge --max-time 10 -o /dev/null --data-binary @"$WORK/17m" \
    "$B/upload" || rc=$?
# The 413 comes while the body is still being sent, followed by RST_STREAM NO_ERROR (stop
# sending); curl 7.88 reports that as an error (92), newer ones show the 413.
check "a 17 MiB body is refused at once (counted rejected, curl exit $rc, not a timeout)" \
    test "$rc" -ne 28 -a "$(stats .rejected)" -eq $((rejected + 1))
code=$(curl -s --http2-prior-knowledge --max-time 5 -o /dev/null -w '%{http_code}' \
    "$B/$(head -c 5000 /dev/zero | tr '\0' p)")
check "a 5000-byte path: 414 ($code)" test "$code" = 414
check "the refusals are counted as rejected, not served" test "$(stats .rejected)" -ge 4
check "... and none of those paths was counted" \
    test "$(stats '[.by_path["/big-header"], .by_path["/login"], .by_path["/upload"]] | map(. // 0) | add')" -eq 0

# A client that reads nothing of 50 responses of 16 MiB: lc_target stops producing.
before=$(rss_kb)
run_mode noread 50 3 &
reader=$!
sleep 2
during=$(rss_kb)
check "a client that does not read costs < 32 MiB ($before -> $during kB)" \
    test $((during - before)) -lt 32768
check "... while others are served" serving
wait "$reader" || true

run_mode halfpreface 100 3 &
half=$!
sleep 1
check "100 half-sent prefaces hold nobody up" serving
wait "$half" || true

load_rc=0
wait "$PID_load" || load_rc=$?
check "the load run ended well (exit $load_rc)" test "$load_rc" -eq 0
ours=$(jq '.totals.requests' "$WORK/load.json")
log "load: requests $ours, failures $(jq '.totals.failures' "$WORK/load.json"), target $(stats -c .by_path)"
check "load: requests were made, none failed" \
    test "$ours" -gt 100 -a "$(jq '.totals.failures' "$WORK/load.json")" -eq 0
check "load: the target served each exactly once ($ours)" test "$ours" -eq "$(stats '.by_path["/load"]')"
check "lc_target is still serving at the end" serving

finish
