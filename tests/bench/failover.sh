#!/usr/bin/env bash
# failover.sh — the failover figures: REPS (5) leader kills with the default
# election timeout and REPS with --election-timeout-ms 300; median and max of
# kill → new leader, → workers back, → stats flowing, → fresh stats (see
# failover_once.sh), and requests lost.
set -euo pipefail
REPS=${REPS:-5}
here=$(dirname "$0")
summary() { # label file
    for f in elect_s workers_s stats_s fresh_s lost; do
        sed -n "s/.*$f=\([0-9.]*\).*/\1/p" "$2" | sort -g |
            awk -v label="$1" -v f="$f" '{ a[NR] = $1 } END {
                if (NR == 0) { printf "%-14s %-10s no data\n", label, f; exit }
                m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
                printf "%-14s %-10s median=%s max=%s (n=%d)\n", label, f, m, a[NR], NR }'
    done
}
for timeout in default 300; do
    out=$(mktemp)
    for i in $(seq 1 "$REPS"); do
        if [ "$timeout" = default ]; then line=$(bash "$here/failover_once.sh" 2>/dev/null | tail -1)
        else line=$(ELECTION_MS=300 bash "$here/failover_once.sh" 2>/dev/null | tail -1); fi
        echo "[failover] election=$timeout rep $i: $line" >&2
        echo "$line" >>"$out"
    done
    summary "election=$timeout" "$out"
    rm -f "$out"
done
