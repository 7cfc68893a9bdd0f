#!/usr/bin/env bash
# test_leader_watch.sh — followers watch their leader's raft port
# (master/cluster/leader_watch.h). With a 5 s election timeout an election
# cannot start before 5 s after a leader's last heartbeat; with the watch a
# kill -9 of the leader is seen at once, so a new leader must be there well
# before that, and the worker must be back with it. Hostile watches on the
# raft port: answered only as the protocol says, bounded, closed when they
# talk, and they change no leader.
source "$LC_SRC/tests/integration/lib.sh"

start_target
start_cluster 3 --election-timeout-ms 5000
join_workers 1 --log-level warn
first=$(leader_id)
API=$(api_of "$first")
check "the worker joined" wait_until 20 workers_connected 1
term=$(curl -sf "$API/api/v1/cluster" | jq .term)
follower=$(awk -v l="$first" '$1 != l { print $1; exit }' "$NODES_CONF")
raft_port=$(awk -v k="$follower" '$1 == k { split($2, a, ":"); print a[2] }' "$NODES_CONF")

# watches.py PORT N MODE: opens N watches on 127.0.0.1:PORT and prints how
# many were answered; MODE talk: one sends a byte after the answer and
# prints whether it was closed within 2 s.
cat >"$WORK/watches.py" <<'PY'
import socket, struct, sys, time
port, n, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
PROTO = 0x686374617763
addr = b"127.0.0.1:1\0".ljust(16, b"\0")
def watch():
    s = socket.create_connection(("127.0.0.1", port), timeout=2)
    s.sendall(struct.pack("<QQQ", PROTO, 99, len(addr)) + addr)
    got = b""
    try:
        while len(got) < 8:
            b = s.recv(8 - len(got))
            if not b:
                break
            got += b
    except socket.timeout:
        pass
    return s, got == struct.pack("<Q", PROTO)
if mode == "talk":
    s, ok = watch()
    s.sendall(b"x")
    s.settimeout(2)
    try:
        closed = s.recv(1) == b""
    except (socket.timeout, ConnectionResetError):
        closed = False
    print("answered" if ok else "unanswered", "closed" if closed else "open")
    sys.exit(0)
held = [watch() for _ in range(n)]
print(sum(1 for _, ok in held if ok))
time.sleep(0.5)
PY
check "a watch is answered, and closed once it sends a byte" \
    [ "$(python3 "$WORK/watches.py" "$raft_port" 1 talk)" = "answered closed" ]
answered=$(python3 "$WORK/watches.py" "$raft_port" 20 hold)
log "20 watches on master $follower: $answered answered"
check "at most 16 watches are held at once" [ "$answered" = 16 ]
same_leader() { [ "$(curl -sf "$API/api/v1/cluster" | jq .term)" = "$term" ] && [ "$(leader_id)" = "$first" ]; }
check "hostile watches changed no leader" same_leader

killed_at=$(date +%s.%N)
stop_proc "$(eval echo "\$PID_master_$first")" KILL
await_new_leader "$first" 120 "$killed_at"
log "new leader master ${new_leader:-none} after ${elected_in}s (election timeout 5 s)"
check "a new leader within 3 s, before any election timeout could pass" within 3.0
check "a follower saw the leader's process go" \
    grep -q "leader's process is gone" "$WORK/master-$follower.log"
API=$(api_of "${new_leader:-1}")
check "the worker is back with the new leader within 3 s" wait_until 3 workers_connected 1
finish
