#!/usr/bin/env bash
# A worker fed a garbage, an oversize or a malformed frame by a fake master
# logs why it closed the connection and reconnects.
source "$(dirname "$0")/lib.sh"

for mode in garbage oversize badvarint; do
    start "fake-$mode" timeout 60 "$LC_BIN/lc_fake_master" --port-file "$WORK/$mode.port" \
        --connections 2 --timeout 40 --mode "$mode"
    wait_until 10 test -s "$WORK/$mode.port"
    start "worker-$mode" timeout 60 "$LC_BIN/loadworker" --join "127.0.0.1:$(cat "$WORK/$mode.port")" \
        --threads 1 --data-dir "$WORK/worker-$mode-data"
    check "$mode: worker reconnected" wait_until 30 grep -q "connection 2" "$WORK/fake-$mode.log"
    check "$mode: worker logged why it closed the connection" \
        grep -q 'closing master connection.*reason=' "$WORK/worker-$mode.log"
    check "$mode: worker is still running" kill -0 "$(pgrep -P "$(eval echo "\$PID_worker_$mode")" | head -1)"
done
finish
