#!/usr/bin/env bash
# The Kubernetes manifests (deploy/k8s) and the Containerfile (deploy/container).
#
# 1. Static, by tests/deploy/check_k8s.py: every YAML parses, kustomizations
#    reference what exists (and `kubectl kustomize` renders them when kubectl is
#    installed), names, labels, selectors, ports, probes, volumes and mounted
#    keys agree, every flag in the pods' args is in the binaries' --help,
#    nodes.conf parses (ours and loadmaster's own parser) and matches --id auto
#    and the ports, the Containerfile has Debian 12 stages, a non-root user, the
#    programs and the packages their libraries come from.
# 2. The pods, run for real on loopback: the three masters with the
#    StatefulSet's args, each in its own UTS namespace named like its pod (so
#    `--id auto` reads loadmaster-N from gethostname), with the ConfigMap's
#    nodes.conf where the pods' DNS names became "localhost" (names, so the
#    masters listen on every interface and resolve peers at connect, as in
#    Kubernetes) and the ports free ones; the Secret's keys as files. They must
#    take ids 1..3, elect a leader and pass the manifests' probes; then a worker
#    with the worker StatefulSet's args must join, pass its probes and stop
#    within its termination grace period on SIGTERM.
source "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
CHECK=$LC_SRC/tests/deploy/check_k8s.py

# ---- 1. static checks: their ok/FAILED lines count as ours
out=$(WORK=$WORK "$PY" "$CHECK" check --src "$LC_SRC" --bin "$LC_BIN" 2>&1) || true
printf '%s\n' "$out" | sed "s/^/[$TEST_NAME] /" >&2
PASSED=$((PASSED + $(grep -c '^ok: ' <<<"$out" || true)))
FAILED=$((FAILED + $(grep -c '^FAILED: ' <<<"$out" || true)))
check "check_k8s.py ran to the end" grep -q '^check_k8s: [0-9]* passed' <<<"$out"

# ---- 2. the pods on loopback
uts=()
if unshare --uts true 2>/dev/null; then
    uts=(unshare --uts)
elif unshare --user --map-root-user --uts true 2>/dev/null; then
    uts=(unshare --user --map-root-user --uts)
fi
if [ ${#uts[@]} -eq 0 ]; then
    log "skipped: running the pods (unshare --uts is not permitted here, so no pod host names)"
    finish
    exit
fi

ports=$(for _ in $(seq 1 12); do free_port; done | paste -sd, -)
if ! "$PY" "$CHECK" materialize --src "$LC_SRC" --out "$WORK/pods" --ports "$ports" >"$WORK/plan.json" 2>"$WORK/materialize.log"; then
    check "the manifests' pods can be laid out (check_k8s.py materialize)" false
    cat "$WORK/materialize.log" >&2
    finish
    exit
fi
plan() { jq -r "$@" "$WORK/plan.json"; }
TOKEN=$(plan .admin_token)
n_masters=$(plan '.masters | length')

# pod_start GROUP INDEX: starts that pod of the plan, its host name set in a
# UTS namespace of its own, its args as the manifest has them (paths under
# $WORK/pods/<pod>, addresses on loopback).
pod_start() {
    local name bin args
    name=$(plan ".$1[$2].name")
    bin=$(plan ".$1[$2].binary")
    mapfile -t args < <(plan ".$1[$2].args[]")
    start "$name" timeout 120 "${uts[@]}" sh -c 'hostname "$1" && shift && exec "$@"' sh "$name" \
        "$LC_BIN/$bin" "${args[@]}"
}
api_get() { curl -sf --max-time 2 -H "Authorization: Bearer $TOKEN" "$1$2"; }
cluster_field() { api_get "$(plan ".masters[$1].api")" /api/v1/cluster | jq -r "$2"; }

# leader_api: the API URL of the master that says it leads.
leader_api() {
    local i
    for i in $(seq 0 $((n_masters - 1))); do
        if [ "$(cluster_field "$i" .role 2>/dev/null)" = leader ]; then plan ".masters[$i].api"; return 0; fi
    done
    return 1
}
# alive_until PID TIMEOUT_S CMD...: wait_until, giving up as soon as PID is gone.
alive_until() {
    local pid=$1 deadline=$((SECONDS + $2)); shift 2
    until "$@" >/dev/null 2>&1; do
        kill -0 "$pid" 2>/dev/null || return 1
        [ $SECONDS -ge $deadline ] && return 1
        sleep 0.1
    done
}
pid_of() { local v="PID_${1//-/_}"; echo "${!v}"; }
field_is() { [ "$(cluster_field "$1" "$2" 2>/dev/null)" = "$3" ]; }

for i in $(seq 0 $((n_masters - 1))); do pod_start masters "$i"; done
for i in $(seq 0 $((n_masters - 1))); do
    name=$(plan ".masters[$i].name"); id=$(plan ".masters[$i].id")
    check "$name: --id auto takes id $id from the host name (log)" \
        wait_until 15 grep -q "msg=\"started\" id=$id " "$WORK/$name.log"
done
check "the $n_masters masters elect a leader (names in nodes.conf, resolved at connect)" wait_until 30 leader_api
for i in $(seq 0 $((n_masters - 1))); do
    name=$(plan ".masters[$i].name"); id=$(plan ".masters[$i].id")
    check "$name: /api/v1/cluster says id $id" wait_until 10 field_is "$i" .id "$id"
    # Ready once the leader is known; the first master waits for that.
    check "$name: readiness probe $(plan ".masters[$i].probes.readinessProbe" | sed 's|.*:[0-9]*||') answers 2xx" \
        alive_until "$(pid_of "$name")" $((i == 0 ? 20 : 5)) http_ok "$(plan ".masters[$i].probes.readinessProbe")"
    check "$name: liveness probe $(plan ".masters[$i].probes.livenessProbe" | sed 's|.*:[0-9]*||') answers 2xx" \
        alive_until "$(pid_of "$name")" 5 http_ok "$(plan ".masters[$i].probes.livenessProbe")"
    check "$name: the Prometheus annotation's URL serves metrics" \
        sh -c "curl -sf --max-time 2 '$(plan ".masters[$i].metrics")' | grep -q '^# TYPE '"
done

# The worker.
LEADER=$(leader_api || true)
worker_field() {
    curl -sf --max-time 2 -H "Authorization: Bearer $TOKEN" "$LEADER/api/v1/workers" |
        jq -r --arg n "$1" ".workers[] | select(.name == \$n and .connected) | $2"
}
worker_joined() { [ -n "$(worker_field "$1" .id)" ]; }
wname=$(plan '.workers[0].name')
pod_start workers 0
wpid=$(pid_of "$wname")
check "$wname: joins the leader with the join secret, under its pod name" \
    alive_until "$wpid" 20 worker_joined "$wname"
threads=$(plan '.workers[0].args | index("--threads") as $i | .[$i + 1]')
capacity=$(plan '.workers[0].args | index("--capacity") as $i | .[$i + 1]')
check "$wname: reports the manifest's threads ($threads, from limits.cpu) and capacity ($capacity)" \
    test "$(worker_field "$wname" '"\(.threads) \(.capacity)"' 2>/dev/null)" = "$threads $capacity"
if [ "$(plan '.workers[0].metrics')" != null ]; then
    check "$wname: the Prometheus annotation's URL serves metrics" \
        sh -c "curl -sf --max-time 2 '$(plan '.workers[0].metrics')' | grep -q '^# TYPE '"
fi
for probe in readinessProbe livenessProbe; do
    check "$wname: $probe $(plan ".workers[0].probes.$probe" | sed 's|.*:[0-9]*||') answers 2xx" \
        alive_until "$wpid" 10 http_ok "$(plan ".workers[0].probes.$probe")"
done

# SIGTERM: the worker stops and flushes within terminationGracePeriodSeconds.
grace=$(plan '.workers[0].grace')
if kill -0 "$wpid" 2>/dev/null; then
    t0=$SECONDS
    # One TERM to the worker itself, as the kubelet sends it (a TERM to timeout(1) would reach
    # the worker twice: timeout forwards it, then sends it to its process group).
    wchild=$(pgrep -P "$wpid" | head -1)
    kill -TERM "${wchild:-$wpid}"
    while kill -0 "$wpid" 2>/dev/null && [ $((SECONDS - t0)) -le "$grace" ]; do sleep 0.2; done
    if kill -0 "$wpid" 2>/dev/null; then rc=running; else rc=0; wait "$wpid" || rc=$?; fi
    check "$wname: exits 0 on SIGTERM within the grace period of ${grace}s (took $((SECONDS - t0))s, status $rc)" \
        test "$rc" = 0
else
    check "$wname: still running before SIGTERM" false
fi

finish
