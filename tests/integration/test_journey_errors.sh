#!/usr/bin/env bash
# Journeys' own error kinds through a master and a worker against lc_target, each provoked on
# purpose and counted exactly: extract (a required JSON field the answer lacks), template (a
# header whose value renders a CR LF from a variable), redirect (a loop past the hop limit).
# Each count is compared with lc_target's per-path count in the run (GET /api/v1/runs/N),
# report.json, report.csv, failures.csv, the history and /metrics (errors_total by kind).
# Then cookies: a step with "cookies": false sends no Cookie header (lc_target's /echo says what it received).
source "$(dirname "$0")/lib.sh"

start_target
start_master master
start_worker w1
check "a worker connects" wait_until 15 workers_connected 1

# ITERS iterations in all (a per-iteration feeder that stops its user), every step on
# on_error continue, so each iteration meets each error once; the run outlasts them.
ITERS=10
HOPS=3
csv=$(printf 'n\\n'; for i in $(seq 1 $ITERS); do printf '%d\\n' "$i"; done)
cat >"$WORK/errors.json" <<JSON
{"name": "error-kinds", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "3s",
 "users": 2, "spawn_rate": 100,
 "feeders": {"it": {"csv": "$csv", "mode": "per_iteration", "on_exhausted": "stop_user"}},
 "journeys": [{"name": "errs", "on_error": "continue", "steps": [
   {"name": "missing", "path": "/items", "query": {"n": "1"},
    "extract": {"x": {"json": "$.missing"}}},
   {"set": {"bad": "a\r\nX-Injected: 1"}},
   {"name": "badhdr", "path": "/echo", "headers": {"X-Bad": "\${bad}"}},
   {"name": "loop", "path": "/redirect-loop", "follow_redirects": $HOPS}]}]}
JSON
id=$(submit_run "$WORK/errors.json")
check "run created" test "${id:-0}" -gt 0
id=${id:-1}
R="$API/api/v1/runs/$id"
check "run finished" wait_until 30 run_state_is "$id" finished

served() { target_requests ".by_path[\"$1\"] // 0"; }
log "target: $(target_requests '.by_path')"
check "lc_target served one /items per iteration" [ "$(served /items)" = "$ITERS" ]
check "lc_target served no /echo: the bad header never left" [ "$(served /echo)" = 0 ]
check "lc_target served 1 + $HOPS requests per redirect loop" \
    [ "$(served /redirect-loop)" = "$((ITERS * (HOPS + 1)))" ]

# The kinds, each on its step, as many as the target's counts say.
curl -sf "$R" >"$WORK/run.json"
curl -sf "$R/report.json" >"$WORK/report.json"
log "errors: $(jq -c .errors "$WORK/run.json")"
kind_count() { jq --arg e "$2" --arg k "$3" '[.errors[] | select(.endpoint == $e and .kind == $k) | .count] | add // 0' "$1"; }
want_extract=$(served /items)
want_redirect=$(( $(served /redirect-loop) / (HOPS + 1) ))
for doc in run report; do
    check "$doc: missing has $want_extract extract errors" \
        [ "$(kind_count "$WORK/$doc.json" missing extract)" = "$want_extract" ]
    check "$doc: badhdr has $ITERS template errors" \
        [ "$(kind_count "$WORK/$doc.json" badhdr template)" = "$ITERS" ]
    check "$doc: loop has $want_redirect redirect errors" \
        [ "$(kind_count "$WORK/$doc.json" loop redirect)" = "$want_redirect" ]
    check "$doc: no other error" \
        [ "$(jq '[.errors[].count] | add' "$WORK/$doc.json")" = "$((want_extract + ITERS + want_redirect))" ]
done
ep() { jq -r --arg n "$1" ".endpoints[] | select(.name == \$n) | .$2" "$WORK/run.json"; }
check "missing: requests equal the target's /items" [ "$(ep missing requests)" = "$(served /items)" ]
check "loop: requests equal the target's /redirect-loop (hops counted on the step)" \
    [ "$(ep loop requests)" = "$(served /redirect-loop)" ]
for e in missing:$want_extract loop:$want_redirect; do
    check "${e%:*}: failures equal its errors" [ "$(ep "${e%:*}" failures)" = "${e#*:}" ]
done
# A template error sends nothing (worker/journey_http.c): it is an error of the step, not a
# request nor a failed one, so it shows only where errors are listed by kind (above).
check "badhdr: no request and no failure counted (nothing was sent)" \
    [ "$(ep badhdr requests):$(ep badhdr failures)" = 0:0 ]

# report.csv (Locust's stats: a Failure Count, no kinds), the history (failures a second, no
# kinds) and /metrics (failures_total per endpoint, no kinds) agree per endpoint.
curl -sf "$R/report.csv" >"$WORK/report.csv"
csv_failures() { python3 -c 'import csv,sys
for r in csv.DictReader(open(sys.argv[1])):
    if r["Name"] == sys.argv[2]: print(r["Failure Count"])' "$WORK/report.csv" "$1"; }
hist_failures() { curl -sf "$R/history?endpoint=$1" | jq '[.seconds[].failures] | add // 0'; }
curl -sf "$API/metrics" >"$WORK/metrics.txt"
metric() { # FAMILY ENDPOINT: the value of that series of run $id
    awk -v run="run=\"$id\"" -v ep="endpoint=\"$2\"" -v fam="$1{" \
        'index($0, fam) == 1 && index($0, run) && index($0, ep) { print $NF }' "$WORK/metrics.txt"
}
for e in missing:$want_extract loop:$want_redirect badhdr:0; do
    check "report.csv: ${e%:*}'s Failure Count is ${e#*:}" [ "$(csv_failures "${e%:*}")" = "${e#*:}" ]
    check "history: ${e%:*}'s failures add up to ${e#*:}" [ "$(hist_failures "${e%:*}")" = "${e#*:}" ]
    check "/metrics: ${e%:*}'s failures_total is ${e#*:}" \
        [ "$(metric loadcluster_failures_total "${e%:*}")" = "${e#*:}" ]
done

# The kinds themselves: failures.csv (Locust's failures CSV: Method, Name, Error, Occurrences)
# and /metrics' errors_total{kind}, one row or series per (endpoint, kind), nothing else.
curl -sf "$R/failures.csv" >"$WORK/failures.csv"
check "failures.csv has Locust's header" [ "$(head -1 "$WORK/failures.csv" | tr -d '\r')" = "Method,Name,Error,Occurrences" ]
csv_kind() { python3 -c 'import csv,sys
n = [r["Occurrences"] for r in csv.DictReader(open(sys.argv[1])) if r["Name"] == sys.argv[2] and r["Error"] == sys.argv[3]]
print(n[0] if len(n) == 1 else "rows=%d" % len(n))' "$WORK/failures.csv" "$1" "$2"; }
kind_metric() { # ENDPOINT KIND
    awk -v run="run=\"$id\"" -v ep="endpoint=\"$1\"" -v kind="kind=\"$2\"" \
        'index($0, "loadcluster_errors_total{") == 1 && index($0, run) && index($0, ep) && index($0, kind) { print $NF }' "$WORK/metrics.txt"
}
for e in missing:extract:$want_extract badhdr:template:$ITERS loop:redirect:$want_redirect; do
    IFS=: read -r name kind want <<<"$e"
    check "failures.csv: $name has $want $kind errors" [ "$(csv_kind "$name" "$kind")" = "$want" ]
    check "/metrics: errors_total{endpoint=$name,kind=$kind} is $want" [ "$(kind_metric "$name" "$kind")" = "$want" ]
done
check "failures.csv: no other row" [ "$(($(wc -l <"$WORK/failures.csv") - 1))" = 3 ]
check "/metrics: no other errors_total series of the run" \
    [ "$(grep -c "^loadcluster_errors_total{run=\"$id\"" "$WORK/metrics.txt")" = 3 ]

# Cookies: both journeys get a session cookie, then ask /echo what it received; "nojar"'s
# /echo step has "cookies": false. Each user runs one iteration (exit user); users 1 and 3
# run "jar", 2 and 4 "nojar".
curl -sf -X POST "http://127.0.0.1:$TARGET_PORT/__reset" >/dev/null
journey() { # NAME COOKIES
    cat <<JSON
{"name": "$1", "steps": [
   {"name": "set-$1", "path": "/setcookie?session=abc"},
   {"name": "echo-$1", "path": "/echo", "cookies": $2,
    "extract": {"c": {"json": "$.cookies.session", "required": false}}},
   {"if": "exists(c)", "then": [{"name": "saw-$1", "path": "/saw/$1"}],
    "else": [{"name": "none-$1", "path": "/none/$1"}]},
   {"exit": "user"}]}
JSON
}
cat >"$WORK/cookies.json" <<JSON
{"name": "cookies", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "2s",
 "users": 4, "spawn_rate": 100, "journeys": [$(journey jar true), $(journey nojar false)]}
JSON
cid=$(submit_run "$WORK/cookies.json")
check "cookies run created" test "${cid:-0}" -gt 0
check "cookies run finished" wait_until 30 run_state_is "${cid:-1}" finished
log "target: $(target_requests '.by_path')"
check "every user set its cookie and asked /echo" [ "$(served /setcookie):$(served /echo)" = 4:4 ]
check "with the jar, /echo received the session cookie (2 users)" [ "$(served /saw/jar)" = 2 ]
check "with cookies: false, /echo received no cookie (2 users)" [ "$(served /none/nojar)" = 2 ]
check "no cross-over" [ "$(( $(served /none/jar) + $(served /saw/nojar) ))" = 0 ]

finish
