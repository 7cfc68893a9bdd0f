#!/usr/bin/env bash
# Raft over mutual TLS (--tls-cert/--tls-key/--tls-ca, no secret): three
# masters whose certificates name 127.0.0.1 form a quorum, commit, hand a
# snapshot to a follower that lost its data, and elect a new leader after
# kill -9. Outsiders are closed and change no term: plaintext raft, a client
# certificate from another CA, a worker's certificate from the cluster's CA
# (it does not name the host it claims), and a certificate that names the
# host but claims a server id the configuration does not have.
source "$(dirname "$0")/lib.sh"

command -v openssl >/dev/null || { log "openssl is not installed (make -f Makefile.ci deps)"; exit 1; }

make_ca ca
make_ca rogue-ca
make_cert master ca "IP:127.0.0.1,DNS:localhost" serverAuth,clientAuth
make_cert worker ca "DNS:worker.test" clientAuth
make_cert loopback ca "IP:127.0.0.1" clientAuth
make_cert rogue rogue-ca "IP:127.0.0.1" clientAuth

attack() {
    local raft=$1 cert=$2; shift 2
    timeout 15 python3 "$LC_SRC/tests/tools/raft_attacker.py" --connect "$raft" --mode vote \
        --tls-cert "$WORK/$cert.pem" --tls-key "$WORK/$cert.key" --tls-ca "$WORK/ca.pem" "$@"
}
term_of() { curl -sf --max-time 2 "$1/api/v1/cluster" | jq -r .term; }
closed_by_master() { [[ $1 == "closed after "* ]]; }
commits() {
    [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST --data "{\"name\":\"$2\"}" \
        "$1/api/v1/tenants")" = 201 ]
}
raft_of() { awk -v k="$1" '$1 == k { print $2 }' "$NODES_CONF"; }

# shellcheck disable=SC2046
start_cluster 3 --election-timeout-ms 500 --snapshot-threshold 32 --snapshot-trailing 8 \
    $(tls_of master ca)
leader=$(leader_id)
term=$(term_of "$(api_of "$leader")")
log "leader is master $leader, term $term"
check "no warning about an open Raft port with mutual TLS" \
    sh -c "! grep -q 'Raft port is unauthenticated' '$WORK'/master-*.log"
check "the quorum commits over TLS" commits "$(api_of "$leader")" first

follower=$(( leader % 3 + 1 ))
raft=$(raft_of "$follower")
out=$(timeout 15 python3 "$LC_SRC/tests/tools/raft_attacker.py" --connect "$raft" --mode vote || true)
log "plaintext raft: $out"
check "plaintext raft is closed" closed_by_master "$out"
# The master logs at most one refusal a second per direction: space the attacks.
sleep 1.1
out=$(attack "$raft" rogue || true)
log "another CA: $out"
check "a client certificate from another CA is closed" closed_by_master "$out"
sleep 1.1
out=$(attack "$raft" worker --id "$leader" --address "$(raft_of "$leader")" || true)
log "a worker's certificate claiming the leader: $out"
check "a certificate that does not name the claimed host is closed" closed_by_master "$out"
sleep 1.1
out=$(attack "$raft" loopback --id 99 --address "$raft" || true)
log "an id not in the configuration: $out"
check "a server id the configuration lacks is closed" closed_by_master "$out"
log_of() { echo "$WORK/master-$follower.log"; }
check "the master names the TLS verification failure" \
    grep -q 'raft connection refused.*TLS handshake: certificate verify failed' "$(log_of)"
check "the master names the host the certificate lacks" \
    grep -q 'raft connection refused.*does not name 127.0.0.1, the host it claims' "$(log_of)"
check "the master names the id it does not know" \
    grep -q 'raft connection refused.*server 99 at .* is not in the Raft configuration' "$(log_of)"
sleep 1
for k in 1 2 3; do
    check "master $k keeps term $term" [ "$(term_of "$(api_of "$k")")" = "$term" ]
done

# A follower that lost its data: the leader sends a snapshot through the relay.
stop_proc "$(eval echo "\$PID_master_$follower")"
for i in $(seq 1 80); do commits "$(api_of "$leader")" "t$i" || { log "tenant t$i not created"; break; }; done
rm -rf "$WORK/master-$follower-data"
start_cluster_node "$follower"
applied_on() { curl -sf --max-time 2 "$(api_of "$1")/api/v1/cluster" | jq -r .applied_index; }
target_index=$(curl -sf --max-time 2 "$(api_of "$leader")/api/v1/cluster" | jq -r .commit_index)
caught_up() { [ "$(applied_on "$follower" || echo 0)" -ge "$target_index" ]; }
check "the wiped follower catches up to index $target_index over TLS" wait_until 30 caught_up
check "it did so from the leader's snapshot" \
    sh -c "ls '$WORK/master-$follower-data' | grep -q '^snapshot-'"

# kill -9 of the leader: the others elect a new one over TLS.
stop_proc "$(eval echo "\$PID_master_$leader")" KILL
new_leader() { local id; id=$(leader_id) && [ "$id" != "$leader" ]; }
check "a new leader is elected over TLS" wait_until 20 new_leader
check "the new leader commits" commits "$(api_of "$(leader_id)")" after-failover
finish
