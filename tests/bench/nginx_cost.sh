#!/usr/bin/env bash
# nginx_cost.sh — what serving each HTTPS client costs nginx: wrk, then loadworker with its TLS
# records taken over from OpenSSL, then with them left to OpenSSL
# (LOADWORKER_TLS_OPENSSL_RECORDS=1), then with its engine sleeping between responses instead
# of polling (--busy-poll-us 0), PAIRS times over, the client pinned to one core and nginx
# to the other. Prints, per run, requests per second, the client's CPU per request, how often
# the client slept (voluntary context switches per second: each one nginx pays to wake) and
# the nginx worker's CPU per request (from /proc/PID/stat around the run). Issue 16's HTTPS
# gap: with nginx at 100 % of its core, its cost per request sets the requests per second.
# A measurement, never a test.
#   env: PAIRS (3), DURATION seconds (6), CONNECTIONS (50)
#   run: LC_BIN=$PWD/build LC_SRC=$PWD bash tests/bench/nginx_cost.sh
source "$LC_SRC/tests/integration/lib.sh"

PAIRS=${PAIRS:-3}
DURATION=${DURATION:-6}
CONNECTIONS=${CONNECTIONS:-50}
GEN_CPU=0
TARGET_CPU=$(( $(nproc) > 1 ? 1 : 0 ))
command -v wrk >/dev/null || { echo "nginx_cost: wrk is not installed (make -f Makefile.ci deps)"; exit 1; }

PORT=$(free_port)
mkdir -p "$WORK/nginx"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj /CN=127.0.0.1 -keyout "$WORK/nginx/key.pem" -out "$WORK/nginx/cert.pem" 2>/dev/null
cat >"$WORK/nginx/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $WORK/nginx;
    keepalive_requests 1000000;
    server {
        listen 127.0.0.1:$PORT ssl;
        ssl_certificate $WORK/nginx/cert.pem;
        ssl_certificate_key $WORK/nginx/key.pem;
        ssl_session_cache shared:SSL:10m;
        location / { default_type text/plain; return 200 "hello from nginx, 64 bytes of body to make it a small response\n"; }
    }
}
CONF
start nginx taskset -c "$TARGET_CPU" nginx -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx"
worker_pid() { pgrep -P "$(cat "$WORK/nginx/nginx.pid" 2>/dev/null || echo 0)" | head -1; }
wait_until 10 test -n "$(worker_pid)" || { log "nginx did not start"; exit 1; }
NGINX_WORKER=$(worker_pid)
cat >"$WORK/lc.json" <<JSON
{"name": "nginx-cost", "target": "https://127.0.0.1:$PORT", "duration": "${DURATION}s",
 "users": $CONNECTIONS, "spawn_rate": 100000, "tls": {"insecure": true}, "tasks": [{"path": "/"}]}
JSON

nginx_ticks() { awk '{ print $14 + $15 }' "/proc/$NGINX_WORKER/stat"; }
# line NAME REQUESTS RPS: the client's and nginx's CPU per request (clock ticks are 10 ms).
line() {
    local t0=$1 t1=$2 name=$3 requests=$4 rps=$5 cpu sleeps
    cpu=$(awk '{ print $1 + $2 }' "$WORK/time")
    sleeps=$(awk '{ print $3 }' "$WORK/time")
    printf '%-14s rps=%-9.0f client_us_per_req=%-6.2f client_sleeps_per_s=%-7.0f nginx_us_per_req=%.2f\n' \
        "$name" "$rps" "$(echo "$cpu * 1000000 / $requests" | bc -l)" "$(echo "$sleeps / $DURATION" | bc -l)" \
        "$(echo "($t1 - $t0) * 10000 / $requests" | bc -l)"
}
run_wrk() {
    local t0 t1
    t0=$(nginx_ticks)
    /usr/bin/env time -f '%U %S %w' -o "$WORK/time" taskset -c "$GEN_CPU" wrk -t1 -c"$CONNECTIONS" \
        -d"${DURATION}s" "https://127.0.0.1:$PORT/" >"$WORK/wrk.out" 2>&1
    t1=$(nginx_ticks)
    line "$t0" "$t1" wrk "$(awk '/requests in/ { print $1 }' "$WORK/wrk.out")" \
        "$(awk '/Requests\/sec/ { print $2 }' "$WORK/wrk.out")"
}
run_lc() { # NAME "LOADWORKER OPTIONS" [ENV=VALUE]
    local name=$1 args=$2 t0 t1
    shift 2
    t0=$(nginx_ticks)
    # shellcheck disable=SC2086 # args: options, split on purpose
    /usr/bin/env time -f '%U %S %w' -o "$WORK/time" env "$@" taskset -c "$GEN_CPU" \
        "$LC_BIN/loadworker" --local "$WORK/lc.json" --threads 1 $args --json --log-level warn >"$WORK/lc.out"
    t1=$(nginx_ticks)
    line "$t0" "$t1" "$name" "$(jq .totals.requests "$WORK/lc.out")" "$(jq .totals.rps "$WORK/lc.out")"
}

echo "nginx_cost: $PAIRS rounds of ${DURATION}s, $CONNECTIONS connections, TLS 1.2 (nginx 1.22's default), client on CPU $GEN_CPU, nginx on CPU $TARGET_CPU"
for _ in $(seq 1 "$PAIRS"); do
    run_wrk
    run_lc loadworker "" LC_UNUSED=1
    run_lc lw-openssl "" LOADWORKER_TLS_OPENSSL_RECORDS=1
    run_lc lw-sleeping "--busy-poll-us 0" LC_UNUSED=1
done
stop_proc "$PID_nginx"
