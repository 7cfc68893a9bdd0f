#!/usr/bin/env bash
# A signed request from a script, as README's "Scripting" example signs it: the body built
# with json.encode, an HMAC-SHA256 over method, path, timestamp and body in X-Signature, sent
# to lc_target's /echo. The dry run (loadworker --local --trace) prints what the target says
# it received; the test computes the HMAC of those bytes itself (openssl) and compares. Then
# a short --local run of 3 users: every /echo the target counted is in the report, none
# failed, and no check failed (each user verifies its own echoed signature). script_cpu_ms is
# 50: the deadline is wall-clock time, and this machine's cores are shared.
source "$(dirname "$0")/lib.sh"

start_target
TARGET="http://127.0.0.1:$TARGET_PORT"
SECRET='s3cr3t key'

cat >"$WORK/signed.lua" <<'LUA'
local secret = "s3cr3t key"

-- A header of the echoed request, whatever case the target wrote its name in.
local function echoed(r, name)
  for k, v in pairs(r:json("$.headers") or {}) do
    if k:lower() == name then return v end
  end
end

function signed(u)
  local body = json.encode({user = "u" .. u.id, n = math.random(1, 9)})
  local ts = string.format("%.0f", time.now_ms())
  local sig = hmac_sha256(secret, "POST\n/echo\n" .. ts .. "\n" .. body)
  local r = http.post("/echo", body, {name = "echo", headers = {
    ["Content-Type"] = "application/json", ["X-Timestamp"] = ts, ["X-Signature"] = sig}})
  check(r.status == 200, "echoed")
  local got = r:json("$.body")
  check(echoed(r, "x-signature") == hmac_sha256(secret, "POST\n/echo\n" ..
        echoed(r, "x-timestamp") .. "\n" .. got), "signature matches what arrived")
  print("sig=" .. tostring(echoed(r, "x-signature")) .. " ts=" .. tostring(echoed(r, "x-timestamp"))
        .. " b64=" .. base64.encode(got))
end
LUA
scenario() {
    jq -n --rawfile s "$WORK/signed.lua" --arg t "$TARGET" --arg d "$1" --argjson users "$2" '{
      name: "signed", target: $t, duration: $d, users: $users, spawn_rate: 100, script: $s,
      script_cpu_ms: 50,
      journeys: [{name: "s", steps: [{lua: "signed", endpoints: ["echo"]}, {think_ms: 20}]}]}'
}

scenario 5s 1 >"$WORK/dry.json"
timeout 30 "$LC_BIN/loadworker" --local "$WORK/dry.json" --trace >"$WORK/dry.out" 2>"$WORK/dry.log" || true
line=$(grep -o 'print: sig=.*' "$WORK/dry.out" | head -1 || true)
sig=$(sed -n 's/.*sig=\([0-9a-f]*\) .*/\1/p' <<<"$line")
ts=$(sed -n 's/.* ts=\([0-9]*\) .*/\1/p' <<<"$line")
body=$(sed -n 's/.* b64=\(.*\)$/\1/p' <<<"$line" | base64 -d)
want=$(printf 'POST\n/echo\n%s\n%s' "$ts" "$body" | openssl dgst -sha256 -hmac "$SECRET" | sed 's/.*= //')
check "the dry run traced the echoed request" [ -n "$sig" ] && [ -n "$ts" ] && [ -n "$body" ]
check "the body the target received is the script's json.encode" \
    jq -e '.n >= 1 and .n <= 9 and (.user | startswith("u"))' <<<"$body"
check "X-Signature as the target received it is HMAC-SHA256 over those bytes (openssl)" \
    [ "$sig" = "$want" ]
check "the dry run's checks passed" sh -c "! grep -q 'error' '$WORK/dry.out'"

curl -sf --max-time 2 -X POST "$TARGET/__reset" >/dev/null
scenario 2s 3 >"$WORK/run.json"
timeout 30 "$LC_BIN/loadworker" --local "$WORK/run.json" --json >"$WORK/run.out" 2>"$WORK/run.log" || true
echo_count=$(target_requests '.by_path["/echo"] // 0')
check "the run sent signed requests" [ "$echo_count" -gt 10 ]
check "every /echo the target counted is in the report" \
    jq -e --argjson n "$echo_count" '.endpoints[] | select(.name == "echo") | .requests == $n and .failures == 0' "$WORK/run.out"
check "no script error and no failed check" \
    jq -e '[.errors[]? | select(.kind == "check" or .kind == "script")] | length == 0' "$WORK/run.out"
finish
