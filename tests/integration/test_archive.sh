#!/usr/bin/env bash
# Archived history on a 3-master quorum with a cluster secret (issue 13: history out of the
# Raft snapshot). Once a finished run's acks are dropped its seconds leave the replicated
# database for <data-dir>/archive/run-N.db on every master: history.csv and /history read
# byte for byte as before on every master, and state.db holds none of its rows. A master
# whose data dir is wiped restores a snapshot without them and fetches the file over the
# Raft port: the leader's copy has been tampered with (one count changed), so the copy is
# refused with what is wrong and the next peer's is taken. An outsider without the secret
# asking for an archive gets nothing. All three restarted give the same answers.
source "$(dirname "$0")/lib.sh"

start_target
head -c 48 /dev/urandom | base64 >"$WORK/secret"
start_cluster 3 --cluster-secret-file "$WORK/secret" --acks-keep 4s --snapshot-threshold 32 \
    --snapshot-trailing 8
join_workers 1
LEADER=$(leader_id)
API=$(api_of "$LEADER")
cat >"$WORK/run.json" <<JSON
{"name": "archived", "target": "http://127.0.0.1:$TARGET_PORT", "duration": "6s", "users": 4,
 "think_time_ms": 20, "tasks": [{"name": "a", "path": "/a"}, {"name": "b", "path": "/b"}]}
JSON
RUN=$(submit_run "$WORK/run.json")
check "run created" [ "${RUN:-0}" -gt 0 ]
check "run finishes" wait_until 60 run_state_is "$RUN" finished

# answers K TAG: what master K says of the run now, kept as files TAG-K.*.
answers() {
    local api; api=$(api_of "$1")
    curl -sf --max-time 10 "$api/api/v1/runs/$RUN/history.csv" >"$WORK/$2-$1.csv" &&
        curl -sf --max-time 10 "$api/api/v1/runs/$RUN/history?endpoint=a" >"$WORK/$2-$1.json" &&
        curl -sf --max-time 10 "$api/api/v1/runs/$RUN" | jq -c .totals >"$WORK/$2-$1.totals"
}
# same_as K TAG: master K answers as TAG-1 (the first master's answers at TAG).
same_as() {
    answers "$1" now || return 1
    local what
    for what in csv json totals; do
        cmp -s "$WORK/now-$1.$what" "$WORK/$2-1.$what" && continue
        log "master $1's $what differs from $2's: $(diff "$WORK/now-$1.$what" "$WORK/$2-1.$what" | head -c 600)"
        return 1
    done
}
all_masters() { for k in 1 2 3; do "$@" "$k" || return 1; done; }

# Before the acks are dropped (4 s after the end), the seconds are still in the database.
# The last batches may commit just after the run's end: wait until two looks agree.
settled() {
    answers 1 prev && sleep 1 && answers 1 before && cmp -s "$WORK/prev-1.csv" "$WORK/before-1.csv" &&
        cmp -s "$WORK/prev-1.json" "$WORK/before-1.json" && cmp -s "$WORK/prev-1.totals" "$WORK/before-1.totals"
}
check "answers taken before archiving, once settled" wait_until 3 settled
check "... with per-second rows" [ "$(wc -l <"$WORK/before-1.csv")" -gt 4 ]
rows_in_db() { # rows_in_db K: run's rows in master K's state.db
    python3 - "$WORK/master-$1-data/state.db" "$RUN" <<'PY'
import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
print(sum(db.execute("SELECT COUNT(*) FROM %s WHERE run = ?" % t, (int(sys.argv[2]),)).fetchone()[0]
          for t in ("run_seconds", "run_second_totals")))
PY
}
archived_on() { [ -f "$WORK/master-$1-data/archive/run-$RUN.db" ] && [ "$(rows_in_db "$1")" = 0 ]; }
check "archived on every master: its file written, its rows gone from state.db" \
    wait_until 30 all_masters archived_on
same_as_before() { same_as "$1" before; }
check "every master answers byte for byte as before archiving" all_masters same_as_before

# The wiped master: every other master has the file; the leader's copy is tampered with.
VICTIM=$(awk -v l="$LEADER" '$1 != l { print $1; exit }' "$NODES_CONF")
GOOD=$(awk -v l="$LEADER" -v v="$VICTIM" '$1 != l && $1 != v { print $1 }' "$NODES_CONF")
stop_proc "$(eval echo "\$PID_master_$VICTIM")"
rm -rf "$WORK/master-$VICTIM-data"
ARCHIVE=$WORK/master-$LEADER-data/archive/run-$RUN.db
cp "$ARCHIVE" "$WORK/leader-archive.db"
cp "$ARCHIVE" "$WORK/tampered.db"
python3 - "$WORK/tampered.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE run_seconds SET count = count + 1 WHERE rowid ="
           " (SELECT MIN(rowid) FROM run_seconds WHERE method = 'GET')")
db.commit()
PY
mv "$WORK/tampered.db" "$ARCHIVE" # renamed into place, as the archiver replaces files
# Entries past the snapshot threshold, so the leader's log no longer starts before the run:
# the wiped master gets a snapshot (without the run's rows), not the whole log.
for n in $(seq 1 48); do
    curl -sf -o /dev/null -X POST --data "{\"name\":\"t$n\"}" "$API/api/v1/tenants" || true
done
check "the leader took a snapshot since" grep -q 'snapshot taken' "$WORK/master-$LEADER.log"
start_cluster_node "$VICTIM"
check "the wiped master is back" wait_until 20 api_authorized "$(api_of "$VICTIM")"
VLOG=$WORK/master-$VICTIM.log
check "it restored a snapshot" wait_until 20 grep -q 'snapshot restored' "$VLOG"
check "it refused the leader's tampered copy, saying why" \
    wait_until 30 grep -q 'verify failed.*requests per endpoint do not add up' "$VLOG"
check "it fetched a good copy from the other master" wait_until 60 archived_on "$VICTIM"
check "... and answers as every master did before" same_as "$VICTIM" before
check "its run-wide counters survived the wipe" cmp -s "$WORK/now-$VICTIM.totals" "$WORK/before-1.totals"
archives_of() { curl -sf --max-time 5 "$(api_of "$1")/api/v1/cluster" | jq -c .archives; }
log "archives on the wiped master: $(archives_of "$VICTIM"); on the leader: $(archives_of "$LEADER")"
check "/api/v1/cluster counts the refused copy and the fetched one" \
    jq -e '.refused >= 1 and .fetched == 1 and .exported == 0' <<<"$(archives_of "$VICTIM")"
check "... and on the leader the export and the rows it deleted" \
    jq -e '.exported == 1 and .rows_pruned >= 10' <<<"$(archives_of "$LEADER")"

# An outsider that does not know the secret asks for the archive on the archive protocol.
cp "$WORK/leader-archive.db" "$ARCHIVE"
RAFT_PORT=$(awk -v k="$GOOD" '$1 == k { split($2, a, ":"); print a[2] }' "$NODES_CONF")
outsider() {
    python3 - "$RAFT_PORT" "$RUN" <<'PY'
import os, socket, struct, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
got = b""
try:
    got += s.recv(32)                     # the acceptor's nonce
    s.sendall(os.urandom(64))             # a made-up answer to the challenge
    addr = b"127.0.0.1:1\0".ljust(16, b"\0")
    s.sendall(struct.pack("<QQQ", 0x7663726174736c, 9, len(addr)) + addr)
    s.sendall(b"lcarch01" + struct.pack("<Q", int(sys.argv[2])))
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        got += chunk
except (ConnectionResetError, BrokenPipeError, socket.timeout):
    pass
print(len(got))
PY
}
OUTSIDER_GOT=$(outsider)
log "the outsider got $OUTSIDER_GOT bytes from master $GOOD's raft port $RAFT_PORT"
check "an outsider gets nothing but the challenge's nonce" [ "$OUTSIDER_GOT" = 32 ]

for k in 1 2 3; do stop_proc "$(eval echo "\$PID_master_$k")"; done
for k in 1 2 3; do start_cluster_node "$k"; done
check "all restarted" wait_until 20 leader_known
wait_for_all() { wait_until 20 api_authorized "$(api_of "$1")"; }
check "every master answers" all_masters wait_for_all
check "after the restart every master answers as before (once it replayed its log)" \
    wait_until 20 all_masters same_as_before
finish
