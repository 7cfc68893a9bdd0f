# shellcheck shell=bash
# scripts.sh — issue 15's figures for scripted users (Lua steps), sourced by bench.sh after
# journeys.sh and run against its lc_target ($TARGET_PORT) with their helpers (run_lc,
# bench_wrk, idle_rss, per_conn_bytes, journey_cpu_scenario, app_login, set_cookies,
# cpu_us_per_req, busy_pct, rps_of, failures_of, ratio, median) and settings (PAIRS,
# DURATION, CONNECTIONS, IDLE_USERS, GEN_CPU). Each function prints its line and adds it to
# SUMMARY.
#   env: SCRIPT_IDLE_USERS (IDLE_USERS), SCRIPT_MANY_USERS (10000), SCRIPT_MANY_SECONDS (30),
#        SCRIPT_MANY_SPAWN (users started per second, 2000), SCRIPT_MANY_SLEEP_MS (the sleep
#        between a user's requests, "5000, 15000": about 1,000 requests/s for 10,000 users)

# Figures measured or published elsewhere, printed beside ours when this run has none.
LOCUST_IDLE_EARLIER_B=18933 # a FastHttpUser, idle, measured by journeys.sh (JOURNEYS.md)
K6_VU_PUBLISHED="1-5 MB per VU (k6 docs, \"Running large tests\"; k6#1543: ~3 MB)"

# script_scenario FILE NAME USERS DURATION_S LUA JOURNEYS [SPAWN]: a scenario with the Lua
# source LUA (jq makes it a JSON string) and the journeys JOURNEYS (JSON). The CPU deadline
# is the wall clock: 20 ms, not the default 2, so that a generator preempted by the target
# or the machine's other processes does not fail steps that use microseconds.
script_scenario() {
    jq -n --arg name "$2" --arg target "http://127.0.0.1:$TARGET_PORT" --argjson users "$3" \
        --arg duration "${4}s" --arg script "$5" --argjson journeys "$6" \
        --argjson spawn "${7:-100000}" \
        '{name: $name, target: $target, duration: $duration, users: $users, spawn_rate: $spawn,
          script: $script, script_cpu_ms: 20, journeys: $journeys}' >"$1"
}

# The journey of journeys.sh (login once, then /me with the token, /items with a JSON
# extract, /echo), its steps done by Lua: one lua step in on_start, one doing the three.
SCRIPT_JOURNEY_LUA='
local login_body = json.encode({user = "'"$JOURNEY_USER"'", password = "pw"})
local form = {["Content-Type"] = "application/json"}
function login(u)
  local r = http.post("/login", login_body, {name = "login", headers = form})
  if r.status ~= 200 then fail("login: " .. r.status) end
  u.vars.token = r:json("$.token")
end
function shop(u)
  http.get("/me", {name = "me", headers = {Authorization = "Bearer " .. u.vars.token}})
  u.vars.first = http.get("/items?n=3", {name = "items"}):json("$.items[0].id")
  http.get("/echo", {name = "echo"})
end'
SCRIPT_JOURNEY_STEPS='[{"name": "shop",
  "on_start": [{"lua": "login", "endpoints": ["login"]}],
  "steps": [{"lua": "shop", "endpoints": ["me", "items", "echo"]}]}]'

# The same three requests for wrk, through its own Lua hooks: request() takes the paths in
# turn (the token and session cookie of a login made beforehand), response() reads the first
# item's id out of /items' JSON, as the journey's extract does.
write_wrk_journey() {
    cat >"$1" <<'LUA'
local token, cookie
local paths = {"/me", "/items?n=3", "/echo"}
local n = 0
function init(args)
  token, cookie = args[1], args[2]
end
function request()
  n = n % 3 + 1
  local headers = {Cookie = cookie}
  if n == 1 then headers["Authorization"] = "Bearer " .. token end
  return wrk.format("GET", paths[n], headers)
end
function response(status, headers, body)
  if body:sub(1, 9) == '{"items":' then
    first = body:match('"id"%s*:%s*(%d+)')
  end
end
LUA
}

# script_cpu: CPU per request of the journey scripted in Lua next to the declarative journey,
# and wrk with the equivalent request/response script next to wrk plain (GET /): PAIRS
# rounds of the four, CONNECTIONS users, DURATION s, pinned as in compare(). Medians.
script_cpu() {
    local url="http://127.0.0.1:$TARGET_PORT" i k token cookie
    journey_cpu_scenario "$WORK/sc_declarative.json"
    script_scenario "$WORK/sc_scripted.json" bench-scripted "$CONNECTIONS" "$DURATION" \
        "$SCRIPT_JOURNEY_LUA" "$SCRIPT_JOURNEY_STEPS"
    write_wrk_journey "$WORK/wrk_journey.lua"
    app_login
    token=$(jq -r .token "$WORK/login.body")
    cookie=$(set_cookies "$WORK/login.hdr" | head -1)
    for k in wrk wrk_lua declarative scripted; do : >"$WORK/sc_$k.txt"; done
    for i in $(seq 1 "$PAIRS"); do
        bench_wrk "$url/" >>"$WORK/sc_wrk.txt"
        WRK_SCRIPT="$WORK/wrk_journey.lua" bench_wrk "$url/" -- "$token" "$cookie" >>"$WORK/sc_wrk_lua.txt"
        for k in declarative scripted; do run_lc "$WORK/sc_$k.json" >>"$WORK/sc_$k.txt"; done
        log "script round $i (rps): wrk $(tail -1 "$WORK/sc_wrk.txt" | cut -d' ' -f1), wrk+lua $(tail -1 "$WORK/sc_wrk_lua.txt" | cut -d' ' -f1), declarative $(tail -1 "$WORK/sc_declarative.txt" | cut -d' ' -f1), scripted $(tail -1 "$WORK/sc_scripted.txt" | cut -d' ' -f1)"
    done
    local wrk wrk_lua decl scr line fails=""
    wrk=$(cpu_us_per_req "$WORK/sc_wrk.txt")
    wrk_lua=$(cpu_us_per_req "$WORK/sc_wrk_lua.txt")
    decl=$(cpu_us_per_req "$WORK/sc_declarative.txt")
    scr=$(cpu_us_per_req "$WORK/sc_scripted.txt")
    for k in declarative scripted; do
        [ "$(failures_of "$WORK/sc_$k.txt")" = 0 ] || fails+=" $k: $(failures_of "$WORK/sc_$k.txt")"
    done
    printf -v line 'script-cpu   declarative_cpu_us_per_req=%.2f scripted_cpu_us_per_req=%.2f scripted_vs_declarative=%s (goal <= 1.25; the 3-step journey, lc_target, %s users)  wrk: plain=%.2f with_lua_hooks=%.2f wrk_lua_vs_plain=%s (request/response script, the same 3 requests)  rps: declarative=%.0f scripted=%.0f wrk_lua=%.0f  generator busy: declarative %s%%, scripted %s%%%s' \
        "$decl" "$scr" "$(ratio "$scr" "$decl")" "$CONNECTIONS" "$wrk" "$wrk_lua" "$(ratio "$wrk_lua" "$wrk")" \
        "$(rps_of "$WORK/sc_declarative.txt")" "$(rps_of "$WORK/sc_scripted.txt")" "$(rps_of "$WORK/sc_wrk_lua.txt")" \
        "$(busy_pct "$WORK/sc_declarative.txt")" "$(busy_pct "$WORK/sc_scripted.txt")" "${fails:+  (loadworker failures:$fails)}"
    echo "$line"; SUMMARY+=("$line")
}

# The idle scripted user: journeys.sh's idle journey (a login with a 300-byte token, a second
# cookie, one request) done by one lua step that then sleeps 120 s holding the token in a
# local, its keep-alive connection open.
SCRIPT_IDLE_LUA='
local login_body = json.encode({user = "'"$JOURNEY_USER"'", password = "pw"})
function idle(u)
  local r = http.post("/login?token_len=300", login_body,
                      {name = "login", headers = {["Content-Type"] = "application/json"}})
  local token = r:json("$.token")
  http.get("/setcookie?pref=dark", {name = "pref"})
  http.get("/me", {name = "me", headers = {Authorization = "Bearer " .. token}})
  sleep(120000)
end'
SCRIPT_IDLE_STEPS='[{"name": "idle", "steps": [{"lua": "idle", "endpoints": ["login", "pref", "me"]}]}]'

# locust_idle_figure: Locust's bytes per idle user, measured in this run (locust_journey) or
# the earlier measurement.
locust_idle_figure() {
    if [ -n "${LOCUST_IDLE_B:-}" ]; then
        echo "$LOCUST_IDLE_B B (FastHttpUser, measured in this run)"
    else
        echo "$LOCUST_IDLE_EARLIER_B B (FastHttpUser idle, an earlier measurement of journeys.sh: not measured in this run)"
    fi
}

# script_idle: bytes per idle scripted user, as journey_idle measures declarative ones:
# loadworker's RSS with SCRIPT_IDLE_USERS of them minus with one, per extra user, beside the
# data each holds, the declarative figure (if this run made it), Locust's and k6's.
script_idle() {
    local users=${SCRIPT_IDLE_USERS:-$IDLE_USERS} many one b line decl=${JOURNEY_IDLE_B:+$JOURNEY_IDLE_B B}
    journey_data_held
    script_scenario "$WORK/sc_idle.json" bench-script-idle "$users" 150 "$SCRIPT_IDLE_LUA" "$SCRIPT_IDLE_STEPS" \
        "${JOURNEY_IDLE_SPAWN:-100000}"
    script_scenario "$WORK/sc_idle1.json" bench-script-idle 1 150 "$SCRIPT_IDLE_LUA" "$SCRIPT_IDLE_STEPS"
    idle_rss lc_sidle "$TARGET_PORT" "$users" "$LC_BIN/loadworker" --local "$WORK/sc_idle.json" --threads 1 ${LC_WORKER_ARGS:-} --log-level warn
    many=$IDLE_RSS
    idle_rss lc_sidle1 "$TARGET_PORT" 1 "$LC_BIN/loadworker" --local "$WORK/sc_idle1.json" --threads 1 ${LC_WORKER_ARGS:-} --log-level warn
    one=$IDLE_RSS
    if [ "$many" = 0 ] || [ "$one" = 0 ]; then
        line="script-idle  failed: the idle scripted users' connections did not all come up (see the log above)"
    else
        b=$(per_conn_bytes "$many" "$one" "$users")
        printf -v line 'script-idle  ours: %s B per idle scripted user, parked in sleep() in a lua step (of which data held: %s B = token %s + cookies %s); our memory %s B (goal <= 2800); %s users: %s KiB vs 1 user: %s KiB; declarative journey user: %s  locust: %s  k6: %s' \
            "$b" "$DATA_HELD" "$DATA_TOKEN" "$DATA_COOKIES" "$((b - DATA_HELD))" "$users" "$many" "$one" \
            "${decl:-not measured in this run}" \
            "$(locust_idle_figure)" "$K6_VU_PUBLISHED"
    fi
    echo "$line"; SUMMARY+=("$line")
}

# Many scripted users on one engine thread, each holding its session (a 300-byte token in
# u.vars, the session cookie in its jar) and sleeping in Lua between requests.
SCRIPT_MANY_LUA='
local login_body = json.encode({user = "'"$JOURNEY_USER"'", password = "pw"})
function login(u)
  local r = http.post("/login?token_len=300", login_body,
                      {name = "login", headers = {["Content-Type"] = "application/json"}})
  if r.status ~= 200 then fail("login: " .. r.status) end
  u.vars.token = r:json("$.token")
end
function visit(u)
  http.get("/me", {name = "me", headers = {Authorization = "Bearer " .. u.vars.token}})
  sleep(math.random(SLEEP_MS))
end'
SCRIPT_MANY_STEPS='[{"name": "session", "on_start": [{"lua": "login", "endpoints": ["login"]}],
  "steps": [{"lua": "visit", "endpoints": ["me"]}]}]'

# script_many: SCRIPT_MANY_USERS such users for SCRIPT_MANY_SECONDS on one engine thread
# (loadworker --local --threads 1, pinned): the engine's loop lag (its 100 ms probe's worst
# lateness in each second, from the JSON report's timeline) once every user is in, and over
# the whole run (the spawn included), with the requests it made.
script_many() {
    local users=${SCRIPT_MANY_USERS:-10000} secs=${SCRIPT_MANY_SECONDS:-30} out line
    script_scenario "$WORK/sc_many.json" bench-script-many "$users" "$secs" \
        "${SCRIPT_MANY_LUA/SLEEP_MS/${SCRIPT_MANY_SLEEP_MS:-5000, 15000}}" "$SCRIPT_MANY_STEPS" \
        "${SCRIPT_MANY_SPAWN:-2000}"
    out=$( { run_timed taskset -c "$GEN_CPU" "$LC_BIN/loadworker" --local "$WORK/sc_many.json" --threads 1 --json --log-level warn; } 3>"$WORK/cpu")
    if ! jq -e .totals <<<"$out" >/dev/null 2>&1; then
        line="script-many  failed: loadworker --local gave no report (see $WORK)"
    else
        line=$(jq -r --argjson users "$users" --arg cpu "$(cat "$WORK/cpu")" '
            def median: sort | if length == 0 then null else .[(length - 1) / 2 | floor] end;
            [.timeline[] | select(.users >= $users) | .loop_lag_ms] as $held
            | "script-many  \($users) scripted users on one engine thread, sleeping in Lua between requests: "
              + "loop lag once all were in (\($held | length) s): median \($held | median // "n/a") ms, "
              + "max \($held | max // "n/a") ms; whole run (spawn included) max \(.engine_loop_lag_ms_max) ms; "
              + "\(.totals.requests) requests (\(.totals.rps | floor)/s), \(.totals.failures) failures, "
              + "\($cpu) CPU s" ' <<<"$out")
    fi
    echo "$line"; SUMMARY+=("$line")
}
