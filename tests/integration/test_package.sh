#!/usr/bin/env bash
# The Debian package: a Release build installed under /usr and packed by CPack
# (what `make -f Makefile.ci package` does) into a scratch directory. Checks its
# files, control data and dependencies, runs the extracted binaries, verifies
# the packaged units, and runs the maintainer scripts for real against a copy
# of /etc in a private mount namespace (when unshare is allowed).
# The build is cached in $LC_BIN/package-build, so a second run only relinks;
# under a sanitizer build (build-asan) the test is skipped: the package comes
# from the plain tree, and one build of it is enough.
source "$(dirname "$0")/lib.sh"

skip() { echo "SKIP: $*"; exit 77; }
if grep -qE '^LC_SANITIZE:STRING=.+' "$LC_BIN/CMakeCache.txt" 2>/dev/null; then
    skip "sanitizer build ($LC_BIN): the package is built and tested from the plain build"
fi
for tool in cpack dpkg-deb dpkg-shlibdeps; do
    command -v "$tool" >/dev/null || skip "$tool is not installed"
done

VERSION=$(sed -n 's/^project(loadcluster VERSION \([0-9.]*\).*/\1/p' "$LC_SRC/CMakeLists.txt")
[ -n "$VERSION" ] || { log "no version in $LC_SRC/CMakeLists.txt"; exit 1; }
BUILD=$LC_BIN/package-build
OUT=$WORK/out

# ---- build and pack (about 20 s on 2 cores from scratch, a few when cached; bounded) ----
# A cached tree configured from another source directory is discarded.
if [ -f "$BUILD/CMakeCache.txt" ] &&
    ! grep -qxF "CMAKE_HOME_DIRECTORY:INTERNAL=$LC_SRC" "$BUILD/CMakeCache.txt"; then
    rm -rf "$BUILD"
fi
# The install step needs only the three installed binaries: without the
# dependency on `all`, cpack does not build the tests and tools as well.
build_package() {
    timeout 60 cmake -S "$LC_SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_INSTALL_PREFIX=/usr -DLC_SANITIZE= -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON \
        >"$WORK/configure.log" 2>&1 &&
    timeout 200 cmake --build "$BUILD" -j"$(nproc)" --target loadmaster loadworker loadctl \
        >"$WORK/build.log" 2>&1 &&
    (cd "$BUILD" && timeout 60 cpack -G DEB -B "$OUT") >"$WORK/cpack.log" 2>&1
}
started=$SECONDS
check "Release build under /usr and cpack -G DEB succeed" build_package
log "build and cpack took $((SECONDS - started)) s"
DEB=$(compgen -G "$OUT/loadcluster_*.deb" | head -n 1 || true)
check "one .deb named for the project version ($VERSION)" \
    test "$(basename "${DEB:-none}")" = "loadcluster_${VERSION}_$(dpkg --print-architecture).deb"
[ -n "$DEB" ] || { finish; exit 1; }
log "package: $DEB"

# ---- contents ----
dpkg-deb -c "$DEB" | awk '{ print $6 }' | sed 's|^\./|/|' >"$WORK/files"
in_package() { grep -qxF "$1" "$WORK/files"; }
for f in /usr/bin/loadmaster /usr/bin/loadworker /usr/bin/loadctl \
    /usr/lib/systemd/system/loadmaster.service /usr/lib/systemd/system/loadworker.service \
    /usr/lib/systemd/system/loadworker@.service /usr/lib/sysusers.d/loadcluster.conf \
    /etc/default/loadmaster /etc/default/loadworker /etc/loadcluster/ \
    /usr/share/doc/loadcluster/examples/nodes.conf.example \
    /usr/share/doc/loadcluster/examples/loadworker-instance.default; do
    check "package holds $f" in_package "$f"
done
check "no test tools or secrets in the package" \
    bash -c '! grep -qE "lc_target|lc_fake_master|test_|join\.secret|admin\.token|nodes\.conf$" "$1"' _ "$WORK/files"

ROOT=$WORK/root
dpkg-deb -x "$DEB" "$ROOT"
for b in loadmaster loadworker loadctl; do
    out=$("$ROOT/usr/bin/$b" --version 2>&1) || true
    check "extracted $b --version says $VERSION ($out)" grep -qF "$VERSION" <<<"$out"
done
for u in loadmaster.service loadworker.service loadworker@.service; do
    check "packaged $u is deploy/systemd/$u" \
        cmp -s "$ROOT/usr/lib/systemd/system/$u" "$LC_SRC/deploy/systemd/$u"
done
check "packaged /etc/default/loadmaster is the example, all commented out" bash -c \
    'cmp -s "$1/etc/default/loadmaster" "$2/deploy/config/loadmaster.default" &&
     ! grep -qvE "^(#|$)" "$1/etc/default/loadmaster"' _ "$ROOT" "$LC_SRC"

# ---- control data ----
dpkg-deb -f "$DEB" Package Version Maintainer Depends >"$WORK/control"
log "$(tr '\n' ' ' <"$WORK/control")"
check "Package: loadcluster, Version: $VERSION" bash -c \
    'grep -qx "Package: loadcluster" "$1" && grep -qx "Version: $2" "$1"' _ "$WORK/control" "$VERSION"
check "a Maintainer" grep -qE '^Maintainer: .+<.+>' "$WORK/control"
DEPENDS=$(sed -n 's/^Depends: //p' "$WORK/control")
# libraft's runtime package is libraft2 on Debian 12 (the soname, not "libraft0").
for lib in libuv1 libprotobuf-c1 libraft2 libssl3 libsqlite3-0 libjansson4 libsystemd0 libc6; do
    check "Depends names $lib" grep -qE "(^|, )$lib( |,|$)" <<<"$DEPENDS"
done
check "Depends names adduser | systemd (user creation)" grep -qF 'adduser | systemd' <<<"$DEPENDS"

CONTROL=$WORK/control.d
dpkg-deb -e "$DEB" "$CONTROL"
check "conffiles: the two /etc/default files" \
    test "$(sort "$CONTROL/conffiles" | tr '\n' ' ')" = "/etc/default/loadmaster /etc/default/loadworker "
for s in postinst prerm postrm; do
    check "$s is executable and parses (sh -n)" bash -c 'test -x "$1" && sh -n "$1"' _ "$CONTROL/$s"
done
check "no maintainer script enables or starts a service" \
    bash -c '! grep -hvE "^[[:space:]]*#" "$1"/postinst "$1"/prerm "$1"/postrm |
        grep -E "systemctl +(--[a-z-]+ +)*(enable|start|restart|reload)|deb-systemd-invoke +start"' _ "$CONTROL"

# ---- the packaged units, at their packaged paths ----
if command -v systemd-analyze >/dev/null; then
    mkdir -p "$ROOT/bin"
    cp -an /lib/systemd/system/. "$ROOT/usr/lib/systemd/system/"
    cp "$(type -P kill)" "$ROOT/bin/kill"
    verify_packaged() {
        systemd-analyze verify --root="$ROOT" loadmaster.service loadworker.service \
            loadworker@1.service >"$WORK/verify.out" 2>&1 &&
            ! grep -E 'loadmaster|loadworker' "$WORK/verify.out" >&2
    }
    check "systemd-analyze verify: packaged units with packaged binaries" verify_packaged
fi

# ---- the maintainer scripts, for real, on a copy of /etc ----
# In a private mount namespace the copy is bind-mounted over /etc (and the
# package's sysusers file over /usr/lib/sysusers.d), so users are created
# there and the host is left alone.
ns_run() { # ns_run SCRIPT: runs SCRIPT (sh) with the copies mounted
    unshare -m sh -c "mount --bind '$WORK/etc' /etc && mount --bind '$WORK/sysusers.d' /usr/lib/sysusers.d &&
        ${SYSUSERS_STUB:+mount --bind '$SYSUSERS_STUB' \"\$(command -v systemd-sysusers)\" &&} $1"
}
fresh_etc() {
    rm -rf "${WORK:?}/etc" "${WORK:?}/sysusers.d"
    cp -a /etc "$WORK/etc"
    cp -a /usr/lib/sysusers.d "$WORK/sysusers.d" 2>/dev/null || mkdir "$WORK/sysusers.d"
    cp "$ROOT/usr/lib/sysusers.d/loadcluster.conf" "$WORK/sysusers.d/"
    sed -i '/^loadcluster:/d' "$WORK/etc/passwd" "$WORK/etc/group" "$WORK/etc/shadow" \
        "$WORK/etc/gshadow" 2>/dev/null || true
}
user_line() { grep '^loadcluster:' "$WORK/etc/passwd"; }
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null && command -v systemd-sysusers >/dev/null; then
    host_users=$(grep -c '^loadcluster:' /etc/passwd || true)
    fresh_etc
    SYSUSERS_STUB=""
    check "postinst configure (systemd-sysusers) succeeds, twice" \
        ns_run "sh '$CONTROL/postinst' configure && sh '$CONTROL/postinst' configure"
    check "it made the system user from the sysusers file ($(user_line))" bash -c \
        'grep -qE "^loadcluster:x:[0-9]+:[0-9]+:loadcluster daemons:/var/lib/loadcluster:/usr/sbin/nologin$" "$1/etc/passwd" &&
         grep -q "^loadcluster:" "$1/etc/group"' _ "$WORK"
    check "a system uid (below 1000)" bash -c '[ "$(grep ^loadcluster: "$1" | cut -d: -f3)" -lt 1000 ]' _ "$WORK/etc/passwd"
    # Without systemd-sysusers (it fails here) adduser makes the user instead.
    if command -v adduser >/dev/null; then
        fresh_etc
        printf '#!/bin/sh\nexit 1\n' >"$WORK/sysusers-stub"
        chmod +x "$WORK/sysusers-stub"
        SYSUSERS_STUB=$WORK/sysusers-stub
        check "postinst configure (adduser fallback) succeeds" ns_run "sh '$CONTROL/postinst' configure"
        check "adduser made the system user ($(user_line))" bash -c \
            'grep -qE "^loadcluster:x:[0-9]+:[0-9]+:loadcluster daemons[,]*:/var/lib/loadcluster:" "$1/etc/passwd"' _ "$WORK"
        SYSUSERS_STUB=""
    fi
    # purge removes what `systemctl enable` made for our units, nothing else.
    mkdir -p "$WORK/etc/systemd/system/multi-user.target.wants"
    for u in loadmaster.service loadworker@2.service ssh-test.service; do
        ln -sf "/usr/lib/systemd/system/$u" "$WORK/etc/systemd/system/multi-user.target.wants/$u"
    done
    check "postrm purge succeeds" ns_run "sh '$CONTROL/postrm' purge"
    check "postrm purge removed the enablement of our units only" bash -c \
        'd=$1/etc/systemd/system/multi-user.target.wants
         ! [ -L $d/loadmaster.service ] && ! [ -L $d/loadworker@2.service ] && [ -L $d/ssh-test.service ]' _ "$WORK"
    check "the host's /etc/passwd is untouched" \
        test "$(grep -c '^loadcluster:' /etc/passwd || true)" = "$host_users"
else
    log "not root or no unshare: maintainer scripts only parsed, not run"
fi

finish
