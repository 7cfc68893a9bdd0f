#!/usr/bin/env bash
# Compressed responses through loadworker --local against lc_target: Accept-Encoding is sent
# only when the scenario (or the step) asks; a journey extracts values from gzip, deflate and
# br bodies; v1 tasks check decoded bodies; a decompression bomb is error kind parse on its
# step, says why in the trace, and leaves the worker's memory small; bad "compression" lists
# are refused with their JSON path.
source "$(dirname "$0")/lib.sh"

start_target
T="http://127.0.0.1:$TARGET_PORT"
path_count() { target_requests ".by_path[\"$1\"] // 0"; }
endpoint() { jq -r --arg e "$2" ".endpoints[] | select(.name == \$e) | .$3" "$1"; }
errors_of() { jq -r --arg e "$2" --arg k "$3" '[.errors[] | select(.endpoint == $e and .kind == $k) | .count] | add // 0' "$1"; }

# 1. A journey that reads every coding; one step asks for none ([]), one gives its own list.
cat >"$WORK/journey.json" <<JSON
{"name": "codings", "target": "$T", "duration": "1s", "users": 2,
 "compression": ["gzip", "br"],
 "journeys": [{"name": "j", "steps": [
   {"name": "gz", "path": "/gzip?size=4000", "expect": {"body_contains": "tok-4000"},
    "extract": {"gtok": {"json": "$.token"}, "genc": {"json": "$.coding"}}},
   {"name": "seen-gz", "path": "/seen/\${gtok}/\${genc}"},
   {"name": "br", "path": "/br?size=20000",
    "extract": {"btok": {"json": "$.token"}, "benc": {"json": "$.coding"}}},
   {"name": "seen-br", "path": "/seen/\${btok}/\${benc}"},
   {"name": "df", "path": "/deflate?size=300", "compression": ["deflate"],
    "extract": {"dtok": {"json": "$.token"}, "denc": {"json": "$.coding"}}},
   {"name": "seen-df", "path": "/seen/\${dtok}/\${denc}"},
   {"name": "plain", "path": "/gzip?size=100", "compression": [],
    "extract": {"penc": {"json": "$.coding"}}},
   {"name": "seen-plain", "path": "/seen/plain/\${penc}"}]}]}
JSON
timeout 30 "$LC_BIN/loadworker" --local "$WORK/journey.json" --threads 2 --json \
    >"$WORK/journey.out" 2>"$WORK/journey.log" || true
# A user stopped by the end of the run may have taken its value and not shown it yet: a seen
# path counts its step's requests, or up to one fewer per user.
seen_all() { # seen_all STEP PATH
    local n seen
    n=$(endpoint "$WORK/journey.out" "$1" requests)
    seen=$(path_count "$2")
    log "$1: $n requests, $2 seen $seen times"
    [ "$n" -gt 10 ] && [ "$seen" -le "$n" ] && [ "$seen" -ge $((n - 2)) ]
}
check "the journey ran without a failure" \
    jq -e '.totals.requests > 40 and .totals.failures == 0' "$WORK/journey.out"
check "a token was extracted from every gzip body (/seen/tok-4000/gzip)" \
    seen_all gz /seen/tok-4000/gzip
check "a token was extracted from every br body" seen_all br /seen/tok-20000/br
check "a step's own list: deflate bodies" seen_all df /seen/tok-300/deflate
check "compression [] sends no Accept-Encoding: the body came as is" \
    seen_all plain /seen/plain/identity
check "no other value was seen" \
    [ "$(target_requests '[.by_path | to_entries[] | select(.key | startswith("/seen/"))] | length')" = 4 ]

# 2. v1 tasks: the body checked is the decoded one; without compression nothing is asked.
curl -sf -X POST "$T/__reset" >/dev/null
cat >"$WORK/tasks.json" <<JSON
{"name": "tasks", "target": "$T", "duration": "1s", "users": 2, "compression": ["br", "gzip"],
 "tasks": [{"name": "gz", "path": "/gzip?size=2000", "expect": {"body_contains": "\"coding\":\"gzip\""}},
           {"name": "br", "path": "/br?size=2000", "expect": {"body_contains": "tok-2000"}},
           {"name": "off", "path": "/gzip?size=10", "compression": [],
            "expect": {"body_contains": "\"encoded\":false"}}]}
JSON
timeout 30 "$LC_BIN/loadworker" --local "$WORK/tasks.json" --threads 1 --json \
    >"$WORK/tasks.out" 2>"$WORK/tasks.log" || true
check "v1 tasks: every decoded body held its text" \
    jq -e '.totals.requests > 30 and .totals.failures == 0' "$WORK/tasks.out"

# 3. Bombs: 128 MiB of '0' in a ~130 KB gzip and a tiny br body. Made once by the target first.
curl -sf -X POST "$T/__reset" >/dev/null
curl -sf --max-time 20 -o /dev/null "$T/bomb?mib=128"
curl -sf --max-time 20 -o /dev/null "$T/bomb?mib=128&coding=br"
cat >"$WORK/bomb.json" <<JSON
{"name": "bomb", "target": "$T", "duration": "3s", "users": 4, "compression": ["gzip", "br"],
 "journeys": [{"name": "b", "on_error": "continue", "steps": [
   {"name": "gzip-bomb", "path": "/bomb?mib=128", "extract": {"x": {"regex": "(1)"}}},
   {"name": "br-bomb", "path": "/bomb?mib=128&coding=br", "expect": {"body_contains": "1"}},
   {"name": "fine", "path": "/gzip?size=50", "extract": {"t": {"json": "$.token"}}}]}]}
JSON
# Max RSS of a run, in KiB. ASan keeps freed memory in a quarantine (256 MiB by default),
# which would count every freed 2 MiB buffer: a small one keeps the comparison about us.
max_rss() { # max_rss SCENARIO OUT
    ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}quarantine_size_mb=4" timeout 30 \
        /usr/bin/time -f '%M' -o "$2.rss" "$LC_BIN/loadworker" --local "$1" --threads 2 --json \
        >"$2" 2>"$2.log" || true
    tail -n 1 "$2.rss"
}
jq '.journeys[0].steps |= [.[] | select(.name == "fine")] | .name = "no-bomb"' "$WORK/bomb.json" \
    >"$WORK/nobomb.json"
base_kb=$(max_rss "$WORK/nobomb.json" "$WORK/nobomb.out")
rss_kb=$(max_rss "$WORK/bomb.json" "$WORK/bomb.out")
gb=$(endpoint "$WORK/bomb.out" gzip-bomb requests)
log "bomb: gzip-bomb=$gb br-bomb=$(endpoint "$WORK/bomb.out" br-bomb requests) max RSS ${rss_kb} KiB (without bombs ${base_kb} KiB)"
check "every gzip bomb is an error of kind parse" \
    [ "$gb" -gt 5 -a "$(errors_of "$WORK/bomb.out" gzip-bomb parse)" = "$gb" ]
check "every br bomb is an error of kind parse" \
    [ "$(errors_of "$WORK/bomb.out" br-bomb parse)" = "$(endpoint "$WORK/bomb.out" br-bomb requests)" ]
check "the step after the bombs still works" \
    [ "$(endpoint "$WORK/bomb.out" fine failures)" = 0 -a "$(endpoint "$WORK/bomb.out" fine requests)" -gt 5 ]
check "the worker stayed small (max RSS ${rss_kb} KiB, at most 48 MiB over ${base_kb} KiB without bombs; one bomb decoded is 128 MiB)" \
    [ "$rss_kb" -lt $((base_kb + 48 * 1024)) ]

# The trace says what happened.
timeout 30 "$LC_BIN/loadworker" --local "$WORK/bomb.json" --trace >"$WORK/trace.out" 2>&1 || true
check "the trace names the bomb: longer than the body cap, a parse error" \
    grep -q 'gzip body: the decoded body is longer than the body cap.*parse error' "$WORK/trace.out"

# 4. Unknown encodings, and bad lists refused before anything runs.
bad_run() { # bad_run JQ-EDIT EXPECTED-MESSAGE
    jq "$1" "$WORK/tasks.json" >"$WORK/bad.json"
    local rc=0
    timeout 10 "$LC_BIN/loadworker" --local "$WORK/bad.json" >"$WORK/bad.out" 2>&1 || rc=$?
    [ "$rc" = 2 ] && grep -qF "$2" "$WORK/bad.out"
}
check "an unknown coding is refused with its path" \
    bad_run '.compression = ["gzip", "zstd"]' 'compression[1]: expected "gzip", "deflate" or "br"'
check "a coding given twice is refused" \
    bad_run '.tasks[0].compression = ["br", "br"]' 'tasks[0].compression[1]: "br" is given twice'
check "compression is a list" bad_run '.compression = "gzip"' 'compression: expected an array'
check "compression and an Accept-Encoding header together are refused" \
    bad_run '.tasks[1].headers = {"Accept-Encoding": "gzip"}' \
    'tasks[1].compression: cannot be combined with an Accept-Encoding header'
finish
