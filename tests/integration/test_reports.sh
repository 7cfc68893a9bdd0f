#!/usr/bin/env bash
# Reports: a run against lc_target with a hostile task name, then its
# per-second history (exact sums, ?since, ?endpoint), the Locust CSVs (header
# byte for byte, counts equal the API's), the self-contained HTML, the JUnit
# XML, tenant isolation of every report URL, and `loadctl report`.
source "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
jqt() { jq -e "$@" >/dev/null; } # a jq test, quietly
HOSTILE='<script>alert(1)</script>, "x"'
STATS_HEADER='Type,Name,Request Count,Failure Count,Median Response Time,Average Response Time,Min Response Time,Max Response Time,Average Content Size,Requests/s,Failures/s,50%,66%,75%,80%,90%,95%,98%,99%,99.9%,99.99%,100%'
HISTORY_HEADER='Timestamp,User Count,Type,Name,Requests/s,Failures/s,50%,66%,75%,80%,90%,95%,98%,99%,99.9%,99.99%,100%,Total Request Count,Total Failure Count,Total Median Response Time,Total Average Response Time,Total Min Response Time,Total Max Response Time,Total Average Content Size'

start_target --latency-ms 5
start_master master
start_worker w1
check "a worker connects" wait_until 15 workers_connected 1

# The run's name and a task name are hostile: HTML, CSV and XML must escape them.
jq -n --arg target "http://127.0.0.1:$TARGET_PORT" --arg hostile "$HOSTILE" '{
  name: $hostile, target: $target, duration: "4s", users: 10, spawn_rate: 100,
  tasks: [{name: "list", weight: 3, path: "/list"},
          {name: $hostile, weight: 1, method: "POST", path: "/create", body: "{}"}]}' \
    >"$WORK/scenario.json"
id=$(submit_run "$WORK/scenario.json")
check "run created" test "${id:-0}" -gt 0
id=${id:-1}
R="$API/api/v1/runs/$id"

# While it runs, the dashboard's poll: ?since= returns only newer seconds.
wait_until 15 run_state_is "$id" running || true
wait_until 10 sh -c "curl -sf '$R/history' | jq -e '.seconds | length >= 2' >/dev/null" || true
curl -sf "$R/history" >"$WORK/live.json"
last=$(jq '.seconds[-1].t // 0' "$WORK/live.json")
check "while running: seconds are consecutive unix seconds" jqt \
    '.seconds | length >= 1 and ([range(1; length) as $i | .[$i].t - .[$i-1].t == 1] | all)' "$WORK/live.json"
check "while running: ?since=LAST returns only later seconds" \
    sh -c "curl -sf '$R/history?since=$last' | jq -e --argjson l $last '[.seconds[].t > \$l] | all' >/dev/null"

check "run finished" wait_until 30 run_state_is "$id" finished
curl -sf "$R" >"$WORK/run.json"
curl -sf "$R/history" >"$WORK/history.json"
total=$(jq .totals.requests "$WORK/run.json")
served=$(target_requests)
log "requests: run=$total target=$served seconds=$(jq '.seconds | length' "$WORK/history.json")"
check "requests were made" [ "$total" -gt 100 ]
check "history: the run id" jqt --argjson id "$id" '.run == $id' "$WORK/history.json"
check "history: one entry per second, t consecutive, offset_s consecutive" jqt \
    '.seconds as $s | ($s | length) >= 3 and
     ([range(1; $s | length) as $i | ($s[$i].t - $s[$i-1].t == 1) and
       ($s[$i].offset_s - $s[$i-1].offset_s == 1)] | all)' "$WORK/history.json"
check "history: requests sum to the run's total" \
    jqt --argjson n "$total" '[.seconds[].requests] | add == $n' "$WORK/history.json"
check "history: requests sum to the target's count" \
    jqt --argjson n "$served" '[.seconds[].requests] | add == $n' "$WORK/history.json"
check "history: every field of an entry" jqt '.seconds | map(keys) | all(
    contains(["t","users","requests","failures","rps","failures_per_s","p50_ms","p95_ms","p99_ms"]))' \
    "$WORK/history.json"
check "history: p50 <= p95 <= p99 where there were requests" jqt \
    '[.seconds[] | select(.requests > 0) | .p50_ms <= .p95_ms and .p95_ms <= .p99_ms] | all' \
    "$WORK/history.json"
check "history: users were running" jqt '[.seconds[].users] | max == 10' "$WORK/history.json"
list_n=$(jq '.endpoints[] | select(.name == "list") | .requests' "$WORK/run.json")
check "history ?endpoint=list sums to that endpoint's count" \
    sh -c "curl -sf '$R/history?endpoint=list' | jq -e --argjson n $list_n '[.seconds[].requests] | add == \$n' >/dev/null"
enc=$(jq -rn --arg s "$HOSTILE" '$s | @uri')
hostile_n=$(jq --arg s "$HOSTILE" '.endpoints[] | select(.name == $s) | .requests' "$WORK/run.json")
check "history ?endpoint=<percent-encoded hostile name> sums to its count" \
    sh -c "curl -sf '$R/history?endpoint=$enc' | jq -e --argjson n $hostile_n '[.seconds[].requests] | add == \$n' >/dev/null"
first=$(jq '.seconds[0].t' "$WORK/history.json")
check "?since=FIRST leaves out exactly the first second" \
    sh -c "[ \$(curl -sf '$R/history?since=$first' | jq '.seconds | length') = $(( $(jq '.seconds | length' "$WORK/history.json") - 1 )) ]"
check "?since=garbage: 400" [ "$(curl -s -o /dev/null -w '%{http_code}' "$R/history?since=abc")" = 400 ]

# report.csv: Locust's header exactly, one row per endpoint, then Aggregated.
curl -sf -D "$WORK/csv.headers" "$R/report.csv" -o "$WORK/report.csv"
check "report.csv: text/csv; charset=utf-8" grep -qi '^Content-Type: text/csv; charset=utf-8' "$WORK/csv.headers"
check "report.csv: attachment run-$id-report.csv" \
    grep -qi "^Content-Disposition: attachment; filename=\"run-$id-report.csv\"" "$WORK/csv.headers"
check "report.csv: the header line is Locust's, byte for byte" \
    [ "$(head -1 "$WORK/report.csv" | tr -d '\r')" = "$STATS_HEADER" ]
cat >"$WORK/check_csv.py" <<'PY'
import csv, json, sys
rows = list(csv.reader(open(sys.argv[1], newline='', encoding='utf-8')))
run = json.load(open(sys.argv[2]))
header = sys.argv[3].split(',')
assert rows[0] == header, rows[0]
body = [dict(zip(header, r)) for r in rows[1:]]
assert all(len(r) == len(header) for r in rows), 'ragged rows'
api = {e['name']: e for e in run['endpoints']}
named = body[:-1]
assert sorted(r['Name'] for r in named) == sorted(api), [r['Name'] for r in named]
for r in named:
    e = api[r['Name']]
    assert r['Type'] == e['method'], (r['Type'], e['method'])
    assert int(r['Request Count']) == e['requests'], (r['Name'], r['Request Count'], e['requests'])
    assert int(r['Failure Count']) == e['failures']
agg = body[-1]
assert agg['Type'] == '' and agg['Name'] == 'Aggregated', agg
assert int(agg['Request Count']) == run['totals']['requests']
assert int(agg['Failure Count']) == run['totals']['failures']
for r in body:
    for col in header[4:]:
        float(r[col])
    assert float(r['50%']) <= float(r['95%']) <= float(r['100%'])
print('ok')
PY
check "report.csv parses; per-endpoint counts equal the API's, Aggregated the total" \
    "$PY" "$WORK/check_csv.py" "$WORK/report.csv" "$WORK/run.json" "$STATS_HEADER"
check "report.csv: the hostile name is quoted (RFC 4180)" \
    grep -qF '"<script>alert(1)</script>, ""x"""' "$WORK/report.csv"

# history.csv: Locust's stats_history columns, one Aggregated row a second.
curl -sf "$R/history.csv" -o "$WORK/history.csv"
cat >"$WORK/check_history.py" <<'PY'
import csv, json, sys
rows = list(csv.reader(open(sys.argv[1], newline='', encoding='utf-8')))
hist = json.load(open(sys.argv[2]))
header = sys.argv[3].split(',')
assert rows[0] == header, rows[0]
body = [dict(zip(header, r)) for r in rows[1:]]
assert len(body) == len(hist['seconds']), (len(body), len(hist['seconds']))
for r, s in zip(body, hist['seconds']):
    assert r['Name'] == 'Aggregated' and r['Type'] == '' and int(r['Timestamp']) == s['t']
    assert float(r['Requests/s']) == s['requests'] and int(r['User Count']) == s['users']
assert int(body[-1]['Total Request Count']) == sum(s['requests'] for s in hist['seconds'])
print('ok')
PY
check "history.csv parses: header exact, a row a second, running totals end at the total" \
    "$PY" "$WORK/check_history.py" "$WORK/history.csv" "$WORK/history.json" "$HISTORY_HEADER"

# report.html: self-contained, charts drawn, the hostile name escaped.
curl -sf -D "$WORK/html.headers" "$R/report.html" -o "$WORK/report.html"
check "report.html: text/html; charset=utf-8" grep -qi '^Content-Type: text/html; charset=utf-8' "$WORK/html.headers"
cat >"$WORK/check_html.py" <<'PY'
import sys
from html.parser import HTMLParser
text = open(sys.argv[1], encoding='utf-8').read()
class P(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.bad, self.data = [], [], []
    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        for k, v in attrs:
            if k in ('src', 'href', 'xlink:href', 'action', 'srcset', 'data') and v is not None:
                self.bad.append((tag, k, v))
        if tag in ('script', 'link', 'iframe', 'img', 'object', 'embed'):
            self.bad.append((tag, 'tag', ''))
    def handle_data(self, d):
        self.data.append(d)
p = P()
p.feed(text)
assert not p.bad, p.bad
assert 'svg' in p.tags and 'path' in p.tags, 'no chart'
assert 'url(' not in text and '@import' not in text, 'CSS loads something'
assert '<script>' not in text, 'raw script tag'
assert '&lt;script&gt;alert(1)&lt;/script&gt;' in text, 'escaped hostile name missing'
assert sys.argv[2] in ''.join(p.data), 'the name does not read back'
print('ok')
PY
check "report.html: no external resources, an <svg> chart, the hostile name escaped" \
    "$PY" "$WORK/check_html.py" "$WORK/report.html" "$HOSTILE"
check "report.html: no http(s) reference outside the scenario's target" \
    sh -c "! grep -oE '(src|href)=\"?(https?:)?//' '$WORK/report.html'"

# JUnit: parses; one testcase per threshold of the run view (none here).
curl -sf -D "$WORK/xml.headers" "$R/report.junit.xml" -o "$WORK/junit.xml"
check "junit: application/xml" grep -qi '^Content-Type: application/xml' "$WORK/xml.headers"
n_th=$(jq '.thresholds // [] | length' "$WORK/run.json")
check "junit parses; testsuite 'thresholds' with one testcase per threshold ($n_th)" \
    "$PY" -c "
import sys, xml.etree.ElementTree as ET
root = ET.parse('$WORK/junit.xml').getroot()
suites = [s for s in root.iter('testsuite') if s.get('name') == 'thresholds']
assert len(suites) == 1, suites
assert len(list(suites[0].iter('testcase'))) == $n_th == int(suites[0].get('tests'))
assert '$HOSTILE' in root.get('name'), root.get('name')
"

# report.json: the run view plus stats and history.
curl -sf "$R/report.json" >"$WORK/report.json"
check "report.json: run view, scenario, stats with Aggregated, history" jqt --argjson n "$total" \
    '.totals.requests == $n and .scenario.tasks[0].name == "list" and
     .stats[-1].name == "Aggregated" and .stats[-1].requests == $n and
     ([.history[].requests] | add) == $n and (.stats[0].percentiles_ms | has("99.99%"))' \
    "$WORK/report.json"

# Another tenant's token: 404 on every report URL, exactly like a missing run.
timeout 10 "$LC_BIN/loadctl" --master "$API" tenants add other >/dev/null
TOTHER=$(timeout 10 "$LC_BIN/loadctl" --master "$API" --json tokens add tenant other | jq -r .token)
for rest in history report.json report.csv history.csv report.html report.junit.xml; do
    code=$(curl -q -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOTHER" "$R/$rest")
    check "another tenant's token: 404 on /$rest" [ "$code" = 404 ]
done
check "no token: 401 on /report.csv" [ "$(curl -q -s -o /dev/null -w '%{http_code}' "$R/report.csv")" = 401 ]
check "a missing run: 404 on /history" [ "$(curl -s -o /dev/null -w '%{http_code}' "$API/api/v1/runs/$((id + 99))/history")" = 404 ]
check "POST on a report: 405" [ "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$R/report.csv")" = 405 ]

# loadctl report: the API's bytes, to stdout and to a file.
ctl() { timeout 30 "$LC_BIN/loadctl" --master "$API" "$@"; }
check "loadctl report --format csv equals the API's" \
    sh -c "'$LC_BIN/loadctl' --master '$API' report $id --format csv | cmp -s - '$WORK/report.csv'"
check "loadctl report --format junit -o FILE equals the API's" \
    sh -c "'$LC_BIN/loadctl' --master '$API' report $id --format junit -o '$WORK/ctl.xml' && cmp -s '$WORK/ctl.xml' '$WORK/junit.xml'"
check "loadctl report --format history-csv equals the API's" \
    sh -c "'$LC_BIN/loadctl' --master '$API' report $id --format history-csv | cmp -s - '$WORK/history.csv'"
check "loadctl report: an unknown format is a usage error (2)" \
    sh -c "'$LC_BIN/loadctl' --master '$API' report $id --format pdf 2>/dev/null; [ \$? = 2 ]"
check "loadctl report for another tenant's run fails (1)" \
    sh -c "'$LC_BIN/loadctl' --master '$API' --token '$TOTHER' report $id 2>/dev/null; [ \$? = 1 ]"

finish
