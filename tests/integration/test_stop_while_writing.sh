#!/usr/bin/env bash
# A master stopped (SIGTERM) while API writes pour in closes cleanly: exit
# status 0, no crash, and every write it answered 2xx is there after a restart.
# raft 0.15 crashes in raft_close when a leader has two log writes in flight
# (canonical/raft#338); quorum_close waits for them first. On tmpfs, where
# raft_uv writes through its thread pool, 0.15 also fires its close callback
# twice (a double free without quorum's guard), so the data directory lives on
# /dev/shm when that is a tmpfs. Rounds are bounded.
source "$(dirname "$0")/lib.sh"

DATA="$WORK/data"
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
    DATA=$(mktemp -d /dev/shm/lc-stop-while-writing.XXXXXX)
    SCRATCH_DIRS+=("$DATA")
fi
log "data directory: $DATA"

ROUNDS=${ROUNDS:-8}
WRITERS=48

# writes ROUND: batches of WRITERS tenants created at once, in the background,
# until the master is gone (at most BATCHES); each answer's code goes to
# $WORK/codes.ROUND as "NAME CODE".
BATCHES=40
writes() {
    local r=$1
    (
        for b in $(seq 1 $BATCHES); do
            args=()
            for i in $(seq 1 $WRITERS); do
                args+=(--next -s -o /dev/null -w "t${r}_${b}_$i %{http_code}\n" --max-time 10
                       -H "Authorization: Bearer $ADMIN_TOKEN" -X POST
                       --data "{\"name\":\"t${r}_${b}_$i\"}" "$API/api/v1/tenants")
            done
            curl --parallel --parallel-max $WRITERS "${args[@]}" 2>/dev/null || true
            http_ok "$API/healthz" || break
        done
    ) >"$WORK/codes.$r" &
    WRITES_PID=$!
}

# Each round uses the same data directory: a restart reads what was written.
for r in $(seq 1 "$ROUNDS"); do
    start_master "master$r" --data-dir "$DATA"
    writes "$r"
    sleep "0.$((RANDOM % 6 + 3))"
    pid=$(pgrep -P "$(eval echo "\$PID_master$r")" loadmaster)
    kill -TERM "$pid"
    status=0
    wait "$(eval echo "\$PID_master$r")" || status=$?
    wait "$WRITES_PID" 2>/dev/null || true
    check "round $r: the master exits 0 when stopped amid $WRITERS writes (status $status)" \
        [ "$status" = 0 ]
    check "round $r: no crash in its log" \
        sh -c "! grep -E 'SEGV|Sanitizer|Assertion|core dumped|double free|corruption|free\\(\\)' '$WORK/master$r.log'"
done

start_master final --data-dir "$DATA"
cat "$WORK"/codes.* | awk '$2 ~ /^2/ {print $1}' | sort >"$WORK/answered"
curl -sf "$API/api/v1/tenants" | jq -r '.tenants[].name' | sort >"$WORK/kept"
log "$(wc -l <"$WORK/answered") writes answered 2xx over $ROUNDS rounds"
check "some writes were answered before each stop" test -s "$WORK/answered"
check "every tenant answered 2xx is still there after the restarts" \
    test -z "$(comm -23 "$WORK/answered" "$WORK/kept")"
cat "$WORK"/codes.* | awk "{print \$2}" | sort | uniq -c >&2
finish
