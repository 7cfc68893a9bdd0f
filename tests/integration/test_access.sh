#!/usr/bin/env bash
# Access: tenants and tokens on a 3-master quorum. Every 401/403/404 case is
# tried against the leader and through a follower, which answers auth errors
# itself (never revealing the leader) and redirects authorized writes (307).
# One worker runs the tenants' runs: a tenant token's workers view shows the
# workers but none of another tenant's runs.
source "$(dirname "$0")/lib.sh"

start_target
start_cluster 3
join_workers 1 # runs the tenants' runs, so the workers view has some to hide
leader=$(leader_id)
follower=$(( leader % 3 + 1 ))
LEADER=$(api_of "$leader")
FOLLOWER=$(api_of "$follower")
log "leader is master $leader, follower $follower"
ctl() { timeout 30 "$LC_BIN/loadctl" --master "$FOLLOWER" "$@"; }

# call TOKEN METHOD URL [BODY] [CURL FLAGS…]: prints "<status> <body>"; no
# token when TOKEN is "". curl -q: not the admin token of $WORK/.curlrc.
call() {
    local token=$1 method=$2 url=$3 body=${4:-}
    local args=(-q -s --max-time 5 -X "$method" -o "$WORK/body" -w '%{http_code}' "${@:5}")
    [ -n "$token" ] && args+=(-H "Authorization: Bearer $token")
    [ -n "$body" ] && args+=(--data-binary "$body")
    local code
    code=$(curl "${args[@]}" "$url") || true
    echo "$code $(cat "$WORK/body" 2>/dev/null)"
}
# answers EXPECTED_STATUS TOKEN METHOD URL [BODY] [CURL FLAGS…]
answers() {
    local expected=$1; shift
    local got
    got=$(call "$@")
    [ "${got%% *}" = "$expected" ] && return 0
    log "  $2 $3 -> $got (expected $expected)"
    return 1
}
# body_is EXPECTED_BODY TOKEN METHOD URL: the answer's body, byte for byte.
body_is() {
    local expected=$1; shift
    local got
    got=$(call "$@")
    [ "${got#* }" = "$expected" ] || { log "  body: ${got#* } (expected $expected)"; return 1; }
}
scenario() { # NAME [TENANT]
    printf '{"name": "%s", %s"target": "http://127.0.0.1:%s", "duration": "5m", "users": 1, "think_time_ms": 200, "tasks": [{"path": "/"}]}' \
        "$1" "${2:+\"tenant\": \"$2\", }" "$TARGET_PORT"
}
new_token() { ctl --json tokens add "$@" | jq -r .token; }
run_ids() { call "$1" GET "$2/api/v1/runs${3:-}" | cut -d' ' -f2- | jq -r '[.runs[].id] | sort | join(",")'; }
run_tenants() { call "$1" GET "$2/api/v1/runs${3:-}" | cut -d' ' -f2- | jq -r '[.runs[].tenant] | unique | join(",")'; }
# worker_runs TOKEN URL: the run ids the workers view shows TOKEN, sorted.
worker_runs() { call "$1" GET "$2/api/v1/workers" | cut -d' ' -f2- | jq -r '[.workers[].runs[].run] | unique | join(",")'; }
# only_runs TOKEN URL ID: the workers view shows TOKEN no run but ID (a
# follower has no workers: it shows none).
only_runs() {
    local got
    got=$(worker_runs "$1" "$2")
    [ -z "$got" ] || [ "$got" = "$3" ] || { log "  workers view shows runs $got (expected only $3)"; return 1; }
}

check "the admin token file is private (0600)" [ "$(stat -c %a "$ADMIN_TOKEN_FILE")" = 600 ]
check "loadctl tenants add a 3" ctl tenants add a 3
check "loadctl tenants add b --weight 1" ctl tenants add b --weight 1
check "tenants listed with weights" sh -c "timeout 10 '$LC_BIN/loadctl' --master '$LEADER' --json tenants | jq -e '[.tenants[] | {(.name): .weight}] | add == {\"a\": 3, \"b\": 1, \"default\": 1}' >/dev/null"
TA=$(new_token tenant a --name "team a")
TB=$(new_token tenant b)
TADMIN=$(new_token admin --name second-admin)
TREVOKED=$(new_token tenant a --name to-revoke)
check "tokens were created" [ -n "$TA" -a -n "$TB" -a -n "$TADMIN" -a -n "$TREVOKED" ]
check "token secrets are lct_ + 43 base64url characters" \
    sh -c "echo '$TA' | grep -Eqx 'lct_[A-Za-z0-9_-]{43}'"
check "the token list holds no secrets" sh -c "! timeout 10 '$LC_BIN/loadctl' --master '$LEADER' --json tokens | grep -q lct_"
for t in "$TA" "$TB" "$TADMIN" "$TREVOKED"; do
    wait_until 10 answers 200 "$t" GET "$FOLLOWER/api/v1/runs" || log "follower does not know a token yet"
done

# One run per tenant, created by the tenants' own tokens (A's scenario names
# no tenant: it runs for the token's tenant).
idA=$(call "$TA" POST "$LEADER/api/v1/runs" "$(scenario run-a)" | cut -d' ' -f2- | jq -r .id)
idB=$(call "$TB" POST "$LEADER/api/v1/runs" "$(scenario run-b b)" | cut -d' ' -f2- | jq -r .id)
idD=$(call "$TADMIN" POST "$LEADER/api/v1/runs" "$(scenario run-default)" | cut -d' ' -f2- | jq -r .id)
check "runs created for a, b and default" [ "$idA" -gt 0 -a "$idB" -gt 0 -a "$idD" -gt 0 ]
check "A's run belongs to tenant a" sh -c "[ \"\$(curl -sf '$LEADER/api/v1/runs/$idA' | jq -r .tenant)\" = a ]"
check "the worker runs all three (admin's workers view)" \
    wait_until 15 sh -c "[ \"\$(curl -sf '$LEADER/api/v1/workers' | jq -r '[.workers[].runs[].run] | unique | join(\",\")')\" = '$idA,$idB,$idD' ]"
missing=$((idB + 1000))
wait_until 10 answers 200 "$TB" GET "$FOLLOWER/api/v1/runs/$idB" || true
UNKNOWN="lct_$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=' | cut -c1-43)"

for where in leader follower; do
    U=$LEADER
    [ $where = follower ] && U=$FOLLOWER
    check "($where) no token: 401" answers 401 "" GET "$U/api/v1/runs"
    check "($where) no token: the 401 body and WWW-Authenticate" \
        sh -c "curl -q -si '$U/api/v1/runs' | tr -d '\r' | grep -qx 'WWW-Authenticate: Bearer realm=\"loadcluster\"' && curl -q -s '$U/api/v1/runs' | jq -e '.error == \"missing or unknown token\"' >/dev/null"
    check "($where) no token on a write: 401, not a redirect" answers 401 "" POST "$U/api/v1/runs" "$(scenario x)"
    check "($where) unknown token: 401" answers 401 "$UNKNOWN" GET "$U/api/v1/runs/$idA"
    check "($where) unknown token on a write: 401" answers 401 "$UNKNOWN" POST "$U/api/v1/tenants" '{"name":"c"}'
    check "($where) another scheme: 401" answers 401 "" GET "$U/api/v1/runs" "" -H "Authorization: Basic $TA"
    check "($where) /healthz needs no token" answers 200 "" GET "$U/healthz"
    check "($where) /metrics needs no token" answers 200 "" GET "$U/metrics"
    check "($where) tenant token on POST /api/v1/tenants: 403" answers 403 "$TA" POST "$U/api/v1/tenants" '{"name":"c"}'
    check "($where) tenant token on PATCH a tenant: 403" answers 403 "$TA" PATCH "$U/api/v1/tenants/a" '{"weight":9}'
    check "($where) tenant token on GET /api/v1/tenants: 403" answers 403 "$TA" GET "$U/api/v1/tenants"
    check "($where) tenant token on POST /api/v1/tokens: 403" answers 403 "$TA" POST "$U/api/v1/tokens" '{"role":"admin"}'
    check "($where) tenant token on GET /api/v1/tokens: 403" answers 403 "$TA" GET "$U/api/v1/tokens"
    check "($where) tenant token on a membership change: 403" answers 403 "$TA" DELETE "$U/api/v1/cluster/members/$follower"
    check "($where) tenant token reads the cluster" answers 200 "$TA" GET "$U/api/v1/cluster"
    check "($where) tenant token reads the workers" answers 200 "$TA" GET "$U/api/v1/workers"
    check "($where) ... with no other tenant's run in them" only_runs "$TA" "$U" "$idA"
    check "($where) ... for B neither" only_runs "$TB" "$U" "$idB"
    check "($where) A reads A's run" answers 200 "$TA" GET "$U/api/v1/runs/$idA"
    check "($where) A asking for B's run: 404" answers 404 "$TA" GET "$U/api/v1/runs/$idB"
    check "($where) ... with the body of a missing run" body_is "{\"error\":\"run $idB not found\"}" "$TA" GET "$U/api/v1/runs/$idB"
    check "($where) a truly missing run answers alike" body_is "{\"error\":\"run $missing not found\"}" "$TA" GET "$U/api/v1/runs/$missing"
    check "($where) A cannot stop B's run: 404" answers 404 "$TA" POST "$U/api/v1/runs/$idB/stop" "" --location-trusted
    check "($where) A lists only A's runs" [ "$(run_ids "$TA" "$U")" = "$idA" ]
    check "($where) B lists only B's runs" [ "$(run_ids "$TB" "$U")" = "$idB" ]
    check "($where) A's ?tenant=b does not widen the list" [ "$(run_tenants "$TA" "$U" "?tenant=b")" = a ]
    check "($where) admin lists every tenant's runs" [ "$(run_tenants "$TADMIN" "$U")" = "a,b,default" ]
    check "($where) admin filters with ?tenant=b" [ "$(run_ids "$TADMIN" "$U" "?tenant=b")" = "$idB" ]
    check "($where) A creating a run for tenant b: 403" answers 403 "$TA" POST "$U/api/v1/runs" "$(scenario sneaky b)"
    check "($where) admin creating a run for a missing tenant: 400" \
        body_is '{"error":"tenant: no such tenant '"'ghost'"'"}' "$TADMIN" POST "$U/api/v1/runs" "$(scenario ghost ghost)" --location-trusted
done
check "(leader) A's workers view shows A's run" [ "$(worker_runs "$TA" "$LEADER")" = "$idA" ]
check "(leader) ... and the worker's capacity and CPU" \
    sh -c "curl -q -sf -H 'Authorization: Bearer $TA' '$LEADER/api/v1/workers' | jq -e '.workers[0] | (.capacity > 0) and has(\"cpu_percent\")' >/dev/null"
check "(leader) B's workers view shows B's run" [ "$(worker_runs "$TB" "$LEADER")" = "$idB" ]
check "the follower redirects A's authorized write (307)" answers 307 "$TA" POST "$FOLLOWER/api/v1/runs" "$(scenario via-follower a)"
check "... which the leader creates (201)" answers 201 "$TA" POST "$FOLLOWER/api/v1/runs" "$(scenario via-follower a)" --location-trusted
check "the follower redirects an admin's tenant change (307)" answers 307 "$TADMIN" PATCH "$FOLLOWER/api/v1/tenants/b" '{"weight":2}'
check "bad weight: 400" answers 400 "$TADMIN" PATCH "$LEADER/api/v1/tenants/b" '{"weight":1001}'
check "bad tenant name: 400" answers 400 "$TADMIN" POST "$LEADER/api/v1/tenants" '{"name":"Bad Name"}'
check "duplicate tenant: 409" answers 409 "$TADMIN" POST "$LEADER/api/v1/tenants" '{"name":"a"}'

# Revocation, seen by the leader and (once applied) by the follower.
check "the token works before revocation" answers 200 "$TREVOKED" GET "$FOLLOWER/api/v1/runs"
rid=$(timeout 10 "$LC_BIN/loadctl" --master "$LEADER" --json tokens | jq -r '.tokens[] | select(.name == "to-revoke") | .id')
check "loadctl tokens revoke" ctl tokens revoke "$rid"
check "(leader) revoked token: 401" answers 401 "$TREVOKED" GET "$LEADER/api/v1/runs"
check "(follower) revoked token: 401" wait_until 5 answers 401 "$TREVOKED" GET "$FOLLOWER/api/v1/runs"
check "(follower) revoked token on a write: 401" answers 401 "$TREVOKED" POST "$FOLLOWER/api/v1/runs" "$(scenario x)"
check "revoking it again: 404" answers 404 "$TADMIN" DELETE "$LEADER/api/v1/tokens/$rid"
first_admin=$(timeout 10 "$LC_BIN/loadctl" --master "$LEADER" --json tokens | jq -r '[.tokens[] | select(.role == "admin")][0].id')
second_admin=$(timeout 10 "$LC_BIN/loadctl" --master "$LEADER" --json tokens | jq -r '.tokens[] | select(.name == "second-admin") | .id')
check "an admin token can be revoked while another remains" answers 200 "$TADMIN" DELETE "$LEADER/api/v1/tokens/$first_admin" "" --location-trusted
check "the last admin token cannot be revoked (409)" answers 409 "$TADMIN" DELETE "$LEADER/api/v1/tokens/$second_admin"
check "the revoked bootstrap token is refused" wait_until 5 answers 401 "$ADMIN_TOKEN" GET "$FOLLOWER/api/v1/tokens"
finish
