#!/usr/bin/env bash
# test_h2_pool.sh — "http2": {"mode": true, "pool": {"connections": C, "max_streams": M}}
# against lc_target --http2 (h2c), two engines: counts exact against its /__stats (per path,
# one HTTP/2 stream each) over exactly C connections in all (split across the engines);
# streams multiplex (requests beyond what one stream per connection could carry); the
# server's SETTINGS_MAX_CONCURRENT_STREAMS below M bounds the streams in flight (nothing
# refused); more users than slots wait in FIFO order with the wait in their latency; a GOAWAY
# every 20 streams: served + refused = requests exactly, connections reopened; RST_STREAM as
# h2_reset and h2_refused on connections that are kept; streams past request_timeout_ms are
# reset as timeouts without losing their connection; connections that never come up (nobody
# listening, no HTTP/2) fail one request per attempt and the run ends; the open model keeps its
# rate with exact counts and a stall in its percentiles; mode "auto" is refused.
source "$(dirname "$0")/lib.sh"

start_h2_targets "lim --http2 --h2-max-streams 3"

# run NAME TARGET USERS C M BODY [EXTRA]: a RUN_MS local run over 2 engines through a pool of C
# connections of M streams against TARGET (after its /__reset). Report in $WORK/NAME.json,
# exit status in RC. The bounds below that depend on the duration are computed from RUN_MS.
RUN_MS=1000
run() {
    [ "$2" = closed ] || target_reset "$2"
    cat >"$WORK/$1.scenario.json" <<JSON
{"name": "$1", "target": "http://127.0.0.1:$(target_port "$2")", "duration": "${RUN_MS}ms",
 "users": $3, "spawn_rate": 10000, ${7:-}
 "http2": {"mode": true, "pool": {"connections": $4, "max_streams": $5}}, $6}
JSON
    RC=0
    timeout 30 "$LC_BIN/loadworker" --local "$WORK/$1.scenario.json" --threads 2 --json \
        >"$WORK/$1.json" 2>"$WORK/$1.log" || RC=$?
}
# (1) Exact per path over exactly C = 4 connections (2 per engine), bodies checked.
TASKS='"tasks": [{"name": "a", "weight": 2, "path": "/a"},
                 {"name": "big", "path": "/big?size=20000", "expect": {"body_contains": "xxxx"}},
                 {"name": "post", "method": "POST", "path": "/post", "body": "hello"},
                 {"name": "slow", "path": "/slow?latency_ms=5"}]'
run mixed h2 40 4 10 "$TASKS"
requests=$(report_field mixed .totals.requests)
log "mixed: exit $RC, requests $requests, errors $(jq -c .errors "$WORK/mixed.json"), target $(target_stats h2 -c .h2)"
check "mixed: exits 0 with requests and no failures" \
    test "$RC" -eq 0 -a "$requests" -gt 1000 -a "$(report_field mixed .totals.failures)" -eq 0
check "mixed: requests equal the target's exactly" test "$requests" -eq "$(target_stats h2 .requests)"
expect_paths mixed h2 a=/a big=/big post=/post slow=/slow
check "mixed: each one an HTTP/2 stream" test "$(target_stats h2 .h2.streams)" -eq "$requests"
check "mixed: over exactly 4 connections for 40 users" \
    test "$(target_stats h2 .h2.connections_total)" -eq 4
check "mixed: bodies arrived whole" \
    test "$(report_field mixed .totals.bytes)" -ge $(($(report_endpoint mixed big) * 20000))

# (2) Multiplexed: 40 users on 4 connections of 10 streams, 50 ms answers. One stream per
# connection could carry 4 * RUN_MS / 50 requests (80 in 1 s); 40 in flight carry ~40 * RUN_MS / 50.
SLOW='"tasks": [{"name": "s", "path": "/s?latency_ms=50"}]'
ONE_STREAM_EACH=$((4 * RUN_MS / 50)) ALL_SLOTS=$((40 * RUN_MS / 50))
run mux h2 40 4 10 "$SLOW"
requests=$(report_field mux .totals.requests)
log "mux: exit $RC, requests $requests, p50 $(report_field mux .totals.latency_ms.p50) ms"
check "mux: no failures" test "$RC" -eq 0 -a "$(report_field mux .totals.failures)" -eq 0
check "mux: streams in flight together (requests $requests > 3 * $ONE_STREAM_EACH)" \
    test "$requests" -gt $((3 * ONE_STREAM_EACH))
check "mux: exact" test "$requests" -eq "$(target_stats h2 .requests)"
check "mux: 4 connections" test "$(target_stats h2 .h2.connections_total)" -eq 4

# (3) 80 users for the same 40 slots: the same rate, each waiting its turn, and the wait is in
# the latency (counted from the user's ask, not from the stream's start).
run fifo h2 80 4 10 "$SLOW"
requests=$(report_field fifo .totals.requests)
p50=$(report_field fifo .totals.latency_ms.p50)
log "fifo: exit $RC, requests $requests, p50 $p50 ms, p99 $(report_field fifo .totals.latency_ms.p99) ms"
check "fifo: no failures, exact" test "$RC" -eq 0 -a "$(report_field fifo .totals.failures)" -eq 0 \
    -a "$requests" -eq "$(target_stats h2 .requests)"
check "fifo: 40 in flight at most (requests $requests <= $ALL_SLOTS + 40)" \
    test "$requests" -le $((ALL_SLOTS + 40))
check "fifo: the slot's wait is in the latency (p50 $p50 >= 90 ms)" \
    awk -v p="$p50" 'BEGIN { exit !(p >= 90) }'

# (4) The server allows 3 streams per connection, below M = 10: at most 12 in flight (a stream
# over its limit would be refused), so at most 12 * RUN_MS / 50 requests (240 in 1 s), and
# more than 5 / 12 of that (what 2000 ms used to give: more than 200 of 480).
LIM_MAX=$((12 * RUN_MS / 50))
run lim lim 40 4 10 "$SLOW"
requests=$(report_field lim .totals.requests)
log "lim: exit $RC, requests $requests, errors $(jq -c .errors "$WORK/lim.json"), target $(target_stats lim -c .h2)"
check "lim: no failures, nothing refused by the server" \
    test "$RC" -eq 0 -a "$(report_field lim .totals.failures)" -eq 0 -a "$(target_stats lim .h2.refused)" -eq 0
check "lim: bounded by SETTINGS ($((LIM_MAX * 5 / 12)) < $requests <= $LIM_MAX + 12)" \
    test "$requests" -gt $((LIM_MAX * 5 / 12)) -a "$requests" -le $((LIM_MAX + 12))
check "lim: exact" test "$requests" -eq "$(target_stats lim .requests)"

# (5) GOAWAY after 20 streams of each connection: every request served (by the target's count)
# or refused, none lost or counted twice, and the pool reconnected.
run goaway goaway 30 4 10 '"tasks": [{"name": "g", "path": "/g"}]'
requests=$(report_field goaway .totals.requests)
refused=$(report_errors goaway h2_refused)
served=$(target_stats goaway .requests)
conns=$(target_stats goaway .h2.connections_total)
log "goaway: exit $RC, requests $requests, refused $refused, served $served, target $(target_stats goaway -c .h2)"
check "goaway: exits 0 with many connections' worth" test "$RC" -eq 0 -a "$requests" -gt 400
check "goaway: some refused, no failure but those" \
    test "$refused" -gt 0 -a "$(report_field goaway .totals.failures)" -eq "$refused"
check "goaway: served + refused = requests exactly ($served + $refused = $requests)" \
    test $((served + refused)) -eq "$requests"
check "goaway: what the target refused we counted ($(target_stats goaway .h2.refused) <= $refused)" \
    test "$(target_stats goaway .h2.refused)" -le "$refused"
check "goaway: connections reopened, at most 20 served on each ($conns for $served)" \
    test "$conns" -gt 4 -a $((conns * 20)) -ge "$served"

# (6) RST_STREAM: h2_reset and h2_refused as the target counts them, on the same 4 connections.
run rst h2 8 4 10 '"tasks": [{"name": "rst", "path": "/r?rst=1"},
                             {"name": "ref", "path": "/f?rst=refused"},
                             {"name": "ok", "weight": 2, "path": "/ok"}]'
log "rst: exit $RC, errors $(jq -c .errors "$WORK/rst.json"), target $(target_stats h2 -c .h2)"
check "rst: every ?rst=1 is h2_reset, as many as the target reset" \
    test "$(report_errors rst h2_reset)" -gt 0 -a "$(report_errors rst h2_reset)" -eq "$(report_endpoint rst rst)" \
    -a "$(target_stats h2 .h2.reset)" -eq "$(report_errors rst h2_reset)"
check "rst: every ?rst=refused is h2_refused, as many as the target refused" \
    test "$(report_errors rst h2_refused)" -gt 0 -a "$(report_errors rst h2_refused)" -eq "$(report_endpoint rst ref)" \
    -a "$(target_stats h2 .h2.refused)" -eq "$(report_errors rst h2_refused)"
check "rst: the others succeeded" test "$(report_endpoint rst ok failures)" -eq 0
expect_paths rst h2 ok=/ok
check "rst: the connections were kept" test "$(target_stats h2 .h2.connections_total)" -eq 4

# (7) A stream past request_timeout_ms is reset (timeout); its connection carries on.
# (2 s as before: at 1 s the stop lands 100 ms into the users' fourth 300 ms wait, and requests
# it cuts count as aborted, not timeout; 2 s ends 200 ms into the seventh, which times out first.)
RUN_MS=2000 run tmo h2 4 2 10 '"tasks": [{"name": "t", "path": "/t?latency_ms=2000"}]' '"request_timeout_ms": 300,'
requests=$(report_field tmo .totals.requests)
log "tmo: exit $RC, requests $requests, errors $(jq -c .errors "$WORK/tmo.json"), target $(target_stats h2 -c .h2)"
check "tmo: every request timed out (about 4 users * 2000 / 300)" \
    test "$RC" -eq 0 -a "$requests" -ge 16 -a "$(report_errors tmo timeout)" -eq "$requests"
check "tmo: none answered, 2 connections throughout" \
    test "$(target_stats h2 .requests)" -eq 0 -a "$(target_stats h2 .h2.connections_total)" -eq 2

# (8) Connections that never come up fail one request per attempt, as a user's own connect
# would, and the run still ends: a port nobody listens on, a server without HTTP/2.
PORT_closed=$(free_port)
run closed closed 20 2 10 '"tasks": [{"name": "c", "path": "/c"}]'
requests=$(report_field closed .totals.requests)
log "closed: exit $RC, requests $requests, errors $(jq -c .errors "$WORK/closed.json")"
check "closed: exits 0, every request connect_refused" \
    test "$RC" -eq 0 -a "$requests" -gt 0 -a "$(report_errors closed connect_refused)" -eq "$requests"
run noh2 plain 20 2 10 '"tasks": [{"name": "n", "path": "/n"}]'
requests=$(report_field noh2 .totals.requests)
log "noh2: exit $RC, requests $requests, errors $(jq -c .errors "$WORK/noh2.json"), target $(target_stats plain -c '{requests, rejected}')"
check "noh2: exits 0, every request failed, none served" \
    test "$RC" -eq 0 -a "$requests" -gt 0 -a "$(report_field noh2 .totals.failures)" -eq "$requests" \
    -a "$(target_stats plain .requests)" -eq 0

# (8b) The open model through the pool: 500 arrivals/s for 3 s over 2 connections of 50
# streams, against a target that stalls 0.5 s after 1 s. Counts are exact, the rate is kept,
# and the stall shows in the percentiles: the 250 arrivals it held wait 500 … 0 ms (a
# stream or a slot), each counted from when it was due (p99 near 470 ms).
start_named_target h2stall --http2 --stall-at-ms 1000 --stall-ms 500
cat >"$WORK/open.scenario.json" <<JSON
{"name": "open", "target": "http://127.0.0.1:$PORT_h2stall", "duration": "3s",
 "arrival_rate": 500, "max_users": 400,
 "http2": {"mode": true, "pool": {"connections": 2, "max_streams": 50}},
 "tasks": [{"name": "o", "path": "/o"}]}
JSON
RC=0
timeout 30 "$LC_BIN/loadworker" --local "$WORK/open.scenario.json" --threads 1 --json \
    >"$WORK/open.json" 2>"$WORK/open.log" || RC=$?
requests=$(report_field open .totals.requests)
p99=$(report_field open .totals.latency_ms.p99)
log "open: exit $RC, requests $requests, dropped $(report_field open .totals.dropped), p50 $(report_field open .totals.latency_ms.p50) p99 $p99 ms, target $(target_stats h2stall -c .h2)"
check "open: exits 0 without failures" test "$RC" -eq 0 -a "$(report_field open .totals.failures)" -eq 0
check "open: requests equal the target's exactly" test "$requests" -eq "$(target_stats h2stall .requests)"
check "open: the rate was kept (1350..1510 of 1500)" test "$requests" -ge 1350 -a "$requests" -le 1510
check "open: over exactly 2 connections" test "$(target_stats h2stall .h2.connections_total)" -eq 2
check "open: the stall is in p99, counted from when each request was due (350..650 ms: $p99)" \
    jq -e -n --argjson v "$p99" '$v >= 350 and $v <= 650' >/dev/null

# (9) Refused before anything runs: a pool is HTTP/2 only.
cat >"$WORK/auto.scenario.json" <<JSON
{"name": "auto", "target": "http://127.0.0.1:$PORT_h2", "duration": "2s", "users": 4,
 "http2": {"mode": "auto", "pool": {"connections": 2}}, "tasks": [{"path": "/a"}]}
JSON
RC=0
timeout 10 "$LC_BIN/loadworker" --local "$WORK/auto.scenario.json" --threads 1 --json \
    >"$WORK/auto.json" 2>"$WORK/auto.log" || RC=$?
check "a pool with mode \"auto\" is refused (exit $RC)" test "$RC" -ne 0
check "... naming the field" grep -q 'http2.mode: must be true with a pool' "$WORK/auto.log"

finish
