#!/usr/bin/env bash
# test_http2_target.sh — loadworker over HTTP/2 against lc_target --http2 (h2c by prior
# knowledge), counted exactly against its /__stats: per-path counts equal ours and every
# request was an HTTP/2 stream; --h2-goaway-after 20 mid-run: each request served (counted by
# the target) or refused (h2_refused: GOAWAY below it), nothing else, connections reopened;
# ?rst=1 and ?rst=refused counted as h2_reset and h2_refused on a connection that is kept;
# a request timeout resets its stream and keeps the connection;
# "http2": "auto" over plain http is HTTP/1.1 (also against a server that speaks h2c), and
# "http2": true against a server without HTTP/2 fails without a request served; a journey
# (login, session cookie, Bearer token, /me) over h2c with exact counts; the same h2c load
# through one master and one worker.
source "$(dirname "$0")/lib.sh"

start_h2_targets

# run NAME TARGET HTTP2 USERS BODY: a 1 s local run of USERS users over 2 engines against
# TARGET (after its /__reset); BODY is the scenario's tasks or journeys member. Report in
# $WORK/NAME.json, exit status in RC.
run() {
    target_reset "$2"
    cat >"$WORK/$1.scenario.json" <<JSON
{"name": "$1", "target": "http://127.0.0.1:$(target_port "$2")", "duration": "1s",
 "users": $4, "spawn_rate": 1000, "http2": $3, $5}
JSON
    RC=0
    timeout 30 "$LC_BIN/loadworker" --local "$WORK/$1.scenario.json" --threads 2 --json \
        >"$WORK/$1.json" 2>"$WORK/$1.log" || RC=$?
}
TASKS='"tasks": [{"name": "a", "weight": 2, "path": "/a"},
                 {"name": "big", "path": "/big?size=20000"},
                 {"name": "post", "method": "POST", "path": "/post", "body": "hello"},
                 {"name": "slow", "path": "/slow?latency_ms=5"}]'

# (1) h2c: exact per path, and every request was an HTTP/2 stream of a few connections.
run h2c h2 true 8 "$TASKS"
requests=$(report_field h2c .totals.requests)
log "h2c: exit $RC, requests $requests, target $(target_stats h2 -c .)"
check "h2c: exits 0 with requests and no failures" \
    test "$RC" -eq 0 -a "$requests" -gt 200 -a "$(report_field h2c .totals.failures)" -eq 0
check "h2c: requests equal the target's exactly" test "$requests" -eq "$(target_stats h2 .requests)"
expect_paths h2c h2 a=/a big=/big post=/post slow=/slow
check "h2c: each one an HTTP/2 stream" test "$(target_stats h2 .h2.streams)" -eq "$requests"
check "h2c: over at most one connection per user" test "$(target_stats h2 .h2.connections_total)" -le 8
check "h2c: bodies arrived whole (bytes >= 20000 per big)" \
    test "$(report_field h2c .totals.bytes)" -ge $(($(report_endpoint h2c big) * 20000))

# (2) GOAWAY after 20 streams of each connection: served + refused = ours, nothing else.
run goaway goaway true 8 '"tasks": [{"name": "g", "path": "/g"}]'
requests=$(report_field goaway .totals.requests)
refused=$(report_errors goaway h2_refused)
served=$(target_stats goaway .requests)
conns=$(target_stats goaway .h2.connections_total)
log "goaway: exit $RC, requests $requests, refused $refused, served $served, target $(target_stats goaway -c .h2)"
check "goaway: exits 0 with many connections' worth of requests" \
    test "$RC" -eq 0 -a "$requests" -gt 400
check "goaway: some requests were refused" test "$refused" -gt 0
check "goaway: no failure but refused ones" test "$(report_field goaway .totals.failures)" -eq "$refused"
check "goaway: served + refused = requests exactly ($served + $refused = $requests)" \
    test $((served + refused)) -eq "$requests"
check "goaway: the target refused what we counted ($(target_stats goaway .h2.refused) = $refused)" \
    test "$(target_stats goaway .h2.refused)" -eq "$refused"
check "goaway: connections reopened, at most 20 served on each ($conns for $served)" \
    test "$conns" -gt 8 -a $((conns * 20)) -ge "$served"
check "goaway: one GOAWAY per connection that reached 21 streams" \
    test "$(target_stats goaway .h2.goaways)" -eq "$refused"
check "goaway: the GOAWAY connections were closed" wait_until 5 \
    test "$(target_stats goaway .connections)" -le 1

# (3) RST_STREAM: ?rst=1 is h2_reset, ?rst=refused h2_refused, on one connection throughout.
run rst h2 true 1 '"tasks": [{"name": "rst", "path": "/r?rst=1"},
                             {"name": "ref", "path": "/f?rst=refused"},
                             {"name": "ok", "weight": 2, "path": "/ok"}]'
log "rst: exit $RC, errors $(jq -c .errors "$WORK/rst.json"), target $(target_stats h2 -c .)"
check "rst: exits 0" test "$RC" -eq 0
check "rst: every ?rst=1 is h2_reset, as many as the target reset" \
    test "$(report_errors rst h2_reset)" -gt 0 -a "$(report_errors rst h2_reset)" -eq "$(report_endpoint rst rst)" \
    -a "$(target_stats h2 .h2.reset)" -eq "$(report_errors rst h2_reset)"
check "rst: every ?rst=refused is h2_refused, as many as the target refused" \
    test "$(report_errors rst h2_refused)" -gt 0 -a "$(report_errors rst h2_refused)" -eq "$(report_endpoint rst ref)" \
    -a "$(target_stats h2 .h2.refused)" -eq "$(report_errors rst h2_refused)"
check "rst: the plain requests between them all succeeded" \
    test "$(report_endpoint rst ok failures)" -eq 0
expect_paths rst h2 ok=/ok
check "rst: the connection was kept (one for the whole run)" \
    test "$(target_stats h2 .h2.connections_total)" -eq 1
check "rst: resets are not counted as served" test "$(target_stats h2 '.by_path["/r"] // 0')" -eq 0

# (3b) A request timeout resets only its stream (RST_STREAM CANCEL): the connection carries
# on, so one slow answer costs no new connection (and, over TLS, no handshake).
run timeout h2 true 1 '"request_timeout_ms": 150,
    "tasks": [{"name": "late", "path": "/late?latency_ms=400"},
              {"name": "ok", "weight": 2, "path": "/ok"}]'
log "timeout: exit $RC, errors $(jq -c .errors "$WORK/timeout.json"), target $(target_stats h2 -c .h2)"
check "timeout: every late request is a timeout" \
    test "$(report_errors timeout timeout)" -gt 0 -a "$(report_errors timeout timeout)" -eq "$(report_endpoint timeout late)"
check "timeout: the others all succeeded" \
    test "$(report_endpoint timeout ok)" -gt 0 -a "$(report_endpoint timeout ok failures)" -eq 0
check "timeout: one connection for the whole run (streams reset, not connections closed)" \
    test "$(target_stats h2 .h2.connections_total)" -eq 1

# (4) "auto" over plain http is HTTP/1.1, whether the server speaks h2c or not; true against
# a server without HTTP/2 serves nothing (its 400 to the preface is no HTTP/2 answer).
run auto-plain plain '"auto"' 4 '"tasks": [{"name": "a", "path": "/a"}]'
check "auto against HTTP/1.1 only: exits 0 without failures" \
    test "$RC" -eq 0 -a "$(report_field auto-plain .totals.failures)" -eq 0
expect_paths auto-plain plain a=/a
run auto-h2 h2 '"auto"' 4 '"tasks": [{"name": "a", "path": "/a"}]'
expect_paths auto-h2 h2 a=/a
check "auto over http against h2c: HTTP/1.1, not a stream" test "$(target_stats h2 '.h2.streams')" -eq 0
run only-h2 plain true 2 '"tasks": [{"name": "a", "path": "/a"}]'
log "only-h2: requests $(report_field only-h2 .totals.requests), errors $(jq -c .errors "$WORK/only-h2.json")"
check "true against HTTP/1.1 only: every request failed" \
    test "$(report_field only-h2 .totals.requests)" -gt 0 \
    -a "$(report_field only-h2 .totals.failures)" -eq "$(report_field only-h2 .totals.requests)"
check "... and the server served none (rejected the prefaces)" \
    test "$(target_stats plain .requests)" -eq 0 -a "$(target_stats plain .rejected)" -gt 0

# (5) A journey over h2c: a login's token and session cookie take each user to /me.
JOURNEY='"defaults": {"cookies": true},
 "journeys": [{"name": "shop",
   "on_start": [{"name": "login", "method": "POST", "path": "/login",
                 "json": {"user": "u${user_id}", "password": "pw"},
                 "expect": {"status": [200]}, "extract": {"token": {"json": "$.token"}}}],
   "steps": [{"name": "me", "path": "/me", "headers": {"Authorization": "Bearer ${token}"},
              "expect": {"status": [200], "body_contains": "\"user\":\"u"}},
             {"name": "items", "path": "/items?n=3", "expect": {"body_contains": "item-3"}},
             {"name": "cart", "method": "POST", "path": "/cart", "json": {"id": 1},
              "expect": {"status": [201]}}]}]'
run journey h2 true 6 "$JOURNEY"
log "journey: exit $RC, errors $(jq -c .errors "$WORK/journey.json"), target $(target_stats h2 -c .by_path)"
check "journey: exits 0, no failures" test "$RC" -eq 0 -a "$(report_field journey .totals.failures)" -eq 0
check "journey: each user logged in once" test "$(report_endpoint journey login)" -eq 6
expect_paths journey h2 login=/login me=/me items=/items cart=/cart
check "journey: every request an HTTP/2 stream" \
    test "$(target_stats h2 .h2.streams)" -eq "$(report_field journey .totals.requests)"

# (6) The same over h2c through one master and one worker.
start_master master
start_worker w1
check "the worker connects" wait_until 15 workers_connected 1
target_reset h2
cat >"$WORK/cluster.json" <<JSON
{"name": "h2-cluster", "target": "http://127.0.0.1:$PORT_h2", "duration": "3s",
 "users": 6, "spawn_rate": 100, "http2": true, $TASKS}
JSON
id=$(submit_run "$WORK/cluster.json")
check "the run was created" test -n "$id"
check "the run finished" wait_until 30 run_state_is "${id:-0}" finished
curl -sf "$API/api/v1/runs/${id:-0}" >"$WORK/cluster-run.json"
ours=$(jq '.totals.requests' "$WORK/cluster-run.json")
log "cluster: requests $ours, target $(target_stats h2 -c .)"
check "cluster: requests were made, none failed" \
    test "$ours" -gt 100 -a "$(jq '.totals.failures' "$WORK/cluster-run.json")" -eq 0
check "cluster: the history's requests equal the target's exactly" \
    test "$ours" -eq "$(target_stats h2 .requests)"
check "cluster: each one an HTTP/2 stream" test "$(target_stats h2 .h2.streams)" -eq "$ours"
for pair in a=/a big=/big post=/post slow=/slow; do
    n=$(jq --arg n "${pair%%=*}" '[.endpoints[] | select(.name == $n) | .requests] | add // 0' \
        "$WORK/cluster-run.json")
    check "cluster: ${pair%%=*} equals the target's ${pair#*=} exactly" \
        test "$n" -eq "$(target_stats h2 ".by_path[\"${pair#*=}\"] // 0")"
done

finish
