#!/usr/bin/env bash
# The API (:8089) against hostile HTTP clients, on a 3-master quorum with
# --api-max-conns 64: a bad token gets 401 before any body byte is sent;
# error messages with long or invalid UTF-8 paths are real answers, not
# "500 out of memory"; a follower's redirect of a long path is a whole
# Location or a 414; /metrics escapes label values and shows tenant series
# only to those allowed; and more slow clients than the cap do not lock
# /healthz and /readyz out.
source "$(dirname "$0")/lib.sh"

H="/usr/bin/python3 $LC_SRC/tests/tools/http_hostile.py"
CHECK="/usr/bin/python3 $LC_SRC/tests/tools/prom_check.py"
new_secret() { echo "lct_$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=' | cut -c1-43)"; }
METRICS_TOKEN=$(new_secret)
UNKNOWN=$(new_secret)
(umask 077; echo "$METRICS_TOKEN" >"$WORK/metrics.token")

start_target
start_cluster 3 --api-max-conns 64 --metrics-token-file "$WORK/metrics.token"
join_workers 1
leader=$(leader_id)
follower=$(( leader % 3 + 1 ))
API=$(api_of "$leader")
FOLLOWER=$(api_of "$follower")
LPORT=${API##*:}
FPORT=${FOLLOWER##*:}
log "leader is master $leader, follower $follower"
ctl() { timeout 30 "$LC_BIN/loadctl" --master "$API" "$@"; }

# ---- auth before body ----
check "leader: a 1 MiB POST with an unknown token gets 401 before its body is sent" \
    $H early401 "$LPORT" "$UNKNOWN"
check "follower: the same 401 before the body" $H early401 "$FPORT" "$UNKNOWN"
check "no token at all: 401 before the body" $H early401 "$LPORT" ""

# ---- error messages and the redirect ----
# body_of "OUT": the JSON body of a raw answer "<status> <location> <body>".
body_of() { cut -d' ' -f3- <<<"$1"; }
e_acute=$(printf '\\xc3\\xa9%.0s' $(seq 1 600))
out=$($H raw "$LPORT" "$ADMIN_TOKEN" GET "/api/v1/$e_acute")
check "a 1,200-byte UTF-8 path: 404 'no such endpoint', not 500 (${out:0:40}…)" \
    sh -c "[ '${out%% *}' = 404 ] && printf '%s' '$(body_of "$out")' | jq -e '.error | startswith(\"no such endpoint: /api/v1/é\")' >/dev/null"
out=$($H raw "$LPORT" "$ADMIN_TOKEN" GET '/api/v1/\xff\xc3')
check "invalid UTF-8 in the path: 404 with U+FFFD in the message (${out:0:60})" \
    sh -c "[ '${out%% *}' = 404 ] && printf '%s' '$(body_of "$out")' | jq -e '.error == \"no such endpoint: /api/v1/\ufffd\ufffd\"' >/dev/null"
long=/api/v1/runs/999999/$(printf 'a%.0s' $(seq 1 1500))
out=$($H raw "$FPORT" "$ADMIN_TOKEN" POST "$long?x=1")
check "follower: a 1.5 KB path is redirected with the whole Location" \
    [ "$(cut -d' ' -f1-2 <<<"$out")" = "307 $API$long?x=1" ]
out=$($H raw "$FPORT" "$ADMIN_TOKEN" POST "$long$(printf 'b%.0s' $(seq 1 1000))")
check "follower: a path too long to redirect gets 414 naming the leader (${out:0:3})" \
    sh -c "[ '${out%% *}' = 414 ] && printf '%s' '$(body_of "$out")' | jq -e '.error | contains(\"$API\")' >/dev/null"

# ---- /metrics: escaping and who sees which series ----
ctl tenants add a 1 >/dev/null && ctl tenants add b 1 >/dev/null
TA=$(ctl --json tokens add tenant a | jq -r .token)
TB=$(ctl --json tokens add tenant b | jq -r .token)
check "tenant tokens created" [ -n "$TA" -a -n "$TB" ]
# A task name with a quote and a backslash: a label value to escape (control
# bytes such as a newline are refused in names by the scenario parser).
cat >"$WORK/a.json" <<JSON
{"name": "run a", "tenant": "a", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "1s",
 "users": 2, "think_time_ms": 20,
 "tasks": [{"name": "q\"uo\\\\te} x=\"1", "path": "/"}]}
JSON
cat >"$WORK/b.json" <<JSON
{"name": "run b", "tenant": "b", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "1s",
 "users": 2, "think_time_ms": 20, "tasks": [{"name": "plain", "path": "/"}]}
JSON
idA=$(curl -sf -X POST --data-binary @"$WORK/a.json" "$API/api/v1/runs" | jq -r .id)
idB=$(curl -sf -X POST --data-binary @"$WORK/b.json" "$API/api/v1/runs" | jq -r .id)
check "runs created for tenants a and b ($idA, $idB)" [ "${idA:-0}" -gt 0 -a "${idB:-0}" -gt 0 ]
check "run a finishes" wait_until 30 run_state_is "$idA" finished
check "run b finishes" wait_until 30 run_state_is "$idB" finished
scrape() { # FILE [TOKEN]: /metrics as TOKEN sees it (none: no token); prints the status
    curl -q -s --max-time 5 -o "$WORK/$1" -w '%{http_code}' ${2:+-H "Authorization: Bearer $2"} "$API/metrics"
}
check "the metrics token may scrape" [ "$(scrape full.prom "$METRICS_TOKEN")" = 200 ]
check "the full exposition parses strictly (escaped labels)" $CHECK "$WORK/full.prom"
check "the endpoint label is escaped: quote and backslash" \
    grep -qF "endpoint=\"q\\\"uo\\\\te} x=\\\"1\",method=\"GET\"" "$WORK/full.prom"
check "no forged label x=\"1\" outside a value" sh -c "! grep -E '[,{]x=\"1\"' '$WORK/full.prom'"
check "the metrics token sees both tenants' runs" \
    sh -c "grep -q 'run=\"$idA\",tenant=\"a\"' '$WORK/full.prom' && grep -q 'run=\"$idB\",tenant=\"b\"' '$WORK/full.prom'"
check "no token: 200" [ "$(scrape anon.prom)" = 200 ]
check "no token: parses strictly" $CHECK "$WORK/anon.prom"
check "no token: cluster series only (raft, workers)" \
    sh -c "grep -q '^loadcluster_raft_term ' '$WORK/anon.prom' && grep -q '^loadcluster_workers{' '$WORK/anon.prom'"
check "no token: no run, tenant or endpoint series" sh -c "! grep -q 'run=\"' '$WORK/anon.prom'"
check "tenant a's token: 200" [ "$(scrape a.prom "$TA")" = 200 ]
check "tenant a sees its run" grep -q "^loadcluster_requests_total{run=\"$idA\",tenant=\"a\"" "$WORK/a.prom"
check "tenant a does not see tenant b's run" sh -c "! grep -q 'tenant=\"b\"' '$WORK/a.prom' && ! grep -q 'run=\"$idB\"' '$WORK/a.prom'"
check "tenant b sees only its own" sh -c "[ \"\$(curl -q -s -H 'Authorization: Bearer $TB' '$API/metrics' | grep -o 'tenant=\"[^\"]*\"' | sort -u)\" = 'tenant=\"b\"' ]"
check "an unknown token: 401, not a smaller page" [ "$(scrape bad.prom "$UNKNOWN")" = 401 ]

# ---- slow clients: more than the cap (64 + 32 probe slots) ----
start slow timeout 60 $H slow "$LPORT" 120 14
check "the slow clients connected" wait_until 10 grep -q '^opened' "$WORK/slow.log"
sleep 1.5 # probe slots held by slow clients are given up after 1 s
probes_ok=0
for i in 1 2 3 4 5; do
    $H probe "$LPORT" /healthz >>"$WORK/probes.txt" && $H probe "$LPORT" /readyz >>"$WORK/probes.txt" &&
        probes_ok=$((probes_ok + 1))
    sleep 1
done
check "with every slot held, /healthz and /readyz answer within 1 s, 5 of 5 ($(tr '\n' ' ' <"$WORK/probes.txt"))" \
    [ "$probes_ok" = 5 ]
check "an ordinary request is refused or waits while the cap is reached" \
    sh -c "! curl -sf --max-time 1 '$API/api/v1/cluster' >/dev/null"
check "the slow clients' headers are cut at the deadline, with a log line" \
    wait_until 15 grep -q 'closed connections: request headers not complete within the deadline' "$WORK/master-$leader.log"
check "once they are gone the API serves everyone again" wait_until 10 api_authorized "$API"
stop_proc "$PID_slow"
finish
