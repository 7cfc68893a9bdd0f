#!/usr/bin/env bash
# bench.sh — loadworker --local next to wrk, in one invocation, alternating
# A B A B: the same target, connections and duration, generator pinned to one
# core and the target to the other. Plain HTTP and HTTPS against nginx, plain
# against lc_target, HTTP/2 (h2c and over TLS) against nginx next to h2load with the
# same connections and one stream each (our model: a connection per user), h2load -c4 -m25
# beside our per-engine pool (H2_POOL_C, H2_POOL_M), and the memory of idle users (plain,
# HTTPS next to wrk's per TLS connection, HTTP/2 over TLS). Prints medians, ratios and
# one summary block; never fails on speed (it is a measurement, not a test).
# Journeys (issue 14) are measured by the functions of journeys.sh, scripted users
# (issue 15) by those of scripts.sh.
#   env: PAIRS (default 5), DURATION seconds (default 10), CONNECTIONS (50),
#        IDLE_USERS (15000), TLS_IDLE_USERS (IDLE_USERS), LOCUST_IDLE_USERS (IDLE_USERS),
#        JOURNEY_IDLE_SPAWN (spawn rate of the idle journey users, 100000),
#        BENCH_ONLY (plain | journeys | scripts: only that part, default all three;
#        idle: plain's idle-memory lines alone; h2: its HTTP/2 lines alone;
#        https: its HTTPS line alone; h2pool: its multiplexed HTTP/2 lines alone;
#        idle-h2c: the idle h2c line beside h2load's alone; idle-h2tls: the idle
#        HTTP/2-over-TLS line alone; idle-busy: idle users after
#        IDLE_BUSY_REQUESTS (30) requests each, IDLE_BUSY_USERS (2000) of them, alone;
#        script-idle: the scripts part's idle line alone), LC_WORKER_ARGS (more loadworker options for the
#        throughput pairs, e.g. --busy-poll-us 0),
#        and scripts.sh's SCRIPT_* settings
source "$LC_SRC/tests/integration/lib.sh"
source "$LC_SRC/tests/bench/journeys.sh"
source "$LC_SRC/tests/bench/scripts.sh"

PAIRS=${PAIRS:-5}
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-50}
IDLE_USERS=${IDLE_USERS:-15000}
TLS_IDLE_USERS=${TLS_IDLE_USERS:-$IDLE_USERS}
LOCUST_IDLE_USERS=${LOCUST_IDLE_USERS:-$IDLE_USERS}
BENCH_ONLY=${BENCH_ONLY:-}
GEN_CPU=0
TARGET_CPU=$(( $(nproc) > 1 ? 1 : 0 ))
SUMMARY=()
command -v wrk >/dev/null || { echo "bench: wrk is not installed (make -f Makefile.ci deps)"; exit 1; }
command -v openssl >/dev/null || { echo "bench: the openssl CLI is missing"; exit 1; }
# Idle users need a descriptor each, on both sides.
ulimit -n "$(ulimit -Hn)"

make_cert() {
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
        -keyout "$WORK/nginx/key.pem" -out "$WORK/nginx/cert.pem" 2>"$WORK/openssl.log"
}

start_nginx() {
    NGINX_PORT=$(free_port)
    NGINX_TLS_PORT=$(free_port)
    NGINX_H2C_PORT=$(free_port)
    NGINX_H2_PORT=$(free_port)
    mkdir -p "$WORK/nginx"
    make_cert
    local body='return 200 "hello from nginx, 64 bytes of body to make it a small response\n";'
    cat >"$WORK/nginx/nginx.conf" <<CONF
worker_processes 1;
worker_rlimit_nofile $((2 * TLS_IDLE_USERS + 8192));
daemon off;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log;
events { worker_connections $((TLS_IDLE_USERS + 4096)); }
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
        location / { default_type text/plain; $body }
        location = /nginx_status { stub_status; }
    }
    server {
        listen 127.0.0.1:$NGINX_TLS_PORT ssl;
        ssl_certificate $WORK/nginx/cert.pem;
        ssl_certificate_key $WORK/nginx/key.pem;
        ssl_session_cache shared:SSL:10m;
        ssl_session_timeout 10m;
        location / { default_type text/plain; $body }
    }
    server {
        listen 127.0.0.1:$NGINX_H2C_PORT http2;
        location / { default_type text/plain; $body }
    }
    server {
        listen 127.0.0.1:$NGINX_H2_PORT ssl http2;
        ssl_certificate $WORK/nginx/cert.pem;
        ssl_certificate_key $WORK/nginx/key.pem;
        ssl_session_cache shared:SSL:10m;
        location / { default_type text/plain; $body }
    }
}
CONF
    start nginx taskset -c "$TARGET_CPU" nginx -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx"
    wait_until 10 http_ok "http://127.0.0.1:$NGINX_PORT/"
}

# run_timed CMD…: runs CMD, prints "<user+sys seconds>" on fd 3, CMD's stdout on stdout.
run_timed() {
    local tfile=$WORK/time.$$
    /usr/bin/env time -f '%U %S' -o "$tfile" "$@"
    awk '{ printf "%.3f\n", $1 + $2 }' "$tfile" >&3
}

bench_wrk() { # url [-- script args] → "rps cpu_s requests"; WRK_SCRIPT: wrk's -s
    local out cpu
    out=$( { run_timed taskset -c "$GEN_CPU" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" ${WRK_SCRIPT:+-s "$WRK_SCRIPT"} "$@"; } 3>"$WORK/cpu")
    cpu=$(cat "$WORK/cpu")
    local rps req
    rps=$(awk '/^Requests\/sec:/ { print $2 }' <<<"$out")
    req=$(awk '/requests in/ { print $1 }' <<<"$out")
    echo "$rps $cpu $req"
}

# h2load with CONNECTIONS connections of one stream each (or H2LOAD_CONNS of H2LOAD_STREAMS;
# h2c by prior knowledge for an http url) → "rps cpu_s requests", as bench_wrk.
bench_h2load() {
    local out cpu rps req
    out=$( { run_timed taskset -c "$GEN_CPU" h2load -t1 -c"${H2LOAD_CONNS:-$CONNECTIONS}" -m"${H2LOAD_STREAMS:-1}" -D"$DURATION" "$1"; } 3>"$WORK/cpu")
    cpu=$(cat "$WORK/cpu")
    rps=$(awk '/^finished in/ { print $4 }' <<<"$out")
    req=$(awk '/^requests:/ { print $8 }' <<<"$out")
    echo "${rps:-0} $cpu ${req:-0}"
}

# scenario FILE URL USERS DURATION_S [EXTRA_FIELDS]: a one-task scenario (SCENARIO_BODY set:
# that in place of the task, e.g. journeys).
scenario() {
    local body='"tasks": [{"path": "/"}]'
    cat >"$1" <<JSON
{"name": "bench", "target": "$2", "duration": "${4}s", "users": $3,
 "spawn_rate": ${SPAWN_RATE:-100000}, ${5:-} ${SCENARIO_BODY:-$body}}
JSON
}

# run_lc FILE: loadworker --local on scenario FILE, one thread pinned to the
# generator CPU → "rps cpu_s requests failures tls_handshakes tls_resumed polled_s" (polled_s:
# of cpu_s, the engine's polling for responses that had not come yet; busy_poll.h).
run_lc() {
    local out cpu
    out=$( { run_timed taskset -c "$GEN_CPU" "$LC_BIN/loadworker" --local "$1" --threads 1 ${LC_WORKER_ARGS:-} --json --log-level warn; } 3>"$WORK/cpu")
    cpu=$(cat "$WORK/cpu")
    jq -r --arg cpu "$cpu" '(.engine_polled_s // 0) as $polled | .totals | "\(.rps) \($cpu) \(.requests) \(.failures) \(.tls_handshakes) \(.tls_resumed) \($polled)"' <<<"$out"
}

bench_lc() { # url [extra fields] → run_lc's line for a one-task scenario on url (LC_USERS users)
    scenario "$WORK/bench.json" "$1" "${LC_USERS:-$CONNECTIONS}" "$DURATION" "${2:-}"
    run_lc "$WORK/bench.json"
}

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

compare() { # name url [extra scenario fields for loadworker] [baseline: wrk | h2load]
    local name=$1 url=$2 extra=${3:-} base=${4:-wrk} i
    : >"$WORK/wrk.txt"; : >"$WORK/lc.txt"
    for i in $(seq 1 "$PAIRS"); do
        "bench_$base" "$url" >>"$WORK/wrk.txt"
        bench_lc "$url" "$extra" >>"$WORK/lc.txt"
        log "$name pair $i: $base $(tail -1 "$WORK/wrk.txt" | cut -d' ' -f1) rps, loadworker $(tail -1 "$WORK/lc.txt" | awk '{ printf "%s rps, %s failures, tls handshakes %s resumed %s", $1, $4, $5, $6 }')"
    done
    local wrk_rps lc_rps wrk_cpr lc_cpr line
    wrk_rps=$(cut -d' ' -f1 "$WORK/wrk.txt" | median)
    lc_rps=$(cut -d' ' -f1 "$WORK/lc.txt" | median)
    wrk_cpr=$(awk '{ print $2 / $3 * 1e6 }' "$WORK/wrk.txt" | median)
    lc_cpr=$(awk '{ print $2 / $3 * 1e6 }' "$WORK/lc.txt" | median)
    printf -v line "%-12s ${base}_rps=%.0f loadworker_rps=%.0f rps_vs_${base}=%.2f  ${base}_cpu_us_per_req=%.2f loadworker_cpu_us_per_req=%.2f cpu_per_request_vs_${base}=%.2f" \
        "$name" "$wrk_rps" "$lc_rps" "$(echo "$lc_rps / $wrk_rps" | bc -l)" "$wrk_cpr" "$lc_cpr" "$(echo "$lc_cpr / $wrk_cpr" | bc -l)"
    local failed
    failed=$(awk '{ n += $4 } END { print n + 0 }' "$WORK/lc.txt")
    [ "$failed" = 0 ] || line+="  (loadworker failures: $failed)"
    # How much of loadworker's CPU was polling for responses (busy_poll.h): counted above, as
    # top would; it would have slept instead, at the cost of the target waking it.
    line+=$(awk '{ printf "%s\n", ($2 > 0 ? 100 * $7 / $2 : 0) }' "$WORK/lc.txt" | median |
        awk '{ printf "  loadworker_cpu_polling=%.0f%%", $1 }')
    [ "$name" = nginx ] && NGINX_LC_RPS=$lc_rps
    echo "$line"
    SUMMARY+=("$line")
}

# Whether loadworker --local completes requests against the HTTPS server.
https_works() {
    scenario "$WORK/probe.json" "https://127.0.0.1:$NGINX_TLS_PORT" 1 1 '"tls": {"insecure": true},'
    timeout 30 "$LC_BIN/loadworker" --local "$WORK/probe.json" --threads 1 --json \
        --log-level error >"$WORK/probe.out" 2>"$WORK/probe.err" &&
        jq -e '.totals.requests > 0 and .totals.failures == 0' "$WORK/probe.out" >/dev/null
}

compare_https() {
    local line
    if ! curl -skf --max-time 5 "https://127.0.0.1:$NGINX_TLS_PORT/" >/dev/null; then
        line="nginx-https  skipped: nginx did not serve https (see $WORK/nginx/error.log)"
    elif ! https_works; then
        line="nginx-https  skipped: loadworker cannot do https yet ($(head -c 200 "$WORK/probe.err" | tr '\n' ' '))"
    else
        compare nginx-https "https://127.0.0.1:$NGINX_TLS_PORT/" '"tls": {"insecure": true},'
        return
    fi
    echo "$line"
    SUMMARY+=("$line")
}

# HTTP/2 against nginx, h2c and over TLS, next to h2load (nghttp2-client, bench-deps).
compare_h2() {
    if ! command -v h2load >/dev/null; then
        SUMMARY+=("nginx-h2     skipped: h2load is not installed (make -f Makefile.ci bench-deps)")
        echo "${SUMMARY[-1]}"
        return
    fi
    compare nginx-h2c "http://127.0.0.1:$NGINX_H2C_PORT/" '"http2": true,' h2load
    compare nginx-h2 "https://127.0.0.1:$NGINX_H2_PORT/" '"http2": true, "tls": {"insecure": true},' h2load
    compare_h2_pool nginx-h2c-m "http://127.0.0.1:$NGINX_H2C_PORT/"
    compare_h2_pool nginx-h2-m "https://127.0.0.1:$NGINX_H2_PORT/" '"tls": {"insecure": true},'
}

# Multiplexed: h2load -c C -m M beside ours with the per-engine pool of C connections of M
# streams and C*M users, so both keep C*M requests in flight. While loadworker refuses the
# pool, h2load's figure is printed alone with loadworker's reason.
H2_POOL_C=${H2_POOL_C:-4}
H2_POOL_M=${H2_POOL_M:-25}
compare_h2_pool() { # name url [extra scenario fields]
    local name=$1 url=$2 extra=${3:-} pool line users=$((H2_POOL_C * H2_POOL_M))
    pool="\"http2\": {\"mode\": true, \"pool\": {\"connections\": $H2_POOL_C, \"max_streams\": $H2_POOL_M}},"
    scenario "$WORK/probe.json" "$url" "$users" 1 "$extra $pool"
    if timeout 30 "$LC_BIN/loadworker" --local "$WORK/probe.json" --threads 1 --json \
        --log-level error >"$WORK/probe.out" 2>"$WORK/probe.err"; then
        H2LOAD_CONNS=$H2_POOL_C H2LOAD_STREAMS=$H2_POOL_M LC_USERS=$users \
            compare "$name$H2_POOL_M" "$url" "$extra $pool" h2load
        return
    fi
    H2LOAD_CONNS=$H2_POOL_C H2LOAD_STREAMS=$H2_POOL_M bench_h2load "$url" >"$WORK/wrk.txt"
    printf -v line "%-12s h2load_rps=%.0f (-c%s -m%s)  loadworker skipped: %s" "$name$H2_POOL_M" \
        "$(cut -d' ' -f1 "$WORK/wrk.txt")" "$H2_POOL_C" "$H2_POOL_M" "$(head -c 200 "$WORK/probe.err" | tr '\n' ' ')"
    echo "$line"
    SUMMARY+=("$line")
}

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
established() { ss -Htn state established "( dport = :$1 )" | wc -l; }
conns_at_least() { [ "$(established "$1")" -ge "$2" ]; }
conns_none() { [ "$(established "$1")" -eq 0 ]; }

# nginx's count of requests (stub_status: received; it answers each at once), each reading
# counting itself: nginx_answers_from_now notes where a phase starts (a count that cannot be
# read makes every wait fail), nginx_answered N whether N requests of the phase's came since
# (NGINX_ANSWERED: how many).
nginx_requests() {
    curl -sf --max-time 5 "http://127.0.0.1:$NGINX_PORT/nginx_status" | awk 'NR == 3 { print $3 }'
}
nginx_answers_from_now() {
    NGINX_READINGS=1
    NGINX_BASE=$(nginx_requests)
    [ -n "$NGINX_BASE" ] || { log "nginx's stub_status did not answer"; NGINX_BASE=999999999999; }
}
nginx_answered() {
    local now; now=$(nginx_requests) || return 1
    NGINX_READINGS=$((NGINX_READINGS + 1))
    NGINX_ANSWERED=$((now - NGINX_BASE - NGINX_READINGS + 1))
    [ "$NGINX_ANSWERED" -ge "$1" ]
}

# idle_rss NAME PORT CONNS CMD…: starts CMD on the generator CPU, waits until
# CONNS connections to PORT are established (with NGINX_ANSWERS set, then until
# nginx answered IDLE_ANSWERS (CONNS) requests: TLS handshakes end long after the connections
# are up; with IDLE_CLOSED set, then until they are closed again), sets IDLE_RSS
# to CMD's RSS in KiB (0 when the connections never came up), stops it.
idle_rss() {
    local name=$1 port=$2 want=$3 pid
    shift 3
    IDLE_RSS=0
    wait_until 60 conns_none "$port" || log "$name: connections of the previous phase linger"
    [ -z "${NGINX_ANSWERS:-}" ] || nginx_answers_from_now
    start "$name" taskset -c "$GEN_CPU" "$@"
    pid=$(eval "echo \$PID_$name")
    if ! wait_until 90 conns_at_least "$port" "$want"; then
        log "$name: only $(established "$port") of $want connections came up"
        stop_proc "$pid"
        return
    fi
    if [ -n "${NGINX_ANSWERS:-}" ] && ! wait_until 120 nginx_answered "${IDLE_ANSWERS:-$want}"; then
        log "$name: nginx answered only $NGINX_ANSWERED of ${IDLE_ANSWERS:-$want} requests"
        stop_proc "$pid"
        return
    fi
    if [ -n "${IDLE_CLOSED:-}" ] && ! wait_until 90 conns_none "$port"; then
        log "$name: $(established "$port") connections still open past the idle timeout"
        stop_proc "$pid"
        return
    fi
    # Connections are established before their handshakes and first answers are done: RSS is
    # read once it has settled (the last responses in, the heap trimmed): two readings 1 s
    # apart within 1 % (at most 30 s).
    local prev=0 cur
    for _ in $(seq 1 30); do
        sleep 1
        cur=$(rss_kib "$pid")
        [ $(( (cur > prev ? cur - prev : prev - cur) * 100 )) -le "$cur" ] && break
        prev=$cur
    done
    IDLE_RSS=$(rss_kib "$pid")
    log "$name: $(established "$port") connections, VmRSS ${IDLE_RSS} KiB"
    stop_proc "$pid"
}

# lc_idle_pair NAME PORT USERS URL EXTRA_FIELDS: loadworker's RSS in KiB with USERS idle
# users of a one-task scenario on URL in PAIR_MANY, with one user in PAIR_ONE. The users hold
# a connection each, or with IDLE_CONNS set share that many (an HTTP/2 pool). With NGINX_ANSWERS
# set, RSS is read once nginx answered IDLE_EACH (1) requests per user.
lc_idle_pair() {
    local name=$1 port=$2 n=$3 url=$4 extra=$5
    scenario "$WORK/$name.json" "$url" "$n" 120 "$extra"
    scenario "$WORK/${name}1.json" "$url" 1 120 "$extra"
    IDLE_ANSWERS=$((n * ${IDLE_EACH:-1})) idle_rss "$name" "$port" "${IDLE_CONNS:-$n}" "$LC_BIN/loadworker" --local "$WORK/$name.json" --threads 1 --log-level warn
    PAIR_MANY=$IDLE_RSS
    IDLE_ANSWERS=${IDLE_EACH:-1} idle_rss "${name}1" "$port" "${IDLE_CONNS:-1}" "$LC_BIN/loadworker" --local "$WORK/${name}1.json" --threads 1 --log-level warn
    PAIR_ONE=$IDLE_RSS
}

per_conn_bytes() { # rss_many_kib rss_one_kib [users] → bytes per extra connection
    echo "($1 - $2) * 1024 / (${3:-$IDLE_USERS} - 1)" | bc
}

# Users that think for 30 s keep their keep-alive connection open: RSS with
# IDLE_USERS of them minus RSS with one, per user; wrk's per-connection
# figure measured the same way against a target that answers in 30 s.
bench_idle() {
    local lc_many lc_one wrk_many wrk_one lc_b wrk_b line
    lc_idle_pair lc_idle "$TARGET_PORT" "$IDLE_USERS" "http://127.0.0.1:$TARGET_PORT" '"think_time_ms": 30000,'
    lc_many=$PAIR_MANY lc_one=$PAIR_ONE
    start slow taskset -c "$TARGET_CPU" "$LC_BIN/lc_target" --listen 127.0.0.1:0 --port-file "$WORK/slow.port" --quiet --latency-ms 30000
    wait_until 10 test -s "$WORK/slow.port"
    local slow; slow=$(cat "$WORK/slow.port")
    idle_rss wrk_idle "$slow" "$IDLE_USERS" wrk -t1 -c"$IDLE_USERS" -d120s --timeout 60s "http://127.0.0.1:$slow/"
    wrk_many=$IDLE_RSS
    idle_rss wrk_idle1 "$slow" 1 wrk -t1 -c1 -d120s --timeout 60s "http://127.0.0.1:$slow/"
    wrk_one=$IDLE_RSS
    stop_proc "$PID_slow"
    lc_b=$(per_conn_bytes "$lc_many" "$lc_one")
    wrk_b=$(per_conn_bytes "$wrk_many" "$wrk_one")
    PLAIN_IDLE_B=$lc_b
    printf -v line 'idle         bytes_per_idle_user=%s (loadworker, %s users: %s KiB vs 1 user: %s KiB; goal <= 2048)  wrk_bytes_per_connection=%s (%s KiB vs %s KiB)' \
        "$lc_b" "$IDLE_USERS" "$lc_many" "$lc_one" "$wrk_b" "$wrk_many" "$wrk_one"
    echo "$line"
    SUMMARY+=("$line")
}

# HTTPS users thinking 30 s against nginx keep their TLS connections open: loadworker's RSS
# per idle user as bench_idle measures it, next to wrk's per TLS connection (a Lua delay()
# of 30 s between requests), and the same for HTTP/2 over TLS (a connection per user).
bench_idle_tls() {
    # idle_rss waits for every user's first answer. Users start 2,000 a second: all at once,
    # 15,000 full handshakes (no session yet to resume) keep the one-core nginx past our
    # handshake timeout, and a user that failed waits out its think time before it retries.
    local NGINX_ANSWERS=1 SPAWN_RATE=2000
    local n=$TLS_IDLE_USERS think='"think_time_ms": 30000,' lc_many lc_one wrk_many wrk_one
    local h2_many h2_one lc_b wrk_b h2_b line url="https://127.0.0.1:$NGINX_TLS_PORT"
    lc_idle_pair lc_idle_tls "$NGINX_TLS_PORT" "$n" "$url" "$think \"tls\": {\"insecure\": true},"
    lc_many=$PAIR_MANY lc_one=$PAIR_ONE
    # wrk's delay() holds even a connection's first request: its figure is read after that
    # one, 30 s in, as ours after each user's first.
    echo 'function delay() return 30000 end' >"$WORK/think.lua"
    idle_rss wrk_idle_tls "$NGINX_TLS_PORT" "$n" wrk -t1 -c"$n" -d120s --timeout 60s -s "$WORK/think.lua" "$url/"
    wrk_many=$IDLE_RSS
    idle_rss wrk_idle_tls1 "$NGINX_TLS_PORT" 1 wrk -t1 -c1 -d120s --timeout 60s -s "$WORK/think.lua" "$url/"
    wrk_one=$IDLE_RSS
    # The same users with close_idle_target: each closes its connection 30 s into its 100 s
    # think, so what is left is the user without OpenSSL state or descriptor.
    local closed='"think_time_ms": 100000, "idle_timeout_ms": 30000, "close_idle_target": true,'
    IDLE_CLOSED=1 lc_idle_pair lc_idle_tls_closed "$NGINX_TLS_PORT" "$n" "$url" "$closed \"tls\": {\"insecure\": true},"
    local closed_b; closed_b=$(per_conn_bytes "$PAIR_MANY" "$PAIR_ONE" "$n")
    local closed_kib="$PAIR_MANY KiB vs $PAIR_ONE KiB"
    lc_idle_h2tls_pair "$n"
    h2_many=$PAIR_MANY h2_one=$PAIR_ONE
    # The same HTTP/2 users through a pool of one connection: an idle user holds none.
    local pool='"http2": {"mode": true, "pool": {"connections": 1}}, "tls": {"insecure": true},'
    IDLE_CONNS=1 lc_idle_pair lc_idle_h2pool "$NGINX_H2_PORT" "$n" "https://127.0.0.1:$NGINX_H2_PORT" "$think $pool"
    local pool_b; pool_b=$(per_conn_bytes "$PAIR_MANY" "$PAIR_ONE" "$n")
    local pool_kib="$PAIR_MANY KiB vs $PAIR_ONE KiB"
    lc_b=$(per_conn_bytes "$lc_many" "$lc_one" "$n")
    wrk_b=$(per_conn_bytes "$wrk_many" "$wrk_one" "$n")
    h2_b=$(per_conn_bytes "$h2_many" "$h2_one" "$n")
    printf -v line 'idle-https   bytes_per_idle_tls_user=%s (loadworker, %s users: %s KiB vs 1 user: %s KiB; goal <= 8192)  with_close_idle_target=%s (%s)  wrk_bytes_per_tls_connection=%s (%s KiB vs %s KiB)  bytes_per_idle_h2_tls_user=%s (%s KiB vs %s KiB)  through_an_h2_pool=%s (%s)' \
        "$lc_b" "$n" "$lc_many" "$lc_one" "$closed_b" "$closed_kib" "$wrk_b" "$wrk_many" "$wrk_one" "$h2_b" "$h2_many" "$h2_one" "$pool_b" "$pool_kib"
    echo "$line"
    SUMMARY+=("$line")
}

# lc_idle_h2tls_pair USERS: lc_idle_pair for HTTP/2-over-TLS users (a connection each)
# thinking 30 s against nginx.
lc_idle_h2tls_pair() {
    lc_idle_pair lc_idle_h2 "$NGINX_H2_PORT" "$1" "https://127.0.0.1:$NGINX_H2_PORT" \
        '"think_time_ms": 30000, "http2": true, "tls": {"insecure": true},'
}

# The HTTP/2-over-TLS line of bench_idle_tls alone (BENCH_ONLY=idle-h2tls), to measure it
# again quickly.
bench_idle_h2tls() {
    local NGINX_ANSWERS=1 SPAWN_RATE=2000 n=$TLS_IDLE_USERS line # as bench_idle_tls
    lc_idle_h2tls_pair "$n"
    printf -v line 'idle-h2tls   bytes_per_idle_h2_tls_user=%s (loadworker, %s users: %s KiB vs 1 user: %s KiB; goal <= 8192)' \
        "$(per_conn_bytes "$PAIR_MANY" "$PAIR_ONE" "$n")" "$n" "$PAIR_MANY" "$PAIR_ONE"
    echo "$line"
    SUMMARY+=("$line")
}

# HTTP/2 users (h2c, a connection each) thinking 30 s against lc_target --http2: loadworker's
# RSS per idle user as bench_idle measures it, next to h2load's per connection, each of its
# connections waiting on one stream that the target answers in 60 s.
bench_idle_h2c() {
    local n=$TLS_IDLE_USERS lc_b h2load_b line port slow
    start h2c_fast taskset -c "$TARGET_CPU" "$LC_BIN/lc_target" --listen 127.0.0.1:0 --port-file "$WORK/h2c_fast.port" --quiet --http2
    start h2c_slow taskset -c "$TARGET_CPU" "$LC_BIN/lc_target" --listen 127.0.0.1:0 --port-file "$WORK/h2c_slow.port" --quiet --http2 --latency-ms 60000
    wait_until 10 test -s "$WORK/h2c_fast.port" && wait_until 10 test -s "$WORK/h2c_slow.port"
    port=$(cat "$WORK/h2c_fast.port") slow=$(cat "$WORK/h2c_slow.port")
    lc_idle_pair lc_idle_h2c "$port" "$n" "http://127.0.0.1:$port" '"think_time_ms": 30000, "http2": true,'
    lc_b=$(per_conn_bytes "$PAIR_MANY" "$PAIR_ONE" "$n")
    local lc_kib="$PAIR_MANY KiB vs $PAIR_ONE KiB" h2load_many
    idle_rss h2load_idle "$slow" "$n" h2load -t1 -c"$n" -n"$n" -m1 "http://127.0.0.1:$slow/"
    h2load_many=$IDLE_RSS
    idle_rss h2load_idle1 "$slow" 1 h2load -t1 -c1 -n1 -m1 "http://127.0.0.1:$slow/"
    h2load_b=$(per_conn_bytes "$h2load_many" "$IDLE_RSS" "$n")
    stop_proc "$PID_h2c_fast"
    stop_proc "$PID_h2c_slow"
    printf -v line 'idle-h2c     bytes_per_idle_h2c_user=%s (loadworker, %s users: %s)  h2load_bytes_per_connection=%s (%s KiB vs %s KiB)  ratio=%s' \
        "$lc_b" "$n" "$lc_kib" "$h2load_b" "$h2load_many" "$IDLE_RSS" "$(ratio "$lc_b" "$h2load_b")"
    echo "$line"
    SUMMARY+=("$line")
}

# Idle users after activity: each makes IDLE_BUSY_REQUESTS (30) requests 50 ms apart, then
# waits 60 s; loadworker's RSS per user as bench_idle measures it (IDLE_BUSY_USERS, 2000, against
# one), for HTTP/1.1 and HTTP/2 (a connection each), plain and over TLS, against nginx. What a
# connection keeps from its traffic (an HPACK table, heap pages its requests left pinned)
# shows here and not in the lines above, whose users made one request.
bench_idle_busy() {
    local n=${IDLE_BUSY_USERS:-2000} reps=${IDLE_BUSY_REQUESTS:-30} line="idle-busy   " v url port extra
    # RSS is read once every request was answered: while they run it is several times higher.
    local NGINX_ANSWERS=1 IDLE_EACH=${IDLE_BUSY_REQUESTS:-30}
    for v in h1 h1tls h2c h2tls; do
        case $v in
        h1) url="http://127.0.0.1:$NGINX_PORT" port=$NGINX_PORT extra='' ;;
        h1tls) url="https://127.0.0.1:$NGINX_TLS_PORT" port=$NGINX_TLS_PORT extra='"tls": {"insecure": true},' ;;
        h2c) url="http://127.0.0.1:$NGINX_H2C_PORT" port=$NGINX_H2C_PORT extra='"http2": true,' ;;
        h2tls) url="https://127.0.0.1:$NGINX_H2_PORT" port=$NGINX_H2_PORT extra='"http2": true, "tls": {"insecure": true},' ;;
        esac
        SCENARIO_BODY='"journeys": [{"name": "busy", "steps": [{"repeat": '"$reps"', "steps": [{"path": "/"}, {"think_ms": 50}]}, {"think_ms": 60000}]}]' \
            lc_idle_pair "lc_busy_$v" "$port" "$n" "$url" "$extra"
        line+=" ${v}=$(per_conn_bytes "$PAIR_MANY" "$PAIR_ONE" "$n")"
    done
    line+="  (bytes per idle user after $reps requests, $n users against one)"
    echo "$line"
    SUMMARY+=("$line")
}

# have_locust: whether Debian's locust runs (its script imports the module
# with /usr/bin/python3, which need not be the python3 on PATH); else sets
# LOCUST_MISSING to why not.
have_locust() {
    if ! command -v locust >/dev/null; then
        LOCUST_MISSING="python3-locust is not installed (make -f Makefile.ci bench-deps)"
    elif ! locust --version >/dev/null 2>&1; then
        LOCUST_MISSING="locust is installed but does not start ($(locust --version 2>&1 | tail -1))"
    else
        return 0
    fi
    return 1
}

# run_locust NAME LOCUSTFILE URL USERS SECONDS: one headless Locust process
# pinned to the generator CPU, all users spawned at once, run in $WORK; its
# user+sys seconds in $WORK/NAME.cpu, its stats in $WORK/NAME_stats.csv.
run_locust() {
    local name=$1 file=$2 url=$3 users=$4 secs=$5
    ( cd "$WORK" && /usr/bin/env time -f '%U %S' -o "$WORK/$name.cpu" taskset -c "$GEN_CPU" \
        locust -f "$file" --headless -u "$users" -r "$users" -t "${secs}s" --host "$url" \
        --only-summary --csv "$WORK/$name" >"$WORK/$name.log" 2>&1 ) || true
}

# locust_totals NAME: "rps requests failures cpu_s" of run_locust NAME's
# Aggregated row; nothing when the run produced no requests.
locust_totals() {
    local stats=$WORK/$1_stats.csv
    [ -s "$stats" ] && [ -s "$WORK/$1.cpu" ] || return 0
    awk -F, -v cpu="$(awk '{ print $1 + $2 }' "$WORK/$1.cpu")" \
        '$2 == "Aggregated" && $3 > 0 { print $10, $3, $4, cpu }' "$stats"
}

# Locust's FastHttpUser (Debian's python3-locust) on the same nginx, pinned
# like the others, one run of DURATION seconds: its rps and CPU per request
# next to loadworker's median from the nginx pairs.
locust_line() {
    local line
    if ! have_locust; then
        line="locust       skipped: $LOCUST_MISSING"
        echo "$line"; SUMMARY+=("$line"); return
    fi
    cat >"$WORK/locustfile.py" <<'PY'
from locust import FastHttpUser, task

class Bench(FastHttpUser):
    @task
    def index(self):
        self.client.get("/")
PY
    run_locust locust "$WORK/locustfile.py" "http://127.0.0.1:$NGINX_PORT" "$CONNECTIONS" "$DURATION"
    local rps req cpu
    read -r rps req _ cpu <<<"$(locust_totals locust)"
    if [ -z "${rps:-}" ]; then
        line="locust       failed: see $WORK/locust.log"
    else
        printf -v line 'locust       fasthttpuser_rps=%.0f cpu_us_per_req=%.2f (nginx, %s users, %ss; loadworker_rps_vs_locust=%.1f)' \
            "$rps" "$(echo "$cpu / $req * 1000000" | bc -l)" "$CONNECTIONS" "$DURATION" \
            "$(echo "${NGINX_LC_RPS:-0} / $rps" | bc -l)"
    fi
    echo "$line"
    SUMMARY+=("$line")
}

# cpu_ticks: "busy steal", the clock ticks of all CPUs since boot that were
# busy (user, nice, system, irq, softirq) and stolen by the hypervisor.
cpu_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $9 }' /proc/stat; }

# own_ticks: the clock ticks used by this script and the children it waited
# for (wrk, loadworker, Locust runs and stopped servers), plus the processes
# start() began that still run and their children (lc_target, nginx workers).
own_ticks() {
    local pids=("$$") p
    for p in "${PIDS[@]:-}"; do
        if [ -z "$p" ] || ! kill -0 "$p" 2>/dev/null; then continue; fi
        pids+=("$p")
        mapfile -t -O "${#pids[@]}" pids < <(pgrep -P "$p")
    done
    for p in "${pids[@]}"; do awk '{ print $14 + $15 + $16 + $17 }' "/proc/$p/stat" 2>/dev/null; done |
        awk '{ s += $1 } END { print s + 0 }'
}

# machine_line: what else took CPU during the run: other processes (busy ticks
# minus ours) and the hypervisor (steal). Either above a few % of a core means
# the figures above were disturbed.
machine_line() {
    local hz busy steal others secs=$((SECONDS - RUN_START_S)) line
    hz=$(getconf CLK_TCK)
    read -r busy steal <<<"$(cpu_ticks)"
    others=$(( (busy - RUN_START_BUSY) - ($(own_ticks) - RUN_START_OWN) ))
    steal=$((steal - RUN_START_STEAL))
    printf -v line 'machine      during the %s s run: other processes (kernel threads too) took %.1f CPU-s (%.0f%% of one core), the hypervisor stole %.1f CPU-s (%.0f%%); more than a few %% disturbs the figures' \
        "$secs" "$(echo "$others / $hz" | bc -l)" "$(echo "$others / $hz / ($secs + 0.001) * 100" | bc -l)" \
        "$(echo "$steal / $hz" | bc -l)" "$(echo "$steal / $hz / ($secs + 0.001) * 100" | bc -l)"
    echo "$line"
    SUMMARY+=("$line")
}

# The cost of reading a compressed body (issue 16): ns per KB of decoded body, per coding and
# body size, on the generator's CPU (lc_decode_bench; no network).
decode_line() {
    local line
    line=$(taskset -c "$GEN_CPU" "$LC_BIN/lc_decode_bench" 500)
    echo "$line"
    SUMMARY+=("$line")
}

RUN_START_S=$SECONDS
read -r RUN_START_BUSY RUN_START_STEAL <<<"$(cpu_ticks)"
RUN_START_OWN=$(own_ticks)
echo "bench: $PAIRS pairs of ${DURATION}s, $CONNECTIONS connections, 1 generator thread on CPU $GEN_CPU, target on CPU $TARGET_CPU; idle: $IDLE_USERS users${BENCH_ONLY:+; only $BENCH_ONLY}"
start target taskset -c "$TARGET_CPU" "$LC_BIN/lc_target" --listen 127.0.0.1:0 --port-file "$WORK/target.port" --quiet
wait_until 10 test -s "$WORK/target.port"
TARGET_PORT=$(cat "$WORK/target.port")
only() { [ -z "$BENCH_ONLY" ] || [ "$BENCH_ONLY" = "$1" ]; }
if only plain; then
    start_nginx
    compare nginx "http://127.0.0.1:$NGINX_PORT/"
    compare lc_target "http://127.0.0.1:$TARGET_PORT/"
    compare_https
    compare_h2
    bench_idle
    bench_idle_tls
    bench_idle_h2c
    bench_idle_busy
    locust_line
    decode_line
elif only idle; then # BENCH_ONLY=idle: the idle-memory lines of the plain part alone
    start_nginx
    bench_idle
    bench_idle_tls
    bench_idle_h2c
    bench_idle_busy
elif only idle-busy; then # BENCH_ONLY=idle-busy: idle users after 30 requests alone
    start_nginx
    bench_idle_busy
elif only idle-h2tls; then # BENCH_ONLY=idle-h2tls: the idle HTTP/2-over-TLS line alone
    start_nginx
    bench_idle_h2tls
elif only idle-h2c; then # BENCH_ONLY=idle-h2c: the idle h2c line alone, beside h2load's
    bench_idle_h2c
elif only h2; then # BENCH_ONLY=h2: the HTTP/2 lines of the plain part alone
    start_nginx
    compare_h2
elif only https; then # BENCH_ONLY=https: the HTTPS line of the plain part alone
    start_nginx
    compare_https
elif only h2pool; then # BENCH_ONLY=h2pool: the multiplexed HTTP/2 lines alone
    start_nginx
    compare_h2_pool nginx-h2c-m "http://127.0.0.1:$NGINX_H2C_PORT/"
    compare_h2_pool nginx-h2-m "https://127.0.0.1:$NGINX_H2_PORT/" '"tls": {"insecure": true},'
fi
if only journeys; then
    journey_cpu
    journey_idle
    locust_journey
    artillery_line
fi
if only scripts; then
    script_cpu
    script_idle
    script_many
elif only script-idle; then # BENCH_ONLY=script-idle: the idle scripted user's line alone
    script_idle
fi
machine_line
echo
echo "==== summary (goals: rps_vs_wrk >= 1.00, cpu_per_request_vs_wrk <= 1.00, the same against h2load, bytes_per_idle_user <= 2048, bytes_per_idle_tls_user <= 8192;"
echo "     journeys: journey_vs_plain <= 1.15, plain requests_per_cpu_s_vs_wrk >= 1.00, journey idle <= 2048 + data held;"
echo "     scripts: scripted_vs_declarative <= 1.25 (wrk's own Lua hooks beside it), scripted idle <= 2800 + data held) ===="
printf '%s\n' "${SUMMARY[@]}"
