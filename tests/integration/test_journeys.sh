#!/usr/bin/env bash
# Journeys through one master and two workers against lc_target: on_start runs once per
# user and on_stop once per user at the end, every step's count equals what the target
# served on its path, iterations and groups are series of their own that stay out of the
# request totals, and a journey that uses a variable no step sets is refused with its JSON
# path and creates nothing.
source "$(dirname "$0")/lib.sh"

start_target
start_master master
start_worker w1
start_worker w2
check "two workers connect" wait_until 15 workers_connected 2

USERS=8
rows=$(for i in $(seq 1 $USERS); do printf '{"user": "user%d", "password": "pw%d"},' "$i" "$i"; done)
cat >"$WORK/journey.json" <<JSON
{"name": "journeys", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "2s",
 "users": $USERS, "spawn_rate": 100,
 "feeders": {"acc": {"rows": [${rows%,}], "mode": "per_user", "on_exhausted": "stop_user"}},
 "journeys": [{"name": "buyer",
   "on_start": [{"name": "login", "method": "POST", "path": "/login?token_len=300",
                 "json": {"user": "\${acc.user}", "password": "\${acc.password}"},
                 "expect": {"status": [200]}, "extract": {"token": {"json": "$.token"}}},
                {"name": "hello", "path": "/hello/\${acc.user}"}],
   "steps": [
     {"name": "me", "path": "/me", "headers": {"Authorization": "Bearer \${token}"},
      "expect": {"status": [200], "body_contains": "user"}},
     {"set": {"k": "\${rand(1,3)}"}},
     {"name": "items", "path": "/items", "query": {"n": "\${k}"},
      "extract": {"ids": {"json": "$.items[*].id", "pick": "all"},
                  "count": {"json": "$.count"}}},
     {"foreach": "\${ids}", "as": "id", "steps": [{"name": "item", "path": "/items/\${id}"}]},
     {"if": "\${count} > 1", "then": [{"name": "chain", "path": "/redirect/2"}],
      "else": [{"name": "short", "path": "/redirect/0"}]},
     {"repeat": 2, "steps": [{"name": "echo", "path": "/echo?c=\${count}"}]},
     {"group": "checkout", "steps": [
       {"name": "cart", "method": "POST", "path": "/cart", "json": {"id": "\${count}"},
        "expect": {"status": [201]}},
       {"name": "pay", "method": "POST", "path": "/pay", "form": {"amount": "\${count}"}},
       {"think_ms": 20}]}],
   "on_stop": [{"name": "logout", "method": "POST", "path": "/logout"}]}],
 "thresholds": {"iteration_duration": ["p(95)<10000"],
                "group_duration{group:checkout}": ["min>=19", "p(50)<5000"],
                "http_req_duration{endpoint:pay}": ["p(99)<5000"]}}
JSON

# A variable no step sets: 400 naming the step, and no run.
bad=$(jq '.journeys[0].steps[0].path = "/me/${nope}"' "$WORK/journey.json")
code=$(curl -s -o "$WORK/bad.json" -w '%{http_code}' --max-time 5 -X POST --data-binary "$bad" "$API/api/v1/runs")
check "a journey using an unset variable gets 400" [ "$code" = 400 ]
check "the error names the step and the variable" \
    grep -q 'journeys\[0\].steps\[0\]: uses ${nope}' "$WORK/bad.json"
check "no run was created" [ "$(curl -sf "$API/api/v1/runs" | jq '.runs | length')" = 0 ]

# loadctl validate: the example journeys (YAML) with their journeys, variables and feeders.
set +e
timeout 10 "$LC_BIN/loadctl" --master "$API" validate "$LC_SRC/deploy/examples/journey-shop.yaml" \
    >"$WORK/validate.out" 2>&1
validate_rc=$?
set -e
check "loadctl validate accepts the example journeys" [ "$validate_rc" = 0 ]
check "it lists both journeys" grep -q '^  journeys    2' "$WORK/validate.out"
check "it lists the variables the steps set" grep -Eq '^  variables   [0-9]+  .*token' "$WORK/validate.out"
check "it lists the feeder" grep -q '^    accounts  2 rows, per_user, sequential, on_exhausted stop_user' "$WORK/validate.out"
check "it says where each variable is set" \
    grep -q '^    token  *extract journeys\[0\]\.on_start\[0\]\.extract\.token$' "$WORK/validate.out"
check "it says a feeder sets its columns" grep -q '^    accounts\.password  *feeder feeders\.accounts$' "$WORK/validate.out"
fleet_cap=$(curl -sf "$API/api/v1/workers" | jq '[.workers[] | select(.connected) | .effective_capacity] | add')
check "it weighs the users' memory against what the two workers grant now" \
    grep -Eq "^  capacity    500 users \(~[0-9.]+ [KMG]iB\) of $fleet_cap the fleet grants now \(~[0-9.]+ [KMG]iB, 2 workers\): fits$" "$WORK/validate.out"

lacks() { ! grep -q "$1" "$2"; }

# The dry run: the master checks the scenario, a local loadworker traces one user.
set +e
timeout 30 "$LC_BIN/loadctl" --master "$API" run --dry-run "$WORK/journey.json" >"$WORK/dry.out" 2>&1
dry_rc=$?
set -e
check "loadctl run --dry-run exits 0" [ "$dry_rc" = 0 ]
check "the trace shows the login request and its answer" \
    grep -Pzq 'POST /login\?token_len=300 HTTP/1.1\n *-> 200' "$WORK/dry.out"
check "the trace shows the extracted token (300 bytes)" grep -q 'token = "t1\..*(300 bytes)' "$WORK/dry.out"
# k decides between the chain (/redirect/2, two hops) and the short /redirect/0.
check "the trace shows the branch taken and its hops" grep -Eq '(redirect) GET /redirect/1|GET /redirect/0' "$WORK/dry.out"
check "the trace ends with on_stop's logout" grep -q 'POST /logout' "$WORK/dry.out"
check "a dry run creates no run" [ "$(curl -sf "$API/api/v1/runs" | jq '.runs | length')" = 0 ]
# A feeder's secret column (by name: password) never shows in the trace, in the request line
# (raw or url-encoded) or in a value extracted from its echo; the echo proves it went out.
cat >"$WORK/secret.json" <<JSON
{"name": "secret", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "2s", "users": 1,
 "feeders": {"acc": {"rows": [{"user": "carol", "password": "Pa55-w0rd!x"}]}},
 "journeys": [{"name": "s", "steps": [
   {"name": "echo_pw", "method": "POST", "path": "/echo?u=\${acc.user}&raw=\${acc.password}&pw=\${acc.password|url}",
    "body": "\${acc.password}", "expect": {"status": [200], "body_contains": "\"body\":\"Pa55-w0rd!x\""},
    "extract": {"echoed": {"json": "$.body"}}}]}]}
JSON
set +e
timeout 30 "$LC_BIN/loadctl" --master "$API" run --dry-run "$WORK/secret.json" >"$WORK/secret.out" 2>&1
secret_rc=$?
set -e
check "the dry run with a secret column exits 0" [ "$secret_rc" = 0 ]
check "the password never appears in the trace" lacks 'Pa55' "$WORK/secret.out"
check "the request line shows *** where it was (raw and url-encoded)" \
    grep -Fq 'POST /echo?u=carol&raw=***&pw=*** HTTP/1.1' "$WORK/secret.out"
check "the echo held the password: the step's check passed" grep -Pzq 'pw=\*\*\* HTTP/1.1\n *-> 200 in [0-9.]+ ms, [0-9]+ bytes\n' "$WORK/secret.out"
check "a value extracted from the echo is masked" grep -Fq 'echoed = "***"' "$WORK/secret.out"
target_requests '.by_path["/login"]' >"$WORK/dry_logins"
curl -sf -X POST "http://127.0.0.1:$TARGET_PORT/__reset" >/dev/null
check "the dry run logged in once" [ "$(cat "$WORK/dry_logins")" = 1 ]

set +e
timeout 60 "$LC_BIN/loadctl" --master "$API" run "$WORK/journey.json" --wait >"$WORK/loadctl.out" 2>&1
ctl_rc=$?
set -e
check "loadctl run --wait exits 0" [ "$ctl_rc" = 0 ]
id=$(sed -n 's/^run \([0-9]*\) created.*/\1/p' "$WORK/loadctl.out" | head -1)
id=${id:-1}
check "run finished" wait_until 20 run_state_is "$id" finished
curl -sf "$API/api/v1/runs/$id" >"$WORK/run.json"
ep() { jq -r --arg n "$1" '.endpoints[] | select(.name == $n) | .requests' "$WORK/run.json"; }
path_count() { target_requests ".by_path[\"$1\"] // 0"; }
check "login ran once per user" [ "$(path_count /login)" = "$USERS" ]
check "logout (on_stop) ran once per user" [ "$(path_count /logout)" = "$USERS" ]
for step in login me items cart pay logout echo; do
    check "$step's count equals the target's" [ "$(ep "$step")" = "$(path_count "/$step")" ]
done
check "foreach fetched each listed item" [ "$(ep item)" = "$(path_count /items/:id)" ]
hops=$(( $(path_count /redirect/2) + $(path_count /redirect/1) + $(path_count /redirect/0) ))
check "redirect hops are counted as requests of their step" [ "$(( $(ep chain) + $(ep short) ))" = "$hops" ]
check "a chain of 2 redirects ends once per chain" \
    [ "$(path_count /redirect/2)" = "$(path_count /redirect/1)" ]
check "both branches of the if ran" [ "$(ep chain)" -gt 0 -a "$(ep short)" -gt 0 ]
# The run's end cuts each user's last iteration anywhere: after 0, 1 or 2 echoes.
echo_per_pay() { local e=$(ep echo) p=$(ep pay); [ "$e" -ge $((2 * p)) ] && [ "$e" -le $((2 * (p + USERS))) ]; }
check "echo ran twice per iteration (the last one cut by the end)" echo_per_pay
check "the session cookie and the 300-byte token were accepted (no failures)" \
    [ "$(jq '.totals.failures' "$WORK/run.json")" = 0 ]
ours=$(jq '.totals.requests' "$WORK/run.json")
check "request totals equal the target's count exactly" [ "$ours" = "$(target_requests)" ]
# Per-user rows follow ${user_id}, unique in the cluster: each of the 8 rows was taken by
# exactly one user of the two workers.
for i in $(seq 1 $USERS); do
    check "row user$i was used by exactly one user" [ "$(path_count /hello/user$i)" = 1 ]
done
iters=$(ep iteration:buyer)
check "iterations are a series (ITERATION)" \
    jq -e '.endpoints[] | select(.name == "iteration:buyer" and .method == "ITERATION")' "$WORK/run.json"
check "iterations equal the pays that completed them (within users)" \
    [ "$iters" -le "$(ep pay)" -a "$iters" -ge "$(( $(ep pay) - USERS ))" ]
# libuv's timers count from the loop's cached clock, so a 20 ms think may end a little
# under 20 ms of wall time: 19 ms is the floor.
check "group_duration of checkout spans its think time" \
    jq -e '.endpoints[] | select(.name == "group:checkout") | .latency_ms.min >= 19 and .latency_ms.p50 >= 20' "$WORK/run.json"
check "the run's thresholds on iterations, groups and a step passed" \
    jq -e '(.thresholds | length) == 4 and all(.thresholds[]; .passed and .observed != null)' "$WORK/run.json"
check "the group threshold observed the group's shortest duration" \
    jq -e '.thresholds[] | select(.metric == "group_duration" and .expression == "min>=19") | .observed >= 19' "$WORK/run.json"
curl -sf "$API/metrics" >"$WORK/metrics.txt"
metric_sum=$(awk -v run="run=\"$id\"" '/^loadcluster_requests_total/ && index($0, run) { s += $NF } END { print s + 0 }' "$WORK/metrics.txt")
check "/metrics requests equal the run's requests" [ "$metric_sum" = "$ours" ]
check "/metrics has the journey's iteration durations" \
    grep -q "^loadcluster_iteration_duration_seconds_count{run=\"$id\",tenant=\"default\",journey=\"buyer\"} $iters\$" "$WORK/metrics.txt"
check "/metrics has the group's durations" \
    grep -q "^loadcluster_group_duration_seconds_count{run=\"$id\",tenant=\"default\",group=\"checkout\"} " "$WORK/metrics.txt"
check "/metrics has no request series for iterations" lacks 'endpoint="iteration:' "$WORK/metrics.txt"

# on_exhausted stop_run: per-iteration rows split between the two workers; the first worker
# to run out asks the leader to end the run, which finishes long before its 60 s, and no
# row was used twice.
curl -sf -X POST "http://127.0.0.1:$TARGET_PORT/__reset" >/dev/null
csv=$(printf 'sku\\n'; for i in $(seq 1 20); do printf 'p%d\\n' "$i"; done)
cat >"$WORK/exhaust.json" <<JSON
{"name": "exhaust", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "60s", "users": 4,
 "feeders": {"skus": {"csv": "$csv", "mode": "per_iteration", "on_exhausted": "stop_run"}},
 "journeys": [{"name": "e", "steps": [{"name": "row", "path": "/row/\${skus.sku}"},
                                      {"think_ms": 50}]}]}
JSON
start_ms=$(date +%s%3N)
ex_id=$(submit_run "$WORK/exhaust.json")
check "a run whose feeder runs out finishes early" wait_until 30 run_state_is "$ex_id" finished
took_ms=$(( $(date +%s%3N) - start_ms ))
check "it ended by the feeder, not by its duration (${took_ms} ms)" [ "$took_ms" -lt 30000 ]
curl -sf "$API/api/v1/runs/$ex_id" >"$WORK/exhaust_run.json"
check "the run's reason names the feeder" jq -e '.reason | test("feeder skus has no rows left")' "$WORK/exhaust_run.json"
rows=$(target_requests '[.by_path | to_entries[] | select(.key | startswith("/row/")) | .value]')
check "no row was taken twice across the workers" jq -e 'all(. == 1)' <<<"$rows"
check "the rows taken were the feeder's" jq -e 'length >= 10 and length <= 20' <<<"$rows"

# on_stop runs after a failure that stops the user: /me without a token is a 401, its
# on_error stop_user ends each user at once, and every user still logs out.
curl -sf -X POST "http://127.0.0.1:$TARGET_PORT/__reset" >/dev/null
cat >"$WORK/stop_user.json" <<JSON
{"name": "stop-user", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "3s", "users": 5,
 "journeys": [{"name": "a", "on_error": "stop_user",
   "steps": [{"name": "me", "path": "/me"}, {"name": "never", "path": "/never"}],
   "on_stop": [{"name": "logout", "method": "POST", "path": "/logout"}]}]}
JSON
timeout 30 "$LC_BIN/loadworker" --local "$WORK/stop_user.json" --json >"$WORK/stop_user.out" 2>"$WORK/stop_user.log" || true
check "a failing step with on_error stop_user was sent once per user" [ "$(path_count /me)" = 5 ]
check "no step after it ran" [ "$(path_count /never)" = 0 ]
check "on_stop ran after the failure, once per user" [ "$(path_count /logout)" = 5 ]
check "the failures are status errors on the step" \
    jq -e '.endpoints[] | select(.name == "me") | .failures == 5' "$WORK/stop_user.out"

# Redirect rules: 303 turns POST into GET, 307 keeps POST (lc_target's /redirect/0 answers
# "done <METHOD>" to anything but GET), another origin and a loop are errors of kind redirect.
curl -sf -X POST "http://127.0.0.1:$TARGET_PORT/__reset" >/dev/null
cat >"$WORK/redirects.json" <<JSON
{"name": "redirects", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "2s", "users": 1,
 "journeys": [{"name": "r", "on_error": "continue", "steps": [
   {"name": "see-other", "method": "POST", "path": "/redirect/1?code=303", "body": "x",
    "extract": {"m": {"regex": "done (\\\\w+)", "required": false, "default": "GET"}}},
   {"if": "\${m} != 'GET'", "then": [{"name": "wrong-303", "path": "/wrong-303"}]},
   {"name": "temporary", "method": "POST", "path": "/redirect/1?code=307", "body": "x",
    "expect": {"body_contains": "done POST"},
    "extract": {"m2": {"regex": "done (\\\\w+)", "default": "none"}}},
   {"if": "\${m2} != 'POST'", "then": [{"name": "wrong-307", "path": "/wrong-307"}]},
   {"name": "relative", "path": "/redirect/3?rel=1"},
   {"name": "away", "path": "/redirect-away"},
   {"name": "loop", "path": "/redirect-loop", "follow_redirects": 3},
   {"exit": "user"}]}]}
JSON
timeout 30 "$LC_BIN/loadworker" --local "$WORK/redirects.json" --json >"$WORK/redirects.out" 2>"$WORK/redirects.log" || true
errors_of() { jq -r --arg e "$1" --arg k "$2" '[.errors[] | select(.endpoint == $e and .kind == $k) | .count] | add // 0' "$WORK/redirects.out"; }
check "303 turned the POST into a GET" [ "$(path_count /wrong-303)" = 0 -a "$(path_count /redirect/0)" = 3 ]
check "307 kept the POST and its body" \
    jq -e '.endpoints[] | select(.name == "temporary") | .failures == 0' "$WORK/redirects.out"
check "an extract that matched keeps its value, not its default" [ "$(path_count /wrong-307)" = 0 ]
check "relative Locations (../redirect/2, then 1, then ../redirect/0) were followed to the end" \
    sh -c "[ $(path_count /redirect/3) = 1 -a $(path_count /redirect/2) = 1 -a $(path_count /redirect/1) = 3 ] &&
           jq -e '.endpoints[] | select(.name == \"relative\") | .requests == 4 and .failures == 0' '$WORK/redirects.out' >/dev/null"
check "a redirect to another origin is an error of kind redirect" [ "$(errors_of away redirect)" = 1 ]
check "a redirect loop stops after follow_redirects hops" \
    [ "$(errors_of loop redirect)" = 1 -a "$(path_count /redirect-loop)" = 4 ]

# {"reset": "iteration"}: on_start's cookie reaches the first iteration only.
curl -sf -X POST "http://127.0.0.1:$TARGET_PORT/__reset" >/dev/null
cat >"$WORK/reset.json" <<JSON
{"name": "reset", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "2s", "users": 2,
 "defaults": {"cookies": {"reset": "iteration"}},
 "journeys": [{"name": "r",
   "on_start": [{"name": "set", "path": "/setcookie?pref=dark"}],
   "steps": [{"name": "echo", "path": "/echo",
              "extract": {"pref": {"json": "$.cookies.pref", "default": "none"}}},
             {"name": "seen", "path": "/seen/\${pref}"}, {"think_ms": 100}]}]}
JSON
timeout 30 "$LC_BIN/loadworker" --local "$WORK/reset.json" >"$WORK/reset.out" 2>&1 || true
check "the first iteration of each user had on_start's cookie" [ "$(path_count /seen/dark)" = 2 ]
check "later iterations started with an empty jar" [ "$(path_count /seen/none)" -ge 2 ]

# Journeys that never wait on I/O (only set, and loops of them) must not hold the engine's
# loop: the run stops on time, and a request journey beside them goes on. (libuv 1.44 runs a
# 0 ms timer restarted from a timer callback in the same pass; KILL, for TERM needs the loop.)
cat >"$WORK/spin.json" <<JSON
{"name": "spin", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "2s", "users": 6,
 "journeys": [{"name": "sets", "weight": 1, "steps": [{"set": {"a": "1"}}]},
              {"name": "loops", "weight": 1, "steps": [{"repeat": 10000, "steps": [
                 {"repeat": 10000, "steps": [{"set": {"b": "2"}}]}]}]},
              {"name": "echo", "weight": 1, "steps": [{"name": "spin-echo", "path": "/echo"}]}]}
JSON
curl -sf -X POST "http://127.0.0.1:$TARGET_PORT/__reset" >/dev/null
started=$SECONDS
RC=0
timeout -s KILL 20 "$LC_BIN/loadworker" --local "$WORK/spin.json" --threads 1 --json \
    >"$WORK/spin.out" 2>"$WORK/spin.log" || RC=$?
took=$((SECONDS - started))
log "journeys that never wait: exit $RC after $took s, iterations of sets: $(jq '[.endpoints[] | select(.name == "iteration:sets") | .requests] | add // 0' "$WORK/spin.out" 2>/dev/null)"
check "journeys that never wait on I/O do not hold the loop: the 2 s run ends (in $took s)" \
    [ "$RC" = 0 -a "$took" -le 10 ]
check "... and the journey beside them made requests, each counted" \
    sh -c "[ \$(jq '[.endpoints[] | select(.name == \"spin-echo\") | .requests] | add // 0' '$WORK/spin.out') = $(path_count /echo) ] && [ $(path_count /echo) -gt 10 ]"

finish
