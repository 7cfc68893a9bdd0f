#!/usr/bin/env bash
# Several hosts on one machine (issue 6): 3 masters, 2 workers, the target and
# a client, each in its own network namespace with its own address on a
# private /24, joined by a bridge in a "switch" namespace of its own: nothing
# touches the host's interfaces, addresses or routes.
#
#   run 1: submitted to a follower, which answers 307 with the leader's
#          address; the history counts exactly what the target served, on
#          every master.
#   run 2: 5 s in, the leader's port on the bridge goes down: a partition,
#          not a crash (its processes live on, its TCP peers get no FIN or
#          RST). The majority elects a new leader, the cut-off master steps
#          down, both workers find the new leader and the load goes on; then
#          the run is stopped through the new leader and ends with exact
#          counts. The link comes back: the old leader rejoins as a follower
#          of the leader's term and serves the same history.
#
# 30 to 60 s. Needs root, iproute2 and netns/veth/bridge support; otherwise it
# prints "SKIP: …" and exits 77 (CTest SKIP_RETURN_CODE) having started and
# registered nothing.

# ---- prerequisites, before lib.sh: a skip leaves nothing behind ----
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "not root (network namespaces need CAP_SYS_ADMIN)"
command -v ip >/dev/null 2>&1 || skip "no ip command (iproute2)"
probe="lcN-$$-probe"
if ! probe_err=$(ip netns add "$probe" 2>&1); then
    skip "ip netns add failed: $probe_err"
fi
if ! probe_err=$({ ip -n "$probe" link add p0 type veth peer name p1 &&
                   ip -n "$probe" link add b0 type bridge; } 2>&1); then
    ip netns del "$probe" 2>/dev/null
    skip "no veth or bridge inside a network namespace: $probe_err"
fi
ip netns del "$probe"

source "$(dirname "$0")/lib.sh"

NS_PREFIX="lcN-$$"                          # every name this run creates
SUBNET="10.213.$(($$ % 250 + 1))"           # only ever routed inside them
NAMESPACES=()                               # deleted by the EXIT trap
declare -A IP=([m1]=$SUBNET.11 [m2]=$SUBNET.12 [m3]=$SUBNET.13
               [w1]=$SUBNET.21 [w2]=$SUBNET.22 [tg]=$SUBNET.30 [cl]=$SUBNET.40)
ns() { echo "$NS_PREFIX-$1"; }
SW=$(ns sw)

# Namespace names left by an earlier run that was SIGKILLed (its pid is gone).
for n in $(ip netns list 2>/dev/null | awk '$1 ~ /^lcN-[0-9]+-/ { print $1 }'); do
    owner=${n#lcN-}; owner=${owner%%-*}
    kill -0 "$owner" 2>/dev/null || ip netns del "$n" 2>/dev/null || true
done

# The whole test stays well inside CTest's 300 s: at 240 s it interrupts
# itself, which runs the teardown below.
( trap 'kill "$sp" 2>/dev/null; exit 0' TERM
  sleep 240 >/dev/null 2>&1 & sp=$!
  wait "$sp" && { log "watchdog: 240 s, giving up"; kill -TERM $$; } ) &
WATCHDOG=$!

# EXIT: every process started dies, then the namespaces go (and with them the
# bridge and every veth), then lib.sh's cleanup checks the logs and exits.
netns_teardown() {
    local rc=$? pid n deadline
    set +e
    kill -TERM "$WATCHDOG" 2>/dev/null
    for pid in "${PIDS[@]:-}"; do
        [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null
    done
    deadline=$((SECONDS + 10))
    for pid in "${PIDS[@]:-}"; do
        [ -z "$pid" ] && continue
        while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
        if kill -0 "$pid" 2>/dev/null; then
            pkill -KILL -P "$pid" 2>/dev/null   # the daemon under timeout(1)
            kill -KILL "$pid" 2>/dev/null
        fi
    done
    for n in "${NAMESPACES[@]:-}"; do
        [ -z "$n" ] && continue
        # Anything still inside one of our namespaces was started by this test.
        for pid in $(ip netns pids "$n" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
        ip netns del "$n" 2>/dev/null || log "could not delete namespace $n"
    done
    (exit $rc)
    cleanup
}
trap netns_teardown EXIT

# require DESCRIPTION CMD...: a check the rest of the test cannot do without.
require() {
    check "$@"
    [ $FAILED -eq 0 ] || { finish; exit 1; }
}

# ---- the network ----
add_ns() {
    local n
    n=$(ns "$1")
    ip netns add "$n"
    NAMESPACES+=("$n")
    ip -n "$n" link set lo up
}

# add_host NAME: namespace NAME with eth0 at IP[NAME]; the other end of the
# veth pair is v-NAME on the switch's bridge. Both ends are created inside
# the switch namespace, so no name ever appears in the host's.
add_host() {
    local name=$1 n
    n=$(ns "$name")
    add_ns "$name"
    ip -n "$SW" link add "v-$name" type veth peer name eth0 netns "$n"
    ip -n "$SW" link set "v-$name" master br0
    ip -n "$SW" link set "v-$name" up
    ip -n "$n" addr add "${IP[$name]}/24" dev eth0
    ip -n "$n" link set eth0 up
}

add_ns sw
ip -n "$SW" link add br0 type bridge stp_state 0 forward_delay 0
ip -n "$SW" link set br0 up
for h in m1 m2 m3 w1 w2 tg cl; do add_host "$h"; done
log "namespaces $NS_PREFIX-*, subnet $SUBNET.0/24"

# in_ns NAME CMD...: CMD inside namespace NAME. ccurl: curl from the client.
# (ip netns exec keeps the environment: CURL_HOME and the admin token too.)
in_ns() { local n; n=$(ns "$1"); shift; ip netns exec "$n" "$@"; }
ccurl() { in_ns cl curl "$@"; }

# ---- the target, the masters, the workers (lib.sh's start: logs in $WORK) ----
TARGET="http://${IP[tg]}:8080"
start target timeout 300 ip netns exec "$(ns tg)" "$LC_BIN/lc_target" \
    --listen "${IP[tg]}:8080" --quiet
c_http_ok() { ccurl -sf --max-time 2 "$1" >/dev/null; }
require "the target answers across the bridge" wait_until 10 c_http_ok "$TARGET/__stats"
target_count() { ccurl -sf --max-time 2 "$TARGET/__stats" | jq -r .requests; }

NODES_CONF=$WORK/nodes.conf
JOIN=""
for k in 1 2 3; do
    a=${IP[m$k]}
    echo "$k $a:5556 $a:5557 $a:8089" >>"$NODES_CONF"
    printf -v "API_$k" 'http://%s:8089' "$a"
    JOIN="${JOIN:+$JOIN,}$a:5557"
done
# Election timeout 500 ms as in test_failover.sh (the default's figures come
# from tests/bench/failover.sh).
for k in 1 2 3; do
    start "master-$k" timeout 300 ip netns exec "$(ns "m$k")" "$LC_BIN/loadmaster" \
        --cluster "$NODES_CONF" --id "$k" --data-dir "$WORK/master-$k-data" \
        --admin-token-file "$ADMIN_TOKEN_FILE" --election-timeout-ms 500
done
use_admin_token

# cluster_of K [FROM]: master K's /api/v1/cluster asked from namespace FROM
# (default the client; a cut-off master still answers inside its own).
cluster_of() { in_ns "${2:-cl}" curl -sf --max-time 1 "$(api_of "$1")/api/v1/cluster"; }
# c_leader_id [NOT]: the leader as the first answering master other than NOT
# reports it, when that leader says so itself (and is not NOT).
c_leader_id() {
    local k id
    for k in 1 2 3; do
        [ "$k" = "${1:-0}" ] && continue
        id=$(cluster_of "$k" | jq -r '.leader_id // 0') || continue
        [ -n "$id" ] && [ "$id" != 0 ] && [ "$id" != "${1:-0}" ] || continue
        [ "$(cluster_of "$id" | jq -r .role)" = leader ] && { echo "$id"; return 0; }
    done
    return 1
}
c_leader_known() { c_leader_id >/dev/null; }
c_authorized() { ccurl -sf --max-time 2 "$(api_of "$1")/api/v1/cluster" >/dev/null; }
c_workers_connected() {   # API N
    [ "$(ccurl -sf --max-time 2 "$1/api/v1/workers" | jq '[.workers[] | select(.connected)] | length')" -ge "$2" ]
}
c_run_field() { ccurl -sf --max-time 2 "$1/api/v1/runs/$2" | jq -r "$3"; }
c_run_state_is() { [ "$(c_run_field "$1" "$2" .state)" = "$3" ]; }
c_run_counts() {   # API ID N [STATE]: the run is STATE (finished) there and counts N requests
    ccurl -sf --max-time 2 "$1/api/v1/runs/$2" |
        jq -e --argjson n "$3" --arg state "${4:-finished}" '.state == $state and .totals.requests == $n' >/dev/null
}

require "a leader is elected across the namespaces" wait_until 20 c_leader_known
for k in 1 2 3; do
    require "master $k answers at ${IP[m$k]} with the admin token" wait_until 15 c_authorized "$k"
done
leader=$(c_leader_id || echo 1)
log "leader is master $leader"

for w in 1 2; do
    start "worker-$w" timeout 300 ip netns exec "$(ns "w$w")" "$LC_BIN/loadworker" \
        --join "$JOIN" --threads 1 --name "worker-$w" --data-dir "$WORK/worker-$w-data"
done
require "both workers joined the leader" wait_until 20 c_workers_connected "$(api_of "$leader")" 2

scenario() {   # NAME DURATION
    cat <<JSON
{"name": "$1", "target": "$TARGET", "duration": "$2", "users": 6, "spawn_rate": 100,
 "think_time_ms": 20, "tasks": [{"path": "/netns"}]}
JSON
}
# post_run FILE API: the new run's id; -L --location-trusted follows a 307 to
# the leader with the Authorization header (curl drops it on another host).
post_run() {
    ccurl -sf -L --location-trusted --max-time 5 -X POST --data-binary @"$1" "$2/api/v1/runs" |
        jq -r .id
}

# ---- run 1: through a follower, which names the leader's own address ----
follower=$((leader % 3 + 1))
scenario netns-1 3s >"$WORK/run1.json"
answer=$(ccurl -s -o /dev/null -w '%{http_code} %{redirect_url}' --max-time 5 \
    -X POST --data-binary @"$WORK/run1.json" "$(api_of "$follower")/api/v1/runs" || true)
log "POST to follower $follower: $answer"
check "a follower redirects a write to the leader's address" \
    [ "$answer" = "307 $(api_of "$leader")/api/v1/runs" ]
id1=$(post_run "$WORK/run1.json" "$(api_of "$follower")" || true)
require "run 1 created through the redirect" [ -n "$id1" -a "$id1" != null ]
API=$(api_of "$leader")
check "run 1 finishes" wait_until 40 c_run_state_is "$API" "$id1" finished
served1=$(target_count || echo 0)
check "run 1 made requests" [ "$served1" -gt 100 ]
for k in 1 2 3; do
    check "master $k: run 1 counts exactly the target's $served1" \
        wait_until 5 c_run_counts "$(api_of "$k")" "$id1" "$served1"
done

# ---- run 2: the leader is cut off the bridge 5 s in ----
# (60 s at most: it is stopped once the load is seen going on after the failover.
# A stopped run ends as one at its duration does: Stop, then every final batch.)
scenario netns-2 60s >"$WORK/run2.json"
id2=$(post_run "$WORK/run2.json" "$API" || true)
require "run 2 created" [ -n "$id2" -a "$id2" != null ]
check "run 2 starts" wait_until 10 c_run_state_is "$API" "$id2" running
sleep 5
old=$(c_leader_id || echo "$leader")   # the leader now (it may have changed)
ip -n "$SW" link set "v-m$old" down
cut_at=$(date +%s.%N)
since_cut() { echo "$(date +%s.%N) - $cut_at" | bc; }
log "master $old (the leader) cut off the bridge"

new=""
for _ in $(seq 1 150); do
    new=$(c_leader_id "$old") && break
    new=""
    sleep 0.1
done
log "new leader: master ${new:-none} after $(since_cut)s"
require "the majority elects a new leader within 15 s" [ -n "$new" ]
API=$(api_of "$new")
old_is_follower() { [ "$(cluster_of "$old" "m$old" | jq -r .role)" = follower ]; }
check "the cut-off master steps down (no majority)" wait_until 10 old_is_follower
if wait_until 20 c_workers_connected "$API" 2; then
    check "both workers reach the new leader" true
    log "both workers with the new leader $(since_cut)s after the cut"
else
    check "both workers reach the new leader" false
    for w in 1 2; do
        log "worker-$w's last welcome: $(grep 'welcomed by master' "$WORK/worker-$w.log" | tail -n 1)"
    done
fi
before=$(target_count || echo 0)
sleep 2
after=$(target_count || echo 0)
log "target served $before, then $after 2 s later"
check "the target still gets load after the failover" [ "$after" -gt "$before" ]
check "run 2 is still running under the new leader" c_run_state_is "$API" "$id2" running
stop_code=$(ccurl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST "$API/api/v1/runs/$id2/stop" || true)
check "the new leader stops run 2 (202)" [ "$stop_code" = 202 ]
check "run 2 ends (aborted, as stopped)" wait_until 45 c_run_state_is "$API" "$id2" aborted
served2=$(( $(target_count || echo 0) - served1 ))
for k in 1 2 3; do
    [ "$k" = "$old" ] && continue
    log "master $k counts $(c_run_field "$(api_of "$k")" "$id2" .totals.requests || true), target served $served2"
    check "master $k: run 2 counts exactly the target's $served2" \
        wait_until 5 c_run_counts "$(api_of "$k")" "$id2" "$served2" aborted
done

# ---- the link comes back ----
term_before=$(cluster_of "$new" | jq -r .term || true)
ip -n "$SW" link set "v-m$old" up
restored_at=$(date +%s.%N)
log "master $old back on the bridge"
rejoined() {
    local mine theirs lid term
    mine=$(cluster_of "$old") || return 1
    [ "$(jq -r .role <<<"$mine")" = follower ] || return 1
    lid=$(jq -r .leader_id <<<"$mine")
    term=$(jq -r .term <<<"$mine")
    [ "$lid" != 0 ] && [ "$lid" != "$old" ] || return 1
    theirs=$(cluster_of "$lid") || return 1
    [ "$(jq -r .role <<<"$theirs")" = leader ] && [ "$(jq -r .term <<<"$theirs")" = "$term" ]
}
# Raft's connects to and from the cut-off master sit in SYN-SENT during the
# partition (no connect timeout): they complete at the next SYN retransmission
# (1, 3, 7, 15, 31, 63 s after the connect began), so the rejoin can take up
# to half a minute after the link is back.
check "the old leader rejoins as a follower of the leader's term" wait_until 45 rejoined
log "the old leader rejoined $(echo "$(date +%s.%N) - $restored_at" | bc)s after the link came back"
check "the old leader serves run 2 with the same count" \
    wait_until 20 c_run_counts "$(api_of "$old")" "$id2" "$served2" aborted
log "before the rejoin: leader $new, term $term_before; after: $(cluster_of "$old" |
    jq -c '{id, role, leader_id, term, applied_index}' || true)"
finish
