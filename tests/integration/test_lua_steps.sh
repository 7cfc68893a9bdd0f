#!/usr/bin/env bash
# Lua steps through one master and two workers against lc_target: a scripted login (POST
# /login with JSON, the token read from the answer) and GET /me with the Bearer token and
# the session cookie, mixed with a declarative step that uses the variables the script set;
# every count of the run equals lc_target's own per path. A script with a syntax error (or
# naming a missing function) is refused with its line and creates nothing; a script error at
# run time is counted as kind script, a failed check as kind check; a function that loops
# forever is cut by the CPU deadline, counted, and a second journey of the same run goes on.
# The first message of each script error reaches the run (API and loadctl show), the checks
# are counted by name in the master, and a checks threshold decides the verdict. The dry run
# (loadctl run --dry-run) traces the scripted scenario's requests and creates nothing.
source "$(dirname "$0")/lib.sh"

start_target
start_master master
start_worker w1
start_worker w2
check "two workers connect" wait_until 15 workers_connected 2

TARGET="http://127.0.0.1:$TARGET_PORT"
path_count() { target_requests ".by_path[\"$1\"] // 0"; }
reset_target() { curl -sf --max-time 2 -X POST "$TARGET/__reset" >/dev/null; }
ep() { jq -r --arg n "$2" '[.endpoints[] | select(.name == $n) | .requests] | add // 0' "$1"; }
errors_of() { jq -r --arg e "$2" --arg k "$3" '[.errors[] | select(.endpoint == $e and .kind == $k) | .count] | add // 0' "$1"; }
# post_runs FILE OUT: POST /api/v1/runs; prints the HTTP status, the answer in OUT.
post_runs() { curl -s -o "$2" -w '%{http_code}' --max-time 10 -X POST --data-binary @"$1" "$API/api/v1/runs"; }
runs_count() { curl -sf --max-time 2 "$API/api/v1/runs" | jq '.runs | length'; }

# ---- a scripted login, the token in u.vars, shared with a declarative step ----
# (script_cpu_ms 50: the deadline counts wall time while the code runs, and a
# loaded CI machine once preempted a 2 ms step; the spin journey below tests it)
cat >"$WORK/shop.lua" <<'LUA'
local json_headers = {["Content-Type"] = "application/json"}

function login(u)
  local user = "user" .. u.id
  local r = http.post("/login", '{"user":"' .. user .. '","password":"pw"}',
                      {name = "login", headers = json_headers})
  check(r.status == 200, "logged in")
  u.vars.token = r.body:match('"token":"([^"]+)"')
  u.vars.n = math.random(1, 3)
end

function me(u)
  local r = http.get("/me", {name = "me", headers = {Authorization = "Bearer " .. u.vars.token}})
  check(r.ok and r.body:find('"user"') ~= nil, "me answers")
  check(r.header("Content-Type") ~= nil, "me has a content type")
end

function verify(u)
  -- count was extracted by the declarative step, from the n the script chose
  check(tonumber(u.vars.count) == u.vars.n, "count is n")
end
LUA
USERS=6
jq -n --rawfile s "$WORK/shop.lua" --arg t "$TARGET" --argjson users "$USERS" '{
  name: "lua-shop", target: $t, duration: "2s", users: $users, spawn_rate: 100,
  script: $s, script_cpu_ms: 50,
  journeys: [{name: "scripted",
    on_start: [{lua: "login", endpoints: ["login"]}],
    steps: [{lua: "me", endpoints: ["me"]},
            {name: "items", path: "/items", query: {n: "${n}"},
             headers: {Authorization: "Bearer ${token}"},
             extract: {count: {json: "$.count"}}},
            {lua: "verify"},
            {think_ms: 20}]}]}' >"$WORK/shop.json"

curl -s -o "$WORK/validate.json" -w '%{http_code}' --max-time 10 -X POST \
    --data-binary @"$WORK/shop.json" "$API/api/v1/scenarios/validate" >"$WORK/validate.code"
check "the scripted scenario validates" [ "$(cat "$WORK/validate.code")" = 200 ]
code=$(post_runs "$WORK/shop.json" "$WORK/shop.created")
check "the scripted run is created" [ "$code" = 201 ]
id=$(jq -r .id "$WORK/shop.created")
check "the scripted run finishes" wait_until 40 run_state_is "$id" finished
curl -sf --max-time 5 "$API/api/v1/runs/$id" >"$WORK/shop.run.json"
check "login ran once per user (on_start)" [ "$(path_count /login)" = "$USERS" ]
for step in login me items; do
    check "$step's count equals the target's" [ "$(ep "$WORK/shop.run.json" "$step")" = "$(path_count "/$step")" ]
done
check "the scripted requests were made" [ "$(ep "$WORK/shop.run.json" me)" -gt 20 ]
check "no request failed (the token, the cookie and u.vars reached each request)" \
    [ "$(jq '.totals.failures' "$WORK/shop.run.json")" = 0 ]
check "no check failed and no script error" \
    jq -e '[.errors[] | select(.kind == "check" or .kind == "script")] | length == 0' "$WORK/shop.run.json"
check "request totals equal the target's count exactly" \
    [ "$(jq '.totals.requests' "$WORK/shop.run.json")" = "$(target_requests)" ]

# The same scenario on one machine: the checks by name, passed and failed.
reset_target
jq '.duration = "2s" | .users = 2' "$WORK/shop.json" >"$WORK/shop-local.json"
timeout 30 "$LC_BIN/loadworker" --local "$WORK/shop-local.json" --threads 1 --json \
    --log-level warn >"$WORK/shop-local.out" 2>"$WORK/shop-local.log" || true
check "--local counts each check by name" jq -e '
  ([.checks[] | select(.name == "logged in") | .passed] | add) == 2 and
  ([.checks[] | .failed] | add) == 0 and
  ([.checks[] | select(.name == "count is n") | .passed] | add) > 0' "$WORK/shop-local.out"

# ---- the dry run: the master checks the scripted scenario, a local loadworker traces one user ----
# One user, one iteration: on_start's login, then me, items and verify, each request traced
# with its answer, and nothing created in the cluster.
reset_target
before=$(runs_count)
set +e
timeout 30 "$LC_BIN/loadctl" --master "$API" run --dry-run "$WORK/shop.json" >"$WORK/dry.out" 2>&1
dry_rc=$?
set -e
log "dry run: $(tr '\n' '|' <"$WORK/dry.out" | cut -c1-1500)"
check "loadctl run --dry-run of the scripted scenario exits 0" [ "$dry_rc" = 0 ]
check "the trace shows the script's login and its answer" \
    grep -Pzq 'lua login\(\)\n.*POST /login HTTP/1.1\n *-> 200' "$WORK/dry.out"
check "the trace shows the script's GET /me and its answer" \
    grep -Pzq 'lua me\(\)\n.*GET /me HTTP/1.1\n *-> 200' "$WORK/dry.out"
check "the trace shows the declarative step with the n the script chose" \
    grep -Eq 'GET /items\?n=[123] HTTP/1.1' "$WORK/dry.out"
check "the trace shows its one iteration done" grep -q 'iteration done' "$WORK/dry.out"
check "the dry run created no run" [ "$(runs_count)" = "$before" ]
dry_counts() { [ "$(target_requests)" = 3 ] && [ "$(path_count /login)" = 1 ] &&
               [ "$(path_count /me)" = 1 ] && [ "$(path_count /items)" = 1 ]; }
check "the dry run sent its three requests, one of each (login, me, items)" dry_counts

# ---- refused before a run exists ----
# The shop's script with one bad line after its last: the error names that line.
printf '%s\n  local x = = 1\n' "$(cat "$WORK/shop.lua")" >"$WORK/syntax.lua"
bad_line=$(wc -l <"$WORK/syntax.lua")
jq --rawfile s "$WORK/syntax.lua" '.script = $s' "$WORK/shop.json" >"$WORK/syntax.json"
before=$(runs_count)
code=$(post_runs "$WORK/syntax.json" "$WORK/syntax.out")
log "syntax error: $(cat "$WORK/syntax.out")"
check "a script with a syntax error gets 400" [ "$code" = 400 ]
check "the error gives the script's line ($bad_line)" \
    grep -q "script:$bad_line: unexpected symbol near '='" "$WORK/syntax.out"
code=$(curl -s -o "$WORK/syntax.validate" -w '%{http_code}' --max-time 10 -X POST \
    --data-binary @"$WORK/syntax.json" "$API/api/v1/scenarios/validate")
refused_with() { [ "$1" = 400 ] && grep -q "$2" "$3"; }
check "validate refuses it the same way" refused_with "$code" "script:$bad_line: unexpected" \
    "$WORK/syntax.validate"
# A declarative step using a variable the script never names as u.vars.x: the dataflow check.
sed 's/u\.vars\.n\b/n_local/g' "$WORK/shop.lua" >"$WORK/unset.lua"
jq --rawfile s "$WORK/unset.lua" '.script = $s' "$WORK/shop.json" >"$WORK/unset.json"
code=$(post_runs "$WORK/unset.json" "$WORK/unset.out")
check "a variable neither a step nor the script sets is refused" refused_with "$code" \
    'journeys\[0\].steps\[1\]: uses ${n}, which no step sets (by set, extract, foreach or a lua step' \
    "$WORK/unset.out"
jq '.journeys[0].steps[0].lua = "mee"' "$WORK/shop.json" >"$WORK/missing.json"
code=$(post_runs "$WORK/missing.json" "$WORK/missing.out")
check "a step naming a missing function gets 400" [ "$code" = 400 ]
check "the error names the step and the function" \
    grep -q 'journeys\[0\].steps\[0\].lua: no function named mee' "$WORK/missing.out"
jq '.journeys[0].steps[0] = {"lua": "me", "nope": 1}' "$WORK/shop.json" >"$WORK/field.json"
code=$(post_runs "$WORK/field.json" "$WORK/field.out")
check "an unknown field of a lua step gets 400 naming it" refused_with "$code" 'steps\[0\].nope' "$WORK/field.out"
check "no run was created by the refused scenarios" [ "$(runs_count)" = "$before" ]

# ---- errors at run time, and a loop cut by the CPU deadline ----
reset_target
cat >"$WORK/broken.lua" <<'LUA'
function broken(u)
  local r = http.get("/echo", {name = "echo"})
  check(r.status == 201, "created")
  local missing = nil
  return missing.field
end

function spin(u)
  while true do end
end

function steady(u)
  local r = http.get("/items/1", {name = "item"})
  check(r.ok, "item")
end
LUA
jq -n --rawfile s "$WORK/broken.lua" --arg t "$TARGET" '{
  name: "lua-errors", target: $t, duration: "3s", users: 30, spawn_rate: 300, think_time_ms: 50,
  script: $s,
  thresholds: {"checks{check:item}": ["rate>0.99"], "checks{check:created}": ["rate>0.5"]},
  journeys: [{name: "broken", steps: [{lua: "broken", endpoints: ["echo"]}, {think_ms: 50}]},
             {name: "spin", steps: [{lua: "spin"}, {think_ms: 50}]},
             {name: "steady", steps: [{lua: "steady", endpoints: ["item"]}, {think_ms: 20}]}]}' \
    >"$WORK/errors.json"
code=$(post_runs "$WORK/errors.json" "$WORK/errors.created")
check "the run with failing scripts is created" [ "$code" = 201 ]
eid=$(jq -r .id "$WORK/errors.created")
start_s=$SECONDS
check "it finishes on time (no loop was held)" wait_until 40 run_state_is "$eid" finished
took_s=$((SECONDS - start_s))
check "within its 3 s and the stop's grace (${took_s} s)" [ "$took_s" -lt 25 ]
curl -sf --max-time 5 "$API/api/v1/runs/$eid" >"$WORK/errors.run.json"
log "errors: $(jq -c .errors "$WORK/errors.run.json")"
echoes=$(ep "$WORK/errors.run.json" echo)
check "the failing function's requests count as the target's" [ "$echoes" = "$(path_count /echo)" ]
# Once per run of the function; a user whose request the run's end found in flight is not
# resumed (it winds down), so up to one per user is missing.
within_users() { [ "$1" -le "$2" ] && [ "$1" -ge $(($2 - 30)) ] && [ "$1" -gt 0 ]; }
check "a script error is counted as kind script, once per run of the function" \
    within_users "$(errors_of "$WORK/errors.run.json" "lua broken" script)" "$echoes"
check "a failed check is counted as kind check" \
    within_users "$(errors_of "$WORK/errors.run.json" "lua broken" check)" "$echoes"
check "the endless loop was cut by the deadline and counted as kind script" \
    [ "$(errors_of "$WORK/errors.run.json" "lua spin" script)" -gt 0 ]
items=$(ep "$WORK/errors.run.json" item)
check "the steady journey kept running beside it ($items requests)" [ "$items" -gt 50 ]
check "its count equals the target's" [ "$items" = "$(path_count /items/:id)" ]
check "its checks passed" [ "$(errors_of "$WORK/errors.run.json" "lua steady" check)" = 0 ]
# Why did my script fail: the first message per (endpoint, kind) is kept with the run.
first_of() { jq -r --arg e "$2" --arg k "$3" '.errors[] | select(.endpoint == $e and .kind == $k) | .first_message // ""' "$1"; }
log "first messages: $(jq -c '[.errors[] | {endpoint, kind, first_message}]' "$WORK/errors.run.json")"
check "the first script error is kept with its step and line" \
    grep -q 'journeys\[0\].steps\[0\]: script:5: attempt to index' <<<"$(first_of "$WORK/errors.run.json" "lua broken" script)"
check "the deadline's message is kept for the endless loop" \
    grep -q 'more than 2 ms of CPU' <<<"$(first_of "$WORK/errors.run.json" "lua spin" script)"
check "a failed check keeps its name as the first message" \
    grep -q 'journeys\[0\].steps\[0\]: check "created" failed' <<<"$(first_of "$WORK/errors.run.json" "lua broken" check)"
curl -sf --max-time 10 "$API/api/v1/runs/$eid/report.html" >"$WORK/errors.report.html"
check "report.html shows the first message, escaped" \
    grep -q "script:5: attempt to index local &#39;missing&#39;\|script:5: attempt to index local &apos;missing&apos;" "$WORK/errors.report.html"
check "report.html has the checks table" grep -q '<h2>Checks</h2>' "$WORK/errors.report.html"
ctl_show() { timeout 10 "$LC_BIN/loadctl" --master "$API" show "$1"; }
ctl_show "$eid" >"$WORK/errors.show" 2>&1 || true
check "loadctl show prints the first message" grep -q 'first script error on lua broken: .*script:5:' "$WORK/errors.show"
check "loadctl show prints the checks" grep -q '^Checks:' "$WORK/errors.show"
# The checks by name reach the master: "created" always fails, "item" always passes.
check_count() { jq -r --arg n "$2" --arg f "$3" '[.checks[] | select(.name == $n) | .[$f]] | add // 0' "$1"; }
check "every check(created) failed, once per error of kind check" \
    [ "$(check_count "$WORK/errors.run.json" created failed)" = "$(errors_of "$WORK/errors.run.json" "lua broken" check)" ]
check "and none passed" [ "$(check_count "$WORK/errors.run.json" created passed)" = 0 ]
check "check(item) passed once per answered request" \
    within_users "$(check_count "$WORK/errors.run.json" item passed)" "$items"
check "a checks threshold fails the run" jq -e '.verdict == "fail" and
  ([.thresholds[] | select(.endpoint == "check:created") | .passed] == [false]) and
  ([.thresholds[] | select(.endpoint == "check:item") | .passed] == [true])' "$WORK/errors.run.json"
check "the workers logged the deadline" grep -q 'more than 2 ms of CPU without yielding' "$WORK/w1.log" "$WORK/w2.log"

finish
