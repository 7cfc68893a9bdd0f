# lib.sh — shared helpers of the integration tests: processes that are always
# stopped, free loopback ports, bounded waits, and counted assertions.
# Source it; it sets -euo pipefail and an EXIT trap that stops everything.
set -euo pipefail

: "${LC_BIN:?LC_BIN must point at the build directory}"
: "${LC_SRC:?LC_SRC must point at the source directory}"

TEST_NAME=$(basename "$0" .sh)
WORK=$(mktemp -d "/tmp/lc-${TEST_NAME}.XXXXXX")
PIDS=()
SCRATCH_DIRS=() # directories outside $WORK that cleanup removes too
PASSED=0
FAILED=0

log() { printf '[%s] %s\n' "$TEST_NAME" "$*" >&2; }

cleanup() {
    local rc=$?
    for pid in "${PIDS[@]:-}"; do
        [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null || true
    done
    local deadline=$((SECONDS + 5))
    for pid in "${PIDS[@]:-}"; do
        [ -z "$pid" ] && continue
        while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
        # timeout(1)'s child first: killed alone, timeout leaves it running (an ASan build
        # stuck in LeakSanitizer's exit check was once left spinning for 40 minutes).
        pkill -KILL -P "$pid" 2>/dev/null || true
        kill -KILL "$pid" 2>/dev/null || true
    done
    # Under ASan/UBSan a daemon's report only reaches its log: fail on it.
    if grep -l -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$WORK"/*.log 2>/dev/null; then
        echo "[$TEST_NAME] sanitizer report in the logs above" >&2
        [ $rc -eq 0 ] && rc=1
        FAILED=$((FAILED + 1))
    fi
    if [ $rc -ne 0 ] || [ $FAILED -ne 0 ]; then
        for f in "$WORK"/*.log; do
            [ -f "$f" ] || continue
            echo "----- $f (last 40 lines)" >&2
            tail -n 40 "$f" >&2
        done
    fi
    # LC_KEEP_WORK=1 keeps the logs and data for a look after the test.
    if [ -n "${LC_KEEP_WORK:-}" ]; then
        echo "[$TEST_NAME] kept $WORK ${SCRATCH_DIRS[*]:-}" >&2
    else
        rm -rf "$WORK" "${SCRATCH_DIRS[@]:-}"
    fi
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start NAME CMD...: runs CMD in the background, output in $WORK/NAME.log;
# its pid goes into PIDS and into the variable PID_<NAME>.
start() {
    local name=$1; shift
    "$@" >"$WORK/$name.log" 2>&1 &
    local pid=$!
    PIDS+=("$pid")
    printf -v "PID_${name//-/_}" '%s' "$pid"
}

# stop_proc PID [SIGNAL]: stops one process started by `start` and waits for
# it (bounded 10 s). Processes run under timeout(1), which forwards TERM and
# INT; KILL is sent to its child directly, as a crash would be.
stop_proc() {
    local pid=$1 sig=${2:-TERM}
    if [ "$sig" = KILL ]; then pkill -KILL -P "$pid" 2>/dev/null || true; fi
    kill -"$sig" "$pid" 2>/dev/null || return 0
    local deadline=$((SECONDS + 10))
    while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
    pkill -KILL -P "$pid" 2>/dev/null || true # the child too, not only timeout(1)
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

# free_port: a TCP port that nothing uses now and this test has not handed
# out before. Below the kernel's ephemeral range (32768+), so outgoing
# connections cannot take it between the check and the bind. Each test draws
# from its own slice of 500 ports (by its name's checksum), so two tests that
# ctest runs side by side rarely draw the same port between check and bind.
# (Callers use $(free_port), a subshell: the ports handed out live in a file.)
PORT_SLICE=$(( $(printf '%s' "$TEST_NAME" | cksum | cut -d' ' -f1) % 44 ))
free_port() {
    local port
    for _ in $(seq 1 200); do
        port=$((10000 + PORT_SLICE * 500 + RANDOM % 500))
        grep -qx "$port" "$WORK/used-ports" 2>/dev/null && continue
        if ! ss -Htan "sport = :$port" | grep -q .; then
            echo "$port" >>"$WORK/used-ports"
            echo "$port"; return 0
        fi
    done
    echo "no free port" >&2; return 1
}

# wait_until TIMEOUT_S CMD...: polls CMD every 0.1 s until it succeeds.
wait_until() {
    local limit=$1; shift
    local deadline=$((SECONDS + limit))
    until "$@" >/dev/null 2>&1; do
        [ $SECONDS -ge $deadline ] && return 1
        sleep 0.1
    done
}

http_ok() { curl -sf --max-time 2 "$1" >/dev/null; }

# API access: every master of a test gets the same --admin-token-file; the
# first to start writes a new admin token there. use_admin_token hands it to
# loadctl (LOADCTL_TOKEN) and to every curl, also those run by `sh -c`,
# through $WORK/.curlrc (CURL_HOME). `curl -q …` skips it (test_access.sh).
ADMIN_TOKEN_FILE=$WORK/admin.token
use_admin_token() {
    wait_until 15 test -s "$ADMIN_TOKEN_FILE" || { log "no admin token in $ADMIN_TOKEN_FILE"; return 1; }
    ADMIN_TOKEN=$(cat "$ADMIN_TOKEN_FILE")
    export LOADCTL_TOKEN=$ADMIN_TOKEN CURL_HOME=$WORK
    printf 'header = "Authorization: Bearer %s"\n' "$ADMIN_TOKEN" >"$WORK/.curlrc"
}
# api_authorized URL: the master at URL knows the admin token (it is stored
# through Raft, so a master has it once it has applied the log that far).
api_authorized() { curl -sf --max-time 2 "$1/api/v1/cluster" >/dev/null; }

# check DESCRIPTION CMD...: one counted assertion.
check() {
    local what=$1; shift
    if "$@"; then PASSED=$((PASSED + 1)); log "ok: $what"
    else FAILED=$((FAILED + 1)); log "FAILED: $what"; fi
}

# finish: prints the tally line and sets the exit status.
finish() {
    echo "$PASSED passed, $FAILED failed"
    [ $FAILED -eq 0 ]
}

# make_ca NAME: a self-signed test CA in $WORK/NAME.{key,pem}.
make_ca() {
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -subj "/CN=loadcluster test $1" -keyout "$WORK/$1.key" -out "$WORK/$1.pem" \
        -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign,cRLSign" 2>>"$WORK/openssl.log"
}

# make_cert NAME CA SAN [USAGE]: a certificate signed by CA in
# $WORK/NAME.{key,pem} naming SAN ("IP:127.0.0.1,DNS:localhost"), for the
# extended key usage USAGE (serverAuth by default; "serverAuth,clientAuth").
make_cert() {
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -subj "/CN=$1" -keyout "$WORK/$1.key" -out "$WORK/$1.csr" 2>>"$WORK/openssl.log"
    printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\nextendedKeyUsage=%s\n' "$3" \
        "${4:-serverAuth}" >"$WORK/$1.ext"
    openssl x509 -req -in "$WORK/$1.csr" -CA "$WORK/$2.pem" -CAkey "$WORK/$2.key" -days 2 \
        -extfile "$WORK/$1.ext" -out "$WORK/$1.pem" 2>>"$WORK/openssl.log"
}

# nginx_conf_head: the start of a test's own nginx.conf, up to inside its http block: one
# worker in the foreground, every file in $WORK/nginx, $WORK/server.{pem,key} for TLS.
nginx_conf_head() {
    mkdir -p "$WORK/nginx"
    cat <<CONF
worker_processes 1;
daemon off;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx-error.log;
events { worker_connections 1024; }
http {
    client_body_temp_path $WORK/nginx;
    proxy_temp_path $WORK/nginx;
    fastcgi_temp_path $WORK/nginx;
    uwsgi_temp_path $WORK/nginx;
    scgi_temp_path $WORK/nginx;
    ssl_certificate $WORK/server.pem;
    ssl_certificate_key $WORK/server.key;
CONF
}

# tls_of NAME CA: the three TLS flags for NAME's certificate under CA.
tls_of() { echo --tls-cert "$WORK/$1.pem" --tls-key "$WORK/$1.key" --tls-ca "$WORK/$2.pem"; }

# Starts lc_target on a free port; sets TARGET_PORT.
start_target() {
    start target timeout 300 "$LC_BIN/lc_target" --listen 127.0.0.1:0 \
        --port-file "$WORK/target.port" --quiet "$@"
    wait_until 10 test -s "$WORK/target.port" || { log "target did not start"; return 1; }
    TARGET_PORT=$(cat "$WORK/target.port")
}

# start_named_target NAME [FLAGS…]: one more lc_target (log NAME.log); sets PORT_<NAME>.
start_named_target() {
    local name=$1; shift
    start "$name" timeout 300 "$LC_BIN/lc_target" --listen 127.0.0.1:0 \
        --port-file "$WORK/$name.port" --quiet "$@"
    wait_until 10 test -s "$WORK/$name.port" || { log "$name did not start"; return 1; }
    printf -v "PORT_$name" '%s' "$(cat "$WORK/$name.port")"
}

target_requests() { curl -sf --max-time 2 "http://127.0.0.1:$TARGET_PORT/__stats" | jq -r "${1:-.requests}"; }

# ---- counting against named targets (test_http2_target.sh, test_h2_pool.sh) ----

# start_h2_targets ["NAME FLAGS…"]…: the targets HTTP/2 tests count against: h2 (lc_target
# --http2, h2c by prior knowledge), goaway (one GOAWAY after 20 streams of each connection),
# plain (HTTP/1.1 only), then one more start_named_target per argument.
start_h2_targets() {
    local spec
    start_named_target h2 --http2 || return 1
    start_named_target goaway --http2 --h2-goaway-after 20 || return 1
    start_named_target plain || return 1
    for spec in "$@"; do
        # shellcheck disable=SC2086 # a spec is NAME and its flags, split on purpose
        start_named_target $spec || return 1
    done
}

# target_port NAME: PORT_<NAME>. target_stats NAME JQ…: its /__stats through jq -r.
# target_reset NAME: zeroes its counters.
target_port() { local v="PORT_$1"; echo "${!v}"; }
target_stats() { curl -sf --max-time 2 "http://127.0.0.1:$(target_port "$1")/__stats" | jq -r "$2"; }
target_reset() { curl -sf --max-time 2 -X POST "http://127.0.0.1:$(target_port "$1")/__reset" >/dev/null; }

# Of a loadworker --json report in $WORK/NAME.json: report_field NAME JQ; report_errors NAME
# KIND (the count of that kind over all endpoints); report_endpoint NAME ENDPOINT [FIELD]
# (FIELD, default requests, summed over the endpoint's rows).
report_field() { jq -r "$2" "$WORK/$1.json"; }
report_errors() { jq --arg k "$2" '[.errors[] | select(.kind == $k) | .count] | add // 0' "$WORK/$1.json"; }
report_endpoint() { jq --arg n "$2" "[.endpoints[] | select(.name == \$n) | .${3:-requests}] | add // 0" "$WORK/$1.json"; }

# expect_paths NAME TARGET ENDPOINT=PATH…: each endpoint's requests in report NAME equal
# the target's count on its path, exactly (and are not 0).
expect_paths() {
    local name=$1 tgt=$2 pair ours theirs; shift 2
    for pair in "$@"; do
        ours=$(report_endpoint "$name" "${pair%%=*}")
        theirs=$(target_stats "$tgt" ".by_path[\"${pair#*=}\"] // 0")
        check "$name: ${pair%%=*} requests equal the target's ${pair#*=} ($ours = $theirs)" \
            test "$ours" -gt 0 -a "$ours" -eq "$theirs"
    done
}

# start_master NAME [FLAGS…]: a one-node master with its data in
# $WORK/NAME-data (kept across restarts) that accepts the admin token; sets
# API and WORKER_ADDR.
start_master() {
    local name=$1; shift
    : "${MASTER_API_PORT:=$(free_port)}" "${MASTER_WORKER_PORT:=$(free_port)}" \
      "${MASTER_RAFT_PORT:=$(free_port)}"
    API="http://127.0.0.1:$MASTER_API_PORT"
    WORKER_ADDR="127.0.0.1:$MASTER_WORKER_PORT"
    start "$name" timeout 300 "$LC_BIN/loadmaster" --data-dir "$WORK/$name-data" \
        --raft-addr "127.0.0.1:$MASTER_RAFT_PORT" --listen-api "127.0.0.1:$MASTER_API_PORT" \
        --listen-workers "$WORKER_ADDR" --admin-token-file "$ADMIN_TOKEN_FILE" "$@"
    wait_until 15 http_ok "$API/healthz" || { log "master did not start"; return 1; }
    use_admin_token
    wait_until 15 api_authorized "$API" || { log "master does not accept the admin token"; return 1; }
}

start_worker() {
    local name=$1; shift
    start "$name" timeout 300 "$LC_BIN/loadworker" --join "$WORKER_ADDR" --threads 1 \
        --name "$name" --data-dir "$WORK/$name-data" "$@"
}

workers_connected() {
    [ "$(curl -sf --max-time 2 "$API/api/v1/workers" | jq '[.workers[] | select(.connected)] | length')" -ge "$1" ]
}

run_state_is() {
    local state
    state=$(curl -sf --max-time 2 "$API/api/v1/runs/$1" | jq -r .state)
    [ "$state" = "$2" ]
}

# start_cluster N [FLAGS…]: N masters on loopback from a generated nodes.conf
# (master-K logs, data in $WORK/master-K-data); waits for a leader. Sets
# NODES_CONF, API_K (per node), JOIN (every worker address, comma-separated).
start_cluster() {
    local n=$1; shift
    NODES_CONF=$WORK/nodes.conf
    : >"$NODES_CONF"
    JOIN=""
    for k in $(seq 1 "$n"); do
        local raft=$(free_port) wport=$(free_port) aport=$(free_port)
        echo "$k 127.0.0.1:$raft 127.0.0.1:$wport 127.0.0.1:$aport" >>"$NODES_CONF"
        printf -v "API_$k" 'http://127.0.0.1:%s' "$aport"
        JOIN="${JOIN:+$JOIN,}127.0.0.1:$wport"
    done
    CLUSTER_FLAGS=("$@")
    for k in $(seq 1 "$n"); do start_cluster_node "$k"; done
    use_admin_token
    wait_until 20 leader_known || { log "no leader elected"; return 1; }
    for k in $(seq 1 "$n"); do
        wait_until 15 api_authorized "$(api_of "$k")" || { log "master $k does not accept the admin token"; return 1; }
    done
}

# start_cluster_node K: (re)starts master K of the cluster.
start_cluster_node() {
    local k=$1
    start "master-$k" timeout 300 "$LC_BIN/loadmaster" --cluster "$NODES_CONF" --id "$k" \
        --data-dir "$WORK/master-$k-data" --admin-token-file "$ADMIN_TOKEN_FILE" "${CLUSTER_FLAGS[@]}"
}

api_of() { local v="API_$1"; echo "${!v}"; }

# leader_id: the leader's id as the first answering master reports it.
leader_id() {
    local k id
    for k in $(awk '{ print $1 }' "$NODES_CONF"); do
        id=$(curl -sf --max-time 1 "$(api_of "$k")/api/v1/cluster" | jq -r '.leader_id // 0') || continue
        if [ -n "$id" ] && [ "$id" != 0 ]; then
            # Only a leader that says so itself counts.
            [ "$(curl -sf --max-time 1 "$(api_of "$id")/api/v1/cluster" | jq -r .role)" = leader ] && { echo "$id"; return 0; }
        fi
    done
    return 1
}
leader_known() { leader_id >/dev/null; }

# await_new_leader OLD TRIES KILLED_AT: polls (TRIES × 50 ms) for a leader
# other than OLD; sets new_leader (empty if none) and elected_in (seconds
# since KILLED_AT, a `date +%s.%N`), and defines within LIMIT.
await_new_leader() {
    local old=$1 tries=$2 since=$3
    new_leader=""
    for _ in $(seq 1 "$tries"); do
        new_leader=$(leader_id 2>/dev/null) && [ "$new_leader" != "$old" ] && break
        new_leader=""
        sleep 0.05
    done
    elected_in=$(echo "$(date +%s.%N) - $since" | bc)
}
within() { [ -n "$new_leader" ] && awk -v t="$elected_in" -v limit="$1" 'BEGIN { exit !(t <= limit) }'; }

# join_workers N [FLAGS…]: workers worker-1…N (one engine thread each) that
# join every master of the cluster ($JOIN).
join_workers() {
    local n=$1; shift
    for w in $(seq 1 "$n"); do
        start "worker-$w" timeout 300 "$LC_BIN/loadworker" --join "$JOIN" --threads 1 \
            --name "worker-$w" --data-dir "$WORK/worker-$w-data" "$@"
    done
}

# submit_run FILE: posts a scenario to $API and prints the new run's id.
submit_run() { curl -sf -X POST --data-binary @"$1" "$API/api/v1/runs" | jq -r .id; }
