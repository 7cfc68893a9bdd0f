#!/usr/bin/env bash
# /metrics on the master and on a worker's --health-addr, scraped during and
# after a run: both parse under a strict reader of the text format, the
# master's counters and histogram counts equal the API's figures per
# endpoint, the run's users and grants show while it runs, and every series
# the Grafana dashboard queries exists.
source "$(dirname "$0")/lib.sh"

CHECK="/usr/bin/python3 $LC_SRC/tests/tools/prom_check.py"
start_target
start_master master
HEALTH_PORT=$(free_port)
start_worker w1 --health-addr "127.0.0.1:$HEALTH_PORT"
start_worker w2
check "two workers joined" wait_until 15 workers_connected 2

cat >"$WORK/scenario.json" <<JSON
{"name": "prom \"quoted\" run", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "4s",
 "users": 6, "think_time_ms": 20,
 "tasks": [{"name": "home", "path": "/", "weight": 2}, {"name": "item", "path": "/item", "weight": 1}]}
JSON
id=$(submit_run "$WORK/scenario.json")
check "the run is running" wait_until 10 run_state_is "$id" running
sleep 2
curl -sf "$API/metrics" >"$WORK/live-master.prom"
curl -sf "http://127.0.0.1:$HEALTH_PORT/metrics" >"$WORK/live-worker.prom"
check "master exposition parses strictly while running" $CHECK "$WORK/live-master.prom"
check "worker exposition parses strictly while running" $CHECK "$WORK/live-worker.prom"
check "the run's granted users show while running" \
    grep -qE "^loadcluster_scheduler_granted_users\{run=\"$id\",tenant=\"default\",state=\"running\"\} 6$" "$WORK/live-master.prom"
check "the run's active users show while running" \
    grep -qE "^loadcluster_run_active_users\{run=\"$id\",.*\} [1-6]$" "$WORK/live-master.prom"
check "the worker reports its users" grep -qE '^loadworker_users [1-6]$' "$WORK/live-worker.prom"

check "the run finishes" wait_until 25 run_state_is "$id" finished
curl -sf "$API/api/v1/runs/$id" >"$WORK/run.json"
curl -sf "$API/metrics" >"$WORK/master.prom"
check "master exposition parses strictly after the run" $CHECK "$WORK/master.prom"
$CHECK "$WORK/master.prom" --json >"$WORK/samples.json"

# sample NAME ENDPOINT: the value of a series of this run and endpoint.
sample() {
    jq -r --arg n "$1" --arg e "$2" --arg r "$id" \
        '[.[] | select(.name == $n and .labels.run == $r and .labels.endpoint == $e)][0].value // "missing"' \
        "$WORK/samples.json" | sed 's/\.0$//'
}
for ep in home item; do
    api=$(jq --arg e "$ep" '.endpoints[] | select(.name == $e) | .requests' "$WORK/run.json")
    check "$ep: loadcluster_requests_total equals the API ($api)" [ "$(sample loadcluster_requests_total "$ep")" = "$api" ]
    check "$ep: histogram _count equals the API ($api)" \
        [ "$(sample loadcluster_request_duration_seconds_count "$ep")" = "$api" ]
    fails=$(jq --arg e "$ep" '.endpoints[] | select(.name == $e) | .failures' "$WORK/run.json")
    check "$ep: loadcluster_failures_total equals the API ($fails)" \
        [ "$(sample loadcluster_failures_total "$ep")" = "$fails" ]
done
check "requests equal the target's count" \
    [ "$(jq .totals.requests "$WORK/run.json")" = "$(target_requests)" ]
check "a quoted run name does not break the labels (tenant label present)" \
    grep -q "tenant=\"default\"" "$WORK/master.prom"
check "raft series present" grep -q '^loadcluster_raft_apply_lag ' "$WORK/master.prom"
# Without a token (curl -q: not the admin token of .curlrc) only the cluster's own series.
curl -q -sf "$API/metrics" >"$WORK/anon.prom"
check "an unauthenticated scrape parses strictly" $CHECK "$WORK/anon.prom"
check "an unauthenticated scrape has the cluster's series" grep -qx 'loadcluster_workers{state="connected"} 2' "$WORK/anon.prom"
check "an unauthenticated scrape has no run or tenant series" sh -c "! grep -q 'tenant=' '$WORK/anon.prom'"
check "workers by state" grep -qx 'loadcluster_workers{state="connected"} 2' "$WORK/master.prom"

cat "$WORK/master.prom" "$WORK/live-worker.prom" >"$WORK/all.prom"
missing=""
for m in $($CHECK --exprs "$LC_SRC/deploy/grafana/loadcluster.json"); do
    grep -qE "^$m(\{| )" "$WORK/all.prom" || missing="$missing $m"
done
check "every series the Grafana dashboard queries exists (missing:${missing:- none})" [ -z "$missing" ]
finish
