#!/usr/bin/env bash
# test_http2.sh — loadworker --local over HTTP/2 against nginx (http2 on): h2c by prior
# knowledge and h2 over TLS counted exactly against nginx's access log (which logs the
# protocol: HTTP/2.0); GOAWAY every 50 requests (keepalive_requests 50) with the counts still
# exact and every request either served or counted as h2_refused; a journey's cookies,
# extracted header and redirect over h2; the shared pool of connections over h2c and TLS,
# exact, on 2 connections, and through GOAWAYs; a journey (cookies, extraction, a redirect, a
# Lua step) through the pool, each user's cookie and token its own; "http2": "auto" falling back to HTTP/1.1 with a
# server that has no h2 (TLS and plain), and "http2": true failing as tls against it.
source "$LC_SRC/tests/integration/lib.sh"

command -v nginx >/dev/null || { log "nginx is not installed (make -f Makefile.ci deps)"; exit 1; }
nginx -V 2>&1 | grep -q -- --with-http_v2_module || { log "nginx has no http_v2_module"; exit 1; }

make_ca ca
make_cert server ca "IP:127.0.0.1,DNS:localhost"

# server PORT LISTEN_FLAGS NAME [DIRECTIVES]: one server, its own access log NAME.access.
server() {
    cat <<CONF
    server {
        listen 127.0.0.1:$1 $2;
        access_log $WORK/$3.access proto;
        ${4:-}
        location / { default_type text/plain; return 200 "hello\n"; }
        location /login {
            add_header Set-Cookie "sid=s\$connection; Path=/";
            add_header X-Token "tok\$connection";
            default_type application/json;
            return 200 '{"token":"abc"}';
        }
        location /go { return 302 /me; }
        location /me { default_type text/plain; return 200 "me \$http_cookie\n"; }
        location /plogin {
            add_header Set-Cookie "psid=\$request_id; Path=/";
            default_type application/json;
            return 200 '{"token":"\$request_id"}';
        }
        location /pgo { return 302 /pme; }
        location /pme { default_type text/plain; return 200 "pme \$cookie_psid\n"; }
        location /xgo { return 302 \$scheme://localhost:\$server_port/xme; }
        location /xme { default_type text/plain; return 200 "xme\n"; }
    }
CONF
}

write_nginx_conf() {
    mkdir -p "$WORK/nginx"
    cat >"$WORK/nginx/nginx.conf" <<CONF
$(nginx_conf_head)
    keepalive_requests 1000000;
    log_format proto '\$server_protocol \$status \$connection \$connection_requests \$uri "\$http_cookie" "\$http_authorization"';
$(server "$H2C_PORT" http2 h2c)
$(server "$H2_PORT" "ssl http2" h2)
$(server "$H2C_GA_PORT" http2 h2c-goaway "keepalive_requests 50;")
$(server "$H2_GA_PORT" "ssl http2" h2-goaway "keepalive_requests 50;")
$(server "$H1S_PORT" ssl h1s)
$(server "$H1_PORT" "" h1)
}
CONF
}

# Ports are free when picked; another test may take one before nginx binds it: retry.
nginx_up=false
for attempt in 1 2 3; do
    H2C_PORT=$(free_port) H2_PORT=$(free_port) H2C_GA_PORT=$(free_port)
    H2_GA_PORT=$(free_port) H1S_PORT=$(free_port) H1_PORT=$(free_port)
    write_nginx_conf
    start nginx timeout 300 nginx -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx"
    if wait_until 10 curl -sf --max-time 2 "http://127.0.0.1:$H1_PORT/"; then
        nginx_up=true
        break
    fi
    log "nginx did not start (attempt $attempt)"
    stop_proc "$PID_nginx"
done
$nginx_up || { log "nginx did not start"; exit 1; }

# run NAME URL HTTP2 [BODY]: a 1 s run of 8 users over 2 engines; BODY the scenario's
# tasks or journeys member. Report in $WORK/NAME.json, exit status in RC.
run() {
    local body=${4:-'"tasks": [{"path": "/"}]'}
    cat >"$WORK/$1.scenario.json" <<JSON
{"name": "$1", "target": "$2", "duration": "1s", "users": 8, "spawn_rate": 1000,
 "http2": $3, "tls": {"ca_file": "ca.pem"}, $body}
JSON
    RC=0
    timeout 30 "$LC_BIN/loadworker" --local "$WORK/$1.scenario.json" --threads 2 --json \
        --tls-ca-dir "$WORK" >"$WORK/$1.json" 2>"$WORK/$1.log" || RC=$?
}
field() { jq -r "$2" "$WORK/$1.json"; }
errors_of() { jq --arg k "$2" '[.errors[] | select(.kind == $k) | .count] | add // 0' "$WORK/$1.json"; }
lines() { wc -l <"$WORK/$1.access"; }
# Lines of NAME.access whose protocol is not PROTO.
other_protocol() { awk -v p="$2" '$1 != p' "$WORK/$1.access" | wc -l; }

# expect_exact NAME LOG PROTO: no failures, many requests, each one in LOG, all over PROTO.
expect_exact() {
    local requests served
    requests=$(field "$1" .totals.requests)
    served=$(lines "$2")
    log "$1: exit $RC, requests $requests, served $served, errors $(jq -c .errors "$WORK/$1.json")"
    check "$1: exits 0" test "$RC" -eq 0
    check "$1: made requests ($requests)" test "$requests" -gt 200
    check "$1: no failures" test "$(field "$1" .totals.failures)" -eq 0
    check "$1: requests equal nginx's access log exactly ($requests = $served)" \
        test "$requests" -eq "$served"
    check "$1: every one over $3" test "$(other_protocol "$2" "$3")" -eq 0
}

# (1) h2c by prior knowledge, (2) h2 over TLS (ALPN h2 only).
run h2c "http://127.0.0.1:$H2C_PORT" true
expect_exact h2c h2c HTTP/2.0
run h2 "https://127.0.0.1:$H2_PORT" true
expect_exact h2 h2 HTTP/2.0
check "h2: TLS handshakes counted" test "$(field h2 .totals.tls_handshakes)" -ge 1

# (3) GOAWAY after every 50 requests of a connection, h2c and TLS: nothing is lost silently.
# What nginx did not process is h2_refused; everything else is in its log, exactly.
for name in h2c-goaway h2-goaway; do
    port=$H2C_GA_PORT url=http
    [ $name = h2-goaway ] && port=$H2_GA_PORT url=https
    run $name "$url://127.0.0.1:$port" true
    requests=$(field $name .totals.requests)
    refused=$(errors_of $name h2_refused)
    served=$(lines $name)
    conns=$(awk '{print $3}' "$WORK/$name.access" | sort -u | wc -l)
    most=$(awk '$4 > m {m = $4} END {print m + 0}' "$WORK/$name.access")
    log "$name: requests $requests, refused $refused, served $served, connections $conns, most per connection $most"
    check "$name: exits 0" test "$RC" -eq 0
    check "$name: many connections' worth of requests ($requests)" test "$requests" -gt 500
    check "$name: nginx closed each connection after 50 ($most, $conns connections)" \
        test "$most" -eq 50 -a "$conns" -ge $((served / 50))
    check "$name: no failure but refused ones" \
        test "$(field $name .totals.failures)" -eq "$refused"
    check "$name: served + refused = requests exactly ($served + $refused = $requests)" \
        test $((served + refused)) -eq "$requests"
    check "$name: every one over HTTP/2.0" test "$(other_protocol $name HTTP/2.0)" -eq 0
done

# (3b) The shared pool ("http2": {"mode": true, "pool": …}): the 8 users' streams on 2
# connections of 8 streams (one per engine), h2c and TLS, exact against the access log and over
# exactly 2 of nginx's connections; with a GOAWAY every 50 requests still served + refused =
# requests, reconnecting.
POOL='{"mode": true, "pool": {"connections": 2, "max_streams": 8}}'
for name in h2c h2 h2c-goaway h2-goaway; do
    case $name in
    h2c) url="http://127.0.0.1:$H2C_PORT" ;;
    h2) url="https://127.0.0.1:$H2_PORT" ;;
    h2c-goaway) url="http://127.0.0.1:$H2C_GA_PORT" ;;
    h2-goaway) url="https://127.0.0.1:$H2_GA_PORT" ;;
    esac
    : >"$WORK/$name.access"
    run "pool-$name" "$url" "$POOL"
    conns=$(awk '{print $3}' "$WORK/$name.access" | sort -u | wc -l)
    requests=$(field "pool-$name" .totals.requests)
    refused=$(errors_of "pool-$name" h2_refused)
    if [ "${name%-goaway}" = "$name" ]; then
        expect_exact "pool-$name" "$name" HTTP/2.0
        check "pool-$name: over exactly 2 connections ($conns)" test "$conns" -eq 2
    else
        log "pool-$name: requests $requests, refused $refused, served $(lines $name), connections $conns"
        check "pool-$name: exits 0 with many connections' worth ($requests)" \
            test "$RC" -eq 0 -a "$requests" -gt 500 -a "$conns" -gt 2
        check "pool-$name: no failure but refused ones" \
            test "$(field "pool-$name" .totals.failures)" -eq "$refused"
        check "pool-$name: served + refused = requests exactly ($(lines $name) + $refused = $requests)" \
            test $(($(lines $name) + refused)) -eq "$requests"
    fi
done

# (4) A journey over h2 (the users stop between steps at the end: up to one login each
# without its /me): a cookie set by one answer sent with the next request, a header
# extracted into another request's header, a redirect followed.
journey='"defaults": {"follow_redirects": 5, "cookies": true},
 "journeys": [{"name": "j", "steps": [
   {"name": "login", "path": "/login",
    "extract": {"tok": {"header": "x-token"}, "j": {"json": "$.token"}}},
   {"name": "go", "path": "/go", "headers": {"Authorization": "Bearer ${tok}-${j}"},
    "expect": {"status": [200], "body_contains": "me sid=s"}}]}]'
run journey "https://127.0.0.1:$H2_PORT" true "$journey"
me_ok=$(awk '$5 == "/me" && / "sid=s[0-9]+" "Bearer tok[0-9]+-abc"$/' "$WORK/h2.access" | wc -l)
me_all=$(awk '$5 == "/me"' "$WORK/h2.access" | wc -l)
logins=$(field journey '[.endpoints[] | select(.name == "login") | .requests] | add // 0')
log "journey: exit $RC, logins $logins, /me $me_all (with cookie and token: $me_ok), errors $(jq -c .errors "$WORK/journey.json")"
check "journey: exits 0, no failures" test "$RC" -eq 0 -a "$(field journey .totals.failures)" -eq 0
check "journey: iterations ran ($logins)" test "$logins" -gt 50
check "journey: each redirect reached /me with the cookie and the extracted token ($me_ok of $me_all)" \
    test "$me_all" -ge $((logins - 8)) -a "$me_ok" -eq "$me_all"

# (4b) The same kind of journey through a pool of 2 connections of 2 streams (h2c and TLS): the
# 8 users share them and wait their turn, yet each /pme carries the cookie its own user's login set, and
# the token extracted from that login's body (a unique $request_id each): an answer or a
# cookie given to the wrong user would pair them wrongly. A Lua step's request goes through
# the pool too, with the user's jar. A second origin (the same server as localhost) keeps a
# connection of the user's own, and a pool request's redirect to it goes there, as /xme.
cat >"$WORK/pme.lua" <<'LUA'
function pme(u)
  local r = http.get("/pme", {name = "lua-pme", headers = {Authorization = "Bearer " .. u.vars.tok}})
  check(r.status == 200 and r.body:find(u.vars.tok, 1, true) ~= nil, "pme shows my own cookie")
end
LUA
pjourney="\"script\": $(jq -Rs . <"$WORK/pme.lua"),"'
 "defaults": {"follow_redirects": 5, "cookies": true},
 "journeys": [{"name": "pj", "steps": [
   {"name": "plogin", "path": "/plogin", "extract": {"tok": {"json": "$.token"}}},
   {"name": "pgo", "path": "/pgo", "headers": {"Authorization": "Bearer ${tok}"},
    "expect": {"status": [200], "body_contains": "pme "}},
   {"lua": "pme", "endpoints": ["lua-pme"]},
   {"name": "bhello", "origin": "b", "path": "/"},
   {"name": "xgo", "path": "/xgo", "expect": {"status": [200], "body_contains": "xme"}}]}]'
for name in h2c h2; do
    case $name in
    h2c) url="http://127.0.0.1:$H2C_PORT" other="http://localhost:$H2C_PORT" ;;
    h2) url="https://127.0.0.1:$H2_PORT" other="https://localhost:$H2_PORT" ;;
    esac
    : >"$WORK/$name.access"
    run "pjourney-$name" "$url" '{"mode": true, "pool": {"connections": 2, "max_streams": 2}}' \
        "\"targets\": {\"b\": \"$other\"}, $pjourney"
    conns=$(awk '{print $3}' "$WORK/$name.access" | sort -u | wc -l)
    logins=$(field "pjourney-$name" '[.endpoints[] | select(.name == "plogin") | .requests] | add // 0')
    pme=$(awk '$5 == "/pme"' "$WORK/$name.access" | wc -l)
    # each /pme line: its cookie's psid and its Bearer token, which must be the same id
    wrong=$(awk '$5 == "/pme"' "$WORK/$name.access" |
        sed -E 's/.*"psid=([^"]*)" "Bearer ([^"]*)"$/\1 \2/' | awk 'NF != 2 || $1 != $2' | wc -l)
    expect_exact "pjourney-$name" "$name" HTTP/2.0
    log "pjourney-$name: logins $logins, /pme $pme, pairs that do not match: $wrong, connections $conns"
    xgo=$(awk '$5 == "/xgo"' "$WORK/$name.access" | wc -l)
    xme=$(awk '$5 == "/xme"' "$WORK/$name.access" | wc -l)
    log "pjourney-$name: /xgo $xgo, /xme $xme"
    pool_conns=$(awk '$5 == "/plogin" {print $3}' "$WORK/$name.access" | sort -u | wc -l)
    check "pjourney-$name: logins over the pool's 2 connections ($pool_conns), the other origin on the users' own ($conns in all)" \
        test "$pool_conns" -eq 2 -a "$conns" -gt 2
    check "pjourney-$name: each /xgo's redirect reached the other origin as /xme ($xme of $xgo)" \
        test "$xgo" -gt 50 -a "$xme" -ge $((xgo - 8)) -a "$xme" -le "$xgo"
    check "pjourney-$name: iterations ran ($logins)" test "$logins" -gt 50
    check "pjourney-$name: a redirect's and a Lua step's /pme per login ($pme for $logins)" \
        test "$pme" -ge $((2 * (logins - 8)))
    check "pjourney-$name: each /pme carries its own user's cookie and token ($wrong wrong)" \
        test "$wrong" -eq 0
done

# (5) "auto": h2 where the server offers it, HTTP/1.1 where it does not (TLS, and plain http,
# where auto always means HTTP/1.1).
: >"$WORK/h2.access"
run auto-h2 "https://127.0.0.1:$H2_PORT" '"auto"'
expect_exact auto-h2 h2 HTTP/2.0
run auto-h1s "https://127.0.0.1:$H1S_PORT" '"auto"'
expect_exact auto-h1s h1s HTTP/1.1
: >"$WORK/h1.access"
run auto-h1 "http://127.0.0.1:$H1_PORT" '"auto"'
expect_exact auto-h1 h1 HTTP/1.1

# (6) true against a TLS server without h2: every request fails as tls, none is served.
: >"$WORK/h1s.access"
run only-h2 "https://127.0.0.1:$H1S_PORT" true
requests=$(field only-h2 .totals.requests)
log "only-h2: requests $requests, tls $(errors_of only-h2 tls), served $(lines h1s)"
check "only-h2 against an HTTP/1.1 server: every request failed as tls" \
    test "$requests" -gt 0 -a "$(errors_of only-h2 tls)" -eq "$requests"
check "only-h2: nothing reached nginx" test "$(lines h1s)" -eq 0

# (7) A bad value is refused before anything runs, naming the field.
run bad "http://127.0.0.1:$H1_PORT" '"yes"'
check "\"http2\": \"yes\" is refused (exit $RC)" test "$RC" -ne 0
check "... naming the field" grep -q 'http2: expected false, true or \\"auto\\"\|http2: expected false, true or "auto"' "$WORK/bad.log"

finish
