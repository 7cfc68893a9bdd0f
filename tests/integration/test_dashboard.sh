#!/usr/bin/env bash
# The web dashboard (issue 7) in headless Chromium: the assets' headers, then
# tests/ui/dashboard.spec.mjs walks through every page against one master, one
# worker and lc_target (login, a live run whose charts grow, stop, the HTML
# report, an invalid scenario, workers, cluster, tenants, compare, a YAML journey run and
# its journeys table, a bad YAML's line marked). Exits 77
# (skipped) when node, npm's registry or Chromium is not available.
# Screenshot: $LC_BIN/ui-artifacts/run-page.png.
set -uo pipefail
: "${LC_BIN:?LC_BIN must point at the build directory}"
: "${LC_SRC:?LC_SRC must point at the source directory}"

SKIP=77
skip() { echo "SKIP: $*"; exit $SKIP; }
UI_SRC=$LC_SRC/tests/ui
UI_NODE=$LC_BIN/ui-node
ARTIFACTS=$LC_BIN/ui-artifacts
export CHROMIUM=${CHROMIUM:-/usr/bin/chromium}

command -v node >/dev/null || skip "node is not installed"
[ -x "$CHROMIUM" ] || skip "no Chromium at $CHROMIUM"

# playwright-core, once per build directory (again when the lock changes).
if ! cmp -s "$UI_SRC/package-lock.json" "$UI_NODE/package-lock.json" ||
   [ ! -f "$UI_NODE/node_modules/playwright-core/package.json" ]; then
    command -v npm >/dev/null || skip "npm is not installed"
    rm -rf "$UI_NODE" && mkdir -p "$UI_NODE"
    cp "$UI_SRC/package.json" "$UI_SRC/package-lock.json" "$UI_NODE/"
    timeout -k 5 45 npm ci --prefix "$UI_NODE" --no-audit --no-fund --ignore-scripts --prefer-offline \
        --fetch-retries=1 --fetch-retry-mintimeout=2000 --fetch-retry-maxtimeout=5000 \
        >"$UI_NODE/npm-ci.log" 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then
        rm -f "$UI_NODE/package-lock.json" # try again next time
        [ $rc -eq 124 ] || [ $rc -eq 137 ] && skip "npm ci did not finish in 45 s (registry unreachable?)"
        why=$(grep -m1 -E 'ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNREFUSED|ECONNRESET|network|proxy' "$UI_NODE/npm-ci.log")
        [ -n "$why" ] && skip "npm cannot reach its registry: $why"
        tail -n 20 "$UI_NODE/npm-ci.log" >&2
        echo "npm ci of tests/ui failed (not a network error)" >&2
        exit 1
    fi
fi
export UI_NODE_DIR=$UI_NODE
probe=$(timeout 40 node "$UI_SRC/dashboard.spec.mjs" --probe 2>&1)
rc=$?
[ $rc -eq $SKIP ] && skip "${probe#SKIP: }"
[ $rc -ne 0 ] && skip "Chromium probe failed (exit $rc): $(echo "$probe" | tail -n 1)"

source "$(dirname "$0")/lib.sh"

start_target --latency-ms 2
start_master master
start_worker ui-worker
check "the worker connects" wait_until 15 workers_connected 1

# The page and its assets need no token; the API still does.
hdr() { curl -q -s -o /dev/null -D - --max-time 5 "$@" | tr -d '\r'; }
check "GET / is the dashboard, without a token" \
    bash -c "curl -q -sf --max-time 5 '$API/' | grep -q '<title>loadcluster</title>'"
index_headers=$(hdr "$API/")
check "/ is text/html" grep -qi '^content-type: text/html' <<<"$index_headers"
check "/ has a strict Content-Security-Policy" \
    grep -qi "^content-security-policy: default-src 'self'" <<<"$index_headers"
check "/ allows no inline script or style" bash -c "! grep -qi unsafe-inline <<<\"\$1\"" _ "$index_headers"
check "/ has Cache-Control" grep -qi '^cache-control: no-cache' <<<"$index_headers"
check "app.js is JavaScript" grep -qi '^content-type: text/javascript' <<<"$(hdr "$API/ui/app.js")"
check "style.css is CSS" grep -qi '^content-type: text/css' <<<"$(hdr "$API/ui/style.css")"
check "an unknown asset is 404" grep -q '^HTTP/1.1 404' <<<"$(hdr "$API/ui/no-such-file.js")"
check "a path escaping /ui/ is 404" grep -q '^HTTP/1.1 404' <<<"$(hdr --path-as-is "$API/ui/../api/v1/runs")"
check "POST / is 405" grep -q '^HTTP/1.1 405' <<<"$(hdr -X POST "$API/")"
check "the API still needs a token" grep -q '^HTTP/1.1 401' <<<"$(hdr "$API/api/v1/runs")"

mkdir -p "$ARTIFACTS"
rm -f "$ARTIFACTS/run-page.png" "$ARTIFACTS/failure.png"
set +e
LC_API=$API LC_TOKEN=$ADMIN_TOKEN LC_TARGET="http://127.0.0.1:$TARGET_PORT" LC_WORKER=ui-worker \
LC_ARTIFACTS=$ARTIFACTS timeout 80 node "$UI_SRC/dashboard.spec.mjs" 2>&1 | tee "$WORK/ui.out"
ui_rc=${PIPESTATUS[0]}
set -e
[ $ui_rc -eq $SKIP ] && { log "$(grep -m1 '^SKIP' "$WORK/ui.out")"; exit $SKIP; }
check "the browser walk passed (exit $ui_rc)" [ "$ui_rc" = 0 ]
check "the run page screenshot was saved" test -s "$ARTIFACTS/run-page.png"
log "screenshot: $ARTIFACTS/run-page.png"
finish
