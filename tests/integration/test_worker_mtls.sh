#!/usr/bin/env bash
# Mutual TLS on the worker port: a worker with a certificate from the
# cluster's CA joins and its run is counted exactly; a plaintext worker, a
# worker whose certificate another CA signed, a worker that does not trust the
# master's CA, one that finds another name in the master's certificate, and
# garbage are all refused with a logged reason while the good worker runs on.
source "$(dirname "$0")/lib.sh"

command -v openssl >/dev/null || { log "openssl is not installed (make -f Makefile.ci deps)"; exit 1; }

make_ca ca
make_ca rogue-ca
make_cert master ca "IP:127.0.0.1,DNS:localhost" serverAuth
make_cert worker ca "DNS:worker.test" clientAuth
make_cert rogue rogue-ca "DNS:rogue.test" clientAuth

start_target
# shellcheck disable=SC2046
start_master master $(tls_of master ca)
# shellcheck disable=SC2046
start_worker good $(tls_of worker ca)
check "a worker with a certificate from the cluster's CA joins" wait_until 15 workers_connected 1
check "the worker logged a mutual TLS connection" grep -q 'connected to master.*tls=mutual' "$WORK/good.log"

cat >"$WORK/scenario.json" <<JSON
{"name": "mtls", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "60s",
 "users": 4, "think_time_ms": 20, "tasks": [{"path": "/"}]}
JSON
id=$(submit_run "$WORK/scenario.json")
check "the run starts over TLS" wait_until 10 run_state_is "$id" running

start_worker plain
# shellcheck disable=SC2046
start_worker rogue $(tls_of rogue ca)
# shellcheck disable=SC2046
start_worker distrustful $(tls_of worker rogue-ca)
check "plaintext: the master closes it for want of a TLS handshake" \
    wait_until 15 grep -q 'reason="no TLS handshake within 5 s' "$WORK/master.log"
check "plaintext: the worker says the master may require mutual TLS" \
    wait_until 15 grep -q "closed by master before its challenge (does it require mutual TLS" "$WORK/plain.log"
check "certificate from another CA: the master names the verification failure" \
    wait_until 10 grep -q 'reason="TLS handshake: certificate verify failed' "$WORK/master.log"
check "certificate from another CA: the worker hears why" \
    wait_until 10 grep -q 'closing master connection.*TLS' "$WORK/rogue.log"
check "not trusting the master's CA: the worker names the verification failure" \
    wait_until 10 grep -q 'reason="TLS handshake: certificate verify failed' "$WORK/distrustful.log"

# The worker dials "localhost" and accepts only a certificate naming it.
make_cert othername ca "DNS:master.elsewhere.test" serverAuth
WRONG_PORT=$(free_port)
WRONG_API=$(free_port)
start wrongname timeout 120 "$LC_BIN/loadmaster" --data-dir "$WORK/wrongname-data" \
    --raft-addr "127.0.0.1:$(free_port)" --listen-workers "127.0.0.1:$WRONG_PORT" \
    --listen-api "127.0.0.1:$WRONG_API" --admin-token-file "$WORK/wrongname.token" \
    $(tls_of othername ca)
start namecheck timeout 120 "$LC_BIN/loadworker" --join "127.0.0.1:$WRONG_PORT" \
    --data-dir "$WORK/namecheck-data" $(tls_of worker ca)
check "a master certificate naming another host is refused by the worker" \
    wait_until 10 grep -q 'certificate verify failed: .*mismatch' "$WORK/namecheck.log"

check "garbage gets the connection closed" \
    sh -c "timeout 10 '$LC_BIN/lc_join_probe' --connect '$WORKER_ADDR' --mode garbage | grep -qx closed"
check "--tls-cert alone is refused at start" \
    sh -c "! '$LC_BIN/loadworker' --join '$WORKER_ADDR' --tls-cert '$WORK/worker.pem' 2>'$WORK/partial.err' && grep -q 'missing: --tls-key --tls-ca' '$WORK/partial.err'"
check "a key that does not match the certificate stops the master at start" \
    sh -c "! timeout 10 '$LC_BIN/loadmaster' --data-dir '$WORK/bad-data' --listen-api 127.0.0.1:$(free_port) --listen-workers 127.0.0.1:$(free_port) --raft-addr 127.0.0.1:$(free_port) --tls-cert '$WORK/master.pem' --tls-key '$WORK/worker.key' --tls-ca '$WORK/ca.pem' 2>'$WORK/mismatch.err' && grep -q 'tls-key.*mismatch' '$WORK/mismatch.err'"

check "only the good worker is connected" workers_connected 1
# The run (60 s at most) went on through all of the above; stopped now, it ends
# as at its duration (Stop, then the worker's final batch).
stop_code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST "$API/api/v1/runs/$id/stop" || true)
check "the good worker's run is still running when stopped (202)" [ "$stop_code" = 202 ]
check "the good worker's run ends (aborted, as stopped)" wait_until 30 run_state_is "$id" aborted
check "its requests equal the target's count" \
    [ "$(curl -sf "$API/api/v1/runs/$id" | jq .totals.requests)" = "$(target_requests)" ]
check "the master is still healthy" http_ok "$API/healthz"
finish
