#!/usr/bin/env bash
# bench.sh — loadworker --local next to wrk, in one invocation, alternating
# A B A B: the same target, connections and duration, generator pinned to one
# core and the target to the other. Prints medians and ratios; never fails on
# speed (it is a measurement, not a test).
#   env: PAIRS (default 5), DURATION seconds (default 10), CONNECTIONS (50)
source "$LC_SRC/tests/integration/lib.sh"

PAIRS=${PAIRS:-5}
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-50}
GEN_CPU=0
TARGET_CPU=$(( $(nproc) > 1 ? 1 : 0 ))
command -v wrk >/dev/null || { echo "bench: wrk is not installed (make -f Makefile.ci deps)"; exit 1; }

start_nginx() {
    NGINX_PORT=$(free_port)
    mkdir -p "$WORK/nginx"
    cat >"$WORK/nginx/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $WORK/nginx;
    proxy_temp_path $WORK/nginx;
    fastcgi_temp_path $WORK/nginx;
    uwsgi_temp_path $WORK/nginx;
    scgi_temp_path $WORK/nginx;
    keepalive_requests 1000000;
    server {
        listen 127.0.0.1:$NGINX_PORT;
        location / { default_type text/plain; return 200 "hello from nginx, 64 bytes of body to make it a small response\n"; }
    }
}
CONF
    start nginx taskset -c "$TARGET_CPU" nginx -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx"
    wait_until 10 http_ok "http://127.0.0.1:$NGINX_PORT/"
}

# cpu_of CMD…: runs CMD, prints "<user+sys seconds>" on fd 3, CMD's stdout on stdout.
run_timed() {
    local tfile=$WORK/time.$$
    /usr/bin/env time -f '%U %S' -o "$tfile" "$@"
    awk '{ printf "%.3f\n", $1 + $2 }' "$tfile" >&3
}

bench_wrk() { # url → "rps cpu_s requests"
    local out cpu
    out=$( { run_timed taskset -c "$GEN_CPU" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" "$1"; } 3>"$WORK/cpu")
    cpu=$(cat "$WORK/cpu")
    local rps req
    rps=$(awk '/^Requests\/sec:/ { print $2 }' <<<"$out")
    req=$(awk '/requests in/ { print $1 }' <<<"$out")
    echo "$rps $cpu $req"
}

bench_lc() { # url → "rps cpu_s requests"
    cat >"$WORK/bench.json" <<JSON
{"name": "bench", "target": "$1", "duration": "${DURATION}s", "users": $CONNECTIONS,
 "spawn_rate": 100000, "tasks": [{"path": "/"}]}
JSON
    local out cpu
    out=$( { run_timed taskset -c "$GEN_CPU" "$LC_BIN/loadworker" --local "$WORK/bench.json" --threads 1 --json --log-level warn; } 3>"$WORK/cpu")
    cpu=$(cat "$WORK/cpu")
    jq -r --arg cpu "$cpu" '"\(.totals.rps) \($cpu) \(.totals.requests)"' <<<"$out"
}

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

compare() { # name url
    local name=$1 url=$2 i
    : >"$WORK/wrk.txt"; : >"$WORK/lc.txt"
    for i in $(seq 1 "$PAIRS"); do
        bench_wrk "$url" >>"$WORK/wrk.txt"
        bench_lc "$url" >>"$WORK/lc.txt"
        log "$name pair $i: wrk $(tail -1 "$WORK/wrk.txt" | cut -d' ' -f1) rps, loadworker $(tail -1 "$WORK/lc.txt" | cut -d' ' -f1) rps"
    done
    local wrk_rps lc_rps wrk_cpr lc_cpr
    wrk_rps=$(cut -d' ' -f1 "$WORK/wrk.txt" | median)
    lc_rps=$(cut -d' ' -f1 "$WORK/lc.txt" | median)
    wrk_cpr=$(awk '{ print $2 / $3 * 1e6 }' "$WORK/wrk.txt" | median)
    lc_cpr=$(awk '{ print $2 / $3 * 1e6 }' "$WORK/lc.txt" | median)
    printf '%-10s wrk_rps=%.0f loadworker_rps=%.0f rps_vs_wrk=%.2f  wrk_cpu_us_per_req=%.2f loadworker_cpu_us_per_req=%.2f cpu_per_request_vs_wrk=%.2f\n' \
        "$name" "$wrk_rps" "$lc_rps" "$(echo "$lc_rps / $wrk_rps" | bc -l)" "$wrk_cpr" "$lc_cpr" "$(echo "$lc_cpr / $wrk_cpr" | bc -l)"
}

echo "bench: $PAIRS pairs of ${DURATION}s, $CONNECTIONS connections, 1 generator thread on CPU $GEN_CPU, target on CPU $TARGET_CPU"
start_nginx
start target taskset -c "$TARGET_CPU" "$LC_BIN/lc_target" --listen 127.0.0.1:0 --port-file "$WORK/target.port" --quiet
wait_until 10 test -s "$WORK/target.port"
TARGET_PORT=$(cat "$WORK/target.port")
compare nginx "http://127.0.0.1:$NGINX_PORT/"
compare lc_target "http://127.0.0.1:$TARGET_PORT/"
