#!/usr/bin/env bash
# test_tls.sh — loadworker --local against nginx over HTTPS with a test CA:
# verified requests counted exactly, resumed sessions on a server that closes
# after each response, a wrong CA or a wrong name failing as "tls", insecure
# mode, the CA inline (tls.ca_pem) or by name from --tls-ca-dir, and a
# ca_file that cannot be used refusing to start with words that do not say
# whether the file exists, and close_idle_target resuming a session per request.
source "$LC_SRC/tests/integration/lib.sh"

command -v nginx >/dev/null || { log "nginx is not installed (make -f Makefile.ci deps)"; exit 1; }
command -v openssl >/dev/null || { log "openssl is not installed (make -f Makefile.ci deps)"; exit 1; }

make_ca ca
make_ca other-ca
make_cert server ca "IP:127.0.0.1,DNS:localhost"
make_cert wrongname ca "DNS:other.example"

# One nginx, three servers: keep-alive, close after each response, and a
# certificate for another name. One access log each, to count what was served.
write_nginx_conf() {
    mkdir -p "$WORK/nginx"
    cat >"$WORK/nginx/nginx.conf" <<CONF
$(nginx_conf_head)
    ssl_session_cache shared:SSL:1m;
    keepalive_requests 1000000;
    server {
        listen 127.0.0.1:$KA_PORT ssl;
        access_log $WORK/ka.access;
        location / { default_type text/plain; return 200 "hello over tls\n"; }
    }
    server {
        listen 127.0.0.1:$CLOSE_PORT ssl;
        access_log $WORK/close.access;
        keepalive_timeout 0;
        location / { default_type text/plain; return 200 "one response per connection\n"; }
    }
    server {
        listen 127.0.0.1:$NAME_PORT ssl;
        ssl_certificate $WORK/wrongname.pem;
        ssl_certificate_key $WORK/wrongname.key;
        access_log $WORK/name.access;
        location / { default_type text/plain; return 200 "wrong name\n"; }
    }
}
CONF
}

# free_port's ports are free when picked; another test may still take one
# before nginx binds it: try others a few times.
nginx_up=false
for attempt in 1 2 3; do
    KA_PORT=$(free_port)
    CLOSE_PORT=$(free_port)
    NAME_PORT=$(free_port)
    write_nginx_conf
    start nginx timeout 300 nginx -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx"
    if wait_until 10 curl -sf --max-time 2 --cacert "$WORK/ca.pem" "https://127.0.0.1:$KA_PORT/"; then
        nginx_up=true
        break
    fi
    log "nginx did not start (attempt $attempt)"
    stop_proc "$PID_nginx"
done
$nginx_up || { log "nginx did not start"; exit 1; }
: >"$WORK/ka.access"

lines() { wc -l <"$1"; }

# run NAME PORT TLS_JSON [USERS]: a 1 s run; the report in $WORK/NAME.json,
# stderr in $WORK/NAME.log, the exit status in RC.
run() {
    cat >"$WORK/$1.scenario.json" <<JSON
{"name": "$1", "target": "https://127.0.0.1:$2", "duration": "1s",
 "users": ${4:-10}, "spawn_rate": 1000, "tls": $3, "tasks": [{"path": "/"}]}
JSON
    RC=0
    timeout 30 "$LC_BIN/loadworker" --local "$WORK/$1.scenario.json" --threads 2 --json \
        --tls-ca-dir "$WORK" \
        >"$WORK/$1.json" 2>"$WORK/$1.log" || RC=$?
}
field() { jq -r "$2" "$WORK/$1.json"; }
tls_errors() { jq '[.errors[] | select(.kind == "tls") | .count] | add // 0' "$WORK/$1.json"; }
other_errors() { jq '[.errors[] | select(.kind != "tls") | .count] | add // 0' "$WORK/$1.json"; }

# (1) Verified against the test CA: every request served and counted.
before=$(lines "$WORK/ka.access")
run verified "$KA_PORT" "{\"ca_file\": \"ca.pem\"}"
served=$(( $(lines "$WORK/ka.access") - before ))
requests=$(field verified .totals.requests)
log "verified: exit $RC, requests $requests, served $served, handshakes $(field verified .totals.tls_handshakes), resumed $(field verified .totals.tls_resumed)"
check "verified run exits 0" test "$RC" -eq 0
check "verified run made requests ($requests)" test "$requests" -gt 100
check "verified run has no failures" test "$(field verified .totals.failures)" -eq 0
check "requests equal nginx's access log exactly ($requests = $served)" test "$requests" -eq "$served"
check "full handshakes counted (≥ 1)" test "$(field verified .totals.tls_handshakes)" -ge 1

# (1b) 400 KB POSTs to a server that lets each one wait in the socket before reading it, in a
# network namespace of this test's own whose TCP send buffers are 16 KB (and the server's
# receive buffer 8 KB): the TLS transport cannot send a request at once and must keep the rest, for the engine renders every request
# into one buffer that the next user's request overwrites. Each body starts and ends with its
# user's id; the server answers with what it got, and a step that runs only on a mismatch
# counts any request that arrived with another user's bytes.
cat >"$WORK/slow.sh" <<'SH'
ip link set lo up && sysctl -qw net.ipv4.tcp_wmem="4096 16384 16384" || exit 3
timeout 30 python3 "$LC_SRC/tests/tools/tls_slow_reader.py" "$WORK/server.pem" "$WORK/server.key" \
    "$WORK/slow.port" 0.2 2>"$WORK/slow-server.log" &
for i in $(seq 1 50); do [ -s "$WORK/slow.port" ] && break; sleep 0.1; done
jq -n --arg url "https://127.0.0.1:$(cat "$WORK/slow.port")" \
    '{name: "big", target: $url, duration: "3s", users: 4, spawn_rate: 1000,
      tls: {ca_file: "ca.pem"}, journeys: [{name: "post", steps: [
        {name: "big", method: "POST", path: "/big", body: ("u${user_id}:" + "a" * 400000 + ":u${user_id}"),
         expect: {body_contains: "len=400006;"},
         extract: {head: {regex: "head=u([0-9]+):"}, tail: {regex: "tail=a*:u([0-9]+);"}}},
        {if: "${head} != ${user_id} || ${tail} != ${user_id}",
         then: [{name: "mismatch", path: "/mismatch"}]}]}]}' >"$WORK/big.scenario.json"
timeout 30 "$LC_BIN/loadworker" --local "$WORK/big.scenario.json" \
    --threads 1 --json --tls-ca-dir "$WORK" >"$WORK/big.json" 2>"$WORK/big.log"
rc=$?
kill %1 2>/dev/null
exit $rc
SH
RC=0
WORK=$WORK LC_BIN=$LC_BIN LC_SRC=$LC_SRC timeout 60 unshare -n bash "$WORK/slow.sh" || RC=$?
big=$(jq '[.endpoints[] | select(.name == "big") | .requests] | add // 0' "$WORK/big.json" 2>/dev/null || echo 0)
mismatch=$(jq '[.endpoints[] | select(.name == "mismatch") | .requests] | add // 0' "$WORK/big.json" 2>/dev/null || echo 0)
log "400 KB posts to a slow TLS reader: exit $RC, big $big, mismatch $mismatch, errors $(jq -c .errors "$WORK/big.json" 2>/dev/null)"
check "400 KB posts over TLS to a slow reader: requests made ($big)" test "$RC" -eq 0 -a "$big" -ge 8
check "... each arrived whole, its user's own (no failures, no mismatch)" \
    test "$(field big .totals.failures)" -eq 0 -a "$mismatch" -eq 0

# (2) A server closing after each response: new connections resume the session.
before=$(lines "$WORK/close.access")
run resumed "$CLOSE_PORT" "{\"ca_file\": \"ca.pem\"}" 4
served=$(( $(lines "$WORK/close.access") - before ))
requests=$(field resumed .totals.requests)
resumed=$(field resumed .totals.tls_resumed)
full=$(field resumed .totals.tls_handshakes)
log "close-per-response: requests $requests, served $served, handshakes $full, resumed $resumed"
check "close-per-response run has no failures" test "$(field resumed .totals.failures)" -eq 0
# Exact even though each response closes its connection: a stop that lands
# while that close completes must still count the response.
check "close-per-response requests equal the access log exactly ($requests = $served)" \
    test "$requests" -eq "$served"
check "sessions resumed (tls_resumed $resumed > 0)" test "$resumed" -gt 0
check "one handshake per request (full $full + resumed $resumed ≥ requests $requests)" \
    test $((full + resumed)) -ge "$requests"

# (3) A CA that did not sign the server's certificate: every request fails as tls.
before=$(lines "$WORK/ka.access")
run wrong-ca "$KA_PORT" "{\"ca_file\": \"other-ca.pem\"}"
served=$(( $(lines "$WORK/ka.access") - before ))
requests=$(field wrong-ca .totals.requests)
log "wrong CA: requests $requests, failures $(field wrong-ca .totals.failures), tls $(tls_errors wrong-ca), served $served"
check "wrong CA: requests were attempted ($requests)" test "$requests" -gt 0
check "wrong CA: every request failed" test "$(field wrong-ca .totals.failures)" -eq "$requests"
check "wrong CA: all failures are tls errors" \
    test "$(tls_errors wrong-ca)" -eq "$requests" -a "$(other_errors wrong-ca)" -eq 0
check "wrong CA: nothing reached nginx's access log ($served)" test "$served" -eq 0
check "wrong CA: no handshake counted" test "$(field wrong-ca .totals.tls_handshakes)" -eq 0

# (4) The same wrong CA with verification off.
run insecure "$KA_PORT" "{\"ca_file\": \"other-ca.pem\", \"insecure\": true}"
log "insecure: requests $(field insecure .totals.requests), failures $(field insecure .totals.failures)"
check "insecure: requests succeed" \
    test "$(field insecure .totals.requests)" -gt 100 -a "$(field insecure .totals.failures)" -eq 0

# (5) A certificate for another name, the target given by IP: fails as tls.
run wrong-name "$NAME_PORT" "{\"ca_file\": \"ca.pem\"}"
requests=$(field wrong-name .totals.requests)
log "wrong name: requests $requests, tls $(tls_errors wrong-name)"
check "wrong name: every request failed as tls" \
    test "$requests" -gt 0 -a "$(tls_errors wrong-name)" -eq "$requests"
check "wrong name: nothing reached nginx's access log" test "$(lines "$WORK/name.access")" -eq 0

# (6) The CA inline: verified as with the file.
run inline "$KA_PORT" "$(jq -n --rawfile pem "$WORK/ca.pem" '{ca_pem: $pem}')"
check "inline ca_pem: exit 0, no failures" \
    test "$RC" -eq 0 -a "$(field inline .totals.failures)" -eq 0 -a "$(field inline .totals.requests)" -gt 100

# (7) A ca_file that cannot be used: the run does not start, and the words
# are the same whether the file is missing or is not a certificate (the log
# line for the operator says which).
generic="tls.ca_file: not available on this worker"
run missing-ca "$KA_PORT" '{"ca_file": "no-such-ca.pem"}'
check "missing ca_file: exit 1 (got $RC)" test "$RC" -eq 1
check "missing ca_file: the generic refusal" grep -q "$generic" "$WORK/missing-ca.log"
check "missing ca_file: the log says why" \
    grep -q 'reason="no-such-ca.pem: No such file or directory"' "$WORK/missing-ca.log"
echo "not a certificate" >"$WORK/garbage.pem"
run garbage-ca "$KA_PORT" '{"ca_file": "garbage.pem"}'
check "unloadable ca_file: exit 1 (got $RC)" test "$RC" -eq 1
check "unloadable ca_file: the generic refusal" grep -q "$generic" "$WORK/garbage-ca.log"
run path-ca "$KA_PORT" "{\"ca_file\": \"$WORK/ca.pem\"}"
check "a ca_file path: refused (exit $RC)" test "$RC" -ne 0
check "a ca_file path: the error names tls.ca_file" grep -q "tls.ca_file: expected a file name" "$WORK/path-ca.log"


# (8) close_idle_target: a user thinking past idle_timeout_ms closes target's connection (its
# OpenSSL state freed) and resumes the session on its next request; without it, the users
# keep the connections they opened.
idle_run() {
    cat >"$WORK/$1.scenario.json" <<JSON
{"name": "$1", "target": "https://127.0.0.1:$KA_PORT", "duration": "3s", "users": 3,
 "spawn_rate": 1000, "think_time_ms": 600, "idle_timeout_ms": 150, $2
 "tls": {"ca_file": "ca.pem"}, "tasks": [{"path": "/"}]}
JSON
    RC=0
    timeout 30 "$LC_BIN/loadworker" --local "$WORK/$1.scenario.json" --threads 1 --json \
        --tls-ca-dir "$WORK" >"$WORK/$1.json" 2>"$WORK/$1.log" || RC=$?
}
before=$(lines "$WORK/ka.access")
idle_run idle-close '"close_idle_target": true,'
served=$(( $(lines "$WORK/ka.access") - before ))
requests=$(field idle-close .totals.requests)
full=$(field idle-close .totals.tls_handshakes)
resumed=$(field idle-close .totals.tls_resumed)
log "close_idle_target: exit $RC, requests $requests, served $served, handshakes $full, resumed $resumed"
check "close_idle_target: no failures, requests equal the access log ($requests = $served)" \
    test "$RC" -eq 0 -a "$(field idle-close .totals.failures)" -eq 0 -a "$requests" -eq "$served" -a "$requests" -ge 9
check "close_idle_target: a handshake per request (full $full + resumed $resumed = requests $requests)" \
    test $((full + resumed)) -eq "$requests"
check "close_idle_target: the later ones resumed ($resumed >= requests - users)" \
    test "$resumed" -ge $((requests - 3))
idle_run idle-keep ''
requests=$(field idle-keep .totals.requests)
full=$(field idle-keep .totals.tls_handshakes)
resumed=$(field idle-keep .totals.tls_resumed)
log "connections kept: exit $RC, requests $requests, handshakes $full, resumed $resumed"
check "without close_idle_target: one handshake per user ($full + $resumed = 3, requests $requests)" \
    test "$RC" -eq 0 -a $((full + resumed)) -eq 3 -a "$requests" -ge 9

finish
