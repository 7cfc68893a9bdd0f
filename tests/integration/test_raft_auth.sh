#!/usr/bin/env bash
# The Raft port admits only masters. Control: a one-node master without a
# secret warns that its Raft port is open, and one RequestVote from an
# outsider raises its term (the attacker speaks real raft). Then a 3-master
# quorum with a cluster secret: an outsider's handshake + RequestVote with a
# huge term, garbage, and a silent connection are each closed by every master
# (the silent one after the 3 s deadline), the term and the leader stay, and
# the quorum still commits. A master restarted with the wrong secret (here
# the join secret, which the cluster secret defaults to) is refused, logged
# on both sides, and the others keep their term.
source "$(dirname "$0")/lib.sh"

attack() { timeout 15 python3 "$LC_SRC/tests/tools/raft_attacker.py" --connect "$1" --mode "$2"; }
term_of() { curl -sf --max-time 2 "$1/api/v1/cluster" | jq -r .term; }
closed_by_master() { [[ $1 == "closed after "* ]]; }
# closed_within OUT LO HI: the master closed the connection between LO and HI seconds.
closed_within() {
    [[ $1 =~ ^closed\ after\ ([0-9.]+) ]] &&
        awk -v t="${BASH_REMATCH[1]}" -v lo="$2" -v hi="$3" 'BEGIN { exit !(t >= lo && t <= hi) }'
}

# ---- control: an open Raft port ----
start_master open
check "an open Raft port is warned about at start" \
    grep -q 'msg="the Raft port is unauthenticated' "$WORK/open.log"
open_term=$(term_of "$API")
# An open port keeps the outsider's connection: the attacker would sit out its
# 8 s --wait. The term is watched meanwhile; stopping the master ends it.
attack "127.0.0.1:$MASTER_RAFT_PORT" vote >"$WORK/open-vote.out" 2>&1 &
OPEN_VOTE=$!
PIDS+=("$OPEN_VOTE")
term_grew() { [ "$(term_of "$API")" -gt "$open_term" ]; }
check "control: without a secret the outsider's RequestVote raises the term" wait_until 10 term_grew
stop_proc "$PID_open"
wait "$OPEN_VOTE" || true

# ---- a quorum with a cluster secret ----
head -c 48 /dev/urandom | base64 >"$WORK/secret"
head -c 48 /dev/urandom | base64 >"$WORK/wrong"
start_cluster 3 --election-timeout-ms 500 --cluster-secret-file "$WORK/secret"
leader=$(leader_id)
term=$(term_of "$(api_of "$leader")")
log "leader is master $leader, term $term"
check "no warning about the Raft port with a secret" \
    sh -c "! grep -q 'Raft port is unauthenticated' '$WORK'/master-*.log"

raft_of() { awk -v k="$1" '$1 == k { print $2 }' "$NODES_CONF"; }
for k in 1 2 3; do
    for mode in vote garbage; do
        out=$(attack "$(raft_of "$k")" "$mode" || true)
        log "master $k, $mode: $out"
        check "master $k closes an outsider's $mode" closed_by_master "$out"
    done
done
# The silent connections wait out the 3 s deadline: one to each master at once.
silent=()
for k in 1 2 3; do
    { attack "$(raft_of "$k")" silent || true; } >"$WORK/silent-$k.out" 2>&1 &
    silent+=($!)
    PIDS+=($!)
done
wait "${silent[@]}" || true
for k in 1 2 3; do
    out=$(cat "$WORK/silent-$k.out")
    log "master $k, silent: $out"
    check "master $k closes a silent connection after its 3 s deadline" closed_within "$out" 2.5 6
done
check "the masters logged why" \
    sh -c "grep -q 'raft connection refused.*wrong proof' '$WORK/master-1.log' && grep -q 'raft connection refused.*timeout during authentication' '$WORK/master-1.log'"
sleep 1
for k in 1 2 3; do
    check "master $k keeps term $term" [ "$(term_of "$(api_of "$k")")" = "$term" ]
done
check "the leader is still master $leader" [ "$(leader_id)" = "$leader" ]
answers() { [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST --data "$2" "$1/api/v1/tenants")" = 201 ]; }
check "the quorum still commits (a tenant is created)" answers "$(api_of "$leader")" '{"name":"after-attack"}'

# ---- a master with the wrong secret ----
victim=$(( leader % 3 + 1 ))
others=()
for k in 1 2 3; do if [ "$k" != "$victim" ]; then others+=("$WORK/master-$k.log"); fi; done
# Only refusals logged after the restart count (the attacks above logged some too).
marks=()
for f in "${others[@]}"; do marks+=("$(wc -l <"$f")"); done
refused_by_others() {
    local i
    for i in 0 1; do
        tail -n +"$((marks[i] + 1))" "${others[i]}" |
            grep -q 'raft connection refused.*direction=incoming.*wrong proof' && return 0
    done
    return 1
}
stop_proc "$(eval echo "\$PID_master_$victim")"
start "master-$victim-wrong" timeout 300 "$LC_BIN/loadmaster" --cluster "$NODES_CONF" --id "$victim" \
    --data-dir "$WORK/master-$victim-data" --admin-token-file "$ADMIN_TOKEN_FILE" \
    --election-timeout-ms 500 --join-secret-file "$WORK/wrong"
check "the wrong-secret master refuses the leader's connections" \
    wait_until 15 grep -q 'raft connection refused.*direction=incoming.*wrong proof' "$WORK/master-$victim-wrong.log"
check "the others refuse the wrong-secret master" wait_until 15 refused_by_others
sleep 2
for k in 1 2 3; do
    [ "$k" = "$victim" ] && continue
    check "master $k keeps term $term" [ "$(term_of "$(api_of "$k")")" = "$term" ]
done
check "the leader is still master $leader" [ "$(leader_id)" = "$leader" ]
check "the quorum commits without it" answers "$(api_of "$leader")" '{"name":"after-wrong-secret"}'
finish
