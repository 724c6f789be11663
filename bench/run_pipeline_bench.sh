#!/usr/bin/env bash
# The call pipeline's cost, two ways:
#   1. in process (Google Benchmark, bench/pipeline/pipeline_bench.cpp): one tools/call with
#      every stage on and a cache miss, against the same call with no pipeline; the
#      difference is the per-call overhead (target < 20 µs);
#   2. over HTTP: a cache-hit tools/call (the testing pack's read-only test_counter, same
#      arguments every time) with wrk --latency, one connection then 16 (target p50 < 0.5 ms).
#
#   bench/run_pipeline_bench.sh        # knobs: BENCH_DURATION (10s), BENCH_CONNECTIONS (16)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
duration=${BENCH_DURATION:-10s}
connections=${BENCH_CONNECTIONS:-16}
protocol_version=2025-11-25
die() { echo "run_pipeline_bench.sh: $*" >&2; exit 1; }
source "$root/bench/mcp_session.sh"
command -v wrk >/dev/null && command -v curl >/dev/null || "$root/scripts/install-deps.sh" --test

build="$root/build-bench"
if [[ ! -f "$build/build.ninja" ]] || ! grep -q 'TOOLPORT_BUILD_BENCH:BOOL=ON' "$build/CMakeCache.txt"; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DTOOLPORT_BUILD_TESTS=OFF -DTOOLPORT_BUILD_BENCH=ON >/dev/null
fi
cmake --build "$build" --target toolport pipeline_bench

echo "=== in process: pipeline overhead per call (Google Benchmark) ==="
"$build/bench/pipeline_bench" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_min_time=1 | tee /tmp/pipeline_bench.$$.txt
median() { awk -v n="$1" '$1 == n"_median" {print $2}' /tmp/pipeline_bench.$$.txt; }
bare=$(median BM_ToolCall_NoPipeline)
full=$(median BM_ToolCall_AllStages_CacheMiss)
rm -f /tmp/pipeline_bench.$$.txt
awk -v a="$bare" -v b="$full" 'BEGIN {printf "median per call: no pipeline %.2f us, all stages (cache miss) %.2f us, overhead %.2f us\n", a, b, b - a}'

echo
echo "=== over HTTP: cache-hit tools/call latency (wrk) ==="
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
TOOLPORT_TEST_PACK=1 "$build/toolport" serve --listen "127.0.0.1:$port" --packs testing 2>/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true' EXIT
url="http://127.0.0.1:$port/mcp"
sid=$(open_mcp_session "$url" "$protocol_version") || die "no session"
args='{"key":"bench"}'
first=$(curl -sS -X POST "$url" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
  -H "Mcp-Session-Id: $sid" -H "MCP-Protocol-Version: $protocol_version" \
  --data "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"test_counter\",\"arguments\":$args}}")
second=$(curl -sS -X POST "$url" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
  -H "Mcp-Session-Id: $sid" -H "MCP-Protocol-Version: $protocol_version" \
  --data "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"test_counter\",\"arguments\":$args}}")
[[ "$second" == *'"cache_status":"hit"'* ]] || die "the second call was not a cache hit: $second (first: $first)"
for c in 1 "$connections"; do
  echo "--- $c connection(s), $duration"
  MCP_SESSION_ID="$sid" MCP_TOOL=test_counter MCP_ARGS="$args" \
    wrk -t1 -c"$c" -d2s -s "$root/bench/mcp_call.lua" "$url" >/dev/null
  MCP_SESSION_ID="$sid" MCP_TOOL=test_counter MCP_ARGS="$args" \
    wrk -t"$([[ $c == 1 ]] && echo 1 || echo 2)" -c"$c" -d"$duration" --latency -s "$root/bench/mcp_call.lua" "$url" |
    sed 's/^/    /'
done
