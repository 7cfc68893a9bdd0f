# shellcheck shell=bash
# journeys.sh — issue 14's journey figures, sourced by bench.sh and run
# against its lc_target ($TARGET_PORT), with its helpers (run_lc, bench_wrk,
# median, idle_rss, per_conn_bytes, run_locust, locust_totals) and its
# settings (PAIRS, DURATION, CONNECTIONS, IDLE_USERS, LOCUST_IDLE_USERS,
# GEN_CPU). Each function prints its line and adds it to SUMMARY.
#
# The journey: on_start logs in once per user (POST /login with a JSON body,
# the token extracted with {"json": "$.token"}, the session cookie kept by the
# jar), then GET /me with "Authorization: Bearer ${token}", GET /items?n=3
# with one JSON extract, GET /echo. Every user logs in as the same app user,
# so that the data each one holds has the same size.

JOURNEY_USER=bench

# journey_cpu_scenario FILE: the journey for CONNECTIONS users, DURATION s.
journey_cpu_scenario() {
    cat >"$1" <<JSON
{"name": "bench-journey", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "${DURATION}s",
 "users": $CONNECTIONS, "spawn_rate": 100000,
 "journeys": [{"name": "shop",
   "on_start": [{"name": "login", "method": "POST", "path": "/login",
                 "json": {"user": "$JOURNEY_USER", "password": "pw"},
                 "expect": {"status": [200]}, "extract": {"token": {"json": "\$.token"}}}],
   "steps": [
     {"name": "me", "path": "/me", "headers": {"Authorization": "Bearer \${token}"}},
     {"name": "items", "path": "/items?n=3", "extract": {"first": {"json": "\$.items[0].id"}}},
     {"name": "echo", "path": "/echo"}]}]}
JSON
}

# app_login [QUERY]: logs JOURNEY_USER in with curl; the body in
# $WORK/login.body, the response headers in $WORK/login.hdr.
app_login() {
    curl -sf --max-time 5 -D "$WORK/login.hdr" -o "$WORK/login.body" -X POST \
        -H 'Content-Type: application/json' --data "{\"user\": \"$JOURNEY_USER\", \"password\": \"pw\"}" \
        "http://127.0.0.1:$TARGET_PORT/login${1:-}"
}

# set_cookies FILE…: the name=value pairs of the Set-Cookie lines of header dumps.
set_cookies() { cat "$@" | tr -d '\r' | sed -n 's/^[Ss]et-[Cc]ookie: *\([^;]*\).*/\1/p'; }

# tasks_scenario FILE: the journey's three requests as plain weighted tasks,
# with a token and cookie fetched beforehand as static headers: what the same
# requests cost without the journey machinery (templates, jar, extraction).
tasks_scenario() {
    app_login
    local token cookie
    token=$(jq -r .token "$WORK/login.body")
    cookie=$(set_cookies "$WORK/login.hdr" | head -1)
    cat >"$1" <<JSON
{"name": "bench-tasks", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "${DURATION}s",
 "users": $CONNECTIONS, "spawn_rate": 100000,
 "tasks": [{"path": "/me", "headers": {"Authorization": "Bearer $token", "Cookie": "$cookie"}},
           {"path": "/items?n=3", "headers": {"Cookie": "$cookie"}},
           {"path": "/echo", "headers": {"Cookie": "$cookie"}}]}
JSON
}

last_rps() { tail -1 "$WORK/jr_$1.txt" | awk '{ printf "%.0f%s", $1, (NF > 3 ? " " $4 : "") }'; }
cpu_us_per_req() { awk '{ print $2 / $3 * 1e6 }' "$1" | median; } # run_lc/bench_wrk lines → median µs
# busy_pct FILE: the generator's median CPU seconds per second of the run, in %
# (below 100: it waited on the target, and its CPU per request includes waking up).
busy_pct() { awk -v d="$DURATION" '{ print $2 / d * 100 }' "$1" | median | xargs printf '%.0f'; }
rps_of() { cut -d' ' -f1 "$1" | median; }
failures_of() { awk '{ n += $4 } END { print n + 0 }' "$1"; }
# ratio A B: A / B with two decimals, or n/a when either is missing or B is 0.
ratio() {
    [[ "${1:-}" =~ ^[0-9.e+-]+$ && "${2:-}" =~ ^[0-9.e+-]+$ ]] || { echo n/a; return; }
    awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "n/a"; else printf "%.2f\n", a / b }'
}

# journey_cpu: CPU per request of the journey next to the plain one-task case
# (GET / on lc_target) and wrk on the same URL, PAIRS rounds of wrk, plain,
# the same three requests as tasks, the journey (that order, so that each
# round sees the same machine), CONNECTIONS users, DURATION s, pinned as in
# compare(). Medians; sets JOURNEY_RPS and JOURNEY_CPR for locust_journey.
journey_cpu() {
    local url="http://127.0.0.1:$TARGET_PORT" i k
    scenario "$WORK/jr_plain.json" "$url" "$CONNECTIONS" "$DURATION"
    tasks_scenario "$WORK/jr_tasks.json"
    journey_cpu_scenario "$WORK/jr_journey.json"
    for k in wrk plain tasks journey; do : >"$WORK/jr_$k.txt"; done
    for i in $(seq 1 "$PAIRS"); do
        bench_wrk "$url/" >>"$WORK/jr_wrk.txt"
        for k in plain tasks journey; do run_lc "$WORK/jr_$k.json" >>"$WORK/jr_$k.txt"; done
        log "journey round $i (rps, failures): wrk $(last_rps wrk), plain $(last_rps plain), tasks $(last_rps tasks), journey $(last_rps journey)"
    done
    local wrk plain tasks journey line fails=""
    wrk=$(cpu_us_per_req "$WORK/jr_wrk.txt")
    plain=$(cpu_us_per_req "$WORK/jr_plain.txt")
    tasks=$(cpu_us_per_req "$WORK/jr_tasks.txt")
    journey=$(cpu_us_per_req "$WORK/jr_journey.txt")
    JOURNEY_RPS=$(rps_of "$WORK/jr_journey.txt")
    JOURNEY_CPR=$journey
    for k in plain tasks journey; do
        [ "$(failures_of "$WORK/jr_$k.txt")" = 0 ] || fails+=" $k: $(failures_of "$WORK/jr_$k.txt")"
    done
    printf -v line 'journey-cpu  plain_cpu_us_per_req=%.2f journey_cpu_us_per_req=%.2f journey_vs_plain=%s (goal <= 1.15; lc_target, %s users)' \
        "$plain" "$journey" "$(ratio "$journey" "$plain")" "$CONNECTIONS"
    echo "$line"; SUMMARY+=("$line")
    printf -v line 'journey-mix  tasks_cpu_us_per_req=%.2f tasks_vs_plain=%s journey_vs_tasks=%s (the same 3 requests as plain tasks, static headers: the cost of the requests without the journey)  generator busy: plain %s%%, tasks %s%%, journey %s%%%s' \
        "$tasks" "$(ratio "$tasks" "$plain")" "$(ratio "$journey" "$tasks")" \
        "$(busy_pct "$WORK/jr_plain.txt")" "$(busy_pct "$WORK/jr_tasks.txt")" "$(busy_pct "$WORK/jr_journey.txt")" \
        "${fails:+  (loadworker failures:$fails)}"
    echo "$line"; SUMMARY+=("$line")
    printf -v line 'journey-wrk  plain_requests_per_cpu_s=%.0f wrk_requests_per_cpu_s=%.0f plain_vs_wrk=%s (goal >= 1.00; lc_target GET /)  rps: plain=%.0f journey=%.0f wrk=%.0f' \
        "$(echo "1000000 / $plain" | bc -l)" "$(echo "1000000 / $wrk" | bc -l)" "$(ratio "$wrk" "$plain")" \
        "$(rps_of "$WORK/jr_plain.txt")" "$JOURNEY_RPS" "$(rps_of "$WORK/jr_wrk.txt")"
    echo "$line"; SUMMARY+=("$line")
}

# journey_idle_scenario FILE USERS: users that log in with a 300-byte token,
# take a second cookie, make one request and then think for 120 s with their
# keep-alive connection open. All start at once, as in bench_idle, unless
# JOURNEY_IDLE_SPAWN sets another spawn rate (users per second).
journey_idle_scenario() {
    cat >"$1" <<JSON
{"name": "bench-journey-idle", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "150s",
 "users": $2, "spawn_rate": ${JOURNEY_IDLE_SPAWN:-100000},
 "journeys": [{"name": "idle",
   "on_start": [{"name": "login", "method": "POST", "path": "/login?token_len=300",
                 "json": {"user": "$JOURNEY_USER", "password": "pw"},
                 "expect": {"status": [200]}, "extract": {"token": {"json": "\$.token"}}},
                {"name": "pref", "path": "/setcookie?pref=dark"}],
   "steps": [{"name": "me", "path": "/me", "headers": {"Authorization": "Bearer \${token}"}},
             {"think_ms": 120000}]}]}
JSON
}

# journey_data_held: what one idle journey user holds, from the target's own
# answers: DATA_TOKEN (the token's bytes, the only variable), DATA_COOKIES
# (names and values of the two cookies), DATA_HELD (their sum).
journey_data_held() {
    app_login "?token_len=300"
    curl -sf --max-time 5 -D "$WORK/pref.hdr" -o /dev/null "http://127.0.0.1:$TARGET_PORT/setcookie?pref=dark"
    DATA_TOKEN=$(jq -r '.token | length' "$WORK/login.body")
    DATA_COOKIES=$(set_cookies "$WORK/login.hdr" "$WORK/pref.hdr" | awk '{ n += length($0) - 1 } END { print n + 0 }')
    DATA_HELD=$((DATA_TOKEN + DATA_COOKIES))
}

# journey_idle: bytes per idle journey user as bench_idle measures plain ones:
# loadworker's RSS with IDLE_USERS idle journey users minus with one, per
# extra user, beside the data each holds and the plain idle-user figure.
journey_idle() {
    local many one b line plain=${PLAIN_IDLE_B:+$PLAIN_IDLE_B B}
    journey_data_held
    journey_idle_scenario "$WORK/jr_idle.json" "$IDLE_USERS"
    journey_idle_scenario "$WORK/jr_idle1.json" 1
    idle_rss lc_jidle "$TARGET_PORT" "$IDLE_USERS" "$LC_BIN/loadworker" --local "$WORK/jr_idle.json" --threads 1 --log-level warn
    many=$IDLE_RSS
    idle_rss lc_jidle1 "$TARGET_PORT" 1 "$LC_BIN/loadworker" --local "$WORK/jr_idle1.json" --threads 1 --log-level warn
    one=$IDLE_RSS
    if [ "$many" = 0 ] || [ "$one" = 0 ]; then
        line="journey-idle failed: the idle users' connections did not all come up (see the log above)"
    else
        b=$(per_conn_bytes "$many" "$one")
        JOURNEY_IDLE_B=$b
        printf -v line 'journey-idle ours: %s B per idle user (of which data held: %s B = token %s + cookies %s + other variables 0); our memory %s B (goal <= 2048); %s users: %s KiB vs 1 user: %s KiB; plain idle user: %s' \
            "$b" "$DATA_HELD" "$DATA_TOKEN" "$DATA_COOKIES" "$((b - DATA_HELD))" "$IDLE_USERS" "$many" "$one" \
            "${plain:-not measured in this run}"
    fi
    echo "$line"; SUMMARY+=("$line")
}

# The journey in Locust: FastHttpUser logs in on_start (its cookie jar keeps
# the session), then a SequentialTaskSet of the three steps, no wait.
write_locust_journey() {
    cat >"$1" <<PY
from locust import FastHttpUser, SequentialTaskSet, constant, task


class Steps(SequentialTaskSet):
    @task
    def me(self):
        self.client.get("/me", headers={"Authorization": "Bearer " + self.user.token})

    @task
    def items(self):
        self.first = self.client.get("/items?n=3").json()["items"][0]["id"]

    @task
    def echo(self):
        self.client.get("/echo")


class Shopper(FastHttpUser):
    wait_time = constant(0)
    tasks = [Steps]

    def on_start(self):
        r = self.client.post("/login", json={"user": "$JOURNEY_USER", "password": "pw"})
        self.token = r.json()["token"]
PY
}

# The idle journey in Locust, built as ours is: on_start logs in (the user holds
# the 300-byte token, its cookie jar the session cookie) and takes the second
# cookie; then a SequentialTaskSet of the steps: /me with the token, and a
# task parked in a 120 s wait (our think_ms: 120000) with the connection open.
write_locust_idle() {
    cat >"$1" <<PY
import gevent
from locust import FastHttpUser, SequentialTaskSet, constant, task


class Steps(SequentialTaskSet):
    wait_time = constant(0)

    @task
    def me(self):
        self.client.get("/me", headers={"Authorization": "Bearer " + self.user.token})

    @task
    def think(self):
        gevent.sleep(120)


class Idle(FastHttpUser):
    wait_time = constant(0)
    tasks = [Steps]

    def on_start(self):
        r = self.client.post("/login?token_len=300", json={"user": "$JOURNEY_USER", "password": "pw"})
        self.token = r.json()["token"]
        self.client.get("/setcookie?pref=dark")
PY
}

# locust_idle_bytes FILE: Locust's RSS with LOCUST_IDLE_USERS idle users of
# FILE minus with one, per extra user (as journey_idle), into LOCUST_IDLE_B
# (empty on failure) and LOCUST_IDLE_DETAIL.
locust_idle_bytes() {
    local many one url="http://127.0.0.1:$TARGET_PORT" rate=$((LOCUST_IDLE_USERS < 1000 ? LOCUST_IDLE_USERS : 1000))
    idle_rss locust_idle "$TARGET_PORT" "$LOCUST_IDLE_USERS" locust -f "$1" --headless \
        -u "$LOCUST_IDLE_USERS" -r "$rate" -t 300s --host "$url" --only-summary
    many=$IDLE_RSS
    idle_rss locust_idle1 "$TARGET_PORT" 1 locust -f "$1" --headless -u 1 -r 1 -t 300s --host "$url" --only-summary
    one=$IDLE_RSS
    LOCUST_IDLE_B=""
    [ "$many" != 0 ] && [ "$one" != 0 ] || return 0
    LOCUST_IDLE_DETAIL="$LOCUST_IDLE_USERS users: $many KiB vs 1 user: $one KiB"
    LOCUST_IDLE_B=$(per_conn_bytes "$many" "$one" "$LOCUST_IDLE_USERS")
}

# locust_journey: the journey in Locust (FastHttpUser + SequentialTaskSet,
# login in on_start), one process pinned to the generator CPU, CONNECTIONS
# users for DURATION s on lc_target: its rps and CPU per request as ratios to
# the journey's medians from journey_cpu; then its bytes per idle user in the
# idle journey, measured as journey_idle measures ours. Locust's figures
# include its start-up (interpreter, imports), as locust_line's do.
locust_journey() {
    local line
    if ! have_locust; then
        line="locust-jrny  skipped: $LOCUST_MISSING"
        echo "$line"; SUMMARY+=("$line"); return
    fi
    write_locust_journey "$WORK/locust_journey.py"
    run_locust locust_jr "$WORK/locust_journey.py" "http://127.0.0.1:$TARGET_PORT" "$CONNECTIONS" "$DURATION"
    local rps req fails cpu cpr logins
    read -r rps req fails cpu <<<"$(locust_totals locust_jr)"
    if [ -z "${rps:-}" ]; then
        line="locust-jrny  failed: see $WORK/locust_jr.log"
    else
        cpr=$(echo "$cpu / $req * 1000000" | bc -l)
        logins=$(awk -F, '$2 == "/login" { print $3 }' "$WORK/locust_jr_stats.csv")
        printf -v line 'locust-jrny  locust_rps=%.0f locust_cpu_us_per_req=%.2f (lc_target, %s users, %ss, %s logins, %s failures)  ours: rps=%.0f cpu_us_per_req=%.2f  loadworker_rps_vs_locust=%s locust_cpu_per_request_vs_loadworker=%s' \
            "$rps" "$cpr" "$CONNECTIONS" "$DURATION" "${logins:-0}" "$fails" "${JOURNEY_RPS:-0}" "${JOURNEY_CPR:-0}" \
            "$(ratio "${JOURNEY_RPS:-}" "$rps")" "$(ratio "$cpr" "${JOURNEY_CPR:-}")"
    fi
    echo "$line"; SUMMARY+=("$line")
    write_locust_idle "$WORK/locust_idle.py"
    locust_idle_bytes "$WORK/locust_idle.py"
    if [ -z "$LOCUST_IDLE_B" ]; then
        line="locust-idle  failed: the idle users' connections did not all come up (see the log above)"
    else
        printf -v line 'locust-idle  locust: %s B per idle FastHttpUser (on_start login, SequentialTaskSet parked in a 120 s wait; %s); ours: %s; locust_vs_ours=%s' \
            "$LOCUST_IDLE_B" "$LOCUST_IDLE_DETAIL" "${JOURNEY_IDLE_B:+$JOURNEY_IDLE_B B}" \
            "$(ratio "$LOCUST_IDLE_B" "${JOURNEY_IDLE_B:-}")"
    fi
    echo "$line"; SUMMARY+=("$line")
}

# target_count: the requests lc_target has served so far (its own count).
target_count() { curl -sf --max-time 2 "http://127.0.0.1:$TARGET_PORT/__stats" | jq -r .requests; }

# The journey in Artillery 2: each virtual user logs in once (token captured from the JSON
# answer, its cookie jar keeping the session), then loops over the three steps. Artillery runs
# a fixed number of iterations, not a duration: ITERATIONS per user.
write_artillery_journey() {
    cat >"$1" <<YAML
config:
  target: "http://127.0.0.1:$TARGET_PORT"
  phases:
    - duration: 1
      arrivalCount: $CONNECTIONS
scenarios:
  - flow:
      - post:
          url: "/login"
          json: {user: "$JOURNEY_USER", password: "pw"}
          capture: {json: "\$.token", as: "token"}
      - loop:
          - get: {url: "/me", headers: {Authorization: "Bearer {{ token }}"}}
          - get: {url: "/items?n=3", capture: {json: "\$.items[0].id", as: "first"}}
          - get: {url: "/echo"}
        count: $2
YAML
}

# run_artillery ITERATIONS: one Artillery run of the journey, pinned to the generator CPU
# → "requests cpu_s wall_s" (requests as lc_target counted them).
run_artillery() {
    local bin=$1 before after start wall
    write_artillery_journey "$WORK/artillery.yml" "$2"
    before=$(target_count)
    start=$(date +%s.%N)
    ( cd "$WORK" && /usr/bin/env time -f '%U %S' -o "$WORK/artillery.cpu" taskset -c "$GEN_CPU" \
        timeout $((DURATION * 30 + 60)) "$bin" run --quiet "$WORK/artillery.yml" >>"$WORK/artillery.log" 2>&1 ) || true
    wall=$(echo "$(date +%s.%N) - $start" | bc -l)
    after=$(target_count)
    echo "$((after - before)) $(awk '{ print $1 + $2 }' "$WORK/artillery.cpu" 2>/dev/null || echo 0) $wall"
}

# artillery_line: Artillery 2 (npm, installed by bench-deps with --ignore-scripts into
# build/bench-npm) on the same journey: a run of DURATION * 20 iterations per user minus a
# run of one, so that Node's start-up (several CPU seconds of loading modules) is not counted
# per request; requests as lc_target counted them. Ratios to the journey's medians.
artillery_line() {
    local line bin=${ARTILLERY_DIR:-$LC_SRC/build/bench-npm}/node_modules/.bin/artillery
    if [ ! -x "$bin" ]; then
        line="artillery    skipped: $bin is missing (make -f Makefile.ci bench-deps installs it from npm)"
        echo "$line"; SUMMARY+=("$line"); return
    fi
    local n=$((DURATION * 20)) r1 c1 w1 rn cn wn req rps cpr
    read -r r1 c1 w1 <<<"$(run_artillery "$bin" 1)"
    read -r rn cn wn <<<"$(run_artillery "$bin" "$n")"
    req=$((rn - r1))
    if [ "$r1" -le 0 ] || [ "$req" -le 0 ]; then
        line="artillery    failed: lc_target saw no request (see $WORK/artillery.log)"
    else
        rps=$(echo "$req / ($wn - $w1)" | bc -l)
        cpr=$(echo "($cn - $c1) / $req * 1000000" | bc -l)
        printf -v line 'artillery    artillery_rps=%.0f artillery_cpu_us_per_req=%.2f (lc_target, %s users; %s iterations: %s requests, %.1f s, %.1f CPU s; minus 1 iteration: %s requests, %.1f s, %.1f CPU s)  ours: rps=%.0f cpu_us_per_req=%.2f  loadworker_rps_vs_artillery=%s artillery_cpu_per_request_vs_loadworker=%s' \
            "$rps" "$cpr" "$CONNECTIONS" "$n" "$rn" "$wn" "$cn" "$r1" "$w1" "$c1" "${JOURNEY_RPS:-0}" "${JOURNEY_CPR:-0}" \
            "$(ratio "${JOURNEY_RPS:-}" "$rps")" "$(ratio "$cpr" "${JOURNEY_CPR:-}")"
    fi
    echo "$line"; SUMMARY+=("$line")
}
