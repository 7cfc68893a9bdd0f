#!/usr/bin/env bash
# lc_target's app paths (tests/tools/target_app.h) driven by curl: login by JSON and by form,
# tokens and session cookies checked across loop threads, items, cart, pay, logout, redirect
# chains and method rules, echo, setcookie, hostile input (oversized and bad bodies, forged
# and swapped credentials, header injection), and /__stats counting every request by path.
source "$(dirname "$0")/lib.sh"

start_target --threads 2
B="http://127.0.0.1:$TARGET_PORT"
declare -A WANT # the requests each /__stats path must show
REJECTED=0      # requests refused before they had a path (413, 431)

# call KEY CURL_ARGS…: one request expected to count under KEY ("-": refused, counted in
# "rejected"); the status goes to $WORK/code, the body to $WORK/body, the head to $WORK/head.
call() {
    local key=$1; shift
    if [ "$key" = - ]; then REJECTED=$((REJECTED + 1)); else WANT[$key]=$((${WANT[$key]:-0} + 1)); fi
    curl -s --max-time 5 -o "$WORK/body" -D "$WORK/head" -w '%{http_code}' "$@" >"$WORK/code" || true
}
code_is() { [ "$(cat "$WORK/code")" = "$1" ]; }
body_is() { [ "$(cat "$WORK/body")" = "$1" ]; }
body_jq() { jq -e "$1" "$WORK/body" >/dev/null 2>&1; }
head_has() { tr -d '\r' <"$WORK/head" | grep -qxF -- "$1"; }
answer() { code_is "$1" && body_jq "${2:-true}"; } # answer STATUS [JQ]: status and a JSON body
error_is() { code_is "$1" && body_jq ".error | type == \"string\""; }
export -f code_is body_is body_jq head_has answer error_is # for the checks run by bash -c
export WORK

# ---- login ----
call /login -X POST -H 'Content-Type: application/json' -d '{"user":"alice","password":"s3cret"}' "$B/login"
check "JSON login: 200, token and user" answer 200 '.user == "alice" and (.token | startswith("t1.alice."))'
ALICE_TOKEN=$(jq -r .token "$WORK/body")
ALICE_SID=$(tr -d '\r' <"$WORK/head" | sed -n 's/^Set-Cookie: session=\([^;]*\); Path=\/; HttpOnly$/\1/p')
check "JSON login sets the session cookie with Path=/ and HttpOnly" test -n "$ALICE_SID"
check "the token is t1.alice.<32 hex> and the sid s1.alice.<32 hex>" \
    bash -c '[[ $1 =~ ^t1\.alice\.[0-9a-f]{32}$ && $2 =~ ^s1\.alice\.[0-9a-f]{32}$ ]]' _ \
    "$ALICE_TOKEN" "$ALICE_SID"
call /login -d 'user=bob&password=hunter2' "$B/login"
check "form login: 200 for bob" answer 200 '.user == "bob"'
BOB_TOKEN=$(jq -r .token "$WORK/body")
BOB_SID=$(tr -d '\r' <"$WORK/head" | sed -n 's/^Set-Cookie: session=\([^;]*\);.*/\1/p')
call /login -d 'user=carol%40x.io&password=a+b' "$B/login"
check "form values are percent-decoded" answer 200 '.user == "carol@x.io"'
call /login -d '{"user":"dave","password":"pw"}' "$B/login?token_len=300"
check "?token_len=300 pads the token to exactly 300 bytes" answer 200 '.token | length == 300'
LONG_TOKEN=$(jq -r .token "$WORK/body")
LONG_SID=$(tr -d '\r' <"$WORK/head" | sed -n 's/^Set-Cookie: session=\([^;]*\);.*/\1/p')
call /login -d '{"user":"dave","password":"pw"}' "$B/login?token_len=4097"
check "token_len over 4096: 400" error_is 400
call /login -d '{"user":"dave","password":"pw"}' "$B/login?token_len=10"
check "token_len below the token's own length: 400" error_is 400
call /login -d '{"user":"dave","password":"pw"}' "$B/login?token_len=0"
check "token_len=0: 400" error_is 400
call /login -d '{"user":"dave","password":"pw"}' "$B/login?token_len=40"
check "token_len equal to the token's own length (36 + 4): no padding" \
    answer 200 '.token | length == 40 and (endswith("x") | not)'
call /login -d '{"password":"pw"}' "$B/login"
check "missing user: 401" error_is 401
call /login -d 'user=erin&password=' "$B/login"
check "empty password: 401" error_is 401
call /login -d '{"user":"erin","password":"wrong"}' "$B/login"
check "password \"wrong\": 401" error_is 401
call /login -X POST "$B/login"
check "no body at all: 401" error_is 401
call /login -d '{"user":"erin",' "$B/login"
check "bad JSON: 400" error_is 400
call /login -d '{"user":1,"password":"pw"}' "$B/login"
check "a user that is not a string: 400" error_is 400
call /login -d '{"user":"a\"b","password":"pw"}' "$B/login"
check "a user with a quote: 400" error_is 400
call /login -d "{\"user\":\"$(printf 'u%.0s' {1..65})\",\"password\":\"pw\"}" "$B/login"
check "a 65-byte user: 400" error_is 400
call /login -d '{"user":"erin\u0000x","password":"pw"}' "$B/login"
check "a NUL in JSON: 400" error_is 400
printf '{"a":%s%s}' "$(printf '[%.0s' {1..20000})" "$(printf ']%.0s' {1..20000})" >"$WORK/deep.json"
call /login --data-binary @"$WORK/deep.json" "$B/login"
check "JSON nested 20000 deep: 400" error_is 400
head -c 3000 /dev/urandom | tr -d '{ \t\r\n' >"$WORK/noise.bin"
call /login --data-binary @"$WORK/noise.bin" "$B/login"
check "random bytes as a form: 400 or 401, never a crash" bash -c '[[ $(cat "$1") =~ ^40[01]$ ]]' _ "$WORK/code"
call /login "$B/login"
check "GET /login: 405 with Allow: POST" bash -c 'code_is 405 && head_has "Allow: POST"'
head -c 70000 /dev/zero | tr '\0' 'a' >"$WORK/big.txt"
call - --data-binary @"$WORK/big.txt" "$B/login"
check "a 70 KB body: 413" code_is 413
call - -H 'Transfer-Encoding: chunked' --data-binary @"$WORK/big.txt" "$B/echo"
check "a 70 KB chunked body: 413" code_is 413

# ---- /me: token and cookie, both valid and for the same user ----
for _ in 1 2 3 4 5 6; do # fresh connections: both loop threads verify what one issued
    call /me -H "Authorization: Bearer $ALICE_TOKEN" -b "session=$ALICE_SID" "$B/me"
    check "/me with alice's token and cookie: 200" answer 200 '. == {"user":"alice"}'
done
call /me -H "Authorization: bearer  $LONG_TOKEN " -b "a=1; session=$LONG_SID; b=2" "$B/me"
check "/me with the 300-byte token (any-case scheme, spaces, other cookies): 200" \
    answer 200 '.user == "dave"'
call /me "$B/me"
check "/me with nothing: 401" error_is 401
call /me -H "Authorization: Bearer $ALICE_TOKEN" "$B/me"
check "/me without the cookie: 401" error_is 401
call /me -b "session=$ALICE_SID" "$B/me"
check "/me without the token: 401" error_is 401
FORGED=${ALICE_TOKEN%?}$([ "${ALICE_TOKEN: -1}" = 0 ] && echo 1 || echo 0)
call /me -H "Authorization: Bearer $FORGED" -b "session=$ALICE_SID" "$B/me"
check "a token with one hex digit changed: 401" error_is 401
call /me -H "Authorization: Bearer t1.bob.${ALICE_TOKEN##*.}" -b "session=$BOB_SID" "$B/me"
check "alice's MAC under bob's name: 401" error_is 401
call /me -H "Authorization: Bearer $ALICE_SID" -b "session=$ALICE_SID" "$B/me"
check "a session id used as a token: 401" error_is 401
call /me -H "Authorization: Bearer $BOB_TOKEN" -b "session=$ALICE_SID" "$B/me"
check "bob's token with alice's cookie: 401" error_is 401
call /me -H "Authorization: Bearer $ALICE_TOKEN" -b "session=$BOB_SID" "$B/me"
check "alice's token with bob's cookie: 401" error_is 401
call /me -H "Authorization: Bearer $ALICE_TOKEN" -b "session=s1.alice.${BOB_SID##*.}" "$B/me"
check "a forged session cookie: 401" error_is 401

# ---- items ----
call /items "$B/items"
check "/items: 10 by default" answer 200 \
    '.count == 10 and (.items | length) == 10 and .items[9] == {"id":10,"name":"item-10"}'
call /items "$B/items?n=3"
check "/items?n=3: exactly the documented body" \
    body_is '{"items":[{"id":1,"name":"item-1"},{"id":2,"name":"item-2"},{"id":3,"name":"item-3"}],"count":3}'
call /items "$B/items?n=1000"
check "/items?n=1000" answer 200 '.count == 1000 and .items[999].id == 1000'
call /items "$B/items?n=0"
check "/items?n=0: none" answer 200 '. == {"items":[],"count":0}'
call /items "$B/items?n=1001"
check "/items?n=1001: 400" error_is 400
call /items "$B/items?n=-1"
check "/items?n=-1: 400" error_is 400
call /items -I "$B/items?n=2"
check "HEAD /items: 200, the GET's Content-Length, no body" \
    bash -c 'code_is 200 && head_has "Content-Length: 71" && ! grep -q items "$WORK/body"'
call /items/:id "$B/items/7"
check "/items/7" body_is '{"id":7,"name":"item-7"}'
call /items/:id "$B/items/abc"
check "/items/abc: 404" error_is 404
call /items/:id "$B/items/0"
check "/items/0: 404" error_is 404
call /items/:id "$B/items/99999999999"
check "/items/<11 digits>: 404" error_is 404

# ---- cart, pay, logout ----
call /cart -b "session=$ALICE_SID" -H 'Content-Type: application/json' -d '{"id":7}' "$B/cart"
check "POST /cart with the cookie: 201" answer 201 '. == {"ok":true}'
call /cart -d '{"id":7}' "$B/cart"
check "POST /cart without the cookie: 401" error_is 401
call /cart -b "session=s1.alice.00000000000000000000000000000000" -d '{"id":7}' "$B/cart"
check "POST /cart with a forged cookie: 401" error_is 401
call /cart -b "session=$ALICE_SID" -d '{"id":' "$B/cart"
check "POST /cart with bad JSON: 400" error_is 400
call /cart -b "session=$ALICE_SID" -d '{"item":7}' "$B/cart"
check "POST /cart without an id: 400" error_is 400
call /cart -b "session=$ALICE_SID" "$B/cart"
check "GET /cart: the total" body_is '{"total":42.5}'
call /cart "$B/cart"
check "GET /cart without the cookie: 401" error_is 401
call /cart -X DELETE -b "session=$ALICE_SID" "$B/cart"
check "DELETE /cart: 405" bash -c 'code_is 405 && head_has "Allow: GET, HEAD, POST"'
call /pay -b "session=$BOB_SID" -d '{"amount":42.5}' "$B/pay"
check "POST /pay with the cookie: 200" answer 200 '.ok == true'
call /pay -X POST "$B/pay"
check "POST /pay without the cookie: 401" error_is 401
call /logout -X POST -b "session=$BOB_SID" "$B/logout"
check "POST /logout: 200 and the cookie cleared" \
    bash -c 'answer 200 ".ok == true" && head_has "Set-Cookie: session=; Max-Age=0; Path=/"'
# A real client's jar: login stores the cookie, logout removes it.
call /login -c "$WORK/jar" -d 'user=frank&password=pw' "$B/login"
call /cart -b "$WORK/jar" -d '{"id":1}' "$B/cart"
check "curl's jar after login: POST /cart 201" code_is 201
call /logout -X POST -b "$WORK/jar" -c "$WORK/jar" "$B/logout"
call /cart -b "$WORK/jar" -d '{"id":1}' "$B/cart"
check "curl's jar after logout: POST /cart 401" code_is 401

# ---- redirects ----
call /redirect/3 "$B/redirect/3"
check "/redirect/3: 302 to /redirect/2" bash -c 'code_is 302 && head_has "Location: /redirect/2"'
for n in 3 2 1 0; do WANT[/redirect/$n]=$((${WANT[/redirect/$n]:-0} + 1)); done
REDIRS=$(curl -s --max-time 5 -L -o "$WORK/body" -w '%{num_redirects} %{http_code}' "$B/redirect/3")
check "following /redirect/3: 3 redirects, then 200 done" \
    bash -c '[ "$1" = "3 200" ] && body_is done' _ "$REDIRS"
call /redirect/2 "$B/redirect/2?code=307"
check "?code=307 is kept along the chain" bash -c 'code_is 307 && head_has "Location: /redirect/1?code=307"'
for n in 1 0; do WANT[/redirect/$n]=$((${WANT[/redirect/$n]:-0} + 2)); done
curl -s --max-time 5 -L -d x -o "$WORK/body" "$B/redirect/1?code=308"
check "POST through a 308 keeps the method: done POST" body_is "done POST"
curl -s --max-time 5 -L -d x -o "$WORK/body" "$B/redirect/1?code=303"
check "POST through a 303 becomes GET: done" body_is "done"
call /redirect/0 -X PUT "$B/redirect/0"
check "PUT /redirect/0: done PUT" body_is "done PUT"
call /redirect/1 "$B/redirect/1?code=301"
check "?code=301" bash -c 'code_is 301 && head_has "Location: /redirect/0?code=301"'
call /redirect/1 "$B/redirect/1?code=304"
check "?code=304: 400" error_is 400
call /redirect/:n "$B/redirect/101"
check "/redirect/101: 404, counted as /redirect/:n" error_is 404
call /redirect/:n "$B/redirect/x"
check "/redirect/x: 404" error_is 404
call /redirect-away "$B/redirect-away"
check "/redirect-away: 302 to another origin" \
    bash -c 'code_is 302 && head_has "Location: http://other.example/"'
WANT[/redirect-loop]=$((${WANT[/redirect-loop]:-0} + 4))
LOOP_RC=0
curl -s --max-time 5 -L --max-redirs 3 -o /dev/null "$B/redirect-loop?code=307" || LOOP_RC=$?
check "/redirect-loop never ends: curl gives up after 3 (rc 47, got $LOOP_RC)" test "$LOOP_RC" -eq 47
call /redirect-loop "$B/redirect-loop"
check "/redirect-loop: 302 to itself" bash -c 'code_is 302 && head_has "Location: /redirect-loop"'

# ---- echo ----
call /echo -H 'X-Test: Hello' -H 'x-test: again' -b 'a=1; b=two; a=3' "$B/echo?x=1&y=%20"
check "GET /echo: method, path with query, lowercased headers, cookies" answer 200 \
    '.method == "GET" and .path == "/echo?x=1&y=%20" and .headers["x-test"] == "Hello, again" and
     .cookies == {"a":"1","b":"two"} and .body == "" and (.headers | has("host"))'
printf 'q"b\\s\nl\x01c\xc3\xa9\xff' >"$WORK/odd.bin"
call /echo -X PUT -H $'X-Bin: \xfe\xc3\xa9' --data-binary @"$WORK/odd.bin" "$B/echo"
check "PUT /echo: quotes, backslash, controls and bad UTF-8 escaped into valid JSON" answer 200 \
    '.method == "PUT" and .body == "q\"b\\s\nl\u0001cé\ufffd" and .headers["x-bin"] == "\ufffdé"'
HDRS=()
for i in $(seq 1 70); do HDRS+=(-H "X-H$i: $i"); done
call - "${HDRS[@]}" "$B/echo"
check "70 headers: 431" code_is 431

# ---- setcookie ----
call /setcookie "$B/setcookie?a=1&b=x+y%21"
check "/setcookie: one Set-Cookie per pair, decoded, with Path=/" \
    bash -c 'answer 200 ".set == 2" && head_has "Set-Cookie: a=1; Path=/" &&
             head_has "Set-Cookie: b=x y!; Path=/"'
call /setcookie "$B/setcookie?c=3&attrs=Max-Age%3D60%3B%20Domain%3Dexample.com%3B%20Secure"
check "/setcookie attrs appended after \"; \"" \
    head_has "Set-Cookie: c=3; Path=/; Max-Age=60; Domain=example.com; Secure"
call /setcookie "$B/setcookie?a=1%0d%0aX-Evil:%201"
check "a CR LF in a value: 400, no header injected" \
    bash -c 'error_is 400 && ! grep -qi "^X-Evil" "$WORK/head" && ! grep -qi "^Set-Cookie" "$WORK/head"'
call /setcookie "$B/setcookie?a=1&attrs=Secure%0aX-Evil:1"
check "a LF in attrs: 400" error_is 400
call /setcookie "$B/setcookie?a%3Bb=1"
check "a ';' in a name: 400" error_is 400
call /setcookie "$B/setcookie?a=1%3B%20Max-Age=0"
check "a ';' in a value: 400" error_is 400
call /setcookie "$B/setcookie?a=%zz"
check "bad percent-encoding: 400" error_is 400

# ---- pipelined on one connection: nothing of one request leaks into the next ----
WANT[/me]=$((${WANT[/me]:-0} + 2))
exec 3<>"/dev/tcp/127.0.0.1/$TARGET_PORT"
printf 'GET /me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nCookie: session=%s\r\n\r\n%s' \
    "$ALICE_TOKEN" "$ALICE_SID" $'GET /me HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' >&3
timeout 5 cat <&3 >"$WORK/pipelined" || true
exec 3<&-
check "two pipelined /me: 200 then 401" \
    bash -c 'grep -o "HTTP/1.1 [0-9]*" "$1" | tr "\n" " " | grep -qx "HTTP/1.1 200 HTTP/1.1 401 "' \
    _ "$WORK/pipelined"

# ---- plain paths are as before ----
call /plain "$B/plain?x=1"
check "a plain path still answers 64 bytes of x" bash -c 'code_is 200 && body_is "$(printf "x%.0s" {1..64})"'
call /login/ -X POST "$B/login/"
check "/login/ (not an app path) is plain" bash -c 'code_is 200 && body_is "$(printf "x%.0s" {1..64})"'
call /status/503 "$B/status/503"
check "/status/503 still works" code_is 503

# ---- /__stats: every request counted under its path, without the query ----
curl -s --max-time 5 "$B/__stats" >"$WORK/stats.json"
jq -S .by_path "$WORK/stats.json" >"$WORK/got.json"
for k in "${!WANT[@]}"; do printf '%s\t%s\n' "$k" "${WANT[$k]}"; done |
    jq -R -s -S 'split("\n") | map(select(length > 0) | split("\t") | {(.[0]): (.[1] | tonumber)}) | add' \
        >"$WORK/want.json"
check "/__stats by_path equals what this test sent, path by path" diff "$WORK/want.json" "$WORK/got.json"
check "/__stats requests is their sum and rejected is $REJECTED" jq -e --slurpfile w "$WORK/want.json" \
    --argjson r "$REJECTED" '.requests == ($w[0] | add) and .rejected == $r' "$WORK/stats.json" >/dev/null
finish
