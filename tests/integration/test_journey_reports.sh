#!/usr/bin/env bash
# A journey run's reports, through one master and two workers against lc_target: the
# journey's series (iteration:NAME, method ITERATION; group:NAME, method GROUP) and its
# error kinds in report.csv, failures.csv and report.html, each count exact (a per-iteration
# feeder makes exactly ITERS iterations) and equal to the run's API view and to the target's
# per-path counts; and thresholds on iteration_duration and group_duration as JUnit test
# cases, one passing and one failing on purpose, each with its verdict.
source "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
start_target
start_master master
start_worker w1
start_worker w2
check "two workers connect" wait_until 15 workers_connected 2

# Every iteration: "list" misses a required extract (kind extract; on_error continue lets
# the iteration go on), then the group "checkout" (cart, pay, a 20 ms think). The feeder's
# ITERS rows are split between the workers and stop their users when they run out.
ITERS=12
csv=$(printf 'n\\n'; for i in $(seq 1 $ITERS); do printf '%d\\n' "$i"; done)
cat >"$WORK/journey.json" <<JSON
{"name": "journey-reports", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "2s",
 "users": 4, "spawn_rate": 100,
 "feeders": {"it": {"csv": "$csv", "mode": "per_iteration", "on_exhausted": "stop_user"}},
 "journeys": [{"name": "buyer", "steps": [
   {"name": "list", "path": "/items", "query": {"n": "1"}, "on_error": "continue",
    "extract": {"x": {"json": "$.missing"}}},
   {"group": "checkout", "steps": [
     {"name": "cart", "method": "POST", "path": "/basket", "json": {"n": "\${it.n}"}},
     {"name": "pay", "method": "POST", "path": "/payment", "form": {"n": "\${it.n}"}},
     {"think_ms": 20}]}]}],
 "thresholds": {"iteration_duration": ["p(95)<10000"],
                "iteration_duration{journey:buyer}": ["max<1"],
                "group_duration{group:checkout}": ["min>=19"]}}
JSON
id=$(submit_run "$WORK/journey.json")
check "run created" test "${id:-0}" -gt 0
id=${id:-1}
R="$API/api/v1/runs/$id"
check "run finished" wait_until 30 run_state_is "$id" finished
curl -sf "$R" >"$WORK/run.json"
served() { target_requests ".by_path[\"$1\"] // 0"; }
log "target: $(target_requests '.by_path | tostring'); endpoints: $(jq -c '[.endpoints[] | [.name, .method, .requests]]' "$WORK/run.json")"

# The API view first: what the reports are compared with.
api() { jq -r --arg n "$1" ".endpoints[] | select(.name == \$n) | .$2" "$WORK/run.json"; }
check "the target served each step once per iteration" \
    [ "$(served /items):$(served /basket):$(served /payment)" = "$ITERS:$ITERS:$ITERS" ]
check "API: iteration:buyer is an ITERATION series of $ITERS" \
    [ "$(api iteration:buyer method):$(api iteration:buyer requests)" = "ITERATION:$ITERS" ]
check "API: group:checkout is a GROUP series of $ITERS" \
    [ "$(api group:checkout method):$(api group:checkout requests)" = "GROUP:$ITERS" ]
check "API: list has $ITERS extract errors" \
    jq -e --argjson n $ITERS '[.errors[] | select(.endpoint == "list" and .kind == "extract") | .count] == [$n]' "$WORK/run.json"
check "API: the request total is the target's (iterations and groups stay out of it)" \
    [ "$(jq .totals.requests "$WORK/run.json")" = "$(target_requests)" ]

# report.csv: the series are rows of their own with their methods as Type; the Aggregated
# row counts requests only.
curl -sf "$R/report.csv" -o "$WORK/report.csv"
check "report.csv: every row's counts equal the API's; series rows typed; Aggregated = requests" \
    "$PY" - "$WORK/report.csv" "$WORK/run.json" "$ITERS" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline='', encoding='utf-8')))
run, iters = json.load(open(sys.argv[2])), int(sys.argv[3])
by = {r['Name']: r for r in rows}
want = {'iteration:buyer': 'ITERATION', 'group:checkout': 'GROUP', 'list': 'GET', 'cart': 'POST', 'pay': 'POST'}
for name, typ in want.items():
    assert name in by, (name, list(by))
    assert by[name]['Type'] == typ, (name, by[name]['Type'])
    assert int(by[name]['Request Count']) == iters, (name, by[name]['Request Count'])
api = {e['name']: e for e in run['endpoints']}
for r in rows[:-1]:
    assert int(r['Request Count']) == api[r['Name']]['requests'], r['Name']
    assert int(r['Failure Count']) == api[r['Name']]['failures'], r['Name']
assert int(by['list']['Failure Count']) == iters, by['list']
# Each iteration had a failed step (list) and counts as failed; the group had none.
assert int(by['iteration:buyer']['Failure Count']) == iters, by['iteration:buyer']
assert int(by['group:checkout']['Failure Count']) == 0, by['group:checkout']
assert float(by['group:checkout']['Min Response Time']) >= 19, by['group:checkout']
agg = rows[-1]
assert agg['Name'] == 'Aggregated' and int(agg['Request Count']) == 3 * iters == run['totals']['requests'], agg
PY

# failures.csv: the extract errors, one row, nothing for the series.
curl -sf "$R/failures.csv" -o "$WORK/failures.csv"
check "failures.csv: exactly one row: GET,list,extract,$ITERS" \
    [ "$(tail -n +2 "$WORK/failures.csv" | tr -d '\r')" = "GET,list,extract,$ITERS" ]

# report.html: the series' rows in the Endpoints table with their counts, the error in the
# Errors table, and each threshold's result.
curl -sf "$R/report.html" -o "$WORK/report.html"
check "report.html: the series and error rows with their counts; each threshold's result" \
    "$PY" - "$WORK/report.html" "$ITERS" <<'PY'
import sys
from html.parser import HTMLParser
class Tables(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tables, self.heading, self.h2, self.cell = {}, None, False, None
    def handle_starttag(self, tag, attrs):
        if tag == 'h2': self.h2, self.heading = True, ''
        elif tag == 'tr' and self.heading is not None: self.tables.setdefault(self.heading, []).append([])
        elif tag in ('td', 'th'): self.cell = ''
    def handle_endtag(self, tag):
        if tag == 'h2': self.h2 = False
        elif tag in ('td', 'th') and self.cell is not None:
            self.tables[self.heading][-1].append(self.cell.strip()); self.cell = None
    def handle_data(self, d):
        if self.h2: self.heading += d
        elif self.cell is not None: self.cell += d
p = Tables()
p.feed(open(sys.argv[1], encoding='utf-8').read())
n = sys.argv[2]
ep = {r[1]: r for r in p.tables['Endpoints'][1:]}
assert ep['iteration:buyer'][0] == 'ITERATION' and ep['iteration:buyer'][2] == n, ep.get('iteration:buyer')
assert ep['group:checkout'][0] == 'GROUP' and ep['group:checkout'][2] == n, ep.get('group:checkout')
assert ep['list'][2:4] == [n, n], ep['list']
assert ep['Aggregated'][2:4] == [str(3 * int(n)), n], ep['Aggregated']  # requests only
errors = p.tables['Errors'][1:]
assert [r[:3] for r in errors] == [['list', 'extract', n]], errors
th = {(r[0], r[2]): r[4] for r in p.tables['Thresholds'][1:]}
assert th == {('iteration_duration', 'p(95)<10000'): 'pass', ('iteration_duration', 'max<1'): 'fail',
              ('group_duration', 'min>=19'): 'pass'}, th
PY

# JUnit: one test case per threshold; the failing one (max<1: every iteration thinks 20 ms)
# carries a <failure>, the others none.
curl -sf "$R/report.junit.xml" -o "$WORK/junit.xml"
check "junit: the iteration and group thresholds as test cases with their verdicts" \
    "$PY" - "$WORK/junit.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
suite = ET.parse(sys.argv[1]).getroot().find('testsuite')
cases = {c.get('name'): c for c in suite.iter('testcase')}
assert sorted(cases) == ['group_duration{endpoint=group:checkout} min>=19',
                         'iteration_duration p(95)<10000',
                         'iteration_duration{endpoint=iteration:buyer} max<1'], sorted(cases)
failing = cases['iteration_duration{endpoint=iteration:buyer} max<1'].find('failure')
assert failing is not None and 'failed: observed' in failing.get('message'), failing
assert float(failing.text.split()[-1]) >= 20, failing.text
for name in ('iteration_duration p(95)<10000', 'group_duration{endpoint=group:checkout} min>=19'):
    assert len(list(cases[name])) == 0, (name, list(cases[name]))
assert (suite.get('tests'), suite.get('failures'), suite.get('skipped')) == ('3', '1', '0'), suite.attrib
PY
check "the run view agrees: one of three thresholds failed" \
    jq -e '[.thresholds[] | .passed] | sort == [false, true, true]' "$WORK/run.json"

finish
