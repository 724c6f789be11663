#!/usr/bin/env bash
# OAuth benchmark: what verifying a JWT access token on every request costs a tools/call,
# measured side by side in one run.
#
#   bench/run_auth_bench.sh
#
# Two toolport processes serve the conformance pack: OFF without authorization, ON with
# `auth:` (an RS256 token issued by bench/auth/issuer.mjs, its keys discovered through RFC 8414
# metadata). The same wrk load (mcp_call.lua, BENCH_CONNECTIONS connections, one session, one
# token on ON) runs on OFF then ON, BENCH_ROUNDS times; the ratio ON/OFF of each round and their
# median are printed. The token's signature is checked on first use; later requests find it in
# the verified-token cache, so the ratio is the steady-state cost of authorization (header
# parsing, the token's digest, the cache lookup, the principal check). The first-use cost of a
# signature check is bench/auth/auth_bench.cpp's (toolport_auth_bench).
# Knobs: BENCH_DURATION=10s BENCH_CONNECTIONS=16 BENCH_THREADS=2 BENCH_WARMUP=2s BENCH_ROUNDS=3
#        TOOLPORT_BIN=path (default build-bench/toolport, built if missing)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bench="$root/bench"
source "$bench/mcp_session.sh"
rounds=${BENCH_ROUNDS:-3}
version=2025-11-25

die() { echo "run_auth_bench.sh: $*" >&2; exit 1; }
source "$bench/bench_setup.sh"
bench_install_missing wrk curl
bench_node_modules
bench_toolport_bin
bench_wrk_knobs
bench_workdir auth-bench

port_off=$(free_port)
port_on=$(free_port)
url_off=http://127.0.0.1:$port_off/mcp url_on=http://127.0.0.1:$port_on/mcp

# The issuer prints its port and the token on its first line.
mkfifo "$tmp/issuer.out"
"$NODE" "$bench/auth/issuer.mjs" "$url_on" >"$tmp/issuer.out" &
pids+=($!)
read -r issuer_port token <"$tmp/issuer.out"
[[ -n "$token" ]] || die "the issuer printed no token"

printf 'log:\n  level: warn\n' >"$tmp/off.yaml"
printf 'log:\n  level: warn\nauth:\n  issuer: http://127.0.0.1:%s\n  resource: %s\n  allow_http: true\n' \
  "$issuer_port" "$url_on" >"$tmp/on.yaml"
"$TOOLPORT_BIN" serve --listen "127.0.0.1:$port_off" --packs conformance --config "$tmp/off.yaml" 2>"$tmp/off.log" &
pids+=($!)
"$TOOLPORT_BIN" serve --listen "127.0.0.1:$port_on" --packs conformance --config "$tmp/on.yaml" 2>"$tmp/on.log" &
pids+=($!)
wait_healthy "$port_off"
wait_healthy "$port_on"

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2)"
echo "toolport: $TOOLPORT_BIN"

code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$url_on" -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' --data '{"jsonrpc":"2.0","id":1,"method":"ping"}')
[[ $code == 401 ]] || die "ON answered $code, not 401, to a request without a token"
sid_off=$(open_mcp_session "$url_off" "$version")
sid_on=$(open_mcp_session "$url_on" "$version" "Authorization: Bearer $token")
check='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_simple_text","arguments":{}}}'
curl -sS -X POST "$url_on" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' -H "Mcp-Session-Id: $sid_on" -H "MCP-Protocol-Version: $version" \
  --data "$check" | grep -q 'simple text response' || die "ON did not answer the call with the token"

run_wrk() {  # NAME URL SID [AUTHORIZATION]: leaves $tmp/wrk-NAME.txt
  local name=$1 url=$2 sid=$3
  MCP_SESSION_ID="$sid" MCP_AUTHORIZATION="${4:-}" wrk -t"$threads" -c"$connections" -d"$warmup" -s "$bench/mcp_call.lua" "$url" >/dev/null
  MCP_SESSION_ID="$sid" MCP_AUTHORIZATION="${4:-}" wrk -t"$threads" -c"$connections" -d"$duration" --latency \
    -s "$bench/mcp_call.lua" "$url" >"$tmp/wrk-$name.txt"
  awk '/Non-2xx or 3xx responses:/ {bad = $NF} END {exit bad > 0}' "$tmp/wrk-$name.txt" || die "$name: non-2xx answers"
}
rps() { awk '/^Requests\/sec:/ {print $2}' "$tmp/wrk-$1.txt"; }
p99() { awk '$1 == "99%" {print $2}' "$tmp/wrk-$1.txt"; }

ratios=()
for round in $(seq 1 "$rounds"); do
  # MCP_AUTHORIZATION unset on OFF: mcp_call.lua sends no header there.
  run_wrk "off-$round" "$url_off" "$sid_off"
  run_wrk "on-$round" "$url_on" "$sid_on" "Bearer $token"
  ratio=$(awk -v a="$(rps "on-$round")" -v b="$(rps "off-$round")" 'BEGIN { printf "%.3f", a / b }')
  ratios+=("$ratio")
  printf 'round %d: off %8.0f req/s (p99 %s)   on %8.0f req/s (p99 %s)   on/off %s\n' "$round" \
    "$(rps "off-$round")" "$(p99 "off-$round")" "$(rps "on-$round")" "$(p99 "on-$round")" "$ratio"
done
median=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
echo
echo "tools/call throughput with JWT auth on / off, median of $rounds rounds: $median (target >= 0.9)"
