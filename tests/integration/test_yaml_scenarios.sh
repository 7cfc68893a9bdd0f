#!/usr/bin/env bash
# YAML scenarios and validation through one master and one worker against
# lc_target: a run submitted as YAML with loadctl completes and stores the
# canonical JSON; bad YAML is refused with its line and column and creates
# nothing; `loadctl validate` on good and bad files (JSON and YAML) prints the
# summary or the error, exits 0 or 1, and creates no run.
source "$(dirname "$0")/lib.sh"

start_target
start_master master
start_worker w1
check "the worker connects" wait_until 15 workers_connected 1
ctl() { timeout 30 "$LC_BIN/loadctl" --master "$API" "$@"; }
run_count() { curl -sf --max-time 5 "$API/api/v1/runs" | jq '.runs | length'; }
# post TYPE FILE [PATH]: POSTs FILE as TYPE; prints the status, the body in $WORK/answer.json.
post() {
    curl -s --max-time 5 -o "$WORK/answer.json" -w '%{http_code}' -H "Content-Type: $1" \
        --data-binary @"$2" "$API${3:-/api/v1/runs}"
}

# Plain scalars typed by YAML 1.2's core schema: 1:30 and NO stay strings
# (the header values), 2.5 is a number, the body block a string.
cat >"$WORK/good.yaml" <<YAML
# a YAML scenario
name: yaml-run
target: http://127.0.0.1:$TARGET_PORT
duration: 2s
users: 4
spawn_rate: 2.5
think_time_ms: [10, 20]
tasks:
  - name: home
    weight: 3
    path: /home
    headers:
      X-Time: 1:30
      X-Country: NO
  - name: post
    method: POST
    path: /post
    body: |-
      {"u": "\${user_id}"}
    expect: {status: [200]}
thresholds:
  http_req_failed: [rate<0.5]
YAML
canonical='{"name":"yaml-run","target":"http://127.0.0.1:'$TARGET_PORT'","duration":"2s","users":4,"spawn_rate":2.5,"think_time_ms":[10,20],"tasks":[{"name":"home","weight":3,"path":"/home","headers":{"X-Time":"1:30","X-Country":"NO"}},{"name":"post","method":"POST","path":"/post","body":"{\"u\": \"${user_id}\"}","expect":{"status":[200]}}],"thresholds":{"http_req_failed":["rate<0.5"]}}'
echo "$canonical" | jq . >"$WORK/good.json"

# Line 6: "users" again.
printf 'name: bad\ntarget: http://127.0.0.1:%s\nduration: 2s\ntasks:\n  - path: /\nusers: 1\nusers: 2\n' \
    "$TARGET_PORT" >"$WORK/dup.yaml"
printf 'name: bad\ntarget: http://127.0.0.1:%s\ntasks: [{path: /, method: [GET}]\n' "$TARGET_PORT" >"$WORK/syntax.yaml"
jq '.tasks[1].method = "FETCH"' "$WORK/good.json" >"$WORK/bad.json"
# Valid YAML, refused by the scenario's validation: the method at line 16, column 13; a
# journey's while without its bound (the step's mapping at line 8, column 9).
sed 's/method: POST/method: FETCH/' "$WORK/good.yaml" >"$WORK/semantic.yaml"
printf 'name: j\ntarget: http://127.0.0.1:%s\nduration: 2s\njourneys:\n  - name: j\n    steps:\n      - path: /a\n      - while: "true"\n        steps: [{path: /b}]\n' \
    "$TARGET_PORT" >"$WORK/unbounded.yaml"

check "no run yet" [ "$(run_count)" = 0 ]

# ---- validate ----
set +e
ctl validate "$WORK/good.yaml" >"$WORK/v-good-yaml.out" 2>&1; rc_good_yaml=$?
ctl validate "$WORK/good.json" >"$WORK/v-good-json.out" 2>&1; rc_good_json=$?
ctl validate "$WORK/dup.yaml" >"$WORK/v-dup.out" 2>&1; rc_dup=$?
ctl validate "$WORK/bad.json" >"$WORK/v-bad-json.out" 2>&1; rc_bad_json=$?
ctl validate "$WORK/semantic.yaml" >"$WORK/v-semantic.out" 2>&1; rc_semantic=$?
ctl --json validate "$WORK/good.yaml" >"$WORK/v-json.out" 2>&1; rc_json=$?
set -e
check "validate good.yaml exits 0" [ "$rc_good_yaml" = 0 ]
check "validate prints the scenario's name" grep -q '^scenario yaml-run is valid' "$WORK/v-good-yaml.out"
check "validate prints the endpoint table" \
    grep -Eq '^ +home +GET +3 +/home$' "$WORK/v-good-yaml.out"
check "validate prints the POST endpoint" grep -Eq '^ +post +POST +1 +/post$' "$WORK/v-good-yaml.out"
check "validate prints the thresholds" grep -q 'http_req_failed rate<0.5' "$WORK/v-good-yaml.out"
check "validate prints the model" grep -q 'closed: 4 users, for 2s' "$WORK/v-good-yaml.out"
check "validate prints the bytes per idle user" grep -Eq '~[0-9]+ bytes per idle user' "$WORK/v-good-yaml.out"
check "validate good.json exits 0 with the same summary" \
    [ "$rc_good_json" = 0 -a "$(cat "$WORK/v-good-json.out")" = "$(cat "$WORK/v-good-yaml.out")" ]
check "validate dup.yaml exits 1" [ "$rc_dup" = 1 ]
check "its error names the key, line and column" \
    grep -q 'loadctl: 400: scenario: duplicate key "users" (line 7, column 1)' "$WORK/v-dup.out"
check "validate semantic.yaml exits 1" [ "$rc_semantic" = 1 ]
check "its error names the JSON path, line and column" \
    grep -q 'loadctl: 400: tasks\[1\].method: .* (line 16, column 13)$' "$WORK/v-semantic.out"
check "validate bad.json exits 1" [ "$rc_bad_json" = 1 ]
check "its error names tasks[1].method" grep -q 'loadctl: 400: tasks\[1\].method' "$WORK/v-bad-json.out"
check "validate --json exits 0" [ "$rc_json" = 0 ]
check "and prints the API's answer" \
    jq -e '.valid == true and .summary.endpoints[1].method == "POST"' "$WORK/v-json.out"
check "the answer's scenario is the canonical JSON" \
    [ "$(jq -c .scenario "$WORK/v-json.out")" = "$canonical" ]
check "the summary's shape" jq -e '.summary | .model == "closed" and .users == 4 and
    .arrival_rate == null and .duration_ms == 2000 and .stages == 0 and .tenant == "default" and
    (.thresholds == ["http_req_failed rate<0.5"]) and .bytes_per_idle_user > 800 and
    .bytes_per_idle_user == (.bytes_per_idle_user_parts | add)' "$WORK/v-json.out"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$API/api/v1/scenarios/validate")
check "GET on validate is 405" [ "$code" = 405 ]
check "validating created no run" [ "$(run_count)" = 0 ]

# A tenant token validates for its tenant: the summary names it.
ctl tenants add team-a >/dev/null
tenant_token=$(ctl --json tokens add tenant team-a | jq -r .token)
check "a tenant token's validation runs for its tenant" \
    [ "$(LOADCTL_TOKEN=$tenant_token ctl --json validate "$WORK/good.yaml" | jq -r .summary.tenant)" = team-a ]
{ echo "tenant: default"; cat "$WORK/good.yaml"; } >"$WORK/foreign.yaml"
set +e
LOADCTL_TOKEN=$tenant_token ctl validate "$WORK/foreign.yaml" >"$WORK/v-foreign.out" 2>&1; rc_foreign=$?
set -e
check "a tenant token may not validate YAML naming another tenant" [ "$rc_foreign" = 1 ]
check "it is told why (403)" grep -q "loadctl: 403: forbidden: a token of tenant 'team-a' cannot create runs for tenant 'default'" "$WORK/v-foreign.out"

# ---- refused YAML: 400 with the position, and no run ----
code=$(post 'application/yaml; charset=utf-8' "$WORK/dup.yaml")
check "a duplicate key is a 400" [ "$code" = 400 ]
check "the error body names the key, line and column" \
    [ "$(jq -r .error "$WORK/answer.json")" = 'scenario: duplicate key "users" (line 7, column 1)' ]
code=$(post text/yaml "$WORK/syntax.yaml")
check "a YAML syntax error is a 400" [ "$code" = 400 ]
check "with libyaml's problem and position" \
    grep -q 'tasks\[0\].method\[1\]: YAML syntax error: .* (line 3, column 31)' "$WORK/answer.json"
code=$(post application/x-yaml "$WORK/bad.json" /api/v1/scenarios/validate)
check "JSON sent as YAML is read as YAML: 400 at the bad field" [ "$code" = 400 ]
check "naming tasks[1].method" grep -q 'tasks\[1\].method' "$WORK/answer.json"
code=$(post application/yaml "$WORK/unbounded.yaml")
check "a while without max in YAML is a 400" [ "$code" = 400 ]
check "naming the JSON path and the step's line and column" \
    jq -e '.error | startswith("journeys[0].steps[1].max: required") and endswith("(line 8, column 9)")' \
    "$WORK/answer.json"
code=$(post text/plain "$WORK/good.yaml")
check "YAML under another content type is read as JSON, as before: 400" [ "$code" = 400 ]
check "saying invalid JSON" grep -q 'scenario: invalid JSON' "$WORK/answer.json"
check "the refused scenarios created no run" [ "$(run_count)" = 0 ]

# ---- a run submitted as YAML ----
set +e
ctl run "$WORK/good.yaml" --wait >"$WORK/run.out" 2>&1; rc_run=$?
set -e
check "loadctl run good.yaml --wait exits 0" [ "$rc_run" = 0 ]
id=$(sed -n 's/^run \([0-9]*\) created.*/\1/p' "$WORK/run.out" | head -1)
check "one run was created" [ -n "$id" -a "$(run_count)" = 1 ]
id=${id:-1}
check "the run finished" run_state_is "$id" finished
curl -sf --max-time 5 "$API/api/v1/runs/$id/report.json" >"$WORK/report.json"
check "the stored scenario is the canonical JSON" [ "$(jq -c .scenario "$WORK/report.json")" = "$canonical" ]
ours=$(jq '.totals.requests' "$WORK/report.json")
check "its requests reached the target (history $ours, target $(target_requests))" \
    [ "$ours" -gt 0 -a "$ours" = "$(target_requests)" ]

finish
