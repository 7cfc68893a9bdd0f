#!/usr/bin/env bash
# test_scenario_hostile.sh — scenarios as an attacker writes them, through one
# master and one worker: a tls.ca_file that is a FIFO (the worker must stay
# responsive and refuse with words that say nothing about its files), CR/LF
# in the target, a path, a header or a method (400 naming the field, no run),
# and names that are spreadsheet formulas (report.csv and history.csv
# neutralise them).
source "$(dirname "$0")/lib.sh"

runs_count() { curl -sf --max-time 5 "$API/api/v1/runs" | jq '.runs | length'; }
# post JSON: answers the HTTP status, the body in $WORK/post.json.
post() { curl -s -o "$WORK/post.json" -w '%{http_code}' --max-time 5 -X POST --data-binary "$1" "$API/api/v1/runs"; }
health_ok() { curl -sf --max-time 2 "http://127.0.0.1:$HEALTH_PORT/healthz" >/dev/null; }

start_target
start_master master
# The operator's CA directory holds a FIFO a tenant might name (nothing ever
# writes to it: opening it for reading the old way blocks for good).
mkdir -p "$WORK/cas"
mkfifo "$WORK/cas/ca.fifo"
HEALTH_PORT=$(free_port)
start_worker w1 --tls-ca-dir "$WORK/cas" --health-addr "127.0.0.1:$HEALTH_PORT"
check "worker connects" wait_until 15 workers_connected 1
check "worker's /healthz answers" wait_until 10 health_ok

# https://127.0.0.1:1: nothing is served there, and nothing must be: the run
# has to fail before a connection is tried.
tls_scenario() {
    jq -n --arg ca "$1" --arg name "$2" '{name: $name, target: "https://127.0.0.1:1",
        duration: "3s", users: 1, request_timeout_ms: 1000, tls: {ca_file: $ca},
        tasks: [{path: "/"}]}'
}

# (1) A path is refused by the master: no worker ever sees it.
for ca in "$WORK/cas/ca.fifo" /proc/self/fd/0 ../cas/ca.fifo; do
    code=$(post "$(tls_scenario "$ca" path-ca)")
    check "ca_file '$ca': 400 (got $code)" [ "$code" = 400 ]
    check "ca_file '$ca': the error names tls.ca_file" grep -q '"tls.ca_file: ' "$WORK/post.json"
done
check "no run was created for a ca_file path" [ "$(runs_count)" = 0 ]

# (2) A name in the operator's directory that is a FIFO: refused at once, the
# worker's loop never blocks, and the tenant hears the words a missing file
# gets.
generic='tls.ca_file: not available on this worker'
id_fifo=$(submit_run <(tls_scenario ca.fifo fifo-ca))
check "the FIFO run is created" [ -n "$id_fifo" -a "$id_fifo" != null ]
check "the FIFO run fails" wait_until 30 run_state_is "$id_fifo" failed
reason_fifo=$(curl -sf --max-time 5 "$API/api/v1/runs/$id_fifo" | jq -r .reason)
log "FIFO run $id_fifo: $reason_fifo"
check "its reason is the generic refusal" grep -qF "w1 refused its share: scenario.json: $generic" <<<"$reason_fifo"
check "worker's /healthz still answers" health_ok
check "worker still connected" workers_connected 1
id_missing=$(submit_run <(tls_scenario missing.pem missing-ca))
check "the missing-file run fails" wait_until 30 run_state_is "${id_missing:-0}" failed
reason_missing=$(curl -sf --max-time 5 "$API/api/v1/runs/${id_missing:-0}" | jq -r .reason)
check "a FIFO and a missing file read the same to a tenant" [ "$reason_fifo" = "$reason_missing" ]
names_no_file() { ! grep -qiE 'fifo|missing|regular|such file' <<<"$1"; }
check "the reason names neither file nor what is wrong with it" names_no_file "$reason_fifo"
check "the worker's log says why" grep -q 'tls.ca_file refused.*file="ca.fifo".*not a regular file' "$WORK/w1.log"

# (3) Control bytes where they would reach the request line or a header.
before=$(runs_count)
base='{"name": "crlf", "duration": "2s", "users": 1, "target": "http://127.0.0.1:'$TARGET_PORT'", "tasks": [{"path": "/"}]}'
bad_case() { # JQ_EDIT JSON_PATH ERROR_TEXT
    local code
    code=$(post "$(jq -c "$1" <<<"$base")")
    check "$2: 400 (got $code)" [ "$code" = 400 ]
    check "$2: the error names it" grep -qF "\"$2: $3" "$WORK/post.json"
}
bad_case '.tasks[0].path = "/a\r\nTransfer-Encoding: chunked"' 'tasks[0].path' 'control character 0x0d at offset 2'
bad_case '.tasks[0].path = "/a\nb"' 'tasks[0].path' 'control character 0x0a at offset 2'
bad_case '.tasks[0].headers = {"X-A": "1\r\nTransfer-Encoding: chunked"}' 'tasks[0].headers.X-A' 'control character 0x0d at offset 1'
bad_case '.tasks[0].headers = {"X-A": "a\tb"}' 'tasks[0].headers.X-A' 'control character 0x09 at offset 1'
bad_case '.tasks[0].headers = {"X-A\r\nHost": "x"}' 'tasks[0].headers' 'header name: control character 0x0d at offset 3'
bad_case '.tasks[0].method = "GET\r\n"' 'tasks[0].method' 'control character 0x0d at offset 3'
bad_case '.target += "/p\r\nX-Evil: 1"' 'target' 'control character 0x0d at offset'
code=$(post "$(jq -c '.tasks[0].headers = {"Transfer-Encoding": "chunked"}' <<<"$base")")
check "a Transfer-Encoding header: 400 (got $code)" [ "$code" = 400 ]
code=$(post "$(jq -c '.tasks[0].headers = {"Host": "evil.example"}' <<<"$base")")
check "a Host header: 400 (got $code)" [ "$code" = 400 ]
check "no run was created for a control byte or a reserved header" [ "$(runs_count)" = "$before" ]

# (4) Names that are formulas: neutralised in both CSV files, numbers untouched.
formula='=HYPERLINK("http://evil.example/","x")'
jq -n --arg f "$formula" --arg t "http://127.0.0.1:$TARGET_PORT" '{name: $f, target: $t,
    duration: "2s", users: 2, tasks: [{name: $f, path: "/f"}, {name: "-1+2", path: "/m"},
    {name: "@SUM(A1)", path: "/s"}]}' >"$WORK/formula.json"
id=$(submit_run "$WORK/formula.json")
check "the formula-named run is created" [ -n "$id" -a "$id" != null ]
check "it finishes" wait_until 30 run_state_is "${id:-0}" finished
R="$API/api/v1/runs/${id:-0}"
curl -sf --max-time 5 "$R/report.csv" -o "$WORK/report.csv" || true
check "report.csv: the formula is a quoted text cell" \
    grep -qF "GET,\"'=HYPERLINK(\"\"http://evil.example/\"\",\"\"x\"\")\"," "$WORK/report.csv"
check "report.csv: so are -1+2 and @SUM(A1)" \
    bash -c "grep -qF \"GET,\\\"'-1+2\\\",\" '$WORK/report.csv' && grep -qF \"GET,\\\"'@SUM(A1)\\\",\" '$WORK/report.csv'"
check "report.csv: no cell starts with = + - @" \
    bash -c "! tail -n +2 '$WORK/report.csv' | tr ',' '\n' | grep -qE '^[=+@-]'"
check "report.csv: counts are still plain numbers" grep -qE '^,Aggregated,[0-9]+,0,' "$WORK/report.csv"
curl -sf --max-time 5 "$R/history.csv?endpoint=$(jq -rn --arg f "$formula" '$f | @uri')" \
    -o "$WORK/history.csv" || true
check "history.csv: the formula is a quoted text cell" \
    grep -qF ",GET,\"'=HYPERLINK(\"\"http://evil.example/\"\",\"\"x\"\")\"," "$WORK/history.csv"

# (5) SIGTERM still stops the worker promptly.
t0=$SECONDS
stop_proc "$PID_w1"
check "SIGTERM stopped the worker within 10 s" [ $((SECONDS - t0)) -lt 10 ]
check "it stopped by itself, not by the KILL after 10 s" grep -q 'msg="signal: stopping runs"' "$WORK/w1.log"

finish
