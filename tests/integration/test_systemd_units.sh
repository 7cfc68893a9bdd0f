#!/usr/bin/env bash
# The systemd units in deploy/systemd, offline (systemd need not be PID 1):
# `systemd-analyze verify` on the real unit files in a scratch root that holds
# the binaries of $LC_BIN at /usr/bin, with no warning about our units; every
# flag the units and the example environment files use is in the binary's
# --help; the keys the daemons rely on and the hardening are all there; the
# exposure score stays low; the example nodes.conf parses.
source "$(dirname "$0")/lib.sh"

UNITS_DIR=$LC_SRC/deploy/systemd
CONFIG_DIR=$LC_SRC/deploy/config
UNITS=(loadmaster.service loadworker.service loadworker@.service)

if ! command -v systemd-analyze >/dev/null; then
    echo "SKIP: systemd-analyze is not installed"
    finish
    exit 0
fi

# binary_of UNIT: the daemon a unit runs.
binary_of() { case $1 in loadmaster*) echo loadmaster ;; *) echo loadworker ;; esac; }
# unit_key UNIT KEY: every value of KEY= in UNIT, one a line.
unit_key() { sed -n "s/^$2=//p" "$UNITS_DIR/$1"; }

# ---- systemd-analyze verify, on the unit files as they are ----
# --root makes systemd look for the units, the targets they name and the
# ExecStart/ExecReload binaries inside ROOT; the host's own units provide
# the targets (network-online.target, multi-user.target, …).
ROOT=$WORK/root
mkdir -p "$ROOT/usr/bin" "$ROOT/bin" "$ROOT/etc" "$ROOT/usr/lib/systemd/system"
cp -a /lib/systemd/system/. "$ROOT/usr/lib/systemd/system/"
cp "$LC_BIN/loadmaster" "$LC_BIN/loadworker" "$ROOT/usr/bin/"
cp "$(type -P kill)" "$ROOT/bin/kill"
for u in "${UNITS[@]}"; do cp "$UNITS_DIR/$u" "$ROOT/usr/lib/systemd/system/"; done

verify_clean() { # verify_clean UNIT…: exit 0 and not one line about our units
    local rc=0
    systemd-analyze verify --root="$ROOT" "$@" >"$WORK/verify.out" 2>&1 || rc=$?
    if [ $rc -ne 0 ] || grep -E 'loadmaster|loadworker' "$WORK/verify.out" >&2; then
        cat "$WORK/verify.out" >&2
        return 1
    fi
}
check "systemd-analyze verify: loadmaster.service" verify_clean loadmaster.service
check "systemd-analyze verify: loadworker.service" verify_clean loadworker.service
check "systemd-analyze verify: loadworker@1.service and loadworker@a.service" \
    verify_clean loadworker@1.service loadworker@a.service

# The check above must be able to fail: a unit whose binary is missing does.
rm "$ROOT/usr/bin/loadworker"
check "verify notices a missing ExecStart binary" bash -c '! systemd-analyze verify --root="$1" loadworker.service >/dev/null 2>&1' _ "$ROOT"
cp "$LC_BIN/loadworker" "$ROOT/usr/bin/"

# ---- the daemons' flags ----
# Flags named in ExecStart and in the example environment files' assignments
# (commented out or not), each looked up in the --help of the binary that
# receives it.
flags_in() { grep -oE '(^|[ ="])--[a-z][a-z0-9-]*' "$@" | sed -E 's/^.*(--)/--/' | sort -u; }
assignments() { grep -hE '^#?[A-Z][A-Z_]*=' "$@"; }
help_has() { # help_has BINARY FLAG
    # grep reads it all (not -q): a help over 4 KiB is written in two parts, and a grep that
    # quits at the first match would leave the second to a SIGPIPE that fails the pipeline.
    "$LC_BIN/$1" --help 2>&1 | grep -E "(^|[^a-z0-9-])$2([^a-z0-9-]|$)" >/dev/null
}
for u in "${UNITS[@]}"; do
    bin=$(binary_of "$u")
    for f in $(grep -E '^Exec(Start|Reload)=' "$UNITS_DIR/$u" | flags_in /dev/stdin); do
        check "$u: $bin --help lists $f" help_has "$bin" "$f"
    done
done
for f in $(assignments "$CONFIG_DIR/loadmaster.default" | flags_in /dev/stdin); do
    check "loadmaster.default: loadmaster --help lists $f" help_has loadmaster "$f"
done
for f in $(assignments "$CONFIG_DIR/loadworker.default" "$CONFIG_DIR/loadworker-instance.default" |
        flags_in /dev/stdin); do
    check "loadworker*.default: loadworker --help lists $f" help_has loadworker "$f"
done

# ---- ExecStart's variables ----
# "${VAR}" is one argument even when empty, and an empty --join argument is
# an error: each variable ExecStart uses needs a default (Environment=) the
# EnvironmentFile may override, and the example files set only those.
for u in "${UNITS[@]}"; do
    for v in $(unit_key "$u" ExecStart | grep -oE '\$\{?[A-Z_]+' | tr -d '${' | sort -u); do
        check "$u: ExecStart's \$$v has a default" grep -qE "^Environment=$v=" "$UNITS_DIR/$u"
    done
done
example_ok() { # example_ok FILE UNIT…: each (commented) assignment parses, names a variable of the units
    local file=$1 line var; shift
    while IFS= read -r line; do
        line=${line#\#}
        var=${line%%=*}
        # grep the files themselves: `cat | grep -q` fails under pipefail when
        # grep exits at the first match and cat gets SIGPIPE.
        if ! grep -qE "\\\$\\{?$var\\b" "${@/#/$UNITS_DIR/}"; then
            log "$file: $var is not used by $*"; return 1
        fi
        if ! env -i sh -c "$line" 2>/dev/null; then log "$file: bad quoting: $line"; return 1; fi
    done < <(grep -E '^#?[A-Z][A-Z_]*=' "$CONFIG_DIR/$file")
}
check "loadmaster.default: every assignment is a variable of the unit, quoted right" \
    example_ok loadmaster.default loadmaster.service
check "loadworker.default: likewise" example_ok loadworker.default loadworker.service loadworker@.service
check "loadworker-instance.default: likewise" example_ok loadworker-instance.default loadworker@.service

# ---- what every unit must say ----
has_line() { grep -qxF "$2" "$UNITS_DIR/$1"; }
REQUIRED=(
    Type=notify NotifyAccess=main Restart=on-failure User=loadcluster KillSignal=SIGTERM
    LimitNOFILE=1048576
    NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes PrivateTmp=yes PrivateDevices=yes
    ProtectKernelTunables=yes ProtectKernelModules=yes ProtectControlGroups=yes
    "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX" RestrictNamespaces=yes
    LockPersonality=yes MemoryDenyWriteExecute=yes RestrictRealtime=yes
    SystemCallArchitectures=native CapabilityBoundingSet=
)
for u in "${UNITS[@]}"; do
    missing=()
    for line in "${REQUIRED[@]}"; do has_line "$u" "$line" || missing+=("$line"); done
    check "$u: has ${#REQUIRED[@]} required settings (missing: ${missing[*]:-none})" \
        test ${#missing[@]} -eq 0
    check "$u: a StateDirectory below loadcluster/" bash -c "grep -qE '^StateDirectory=loadcluster/' '$UNITS_DIR/$u'"
    check "$u: ExecStart keeps its data in that StateDirectory" \
        bash -c "dir=\$(sed -n 's/^StateDirectory=//p' '$UNITS_DIR/$u'); grep -qE \"^ExecStart=.*--data-dir %S/\$dir( |/)\" '$UNITS_DIR/$u'"
    check "$u: reload sends SIGHUP (the daemons reopen --log-file)" \
        has_line "$u" 'ExecReload=/bin/kill -HUP $MAINPID'
    check "$u: reads /etc/default/$(binary_of "$u") (optional)" \
        has_line "$u" "EnvironmentFile=-/etc/default/$(binary_of "$u")"
    stop=$(unit_key "$u" TimeoutStopSec)
    case $stop in *min) secs=$((${stop%min} * 60)) ;; *s) secs=${stop%s} ;; *) secs=$stop ;; esac
    check "$u: TimeoutStopSec ($stop) exceeds the worker's 10 s stop and flush" test "${secs:-0}" -gt 10
    # --threshold counts in tenths: 20 = an exposure level of 2.0 ("OK" ends at 3.9).
    security=$(systemd-analyze security --offline=true --root="$ROOT" --threshold=20 \
        "${u/@.service/@1.service}" 2>&1) && rc=0 || rc=$?
    log "$(grep 'Overall exposure' <<<"$security")"
    check "$u: exposure (systemd-analyze security) at most 2.0" test $rc -eq 0
done
check "loadworker@.service: each instance has its own state and its own options" bash -c "
    grep -qx 'StateDirectory=loadcluster/worker-%i' '$UNITS_DIR/loadworker@.service' &&
    grep -qx 'EnvironmentFile=-/etc/default/loadworker-%i' '$UNITS_DIR/loadworker@.service' &&
    grep -qE '^ExecStart=.*--name %H-%i' '$UNITS_DIR/loadworker@.service'"
# The master's admin token file must be writable where the master creates it.
check "loadmaster.service: the default admin token file is in its StateDirectory" \
    has_line loadmaster.service "Environment=LOADMASTER_ADMIN_TOKEN_FILE=%S/loadcluster/master/admin.token"

# ---- the example nodes.conf ----
# An --id it does not list stops loadmaster right after parsing, naming the ids it read.
nodes_conf_parses() {
    local out rc=0
    out=$("$LC_BIN/loadmaster" --cluster "$CONFIG_DIR/nodes.conf.example" --id 99 \
        --data-dir "$WORK/nodes-conf-data" 2>&1) || rc=$?
    if [ $rc -ne 2 ] || ! grep -q 'it lists 1 2 3' <<<"$out"; then echo "$out" >&2; return 1; fi
}
check "nodes.conf.example parses (ids 1 2 3)" nodes_conf_parses
check "sysusers file declares the loadcluster user" \
    grep -qE '^u loadcluster -' "$UNITS_DIR/loadcluster.sysusers"

finish
