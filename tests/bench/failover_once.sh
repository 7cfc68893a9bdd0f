#!/usr/bin/env bash
# failover_once.sh — one measured leader loss: 3 masters, 2 workers, an
# open-model run at 500 requests/s; kill -9 the leader 5 s in and time
# kill → new leader, kill → both workers back, kill → stats flowing again
# (the new leader's total passes what the old one showed just before the
# kill; replays of batches the old leader held count), kill → fresh stats
# (the total passes its value when both workers were back: a batch cut
# after the reconnect, an upper bound); then count requests lost. Prints one line:
#   elect_s=… workers_s=… stats_s=… fresh_s=… lost=…
# env: ELECTION_MS (default: the master's default)
source "$LC_SRC/tests/integration/lib.sh"

flags=()
[ -n "${ELECTION_MS:-}" ] && flags=(--election-timeout-ms "$ELECTION_MS")
start_target
start_cluster 3 "${flags[@]}"
join_workers 2 --log-level warn
first=$(leader_id)
API=$(api_of "$first")
wait_until 20 workers_connected 2
cat >"$WORK/scenario.json" <<JSON
{"name": "failover-figures", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "15s",
 "arrival_rate": 500, "max_users": 200, "tasks": [{"path": "/"}]}
JSON
id=$(submit_run "$WORK/scenario.json")
wait_until 10 run_state_is "$id" running
sleep 5

now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc; }
base=$(curl -sf --max-time 1 "$API/api/v1/runs/$id" | jq .totals.requests)
killed=$(now)
stop_proc "$(eval echo "\$PID_master_$first")" KILL

elect="" workers="" stats="" fresh="" wbase="" leader=""
deadline=$((SECONDS + 30))
while [ $SECONDS -lt $deadline ] && { [ -z "$stats" ] || [ -z "$fresh" ]; }; do
    if [ -z "$leader" ]; then
        leader=$(leader_id 2>/dev/null) && [ "$leader" != "$first" ] || leader=""
        [ -n "$leader" ] && { elect=$(since "$killed"); API=$(api_of "$leader"); }
    elif [ -z "$workers" ] && workers_connected 2 2>/dev/null; then
        workers=$(since "$killed")
        wbase=$(curl -sf --max-time 1 "$API/api/v1/runs/$id" | jq .totals.requests 2>/dev/null || echo "")
    fi
    if [ -n "$leader" ] && { [ -z "$stats" ] || [ -n "$wbase" ]; }; then
        n=$(curl -sf --max-time 1 "$API/api/v1/runs/$id" | jq .totals.requests 2>/dev/null || echo "")
        [ -z "$stats" ] && [ -n "$n" ] && [ -n "$base" ] && [ "$n" -gt "$base" ] && stats=$(since "$killed")
        [ -n "$wbase" ] && [ -n "$n" ] && [ "$n" -gt "$wbase" ] && { fresh=$(since "$killed"); wbase=""; }
    fi
    sleep 0.02
done
wait_until 60 run_state_is "$id" finished
lost=$(( $(target_requests) - $(curl -sf "$API/api/v1/runs/$id" | jq .totals.requests) ))
printf 'elect_s=%s workers_s=%s stats_s=%s fresh_s=%s lost=%s\n' "${elect:-none}" \
    "${workers:-none}" "${stats:-none}" "${fresh:-none}" "$lost"
