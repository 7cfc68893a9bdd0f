#!/usr/bin/env bash
# Several origins in one journey ("targets" beside "target"): two lc_target instances, on
# 127.0.0.1 and 127.0.0.2 (two hosts, so that RFC 6265's cookies, which do not tell ports
# apart, are kept apart too), reached by a step's "origin", by an absolute URL and by a
# redirect, through loadworker --local and through a master with a worker. Each step's count
# equals what its target served; each origin gets only its own cookies; a redirect to an
# unlisted origin is kind redirect; an origin outside the list is refused at validation (400
# naming the step, nothing created; --local exits with the same error); a connection to
# another origin closes once idle past idle_timeout_ms.
source "$(dirname "$0")/lib.sh"

start_target
A=$TARGET_PORT
start target-b timeout 300 "$LC_BIN/lc_target" --listen 127.0.0.2:0 \
    --port-file "$WORK/target-b.port" --quiet
wait_until 10 test -s "$WORK/target-b.port" || { log "target b did not start"; exit 1; }
B=$(cat "$WORK/target-b.port")
stats_a() { curl -sf --max-time 2 "http://127.0.0.1:$A/__stats" | jq -r "$1"; }
stats_b() { curl -sf --max-time 2 "http://127.0.0.2:$B/__stats" | jq -r "$1"; }
# conns_a / conns_b: connections the target accepted so far, this query's own included.
conns_a() { stats_a .connections_total; }
conns_b() { stats_b .connections_total; }
reset_targets() {
    curl -sf -X POST "http://127.0.0.1:$A/__reset" >/dev/null
    curl -sf -X POST "http://127.0.0.2:$B/__reset" >/dev/null
}

# scenario NAME USERS: the journey, on two origins, into $WORK/NAME.json.
scenario() {
    cat >"$WORK/$1.json" <<JSON
{"name": "$1", "target": "http://127.0.0.1:$A", "targets": {"auth": "http://127.0.0.2:$B"},
 "duration": "2s", "users": $2, "spawn_rate": 100,
 "journeys": [{"name": "two", "on_error": "continue",
   "on_start": [{"name": "a-cookie", "path": "/setcookie?a_side=1"},
                {"name": "b-cookie", "origin": "auth", "path": "/setcookie?b_side=1"}],
   "steps": [
     {"name": "a-echo", "path": "/echo",
      "extract": {"a_own": {"json": "$.cookies.a_side", "default": "none"},
                  "a_other": {"json": "$.cookies.b_side", "default": "none"}}},
     {"if": "\${a_own} != '1' || \${a_other} != 'none'", "then": [{"name": "a-wrong", "path": "/a-wrong"}]},
     {"name": "b-echo", "path": "http://127.0.0.2:$B/echo",
      "extract": {"b_own": {"json": "$.cookies.b_side", "default": "none"},
                  "b_other": {"json": "$.cookies.a_side", "default": "none"}}},
     {"if": "\${b_own} != '1' || \${b_other} != 'none'", "then": [{"name": "b-wrong", "path": "/b-wrong"}]},
     {"name": "to-b", "path": "/redirect-to/127.0.0.2:$B/redirect/0"},
     {"name": "away", "path": "/redirect-to/127.0.0.3:1/x"},
     {"think_ms": 50}]}]}
JSON
}

# check_counts REPORT USERS: every step's count against the targets' /__stats.
check_counts() {
    local report=$1 users=$2
    ep() { jq -r --arg n "$1" '[.endpoints[] | select(.name == $n) | .requests] | add // 0' "$report"; }
    kind() { jq -r --arg e "$1" --arg k "$2" '[.errors[] | select(.endpoint == $e and .kind == $k) | .count] | add // 0' "$report"; }
    check "b-cookie (origin auth) ran once per user on b" [ "$(stats_b '.by_path["/setcookie"] // 0')" = "$users" ]
    check "a-cookie ran once per user on a" [ "$(stats_a '.by_path["/setcookie"] // 0')" = "$users" ]
    check "a-echo's count equals a's /echo" [ "$(ep a-echo)" = "$(stats_a '.by_path["/echo"] // 0')" ]
    check "b-echo (absolute URL) count equals b's /echo" [ "$(ep b-echo)" = "$(stats_b '.by_path["/echo"] // 0')" ]
    check "b-echo ran" [ "$(ep b-echo)" -gt "$users" ]
    check "a never sent to b: nothing of b's on a" [ "$(stats_a '.by_path["/echo"] // 0')" -gt 0 -a "$(stats_a '.by_path["/redirect/0"] // 0')" = 0 ]
    check "each origin got its own cookie and not the other's" \
        [ "$(stats_a '.by_path["/a-wrong"] // 0')" = 0 -a "$(stats_a '.by_path["/b-wrong"] // 0')" = 0 ]
    check "a redirect to a listed origin was followed there" [ "$(stats_b '.by_path["/redirect/0"] // 0')" -gt 0 ]
    check "to-b counts its hop on a and its end on b" \
        [ "$(( $(ep to-b) + $(ep away) ))" = "$(( $(stats_a '.by_path["/redirect-to"] // 0') + $(stats_b '.by_path["/redirect/0"] // 0') ))" ]
    check "to-b had no failures" \
        [ "$(jq '[.endpoints[] | select(.name == "to-b") | .failures] | add' "$report")" = 0 ]
    check "a redirect to an unlisted origin is kind redirect, every time" \
        [ "$(kind away redirect)" = "$(ep away)" -a "$(ep away)" -gt 0 ]
    check "request totals equal both targets' counts" \
        [ "$(jq '.totals.requests' "$report")" = "$(( $(stats_a .requests) + $(stats_b .requests) ))" ]
}

# --local.
scenario local 3
b0=$(conns_b)
timeout 30 "$LC_BIN/loadworker" --local "$WORK/local.json" --threads 1 --json \
    >"$WORK/local.out" 2>"$WORK/local.log" || true
b1=$(conns_b)
check_counts "$WORK/local.out" 3
check "one connection per user to b, kept between requests (default idle timeout)" \
    [ "$((b1 - b0 - 1))" = 3 ]

# An origin outside the list: --local refuses the scenario with the step's path.
jq '.journeys[0].steps[2].path = "http://127.0.0.3:1/echo"' "$WORK/local.json" >"$WORK/bad.json"
rc=0
timeout 10 "$LC_BIN/loadworker" --local "$WORK/bad.json" >"$WORK/bad.out" 2>"$WORK/bad.err" || rc=$?
check "--local refuses an unlisted origin" [ "$rc" != 0 ]
check "its error names the step's path and the origin" \
    grep -q 'journeys\[0\].steps\[2\].path: http://127.0.0.3:1 is not an origin of target or targets' "$WORK/bad.err"

# idle_timeout_ms: a connection to b idle longer than 100 ms is closed, so each request after
# a 300 ms think opens a new one.
reset_targets
cat >"$WORK/idle.json" <<JSON
{"name": "idle", "target": "http://127.0.0.1:$A", "targets": {"auth": "http://127.0.0.2:$B"},
 "duration": "2s", "users": 2, "idle_timeout_ms": 100,
 "journeys": [{"name": "i", "steps": [{"name": "b", "origin": "auth", "path": "/echo"},
                                      {"name": "a", "path": "/echo"}, {"think_ms": 300}]}]}
JSON
a0=$(conns_a) b0=$(conns_b)
timeout 30 "$LC_BIN/loadworker" --local "$WORK/idle.json" --threads 1 --json \
    >"$WORK/idle.out" 2>"$WORK/idle.log" || true
a1=$(conns_a) b1=$(conns_b)
b_reqs=$(stats_b '.by_path["/echo"] // 0')
check "b was asked several times per user" [ "$b_reqs" -ge 6 ]
check "each request to b after an idle 300 ms came on a new connection" \
    [ "$((b1 - b0 - 1))" = "$b_reqs" ]
check "target's own connection stays open between requests" [ "$((a1 - a0 - 1))" = 2 ]

# Through a master and a worker.
reset_targets
start_master master
start_worker w1
check "the worker connects" wait_until 15 workers_connected 1
code=$(curl -s -o "$WORK/bad_api.json" -w '%{http_code}' --max-time 5 -X POST \
    --data-binary @"$WORK/bad.json" "$API/api/v1/runs")
check "an unlisted origin gets 400" [ "$code" = 400 ]
check "the error names the step's path" \
    grep -q 'journeys\[0\].steps\[2\].path: http://127.0.0.3:1 is not an origin' "$WORK/bad_api.json"
check "no run was created" [ "$(curl -sf "$API/api/v1/runs" | jq '.runs | length')" = 0 ]
scenario master 4
id=$(submit_run "$WORK/master.json")
check "the run was accepted" [ -n "$id" ]
check "run finished" wait_until 30 run_state_is "$id" finished
curl -sf "$API/api/v1/runs/$id" >"$WORK/run.json"
check_counts "$WORK/run.json" 4

finish
