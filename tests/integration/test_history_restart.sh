#!/usr/bin/env bash
# test_history_restart.sh — a history made by lc_history_gen (2 runs x 0.05 h applied through the
# FSM, written as a Raft snapshot) is restored by loadmaster: the run list, each run's totals and
# its report.csv are what was generated, and the same again after a restart on the same data dir.
source "$LC_SRC/tests/integration/lib.sh"

MASTER_RAFT_PORT=$(free_port)
DATA=$WORK/master-data # start_master's data dir for the name "master"

GEN_LINE=$(timeout 60 "$LC_BIN/lc_history_gen" --data-dir "$DATA" --runs 2 --hours-per-run 0.05 \
    --endpoints 5 --raft-addr "127.0.0.1:$MASTER_RAFT_PORT" --id 1 2>"$WORK/gen.log" | tail -1)
log "$GEN_LINE"
gen_field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$GEN_LINE"; }
REQUESTS=$(gen_field requests)
generated() { [ "$(gen_field runs)" = 2 ] && [ "$(gen_field rows)" = 1800 ] && [ -n "$REQUESTS" ]; }
snapshot_only() {
    [ "$(ls "$DATA" | grep -c '^snapshot-1-[0-9]*-[0-9]*$')" = 1 ] && [ -f "$DATA/metadata1" ] &&
        [ "$(ls "$DATA" | grep -c -v -e '^snapshot-' -e '^metadata')" = 0 ]
}
check "lc_history_gen made 2 runs of 180 s x 5 endpoints" generated
check "the data dir holds raft's metadata and one snapshot, no log segment" snapshot_only

readyz_ok() { curl -sf --max-time 2 "$API/readyz" >/dev/null; }
runs_view() { curl -sf --max-time 5 "$API/api/v1/runs" | jq -S -c '[.runs[] | {id, state, requests, failures, verdict}]'; }
run_requests() { curl -sf --max-time 5 "$API/api/v1/runs/$1" | jq -r .totals.requests; }
report_requests() { curl -sf --max-time 5 "$API/api/v1/runs/$1/report.csv" | awk -F, '$2 == "Aggregated" { print $3 }'; }
# counts_agree ID N: the run's totals and its report.csv both count N requests.
counts_agree() { [ "$(run_requests "$1")" = "$2" ] && [ "$(report_requests "$1")" = "$2" ]; }
same_answers() { [ "$VIEW" = "$FIRST_VIEW" ] && [ "$REPORT" = "$FIRST_REPORT" ]; }

# check_history WHEN: the restored history is the generated one.
check_history() {
    local when=$1 view
    check "$when: the master restored the snapshot" grep -q 'msg="snapshot restored"' "$WORK/master.log"
    check "$when: /readyz answers 200" wait_until 15 readyz_ok
    view=$(runs_view)
    check "$when: two finished runs" [ "$(jq '[.[] | select(.state == "finished")] | length' <<<"$view")" = 2 ]
    check "$when: their requests add up to the generated $REQUESTS" \
        [ "$(jq '[.[].requests] | add' <<<"$view")" = "$REQUESTS" ]
    for id in 1 2; do
        local listed; listed=$(jq --argjson id "$id" '.[] | select(.id == $id) | .requests' <<<"$view")
        check "$when: run $id's totals and report.csv count its $listed requests" \
            counts_agree "$id" "$listed"
    done
    VIEW=$view
    REPORT=$(curl -sf --max-time 5 "$API/api/v1/runs/2/report.csv" | md5sum)
}

start_master master
check_history "first start"
FIRST_VIEW=$VIEW FIRST_REPORT=$REPORT
stop_proc "$PID_master"
start_master master
check_history "after a restart"
check "after a restart: the same runs and the same report.csv" same_answers
finish
